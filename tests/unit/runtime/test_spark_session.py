"""Which session the Spark engine runs in, and what a task knows of its micro-batch outside Spark."""
from __future__ import annotations

from streams_on_spark.runtime.spark.errors import query_error
from streams_on_spark.runtime.spark.output import producer_identity
from streams_on_spark.runtime.spark.session import spark_configured


def test_spark_is_configured_by_a_launcher_or_master_and_not_otherwise(monkeypatch):
    from pyspark import SparkContext
    monkeypatch.setattr(SparkContext, "_active_spark_context", None)  # other tests' session, if any, is not ours
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.delenv("MASTER", raising=False)
    assert not spark_configured()          # plain `python app.py`: a local session is made
    monkeypatch.setattr(SparkContext, "_active_spark_context", object())
    assert spark_configured()              # a running session (a notebook, an earlier getOrCreate)
    monkeypatch.setattr(SparkContext, "_active_spark_context", None)
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "41234")   # what spark-submit and the pyspark shell set
    assert spark_configured()
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT")
    monkeypatch.setenv("MASTER", "spark://127.0.0.1:7077")
    assert spark_configured()


def test_outside_a_streaming_task_there_is_no_producer_identity():
    assert producer_identity(3) == (None, None)   # so writes are plain appends, not deduplicated


def test_query_errors_name_the_python_error_not_the_jvm_trace():
    error = RuntimeError("org.apache.spark.SparkException: Job aborted\n  at org.apache...\n"
                         "streams_on_spark.errors.StreamsException: Exception caught in process. taskId=0_1\n"
                         "py4j.protocol.Py4JJavaError: An error occurred")
    assert str(query_error("app-subtopology-0", error)) == (
        "query app-subtopology-0 failed: streams_on_spark.errors.StreamsException: Exception caught in process. "
        "taskId=0_1")

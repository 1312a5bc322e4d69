"""Which session the Spark engine runs in, and what a task knows of its micro-batch outside Spark."""
from __future__ import annotations

import os

import pytest

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


def test_a_processors_error_names_where_and_the_users_exception():
    """As Spark reports it: the task's StreamsException, whose message carries the user's traceback, inside
    Spark's own report and before the query's plan."""
    error = RuntimeError(
        "[STREAM_FAILED] Query [id = 1] terminated with exception: [FOREACH_BATCH_USER_FUNCTION_ERROR] An error "
        "occurred in the user provided function in foreachBatch: Traceback (most recent call last):\n"
        '  File "/x/pyspark/sql/utils.py", line 163, in call\n'
        "    self.func(DataFrame(jdf, wrapped_session_jdf), batch_id)\n"
        "pyspark.errors.exceptions.captured.PythonException: \n"
        "  An exception was thrown from the Python worker. Please see the stack trace below.\n"
        "Traceback (most recent call last):\n"
        '  File "/x/streams_on_spark/runtime/task.py", line 534, in _handle_processing_error\n'
        "streams_on_spark.errors.StreamsException: Exception caught in process. taskId=0_3, "
        "processor=KSTREAM-MAPVALUES-0000000001, topic=in, partition=3, offset=17, stacktrace=Traceback (most "
        "recent call last):\n"
        '  File "/x/app.py", line 2, in parse\n'
        "    raise KeyError(v)\n"
        "KeyError: 'id'\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/x/app.py", line 6, in boom\n'
        "    raise ValueError(f\"bad value {v!r}\")\n"
        "ValueError: bad value 'v1'\n"
        " SQLSTATE: 39000 SQLSTATE: XXKST\n"
        "=== Streaming Query ===\n"
        "Identifier: app-subtopology-0\n"
        "py4j.protocol.Py4JJavaError: An error occurred")
    assert str(query_error("app-subtopology-0", error)) == (
        "query app-subtopology-0 failed: Exception caught in process. taskId=0_3, "
        "processor=KSTREAM-MAPVALUES-0000000001, topic=in, partition=3, offset=17: ValueError: bad value 'v1'")


def test_query_errors_name_the_python_error_not_the_jvm_trace():
    error = RuntimeError("org.apache.spark.SparkException: Job aborted\n  at org.apache...\n"
                         "streams_on_spark.errors.StreamsException: Exception caught in process. taskId=0_1\n"
                         "py4j.protocol.Py4JJavaError: An error occurred")
    assert str(query_error("app-subtopology-0", error)) == (
        "query app-subtopology-0 failed: streams_on_spark.errors.StreamsException: Exception caught in process. "
        "taskId=0_1")


def test_a_chained_error_names_the_tasks_own_exception_not_its_cause():
    """A traceback prints the causes first: the task's StreamsException is the last of the library's errors."""
    error = RuntimeError(
        "[FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred in the user provided function in foreachBatch: "
        "Traceback (most recent call last):\n"
        "streams_on_spark.errors.SerializationException: Size of data received by LongDeserializer is not 8\n"
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "Traceback (most recent call last):\n"
        "streams_on_spark.errors.StreamsException: Deserialization exception handler is set to fail upon a "
        "deserialization error. Failed record: taskId=0_1, topic=in, partition=1, offset=4\n"
        " SQLSTATE: 39000\n"
        "py4j.protocol.Py4JJavaError: An error occurred")
    assert str(query_error("app-subtopology-0", error)) == (
        "query app-subtopology-0 failed: streams_on_spark.errors.StreamsException: Deserialization exception handler "
        "is set to fail upon a deserialization error. Failed record: taskId=0_1, topic=in, partition=1, offset=4")


@pytest.mark.spark
def test_a_local_sessions_jvm_compiles_with_c1_only(spark):
    """``local_session`` (the plugin's session is one) starts its JVM with ``LOCAL_JAVA_OPTIONS``: what the JVM
    itself says it was started with."""
    from streams_on_spark.runtime.spark.session import LOCAL_JAVA_OPTIONS
    runtime = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    assert LOCAL_JAVA_OPTIONS == "-XX:TieredStopAtLevel=1"
    assert LOCAL_JAVA_OPTIONS in list(runtime.getInputArguments())


@pytest.mark.spark
def test_a_local_sessions_jvm_looks_up_python_data_sources_with_a_forked_worker(spark):
    """The JVM of ``local_session`` (the plugin's session is one) runs Spark's lookup of installed Python data
    sources, the first Python worker of any query, with its ``defaultPythonExec``: ``PYSPARK_DRIVER_PYTHON`` as it
    was launched, the fork server's launcher; this process's own variable is as before."""
    from streams_on_spark.runtime.spark import session
    jvm = spark.sparkContext._jvm
    assert jvm.java.lang.System.getenv("PYSPARK_DRIVER_PYTHON") == session._fork_server.launcher
    assert os.environ.get("PYSPARK_DRIVER_PYTHON") != session._fork_server.launcher


def test_a_local_sessions_launch_finds_spark_home_and_runs_the_launcher_jvm_on_c1(monkeypatch):
    """Without SPARK_HOME, spark-submit would start a Python interpreter to find it: the launch is given pyspark's
    own directory (a pip install's Spark home: its spark-submit); and Spark's launcher JVM runs with
    ``LAUNCHER_JAVA_OPTIONS``. What the user set is kept."""
    import pyspark
    from streams_on_spark.runtime.spark import session
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.delenv("SPARK_LAUNCHER_OPTS", raising=False)
    home = os.path.dirname(os.path.abspath(pyspark.__file__))
    assert os.path.isfile(os.path.join(home, "bin", "spark-submit"))
    assert session._launch_environment() == {"SPARK_HOME": home,
                                             "SPARK_LAUNCHER_OPTS": session.LAUNCHER_JAVA_OPTIONS}
    monkeypatch.setenv("SPARK_HOME", "/opt/spark")
    monkeypatch.setenv("SPARK_LAUNCHER_OPTS", "")
    assert session._launch_environment() == {}


def test_a_pyspark_that_is_no_spark_home_leaves_spark_home_to_sparks_scripts(tmp_path):
    """pyspark of a Spark distribution (``$SPARK_HOME/python/pyspark``): no ``bin/spark-submit`` beside it, so no
    SPARK_HOME is made up from its directory; a pip install's layout is one."""
    from streams_on_spark.runtime.spark.session import pip_spark_home
    package = tmp_path / "pyspark"
    (package / "bin").mkdir(parents=True)
    assert pip_spark_home(str(package)) is None
    (package / "bin" / "spark-submit").write_text("")
    assert pip_spark_home(str(package)) is None   # no jars
    (package / "jars").mkdir()
    assert pip_spark_home(str(package)) == str(package)


def test_the_environment_is_restored_after_the_launch(monkeypatch):
    from streams_on_spark.runtime.spark import session
    monkeypatch.setenv("SOS_TEST_SET", "before")
    monkeypatch.delenv("SOS_TEST_UNSET", raising=False)
    with session._environment({"SOS_TEST_SET": "during", "SOS_TEST_UNSET": "during"}):
        assert os.environ["SOS_TEST_SET"] == os.environ["SOS_TEST_UNSET"] == "during"
    assert os.environ["SOS_TEST_SET"] == "before" and "SOS_TEST_UNSET" not in os.environ

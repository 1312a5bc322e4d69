"""The Spark engine: every subtopology is one Structured Streaming query hosting its tasks.

One concern per module: ``session`` (which SparkSession), ``task_function`` (one task on one micro-batch),
``output`` (how a task's records leave it), ``sink`` (the driver's per-batch commit), ``runtime`` (the queries,
quiescence), ``engine`` (the test driver's Spark mode), ``clock``, ``slots`` and ``errors``.
"""
from streams_on_spark.runtime.spark.engine import SparkEngine
from streams_on_spark.runtime.spark.runtime import SparkRuntime
from streams_on_spark.runtime.spark.session import application_session, local_session
from streams_on_spark.runtime.spark.slots import task_slots

__all__ = ["SparkEngine", "SparkRuntime", "application_session", "local_session", "task_slots"]

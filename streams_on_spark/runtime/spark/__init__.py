"""The Spark engine: every subtopology is one Structured Streaming query hosting its tasks.

One concern per module: ``session`` (which SparkSession), ``task_function`` (one task on one micro-batch),
``execution`` (how a task runs its batch), ``output`` (how a task's records leave it), ``sink`` (the driver's per-batch commit), ``runtime`` (the queries,
quiescence), ``engine`` (the test driver's Spark mode), ``checkpoints`` (the checkpoint location), ``topics`` (the
topic planner), ``clock``, ``slots`` and ``errors``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from streams_on_spark.lazy import lazy_exports

# loaded on first use (PEP 562): a task's Python worker imports task_function without the driver's side
_EXPORTS = {
    "SparkEngine": "streams_on_spark.runtime.spark.engine",
    "SparkRuntime": "streams_on_spark.runtime.spark.runtime",
    "application_session": "streams_on_spark.runtime.spark.session",
    "local_session": "streams_on_spark.runtime.spark.session",
    "task_slots": "streams_on_spark.runtime.spark.slots",
}
__all__ = ["SparkEngine", "SparkRuntime", "application_session", "local_session", "task_slots"]


__getattr__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from streams_on_spark.runtime.spark.engine import SparkEngine
    from streams_on_spark.runtime.spark.runtime import SparkRuntime
    from streams_on_spark.runtime.spark.session import application_session, local_session
    from streams_on_spark.runtime.spark.slots import task_slots

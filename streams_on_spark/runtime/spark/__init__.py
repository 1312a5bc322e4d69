"""The Spark engine: every subtopology is one Structured Streaming query hosting its tasks.

One concern per module: ``session`` (which SparkSession), ``task_function`` (one task on one micro-batch),
``output`` (how a task's records leave it), ``sink`` (the driver's per-batch commit), ``runtime`` (the queries,
quiescence), ``engine`` (the test driver's Spark mode), ``clock``, ``slots`` and ``errors``.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# loaded on first use (PEP 562): a task's Python worker imports task_function without the driver's side
_EXPORTS = {
    "SparkEngine": "streams_on_spark.runtime.spark.engine",
    "SparkRuntime": "streams_on_spark.runtime.spark.runtime",
    "application_session": "streams_on_spark.runtime.spark.session",
    "local_session": "streams_on_spark.runtime.spark.session",
    "task_slots": "streams_on_spark.runtime.spark.slots",
}
__all__ = ["SparkEngine", "SparkRuntime", "application_session", "local_session", "task_slots"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from streams_on_spark.runtime.spark.engine import SparkEngine
    from streams_on_spark.runtime.spark.runtime import SparkRuntime
    from streams_on_spark.runtime.spark.session import application_session, local_session
    from streams_on_spark.runtime.spark.slots import task_slots

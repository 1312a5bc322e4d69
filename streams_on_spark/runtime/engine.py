"""``Engine``: what the test driver calls on the engine that runs its tasks, and the one place an engine's name
(``"local"``, ``"spark"``) becomes an implementation: :class:`~streams_on_spark.runtime.local.LocalEngine` or
:class:`~streams_on_spark.runtime.spark.engine.SparkEngine`."""
from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, AbstractSet, Any, Callable, Mapping, Protocol, runtime_checkable

from streams_on_spark.config import TaskConfig
from streams_on_spark.records import ProducerRecord
from streams_on_spark.errors import bad_argument
from streams_on_spark.metrics import Metrics
from streams_on_spark.processor.api import TaskId
from streams_on_spark.topology.builder import InternalTopologyBuilder

if TYPE_CHECKING:
    from streams_on_spark.runtime.task import StreamTask


@runtime_checkable
class Engine(Protocol):
    """Runs a topology's tasks for the driver: routed records in, captured output and the tasks' stores out."""

    captured: dict[str, deque[ProducerRecord]]   # output topic -> records written and not read yet
    produced_topics: set[str]                    # every topic written so far

    @property
    def global_stores(self) -> dict[str, Any]:
        """The global stores by name."""

    def source_topics(self) -> AbstractSet[str]:
        """The topics records may be piped into."""

    def partitions(self, topic: str) -> int:
        """The partition count of ``topic``."""

    def pipe(self, record: ProducerRecord) -> None:
        """Process one routed record to quiescence."""

    def pipe_many(self, records: list[ProducerRecord]) -> None:
        """Process routed records piped at once, in order, to quiescence."""

    def advance_wall_clock(self, ms: int) -> None:
        """Move the mock wall clock, fire due wall-clock punctuators and process what they emit."""

    def stores(self, name: str) -> dict[int, Any]:
        """Partition -> the instance of store ``name`` in that partition's task."""

    def store_tasks(self, name: str) -> dict[int, StreamTask]:
        """Partition -> the task holding store ``name``."""

    def task_ids(self) -> list[TaskId]:
        """The tasks' ids, sorted."""

    def metrics(self) -> Metrics:
        """Kafka's task-level metrics of every task."""

    def close(self) -> None:
        """Stop the tasks and release what the engine holds."""


def _local(topology: InternalTopologyBuilder, config: TaskConfig, declared: Mapping[str, int], multi_partition: bool,
           wall_clock_ms: int, spark: Any) -> Engine:
    from streams_on_spark.runtime.local import LocalEngine
    return LocalEngine(topology, config, declared, multi_partition, wall_clock_ms)


def _spark(topology: InternalTopologyBuilder, config: TaskConfig, declared: Mapping[str, int], multi_partition: bool,
           wall_clock_ms: int, spark: Any) -> Engine:
    from streams_on_spark.runtime.spark.engine import SparkEngine   # imports pyspark: only when asked for
    return SparkEngine(topology, config, declared, multi_partition, wall_clock_ms, spark)


# an engine's name -> how to make it
ENGINES: dict[str, Callable[..., Engine]] = {"local": _local, "spark": _spark}


def check_engine(name: Any) -> str:
    """An engine's name: ``"local"`` (in-process) or ``"spark"``."""
    if name not in ENGINES:
        raise bad_argument("engine", " or ".join(repr(n) for n in ENGINES), name)
    return name


def make_engine(name: str, topology: InternalTopologyBuilder, config: TaskConfig, declared: Mapping[str, int],
                multi_partition: bool, wall_clock_ms: int, spark: Any = None) -> Engine:
    """The engine called ``name`` over ``topology``; ``spark`` is the SparkSession of the Spark engine (None: a local
    one)."""
    return ENGINES[check_engine(name)](topology, config, declared, multi_partition, wall_clock_ms, spark)

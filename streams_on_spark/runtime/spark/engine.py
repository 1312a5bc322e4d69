"""``SparkEngine``: the test driver's Spark mode — the same driver API, with Spark running the tasks."""
from __future__ import annotations

import shutil
import tempfile
import threading
from collections import deque
from typing import Any, Mapping

from streams_on_spark.config import EMBEDDED_TOPICS_BATCH_RECORDS, TaskConfig
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.connectors.embedded_connector import EmbeddedTopicsConnector
from streams_on_spark.records import ProducerRecord
from streams_on_spark.metrics import Metrics, TaskSensors
from streams_on_spark.processor.api import TaskId
from streams_on_spark.runtime.spark.checkpoints import CheckpointLocation
from streams_on_spark.runtime.spark.clock import TICK, MockClock
from streams_on_spark.runtime.spark.execution import PROCESS_AVAILABLE, DriverTask
from streams_on_spark.runtime.spark.output import ReturnedOutput
from streams_on_spark.runtime.spark.runtime import SparkRuntime
from streams_on_spark.runtime.spark.sink import DriverAppend
from streams_on_spark.runtime.spark.session import local_session
from streams_on_spark.runtime.spark.topics import TopicPlanner
from streams_on_spark.runtime.spark.user_code import ship_user_code
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.topology.builder import InternalTopologyBuilder
from streams_on_spark.topology.partitions import feeds_back


# How often the driver's queries look for input. Each pipe waits for a query's next trigger to start its batch, and
# Spark's processAllAvailable returns only after a later trigger found nothing new: at 100 ms (an application's
# default) that was ~100 ms of waiting per query per pipe; measured at 10 ms, a pipe took 16-22% less (1 and 4
# partitions), idle polling included
TRIGGER_INTERVAL = "10 milliseconds"


class SparkEngine:
    """Spark runs the tasks over embedded topics; the driver API stays the in-process one.

    Input is appended to the embedded topics and the queries run to quiescence; lists of records piped at once
    form one batch. Tasks return their output to this process, which appends it in the order the in-process
    engine would and captures it for the output topics. Stores are read back from the queries' checkpoints with
    Spark's state reader.

    Single-partition mode is Kafka's driver on Spark: one query, one task ``0_0`` running every subtopology, records
    processed one by one with the internal topics fed back inside the task, so the results are exactly those of the
    in-process engine (and of Kafka's driver) while Spark runs the task, keeps its state and checkpoints it. A list
    piped at once is one batch per run of records to one topic-partition (Kafka's driver pipes a list in order).
    Multi-partition mode runs one query per subtopology, as an application does; where a subtopology's output comes
    back to it through another's (a foreign-key join), a list is piped record by record, each run through every query
    to quiescence before the next, as Kafka's driver processes each record to the end. The modules of the topology's code
    that Spark's workers cannot import (a test module, a helper beside it) travel by value (:func:`ship_user_code`).
    """

    def __init__(self, topology: InternalTopologyBuilder, config: TaskConfig, declared: Mapping[str, int],
                 multi_partition: bool, wall_clock_ms: int, spark: Any = None) -> None:
        config.check_micro_batches()
        self.multi_partition = multi_partition
        self.wall_clock_ms = wall_clock_ms
        self.topology = topology
        planner = TopicPlanner.for_driver(topology, config, declared, multi_partition)   # sets the application id
        # a record's answer comes back through the queries (a foreign-key join's response): in one batch with the
        # key's next record, the resolver would find the key changed and drop it, where Kafka's driver emits it
        self.record_by_record = multi_partition and feeds_back(topology.subtopologies())
        self.spark = spark if spark is not None else local_session(f"{config.application_id}-driver")
        self.embedded = EmbeddedTopics()
        self.connector = connector = EmbeddedTopicsConnector(
            self.embedded, config.streams_config.get(EMBEDDED_TOPICS_BATCH_RECORDS))
        self.layout = planner.create(connector)
        self.captured: dict[str, Any] = {}
        self.produced_topics: set[str] = set()
        self.checkpoints = tempfile.mkdtemp(prefix=f"{config.application_id}-checkpoints-")
        # the driver's modes: tasks return their output here, keep the mock clock, and in single-partition mode run
        # as Kafka's driver's one task
        self.runtime = SparkRuntime(topology, config, self.layout, connector, self.spark,
                                    CheckpointLocation(self.checkpoints), trigger_interval=TRIGGER_INTERVAL,
                                    output=ReturnedOutput(self._capture), clock=MockClock(wall_clock_ms),
                                    execution=PROCESS_AVAILABLE if multi_partition else DriverTask(),
                                    sink=self._sink)
        self._sources = {t for s in topology.subtopologies() for t in s.source_topics} | set(topology.global_topics)
        self._tasks_cache: dict[Any, Any] = {}
        self.thread_id = threading.current_thread().name   # as the in-process engine (Kafka's driver)
        self._sensors = TaskSensors()
        # a test's processors, functions and serdes (its module, a helper beside it) reach the workers by value
        ship_user_code(*self.runtime.functions.values())
        self.runtime.start()

    def _sink(self, query: str) -> DriverAppend:
        """Query ``query``'s sink: what its tasks return is appended to the topics and captured."""
        return DriverAppend(self.connector.writer(), self._capture, query, self._ensure_topic)

    def _ensure_topic(self, topic: str) -> None:
        """The test driver writes any topic, one it was not told about (a ``TopicNameExtractor``'s) created with one
        partition, where the tasks placed its records (:meth:`TopicLayout.partitions_of`), as Kafka's driver does."""
        if topic not in self.connector.topics():
            self.connector.create_topic(topic, self.layout.partitions_of(topic))

    def _capture(self, records: list[ProducerRecord]) -> None:
        for r in records:
            self.produced_topics.add(r.topic)
            self.captured.setdefault(r.topic, deque()).append(r)

    def source_topics(self) -> set[str]:
        return set(self._sources)

    def partitions(self, topic: str) -> int:
        return self.layout.partitions_of(topic)

    def pipe_many(self, records: list[ProducerRecord]) -> None:
        runs = ([[r] for r in records] if self.record_by_record else [records] if self.multi_partition
                else _runs_by_partition(records))
        for run in runs:
            self.embedded.append(run)
            self._tasks_cache.clear()
            self.runtime.process_all_available()

    def pipe(self, record: ProducerRecord) -> None:
        self.pipe_many([record])

    def advance_wall_clock(self, ms: int) -> None:
        """Move the mock wall clock: every task gets a tick with the new time, punctuates, and the topology drains."""
        self.wall_clock_ms += ms
        self._tasks_cache.clear()
        now, tick = self.wall_clock_ms, TICK.pack(self.wall_clock_ms)
        self.embedded.append([ProducerRecord(fn.tick_topic, p, now, None, tick, ())
                              for fn in self.runtime.functions.values() if fn.tick_topic
                              for p in range(fn.task_count())])
        self.runtime.process_all_available()

    def _tasks(self, subtopology_id: int) -> dict[int, StreamTask]:
        if subtopology_id not in self._tasks_cache:
            self._tasks_cache[subtopology_id] = self.runtime.read_tasks(subtopology_id)
        return self._tasks_cache[subtopology_id]

    def stores(self, name: str) -> dict[int, Any]:
        return {p: task.stores[name] for p, task in self.store_tasks(name).items()}

    def store_tasks(self, name: str) -> dict[int, StreamTask]:
        """Partition -> the (offline copy of the) task holding store ``name`` in that partition."""
        for sid, fn in self.runtime.functions.items():
            if name in fn.spec().store_names:
                return dict(sorted(self._tasks(sid).items()))
        return {}

    @property
    def global_stores(self) -> dict[str, Any]:
        """The global stores as a task sees them now (caught up with the global topics)."""
        if self.runtime.global_reader is None:
            return {}
        if "global" not in self._tasks_cache:
            fn = next(iter(self.runtime.functions.values()))
            self._tasks_cache["global"] = fn.global_stores()
        return self._tasks_cache["global"]

    def task_ids(self) -> list[TaskId]:
        return [TaskId(sid, p) for sid, fn in sorted(self.runtime.functions.items()) for p in range(fn.task_count())]

    def metrics(self) -> Metrics:
        """The in-process engine's metrics, from the counters in the tasks' state as Spark holds it."""
        for sid in sorted(self.runtime.functions):
            for partition, task in sorted(self._tasks(sid).items()):
                self._sensors.observe(str(TaskId(sid, partition)), task.metrics.processed, task.metrics.dropped)
        return Metrics(self._sensors.metrics(self.thread_id))

    def close(self) -> None:
        self.runtime.stop()
        self.embedded.close()
        shutil.rmtree(self.checkpoints, ignore_errors=True)


def _runs_by_partition(records: list[ProducerRecord]) -> list[list[ProducerRecord]]:
    """``records`` cut into runs of consecutive records to one topic-partition (each a batch the task reads in
    order)."""
    runs: list[list[ProducerRecord]] = []
    for record in records:
        if runs and (runs[-1][-1].topic, runs[-1][-1].partition) == (record.topic, record.partition):
            runs[-1].append(record)
        else:
            runs.append([record])
    return runs

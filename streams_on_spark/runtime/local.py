"""``LocalEngine``: hosts every task in-process over in-memory multi-partition topics (the test driver's engine).

Multi-partition mode follows KIP-1238: one task per (subtopology, partition); after each input, drain every task
to quiescence, one record per step, always picking the task with the lowest stream time and breaking ties by
(subtopology, partition). Single-partition mode is Kafka's driver: every subtopology in one task ``0_0``, with one
stream time and one punctuation queue.
"""
from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any, Mapping

from streams_on_spark.config import TaskConfig
from streams_on_spark.records import ConsumerRecord, ProducerRecord
from streams_on_spark.metrics import Metrics, TaskSensors
from streams_on_spark.processor.api import TaskId
from streams_on_spark.runtime.global_task import GlobalTask
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.topology.builder import InternalTopologyBuilder
from streams_on_spark.topology.partitions import driver_partition_counts, driver_subtopologies

log = logging.getLogger(__name__)


class LocalEngine:
    """All tasks in this process; topics are in-memory logs with offsets."""

    def __init__(self, topology: InternalTopologyBuilder, config: TaskConfig, declared: Mapping[str, int],
                 multi_partition: bool, wall_clock_ms: int) -> None:
        self.topology = topology
        self.config = config
        self.multi_partition = multi_partition
        self.wall_clock_ms = wall_clock_ms
        topology.application_id = config.application_id
        self.counts = driver_partition_counts(topology, declared, multi_partition)
        self.offsets: dict[str, list[int]] = {}  # topic -> next offset per partition
        self.captured: dict[str, deque[ProducerRecord]] = {}
        self.produced_topics: set[str] = set()
        self.global_task = GlobalTask(topology, config, self.wall_clock)
        self._global_topics = frozenset(self.global_task.topics())
        self.tasks: dict[TaskId, StreamTask] = {}
        # topic -> partition -> the tasks consuming that partition
        self.routes: dict[str, list[list[tuple[TaskId, StreamTask]]]] = {}
        for sub in driver_subtopologies(topology, multi_partition):
            n_tasks = max(self.counts[t] for t in sub.source_topics)
            for partition in range(n_tasks):
                tid = TaskId(sub.id, partition)
                self.tasks[tid] = StreamTask(tid, sub, topology, config, self.partitions, self.wall_clock,
                                             self.global_task.stores)
            for topic in sub.source_topics:
                routes = self.routes.setdefault(topic, [[] for _ in range(self.counts[topic])])
                for partition in range(self.counts[topic]):
                    tid = TaskId(sub.id, partition)
                    routes[partition].append((tid, self.tasks[tid]))
        self._source_topics = frozenset(self.routes) | self._global_topics   # fixed once the tasks are built
        self._ready: dict[TaskId, StreamTask] = {}
        self.thread_id = threading.current_thread().name   # Kafka's driver tags its metrics with its thread
        self._sensors = TaskSensors()

    # ------------------------------------------------------------------ topics
    def wall_clock(self) -> int:
        return self.wall_clock_ms

    def partitions(self, topic: str) -> int:
        return self.counts.get(topic, 1)

    def source_topics(self) -> frozenset[str]:
        return self._source_topics

    def _append(self, record: ProducerRecord) -> None:
        topic, partition, timestamp, key, value, headers = record
        offsets = self.offsets.get(topic)
        if offsets is None:
            offsets = self.offsets[topic] = [0] * self.partitions(topic)
        offset = offsets[partition]
        offsets[partition] = offset + 1
        if topic in self._global_topics:
            self.global_task.apply(ConsumerRecord(topic, partition, offset, timestamp, key, value, headers))
        routes = self.routes.get(topic)
        if routes is not None:
            ready = self._ready
            for tid, task in routes[partition]:
                task.add_record(topic, partition, offset, timestamp, key, value, headers)
                ready[tid] = task

    # ------------------------------------------------------------------ driving
    def pipe(self, record: ProducerRecord) -> None:
        """Append one input record to its partition and drain every task to quiescence."""
        self._append(record)
        self.drain()

    def pipe_many(self, records: list[ProducerRecord]) -> None:
        """Each record piped and drained in turn, as Kafka's driver does for a list."""
        for record in records:
            self.pipe(record)

    def stores(self, name: str) -> dict[int, Any]:
        """Partition -> the instance of store ``name`` in that partition's task."""
        return {p: task.stores[name] for p, task in self.store_tasks(name).items()}

    def store_tasks(self, name: str) -> dict[int, StreamTask]:
        """Partition -> the task holding store ``name`` in that partition."""
        return {tid.partition: task for tid, task in sorted(self.tasks.items()) if name in task.stores}

    @property
    def global_stores(self) -> dict[str, Any]:
        return self.global_task.stores

    def task_ids(self) -> list[TaskId]:
        return sorted(self.tasks)

    def metrics(self) -> Metrics:
        """Kafka's task-level metrics of every task, read from the tasks' counters (see :class:`TaskSensors`)."""
        for tid in sorted(self.tasks):
            counters = self.tasks[tid].metrics
            self._sensors.observe(str(tid), counters.processed, counters.dropped)
        return Metrics(self._sensors.metrics(self.thread_id))

    def drain(self) -> None:
        """Process until no task has records, always stepping the task with the lowest (stream time, id).

        A task keeps the turn while it stays the lowest and no other task became ready, which is the same
        order as re-selecting after every record, with far fewer selections.
        """
        ready = self._ready
        produce = self._produce
        while ready:
            if len(ready) == 1:
                tid, task = next(iter(ready.items()))
                bound = None
            else:   # the lowest (stream time, id) and the next one, in one pass
                first = bound = None
                for i, t in ready.items():
                    at = (t.stream_time, i)
                    if first is None or at < first:
                        first, bound = at, first
                    elif bound is None or at < bound:
                        bound = at
                tid = first[1]   # type: ignore[index]
                task = ready[tid]
            size = len(ready)
            collector = task.collector
            process_one, has_records = task.process_one, task.has_records
            while True:
                processed = process_one()
                buffer = collector.buffer
                if buffer:
                    collector.buffer = []
                    for out in buffer:
                        produce(out)
                if not processed or not has_records():
                    del ready[tid]
                    if has_records():   # max.task.idle.ms: it waits for an empty partition
                        log.info("Due to the max.task.idle.ms configuration, there are currently some records that "
                                 "cannot be processed. Advancing wall-clock time or enqueuing records on the empty "
                                 "topics will allow Streams to process more.")
                    break
                if len(ready) != size or (bound is not None and (task.stream_time, tid) > bound):
                    break

    def _produce(self, record: ProducerRecord) -> None:
        queue = self.captured.get(record.topic)
        if queue is None:
            self.produced_topics.add(record.topic)
            queue = self.captured[record.topic] = deque()
        queue.append(record)
        self._append(record)

    def advance_wall_clock(self, ms: int) -> None:
        """Move the clock, let every task fire its due punctuators, then process what they produced.

        All tasks punctuate before any of their output is processed, as in Kafka (its driver runs every
        subtopology in one task; a stream thread punctuates all its tasks in one pass).
        """
        self.wall_clock_ms += ms
        tasks = [self.tasks[tid] for tid in sorted(self.tasks)]
        for task in tasks:
            task.punctuate_wall_clock()
        for tid in sorted(self.tasks):   # tasks waiting for an empty partition (max.task.idle.ms) may be ready now
            if self.tasks[tid].has_records():
                self._ready[tid] = self.tasks[tid]
        for task in tasks:
            for out in task.collector.drain():
                self._produce(out)
        self.drain()

    def close(self) -> None:
        for tid in sorted(self.tasks):
            self.tasks[tid].close()

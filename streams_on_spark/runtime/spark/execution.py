"""How a runtime's tasks run their micro-batches: which tasks there are and how a task processes a batch.

- :class:`ProcessAvailable` (an application's, and the test driver's multi-partition mode): a task per subtopology
  and partition; a task queues its batch's records and processes them all, in its stream-time order.
- :class:`DriverTask` (the test driver's single-partition mode): every subtopology as one task ``0_0``, run as
  Kafka's driver runs it: the batch's records one at a time, each processed to the end before the next, and what the
  task writes to a topic it reads (repartition, foreign-key and other internal topics) fed straight back into it at
  that topic's next offset, so a list of records piped at once gives the results of piping them one by one.

A strategy is picked once per runtime and travels with the task function; :meth:`BatchExecution.batch` gives the
object one call runs its batch through (:class:`TaskBatch`).
"""
from __future__ import annotations

import itertools
from typing import Protocol

from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.records import ProducerRecord
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.topology.builder import InternalTopologyBuilder, SubtopologySpec
from streams_on_spark.topology.partitions import driver_subtopologies


class TaskBatch(Protocol):
    """One call's batch of one task: its records queued, processed, and the task's output taken."""

    task: StreamTask

    def add_record_batch(self, topic: str, partition: int, offset: int, batch: RecordBatch) -> None:
        """Queue a record batch of consecutive records of one topic-partition, the first at ``offset``."""
        ...

    def process(self) -> None:
        """Process what was queued."""
        ...

    def drain(self) -> list[ProducerRecord]:
        """After the task's commit: everything the task produced in this call, in emission order."""
        ...


class BatchExecution(Protocol):
    """Which tasks a runtime runs, and how a task runs a micro-batch."""

    def subtopologies(self, topology: InternalTopologyBuilder) -> list[SubtopologySpec]:
        """What runs as tasks: one query per entry."""
        ...

    def loop_back_topics(self, spec: SubtopologySpec) -> frozenset[str]:
        """The topics a task of ``spec`` feeds its own output back from (not read by its query)."""
        ...

    def batch(self, task: StreamTask, loop_back: frozenset[str]) -> TaskBatch:
        """The batch ``task`` runs in this call (``loop_back``: :meth:`loop_back_topics` of its subtopology)."""
        ...


class _AvailableBatch:
    """:class:`ProcessAvailable`'s batch: the records queued in the task, processed together (record batches kept
    whole until then: :meth:`StreamTask.process_record_batches`)."""

    __slots__ = ("task", "record_batches")

    def __init__(self, task: StreamTask) -> None:
        self.task = task
        self.record_batches: list[tuple[str, int, int, RecordBatch]] = []

    def add_record_batch(self, topic: str, partition: int, offset: int, batch: RecordBatch) -> None:
        self.record_batches.append((topic, partition, offset, batch))

    def process(self) -> None:
        batches, self.record_batches = self.record_batches, []
        self.task.process_record_batches(batches)

    def drain(self) -> list[ProducerRecord]:
        return self.task.collector.drain()


class ProcessAvailable:
    """A task per subtopology and partition; each batch queued whole and processed in stream-time order."""

    def subtopologies(self, topology: InternalTopologyBuilder) -> list[SubtopologySpec]:
        return driver_subtopologies(topology, multi_partition=True)

    def loop_back_topics(self, spec: SubtopologySpec) -> frozenset[str]:
        return frozenset()

    def batch(self, task: StreamTask, loop_back: frozenset[str]) -> TaskBatch:
        return _AvailableBatch(task)


PROCESS_AVAILABLE = ProcessAvailable()


class _OneByOneBatch:
    """:class:`DriverTask`'s batch: records listed, then queued and processed one at a time, looping back."""

    __slots__ = ("task", "loop_back", "records", "produced")

    def __init__(self, task: StreamTask, loop_back: frozenset[str]) -> None:
        self.task = task
        self.loop_back = loop_back
        self.records: list[tuple] = []   # (topic, partition, offset, timestamp, key, value, headers)
        self.produced: list[ProducerRecord] = []

    def add_record_batch(self, topic: str, partition: int, offset: int, batch: RecordBatch) -> None:
        self.records.extend(zip(itertools.repeat(topic), itertools.repeat(partition), itertools.count(offset),
                                *batch.columns()))

    def process(self) -> None:
        task = self.task
        self._process_looping_back()
        for topic, part, offset, timestamp, key, value, headers in self.records:
            task.add_columns(topic, part, offset, (timestamp,), (key,), (value,), (headers,))
            self._process_looping_back()
        self.records = []

    def drain(self) -> list[ProducerRecord]:
        self._process_looping_back()   # what the commit flushed
        produced, self.produced = self.produced, []
        return produced + self.task.collector.drain()

    def _process_looping_back(self) -> None:
        """Process until the task has no records, taking its output into ``produced`` after each one; what it wrote
        to a loop-back topic is queued back into it at that topic's next offset (Kafka's driver pipes internal
        topics back after every record it processes)."""
        task, produced, loop_back = self.task, self.produced, self.loop_back
        collector = task.collector
        while True:
            for record in collector.drain():   # also what punctuation or a commit produced
                produced.append(record)
                if record.topic in loop_back:
                    task.add_record(record.topic, record.partition, task.next_offset(record.topic, record.partition),
                                    record.timestamp, record.key, record.value, record.headers)
            if not task.process_one():
                return


class DriverTask:
    """The test driver's single-partition mode: every subtopology as one task ``0_0``, run as Kafka's driver runs
    it (see the module doc)."""

    def subtopologies(self, topology: InternalTopologyBuilder) -> list[SubtopologySpec]:
        return driver_subtopologies(topology, multi_partition=False)

    def loop_back_topics(self, spec: SubtopologySpec) -> frozenset[str]:
        """Those it both writes and reads."""
        return frozenset(t for t in spec.sink_topics if t in spec.source_topics)

    def batch(self, task: StreamTask, loop_back: frozenset[str]) -> TaskBatch:
        return _OneByOneBatch(task, loop_back)

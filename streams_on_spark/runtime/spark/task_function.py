"""The ``applyInPandasWithState`` function of a subtopology: one call runs one task on one micro-batch."""
from __future__ import annotations

from typing import Any, Iterator, Optional

from streams_on_spark.config import TaskConfig
from streams_on_spark.connectors.base import GlobalReader
from streams_on_spark.connectors.record_batch import RecordBatch, parse_records
from streams_on_spark.processor.api import TaskId
from streams_on_spark.runtime.spark.clock import TICK, MockClock, WallClock
from streams_on_spark.runtime.spark.output import TaskOutput
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.topology.builder import InternalTopologyBuilder, SubtopologySpec
from streams_on_spark.topology.partitions import TopicLayout

# the task's snapshot, and the wall-clock time it last saw when the clock is the test driver's mock clock (else -1)
STATE_SCHEMA = "snapshot binary, wall_clock long"


class SubtopologyTaskFunction:
    """One subtopology's task function: rebuild the task, restore its snapshot, run the batch, snapshot it back.

    Global stores are rebuilt for each call from what their topics hold at that moment (``global_reader``), the
    view a Kafka Streams task has of its global stores.

    Wall-clock punctuation: with the system clock the task punctuates after each batch, and when
    ``wall_clock_timeouts`` is set a processing-time timeout wakes the task when its next punctuation is due even
    if no data arrives. With the test driver's :class:`MockClock` time moves only through tick records on
    ``tick_topic``: each carries the new time, and the task punctuates before its batch's data.
    """

    def __init__(self, topology: InternalTopologyBuilder, subtopology_id: int, config: TaskConfig,
                 layout: TopicLayout, output: TaskOutput, global_reader: Optional[GlobalReader] = None, *,
                 clock: Optional[MockClock] = None, tick_topic: Optional[str] = None) -> None:
        self.topology = topology
        self.subtopology_id = subtopology_id
        self.config = config
        self.layout = layout
        self.output = output
        self.global_reader = global_reader
        self.clock = clock
        self.tick_topic = tick_topic
        self.wall_clock_timeouts = False
        self._spec: Optional[SubtopologySpec] = None

    def spec(self) -> SubtopologySpec:
        if self._spec is None:
            self._spec = next(s for s in self.topology.subtopologies() if s.id == self.subtopology_id)
        return self._spec

    def task_count(self) -> int:
        """Tasks of this subtopology: the most partitions among its source topics."""
        return self.layout.tasks[self.subtopology_id]

    def input_topics(self) -> list[str]:
        """What the query reads: the subtopology's source topics, and its tick topic under a mock clock."""
        return sorted(self.spec().source_topics) + ([self.tick_topic] if self.tick_topic else [])

    def _wall_clock(self, last_seen: int = -1) -> WallClock:
        if self.clock is None:
            return WallClock(None)
        return WallClock(last_seen if last_seen >= 0 else self.clock.start_ms)

    def new_task(self, partition: int, snapshot: Optional[bytes], clock: Optional[WallClock] = None) -> StreamTask:
        """The task for ``partition`` with its saved state (also used to read stores back on the driver)."""
        clock = clock if clock is not None else self._wall_clock()
        global_stores = self.global_stores(clock) if self.global_reader is not None else None
        task = StreamTask(TaskId(self.subtopology_id, partition), self.spec(), self.topology, self.config,
                          self.layout.partitions_of, clock, global_stores)
        if snapshot is not None:
            task.restore(snapshot)
        return task

    def global_stores(self, clock: Optional[WallClock] = None) -> dict[str, Any]:
        from streams_on_spark.runtime.local import GlobalTask
        clock = clock if clock is not None else self._wall_clock()
        return GlobalTask(self.topology, self.config, clock).load(self.global_reader).stores

    def schedules_wall_clock_punctuation(self) -> bool:
        """Whether this subtopology's processors schedule wall-clock punctuation when they are initialized."""
        task = self.new_task(0, None)
        try:
            return task.next_wall_clock_punctuation() is not None
        finally:
            task.close()

    def __call__(self, key: tuple, frames: Iterator[Any], state: Any) -> Iterator[Any]:
        import pandas as pd
        partition = int(key[0]) % self.task_count()  # the group key is the task's slot (see slots.task_slots)
        snapshot, wall = state.get if state.exists else (None, -1)
        clock = self._wall_clock(wall)
        task = self.new_task(partition, snapshot, clock)
        ticks = self._add_batch(task, [f for f in frames if len(f)])
        if ticks:  # the driver advanced its mock clock: punctuate first, as Kafka's driver does
            clock.mock_ms = max(ticks)
            task.punctuate_wall_clock()
        while task.process_one():
            pass
        if self.clock is None:
            task.punctuate_wall_clock()
        task.commit()  # the micro-batch is the commit interval: record caches flush their last update per key
        rows = self.output.rows(task.collector.drain(), partition)
        state.update((task.snapshot(), -1 if self.clock is None else clock.mock_ms))
        if self.wall_clock_timeouts:
            due = task.next_wall_clock_punctuation()
            if due is not None:
                state.setTimeoutDuration(max(1, due - clock()))
        task.close()
        yield pd.DataFrame(rows, columns=list(self.output.columns))

    def _add_batch(self, task: StreamTask, batches: list[Any]) -> list[int]:
        """Queue a batch's records in the task per topic-partition in offset order; return its wall-clock ticks.

        Rows are record batches (the embedded source's ``batches`` layout) or single records (Spark's Kafka
        source); Spark keeps no order inside a group, so they are sorted by (topic, partition, offset) first.
        """
        if not batches:
            return []
        import pandas as pd
        frame = pd.concat(batches, ignore_index=True) if len(batches) > 1 else batches[0]
        frame = frame.sort_values(["topic", "partition", "offset"], kind="stable")
        ticks: list[int] = []
        if "data" in frame.columns:
            for topic, part, offset, ends, data in zip(*(frame[c].tolist() for c in
                                                          ("topic", "partition", "offset", "ends", "data"))):
                batch = RecordBatch.from_bytes(topic, int(part), data, ends)
                timestamps, keys, values, headers = parse_records(batch.data, len(batch))
                if topic == self.tick_topic:
                    ticks.extend(TICK.unpack(v)[0] for v in values)
                else:
                    task.add_columns(topic, int(part), int(offset), timestamps, keys, values, headers)
            return ticks
        import numpy as np
        topics, parts = frame["topic"].to_numpy(), frame["partition"].to_numpy()
        offsets, timestamps = frame["offset"].tolist(), frame["timestamp"].tolist()
        keys, values = frame["key"].tolist(), frame["value"].tolist()
        headers = [_headers_in(cell) for cell in frame["headers"]]
        # one run of rows per topic-partition (sorted above): each enqueued as columns, no object per record
        bounds = np.flatnonzero((topics[1:] != topics[:-1]) | (parts[1:] != parts[:-1])) + 1
        for lo, hi in zip([0, *bounds.tolist()], [*bounds.tolist(), len(frame)]):
            topic, part = topics[lo], int(parts[lo])
            if topic == self.tick_topic:
                ticks.extend(TICK.unpack(v)[0] for v in values[lo:hi])
            else:
                task.add_columns(topic, part, offsets[lo:hi], timestamps[lo:hi], keys[lo:hi], values[lo:hi],
                                 headers[lo:hi])
        return ticks


def _headers_in(cell: Any) -> tuple:
    """A Kafka source row's headers (an array of {key, value} structs, or null) as the task's header tuples."""
    if cell is None or not len(cell):
        return ()
    return tuple((h["key"], h["value"]) for h in cell)

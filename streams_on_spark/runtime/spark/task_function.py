"""The ``transformWithStateInPandas`` processor of a subtopology: one call runs one task on one micro-batch."""
from __future__ import annotations

import contextlib
import gc
import itertools
import os
import sys
import time
import uuid
from typing import Any, Iterator, Optional

from pyspark.sql.streaming.stateful_processor import StatefulProcessor

from streams_on_spark.config import STATE_DIR, TaskConfig
from streams_on_spark.connectors.base import GlobalReader
from streams_on_spark.connectors.record_batch import RecordBatch, parse_records
from streams_on_spark.processor.api import TaskId
from streams_on_spark.runtime.spark.clock import TICK, MockClock, WallClock
from streams_on_spark.runtime.spark.global_stores import global_stores
from streams_on_spark.runtime.spark.output import QueryableOutput, TaskOutput, streaming_batch
from streams_on_spark.runtime.spark import live_tasks
from streams_on_spark.runtime.spark.task_state import TaskState, committed_state, local_state_path
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.state.local import LocalTaskStore
from streams_on_spark.state.stores import bytes_store_over
from streams_on_spark.state.stores import StoreBuilder
from streams_on_spark.topology.builder import InternalTopologyBuilder, SubtopologySpec
from streams_on_spark.topology.partitions import TopicLayout



class SubtopologyTaskFunction:
    """One subtopology's task function: rebuild the task, restore its snapshot, run the batch, snapshot it back.

    Global stores are kept by the Python worker process between calls and brought up to date before each task runs
    (:mod:`~streams_on_spark.runtime.spark.global_stores`): a task sees what the global topics hold at that moment,
    the view a Kafka Streams task has of its global stores.

    Wall clock: a task reads its micro-batch's timestamp (Spark's, kept in the query's offset log), so a replayed
    batch sees the time its first run saw and produces the same records (exactly-once relies on it); only a task
    rebuilt outside a query (store inspection on the driver) reads the system clock.

    Wall-clock punctuation: with the system clock the task punctuates after each batch, and when
    ``wall_clock_timeouts`` is set a processing-time timeout wakes the task when its next punctuation is due even
    if no data arrives. With the test driver's :class:`MockClock` time moves only through tick records on
    ``tick_topic``: each carries the new time, and the task punctuates before its batch's data.

    ``driver_task``: the function runs the test driver's task ``0_0`` (``spec``: every subtopology as one) the way
    Kafka's driver does: the batch's records one at a time, each processed to the end before the next, and what the
    task writes to a topic it reads (repartition, foreign-key and other internal topics) fed straight back into it at
    that topic's next offset — so a list of records piped at once gives the results of piping them one by one.
    """

    def __init__(self, topology: InternalTopologyBuilder, subtopology_id: int, config: TaskConfig,
                 layout: TopicLayout, output: TaskOutput, global_reader: Optional[GlobalReader] = None, *,
                 clock: Optional[MockClock] = None, tick_topic: Optional[str] = None,
                 run_id: Optional[str] = None, spec: Optional[SubtopologySpec] = None,
                 driver_task: bool = False) -> None:
        self.topology = topology
        self.subtopology_id = subtopology_id
        self.config = config
        self.layout = layout
        self.output = output
        self.global_reader = global_reader
        self.clock = clock
        self.tick_topic = tick_topic
        self.wall_clock_timeouts = False
        self.state_dir = config.app_configs.get(STATE_DIR) if config.app_configs else None
        self._spec: Optional[SubtopologySpec] = spec
        self.driver_task = driver_task
        self._local_names: Optional[list[str]] = None
        # this run of the application (one for all its subtopologies): tasks continue across batches within it and
        # workers keep one copy of its global stores; a restart (possibly with other code or another topology on the
        # same checkpoint) rebuilds tasks and global stores, as Kafka's restart does
        self.run_id = run_id if run_id is not None else uuid.uuid4().hex

    def spec(self) -> SubtopologySpec:
        if self._spec is None:
            self._spec = next(s for s in self.topology.subtopologies() if s.id == self.subtopology_id)
        return self._spec

    def loop_back_topics(self) -> frozenset[str]:
        """The topics the task feeds its own output back from (driver task only: those it both writes and reads)."""
        if not self.driver_task:
            return frozenset()
        spec = self.spec()
        return frozenset(t for t in spec.sink_topics if t in spec.source_topics)

    def task_count(self) -> int:
        """Tasks of this subtopology: the most partitions among its source topics."""
        return self.layout.tasks[self.subtopology_id]

    def input_topics(self) -> list[str]:
        """What the query reads: the subtopology's source topics (but those the task loops back), and its tick topic
        under a mock clock."""
        loop_back = self.loop_back_topics()
        return sorted(t for t in self.spec().source_topics if t not in loop_back) + (
            [self.tick_topic] if self.tick_topic else [])

    def _wall_clock(self, last_seen: int = -1) -> WallClock:
        if self.clock is None:
            return WallClock(None)
        return WallClock(last_seen if last_seen >= 0 else self.clock.start_ms)

    def new_task(self, partition: int, snapshot: Optional[bytes], clock: Optional[WallClock] = None,
                 bytes_stores: Optional[dict[str, Any]] = None,
                 global_stores: Optional[dict[str, Any]] = None) -> StreamTask:
        """The task for ``partition`` with its saved state (also used to read stores back on the driver);
        ``bytes_stores`` holds its key-value stores' data where the engine keeps them."""
        clock = clock if clock is not None else self._wall_clock()
        if global_stores is None and self.global_reader is not None:
            global_stores = self.global_stores(clock)
        return StreamTask(TaskId(self.subtopology_id, partition), self.spec(), self.topology, self.config,
                          self.layout.partitions_of, clock, global_stores, bytes_stores, snapshot)

    def global_stores(self, clock: Optional[WallClock] = None) -> dict[str, Any]:
        """The global stores as this process holds them, caught up with the global topics."""
        assert self.global_reader is not None
        clock = clock if clock is not None else self._wall_clock()
        return global_stores((repr(self.global_reader), self.run_id), self.topology, self.config, self.global_reader,
                             clock)

    def schedules_wall_clock_punctuation(self) -> bool:
        """Whether this subtopology's processors schedule wall-clock punctuation when they are initialized."""
        task = self.new_task(0, None)
        try:
            return task.next_wall_clock_punctuation() is not None
        finally:
            task.close()

    def local_store_names(self) -> list[str]:
        """The subtopology's stores kept in the executor's local RocksDB (those over the library's bytes stores)."""
        if self._local_names is None:
            factories = self.topology.state_factories
            self._local_names = [n for n in self.spec().store_names
                                 if isinstance(factories[n], StoreBuilder) and factories[n].engine_kept()]
        return self._local_names

    def bytes_stores(self, tables: dict[str, Any]) -> dict[str, Any]:
        """The bytes stores of the :meth:`local_store_names` stores, each over its table (a column family)."""
        factories = self.topology.state_factories
        return {name: bytes_store_over(factories[name], table) for name, table in tables.items()}

    def processor(self) -> "SubtopologyProcessor":
        """The ``transformWithStateInPandas`` processor running this function's tasks."""
        return SubtopologyProcessor(self)

    def run(self, key: tuple, frames: Iterator[Any], state: TaskState, timers: Any = None,
            batch_ms: int = -1) -> Iterator[Any]:
        """Run one task on one micro-batch (timestamp ``batch_ms``, -1 if unknown): take or rebuild the task,
        process, write its output, commit its state; yields the rows of :attr:`output`'s schema."""
        with worker_gc():
            rows = self._run(key, frames, state, timers, batch_ms)
        yield rows

    def _run(self, key: tuple, frames: Iterator[Any], state: TaskState, timers: Any, batch_ms: int) -> Any:
        import pandas as pd
        partition = int(key[0]) % self.task_count()  # the group key is the task's slot (see slots.task_slots)
        saved = state.load()
        query, batch = streaming_batch()
        live_key = (query, self.run_id, self.subtopology_id, partition)
        live = live_tasks.take(live_key, None if saved is None else saved.marker) if query is not None else None
        if live is not None:
            local, clock = live.local, live.clock
            local.open()
        else:
            local = LocalTaskStore(local_state_path(self.state_dir or _files_root(), query, partition),
                                   self.local_store_names())
            clock = self._wall_clock()
        if self.clock is not None:
            clock.fixed_ms = self._wall_clock(saved.wall_clock if saved is not None else -1).fixed_ms
        else:
            clock.fixed_ms = batch_ms if batch_ms >= 0 else None
        task: Optional[StreamTask] = None
        try:
            in_sync = state.sync(local)
            global_stores = self.global_stores(clock) if self.global_reader is not None else {}
            externals = self._externals(local, global_stores, clock)
            if live is not None and all(live.task.global_stores.get(n) is s for n, s in global_stores.items()):
                task = live.task
            elif in_sync and saved is not None:   # another worker ran it last: continue from its image
                task = live_tasks.restore(local.image(), externals, self.run_id)
            if task is None:
                task = self.new_task(partition, saved.snapshot if saved is not None else None, clock,
                                     self.bytes_stores(local.stores), global_stores)
                if self.output.partitioned:
                    task.collector.partition_output()
            processed, dropped = task.metrics.processed, task.metrics.dropped   # this call's are reported
            loop_back = self.loop_back_topics()
            positions = {(topic, partition): -1 for topic in sorted(self.spec().source_topics)
                         if partition < self.layout.partitions_of(topic) and topic not in loop_back}
            one_by_one: Optional[list[tuple]] = [] if self.driver_task else None
            ticks = self._add_batch(task, [f for f in frames if len(f)], positions, one_by_one)
            produced: list = []
            if ticks:  # the driver advanced its mock clock: punctuate first, as Kafka's driver does
                clock.fixed_ms = max(ticks)
                task.punctuate_wall_clock()
            if one_by_one is None:
                task.process_available()
            else:
                self._process_looping_back(task, produced, loop_back)
                for topic, part, offset, timestamp, key, value, headers in one_by_one:
                    task.add_columns(topic, part, offset, (timestamp,), (key,), (value,), (headers,))
                    self._process_looping_back(task, produced, loop_back)
            if self.clock is None:
                task.punctuate_wall_clock()
            committing = time.perf_counter()
            task.commit()  # the micro-batch is the commit interval: record caches flush their last update per key
            if one_by_one is not None:
                self._process_looping_back(task, produced, loop_back)
            output = task.collector.drain_batches() if self.output.partitioned else produced + task.collector.drain()
            rows = self.output.rows(output, partition, positions)
            wall = -1 if self.clock is None else clock.fixed_ms
            image = live_tasks.image(live_key, task, externals, self.run_id) if query is not None else None
            marker = state.commit(local, -1 if batch is None else batch, task.snapshot(), wall, image)
            rows = self.output.report(rows, partition, task.metrics.processed - processed,
                                      task.metrics.dropped - dropped, (time.perf_counter() - committing) * 1000.0)
            if isinstance(self.output, QueryableOutput):   # interactive.queries: the driver's copy follows
                rows = self.output.with_state(rows, committed_state(state))
            if timers is not None:
                timers.schedule(task.next_wall_clock_punctuation())
        except BaseException:
            if task is not None:   # in an unknown state: closed dirty, never kept
                live_tasks.discard(task)
            raise
        finally:
            local.close()
        if query is not None:
            live_tasks.keep(live_key, live_tasks.LiveTask(marker, task, local, clock))
        else:
            task.close()
        return pd.DataFrame(rows, columns=list(self.output.columns))

    def _externals(self, local: LocalTaskStore, global_stores: dict[str, Any], clock: WallClock) -> dict[str, Any]:
        """What a task image leaves out, by tag: what every worker has itself, or must not be pickled."""
        externals: dict[str, Any] = {"topology": self.topology, "spec": self.spec(), "config": self.config,
                                     "layout": self.layout, "clock": clock}
        externals.update((f"local:{name}", store) for name, store in local.stores.items())
        externals.update((f"global:{name}", store) for name, store in global_stores.items())
        return externals

    @staticmethod
    def _process_looping_back(task: StreamTask, produced: list, loop_back: frozenset[str]) -> None:
        """Process until the task has no records, taking its output into ``produced`` after each one; what it wrote
        to a ``loop_back`` topic is queued back into it at that topic's next offset (Kafka's driver pipes internal
        topics back after every record it processes)."""
        collector = task.collector
        while True:
            for record in collector.drain():   # also what punctuation or a commit produced
                produced.append(record)
                if record.topic in loop_back:
                    task.add_record(record.topic, record.partition, task.next_offset(record.topic, record.partition),
                                    record.timestamp, record.key, record.value, record.headers)
            if not task.process_one():
                return

    def _add_batch(self, task: StreamTask, batches: list[Any], positions: dict[tuple[str, int], int],
                   one_by_one: Optional[list[tuple]] = None) -> list[int]:
        """Queue a batch's records in the task per topic-partition in offset order; return its wall-clock ticks.
        ``positions`` gets the offset after the last record read of each source topic-partition. With
        ``one_by_one`` (the driver task) the records are listed there as (topic, partition, offset, timestamp, key,
        value, headers) instead, to be queued one at a time.

        Rows are record batches of consecutive records of one topic-partition (the ``batches`` layout every
        connector's ``prepare`` gives: the embedded source's rows, Spark's Kafka rows packed before the shuffle);
        Spark keeps no order inside a group, so they are sorted by (topic, partition, offset) first.
        """
        if not batches:
            return []
        import pandas as pd
        frame = pd.concat(batches, ignore_index=True) if len(batches) > 1 else batches[0]
        frame = frame.sort_values(["topic", "partition", "offset"], kind="stable")
        ticks: list[int] = []
        for topic, part, offset, ends, data in zip(*(frame[c].tolist() for c in
                                                      ("topic", "partition", "offset", "ends", "data"))):
            batch = RecordBatch.from_bytes(topic, int(part), data, ends)
            timestamps, keys, values, headers = parse_records(batch.data, len(batch))
            if topic == self.tick_topic:
                ticks.extend(TICK.unpack(v)[0] for v in values)
            else:
                if one_by_one is not None:
                    one_by_one.extend(zip(itertools.repeat(topic), itertools.repeat(int(part)),
                                          itertools.count(int(offset)), timestamps, keys, values, headers))
                else:
                    task.add_columns(topic, int(part), int(offset), timestamps, keys, values, headers)
                positions[(topic, int(part))] = int(offset) + len(batch)
        return ticks


_gc_frozen = False   # this Python worker froze what it held before its first task (see worker_gc)


@contextlib.contextmanager
def worker_gc() -> Iterator[None]:
    """Python's cyclic collector kept out of a task's batch: paused while it runs (a batch allocates millions of
    tuples, which would trigger collections that traverse everything the worker holds, again and again), and what
    the worker held before its first task — pyspark, pandas, pyarrow, this library: ~80k objects — frozen once, so
    the ``gc.collect()`` pyspark's worker runs after every task only traverses what tasks made since. Cyclic garbage
    of a batch is collected by that ``gc.collect()``."""
    global _gc_frozen
    if not _gc_frozen:
        gc.collect()
        gc.freeze()
        _gc_frozen = True
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _files_root() -> str:
    """The executor's directory for this application (Spark's files directory; removed when the application ends)."""
    from pyspark import SparkFiles
    return SparkFiles.getRootDirectory()


class _Timers:
    """The task's processing-time timer: one, at its next wall-clock punctuation (Spark wakes the task then)."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def schedule(self, due: Optional[int]) -> None:
        for registered in list(self.handle.listTimers()):
            if registered != due:
                self.handle.deleteTimer(registered)
            else:
                due = None
        if due is not None:
            self.handle.registerTimer(due)


DRIVER_WORKER = "pyspark.sql.streaming.transform_with_state_driver_worker"


def _quiet_driver_worker() -> None:
    """In pyspark's driver worker (the Python process Spark starts on the driver when a transformWithStateInPandas
    query starts, to register its state variables) stdout goes to /dev/null: pyspark prints its debug lines there,
    four of them with blank lines after reading the processor, and Spark copies them to the console. The worker
    talks to Spark over a socket, never stdout. (Its first line, printed before the processor is read, stays.)"""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None) == DRIVER_WORKER:
        sys.stdout = open(os.devnull, "w")   # noqa: SIM115 - for the life of this short process


class SubtopologyProcessor(StatefulProcessor):
    """A subtopology's tasks as a ``transformWithStateInPandas`` processor: one group per task."""

    def __init__(self, function: SubtopologyTaskFunction) -> None:
        self.function = function

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        _quiet_driver_worker()

    def init(self, handle: Any) -> None:
        self.handle = handle
        self.batch_ms: Optional[int] = None   # init runs once per Spark task (one micro-batch)
        self.state = TaskState(handle)
        self.timers = _Timers(handle) if self.function.wall_clock_timeouts else None

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:
        return self.function.run(key, rows, self.state, self.timers, self._batch_ms(timerValues))

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[Any]:
        """A wall-clock punctuation is due and the task got no data: run it on an empty batch."""
        return self.function.run(key, iter(()), self.state, self.timers, self._batch_ms(timerValues))

    def _batch_ms(self, timer_values: Any) -> int:
        """The micro-batch's timestamp. Spark hands it over only in processing-time mode; in mode ``None`` its
        state server still has it, behind the handle's client (pyspark 4.2's private ``_get_batch_timestamp``: a
        round trip, made only when the task reads the system clock)."""
        if self.function.clock is not None:   # the test driver's mock clock: the batch's time is not read
            return -1
        if self.batch_ms is None:
            now = timer_values.getCurrentProcessingTimeInMs()
            client = getattr(self.handle, "_statefulProcessorApiClient", None)
            self.batch_ms = now if now >= 0 or client is None else client._get_batch_timestamp()
        return self.batch_ms

    def close(self) -> None:
        pass

"""The ``transformWithStateInPandas`` processor of a subtopology: one call runs one task on one micro-batch."""
from __future__ import annotations

import contextlib
import gc
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from pyspark.sql.streaming.stateful_processor import StatefulProcessor

from streams_on_spark.config import STATE_DIR, TaskConfig
from streams_on_spark.connectors.base import GlobalReader
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.processor.api import TaskId
from streams_on_spark.runtime.spark.clock import SYSTEM_CLOCK, TICK, Clock, WallClock
from streams_on_spark.runtime.spark.execution import PROCESS_AVAILABLE, BatchExecution, TaskBatch
from streams_on_spark.runtime.spark.global_stores import global_stores
from streams_on_spark.runtime.spark.output import QueryableOutput, TaskOutput, streaming_batch
from streams_on_spark.runtime.spark import live_tasks
from streams_on_spark.runtime.spark.task_state import SavedTask, TaskState, committed_state, local_state_path
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.state.local import LocalTaskStore, open_local_task_store
from streams_on_spark.state.stores import bytes_store_over
from streams_on_spark.state.stores import StoreBuilder
from streams_on_spark.topology.builder import InternalTopologyBuilder, SubtopologySpec
from streams_on_spark.topology.partitions import TopicLayout


def query_name(application_id: str, subtopology_id: int) -> str:
    """The name of a subtopology's query (and the prefix of its tick topic under a mock clock)."""
    return f"{application_id}-subtopology-{subtopology_id}"


@dataclass
class TaskRun:
    """One call of a task function: the task, where its state is, and what it was given and produced so far."""

    partition: int
    saved: Optional[SavedTask]     # what Spark holds for the task (None: a new task)
    batch_id: Optional[int]        # the micro-batch (None outside a query)
    live_key: Optional[tuple]      # where the worker keeps the task between calls (None outside a query)
    live: Optional[live_tasks.LiveTask]
    local: LocalTaskStore
    clock: WallClock
    task: Optional[StreamTask] = None
    externals: dict[str, Any] = field(default_factory=dict)
    batch: Optional[TaskBatch] = None
    positions: dict[tuple[str, int], int] = field(default_factory=dict)
    ticks: list[int] = field(default_factory=list)
    processed: int = 0             # the task's counters before this call (this call's are reported)
    dropped: int = 0
    marker: str = ""               # the version of the state this call committed


class SubtopologyTaskFunction:
    """One subtopology's task function: take or rebuild the task, feed it the batch, run it, commit it.

    Global stores are kept by the Python worker process between calls and brought up to date before each task runs
    (:mod:`~streams_on_spark.runtime.spark.global_stores`): a task sees what the global topics hold at that moment,
    the view a Kafka Streams task has of its global stores.

    What varies between an application and the test driver is in three strategies picked by the runtime: the
    :class:`~streams_on_spark.runtime.spark.clock.Clock` (an application's tasks read their micro-batch's timestamp
    and punctuate after each batch, with processing-time timeouts waking an idle task when ``wall_clock_timeouts``
    is set; the test driver's mock clock moves only by tick records on ``tick_topic``), the
    :class:`~streams_on_spark.runtime.spark.execution.BatchExecution` (a batch processed whole, or Kafka's driver's
    task record by record with its internal topics looped back) and the
    :class:`~streams_on_spark.runtime.spark.output.TaskOutput` (written from the executor, or returned).
    """

    def __init__(self, topology: InternalTopologyBuilder, subtopology_id: int, config: TaskConfig,
                 layout: TopicLayout, output: TaskOutput, global_reader: Optional[GlobalReader] = None, *,
                 clock: Clock = SYSTEM_CLOCK, execution: BatchExecution = PROCESS_AVAILABLE,
                 run_id: Optional[str] = None, spec: Optional[SubtopologySpec] = None) -> None:
        self.topology = topology
        self.subtopology_id = subtopology_id
        self.config = config
        self.layout = layout
        self.output = output
        self.global_reader = global_reader
        self.clock = clock
        self.execution = execution
        self.tick_topic = clock.tick_topic(query_name(layout.application_id, subtopology_id))
        self.wall_clock_timeouts = False
        self.state_dir = config.app_configs.get(STATE_DIR) if config.app_configs else None
        self._spec: Optional[SubtopologySpec] = spec
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
        """The topics the task feeds its own output back from (see :class:`BatchExecution`)."""
        return self.execution.loop_back_topics(self.spec())

    def task_count(self) -> int:
        """Tasks of this subtopology: the most partitions among its source topics."""
        return self.layout.tasks[self.subtopology_id]

    def input_topics(self) -> list[str]:
        """What the query reads: the subtopology's source topics (but those the task loops back), and its clock's
        tick topic if it has one."""
        loop_back = self.loop_back_topics()
        return sorted(t for t in self.spec().source_topics if t not in loop_back) + (
            [self.tick_topic] if self.tick_topic else [])

    def new_task(self, partition: int, snapshot: Optional[bytes], clock: Optional[WallClock] = None,
                 bytes_stores: Optional[dict[str, Any]] = None,
                 global_stores: Optional[dict[str, Any]] = None, partition_output: bool = False) -> StreamTask:
        """The task for ``partition`` with its saved state (also used to read stores back on the driver);
        ``bytes_stores`` holds its key-value stores' data where the engine keeps them; ``partition_output``: its
        output grouped by destination as produced (see :class:`StreamTask`)."""
        clock = clock if clock is not None else self.clock.task_clock()
        if global_stores is None and self.global_reader is not None:
            global_stores = self.global_stores(clock)
        return StreamTask(TaskId(self.subtopology_id, partition), self.spec(), self.topology, self.config,
                          self.layout.partitions_of, clock, global_stores, bytes_stores, snapshot, partition_output)

    def global_stores(self, clock: Optional[WallClock] = None) -> dict[str, Any]:
        """The global stores as this process holds them, caught up with the global topics."""
        assert self.global_reader is not None
        clock = clock if clock is not None else self.clock.task_clock()
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
        run = self._acquire(int(key[0]) % self.task_count(), state, batch_ms)  # the group key: the task's slot
        try:
            self._acquire_task(run, state)
            self._feed(run, frames)
            self._execute(run)
            rows = self._commit(run, state, timers)
        except BaseException:
            if run.task is not None:   # in an unknown state: closed dirty, never kept
                live_tasks.discard(run.task)
            raise
        finally:
            self._release_local_store(run.local)
        self._keep(run)
        return pd.DataFrame(rows, columns=list(self.output.columns))

    def _acquire(self, partition: int, state: TaskState, batch_ms: int) -> TaskRun:
        """Where the task's state is: Spark's value, the live task this worker kept (if at that version), the local
        store; the task's clock set for the batch."""
        saved = state.load()
        query, batch_id = streaming_batch()
        live_key = (query, self.run_id, self.subtopology_id, partition) if query is not None else None
        live = live_tasks.take(live_key, None if saved is None else saved.marker) if live_key is not None else None
        local = self._acquire_local_store(live, query, partition)
        clock = live.clock if live is not None else self.clock.task_clock()
        self.clock.start_batch(clock, saved.wall_clock if saved is not None else -1, batch_ms)
        return TaskRun(partition, saved, batch_id, live_key, live, local, clock)

    def _acquire_local_store(self, live: Optional[live_tasks.LiveTask], query: Optional[str],
                             partition: int) -> LocalTaskStore:
        """The task's local store: the live task's, opened again, or the one under the executor's directory."""
        if live is not None:
            live.local.open()
            return live.local
        return open_local_task_store(local_state_path(self.state_dir or _files_root(), query, partition),
                              self.local_store_names())

    @staticmethod
    def _release_local_store(local: LocalTaskStore) -> None:
        """Close the task's local store after the call (a live task's is opened again by its next call)."""
        local.close()

    def _acquire_task(self, run: TaskRun, state: TaskState) -> None:
        """The task at the version Spark holds: the live one, else from the image another worker left in the local
        store, else rebuilt from its snapshot over the local store (brought in sync with Spark first)."""
        in_sync = state.sync(run.local)
        global_stores = self.global_stores(run.clock) if self.global_reader is not None else {}
        run.externals = self._externals(run.local, global_stores, run.clock)
        live, saved = run.live, run.saved
        if live is not None and all(live.task.global_stores.get(n) is s for n, s in global_stores.items()):
            run.task = live.task
        elif in_sync and saved is not None:   # another worker ran it last: continue from its image
            run.task = live_tasks.restore(run.local.image(), run.externals, self.run_id)
        if run.task is None:
            run.task = self.new_task(run.partition, saved.snapshot if saved is not None else None, run.clock,
                                     self.bytes_stores(run.local.stores), global_stores, self.output.partitioned)
        run.processed, run.dropped = run.task.metrics.processed, run.task.metrics.dropped

    def _feed(self, run: TaskRun, frames: Iterator[Any]) -> None:
        """Queue the batch's records (the task's source topic-partitions from ``-1``: nothing read yet)."""
        assert run.task is not None
        loop_back = self.loop_back_topics()
        run.positions = {(topic, run.partition): -1 for topic in sorted(self.spec().source_topics)
                         if run.partition < self.layout.partitions_of(topic) and topic not in loop_back}
        run.batch = self.execution.batch(run.task, loop_back)
        run.ticks = self._add_batch(run.batch, [f for f in frames if len(f)], run.positions)

    def _execute(self, run: TaskRun) -> None:
        """Punctuate and process as the clock and the execution strategy say."""
        assert run.task is not None and run.batch is not None
        self.clock.punctuate_before(run.task, run.clock, run.ticks)
        run.batch.process()
        self.clock.punctuate_after(run.task)

    def _commit(self, run: TaskRun, state: TaskState, timers: Any) -> list[tuple]:
        """Commit the task (the micro-batch is the commit interval: record caches flush their last update per key),
        hand its output over and commit its state in Spark; the rows of :attr:`output`'s schema."""
        task, batch = run.task, run.batch
        assert task is not None and batch is not None
        committing = time.perf_counter()
        task.commit()
        output = task.collector.drain_batches() if self.output.partitioned else batch.drain()
        rows = self.output.rows(output, run.partition, run.positions)
        image = live_tasks.image(run.live_key, task, run.externals, self.run_id) if run.live_key is not None else None
        run.marker = state.commit(run.local, -1 if run.batch_id is None else run.batch_id, task.snapshot(),
                                  self.clock.saved_ms(run.clock), image)
        rows = self.output.report(rows, run.partition, task.metrics.processed - run.processed,
                                  task.metrics.dropped - run.dropped, (time.perf_counter() - committing) * 1000.0)
        if isinstance(self.output, QueryableOutput):   # interactive.queries: the driver's copy follows
            rows = self.output.with_state(rows, committed_state(state))
        if timers is not None:
            timers.schedule(task.next_wall_clock_punctuation())
        return rows

    def _keep(self, run: TaskRun) -> None:
        """Keep the task in this worker for its next batch (closed if it ran outside a query)."""
        assert run.task is not None
        if run.live_key is not None:
            live_tasks.keep(run.live_key, live_tasks.LiveTask(run.marker, run.task, run.local, run.clock))
        else:
            run.task.close()

    def _externals(self, local: LocalTaskStore, global_stores: dict[str, Any], clock: WallClock) -> dict[str, Any]:
        """What a task image leaves out, by tag: what every worker has itself, or must not be pickled."""
        externals: dict[str, Any] = {"topology": self.topology, "spec": self.spec(), "config": self.config,
                                     "layout": self.layout, "clock": clock}
        externals.update((f"local:{name}", store) for name, store in local.stores.items())
        externals.update((f"global:{name}", store) for name, store in global_stores.items())
        return externals

    def _add_batch(self, batch: TaskBatch, frames: list[Any], positions: dict[tuple[str, int], int]) -> list[int]:
        """Queue the frames' records in ``batch`` per topic-partition in offset order; return their wall-clock
        ticks. ``positions`` gets the offset after the last record read of each source topic-partition.

        Rows are record batches of consecutive records of one topic-partition (the ``batches`` layout every
        connector's ``prepare`` gives: the embedded source's rows, Spark's Kafka rows packed before the shuffle);
        Spark keeps no order inside a group, so they are sorted by (topic, partition, offset) first.
        """
        if not frames:
            return []
        import pandas as pd
        frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        frame = frame.sort_values(["topic", "partition", "offset"], kind="stable")
        ticks: list[int] = []
        for topic, part, offset, ends, data in zip(*(frame[c].tolist() for c in
                                                      ("topic", "partition", "offset", "ends", "data"))):
            records = RecordBatch.from_bytes(topic, int(part), data, ends)
            if topic == self.tick_topic:
                ticks.extend(TICK.unpack(v)[0] for v in records.columns()[2])
            else:
                batch.add_record_batch(topic, int(part), int(offset), records)
                positions[(topic, int(part))] = int(offset) + len(records)
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
        if not self.function.clock.reads_batch_time:   # the test driver's mock clock
            return -1
        if self.batch_ms is None:
            now = timer_values.getCurrentProcessingTimeInMs()
            client = getattr(self.handle, "_statefulProcessorApiClient", None)
            self.batch_ms = now if now >= 0 or client is None else client._get_batch_timestamp()
        return self.batch_ms

    def close(self) -> None:
        pass

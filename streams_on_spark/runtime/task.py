"""``StreamTask``: one subtopology on one partition — the unit every engine hosts.

Holds the task's stream time, its processor context and its processing loop over its parts as Kafka's task has
them, each a small class of its own: its processor graph (:mod:`~streams_on_spark.runtime.processor_graph`), record
queues (:mod:`~streams_on_spark.runtime.record_queue`), state stores and caches
(:mod:`~streams_on_spark.runtime.state_manager`), punctuation queues (:mod:`~streams_on_spark.runtime.punctuation`),
record collector (:mod:`~streams_on_spark.runtime.record_collector`), error handling
(:mod:`~streams_on_spark.runtime.task_errors`) and its snapshot (:mod:`~streams_on_spark.runtime.snapshot`). The
task assembles them and binds what its per-record loop reads once; the loop itself stays inline here (it is the
hottest path). The same class runs inside the in-process driver and inside Spark's ``transformWithStateInPandas``;
engines only feed records in and take produced records out.
"""
from __future__ import annotations

import itertools
import logging
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from streams_on_spark.config import TaskConfig
from streams_on_spark.error_handlers import LogAndFailProcessingExceptionHandler
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.records import ConsumerRecord
from streams_on_spark.errors import IllegalStateError, StreamsException
from streams_on_spark.processor.api import (
    Cancellable,
    ProcessorContext,
    PunctuationType,
    Record,
    RecordMetadata,
    TaskId,
)
from streams_on_spark.runtime.fused import BatchAggregation, FusedChains, fused_forward, written_through
from streams_on_spark.runtime.nodes import ProcessorNode
from streams_on_spark.runtime.processor_graph import ProcessorGraph
from streams_on_spark.runtime.punctuation import PunctuationQueue, PunctuationSchedule
from streams_on_spark.runtime.record_collector import RecordCollector
from streams_on_spark.runtime.record_queue import UNKNOWN, PartitionGroup, RecordQueue, enqueue_columns
from streams_on_spark.runtime.snapshot import TaskSnapshot
from streams_on_spark.runtime.state_manager import ProcessorStateManager
from streams_on_spark.runtime.task_errors import TaskErrors
from streams_on_spark.state.caching import TaskCache
from streams_on_spark.state.stores import ReadOnlyStore
from streams_on_spark.timestamp_extractors import (
    FailOnInvalidTimestamp,
    SourceRecord,
    extract_timestamp,
    log_negative,
)
from streams_on_spark.topology.builder import InternalTopologyBuilder, SubtopologySpec

log = logging.getLogger(__name__)


class TaskMetrics:
    """Counters a task keeps (Kafka's ``process-total`` and ``dropped-records-total``)."""

    __slots__ = ("processed", "dropped")

    def __init__(self) -> None:
        self.processed = 0
        self.dropped = 0

    def record_dropped(self) -> None:
        self.dropped += 1


class TaskContext(ProcessorContext):
    tracks_store_positions = True   # its stores' writes add the record in process to their positions

    def __init__(self, task: "StreamTask") -> None:
        self._task = task
        self.current: Optional[ProcessorNode] = None
        self.record: Optional[Record] = None             # what the current processor is processing
        self.queue: Optional[RecordQueue] = None   # where the record in process came from
        self.offset = -1
        self.source_raw: tuple[Optional[bytes], Optional[bytes]] = (None, None)   # its raw key and value
        self.cache = task.cache
        self.metrics = task.metrics
        config = task.config
        self.default_key_serde = config.default_key_serde
        self.default_value_serde = config.default_value_serde
        self._app_id = config.application_id

    def forward(self, record: Record, child: Optional[str] = None) -> None:
        node = self.current
        if node is None:
            raise IllegalStateError("forward() called outside of process() or a punctuator")
        previous = self.record
        self.record = record
        if child is None:
            for target in node.children:
                self.current = target
                target.process(record)
        else:
            target = node.by_name.get(child)
            if target is None:
                raise StreamsException(f"Unknown downstream node: {child} either does not exist or is not "
                                       f"connected to this processor ({node.name}).")
            self.current = target
            target.process(record)
        self.current, self.record = node, previous

    def get_state_store(self, name: str) -> Any:
        """A store connected to the current processor, or any global store (Kafka's access rule)."""
        node = self.current
        store = self._task.global_stores.get(name)
        if store is not None and self._task.global_read_only:
            store = ReadOnlyStore(store)
        if store is None and node is not None and name in node.stores:
            store = self._task.stores.get(name)
        if store is None:
            node = node.name if node else "?"
            raise StreamsException(f"Processor {node} has no access to StateStore {name} as the store is not "
                                   "connected to the processor. If you add stores manually via "
                                   "'add_state_store()' make sure to connect the added store to the processor "
                                   "by providing the processor name to 'add_state_store()' or connect them via "
                                   "'connect_processor_and_state_stores()'. DSL users need to provide the store "
                                   "name to '.process()'")
        return store

    def schedule(self, interval_ms: int, punctuation_type: PunctuationType,
                 punctuator: Callable[[int], None]) -> Cancellable:
        if not isinstance(interval_ms, int) or interval_ms < 1:
            raise ValueError(f"The minimum supported scheduling interval is 1 millisecond, got {interval_ms!r}")
        if not isinstance(punctuation_type, PunctuationType):
            raise ValueError(f"punctuation_type must be a PunctuationType, got {punctuation_type!r}")
        if self.current is None:
            raise IllegalStateError("schedule() must be called from init(), process() or a punctuator")
        return self._task.schedule(self.current, interval_ms, punctuation_type, punctuator)

    def record_metadata(self) -> Optional[RecordMetadata]:
        queue = self.queue
        return None if queue is None else RecordMetadata(queue.topic, queue.partition, self.offset)

    @property
    def application_id(self) -> str:
        return self._app_id

    @property
    def task_id(self) -> TaskId:
        return self._task.id

    def current_stream_time_ms(self) -> int:
        return self._task.stream_time

    def current_system_time_ms(self) -> int:
        return self._task.wall_clock()

    def app_configs(self) -> dict[str, Any]:
        return dict(self._task.config.app_configs)

    def get_processor_metadata(self, key: str) -> Optional[int]:
        """Small per-task values a DSL processor keeps beside its stores (e.g. its observed stream time).

        Kept in the task snapshot, so they survive a restart like Kafka's committed processor metadata.
        """
        return self._task.processor_metadata.get(key)

    def put_processor_metadata(self, key: str, value: int) -> None:
        self._task.processor_metadata[key] = value


def _node_forward(ctx: "TaskContext", node: ProcessorNode, track_records: bool) -> Callable[..., None]:
    """``context.forward`` specialised for one node: its children are fixed once the task is built.

    ``track_records``: keep ``ctx.record`` (the record each processor is processing), which only a task with
    record caches reads; the other tasks skip that bookkeeping on their hot path.
    """
    children = node.children
    if len(children) == 1:
        target, process = children[0], children[0].process

        def forward_one(record: Record, child: Optional[str] = None) -> None:
            if child is not None:
                ctx.current = node
                return TaskContext.forward(ctx, record, child)
            ctx.current = target
            process(record)
            ctx.current = node

        def forward_one_tracked(record: Record, child: Optional[str] = None) -> None:
            if child is not None:
                ctx.current = node
                return TaskContext.forward(ctx, record, child)
            previous = ctx.record
            ctx.current, ctx.record = target, record
            process(record)
            ctx.current, ctx.record = node, previous
        return forward_one_tracked if track_records else forward_one

    def forward_all(record: Record, child: Optional[str] = None) -> None:
        ctx.current = node
        TaskContext.forward(ctx, record, child)
    return forward_all


FAIL_ON_INVALID_TIMESTAMP = FailOnInvalidTimestamp()


class StreamTask:
    """Runs one subtopology for one partition: its processor graph (a ``ProcessorGraph``) over its record queues (a
    ``PartitionGroup``), state stores (a ``ProcessorStateManager``) and punctuation queues, its output through a
    ``RecordCollector``, its failures through ``TaskErrors``; and its snapshot."""

    # the partition group's own methods, bound in __init__ (engines call them per record: no hop, no extra call)
    has_records: Callable[[], bool]   # whether any input partition has queued records
    next_offset: Callable[[str, int], int]   # the offset after the last record queued from a topic's partition

    def __init__(self, task_id: TaskId, spec: SubtopologySpec, topology: InternalTopologyBuilder,
                 config: TaskConfig, partition_counts: Callable[[str], int], wall_clock: Callable[[], int],
                 global_stores: Optional[Mapping[str, Any]] = None,
                 bytes_stores: Optional[Mapping[str, Any]] = None, snapshot: Optional[bytes] = None,
                 partition_output: bool = False) -> None:
        """Build the task, restore ``snapshot`` (a :meth:`snapshot` of an earlier instance) into it, then initialize
        its processors — Kafka's order (state restored before ``initializeTopology``), so a processor's ``init()``
        sees its stores, stream time and metadata as they were. ``bytes_stores``: store name -> the bytes store an
        engine keeps that store's data in (its local stores); :meth:`snapshot` holds only what they give as
        ``entries()`` (a window store's stream time, say). ``partition_output``: the collector groups the output by
        destination (:meth:`RecordCollector.partition_output`), set before the processors' fused forwards are made
        so that their sinks encode into it."""
        self.id, self.spec, self.config, self.wall_clock = task_id, spec, config, wall_clock
        self.metrics = TaskMetrics()
        self.cache = TaskCache(config.cache_max_bytes)
        self._commit_every_record = config.commit_every_record
        self.global_stores = dict(global_stores or {})
        self.global_read_only = True   # its processors read global stores; only the global task writes them
        self.stream_time = UNKNOWN
        self.processor_metadata: dict[str, int] = {}
        # its parts, as Kafka's task has them
        self.context = TaskContext(self)
        self.collector = RecordCollector(partition_counts, on_dropped=self.metrics.record_dropped)
        self.errors = TaskErrors(task_id, config, self.context, self.metrics, self.collector)
        self.collector.on_serialization_error = self.errors.serialization_error
        if partition_output:
            self.collector.partition_output()
        self.stream_time_punctuation = PunctuationQueue(PunctuationType.STREAM_TIME)
        self.wall_clock_punctuation = PunctuationQueue(PunctuationType.WALL_CLOCK_TIME)
        self.state = ProcessorStateManager(task_id, spec.store_names, topology, self.context, bytes_stores,
                                           config.dsl_headers_stores)
        graph = ProcessorGraph(spec, topology, config, self.collector)
        self.nodes = graph.nodes
        self.partition_group = PartitionGroup(task_id, graph.sources, partition_counts, config)
        self._bind_hot_paths()
        if snapshot is not None:
            self._restore(snapshot)
        if type(config.processing_handler) is not LogAndFailProcessingExceptionHandler:
            graph.guard_processors(self.errors.guard)   # Kafka's default fails the task: the task-level catch does
        self._init_processors()
        self.stream_time_punctuation.check_restored(task_id)
        self.wall_clock_punctuation.check_restored(task_id)
        self.state.write_through(written_through(self))

    def _bind_hot_paths(self) -> None:
        """The parts' own containers and methods, bound once for the per-record paths (no attribute hop, no extra
        call per record), and the batch paths, planned on first use."""
        self.stores = self.state.stores
        self._caches = self.state.caches
        self._queues = self.partition_group.queues
        self._queue_list = self.partition_group.queue_list
        self._stream_schedules = self.stream_time_punctuation.schedules
        self._wall_schedules = self.wall_clock_punctuation.schedules
        self._queue = self.partition_group.queue
        self.has_records = self.partition_group.has_records
        self.next_offset = self.partition_group.next_offset
        if self.config.max_task_idle_ms > 0:
            self.process_one = self._process_one_when_ready   # type: ignore[method-assign]
        # the batch fast path: None until planned at the first process_available() (once init() made its schedules),
        # False where the task has none
        self._fused: Any = None
        # the fused chains alone (the same plan), for process_one(): None until first used, False where there are none
        self._chains: Any = None

    def _init_processors(self) -> None:
        """Every processor's ``init()``, in node order, each with its node current."""
        ctx = self.context
        for node in self.nodes.values():
            ctx.current = node
            init = getattr(node.processor, "init", None)
            if init is not None:
                # a processor that keeps ``context.forward`` gets its node's own forward (no child lookup)
                ctx.forward = (fused_forward(self, node)   # type: ignore[method-assign]
                               or _node_forward(ctx, node, bool(self._caches)))
                try:
                    init(ctx)
                except Exception as e:   # Kafka's ProcessorNode.init: its text, the cause chained
                    raise StreamsException(f"failed to initialize processor {node.name}") from e
                finally:
                    del ctx.forward  # later calls resolve through ``current`` again
        ctx.current = None

    # ------------------------------------------------------------------ input
    def add_records(self, topic: str, partition: int, records: Iterable[ConsumerRecord]) -> None:
        """Enqueue raw (bytes) records of one input partition, in offset order."""
        self._enqueue(topic, partition, ((r.offset, r.timestamp, r.key, r.value, r.headers) for r in records))

    def add_columns(self, topic: str, partition: int, offsets: Union[int, Sequence[int]], timestamps: Sequence[int],
                    keys: Sequence[Optional[bytes]], values: Sequence[Optional[bytes]],
                    headers: Sequence[Any]) -> None:
        """Enqueue decoded records of one input partition, in offset order, as columns; ``offsets`` is each record's
        offset, or the first one's when they are consecutive (a record batch)."""
        queue = self._queue(topic, partition)
        if (self.config.batch_fast_path and queue.extractor is None and len(keys)
                and enqueue_columns(queue, offsets, timestamps, keys, values, headers)):
            return
        if isinstance(offsets, int):
            offsets = itertools.count(offsets)  # type: ignore[assignment]
        self._enqueue(topic, partition, zip(offsets, timestamps, keys, values, headers))

    def _enqueue(self, topic: str, partition: int, rows: Iterable[tuple]) -> None:
        """Deserialize (offset, timestamp, key, value, headers) rows into the partition's queue."""
        queue = self._queue(topic, partition)
        kd, vd = queue.key_serde.deserialize, queue.value_serde.deserialize
        append = queue.records.append
        extractor = queue.extractor
        # the partition time the extractor is given: the highest timestamp extracted so far (Kafka extracts a
        # record's when the one before it is dequeued)
        seen = (max(queue.partition_time, max((r[0] for r in queue.records), default=UNKNOWN))
                if extractor is not None else queue.partition_time)
        offset = -1
        for offset, ts, raw_key, raw_value, headers in rows:
            try:
                key = kd(topic, raw_key) if raw_key is not None else None
                value = vd(topic, raw_value) if raw_value is not None else None
            except Exception as e:
                self.errors.deserialization_error(queue, offset, ts, raw_key, raw_value, headers, e)
                continue
            if extractor is not None or ts < 0:
                record = SourceRecord.of(topic, partition, offset, ts, key, value, headers, raw_key, raw_value)
                ts = extract_timestamp(extractor or FAIL_ON_INVALID_TIMESTAMP, record, seen)
                if ts < 0:   # Kafka's RecordQueue drops it
                    log_negative(record, ts, extractor)
                    self.metrics.record_dropped()
                    continue
                if ts > seen:
                    seen = ts
            append((ts, offset, key, value, headers, raw_key, raw_value))
        if offset >= 0:
            queue.next_offset = offset + 1

    def add_record(self, topic: str, partition: int, offset: int, timestamp: int, key: Optional[bytes],
                   value: Optional[bytes], headers: Any) -> None:
        """Enqueue one raw record (the in-process engine's path; same checks as :meth:`add_records`)."""
        queue = self._queues.get((topic, partition))
        if queue is None or queue.extractor is not None or timestamp < 0:
            self.add_records(topic, partition, (ConsumerRecord(topic, partition, offset, timestamp, key, value,
                                                               headers),))
            return
        try:
            k = queue.key_serde.deserialize(topic, key) if key is not None else None
            v = queue.value_serde.deserialize(topic, value) if value is not None else None
        except Exception:
            self.add_records(topic, partition, (ConsumerRecord(topic, partition, offset, timestamp, key, value,
                                                               headers),))
            return
        queue.next_offset = offset + 1
        queue.records.append((timestamp, offset, k, v, headers, key, value))

    # ------------------------------------------------------------------ processing
    def process_available(self) -> None:
        """Process every queued record (an engine's whole batch, committed after it): through the task's fused chains or
        its aggregation folded per key where it has them (:mod:`~streams_on_spark.runtime.fused`: the same results),
        else one by one."""
        fused = self._fused_plan()
        if fused:
            fused.run(self)
        while self.process_one():
            pass

    def process_record_batches(self, batches: Sequence[tuple[str, int, int, RecordBatch]]) -> None:
        """Queue and process an engine's batch given as record batches ((topic, partition, first offset, batch), in
        offset order per partition), as :meth:`add_columns` then :meth:`process_available` do; where they all come
        from one partition into a ``count()`` folded per key, each is counted from its Arrow columns
        (:meth:`BatchAggregation.count_columns`: the same results, no Python object per record)."""
        fused = self._fused_plan()
        columnar = (isinstance(fused, BatchAggregation) and fused.counting_columns
                    and len({(topic, partition) for topic, partition, _, _ in batches}) == 1)
        try:
            for topic, partition, offset, batch in batches:
                if columnar and fused.count_columns(self, self._queue(topic, partition), offset, batch):
                    continue
                self.add_columns(topic, partition, offset, *batch.columns())
                if columnar:   # one partition: its records so far processed now, as they would be before the next
                    self.process_available()
        finally:
            if columnar:   # the cache as the counts left it (kept between record batches: count_columns)
                fused.settle()
        self.process_available()

    def _fused_plan(self) -> Any:
        """The task's batch path (planned once): its fused chains, else its aggregation folded per key, else False."""
        fused = self._fused
        if fused is None:
            fused = self._fused = self._fused_chains() or (BatchAggregation.plan(self)
                                                           if self.config.batch_fast_path else None) or False
        return fused

    def _fused_chains(self) -> Any:
        """The task's fused chains (planned once), or False where it has none or the fast paths are off."""
        chains = self._chains
        if chains is None:
            chains = self._chains = (FusedChains.plan(self) if self.config.batch_fast_path else None) or False
        return chains

    def _process_one_when_ready(self) -> bool:
        """:meth:`process_one` once the partition group is ready to process (``max.task.idle.ms`` > 0); False while it
        waits."""
        if not self.has_records() or not self.partition_group.ready_to_process(self.wall_clock()):
            return False
        return StreamTask.process_one(self)

    def process_one(self) -> bool:
        """Process the head record with the smallest timestamp among this task's partitions."""
        queues = self._queue_list
        if len(queues) == 1:
            best = queues[0]
            if not best.records:
                return False
        else:
            best = None
            best_ts = 0
            for q in queues:
                if q.records:
                    ts = q.records[0][0]
                    if best is None or ts < best_ts:
                        best, best_ts = q, ts
            if best is None:
                return False
        queued = best.records.popleft()
        ts, offset, key, value, headers, raw_key, raw_value = queued
        if ts > best.partition_time:
            best.partition_time = ts
        if ts > self.stream_time:
            self.stream_time = ts
        chains = self._chains
        if chains is None:
            chains = self._fused_chains()
        if chains:   # a stateless task (no stores, no punctuation), or the driver's aggregation written through:
            # its fused chain (step) over this one record
            chains.chains[best.topic]((queued,), best, self.collector.buffer.append)
            self.metrics.processed += 1
            return True
        ctx = self.context
        ctx.queue, ctx.offset = best, offset
        node = best.source
        ctx.current = node
        ctx.record = record = Record(key, value, ts, headers)
        ctx.source_raw = (raw_key, raw_value)
        try:
            node.process(record)
        except Exception as e:
            self.errors.handle_processing_error(e, best.topic, best.partition, offset, record)
        finally:
            ctx.current = ctx.queue = ctx.record = None
            ctx.source_raw = (None, None)
        self.metrics.processed += 1
        if self._stream_schedules:
            self.punctuate_stream_time()
        if self._commit_every_record and self._caches:
            self._commit_after(best, offset, record)
        return True

    def _commit_after(self, queue: RecordQueue, offset: int, record: Record) -> None:
        """Kafka's driver's commit after each record: what the caches flush was written while that record was
        processed, so the flush runs in its context (Kafka restores the writer's) and a failure there is that
        record's. (An entry a stream-time punctuator wrote there gets the record's context too, not a punctuation's.)"""
        ctx = self.context
        ctx.queue, ctx.offset = queue, offset
        try:
            self.commit()
        except Exception as e:
            self.errors.handle_processing_error(e, queue.topic, queue.partition, offset, record)
        finally:
            ctx.current = ctx.queue = None

    def commit(self) -> None:
        """Flush the record caches: every cached store forwards its dirty entries downstream (Kafka's commit)."""
        self.state.flush_caches()

    # ------------------------------------------------------------------ punctuation
    def schedule(self, node: ProcessorNode, interval: int, kind: PunctuationType,
                 punctuator: Callable[[int], None]) -> Cancellable:
        if kind is PunctuationType.STREAM_TIME:
            return self.stream_time_punctuation.schedule(node, interval, punctuator, lambda: 0)
        return self.wall_clock_punctuation.schedule(node, interval, punctuator, lambda: self.wall_clock() + interval)

    def punctuate_stream_time(self) -> bool:
        if self.stream_time == UNKNOWN or not self._stream_schedules:
            return False
        fired = self.stream_time_punctuation.maybe_punctuate(self.stream_time, self._run_punctuator)
        if fired and self._commit_every_record and self._caches:
            self.commit()
        return fired

    def next_wall_clock_punctuation(self) -> Optional[int]:
        """When the next wall-clock punctuation is due (ms), or None if none is scheduled."""
        return self.wall_clock_punctuation.next_due()

    def punctuate_wall_clock(self) -> bool:
        if not self._wall_schedules:
            return False
        fired = self.wall_clock_punctuation.maybe_punctuate(self.wall_clock(), self._run_punctuator)
        if fired and self._commit_every_record and self._caches:
            self.commit()
        return fired

    def _run_punctuator(self, sched: PunctuationSchedule, now: int) -> None:
        """One punctuation in its node's context, its failure handled at that node."""
        ctx = self.context
        ctx.current, ctx.queue, ctx.record = sched.node, None, Record(None, None, now)
        try:
            sched.punctuator(now)
        except Exception as e:
            self.errors.handle_processing_error(e, None, None, None, None, now)
        finally:
            ctx.current = ctx.record = None

    # ------------------------------------------------------------------ state snapshots
    def snapshot(self) -> bytes:
        """The task's state as one binary value (a :class:`~streams_on_spark.runtime.snapshot.TaskSnapshot`):
        stores (but the engine's own), stream/partition times, schedules, placement counters.

        Engines that keep task state outside the process (Spark's state store) save it after each batch and
        restore it into a freshly built task; queued records are not part of it (drain first).
        """
        if self.has_records():
            raise IllegalStateError(f"task {self.id} still has queued records; drain before taking a snapshot")
        return TaskSnapshot(self.stream_time, self.partition_group.positions(), self.state.entries(),
                            self.stream_time_punctuation.times(), self.wall_clock_punctuation.times(),
                            self.collector.snapshot(), self.metrics.processed, self.metrics.dropped,
                            dict(self.processor_metadata), self.state.positions()).to_bytes()

    def _restore(self, data: bytes) -> None:
        """Load a :meth:`snapshot` (of any readable version) into this task before its processors are initialized;
        the saved punctuation times wait for the schedules their ``init()`` makes (see :meth:`schedule`)."""
        saved = TaskSnapshot.from_bytes(data, self.id)
        self.stream_time = saved.stream_time
        self.partition_group.restore_positions(saved.positions)
        self.state.restore(saved.stores, saved.store_positions)
        self.stream_time_punctuation.restore_times(saved.stream_time_punctuations)
        self.wall_clock_punctuation.restore_times(saved.wall_clock_punctuations)
        self.collector.restore(saved.round_robin)
        self.metrics.processed, self.metrics.dropped = saved.processed, saved.dropped
        self.processor_metadata.update(saved.processor_metadata)

    def __getstate__(self) -> dict[str, Any]:
        """A task image (:mod:`~streams_on_spark.runtime.spark.live_tasks`) leaves the generated fused chains out;
        they are planned again on first use."""
        state = self.__dict__.copy()
        state["_fused"] = state["_chains"] = None
        return state

    def close(self) -> None:
        for node in self.nodes.values():
            self.context.current = node
            try:
                node.processor.close()
            finally:
                self.context.current = None
        self.state.close()

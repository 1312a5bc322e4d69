"""``StreamTask``: one subtopology on one partition — the unit every engine hosts.

Holds the task's processor instances, stream time and a record collector that serializes and partitions what sinks
emit, over its parts as Kafka's task has them: its record queues (:mod:`~streams_on_spark.runtime.record_queue`),
state stores and caches (:mod:`~streams_on_spark.runtime.state_manager`), punctuation queues
(:mod:`~streams_on_spark.runtime.punctuation`) and its snapshot (:mod:`~streams_on_spark.runtime.snapshot`). The
same class runs inside the in-process driver and inside Spark's ``transformWithStateInPandas``; engines only feed
records in and take produced records out.
"""
from __future__ import annotations

import itertools
import logging
import traceback
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from streams_on_spark.config import TaskConfig
from streams_on_spark.error_handlers import (
    DESERIALIZATION_EXCEPTION_HANDLER,
    PROCESSING_EXCEPTION_HANDLER,
    PRODUCTION_EXCEPTION_HANDLER,
    ErrorHandlerContext,
    LogAndFailProcessingExceptionHandler,
    Response,
    Result,
    SerializationExceptionOrigin,
    response_of,
)
from streams_on_spark.partitioner import DefaultPartitioner, partition_for_key
from streams_on_spark.record_batch import PartitionedRecords, RecordBatch, encode_by_partition
from streams_on_spark.records import ConsumerRecord, ProducerRecord
from streams_on_spark.errors import ConfigException, IllegalStateError, StreamsException
from streams_on_spark.processor.api import (
    Cancellable,
    Processor,
    ProcessorContext,
    PunctuationType,
    Record,
    RecordMetadata,
    TaskId,
)
from streams_on_spark.runtime.fused import BatchAggregation, FusedChains, fused_forward, written_through
from streams_on_spark.runtime.nodes import (
    ProcessorNode,
    SinkProcessor,
    SourceProcessor,
    TopicNameExtractorSinkProcessor,
)
from streams_on_spark.runtime.punctuation import PunctuationQueue, PunctuationSchedule
from streams_on_spark.runtime.record_queue import (
    UNKNOWN,
    PartitionGroup,
    RecordQueue,
    enqueue_columns,
    resolve_serde,
)
from streams_on_spark.runtime.snapshot import TaskSnapshot
from streams_on_spark.runtime.state_manager import ProcessorStateManager
from streams_on_spark.state.caching import TaskCache
from streams_on_spark.state.stores import ReadOnlyStore
from streams_on_spark.timestamp_extractors import (
    FailOnInvalidTimestamp,
    SourceRecord,
    extract_timestamp,
    log_negative,
)
from streams_on_spark.topology.builder import (
    InternalTopologyBuilder,
    ProcessorNodeSpec,
    SinkNodeSpec,
    SourceNodeSpec,
    SubtopologySpec,
)

log = logging.getLogger(__name__)


class TaskMetrics:
    """Counters a task keeps (Kafka's ``process-total`` and ``dropped-records-total``)."""

    __slots__ = ("processed", "dropped")

    def __init__(self) -> None:
        self.processed = 0
        self.dropped = 0

    def record_dropped(self) -> None:
        self.dropped += 1


class RecordCollector:
    """Serializes sink output and picks its partition, so placement never depends on the engine.

    A partitioner's answer wins (KIP-837: None for the default, a partition, or a set of them: each gets a copy, an
    empty one drops the record and counts it in ``on_dropped``); else murmur2 of the serialized key; else (null key)
    round-robin per topic.
    """

    def __init__(self, partition_counts: Callable[[str], int],
                 on_serialization_error: Optional[Callable[..., Response]] = None,
                 on_dropped: Optional[Callable[[], None]] = None) -> None:
        self._partition_counts = partition_counts
        self._counts: dict[str, int] = {}  # topic partition counts are fixed once the engine started
        self._default = DefaultPartitioner()
        self.buffer: Union[list[ProducerRecord], PartitionedRecords] = []   # see partition_output
        # the task's production exception handler: (node, record, exception, origin) -> Response
        self._on_serialization_error = on_serialization_error
        self._on_dropped = on_dropped

    def send(self, topic: str, record: Record, key_serde: Any, value_serde: Any, partitioner: Any,
             node: str) -> None:
        partitions = None
        if partitioner is not None:   # asked before serializing, as Kafka does: a dropped record is never serialized
            partitions = self._partitions(topic, record, partitioner, node)
            if not partitions and partitions is not None:
                log.warning("Skipping record as partitioner returned empty partitions. topic=[%s]", topic)
                if self._on_dropped is not None:
                    self._on_dropped()
                return
        key, value = record.key, record.value
        origin = SerializationExceptionOrigin.KEY
        try:
            key_bytes = key_serde.serialize(topic, key) if key is not None else None
            origin = SerializationExceptionOrigin.VALUE
            value_bytes = value_serde.serialize(topic, value) if value is not None else None
        except Exception as e:
            # the handler gets Kafka's ProducerRecord, one per send: the partition a partitioner picked, else None
            handle = self._on_serialization_error
            if handle is not None and all(
                    handle(node, ProducerRecord(topic, p, record.timestamp, key, value, record.headers), e,
                           origin).result is Result.RESUME for p in (partitions or (None,))):
                return
            if isinstance(e, StreamsException):
                raise StreamsException(f"Error serializing the record sent by sink {node} to topic {topic}: "
                                       f"{e}") from e
            raise StreamsException(
                f"Sink {node} could not serialize its record for topic {topic} (key type "
                f"{type(record.key).__name__}, value type {type(record.value).__name__}) with key serde "
                f"{key_serde!r} and value serde {value_serde!r}: {e}. A serde may not match the data: set one in "
                "Produced/Grouped/Materialized or 'default.key.serde'/'default.value.serde'.") from e
        if partitions is None:
            self._place(topic, record.timestamp, key_bytes, value_bytes, record.headers)
        else:
            for partition in partitions:
                self.buffer.append(ProducerRecord(topic, partition, record.timestamp, key_bytes, value_bytes,
                                                  record.headers))

    def send_raw(self, record: ProducerRecord) -> None:
        """A record already in bytes (a dead letter queue record); without a partition, placed by its key."""
        if record.partition is not None:
            self.buffer.append(record)
        else:
            self._place(record.topic, record.timestamp, record.key, record.value, record.headers)

    def _count(self, topic: str) -> int:
        n = self._counts.get(topic)
        if n is None:
            n = self._counts[topic] = self._partition_counts(topic)
        return n

    def _partitions(self, topic: str, record: Record, partitioner: Any, node: str) -> Optional[list[int]]:
        """The partitions ``partitioner`` picks for ``record`` (in ascending order), or None for the default."""
        n = self._count(topic)
        answer = partitioner(topic, record.key, record.value, n)
        if answer is None:
            return None
        if isinstance(answer, int) and not isinstance(answer, bool):
            partitions = [answer]
        elif isinstance(answer, (set, frozenset, list, tuple)) and all(
                isinstance(p, int) and not isinstance(p, bool) for p in answer):
            partitions = sorted(set(answer))
        else:
            raise StreamsException(f"Partitioner of sink {node} returned {answer!r} for topic {topic}: expected None "
                                   "(the default partitioning), a partition or a set of partitions")
        for partition in partitions:
            if not 0 <= partition < n:
                raise StreamsException(f"Partitioner of sink {node} returned partition {partition} for topic "
                                       f"{topic}, which has {n} partitions")
        return partitions

    def _place(self, topic: str, timestamp: int, key_bytes: Optional[bytes], value_bytes: Optional[bytes],
               headers: Any) -> None:
        """Place the record by its key (round-robin without one) and buffer it."""
        n = self._count(topic)
        if key_bytes is None:
            partition = self._default.partition(topic, None, n)
        elif n == 1:
            partition = 0
        else:
            partition = partition_for_key(key_bytes, n)
        self.buffer.append(ProducerRecord(topic, partition, timestamp, key_bytes, value_bytes, headers))

    def partition_output(self) -> None:
        """Group the output by destination as it is produced (:class:`PartitionedRecords`): for an engine that writes
        each topic-partition's records as one batch and needs no order across them. Set before the first record."""
        if self.buffer:
            raise IllegalStateError("the record collector has output already")
        self.buffer = PartitionedRecords()

    def drain(self) -> list[ProducerRecord]:
        """The records sent since the last drain, in order (grouped by destination if :meth:`partition_output`)."""
        if self.buffer.__class__ is PartitionedRecords:
            return self.buffer.drain_records()
        out, self.buffer = self.buffer, []
        return out

    def drain_batches(self) -> list[RecordBatch]:
        """The records sent since the last drain as one record batch per destination topic-partition."""
        if self.buffer.__class__ is PartitionedRecords:
            return self.buffer.drain_batches()
        return encode_by_partition(self.drain())

    # task state for engines that persist it
    def snapshot(self) -> dict[str, int]:
        return self._default.counters()

    def restore(self, counters: Mapping[str, int]) -> None:
        self._default = DefaultPartitioner(dict(counters))


class _FailedProcessing(Exception):
    """Kafka's ``FailedProcessingException``: a processing failure already handled (FAIL) at a node, passed up
    through the other nodes untouched."""

    def __init__(self, failure: StreamsException) -> None:
        super().__init__(str(failure))
        self.failure = failure


class TaskContext(ProcessorContext):
    tracks_store_positions = True   # its stores' writes add the record in process to their positions

    def __init__(self, task: "StreamTask") -> None:
        self._task = task
        self.current: Optional[ProcessorNode] = None
        self.record: Optional[Record] = None             # what the current processor is processing
        self.queue: Optional[RecordQueue] = None   # where the record in process came from
        self.offset = -1
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


def check_node_serdes(topology: InternalTopologyBuilder, config: TaskConfig) -> None:
    """Kafka's ``SourceNode``/``SinkNode`` init when the driver starts (global sources first): a source or sink with
    neither its own serde nor the config's default fails with Kafka's text, the cause naming what to set."""
    specs = [s for s in topology.node_factories.values() if isinstance(s, (SourceNodeSpec, SinkNodeSpec))]
    for spec in sorted(specs, key=lambda s: not topology.is_global_source(s.name)):
        if isinstance(spec, SourceNodeSpec):
            kind, node, fix = "source", f"Source {spec.name} reading topic {', '.join(spec.topics)}", "Consumed"
        else:
            topic = spec.topic if spec.topic is not None else f"chosen by {spec.topic_extractor}"
            kind, node, fix = "sink", f"Sink {spec.name} writing to topic {topic}", "Produced/Grouped/Repartitioned"
        for which, own, default in (("key", spec.key_serde, config.default_key_serde),
                                    ("value", spec.value_serde, config.default_value_serde)):
            if resolve_serde(own, default) is None:
                raise StreamsException(f"Failed to initialize {which} serdes for {kind} node {spec.name}") from \
                    ConfigException(f"{node} has no {which} serde: set one with {fix}, or set "
                                    f"'default.{which}.serde' in the config")


class StreamTask:
    """Runs one subtopology for one partition: its processor graph over its record queues (a ``PartitionGroup``),
    state stores (a ``ProcessorStateManager``) and punctuation queues; the error handlers and the snapshot."""

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
        self.id = task_id
        self.spec = spec
        self.config = config
        self.wall_clock = wall_clock
        self.metrics = TaskMetrics()
        self.cache = TaskCache(config.cache_max_bytes)
        self._commit_every_record = config.commit_every_record
        self.collector = RecordCollector(partition_counts, self._serialization_error, self.metrics.record_dropped)
        if partition_output:
            self.collector.partition_output()
        self._source_raw: tuple[Optional[bytes], Optional[bytes]] = (None, None)  # of the record in process
        self.global_stores = dict(global_stores or {})
        self.global_read_only = True   # its processors read global stores; only the global task writes them
        self.stream_time = UNKNOWN
        self.processor_metadata: dict[str, int] = {}
        self.stream_time_punctuation = PunctuationQueue(PunctuationType.STREAM_TIME)
        self.wall_clock_punctuation = PunctuationQueue(PunctuationType.WALL_CLOCK_TIME)
        self.context = TaskContext(self)
        self.state = ProcessorStateManager(task_id, spec.store_names, topology, self.context, bytes_stores,
                                           config.dsl_headers_stores)
        self.nodes = self._build_nodes(spec, topology)
        self.partition_group = PartitionGroup(task_id, self._sources(spec), partition_counts, config)
        # the parts' own containers, bound once for the hot paths (no attribute hop per record)
        self.stores = self.state.stores
        self._caches = self.state.caches
        self._queues = self.partition_group.queues
        self._queue_list = self.partition_group.queue_list
        self._stream_schedules = self.stream_time_punctuation.schedules
        self._wall_schedules = self.wall_clock_punctuation.schedules
        self._queue = self.partition_group.queue
        self.has_records = self.partition_group.has_records
        self.next_offset = self.partition_group.next_offset
        if config.max_task_idle_ms > 0:
            self.process_one = self._process_one_when_ready   # type: ignore[method-assign]
        # the batch fast path: None until planned at the first process_available() (once init() made its schedules),
        # False where the task has none
        self._fused: Any = None
        # the fused chains alone (the same plan), for process_one(): None until first used, False where there are none
        self._chains: Any = None
        if snapshot is not None:
            self._restore(snapshot)
        if type(config.processing_handler) is not LogAndFailProcessingExceptionHandler:
            for node_spec in spec.nodes:  # Kafka's default fails the task: the task-level catch does that
                if isinstance(node_spec, ProcessorNodeSpec):
                    self._guard(self.nodes[node_spec.name])
        self._init_processors()
        self.stream_time_punctuation.check_restored(task_id)
        self.wall_clock_punctuation.check_restored(task_id)
        self.state.write_through(written_through(self))

    def _build_nodes(self, spec: SubtopologySpec, topology: InternalTopologyBuilder) -> dict[str, ProcessorNode]:
        """The subtopology's processor graph: sources, processors (from their suppliers) and sinks (over the
        collector), each linked to its predecessors."""
        config = self.config
        nodes: dict[str, ProcessorNode] = {}
        for node_spec in spec.nodes:
            if isinstance(node_spec, SourceNodeSpec):
                node = ProcessorNode(node_spec.name, SourceProcessor())
            elif isinstance(node_spec, SinkNodeSpec):
                key_serde = resolve_serde(node_spec.key_serde, config.default_key_serde)
                value_serde = resolve_serde(node_spec.value_serde, config.default_value_serde)
                if node_spec.topic is None:
                    topic = f"chosen by {node_spec.topic_extractor}"   # for _check_serdes' message
                    sink = TopicNameExtractorSinkProcessor(node_spec, self.collector, key_serde, value_serde)
                else:
                    topic = topology.decorate_topic(node_spec.topic)
                    sink = SinkProcessor(node_spec, topic, self.collector, key_serde, value_serde)
                node = ProcessorNode(node_spec.name, sink)
                self._check_serdes(node_spec.name, topic, key_serde, value_serde)
            else:
                assert isinstance(node_spec, ProcessorNodeSpec)
                processor = node_spec.supplier()
                if not isinstance(processor, Processor) and not hasattr(processor, "process"):
                    raise StreamsException(f"supplier of processor {node_spec.name} returned {processor!r}, "
                                           "not a Processor")
                node = ProcessorNode(node_spec.name, processor, node_spec.stores)
            for pred in getattr(node_spec, "predecessors", ()):
                nodes[pred].add_child(node)
            nodes[node_spec.name] = node
        return nodes

    def _sources(self, spec: SubtopologySpec) -> dict[str, tuple[ProcessorNode, SourceNodeSpec]]:
        """Topic -> the source node reading it and that node's spec."""
        sources: dict[str, tuple[ProcessorNode, SourceNodeSpec]] = {}
        for topic, source_name in spec.source_topics.items():
            source_spec = next(n for n in spec.nodes if n.name == source_name)
            assert isinstance(source_spec, SourceNodeSpec)
            sources[topic] = (self.nodes[source_name], source_spec)
        return sources

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

    @staticmethod
    def _check_serdes(node: str, topic: str, key_serde: Any, value_serde: Any) -> None:
        if key_serde is None or value_serde is None:
            which = "key" if key_serde is None else "value"
            raise StreamsException(f"Sink {node} writing to topic {topic} has no {which} serde: set one with "
                                   f"Produced/Grouped/Repartitioned, or set 'default.{which}.serde' in the config")

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
                self._deserialization_error(queue, offset, ts, raw_key, raw_value, headers, e)
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
        for topic, partition, offset, batch in batches:
            if columnar and fused.count_columns(self, self._queue(topic, partition), offset, batch):
                continue
            self.add_columns(topic, partition, offset, *batch.columns())
            if columnar:   # one partition: its records so far processed now, as they would be before the next ones
                self.process_available()
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
        if chains:   # a stateless task (no stores, no punctuation): its fused chain over this one record
            chains.chains[best.topic]((queued,), best, self.collector.buffer.append)
            self.metrics.processed += 1
            return True
        ctx = self.context
        ctx.queue, ctx.offset = best, offset
        node = best.source
        ctx.current = node
        ctx.record = record = Record(key, value, ts, headers)
        self._source_raw = (raw_key, raw_value)
        try:
            node.process(record)
        except Exception as e:
            self._handle_processing_error(e, best.topic, best.partition, offset, record)
        finally:
            ctx.current = ctx.queue = ctx.record = None
            self._source_raw = (None, None)
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
            self._handle_processing_error(e, queue.topic, queue.partition, offset, record)
        finally:
            ctx.current = ctx.queue = None

    def commit(self) -> None:
        """Flush the record caches: every cached store forwards its dirty entries downstream (Kafka's commit)."""
        self.state.flush_caches()

    # ------------------------------------------------------------------ errors
    def _error_context(self, node: str, record: Optional[Record | ProducerRecord],
                       timestamp: int) -> ErrorHandlerContext:
        """Kafka's ``ErrorHandlerContext`` for a failure at ``node`` while it handled ``record``."""
        queue, ctx = self.context.queue, self.context
        raw_key, raw_value = self._source_raw
        return ErrorHandlerContext(None if queue is None else queue.topic, -1 if queue is None else queue.partition,
                                   -1 if queue is None else ctx.offset, () if record is None else record.headers,
                                   node, self.id, timestamp if record is None else record.timestamp, raw_key,
                                   raw_value)

    def _respond(self, key: str, ask: Callable[[], Any], allow_retry: bool = False) -> Response:
        """Ask a handler; its dead letter queue records go out with the task's output."""
        try:
            response = response_of(ask(), key, allow_retry)
        except Exception as fatal:
            raise StreamsException(f"Fatal user code error in {key} callback of task {self.id}: "
                                   f"{type(fatal).__name__}: {fatal}") from fatal
        for dead_letter in response.dead_letter_queue_records:
            self.collector.send_raw(dead_letter)
        return response

    def _deserialization_error(self, queue: RecordQueue, offset: int, timestamp: int, raw_key: Optional[bytes],
                               raw_value: Optional[bytes], headers: Any, e: Exception) -> None:
        """Kafka's ``handleDeserializationFailure``: resume (drop and count the record) or fail the task."""
        topic, partition = queue.topic, queue.partition
        context = ErrorHandlerContext(topic, partition, offset, headers, queue.source.name, self.id, timestamp,
                                      raw_key, raw_value)
        raw = ConsumerRecord(topic, partition, offset, timestamp, raw_key, raw_value, headers)
        response = self._respond(DESERIALIZATION_EXCEPTION_HANDLER,
                                 lambda: self.config.deserialization_handler.handle_error(context, raw, e))
        if response.result is Result.FAIL:
            raise StreamsException(f"Deserialization exception handler is set to fail upon a deserialization "
                                   f"error. If you would rather have the streaming pipeline continue after a "
                                   f"deserialization error, please set the {DESERIALIZATION_EXCEPTION_HANDLER} "
                                   f"appropriately. Failed record: taskId={self.id}, topic={topic}, "
                                   f"partition={partition}, offset={offset}: {type(e).__name__}: {e}") from e
        log.warning("Skipping record due to deserialization error. topic=[%s] partition=[%d] offset=[%d]: %s",
                    topic, partition, offset, e)
        self.metrics.record_dropped()

    def _serialization_error(self, node: str, record: ProducerRecord, e: Exception,
                             origin: SerializationExceptionOrigin) -> Response:
        """A sink's record that its serdes could not serialize (Kafka's ``ProducerRecord``, its key and value not
        serialized): the production handler decides."""
        context = self._error_context(node, record, record.timestamp)
        response = self._respond(PRODUCTION_EXCEPTION_HANDLER,
                                 lambda: self.config.production_handler.handle_serialization_error(
                                     context, record, e, origin))
        if response.result is Result.RESUME:
            log.warning("Skipping record due to serialization error at sink %s in task %s: %s", node, self.id, e)
            self.metrics.record_dropped()
        return response

    def _guard(self, node: ProcessorNode) -> None:
        """Hand what ``node``'s processor raises to the processing exception handler at that node, as Kafka's
        ``ProcessorNode`` does: a resumed record stops there and its siblings still get it."""
        process = node.process

        def guarded(record: Record) -> None:
            try:
                process(record)
            except (_FailedProcessing, IllegalStateError):
                raise
            except Exception as e:
                self._processing_error(node.name, record, e)
        node.process = guarded

    def _handle_processing_error(self, e: Exception, topic: Optional[str], partition: Optional[int],
                                 offset: Optional[int], record: Optional[Record], timestamp: int = -1) -> None:
        """An error that reached the task (a record's or a punctuation's): handled at the node that raised."""
        if isinstance(e, _FailedProcessing):
            raise e.failure
        node = self.context.current.name if self.context.current else "?"
        if isinstance(e, IllegalStateError):
            raise self._failure(e, node)
        try:
            self._processing_error(node, record, e, timestamp)
        except _FailedProcessing as failed:
            raise failed.failure from e

    def _processing_error(self, node: str, record: Optional[Record], e: Exception, timestamp: int = -1) -> None:
        """Kafka's processing exception handling (KIP-1033): resume (drop and count) or fail."""
        context = self._error_context(node, record, timestamp)
        response = self._respond(PROCESSING_EXCEPTION_HANDLER,
                                 lambda: self.config.processing_handler.handle_error(context, record, e))
        if response.result is Result.FAIL:
            raise _FailedProcessing(self._failure(e, node))
        self.metrics.record_dropped()

    def _failure(self, e: Exception, node: str) -> StreamsException:
        """The error a failing task raises: where (task, processor, topic, partition, offset) and the user's error."""
        if isinstance(e, StreamsException):
            return e
        queue = self.context.queue
        topic, partition, offset = ((None, None, None) if queue is None
                                    else (queue.topic, queue.partition, self.context.offset))
        failure = StreamsException(f"Exception caught in process. taskId={self.id}, processor={node}, "
                                   f"topic={topic}, partition={partition}, offset={offset}, stacktrace="
                                   f"{''.join(traceback.format_exception(e)).strip()}")
        failure.__cause__ = e
        return failure

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
            self._handle_processing_error(e, None, None, None, None, now)
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

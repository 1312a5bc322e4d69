"""A task's input: one ``RecordQueue`` per input partition, held by its ``PartitionGroup`` (Kafka's classes).

A queue holds its partition's deserialized records in offset order with the partition's time and position; the
group finds or makes a partition's queue, keeps them in the order they were first fed (the order
:meth:`~streams_on_spark.runtime.task.StreamTask.process_one` breaks timestamp ties in) and decides when the task is
ready to process (``max.task.idle.ms``). Taking the next record stays inline in the task's hot path.
"""
from __future__ import annotations

import itertools
from collections import deque
from typing import Any, Callable, Optional, Sequence, Union

from streams_on_spark.config import TaskConfig
from streams_on_spark.record_batch import BYTES_OR_NONE
from streams_on_spark.errors import IllegalStateError, StreamsException
from streams_on_spark.processor.api import TaskId
from streams_on_spark.runtime.nodes import ProcessorNode
from streams_on_spark.serde import ByteArraySerde, StringSerde
from streams_on_spark.serde.changed import ChangedSerde
from streams_on_spark.timestamp_extractors import FailOnInvalidTimestamp
from streams_on_spark.topology.builder import SourceNodeSpec
from streams_on_spark.topology.java_order import hash_order, topic_partition_hash

UNKNOWN = -1


def resolve_serde(serde: Any, default: Any) -> Any:
    """A node's serde, else the config's default (a ``ChangedSerde`` without an inner serde wraps the default)."""
    if isinstance(serde, ChangedSerde) and serde.inner is None:
        return ChangedSerde(default)
    return serde if serde is not None else default


class RecordQueue:
    """Kafka's ``RecordQueue``: one input partition's queued records, its partition time and position."""

    __slots__ = ("topic", "partition", "topic_partition", "source", "records", "partition_time", "next_offset",
                 "key_serde", "value_serde", "extractor")

    def __init__(self, topic: str, partition: int, source: ProcessorNode, spec: SourceNodeSpec,
                 config: TaskConfig) -> None:
        self.topic, self.partition, self.source = topic, partition, source
        self.topic_partition = (topic, partition)   # a store's position component (SerdeStore._written)
        # (timestamp, offset, key, value, headers, raw key, raw value), offset order; the raw bytes are what a
        # dead letter queue record holds
        self.records: deque[tuple] = deque()
        self.partition_time = UNKNOWN
        self.next_offset = 0   # the offset after the last record enqueued: the task's position in the partition
        self.key_serde = resolve_serde(spec.key_serde, config.default_key_serde)
        self.value_serde = resolve_serde(spec.value_serde, config.default_value_serde)
        extractor = spec.timestamp_extractor or config.timestamp_extractor
        # None: Kafka's default, FailOnInvalidTimestamp, which keeps the record's timestamp (the fast paths' case)
        self.extractor = None if type(extractor) is FailOnInvalidTimestamp else extractor


class PartitionGroup:
    """Kafka's ``PartitionGroup``: a task's record queues by input partition, and its readiness to process."""

    def __init__(self, task_id: TaskId, sources: dict[str, tuple[ProcessorNode, SourceNodeSpec]],
                 partition_counts: Callable[[str], int], config: TaskConfig) -> None:
        self.task_id = task_id
        self.config = config
        self.sources = sources   # topic -> (its source node, its spec)
        self.queues: dict[tuple[str, int], RecordQueue] = {}
        self.queue_list: list[RecordQueue] = []   # in the order first fed: process_one's tie order
        # max.task.idle.ms > 0: when each empty input partition stops being waited for (Kafka's idle deadlines)
        self._idle_deadlines: dict[tuple[str, int], int] = {}
        # in the order Kafka's PartitionGroup visits them (a HashMap of TopicPartition)
        self._input_partitions = hash_order([(topic, task_id.partition) for topic in sources
                                             if task_id.partition < partition_counts(topic)], topic_partition_hash)

    def queue(self, topic: str, partition: int) -> RecordQueue:
        """``topic``'s ``partition``'s queue, made on first use (its source must have both serdes)."""
        queue = self.queues.get((topic, partition))
        if queue is None:
            entry = self.sources.get(topic)
            if entry is None:
                raise IllegalStateError(f"task {self.task_id} does not consume topic {topic}")
            queue = RecordQueue(topic, partition, entry[0], entry[1], self.config)
            if queue.key_serde is None or queue.value_serde is None:
                which = "key" if queue.key_serde is None else "value"
                raise StreamsException(f"Source {entry[1].name} reading topic {topic} has no {which} serde: set "
                                       f"one with Consumed, or set 'default.{which}.serde' in the config")
            self.queues[(topic, partition)] = queue
            self.queue_list.append(queue)
        return queue

    def has_records(self) -> bool:
        for q in self.queue_list:
            if q.records:
                return True
        return False

    def next_offset(self, topic: str, partition: int) -> int:
        """The offset after the last record queued from ``topic``'s ``partition`` (0 before any)."""
        queue = self.queues.get((topic, partition))
        return 0 if queue is None else queue.next_offset

    def ready_to_process(self, now: int) -> bool:
        """Kafka's ``PartitionGroup.readyToProcess`` with every partition caught up (the driver's: lag 0): an empty
        input partition is waited for until ``max.task.idle.ms`` of the wall clock passed since it was first found
        empty; then the others' records are processed without it. Partitions are visited in Kafka's order, which
        decides whose deadline is set before the first one still waited for ends the visit."""
        idle, deadlines, queues = self.config.max_task_idle_ms, self._idle_deadlines, self.queues
        for key in self._input_partitions:
            queue = queues.get(key)
            if queue is not None and queue.records:
                deadlines.pop(key, None)
            elif now < deadlines.setdefault(key, now + idle):
                return False
        return True

    def positions(self) -> dict[tuple[str, int], tuple[int, int]]:
        """(topic, partition) -> (partition time, next offset) of every queue, in the order first fed."""
        return {key: (q.partition_time, q.next_offset) for key, q in self.queues.items()}

    def restore_positions(self, positions: dict[tuple[str, int], tuple[int, int]]) -> None:
        """Set the partition times and positions :meth:`positions` gave, making the queues in its order."""
        for (topic, partition), (partition_time, next_offset) in positions.items():
            queue = self.queue(topic, partition)
            queue.partition_time, queue.next_offset = partition_time, next_offset


def enqueue_columns(queue: RecordQueue, offsets: Union[int, Sequence[int]], timestamps: Sequence[int],
                    keys: Sequence[Optional[bytes]], values: Sequence[Optional[bytes]], headers: Sequence[Any]) -> bool:
    """Queue columns whole, where both deserializers are Kafka's String or ByteArray ones (pure, they cannot fail on
    bytes: a column decoded at once gives what a call per record gives) and no timestamp is negative; False (nothing
    queued) where the task's per-record loop must decide, record by record."""
    decode_keys, decode_values = _column_decoder(queue.key_serde), _column_decoder(queue.value_serde)
    if (decode_keys is None or decode_values is None or not isinstance(timestamps, (list, tuple))
            or min(timestamps) < 0):
        return False
    try:
        decoded_keys, decoded_values = decode_keys(keys), decode_values(values)
    except Exception:   # not bytes-like after all: the loop raises the deserializer's own error at its record
        return False
    records = queue.records
    before = len(records)
    records.extend(zip(timestamps, itertools.count(offsets) if isinstance(offsets, int) else offsets, decoded_keys,
                       decoded_values, headers, keys, values))
    taken = len(records) - before
    if taken:
        last = offsets + taken - 1 if isinstance(offsets, int) else offsets[taken - 1]
        queue.next_offset = last + 1
    return True


def _column_decoder(serde: Any) -> Optional[Callable[[Sequence[Optional[bytes]]], Sequence[Any]]]:
    """A whole column's deserializer for Kafka's String and ByteArray serdes, None for any other serde."""
    kind = type(serde)
    if kind is StringSerde:
        encoding = serde.encoding
        if encoding == "utf-8":
            return _utf8_column
        return lambda column: [None if raw is None else str(raw, encoding, "replace") for raw in column]
    if kind is ByteArraySerde:
        return _bytes_column
    return None


def _utf8_column(column: Sequence[Optional[bytes]]) -> list[Optional[str]]:
    """String's UTF-8 deserializer of a column: strictly in one C pass (valid UTF-8 decodes the same strictly and with
    replacement), else value by value with replacement as :meth:`StringSerde.deserialize` decodes."""
    try:
        return list(map(bytes.decode, column))   # type: ignore[arg-type]
    except (TypeError, UnicodeDecodeError):   # a null, a bytearray or malformed UTF-8
        return [None if raw is None else str(raw, "utf-8", "replace") for raw in column]


def _bytes_column(column: Sequence[Optional[bytes]]) -> Sequence[Optional[bytes]]:
    """ByteArray's deserializer of a column of bytes (itself); anything else is left to the per-record loop."""
    if not BYTES_OR_NONE.issuperset(map(type, column)):
        raise TypeError("not bytes")
    return column




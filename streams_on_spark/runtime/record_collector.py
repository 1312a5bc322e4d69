"""A task's ``RecordCollector`` (Kafka's ``RecordCollectorImpl``): what its sinks send, serialized and placed.

Sinks hand it typed records; it serializes them with the sink's serdes, asks the sink's partitioner (else murmur2 of
the key bytes, else round-robin per topic), buffers them until the engine drains them, and gives a serialization
failure to the task's production exception handler. Kept apart from the task so that where a record goes never
depends on the engine that runs it.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Optional, Union

from streams_on_spark.error_handlers import Response, Result, SerializationExceptionOrigin
from streams_on_spark.errors import IllegalStateError, StreamsException
from streams_on_spark.partitioner import DefaultPartitioner, partition_for_key
from streams_on_spark.processor.api import Record
from streams_on_spark.record_batch import PartitionedRecords, RecordBatch, encode_by_partition
from streams_on_spark.records import ProducerRecord

log = logging.getLogger(__name__)


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
        # the task's production exception handler: (node, record, exception, origin) -> Response (set by the task
        # once its error handling exists: TaskErrors.serialization_error)
        self.on_serialization_error = on_serialization_error
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
            handle = self.on_serialization_error
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

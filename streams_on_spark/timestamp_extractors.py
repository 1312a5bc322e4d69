"""Kafka Streams' timestamp extractors: the event time a source gives each record it reads.

An extractor is one of Kafka's class names (``FailOnInvalidTimestamp``, the default, ``LogAndSkipOnInvalidTimestamp``,
``UsePartitionTimeOnInvalidTimestamp``, ``WallclockTimestampExtractor``; short or under
``org.apache.kafka.streams.processor.``), a :class:`TimestampExtractor` class or instance, or a function
``(record, partition_time) -> ms``; given to ``Consumed.with_timestamp_extractor`` or as
``default.timestamp.extractor``. ``partition_time`` is the highest timestamp extracted so far on the record's
partition (-1 before any). A negative extracted timestamp drops the record (a WARN and ``dropped-records``), as
Kafka's ``RecordQueue`` does.
"""
from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from typing import Any, Callable, Mapping, Optional

from streams_on_spark.records import ConsumerRecord
from streams_on_spark.errors import ConfigException, StreamsException

log = logging.getLogger(__name__)

DEFAULT_TIMESTAMP_EXTRACTOR = "default.timestamp.extractor"
_PACKAGE = "org.apache.kafka.streams.processor."


class SourceRecord(ConsumerRecord):
    """A deserialized source record as an extractor gets it (Kafka's ``ConsumerRecord``), knowing the sizes of its
    serialized key and value (-1 for a null one), which Kafka's messages show."""

    serialized_key_size = -1
    serialized_value_size = -1

    @staticmethod
    def of(topic: str, partition: int, offset: int, timestamp: int, key: Any, value: Any, headers: Any,
           raw_key: Optional[bytes], raw_value: Optional[bytes]) -> "SourceRecord":
        record = SourceRecord(topic, partition, offset, timestamp, key, value, headers)
        record.serialized_key_size = -1 if raw_key is None else len(raw_key)
        record.serialized_value_size = -1 if raw_value is None else len(raw_value)
        return record


def _java(value: Any) -> str:
    """``String.valueOf`` of a key or value."""
    return "null" if value is None else str(value)


def _java_bytes(value: Optional[bytes]) -> str:
    """``Arrays.toString(byte[])``: signed bytes."""
    return "null" if value is None else "[" + ", ".join(str(b - 256 if b > 127 else b) for b in value) + "]"


def record_text(record: ConsumerRecord) -> str:
    """A record as Kafka's ``ConsumerRecord.toString()`` shows it in its messages."""
    headers = record.headers or ()
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    shown = ", ".join(f"RecordHeader(key = {k}, value = {_java_bytes(v)})" for k, v in pairs)
    return (f"ConsumerRecord(topic = {record.topic}, partition = {record.partition}, leaderEpoch = null, "
            f"offset = {record.offset}, CreateTime = {record.timestamp}, deliveryCount = null, "
            f"serialized key size = {getattr(record, 'serialized_key_size', -1)}, "
            f"serialized value size = {getattr(record, 'serialized_value_size', -1)}, "
            f"headers = RecordHeaders(headers = [{shown}], isReadOnly = false), key = {_java(record.key)}, "
            f"value = {_java(record.value)})")


class TimestampExtractor(ABC):
    """Kafka's ``TimestampExtractor``: a record's timestamp (ms) from the record and its partition's time."""

    @abstractmethod
    def extract(self, record: ConsumerRecord, partition_time: int) -> int:
        """The record's timestamp; a negative one drops the record."""


class ExtractRecordMetadataTimestamp(TimestampExtractor):
    """The timestamp the record was written with; a negative one goes to :meth:`on_invalid_timestamp`."""

    def extract(self, record: ConsumerRecord, partition_time: int) -> int:
        timestamp = record.timestamp
        if timestamp < 0:
            return self.on_invalid_timestamp(record, timestamp, partition_time)
        return timestamp

    @abstractmethod
    def on_invalid_timestamp(self, record: ConsumerRecord, record_timestamp: int, partition_time: int) -> int:
        """The timestamp of a record written with a negative one."""


class FailOnInvalidTimestamp(ExtractRecordMetadataTimestamp):
    """Kafka's default: a negative record timestamp fails the task."""

    def on_invalid_timestamp(self, record: ConsumerRecord, record_timestamp: int, partition_time: int) -> int:
        text = record_text(record)
        log.error("Input record %s will be dropped because it has an invalid (negative) timestamp.", text)
        raise StreamsException(f"Input record {text} has invalid (negative) timestamp. Possibly because a pre-0.10 "
                               "producer client was used to write this record to Kafka without embedding a "
                               "timestamp, or because the input topic was created before upgrading the Kafka cluster "
                               "to 0.10+. Use a different TimestampExtractor to process this data.")


class LogAndSkipOnInvalidTimestamp(ExtractRecordMetadataTimestamp):
    """A negative record timestamp drops the record with a WARN."""

    def on_invalid_timestamp(self, record: ConsumerRecord, record_timestamp: int, partition_time: int) -> int:
        log.warning("Input record %s will be dropped because it has an invalid (negative) timestamp.",
                    record_text(record))
        return record_timestamp


class UsePartitionTimeOnInvalidTimestamp(ExtractRecordMetadataTimestamp):
    """A negative record timestamp is replaced by the partition time; before any, the task fails."""

    def on_invalid_timestamp(self, record: ConsumerRecord, record_timestamp: int, partition_time: int) -> int:
        if partition_time < 0:
            raise StreamsException(f"Could not infer new timestamp for input record {record_text(record)} because "
                                   "partition time is unknown.")
        return partition_time


class WallclockTimestampExtractor(TimestampExtractor):
    """The system's wall-clock time when the record is read (Kafka's ``System.currentTimeMillis()``)."""

    def extract(self, record: ConsumerRecord, partition_time: int) -> int:
        return time.time_ns() // 1_000_000


class _FunctionExtractor(TimestampExtractor):
    """A plain function ``(record, partition_time) -> ms``."""

    def __init__(self, function: Callable[[ConsumerRecord, int], int]) -> None:
        self.function = function

    def extract(self, record: ConsumerRecord, partition_time: int) -> int:
        return self.function(record, partition_time)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _FunctionExtractor) and other.function == self.function

    def __hash__(self) -> int:
        return hash(self.function)

    def __repr__(self) -> str:
        return f"TimestampExtractor({getattr(self.function, '__qualname__', self.function)!s})"


_KAFKA_CLASSES: dict[str, type] = {cls.__name__: cls for cls in (
    FailOnInvalidTimestamp, LogAndSkipOnInvalidTimestamp, UsePartitionTimeOnInvalidTimestamp,
    WallclockTimestampExtractor)}


def timestamp_extractor(value: Any, what: str = DEFAULT_TIMESTAMP_EXTRACTOR) -> Optional[TimestampExtractor]:
    """``value`` as an extractor (``None`` stays ``None``: the default). A bad one is a ``ConfigException`` for the
    config key ``default.timestamp.extractor``, else a ``ValueError`` naming the argument ``what``."""
    if value is None or isinstance(value, TimestampExtractor):
        return value

    def bad(shown: Any, detail: str) -> ValueError:
        if what == DEFAULT_TIMESTAMP_EXTRACTOR:
            return ConfigException.invalid(what, shown, detail)
        return ValueError(f"{what} must be a TimestampExtractor, a Kafka extractor's class name or a function "
                          f"(record, partition_time), got {shown}: {detail}")
    if isinstance(value, str):
        cls = _KAFKA_CLASSES.get(value[len(_PACKAGE):] if value.startswith(_PACKAGE) else value)
        if cls is None:
            raise bad(value, f"Class {value} could not be found (known: {', '.join(_KAFKA_CLASSES)}, also under "
                             f"{_PACKAGE})")
        return cls()
    if isinstance(value, type):
        if not callable(getattr(value, "extract", None)):
            raise bad(value.__name__, "a timestamp extractor class must define extract(record, partition_time)")
        return value()
    if callable(getattr(value, "extract", None)):
        return value   # a duck-typed extractor
    if callable(value):
        return _FunctionExtractor(value)
    raise bad(repr(value), "neither callable nor with an extract(record, partition_time) method")


def extract_timestamp(extractor: Any, record: ConsumerRecord, partition_time: int) -> int:
    """``extractor``'s timestamp for ``record``; what a user's extractor raises (other than a ``StreamsException``)
    fails the task as Kafka's ``RecordQueue`` does."""
    try:
        timestamp = extractor.extract(record, partition_time)
    except StreamsException:
        raise
    except Exception as e:
        raise StreamsException(f"Fatal user code error in TimestampExtractor callback for record "
                               f"{record_text(record)}.") from e
    if not isinstance(timestamp, int) or isinstance(timestamp, bool):
        raise StreamsException(f"TimestampExtractor {type(extractor).__name__} returned {timestamp!r} for record "
                               f"{record_text(record)}: a timestamp must be an int (ms)")
    return timestamp


def log_negative(record: ConsumerRecord, timestamp: int, extractor: Any) -> None:
    """Kafka's WARN for a record its extractor gave a negative timestamp (the record is dropped and counted)."""
    name = (getattr(extractor.function, "__qualname__", "function") if isinstance(extractor, _FunctionExtractor)
            else type(extractor).__qualname__)
    log.warning("Skipping record due to negative extracted timestamp. topic=[%s] partition=[%d] offset=[%d] "
                "extractedTimestamp=[%d] extractor=[%s]", record.topic, record.partition, record.offset, timestamp,
                name)

"""``TestInputTopic`` and ``TestOutputTopic``: typed handles on the driver's topics."""
from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Optional

from streams_on_spark.records import ProducerRecord
from streams_on_spark.errors import (
    IllegalStateError,
    StreamsException,
    bad_argument,
    require_instance,
    require_int,
    require_serde,
)
from streams_on_spark.keyvalue import KeyValue
from streams_on_spark.testing.record import TestRecord

if TYPE_CHECKING:  # pragma: no cover
    from streams_on_spark.testing.driver import TopologyTestDriver

_MISSING = object()


def _stamps(start: Optional[int], advance_ms: int) -> Iterator[Optional[int]]:
    """start, start+advance, ... — or None forever (the topic clock decides)."""
    require_int(start, "start_timestamp", minimum=0, optional=True)
    require_int(advance_ms, "advance_ms", minimum=0)
    return itertools.repeat(None) if start is None else itertools.count(start, advance_ms)


def _pair(item: Any) -> tuple[Any, Any]:
    """A ``KeyValue`` or a ``(key, value)`` pair."""
    if not isinstance(item, (tuple, list)) or len(item) != 2:
        raise bad_argument("each item of pipe_key_value_list", "a KeyValue or a (key, value) pair", item)
    return item[0], item[1]


class TestInputTopic:
    """Pipes records into one topic; records without a timestamp take the topic's clock."""

    __test__ = False

    def __init__(self, driver: "TopologyTestDriver", name: str, key_serde: Any, value_serde: Any,
                 start_timestamp: Optional[int], auto_advance: Optional[int]) -> None:
        require_int(start_timestamp, "start_timestamp", minimum=0, optional=True)
        require_int(auto_advance, "auto_advance", minimum=0, optional=True)
        self._driver = driver
        self.name = name
        self._key_serde = require_serde(key_serde, "key_serde", optional=False)
        self._value_serde = require_serde(value_serde, "value_serde", optional=False)
        self._time = int(time.time() * 1000) if start_timestamp is None else int(start_timestamp)
        self._advance = auto_advance or 0

    def advance_time(self, ms: int) -> None:
        """Move this topic's clock (not stream time, not the wall clock)."""
        self._time += require_int(ms, "advance", minimum=0)

    def _next_time(self, explicit: Optional[int]) -> int:
        if explicit is not None:
            return explicit
        ts = self._time
        self._time += self._advance
        return ts

    def pipe_input(self, key_or_record: Any = _MISSING, value: Any = _MISSING, timestamp: Optional[int] = None,
                   *, headers: Any = None, partition: Optional[int] = None) -> None:
        """``pipe_input(record)``, ``pipe_input(value)``, ``pipe_input(key, value[, timestamp])``.

        Processed to quiescence (repartitions included) before returning.
        """
        if key_or_record is _MISSING and value is _MISSING:
            raise ValueError(f"pipe_input() needs a TestRecord, a value, or a key and a value (topic {self.name})")
        if isinstance(key_or_record, TestRecord) and value is _MISSING:
            if (timestamp, headers, partition) != (None, None, None):
                raise ValueError("pipe_input(record) takes timestamp, headers and partition from the TestRecord, "
                                 "not from arguments")
            record = key_or_record
        elif value is _MISSING:
            record = TestRecord(None, key_or_record, timestamp, headers, partition)
        else:
            key = None if key_or_record is _MISSING else key_or_record
            record = TestRecord(key, value, timestamp, headers, partition)
        self._pipe(record)

    def _pipe(self, record: TestRecord) -> None:
        self._driver._pipe([self._route(record)])

    def _route(self, record: TestRecord) -> ProducerRecord:
        ts = self._next_time(record.timestamp)
        try:
            key = self._key_serde.serialize(self.name, record.key) if record.key is not None else None
            value = self._value_serde.serialize(self.name, record.value) if record.value is not None else None
        except StreamsException:
            raise
        except Exception as e:
            raise StreamsException(f"could not serialize the record piped to topic {self.name}: {e}") from e
        return self._driver._route(self.name, key, value, ts, record.headers, record.partition)

    def pipe_record_list(self, records: Iterable[TestRecord]) -> None:
        """Pipe every record; the in-process engine drains after each, the Spark engine runs one batch."""
        routed = [self._route(require_instance(record, "each item of pipe_record_list", TestRecord))
                  for record in require_instance(records, "records", Iterable)]
        self._driver._pipe(routed)

    def pipe_key_value_list(self, pairs: Iterable[Any], start_timestamp: Optional[int] = None,
                            advance_ms: int = 0) -> None:
        """Pipe ``KeyValue``s (or pairs); with ``start_timestamp`` they get start, start+advance, ..."""
        pairs = require_instance(pairs, "pairs", Iterable)
        self.pipe_record_list(TestRecord(*_pair(kv), ts) for kv, ts in zip(pairs, _stamps(start_timestamp, advance_ms)))

    def pipe_value_list(self, values: Iterable[Any], start_timestamp: Optional[int] = None,
                        advance_ms: int = 0) -> None:
        """Pipe values with null keys; with ``start_timestamp`` they get start, start+advance, ..."""
        values = require_instance(values, "values", Iterable)
        self.pipe_record_list(TestRecord(None, v, ts) for v, ts in zip(values, _stamps(start_timestamp, advance_ms)))

    def __repr__(self) -> str:
        return f"TestInputTopic[topic={self.name}, key_serde={self._key_serde!r}, value_serde={self._value_serde!r}]"


class TestOutputTopic:
    """Reads (and consumes) what the topology wrote to one topic, in the order it was written."""

    __test__ = False

    def __init__(self, driver: "TopologyTestDriver", name: str, key_serde: Any, value_serde: Any) -> None:
        self._driver = driver
        self.name = name
        self._key_serde = require_serde(key_serde, "key_serde", optional=False)
        self._value_serde = require_serde(value_serde, "value_serde", optional=False)

    def _decode(self, r: ProducerRecord) -> TestRecord:
        try:
            key = self._key_serde.deserialize(self.name, r.key) if r.key is not None else None
            value = self._value_serde.deserialize(self.name, r.value) if r.value is not None else None
        except Exception as e:
            raise StreamsException(f"could not deserialize the record at topic {self.name}, partition "
                                   f"{r.partition} with {self._key_serde!r}/{self._value_serde!r}: {e}") from e
        return TestRecord(key, value, r.timestamp, r.headers, r.partition)

    def read_record(self) -> TestRecord:
        """The next record; ``LookupError`` (Java's NoSuchElementException) when there is none."""
        queue = self._driver._output(self.name)
        if queue is None:
            raise LookupError(f"Uninitialized topic: {self.name}")
        if not queue:
            raise LookupError(f"Empty topic: {self.name}")
        return self._decode(queue.popleft())

    def read_value(self) -> Any:
        return self.read_record().value

    def read_key_value(self) -> KeyValue:
        r = self.read_record()
        return KeyValue(r.key, r.value)

    def read_records_to_list(self) -> list[TestRecord]:
        queue = self._driver._output(self.name)
        out = [] if queue is None else [self._decode(r) for r in queue]
        if queue is not None:
            queue.clear()
        return out

    def read_values_to_list(self) -> list[Any]:
        return [r.value for r in self.read_records_to_list()]

    def read_key_values_to_list(self) -> list[KeyValue]:
        return [KeyValue(r.key, r.value) for r in self.read_records_to_list()]

    def read_key_values_to_map(self) -> dict[Any, Any]:
        """Last value per key (tombstones kept as None); a null key is an ``IllegalStateError``."""
        out: dict[Any, Any] = {}
        for r in self.read_records_to_list():
            if r.key is None:
                raise IllegalStateError(f"Null keys not allowed with read_key_values_to_map (topic {self.name})")
            out[r.key] = r.value
        return out

    def get_queue_size(self) -> int:
        queue = self._driver._output(self.name)
        return 0 if queue is None else len(queue)

    def is_empty(self) -> bool:
        return self.get_queue_size() == 0

    def __repr__(self) -> str:
        return f"TestOutputTopic[topic={self.name}, size={self.get_queue_size()}]"

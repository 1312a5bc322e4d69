"""Headers-aware key-value stores (KIP-1271): each value kept with its timestamp and record headers.

The bytes are Kafka's ``ValueTimestampHeadersSerializer`` layout: a varint with the size of the serialized headers,
the headers (a varint count, then per header a varint key length, the UTF-8 key, and a varint value length with the
value, or the varint -1 for a null value; nothing at all for no headers), the 8-byte big-endian timestamp, the value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generic, Optional, TypeVar

from streams_on_spark.errors import StreamsException
from streams_on_spark.headers import Headers, to_headers
from streams_on_spark.serde.changed import read_zigzag_varint, zigzag_varint
from streams_on_spark.state.caching import FlushListener
from streams_on_spark.state.stores import (
    _TS,
    KeyValueStore,
    KeyValueStoreBuilder,
    KeyValueStoreFacade,
    TimestampedValues,
    ValueAndTimestamp,
)

V = TypeVar("V")
_NULL_HEADER_VALUE = zigzag_varint(-1)


@dataclass(frozen=True, slots=True)
class ValueTimestampHeaders(Generic[V]):
    """A value with the timestamp and the headers of the record that last updated it (Kafka's
    ``ValueTimestampHeaders``); headers are normalized as a record's are, None meaning none."""

    value: V
    timestamp: int
    headers: Headers = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", to_headers(self.headers))

    @staticmethod
    def make(value: Any, timestamp: int, headers: Any = ()) -> Optional["ValueTimestampHeaders"]:
        """None for a None value, as Kafka's ``make``."""
        return None if value is None else ValueTimestampHeaders(value, timestamp, headers)

    @staticmethod
    def make_allow_nullable(value: Any, timestamp: int, headers: Any = ()) -> "ValueTimestampHeaders":
        return ValueTimestampHeaders(value, timestamp, headers)

    @staticmethod
    def get_value_or_null(vth: Optional["ValueTimestampHeaders"]) -> Any:
        return None if vth is None else vth.value


def serialize_headers(headers: Headers) -> bytes:
    """Kafka's ``HeadersSerializer``: empty for no headers."""
    if not headers:
        return b""
    out = [zigzag_varint(len(headers))]
    for key, value in headers:
        raw_key = key.encode("utf-8")
        out.append(zigzag_varint(len(raw_key)))
        out.append(raw_key)
        if value is None:
            out.append(_NULL_HEADER_VALUE)
        else:
            out.append(zigzag_varint(len(value)))
            out.append(value)
    return b"".join(out)


def deserialize_headers(data: bytes) -> Headers:
    """Kafka's ``HeadersDeserializer``."""
    if not data:
        return ()
    count, pos = read_zigzag_varint(data)
    out = []
    for _ in range(count):
        size, pos = read_zigzag_varint(data, pos)
        key = data[pos:pos + size].decode("utf-8")
        size, pos = read_zigzag_varint(data, pos + size)
        if size == -1:
            out.append((key, None))
        else:
            out.append((key, data[pos:pos + size]))
            pos += size
    return tuple(out)


class ValueTimestampHeadersSerde:
    """Kafka's ``ValueTimestampHeadersSerializer``/``Deserializer`` around the value serde (layout: module doc)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def serialize(self, topic: Optional[str], vth: Optional[ValueTimestampHeaders]) -> Optional[bytes]:
        if vth is None or vth.value is None:
            return None
        raw = self.inner.serialize(topic, vth.value)
        if raw is None:
            return None
        headers = serialize_headers(vth.headers)
        return zigzag_varint(len(headers)) + headers + _TS.pack(vth.timestamp) + raw

    def deserialize(self, topic: Optional[str], data: Optional[bytes]) -> Optional[ValueTimestampHeaders]:
        if data is None:
            return None
        size, pos = read_zigzag_varint(data)
        headers = deserialize_headers(data[pos:pos + size])
        pos += size
        return ValueTimestampHeaders.make(self.inner.deserialize(topic, data[pos + 8:]), _TS.unpack_from(data, pos)[0],
                                          headers)


class TimestampedKeyValueStoreWithHeaders(TimestampedValues, KeyValueStore[Any, ValueTimestampHeaders]):
    """Values are :class:`ValueTimestampHeaders` (Kafka's ``TimestampedKeyValueStoreWithHeaders``), from
    ``Stores.timestamped_key_value_store_with_headers_builder``."""

    value_type = ValueTimestampHeaders
    stored_serde = ValueTimestampHeadersSerde

    def _flushed_key(self, cache_key: Any, key: Any) -> Any:
        return self._kde(cache_key) if key is None else key

    def _flush_adapter(self, listener: Callable[..., None]) -> FlushListener:
        """Only the DSL's processors forward cache flushes, and they do not build headers-aware stores here."""
        raise StreamsException(f"store {self.name} (a headers-aware store) cannot forward cache flushes: "
                               "dsl.store.format=HEADERS is not supported")


class TimestampedKeyValueStoreWithHeadersBuilder(KeyValueStoreBuilder):
    """Builds :class:`TimestampedKeyValueStoreWithHeaders` over any key-value bytes store supplier."""

    store_type = TimestampedKeyValueStoreWithHeaders


class TimestampedKeyValueStoreFacadeForHeaders(KeyValueStoreFacade):
    """A headers-aware store seen as a timestamped one (``ValueAndTimestamp`` values, headers dropped; a write keeps
    no headers), as Kafka's driver shows it through ``getTimestampedKeyValueStore``."""

    def _shown(self, stored: Any) -> Any:
        return None if stored is None else ValueAndTimestamp(stored.value, stored.timestamp)

    def _stored(self, value: Any) -> Any:
        return None if value is None else ValueTimestampHeaders.make(value.value, value.timestamp)


__all__ = ["ValueTimestampHeaders", "ValueTimestampHeadersSerde", "TimestampedKeyValueStoreWithHeaders",
           "TimestampedKeyValueStoreWithHeadersBuilder", "TimestampedKeyValueStoreFacadeForHeaders",
           "serialize_headers", "deserialize_headers"]

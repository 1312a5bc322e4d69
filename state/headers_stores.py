"""Headers-aware stores (KIP-1271): key-value and window stores keep each value with its timestamp and record
headers, session stores each aggregation with its headers.

The bytes are Kafka's: ``ValueTimestampHeadersSerializer`` (key-value and window stores) writes a varint with the
size of the serialized headers, the headers (a varint count, then per header a varint key length, the UTF-8 key, and
a varint value length with the value, or the varint -1 for a null value; nothing at all for no headers), the 8-byte
big-endian timestamp, the value; ``AggregationWithHeadersSerializer`` (session stores) the same without the timestamp.
"""
from __future__ import annotations

import copy

from dataclasses import dataclass
from typing import Any, Callable, Generic, Optional, TypeVar

from streams_on_spark.errors import StreamsException
from streams_on_spark.headers import Headers, to_headers
from streams_on_spark.keyvalue import KeyValue
from streams_on_spark.serde.changed import read_zigzag_varint, zigzag_varint
from streams_on_spark.state.caching import FlushListener
from streams_on_spark.state.session_stores import (
    PersistentSessionBytesStoreSupplier,
    SessionStore,
    SessionStoreBuilder,
)
from streams_on_spark.state.stores import (
    _TS,
    HeadersBytesStoreSupplier,
    KeyValueIterator,
    KeyValueStore,
    KeyValueStoreBuilder,
    KeyValueStoreFacade,
    TimestampedKeyValueStore,
    TimestampedKeyValueStoreBuilder,
    TimestampedValues,
    ValueAndTimestamp,
)
from streams_on_spark.state.window_stores import (
    PersistentWindowBytesStoreSupplier,
    TimestampedWindowStore,
    TimestampedWindowStoreBuilder,
    WindowStore,
    WindowStoreBuilder,
    WindowStoreFacade,
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
        return headers_prefix(vth.headers) + _TS.pack(vth.timestamp) + raw

    def deserialize(self, topic: Optional[str], data: Optional[bytes]) -> Optional[ValueTimestampHeaders]:
        if data is None:
            return None
        headers, pos = read_headers_prefix(data)
        return ValueTimestampHeaders.make(self.inner.deserialize(topic, data[pos + 8:]), _TS.unpack_from(data, pos)[0],
                                          headers)


def headers_prefix(headers: Headers) -> bytes:
    """What Kafka's headers-aware serializers write before the timestamp or aggregation: size varint, headers."""
    raw = serialize_headers(headers)
    return zigzag_varint(len(raw)) + raw


def read_headers_prefix(data: bytes) -> tuple[Headers, int]:
    """The headers :func:`headers_prefix` wrote at the start of ``data`` and the position after them."""
    size, pos = read_zigzag_varint(data)
    return deserialize_headers(data[pos:pos + size]), pos + size


@dataclass(frozen=True, slots=True)
class AggregationWithHeaders(Generic[V]):
    """A session's aggregation with the headers of the record that last updated it (Kafka's
    ``AggregationWithHeaders``); headers are normalized as a record's are."""

    aggregation: V
    headers: Headers = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", to_headers(self.headers))

    @staticmethod
    def make(aggregation: Any, headers: Any = ()) -> Optional["AggregationWithHeaders"]:
        """None for a None aggregation, as Kafka's ``make``."""
        return None if aggregation is None else AggregationWithHeaders(aggregation, headers)

    @staticmethod
    def make_allow_nullable(aggregation: Any, headers: Any = ()) -> "AggregationWithHeaders":
        return AggregationWithHeaders(aggregation, headers)

    @staticmethod
    def get_aggregation_or_null(awh: Optional["AggregationWithHeaders"]) -> Any:
        return None if awh is None else awh.aggregation


class AggregationWithHeadersSerde:
    """Kafka's ``AggregationWithHeadersSerializer``/``Deserializer`` around the aggregation serde: size varint,
    headers, aggregation bytes."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def serialize(self, topic: Optional[str], awh: Optional[AggregationWithHeaders]) -> Optional[bytes]:
        if awh is None or awh.aggregation is None:
            return None
        raw = self.inner.serialize(topic, awh.aggregation)
        return None if raw is None else headers_prefix(awh.headers) + raw

    def deserialize(self, topic: Optional[str], data: Optional[bytes]) -> Optional[AggregationWithHeaders]:
        if data is None:
            return None
        headers, pos = read_headers_prefix(data)
        return AggregationWithHeaders.make_allow_nullable(self.inner.deserialize(topic, data[pos:]), headers)


class PersistentWindowHeadersBytesStoreSupplier(PersistentWindowBytesStoreSupplier, HeadersBytesStoreSupplier):
    """``Stores.persistent_timestamped_window_store_with_headers`` (KIP-1271): the RocksDB store of a headers-aware
    window store, whose values carry the headers."""

    def __repr__(self) -> str:
        return super().__repr__().replace("PersistentWindowBytesStoreSupplier", type(self).__name__, 1)


class PersistentSessionHeadersBytesStoreSupplier(PersistentSessionBytesStoreSupplier, HeadersBytesStoreSupplier):
    """``Stores.persistent_session_store_with_headers`` (KIP-1271): the RocksDB store of a headers-aware session
    store, whose aggregations carry the headers."""

    def __repr__(self) -> str:
        return super().__repr__().replace("PersistentSessionBytesStoreSupplier", type(self).__name__, 1)


class HeadersAwareValues(TimestampedValues):
    """Values that carry the record's headers (and a timestamp, but for sessions): what headers-aware stores hold."""

    #: whether the store answers IQv2 queries: Kafka 4.3.1's RocksDB headers-aware stores (over its headers-aware
    #: suppliers, and the DSL's under ``dsl.store.format=HEADERS``) answer none (``UNKNOWN_QUERY_TYPE``); over another
    #: supplier it answers as a timestamped store (a session store: as a plain one)
    answers_queries: bool = True

    def _flushed_key(self, cache_key: Any, key: Any) -> Any:
        raise AssertionError("not called: a headers-aware store of the Processor API forwards no cache flushes")

    def _flush_adapter(self, listener: Callable[..., None]) -> FlushListener:
        """Only the DSL's processors forward cache flushes, through the DSL's own headers-aware stores."""
        raise StreamsException(f"store {self.name} (a headers-aware store of the Processor API) cannot forward "
                               "cache flushes")


class TimestampedKeyValueStoreWithHeaders(HeadersAwareValues, KeyValueStore[Any, ValueTimestampHeaders]):
    """Values are :class:`ValueTimestampHeaders` (Kafka's ``TimestampedKeyValueStoreWithHeaders``), from
    ``Stores.timestamped_key_value_store_with_headers_builder``."""

    value_type = ValueTimestampHeaders
    stored_serde = ValueTimestampHeadersSerde


class HeadersStoreBuilder:
    """A builder of the Processor API's headers-aware stores: a store over a headers-aware supplier (Kafka's RocksDB
    one) answers no IQv2 query (:attr:`HeadersAwareValues.answers_queries`)."""

    supplier: Any

    def build(self, bytes_store: Any = None) -> Any:
        store = super().build(bytes_store)   # type: ignore[misc]
        store.answers_queries = not isinstance(self.supplier, HeadersBytesStoreSupplier)
        return store


class TimestampedKeyValueStoreWithHeadersBuilder(HeadersStoreBuilder, KeyValueStoreBuilder):
    """Builds :class:`TimestampedKeyValueStoreWithHeaders` over any key-value bytes store supplier."""

    store_type = TimestampedKeyValueStoreWithHeaders


class DslHeadersValues:
    """What a DSL operator's key-value or window store is under ``dsl.store.format=HEADERS`` (Kafka 4.3): Kafka's
    headers-aware store, which the DSL's processors read and write as a timestamped one (``ValueAndTimestamp`` in,
    values with ``value`` and ``timestamp`` out); what they write keeps empty headers, as Kafka's aggregations and
    tables do, and the record cache forwards its flushes. Kafka builds it over its RocksDB headers-aware store, which
    answers no IQv2 query."""

    _flush_adapter = TimestampedValues._flush_adapter
    answers_queries = False

    @staticmethod
    def _value_start(data: bytes) -> int:
        """After the headers (a size varint and that many bytes) and the 8-byte timestamp."""
        size, pos = read_zigzag_varint(data)
        return pos + size + 8

    @staticmethod
    def _kept(value: Any) -> Any:
        """A processor's ``ValueAndTimestamp`` as the store keeps it: with empty headers."""
        return ValueTimestampHeaders(value.value, value.timestamp) if type(value) is ValueAndTimestamp else value


class DslTimestampedKeyValueStoreWithHeaders(DslHeadersValues, TimestampedKeyValueStoreWithHeaders):
    """A DSL operator's key-value store under ``dsl.store.format=HEADERS`` (:class:`DslHeadersValues`)."""

    _flushed_key = TimestampedKeyValueStore._flushed_key

    def get_with_timestamp(self, key: Any) -> Optional[tuple[Any, int]]:
        """The aggregations' read: (value, timestamp), as ``TimestampedKeyValueStore.get_with_timestamp``."""
        data = self.inner.get(self._kser(key))
        if data is None:
            return None
        at = self._value_start(data)
        return self.plain_value_serde.deserialize(self._topic, data[at:]), _TS.unpack_from(data, at - 8)[0]

    def put_with_timestamp(self, key: Any, value: Any, timestamp: int) -> None:
        self.put(key, ValueTimestampHeaders.make(value, timestamp))

    def put(self, key: Any, value: Any) -> None:
        """``value``: a ``ValueAndTimestamp`` (kept with empty headers) or a ``ValueTimestampHeaders``."""
        value = self._kept(value)
        if not self._cached or value is None:
            super().put(key, value)
            return
        self.inner.put(self._kser(key), self._vser(value), (key, value.value, value.timestamp))
        self._written()


class TimestampedKeyValueStoreFacadeForHeaders(KeyValueStoreFacade):
    """A headers-aware store seen as a timestamped one (``ValueAndTimestamp`` values, headers dropped; a write keeps
    no headers), as Kafka's driver shows it through ``getTimestampedKeyValueStore``."""

    def _shown(self, stored: Any) -> Any:
        return None if stored is None else ValueAndTimestamp(stored.value, stored.timestamp)

    def _stored(self, value: Any) -> Any:
        return None if value is None else ValueTimestampHeaders.make(value.value, value.timestamp)


class TimestampedWindowStoreWithHeaders(HeadersAwareValues, WindowStore[Any, ValueTimestampHeaders]):
    """Window values are :class:`ValueTimestampHeaders` (Kafka's ``TimestampedWindowStoreWithHeaders``), from
    ``Stores.timestamped_window_store_with_headers_builder``."""

    value_type = ValueTimestampHeaders
    stored_serde = ValueTimestampHeadersSerde


class TimestampedWindowStoreWithHeadersBuilder(HeadersStoreBuilder, WindowStoreBuilder):
    """Builds :class:`TimestampedWindowStoreWithHeaders` over any window bytes store supplier (Kafka's
    ``TimestampedWindowStoreWithHeadersBuilder``)."""

    store_type = TimestampedWindowStoreWithHeaders
    own_suppliers = WindowStoreBuilder.own_suppliers + (PersistentWindowHeadersBytesStoreSupplier,)


class DslTimestampedWindowStoreWithHeaders(DslHeadersValues, TimestampedWindowStoreWithHeaders):
    """A windowed aggregation's store under ``dsl.store.format=HEADERS`` (:class:`DslHeadersValues`)."""

    _flushed_key = TimestampedWindowStore._flushed_key

    def put(self, key: Any, value: Any, window_start_timestamp: int) -> None:
        """``value``: a ``ValueAndTimestamp`` (kept with empty headers) or a ``ValueTimestampHeaders``."""
        TimestampedWindowStore.put(self, key, self._kept(value), window_start_timestamp)


class DslJoinWindowStoreWithHeaders(TimestampedWindowStoreWithHeaders):
    """A stream-stream join side's window store under ``dsl.store.format=HEADERS`` (Kafka 4.3): Kafka's headers-aware
    window store (the default format keeps a plain window store), keeping each record's value with its timestamp and
    its own headers; the join writes and reads it through :meth:`join_window`. Kafka's (RocksDB) answers no IQv2
    query."""

    answers_queries = False

    def join_window(self) -> "DslJoinWindow":
        return DslJoinWindow(self)


class DslJoinWindow:
    """A stream-stream join's view of a :class:`DslJoinWindowStoreWithHeaders`: each record kept with its timestamp
    and headers, the other side's matches read as values."""

    def __init__(self, store: DslJoinWindowStoreWithHeaders) -> None:
        self.store = store
        self.name = store.name

    def put_record(self, record: Any) -> None:
        """Keep ``record`` (its key, value, timestamp and headers) in the window of its timestamp."""
        self.store.put(record.key, ValueTimestampHeaders.make(record.value, record.timestamp, record.headers),
                       record.timestamp)

    def fetch(self, key: Any, time_from: int, time_to: int) -> KeyValueIterator:
        """The values kept for ``key`` from ``time_from`` to ``time_to``, by timestamp (``WindowStore.fetch``)."""
        return KeyValueIterator([KeyValue(ts, kept.value) for ts, kept in self.store.fetch(key, time_from, time_to)])


class TimestampedWindowStoreFacadeForHeaders(WindowStoreFacade):
    """A headers-aware window store seen as a timestamped one (Kafka's driver's
    ``TimestampedWindowStoreFacadeForHeaders``): ``ValueAndTimestamp`` values; a write keeps no headers."""

    def _shown(self, stored: Any) -> Any:
        return None if stored is None else ValueAndTimestamp(stored.value, stored.timestamp)

    def _stored(self, value: Any) -> Any:
        return None if value is None else ValueTimestampHeaders.make(value.value, value.timestamp)


class SessionStoreWithHeaders(HeadersAwareValues, SessionStore[Any, AggregationWithHeaders]):
    """Session aggregations are :class:`AggregationWithHeaders` (Kafka's ``SessionStoreWithHeaders``), from
    ``Stores.session_store_with_headers_builder``; the value serde given is the aggregation's."""

    value_type = AggregationWithHeaders
    stored_serde = AggregationWithHeadersSerde


class SessionStoreWithHeadersBuilder(HeadersStoreBuilder, SessionStoreBuilder):
    """Builds :class:`SessionStoreWithHeaders` over any session bytes store supplier (Kafka's
    ``SessionStoreWithHeadersBuilder``)."""

    store_type = SessionStoreWithHeaders
    own_suppliers = SessionStoreBuilder.own_suppliers + (PersistentSessionHeadersBytesStoreSupplier,)


class SessionStoreFacadeForHeaders:
    """A headers-aware session store seen as a plain one (Kafka's driver's ``SessionStoreFacade``): aggregations
    without headers; a write keeps no headers."""

    def __init__(self, store: SessionStoreWithHeaders) -> None:
        self.store = store
        self.name = store.name

    def put(self, session_key: Any, aggregate: Any) -> None:
        self.store.put(session_key, AggregationWithHeaders.make(aggregate))

    def remove(self, session_key: Any) -> None:
        self.store.remove(session_key)

    def fetch_session(self, key: Any, session_start_time: int, session_end_time: int) -> Any:
        return AggregationWithHeaders.get_aggregation_or_null(
            self.store.fetch_session(key, session_start_time, session_end_time))

    def _rows(self, rows: KeyValueIterator) -> KeyValueIterator:
        return KeyValueIterator([KeyValue(k, AggregationWithHeaders.get_aggregation_or_null(v)) for k, v in rows])

    def find_sessions(self, *args: Any) -> KeyValueIterator:
        return self._rows(self.store.find_sessions(*args))

    def backward_find_sessions(self, *args: Any) -> KeyValueIterator:
        return self._rows(self.store.backward_find_sessions(*args))

    def fetch(self, *args: Any) -> KeyValueIterator:
        return self._rows(self.store.fetch(*args))

    def backward_fetch(self, *args: Any) -> KeyValueIterator:
        return self._rows(self.store.backward_fetch(*args))

    def all(self) -> KeyValueIterator:
        return self._rows(self.store.all())

    def backward_all(self) -> KeyValueIterator:
        return self._rows(self.store.backward_all())

    def __repr__(self) -> str:
        return f"SessionStoreFacade({self.name!r})"


class DslSessionStoreWithHeaders(SessionStoreWithHeaders):
    """A session aggregation's store under ``dsl.store.format=HEADERS`` (Kafka 4.3): Kafka's headers-aware session
    store, whose processor reads and writes the aggregations through :meth:`aggregations` (kept with empty headers,
    as Kafka's session aggregations keep them); the record cache forwards the flushed aggregations with the headers
    kept with them (none for a removed session), not the writing record's: what Kafka 4.3.1's driver forwards
    (the dsl-headers-session-cached golden). Kafka's (RocksDB) answers no IQv2 query."""

    answers_queries = False

    def _flush_adapter(self, listener: Callable[..., None]) -> FlushListener:
        aggregation = AggregationWithHeaders.get_aggregation_or_null

        def aggregations(key: Any, new: Any, new_timestamp: Any, old: Any, timestamp: int, headers: Any) -> None:
            kept = () if new is None else new.headers
            listener(key, aggregation(new), new_timestamp, aggregation(old), timestamp, kept)
        return SessionStore._flush_adapter(self, aggregations)

    def aggregations(self) -> "DslSessionAggregations":
        """What the session aggregation's processor uses: the store without headers."""
        return DslSessionAggregations(self)


class DslSessionAggregations(SessionStoreFacadeForHeaders):
    """A session aggregation's view of its :class:`DslSessionStoreWithHeaders`: aggregations without headers (written
    with empty ones), what emit-final scans, and the record cache's flushes."""

    def find_sessions_by_end_time(self, earliest_session_end_time: int,
                                  latest_session_end_time: int) -> KeyValueIterator:
        return self._rows(self.store.find_sessions_by_end_time(earliest_session_end_time, latest_session_end_time))

    def set_flush_listener(self, listener: Callable[..., None], send_old_values: bool) -> bool:
        return self.store.set_flush_listener(listener, send_old_values)


#: the builders of the DSL's stores (``StoreBuilder.follows_dsl_store_format``) and the headers-aware store each builds
#: under ``dsl.store.format=HEADERS``
_DSL_HEADERS_STORES: dict[type, type] = {TimestampedKeyValueStoreBuilder: DslTimestampedKeyValueStoreWithHeaders,
                                         TimestampedWindowStoreBuilder: DslTimestampedWindowStoreWithHeaders,
                                         SessionStoreBuilder: DslSessionStoreWithHeaders,
                                         WindowStoreBuilder: DslJoinWindowStoreWithHeaders}


#: the headers-aware suppliers whose stores an engine may keep, by the builder of the DSL's store over them
_HEADERS_SUPPLIERS: dict[type, tuple[type, ...]] = {
    TimestampedWindowStoreBuilder: TimestampedWindowStoreWithHeadersBuilder.own_suppliers,
    SessionStoreBuilder: SessionStoreWithHeadersBuilder.own_suppliers}


def dsl_headers_builder(builder: Any) -> Any:
    """The builder of a DSL operator's store under ``dsl.store.format=HEADERS``, or over a headers-aware supplier: a
    copy building its headers-aware store."""
    headers_builder = copy.copy(builder)
    headers_builder.store_type = _DSL_HEADERS_STORES[type(builder)]
    headers_builder.own_suppliers = _HEADERS_SUPPLIERS.get(type(builder), builder.own_suppliers)
    return headers_builder


def dsl_store_builder(builder: Any, supplier_given: bool) -> Any:
    """A DSL aggregation's or table's store ``builder`` as Kafka 4.3's materializers make it (``KeyValueStore``-,
    ``WindowStore``-, ``SlidingWindowStore``- and ``SessionStoreMaterializer``): over a supplier the application
    gives (``supplier_given``), a headers-aware store when that supplier is a ``HeadersBytesStoreSupplier`` (KIP-1271,
    whatever ``dsl.store.format``), else the store as it is, also under ``dsl.store.format=HEADERS``; over the default
    supplier, the format ``dsl.store.format`` says (decided when a task builds it: ``follows_dsl_store_format``)."""
    if not supplier_given:
        builder.follows_dsl_store_format = True
        return builder
    return dsl_headers_builder(builder) if isinstance(builder.supplier, HeadersBytesStoreSupplier) else builder


__all__ = ["ValueTimestampHeaders", "ValueTimestampHeadersSerde", "AggregationWithHeaders",
           "AggregationWithHeadersSerde", "TimestampedKeyValueStoreWithHeaders",
           "TimestampedKeyValueStoreWithHeadersBuilder", "TimestampedKeyValueStoreFacadeForHeaders",
           "TimestampedWindowStoreWithHeaders", "TimestampedWindowStoreWithHeadersBuilder",
           "TimestampedWindowStoreFacadeForHeaders", "SessionStoreWithHeaders", "SessionStoreWithHeadersBuilder",
           "SessionStoreFacadeForHeaders", "PersistentWindowHeadersBytesStoreSupplier",
           "PersistentSessionHeadersBytesStoreSupplier", "serialize_headers", "deserialize_headers",
           "DslTimestampedKeyValueStoreWithHeaders", "DslTimestampedWindowStoreWithHeaders",
           "DslSessionStoreWithHeaders", "DslSessionAggregations", "DslJoinWindowStoreWithHeaders", "DslJoinWindow",
           "dsl_headers_builder", "dsl_store_builder", "HeadersAwareValues"]

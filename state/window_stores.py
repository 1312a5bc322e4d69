"""Window stores: the bytes store over an ordered bytes table, typed views, suppliers and builders (``Stores`` makes
them).

One bytes store, :class:`WindowBytesStore`, reproduces Kafka's window stores (``InMemoryWindowStore``, the RocksDB
window store, ``RocksDBTimeOrderedWindowStore``; ``org.apache.kafka.streams.state.internals``) over an ordered bytes
table under ``WindowKeySchema`` (``key_schemas.py``): in memory in the in-process engine, the task's local RocksDB on
Spark. The same retention rule (a record whose window start is ``<= observedStreamTime - retention`` is skipped with
"Skipping record for expired segment."), the same eviction of expired segments before every operation, and the same
iteration order:

* in-memory and time-ordered stores: by window start, then by serialized key bytes (retained duplicates in insertion
  order);
* RocksDB store: segment by segment, by key bytes, then window start;
  the backward variants reverse it.

Reads return snapshots (lists) rather than Kafka's lazy iterators, so a processor may write while it iterates.
``entries()``/``restore()`` on the bytes store give the task snapshot plain dicts of bytes and ints.
"""
from __future__ import annotations

import logging
from operator import itemgetter
from typing import Any, Callable, Generic, Optional, TypeVar

from streams_on_spark.keyvalue import KeyValue
from streams_on_spark.state.caching import CachingWindowBytesStore
from streams_on_spark.state.expiry import (
    NO_TIMESTAMP,
    SegmentedBytesStore,
    SegmentedStoreBuilder,
    check_store_name,
    ordered,
)
from streams_on_spark.state.key_schemas import WindowKeySchema, kafka_segment_interval
from streams_on_spark.state.stores import (
    KeyValueIterator,
    SerdeStore,
    TimestampAdapter,
    TimestampedValues,
    ValueAndTimestamp,
    invalid_range,
    plain_values,
)
from streams_on_spark.window import (
    LONG_MAX,
    TimeWindow,
    Windowed,
)

log = logging.getLogger(__name__)

K = TypeVar("K")
V = TypeVar("V")

_START_THEN_KEY = itemgetter(1, 0)   # a (key bytes, window start, ...) row's place in start-then-key order

def _window_end(start: int, window_size: int) -> int:
    """``start + size``, clamped to ``Long.MAX_VALUE`` on overflow (Kafka logs and truncates)."""
    end = start + window_size
    if end > LONG_MAX:
        log.warning("Warning: window end time was truncated to Long.MAX")
        return LONG_MAX
    return end


class WindowBytesStore(SegmentedBytesStore):
    """``(key bytes, window start) -> value bytes`` in an ordered bytes table (Kafka's window stores).

    The kinds differ only in their rules: Kafka's ``InMemoryWindowStore`` (the default: per-record expiry, reads by
    start then key); its RocksDB store (``segmented``: segment expiry, multi-key reads segment by segment in
    ``WindowKeySchema`` order, key bytes then start); the time-ordered RocksDB store (``segmented`` and
    ``time_first``: reads by start then key, and windows starting exactly at stream time - retention still read),
    the default of emit-final aggregations. With ``retain_duplicates`` every put is kept under a new sequence number.
    """

    def __init__(self, name: str, retention_period_ms: int, window_size_ms: int, retain_duplicates: bool = False,
                 segmented: bool = False, time_first: bool = False, table: Any = None) -> None:
        self.window_size_ms = window_size_ms
        self.retain_duplicates = retain_duplicates
        self.time_first = time_first
        self.seqnum = 0
        self._init_table(name, retention_period_ms, segmented, table,
                         WindowKeySchema(kafka_segment_interval(retention_period_ms), retain_duplicates))
        #: the order of multi-key reads (None: the table's, segment by segment in key order)
        self._order: Optional[Callable[[tuple], Any]] = None if segmented and not time_first else _START_THEN_KEY

    def window_order(self, row: tuple) -> tuple:
        """Multi-key read order as a sort key of a ``(key bytes, window start, ...)`` row."""
        if self._order is None:
            return self._segment_id(row[1]), row[0], row[1]
        return row[1], row[0]

    def _time_of(self, composite: bytes) -> int:
        return self.schema.from_store_key(composite)[1]

    # -- writes
    def put(self, key: bytes, value: Optional[bytes], window_start_timestamp: int) -> bool:
        """Store ``value`` for ``key`` in the window starting at ``window_start_timestamp``; None deletes.

        With ``retain_duplicates`` every put is kept under a new sequence number and a None value is a no-op (which
        RocksDB's store does not even pass on: stream time stays). Returns whether Kafka's store of this kind takes
        the put into its position (``StoreQueryUtils.updatePosition``): the in-memory store every put, an expired one
        too; RocksDB's a put it stores.
        """
        if value is None and self.retain_duplicates and self.segmented:
            return False
        if not self._admit(window_start_timestamp):
            return not self.segmented
        if value is not None:
            if self.retain_duplicates:
                self.seqnum = (self.seqnum + 1) & 0x7FFFFFFF
                self._table.put(self.schema.to_store_key(key, window_start_timestamp, self.seqnum), value)
            else:
                self._table.put(self.schema.to_store_key(key, window_start_timestamp), value)
        elif not self.retain_duplicates:
            self._table.put(self.schema.to_store_key(key, window_start_timestamp), None)
        return True

    # -- reads
    def _retention_cut(self) -> int:
        """Reads see windows starting after this time (records expire exactly retentionPeriod ms after they were
        created); the time-ordered store also returns windows starting exactly at stream time - retention (its
        ``getActualFrom`` has no +1): the windows an emit-final aggregation closes at that very time."""
        cut = self.observed_stream_time - self.retention_period_ms
        return cut - 1 if self.time_first else cut

    def _min_time(self, time_from: int) -> int:
        return max(time_from, self._retention_cut() + 1)

    def fetch(self, key: bytes, window_start_timestamp: int) -> Optional[bytes]:
        """The value of ``key`` in exactly the window starting at ``window_start_timestamp``."""
        self._remove_expired_segments()
        if window_start_timestamp <= self._retention_cut() or window_start_timestamp < self._min_live_time():
            return None
        return self._table.get(self.schema.to_store_key(key, window_start_timestamp))

    def _bounds(self, time_from: int, time_to: int) -> tuple[int, int]:
        """The window starts a read may see: within retention and live segments, not after stream time."""
        return max(self._min_time(time_from), self._min_live_time()), min(time_to, self.observed_stream_time)

    def _rows(self, key_from: Optional[bytes], key_to: Optional[bytes], lo: int,
              hi: int) -> list[tuple[bytes, int, bytes]]:
        """``(key bytes, start, value)`` with starts in ``[lo, hi]``, in table order."""
        decode = self.schema.from_store_key
        out: list[tuple[bytes, int, bytes]] = []
        for composite, value in self.schema.scan(self._table, key_from, key_to, lo, hi):
            key, start, _ = decode(composite)
            if lo <= start <= hi:
                out.append((key, start, value))
        return out

    def fetch_key(self, key: bytes, time_from: int, time_to: int, forward: bool = True) -> list[tuple[int, bytes]]:
        """``(window start, value)`` of ``key`` for windows starting in ``[time_from, time_to]``."""
        self._remove_expired_segments()
        lo, hi = self._bounds(time_from, time_to)
        if hi < lo:
            return []
        return ordered([(start, value) for _, start, value in self._rows(key, key, lo, hi)], None, forward)

    def fetch_keys(self, key_from: Optional[bytes], key_to: Optional[bytes], time_from: int, time_to: int,
                   forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        """``(key bytes, window start, value)`` for keys in ``[key_from, key_to]`` (None = open) and starts in
        ``[time_from, time_to]``, in the store's read order (reversed when not ``forward``)."""
        self._remove_expired_segments()
        if invalid_range(key_from, key_to):
            return []
        lo, hi = self._bounds(time_from, time_to)
        if hi < lo:
            return []
        return ordered(self._rows(key_from, key_to, lo, hi), self._order, forward)

    def fetch_all(self, time_from: int, time_to: int, forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        """Every entry whose window starts in ``[time_from, time_to]``."""
        return self.fetch_keys(None, None, time_from, time_to, forward)

    def all(self, forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        """Every live entry (window start ``> observedStreamTime - retention``)."""
        self._remove_expired_segments()
        lo = max(self._retention_cut() + 1, self._min_live_time())
        hi = self.observed_stream_time
        return [] if hi < lo else ordered(self._rows(None, None, lo, hi), self._order, forward)

    # -- snapshots
    def entries(self) -> dict[str, Any]:
        """For the task's snapshot: stream time, sequence number and the entries of an in-memory table."""
        out = super().entries()
        out["seqnum"] = self.seqnum
        return out

    def restore(self, entries: dict[str, Any]) -> None:
        """Load :meth:`entries`; a snapshot written by an older version (``{start: {key: value}}`` under
        ``segments``) moves its windows into the table."""
        super().restore(entries)
        self.seqnum = entries["seqnum"]
        schema = self.schema
        for start, segment in entries.get("segments", {}).items():
            for key, value in segment.items():
                if self.retain_duplicates:
                    self._table.put(schema.to_store_key(key[:-4], start) + key[-4:], value)
                else:
                    self._table.put(schema.to_store_key(key, start), value)


class WindowStore(SerdeStore, Generic[K, V]):
    """A typed window store: serdes around a :class:`WindowBytesStore`.

    ``fetch(key, start)`` reads one window; ``fetch(key, time_from, time_to)`` iterates
    ``KeyValue(window_start, value)``; ``fetch(key_from, key_to, time_from, time_to)`` iterates
    ``KeyValue(Windowed(key, TimeWindow), value)`` — Kafka's overloads, dispatched on the number of arguments.
    """

    def __init__(self, inner: WindowBytesStore, key_serde: Any = None, value_serde: Any = None) -> None:
        self._init_serdes(inner, key_serde, value_serde)

    @property
    def retention_period_ms(self) -> int:
        return self.inner.retention_period_ms

    @property
    def window_size_ms(self) -> int:
        return self.inner.window_size_ms

    @property
    def retain_duplicates(self) -> bool:
        return self.inner.retain_duplicates

    @property
    def observed_stream_time(self) -> int:
        return self.inner.observed_stream_time

    def query_answer(self, rows: KeyValueIterator) -> KeyValueIterator:
        """An IQv2 query's answer, ``rows`` as this store reads them. Kafka's query goes down the store's layers to
        the bytes store, which answers it (``StateStore.query``): one of this library's answers as read; an adapter
        answers its own way (:meth:`WindowToTimestampedBytesStore.query_answer`)."""
        layer = self.inner.wrapped if isinstance(self.inner, CachingWindowBytesStore) else self.inner
        answer = getattr(layer, "query_answer", None)   # the bytes store's own, if it has one
        return rows if answer is None else answer(rows)

    def put(self, key: K, value: Optional[V], window_start_timestamp: int) -> None:
        """Put ``value`` into the window of ``key`` starting at ``window_start_timestamp``; None deletes."""
        if self.inner.put(self._kser(key), self._vser(value), window_start_timestamp):
            self._written()

    def fetch_window(self, key: K, window_start: int) -> Optional[V]:
        """The value of ``key`` in the window starting at ``window_start``, or None."""
        return self._vde(self.inner.fetch(self._kser(key), window_start))

    def fetch(self, *args: Any) -> Any:
        """``fetch(key, start)`` → value | None; ``fetch(key, time_from, time_to)`` → iterator of
        ``KeyValue(start, value)`` by ascending start; ``fetch(key_from, key_to, time_from, time_to)`` →
        iterator of ``KeyValue(Windowed, value)``."""
        if len(args) == 2:
            return self.fetch_window(*args)
        if len(args) == 3:
            return self._fetch_key(*args, forward=True)
        if len(args) == 4:
            return self.fetch_range(*args)
        raise TypeError(f"fetch() takes 2, 3 or 4 arguments ({len(args)} given)")

    def backward_fetch(self, *args: Any) -> KeyValueIterator:
        """``backward_fetch(key, time_from, time_to)`` (descending start) or the 4-argument key-range form."""
        if len(args) == 3:
            return self._fetch_key(*args, forward=False)
        if len(args) == 4:
            return self.backward_fetch_range(*args)
        raise TypeError(f"backward_fetch() takes 3 or 4 arguments ({len(args)} given)")

    def _fetch_key(self, key: K, time_from: int, time_to: int, forward: bool) -> KeyValueIterator:
        vde = self._vde
        rows = self.inner.fetch_key(self._kser(key), time_from, time_to, forward)
        return KeyValueIterator([KeyValue(t, vde(v)) for t, v in rows])

    def _windowed(self, rows: list[tuple[bytes, int, bytes]]) -> KeyValueIterator:
        size, kde, vde = self.inner.window_size_ms, self._kde, self._vde
        return KeyValueIterator([KeyValue(Windowed(kde(k), TimeWindow(t, _window_end(t, size))), vde(v))
                                 for k, t, v in rows])

    def fetch_range(self, key_from: Optional[K], key_to: Optional[K], time_from: int, time_to: int) -> KeyValueIterator:
        """``KeyValue(Windowed, value)`` for keys in ``[key_from, key_to]`` (None = open), by start then key bytes."""
        return self._windowed(self.inner.fetch_keys(self._kser_opt(key_from), self._kser_opt(key_to),
                                                    time_from, time_to, True))

    def backward_fetch_range(self, key_from: Optional[K], key_to: Optional[K], time_from: int,
                             time_to: int) -> KeyValueIterator:
        return self._windowed(self.inner.fetch_keys(self._kser_opt(key_from), self._kser_opt(key_to),
                                                    time_from, time_to, False))

    def fetch_all(self, time_from: int, time_to: int) -> KeyValueIterator:
        """``KeyValue(Windowed, value)`` for every window starting in ``[time_from, time_to]``."""
        return self._windowed(self.inner.fetch_all(time_from, time_to, True))

    def backward_fetch_all(self, time_from: int, time_to: int) -> KeyValueIterator:
        return self._windowed(self.inner.fetch_all(time_from, time_to, False))

    def all(self) -> KeyValueIterator:
        """Every live window, by start then key bytes; a snapshot, safe to modify the store while iterating."""
        return self._windowed(self.inner.all(True))

    def backward_all(self) -> KeyValueIterator:
        return self._windowed(self.inner.all(False))


class TimestampedWindowStore(TimestampedValues, WindowStore[K, ValueAndTimestamp]):
    """Values are :class:`ValueAndTimestamp` (8-byte timestamp + value bytes); what windowed DSL aggregations use."""

    def put(self, key: K, value: Optional[ValueAndTimestamp], window_start_timestamp: int) -> None:
        kb, data = self._kser(key), self._vser(value)
        if not self._cached:
            if self.inner.put(kb, data, window_start_timestamp):
                self._written()
        elif value is None:   # the position moves when the cache flushes the write into the store
            self.inner.put(kb, None, window_start_timestamp, (key, None, None))
        else:   # the cache hands the objects back on flush
            self.inner.put(kb, data, window_start_timestamp, (key, value.value, value.timestamp))

    def _flushed_key(self, cache_key: tuple[bytes, int], key: Any) -> Windowed:
        """Kafka's ``WindowKeySchema.fromStoreKey``: the key with the window of the store's window size."""
        kb, start = cache_key
        return Windowed(self._kde(kb) if key is None else key,
                        TimeWindow(start, _window_end(start, self.inner.window_size_ms)))


class WindowStoreFacade:
    """A plain window-store view of a timestamped one (Kafka's ``WindowStoreFacade``): values without timestamps;
    puts store the timestamp ``-1`` (and, in a headers-aware store, no headers)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.name = store.name

    def _shown(self, stored: Any) -> Any:
        """What the view shows for a stored value."""
        return None if stored is None else stored.value

    def _stored(self, value: Any) -> Any:
        """What the store keeps for a value written through the view."""
        return None if value is None else self.store.value_type.make(value, NO_TIMESTAMP)

    def _rows(self, rows: KeyValueIterator) -> KeyValueIterator:
        return KeyValueIterator([KeyValue(k, self._shown(v)) for k, v in rows])

    def put(self, key: Any, value: Any, window_start_timestamp: int) -> None:
        self.store.put(key, self._stored(value), window_start_timestamp)

    def fetch_window(self, key: Any, window_start: int) -> Any:
        return self._shown(self.store.fetch_window(key, window_start))

    def fetch(self, *args: Any) -> Any:
        result = self.store.fetch(*args)
        if len(args) == 2:
            return self._shown(result)
        return self._rows(result)

    def backward_fetch(self, *args: Any) -> KeyValueIterator:
        return self._rows(self.store.backward_fetch(*args))

    def fetch_range(self, key_from: Any, key_to: Any, time_from: int, time_to: int) -> KeyValueIterator:
        return self._rows(self.store.fetch_range(key_from, key_to, time_from, time_to))

    def backward_fetch_range(self, key_from: Any, key_to: Any, time_from: int, time_to: int) -> KeyValueIterator:
        return self._rows(self.store.backward_fetch_range(key_from, key_to, time_from, time_to))

    def fetch_all(self, time_from: int, time_to: int) -> KeyValueIterator:
        return self._rows(self.store.fetch_all(time_from, time_to))

    def backward_fetch_all(self, time_from: int, time_to: int) -> KeyValueIterator:
        return self._rows(self.store.backward_fetch_all(time_from, time_to))

    def all(self) -> KeyValueIterator:
        return self._rows(self.store.all())

    def backward_all(self) -> KeyValueIterator:
        return self._rows(self.store.backward_all())

    def approximate_num_entries(self) -> int:
        return self.store.approximate_num_entries()

    def query_answer(self, rows: KeyValueIterator) -> KeyValueIterator:
        """An IQv2 query's answer read through the view: the store's (:meth:`WindowStore.query_answer`)."""
        return self.store.query_answer(rows)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class WindowBytesStoreSupplier:
    """Makes the bytes store a window-store builder wraps (``Stores.in_memory_window_store``): Kafka's in-memory
    store's rules."""

    #: RocksDB's rules (segment expiry and read order)
    segmented = False
    #: the time-ordered store's read order (start, then key)
    time_first = False

    def __init__(self, name: str, retention_period_ms: int, window_size_ms: int, retain_duplicates: bool) -> None:
        self.name = check_store_name(name)
        self.retention_period_ms = retention_period_ms
        self.window_size_ms = window_size_ms
        self.retain_duplicates = retain_duplicates

    def get(self, table: Any = None) -> WindowBytesStore:
        """A store over ``table`` (an engine's ordered bytes table), or over a new in-memory one."""
        return WindowBytesStore(self.name, self.retention_period_ms, self.window_size_ms, self.retain_duplicates,
                                self.segmented, self.time_first, table)

    def metrics_scope(self) -> str:
        return "in-memory-window"

    def __repr__(self) -> str:
        return (f"InMemoryWindowBytesStoreSupplier{{name='{self.name}', retentionPeriod={self.retention_period_ms}, "
                f"windowSize={self.window_size_ms}, retainDuplicates={str(self.retain_duplicates).lower()}}}")


class PersistentWindowBytesStoreSupplier(WindowBytesStoreSupplier):
    """Makes window stores with Kafka's RocksDB store's rules (``Stores.persistent_window_store``), held in memory in
    the driver, in the task's local RocksDB on Spark; ``time_first`` gives the order of Kafka's time-ordered store
    (window start, then key), the default of emit-final aggregations."""

    segmented = True

    def __init__(self, name: str, retention_period_ms: int, window_size_ms: int, retain_duplicates: bool,
                 time_first: bool = False, timestamped: bool = True) -> None:
        super().__init__(name, retention_period_ms, window_size_ms, retain_duplicates)
        self.time_first = time_first
        self.timestamped = timestamped   # Kafka's WindowStoreTypes: False for Stores.persistent_window_store

    def metrics_scope(self) -> str:
        return "rocksdb-window"

    def __repr__(self) -> str:
        return (f"PersistentWindowBytesStoreSupplier{{name='{self.name}', retentionPeriod={self.retention_period_ms}, "
                f"windowSize={self.window_size_ms}, retainDuplicates={str(self.retain_duplicates).lower()}}}")


class WindowStoreBuilder(SegmentedStoreBuilder):
    """Builds a :class:`WindowStore` per task (Kafka's ``WindowStoreBuilder``)."""

    store_type: Callable[..., WindowStore] = WindowStore
    own_suppliers = (WindowBytesStoreSupplier, PersistentWindowBytesStoreSupplier)

    def with_caching_enabled(self) -> "WindowStoreBuilder":
        if self.supplier.retain_duplicates:
            # Kafka: caching cannot keep duplicates apart, so it is switched off for such stores
            log.warning("Disabling caching for %s since store was configured to retain duplicates", self.name)
            self.caching_enabled = False
            return self
        return super().with_caching_enabled()

    def build(self, bytes_store: Any = None) -> WindowStore:
        """The typed store over ``bytes_store``, or over a new store from the supplier."""
        inner = self.supplier.get() if bytes_store is None else bytes_store
        return self.store_type(CachingWindowBytesStore(inner) if self.caching_enabled else inner, self.key_serde,
                               self.value_serde)


class WindowToTimestampedBytesStore(TimestampAdapter):
    """Kafka's ``WindowToTimestampedWindowByteStoreAdapter``: what a timestamped window store is built over when its
    supplier's persistent store keeps no timestamps (``Stores.persistent_window_store``). Writes drop the 8-byte
    timestamp, reads give every value the timestamp -1 (a record cache above still answers with its timestamps), IQv2
    queries are answered with plain values (:meth:`query_answer`)."""

    def query_answer(self, rows: KeyValueIterator) -> KeyValueIterator:
        """An IQv2 query's answer through the adapter: the plain values beneath, without the timestamps reads give
        them (Kafka's adapter's ``query`` passes its store's plain bytes up, and the metered store reads them with
        the plain value deserializer: ``StoreQueryUtils.deserializeValue``)."""
        return plain_values(rows)

    def put(self, key: bytes, value: Optional[bytes], window_start_timestamp: int) -> bool:
        return self.wrapped.put(key, None if value is None else value[8:], window_start_timestamp)

    def fetch(self, key: bytes, window_start_timestamp: int) -> Optional[bytes]:
        raw = self.wrapped.fetch(key, window_start_timestamp)
        return None if raw is None else self.NO_TIMESTAMP + raw

    def fetch_key(self, key: bytes, time_from: int, time_to: int, forward: bool = True) -> list[tuple[int, bytes]]:
        stamp = self.NO_TIMESTAMP
        return [(start, stamp + v) for start, v in self.wrapped.fetch_key(key, time_from, time_to, forward)]

    def fetch_keys(self, key_from: Optional[bytes], key_to: Optional[bytes], time_from: int, time_to: int,
                   forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        return _stamped(self.wrapped.fetch_keys(key_from, key_to, time_from, time_to, forward))

    def fetch_all(self, time_from: int, time_to: int, forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        return _stamped(self.wrapped.fetch_all(time_from, time_to, forward))

    def all(self, forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        return _stamped(self.wrapped.all(forward))


def _stamped(rows: list[tuple[bytes, int, bytes]]) -> list[tuple[bytes, int, bytes]]:
    """``(key, start, value)`` rows of a store without timestamps, each value with the timestamp -1."""
    stamp = TimestampAdapter.NO_TIMESTAMP
    return [(k, start, stamp + v) for k, start, v in rows]


class TimestampedWindowStoreBuilder(WindowStoreBuilder):
    store_type = TimestampedWindowStore

    def build(self, bytes_store: Any = None) -> WindowStore:
        """As Kafka's: over a persistent supplier without timestamps, through :class:`WindowToTimestampedBytesStore`
        (beneath the record cache)."""
        if isinstance(self.supplier, PersistentWindowBytesStoreSupplier) and not self.supplier.timestamped:
            bytes_store = WindowToTimestampedBytesStore(self.supplier.get() if bytes_store is None else bytes_store)
        return super().build(bytes_store)


__all__ = [
    "WindowBytesStore",
    "WindowStore",
    "TimestampedWindowStore",
    "WindowStoreFacade",
    "WindowBytesStoreSupplier",
    "PersistentWindowBytesStoreSupplier",
    "WindowStoreBuilder",
    "TimestampedWindowStoreBuilder",
    "WindowToTimestampedBytesStore",
]

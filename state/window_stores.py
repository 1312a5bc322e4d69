"""Window stores: in-memory bytes stores, typed views, suppliers and builders (``Stores`` makes them).

The bytes stores reproduce Kafka's ``InMemoryWindowStore`` (and, in ``session_stores.py``, ``InMemorySessionStore``)
(``org.apache.kafka.streams.state.internals``): the same retention rule (a record whose window start — or
session end — is ``<= observedStreamTime - retention`` is skipped with "Skipping record for expired segment."),
the same eviction of expired segments before every operation, and the same iteration order:

* window store: by window start, then by serialized key bytes (with ``retain_duplicates`` the key bytes carry a
  4-byte big-endian sequence number, so duplicates come out in insertion order);
* session store: by session end, then key bytes, then session start **descending** (Kafka's forward order);
  the backward variants reverse all three.

Reads return snapshots (lists) rather than Kafka's lazy iterators, so a processor may write while it iterates.
``entries()``/``restore()`` on the bytes stores give the task snapshot plain dicts of bytes and ints.
"""
from __future__ import annotations

import bisect
import logging
import struct
from operator import itemgetter
from typing import Any, Callable, Generic, Optional, TypeVar

from streams_on_spark.keyvalue import KeyValue
from streams_on_spark.state.caching import CachingWindowBytesStore
from streams_on_spark.state.expiry import NO_TIMESTAMP, Expiring, Segmented, check_store_name, sub_keys
from streams_on_spark.state.stores import (
    INVALID_RANGE_WARNING,
    KeyValueIterator,
    SerdeStore,
    StateStore,
    StoreBuilder,
    TimestampedValues,
    ValueAndTimestamp,
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

_SEQ = struct.Struct(">i")
_SEQNUM_SIZE = 4
_SEQ_MIN = _SEQ.pack(0)
_SEQ_MAX = _SEQ.pack(0x7FFFFFFF)


def _window_end(start: int, window_size: int) -> int:
    """``start + size``, clamped to ``Long.MAX_VALUE`` on overflow (Kafka logs and truncates)."""
    end = start + window_size
    if end > LONG_MAX:
        log.warning("Warning: window end time was truncated to Long.MAX")
        return LONG_MAX
    return end


class InMemoryWindowBytesStore(Expiring, StateStore):
    """``(key bytes, window start) -> value bytes``, segmented by window start (Kafka's ``InMemoryWindowStore``)."""

    #: the order of multi-key reads, as a sort key of a ``(key bytes, window start, ...)`` row: start, then key
    window_order = staticmethod(itemgetter(1, 0))

    def __init__(self, name: str, retention_period_ms: int, window_size_ms: int, retain_duplicates: bool = False) -> None:
        self.name = name
        self.retention_period_ms = retention_period_ms
        self.window_size_ms = window_size_ms
        self.retain_duplicates = retain_duplicates
        self._segments: dict[int, dict[bytes, bytes]] = {}
        self._sorted: dict[int, list[bytes]] = {}    # per-segment sorted keys, rebuilt lazily
        self.seqnum = 0
        self._init_times()

    # -- maintenance
    def _remove_expired_segments(self) -> None:
        times = self._times
        cut = bisect.bisect_left(times, self._min_live_time())
        if cut:
            for t in times[:cut]:
                del self._segments[t]
                self._sorted.pop(t, None)
            del times[:cut]

    def _keys(self, t: int) -> list[bytes]:
        keys = self._sorted.get(t)
        if keys is None:
            keys = self._sorted[t] = sorted(self._segments[t])
        return keys

    def _wrap(self, key: bytes, seqnum: int) -> bytes:
        return key + _SEQ.pack(seqnum)

    # -- writes
    def put(self, key: bytes, value: Optional[bytes], window_start_timestamp: int) -> None:
        """Store ``value`` for ``key`` in the window starting at ``window_start_timestamp``; None deletes.

        With ``retain_duplicates`` every put is kept under a new sequence number and a None value is a no-op.
        """
        if not self._admit(window_start_timestamp):
            return
        if value is not None:
            if self.retain_duplicates:
                self.seqnum = (self.seqnum + 1) & 0x7FFFFFFF
                key = self._wrap(key, self.seqnum)
            segment = self._segments.get(window_start_timestamp)
            if segment is None:
                segment = self._segments[window_start_timestamp] = {}
                bisect.insort(self._times, window_start_timestamp)
            if key not in segment:
                keys = self._sorted.get(window_start_timestamp)
                if keys is not None:
                    bisect.insort(keys, key)     # cheaper than re-sorting on the next read
            segment[key] = value
        elif not self.retain_duplicates:
            segment = self._segments.get(window_start_timestamp)
            if segment is not None and segment.pop(key, None) is not None:
                keys = self._sorted.get(window_start_timestamp)
                if keys is not None:
                    del keys[bisect.bisect_left(keys, key)]
                if not segment:
                    self._sorted.pop(window_start_timestamp, None)
                    del self._segments[window_start_timestamp]
                    self._times.remove(window_start_timestamp)

    # -- reads
    def fetch(self, key: bytes, window_start_timestamp: int) -> Optional[bytes]:
        """The value of ``key`` in exactly the window starting at ``window_start_timestamp``."""
        self._remove_expired_segments()
        if window_start_timestamp <= self._retention_cut():
            return None
        segment = self._segments.get(window_start_timestamp)
        return None if segment is None else segment.get(key)

    def _retention_cut(self) -> int:
        """Reads see windows starting after this time (records expire exactly retentionPeriod ms after they were
        created)."""
        return self.observed_stream_time - self.retention_period_ms

    def _min_time(self, time_from: int) -> int:
        return max(time_from, self._retention_cut() + 1)

    def fetch_key(self, key: bytes, time_from: int, time_to: int, forward: bool = True) -> list[tuple[int, bytes]]:
        """``(window start, value)`` of ``key`` for windows starting in ``[time_from, time_to]``."""
        self._remove_expired_segments()
        min_time = self._min_time(time_from)
        if time_to < min_time:
            return []
        out: list[tuple[int, bytes]] = []
        segments = self._segments
        if not self.retain_duplicates:
            for t in self._times_between(min_time, time_to, forward):
                value = segments[t].get(key)
                if value is not None:
                    out.append((t, value))
            return out
        lo, hi = self._wrap(key, 0), self._wrap(key, 0x7FFFFFFF)
        for t in self._times_between(min_time, time_to, forward):
            segment = segments[t]
            keys = sub_keys(self._keys(t), lo, hi)
            if not forward:
                keys = keys[::-1]
            out.extend((t, segment[k]) for k in keys if k[:-_SEQNUM_SIZE] == key)
        return out

    def fetch_keys(self, key_from: Optional[bytes], key_to: Optional[bytes], time_from: int, time_to: int,
                   forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        """``(key bytes, window start, value)`` for keys in ``[key_from, key_to]`` (None = open) and starts in
        ``[time_from, time_to]``; ordered by start, then key bytes (both reversed when not ``forward``)."""
        self._remove_expired_segments()
        if key_from is not None and key_to is not None and key_from > key_to:
            log.warning(INVALID_RANGE_WARNING)
            return []
        min_time = self._min_time(time_from)
        if time_to < min_time:
            return []
        return self._scan(key_from, key_to, self._times_between(min_time, time_to, forward), forward)

    def fetch_all(self, time_from: int, time_to: int, forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        """Every entry whose window starts in ``[time_from, time_to]``."""
        self._remove_expired_segments()
        min_time = self._min_time(time_from)
        if time_to < min_time:
            return []
        return self._scan(None, None, self._times_between(min_time, time_to, forward), forward)

    def all(self, forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        """Every live entry (window start ``> observedStreamTime - retention``)."""
        self._remove_expired_segments()
        times = self._times
        selected = times[bisect.bisect_right(times, self._retention_cut()):]
        return self._scan(None, None, selected if forward else selected[::-1], forward)

    def _scan(self, key_from: Optional[bytes], key_to: Optional[bytes], times: list[int],
              forward: bool) -> list[tuple[bytes, int, bytes]]:
        dups = self.retain_duplicates
        lo = self._wrap(key_from, 0) if dups and key_from is not None else key_from
        hi = self._wrap(key_to, 0x7FFFFFFF) if dups and key_to is not None else key_to
        out: list[tuple[bytes, int, bytes]] = []
        for t in times:
            segment = self._segments[t]
            keys = sub_keys(self._keys(t), lo, hi)
            if not forward:
                keys = keys[::-1]
            if not dups:
                out.extend((k, t, segment[k]) for k in keys)
                continue
            for k in keys:
                base = k[:-_SEQNUM_SIZE]
                # Kafka re-checks the unwrapped key against the range when duplicates are retained
                if (key_from is None or base >= key_from) and (key_to is None or base <= key_to):
                    out.append((base, t, segment[k]))
        return out

    def approximate_num_entries(self) -> int:
        return sum(len(segment) for segment in self._segments.values())

    # -- snapshots
    def entries(self) -> dict[str, Any]:
        """Plain-builtin state for snapshots: stream time, sequence number and ``{start: {key: value}}``."""
        return {"observed_stream_time": self.observed_stream_time, "seqnum": self.seqnum,
                "segments": self._segments}

    def restore(self, entries: dict[str, Any]) -> None:
        """Load what :meth:`entries` returned (replaces the current content)."""
        self.observed_stream_time = entries["observed_stream_time"]
        self.seqnum = entries["seqnum"]
        self._segments = {t: dict(segment) for t, segment in entries["segments"].items() if segment}
        self._times = sorted(self._segments)
        self._sorted = {}

    def close(self) -> None:
        self._segments.clear()
        self._sorted.clear()
        self._times.clear()

    def __repr__(self) -> str:
        return f"InMemoryWindowBytesStore({self.name!r})"


class PersistentWindowBytesStore(Segmented, InMemoryWindowBytesStore):
    """Kafka's RocksDB window store as its readers see it (the DSL default, ``Stores.persistentWindowStore``), held
    in memory: segmented expiry, and multi-key reads segment by segment in ``WindowKeySchema`` order (key bytes,
    then window start). ``time_first`` gives the order of Kafka's time-ordered store (window start, then key), the
    default of emit-final aggregations."""

    def __init__(self, name: str, retention_period_ms: int, window_size_ms: int, retain_duplicates: bool = False,
                 time_first: bool = False) -> None:
        super().__init__(name, retention_period_ms, window_size_ms, retain_duplicates)
        self._init_segments()
        self.time_first = time_first

    def _retention_cut(self) -> int:
        """The time-ordered store also returns windows starting exactly at stream time - retention (its
        ``getActualFrom`` has no +1): the windows an emit-final aggregation closes at that very time."""
        cut = self.observed_stream_time - self.retention_period_ms
        return cut - 1 if self.time_first else cut

    def window_order(self, row: tuple) -> tuple:
        """Multi-key read order as a sort key of a ``(key bytes, window start, ...)`` row."""
        if self.time_first:
            return row[1], row[0]
        return self._segment_id(row[1]), row[0], row[1]

    def _scan(self, key_from: Optional[bytes], key_to: Optional[bytes], times: list[int],
              forward: bool) -> list[tuple[bytes, int, bytes]]:
        rows = super()._scan(key_from, key_to, times, forward)
        if not self.time_first and len(rows) > 1:   # stable: duplicates keep their sequence order
            rows.sort(key=self.window_order, reverse=not forward)
        return rows

    def __repr__(self) -> str:
        return f"PersistentWindowBytesStore({self.name!r})"


class WindowStore(SerdeStore, Generic[K, V]):
    """A typed window store: serdes around an :class:`InMemoryWindowBytesStore`.

    ``fetch(key, start)`` reads one window; ``fetch(key, time_from, time_to)`` iterates
    ``KeyValue(window_start, value)``; ``fetch(key_from, key_to, time_from, time_to)`` iterates
    ``KeyValue(Windowed(key, TimeWindow), value)`` — Kafka's overloads, dispatched on the number of arguments.
    """

    def __init__(self, inner: InMemoryWindowBytesStore, key_serde: Any = None, value_serde: Any = None) -> None:
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

    def put(self, key: K, value: Optional[V], window_start_timestamp: int) -> None:
        """Put ``value`` into the window of ``key`` starting at ``window_start_timestamp``; None deletes."""
        self.inner.put(self._kser(key), self._vser(value), window_start_timestamp)

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
            self.inner.put(kb, data, window_start_timestamp)
        elif value is None:
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
    puts store the timestamp ``-1``."""

    def __init__(self, store: TimestampedWindowStore) -> None:
        self.store = store
        self.name = store.name

    def put(self, key: Any, value: Any, window_start_timestamp: int) -> None:
        self.store.put(key, ValueAndTimestamp.make(value, NO_TIMESTAMP), window_start_timestamp)

    def fetch_window(self, key: Any, window_start: int) -> Any:
        return ValueAndTimestamp.get_value_or_null(self.store.fetch_window(key, window_start))

    def fetch(self, *args: Any) -> Any:
        result = self.store.fetch(*args)
        if len(args) == 2:
            return ValueAndTimestamp.get_value_or_null(result)
        return plain_values(result)

    def backward_fetch(self, *args: Any) -> KeyValueIterator:
        return plain_values(self.store.backward_fetch(*args))

    def fetch_range(self, key_from: Any, key_to: Any, time_from: int, time_to: int) -> KeyValueIterator:
        return plain_values(self.store.fetch_range(key_from, key_to, time_from, time_to))

    def backward_fetch_range(self, key_from: Any, key_to: Any, time_from: int, time_to: int) -> KeyValueIterator:
        return plain_values(self.store.backward_fetch_range(key_from, key_to, time_from, time_to))

    def fetch_all(self, time_from: int, time_to: int) -> KeyValueIterator:
        return plain_values(self.store.fetch_all(time_from, time_to))

    def backward_fetch_all(self, time_from: int, time_to: int) -> KeyValueIterator:
        return plain_values(self.store.backward_fetch_all(time_from, time_to))

    def all(self) -> KeyValueIterator:
        return plain_values(self.store.all())

    def backward_all(self) -> KeyValueIterator:
        return plain_values(self.store.backward_all())

    def approximate_num_entries(self) -> int:
        return self.store.approximate_num_entries()

    def __repr__(self) -> str:
        return f"WindowStoreFacade({self.name!r})"


class WindowBytesStoreSupplier:
    """Makes the bytes store a window-store builder wraps (``Stores.in_memory_window_store``)."""

    def __init__(self, name: str, retention_period_ms: int, window_size_ms: int, retain_duplicates: bool) -> None:
        self.name = check_store_name(name)
        self.retention_period_ms = retention_period_ms
        self.window_size_ms = window_size_ms
        self.retain_duplicates = retain_duplicates

    def get(self) -> InMemoryWindowBytesStore:
        return InMemoryWindowBytesStore(self.name, self.retention_period_ms, self.window_size_ms,
                                        self.retain_duplicates)

    def metrics_scope(self) -> str:
        return "in-memory-window"

    def __repr__(self) -> str:
        return (f"InMemoryWindowBytesStoreSupplier{{name='{self.name}', retentionPeriod={self.retention_period_ms}, "
                f"windowSize={self.window_size_ms}, retainDuplicates={str(self.retain_duplicates).lower()}}}")


class PersistentWindowBytesStoreSupplier(WindowBytesStoreSupplier):
    """Makes :class:`PersistentWindowBytesStore` s (``Stores.persistent_window_store``): RocksDB's rules, held in
    memory in the driver; on Spark the task's local RocksDB keeps them (``state/local_windows.py``)."""

    def __init__(self, name: str, retention_period_ms: int, window_size_ms: int, retain_duplicates: bool,
                 time_first: bool = False) -> None:
        super().__init__(name, retention_period_ms, window_size_ms, retain_duplicates)
        self.time_first = time_first

    def get(self) -> PersistentWindowBytesStore:
        return PersistentWindowBytesStore(self.name, self.retention_period_ms, self.window_size_ms,
                                          self.retain_duplicates, self.time_first)

    def metrics_scope(self) -> str:
        return "rocksdb-window"

    def __repr__(self) -> str:
        return (f"PersistentWindowBytesStoreSupplier{{name='{self.name}', retentionPeriod={self.retention_period_ms}, "
                f"windowSize={self.window_size_ms}, retainDuplicates={str(self.retain_duplicates).lower()}}}")


class WindowStoreBuilder(StoreBuilder):
    """Builds a :class:`WindowStore` per task (Kafka's ``WindowStoreBuilder``)."""

    store_type: Callable[..., WindowStore] = WindowStore
    own_suppliers = (WindowBytesStoreSupplier, PersistentWindowBytesStoreSupplier)

    def __init__(self, supplier: WindowBytesStoreSupplier, key_serde: Any = None, value_serde: Any = None) -> None:
        if supplier is None:
            raise ValueError("supplier cannot be null")
        self.supplier = supplier
        self.name = supplier.name
        self.key_serde = key_serde
        self.value_serde = value_serde
        self.logging_enabled = True

    def retention_period(self) -> int:
        return self.supplier.retention_period_ms

    def with_caching_enabled(self) -> "StoreBuilder":
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


class TimestampedWindowStoreBuilder(WindowStoreBuilder):
    store_type = TimestampedWindowStore


__all__ = [
    "InMemoryWindowBytesStore",
    "PersistentWindowBytesStore",
    "WindowStore",
    "TimestampedWindowStore",
    "WindowStoreFacade",
    "WindowBytesStoreSupplier",
    "PersistentWindowBytesStoreSupplier",
    "WindowStoreBuilder",
    "TimestampedWindowStoreBuilder",
]

"""Session stores: in-memory bytes stores, typed views, suppliers and builders (``Stores`` makes them).

The bytes stores reproduce Kafka's ``InMemorySessionStore`` and, held in memory, its RocksDB session store's rules
(``org.apache.kafka.streams.state.internals``): sessions expire by their end (``expiry.py``), and iterate by
session end, then key bytes, then session start **descending** (Kafka's forward order); the backward variants
reverse all three. Reads return snapshots (lists), so a processor may write while it iterates.
"""
from __future__ import annotations

import bisect
import logging
from operator import itemgetter
from typing import Any, Callable, Generic, Optional, TypeVar

from streams_on_spark.errors import UnsupportedOperationError
from streams_on_spark.keyvalue import KeyValue
from streams_on_spark.state.caching import CachingSessionBytesStore, FlushListener
from streams_on_spark.state.expiry import Expiring, Segmented, check_store_name, sub_keys
from streams_on_spark.state.stores import (
    INVALID_RANGE_WARNING,
    KeyValueIterator,
    SerdeStore,
    StateStore,
    StoreBuilder,
    invalid_range,
)
from streams_on_spark.window import (
    LONG_MAX,
    SessionWindow,
    Windowed,
)

log = logging.getLogger(__name__)

K = TypeVar("K")
V = TypeVar("V")


def _session_order(row: tuple) -> tuple[int, bytes, int]:
    """Kafka's forward order of the in-memory session store, as a sort key of a ``(key bytes, start, end, ...)`` row:
    end, then key bytes, then start descending."""
    return row[2], row[0], -row[1]


def check_fetch_range(key_from: Optional[bytes], key_to: Optional[bytes]) -> None:
    """Kafka's in-memory session store fetches a key range through a ``subMap``, which refuses ``from > to``."""
    if key_from is not None and key_to is not None and key_from > key_to:
        raise ValueError("fromKey > toKey")


class InMemorySessionBytesStore(Expiring, StateStore):
    """Sessions ``end -> key bytes -> start -> aggregate bytes`` (Kafka's ``InMemorySessionStore``)."""

    #: whether Kafka's store answers ``findSessions(earliestSessionEndTime, latestSessionEndTime)`` (its RocksDB
    #: session store does not)
    finds_sessions_by_end_time = True

    #: the orders of ``find_sessions``/``fetch_keys`` and of ``find_sessions_by_end_time`` (as sort keys of a row)
    session_order = staticmethod(_session_order)
    end_time_order = staticmethod(_session_order)

    def __init__(self, name: str, retention_period_ms: int) -> None:
        self.name = name
        self.retention_period_ms = retention_period_ms
        self._ends: dict[int, dict[bytes, dict[int, bytes]]] = {}
        self._sorted: dict[int, list[bytes]] = {}
        self._init_times()

    def _remove_expired_segments(self) -> None:
        times = self._times
        cut = bisect.bisect_left(times, self._min_live_time())
        if cut:
            for t in times[:cut]:
                del self._ends[t]
                self._sorted.pop(t, None)
            del times[:cut]

    def _keys(self, end: int) -> list[bytes]:
        keys = self._sorted.get(end)
        if keys is None:
            keys = self._sorted[end] = sorted(self._ends[end])
        return keys

    def put(self, key: bytes, start: int, end: int, aggregate: Optional[bytes]) -> None:
        """Store the session ``[start, end]`` of ``key``; None removes it. Skipped when its end has expired."""
        if not self._admit(end):
            return
        if aggregate is None:
            self.remove(key, start, end)
            return
        key_map = self._ends.get(end)
        if key_map is None:
            key_map = self._ends[end] = {}
            bisect.insort(self._times, end)
        starts = key_map.get(key)
        if starts is None:
            starts = key_map[key] = {}
            keys = self._sorted.get(end)
            if keys is not None:
                bisect.insort(keys, key)
        starts[start] = aggregate

    def remove(self, key: bytes, start: int, end: int) -> None:
        """Delete the session ``[start, end]`` of ``key`` (no retention check, as in Kafka)."""
        key_map = self._ends.get(end)
        if key_map is None:
            return
        starts = key_map.get(key)
        if starts is None:
            return
        starts.pop(start, None)
        if not starts:
            del key_map[key]
            keys = self._sorted.get(end)
            if keys is not None:
                del keys[bisect.bisect_left(keys, key)]
            if not key_map:
                self._sorted.pop(end, None)
                del self._ends[end]
                self._times.remove(end)

    def fetch_session(self, key: bytes, start: int, end: int) -> Optional[bytes]:
        self._remove_expired_segments()
        if end > self.observed_stream_time - self.retention_period_ms:
            starts = self._ends.get(end, {}).get(key)
            if starts is not None:
                return starts.get(start)
        return None

    def find_sessions(self, key_from: Optional[bytes], key_to: Optional[bytes], earliest_session_end_time: int,
                      latest_session_start_time: int, forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        """``(key, start, end, aggregate)`` of sessions with ``end >= earliest_end`` and ``start <= latest_start``.

        Forward order: end ascending, key bytes ascending, start descending; backward reverses each level.
        """
        self._remove_expired_segments()
        if key_from is not None and key_to is not None and key_from > key_to:
            log.warning(INVALID_RANGE_WARNING)
            return []
        times = self._times
        ends = times[bisect.bisect_left(times, earliest_session_end_time):]
        return self._scan(key_from, key_to, latest_session_start_time, ends if forward else ends[::-1], forward)

    def find_sessions_by_end_time(self, earliest_session_end_time: int, latest_session_end_time: int,
                                  forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        """Sessions of every key whose end is in ``[earliest_end, latest_end]`` (Kafka's 2-argument findSessions)."""
        self._remove_expired_segments()
        return self._scan(None, None, LONG_MAX,
                          self._times_between(earliest_session_end_time, latest_session_end_time, forward), forward)

    def fetch_keys(self, key_from: Optional[bytes], key_to: Optional[bytes],
                   forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        """Every session of the keys in ``[key_from, key_to]`` (None = open); ``key_from > key_to`` fails, as in
        Kafka's in-memory store (its ``subMap``)."""
        self._remove_expired_segments()
        check_fetch_range(key_from, key_to)
        times = self._times
        return self._scan(key_from, key_to, LONG_MAX, times if forward else times[::-1], forward)

    def _scan(self, key_from: Optional[bytes], key_to: Optional[bytes], latest_start: int, ends: list[int],
              forward: bool) -> list[tuple[bytes, int, int, bytes]]:
        out: list[tuple[bytes, int, int, bytes]] = []
        for end in ends:
            key_map = self._ends[end]
            keys = sub_keys(self._keys(end), key_from, key_to)
            for key in (keys if forward else reversed(keys)):
                starts = key_map[key]
                selected = sorted((s for s in starts if s <= latest_start), reverse=forward)
                out.extend((key, s, end, starts[s]) for s in selected)
        return out

    def approximate_num_entries(self) -> int:
        return sum(len(starts) for key_map in self._ends.values() for starts in key_map.values())

    def entries(self) -> dict[str, Any]:
        """Plain-builtin state for snapshots: stream time and ``{end: {key: {start: aggregate}}}``."""
        return {"observed_stream_time": self.observed_stream_time, "sessions": self._ends}

    def restore(self, entries: dict[str, Any]) -> None:
        """Load what :meth:`entries` returned (replaces the current content)."""
        self.observed_stream_time = entries["observed_stream_time"]
        self._ends = {end: {k: dict(starts) for k, starts in key_map.items() if starts}
                      for end, key_map in entries["sessions"].items()}
        self._ends = {end: key_map for end, key_map in self._ends.items() if key_map}
        self._times = sorted(self._ends)
        self._sorted = {}

    def close(self) -> None:
        self._ends.clear()
        self._sorted.clear()
        self._times.clear()

    def __repr__(self) -> str:
        return f"InMemorySessionBytesStore({self.name!r})"


class SessionStore(SerdeStore, Generic[K, V]):
    """A typed session store: keys are :class:`Windowed` with a :class:`SessionWindow` (both bounds inclusive)."""

    def __init__(self, inner: InMemorySessionBytesStore, key_serde: Any = None, value_serde: Any = None) -> None:
        self._init_serdes(inner, key_serde, value_serde)

    @property
    def retention_period_ms(self) -> int:
        return self.inner.retention_period_ms

    @property
    def observed_stream_time(self) -> int:
        return self.inner.observed_stream_time

    def _check(self, session_key: Windowed[K]) -> None:
        if session_key is None:
            raise ValueError(f"sessionKey cannot be null (store {self.name})")

    def put(self, session_key: Windowed[K], aggregate: Optional[V]) -> None:
        """Store ``aggregate`` for the session; None removes it."""
        self._check(session_key)
        w = session_key.window
        kb, data = self._kser(session_key.key), self._vser(aggregate)
        if self._cached:   # the cache hands the objects back on flush
            self.inner.put(kb, w.start, w.end, data, (session_key, aggregate))
        else:
            self.inner.put(kb, w.start, w.end, data)

    def remove(self, session_key: Windowed[K]) -> None:
        self._check(session_key)
        w = session_key.window
        if self._cached:
            self.inner.remove(self._kser(session_key.key), w.start, w.end, (session_key, None))
        else:
            self.inner.remove(self._kser(session_key.key), w.start, w.end)

    def _flush_adapter(self, listener: Callable[..., None]) -> FlushListener:
        """Kafka's ``SessionCacheFlushListener`` input: the session key, its aggregates and its end as timestamp."""
        def flushed(cache_key: tuple[bytes, int, int], new: Optional[bytes], old: Optional[bytes], timestamp: int,
                    headers: Any, typed: Any) -> None:
            if typed is None:
                kb, start, end = cache_key
                session_key, new_value = Windowed(self._kde(kb), SessionWindow(start, end)), self._vde(new)
            else:
                session_key, new_value = typed
            listener(session_key, new_value, session_key.window.end, self._vde(old), timestamp, headers)
        return flushed

    def fetch_session(self, key: K, session_start_time: int, session_end_time: int) -> Optional[V]:
        """The aggregate of exactly the session ``[start, end]`` of ``key``, or None."""
        return self._vde(self.inner.fetch_session(self._kser(key), session_start_time, session_end_time))

    def _rows(self, rows: list[tuple[bytes, int, int, bytes]]) -> KeyValueIterator:
        kde, vde = self._kde, self._vde
        return KeyValueIterator([KeyValue(Windowed(kde(k), SessionWindow(s, e)), vde(v)) for k, s, e, v in rows])

    def find_sessions(self, *args: Any) -> KeyValueIterator:
        """Kafka's overloads, dispatched on the number of arguments: ``find_sessions(key, earliest_session_end_time,
        latest_session_start_time)`` — the sessions of ``key`` with ``end >= earliest_end`` and ``start <=
        latest_start`` (those a record within the inactivity gap would merge with); ``find_sessions(key_from, key_to,
        earliest_session_end_time, latest_session_start_time)`` for keys in ``[key_from, key_to]`` (None = open);
        ``find_sessions(earliest_session_end_time, latest_session_end_time)`` — every session ending in that range,
        on the stores that support it as Kafka's (in-memory and time-ordered, uncached)."""
        if len(args) == 2:
            if not getattr(self.inner, "finds_sessions_by_end_time", False):
                raise UnsupportedOperationError("This API is not supported by this implementation of SessionStore.")
            return self.find_sessions_by_end_time(*args)
        return self._find(args, "find_sessions", True)

    def backward_find_sessions(self, *args: Any) -> KeyValueIterator:
        """``find_sessions``' 3- and 4-argument forms in the reverse order."""
        return self._find(args, "backward_find_sessions", False)

    def _find(self, args: tuple, method: str, forward: bool) -> KeyValueIterator:
        if len(args) == 3:
            key, earliest_end, latest_start = args
            kb = self._kser(key)
            return self._rows(self.inner.find_sessions(kb, kb, earliest_end, latest_start, forward))
        if len(args) == 4:
            key_from, key_to, earliest_end, latest_start = args
            return self._rows(self.inner.find_sessions(self._kser_opt(key_from), self._kser_opt(key_to),
                                                       earliest_end, latest_start, forward))
        raise TypeError(f"{method}() takes {'2, ' if forward else ''}3 or 4 arguments ({len(args)} given)")

    def find_sessions_by_end_time(self, earliest_session_end_time: int,
                                  latest_session_end_time: int) -> KeyValueIterator:
        """Sessions of all keys ending in ``[earliest_end, latest_end]`` (what emit-final scans, on any store)."""
        return self._rows(self.inner.find_sessions_by_end_time(earliest_session_end_time, latest_session_end_time))

    def fetch(self, *args: Any) -> KeyValueIterator:
        """``fetch(key)``: every session of ``key``; ``fetch(key_from, key_to)``: of the keys in ``[key_from,
        key_to]`` (None = open)."""
        return self._fetch(args, "fetch", True)

    def backward_fetch(self, *args: Any) -> KeyValueIterator:
        """``fetch``'s forms in the reverse order."""
        return self._fetch(args, "backward_fetch", False)

    def _fetch(self, args: tuple, method: str, forward: bool) -> KeyValueIterator:
        if len(args) == 1:
            kb = self._kser(args[0])
            return self._rows(self.inner.fetch_keys(kb, kb, forward))
        if len(args) == 2:
            return self._rows(self.inner.fetch_keys(self._kser_opt(args[0]), self._kser_opt(args[1]), forward))
        raise TypeError(f"{method}() takes 1 or 2 arguments ({len(args)} given)")

    def all(self) -> KeyValueIterator:
        """Every session, in Kafka's forward order; a snapshot."""
        return self._rows(self.inner.fetch_keys(None, None))

    def backward_all(self) -> KeyValueIterator:
        return self._rows(self.inner.fetch_keys(None, None, False))


class SessionBytesStoreSupplier:
    """Makes the bytes store a session-store builder wraps (``Stores.in_memory_session_store``)."""

    def __init__(self, name: str, retention_period_ms: int) -> None:
        self.name = check_store_name(name)
        self.retention_period_ms = retention_period_ms

    def get(self) -> InMemorySessionBytesStore:
        return InMemorySessionBytesStore(self.name, self.retention_period_ms)

    def metrics_scope(self) -> str:
        return "in-memory-session"

    def __repr__(self) -> str:
        return f"InMemorySessionBytesStoreSupplier({self.name!r}, retentionPeriod={self.retention_period_ms})"


class PersistentSessionBytesStore(Segmented, InMemorySessionBytesStore):
    """Kafka's RocksDB session store as its readers see it (the DSL default, ``Stores.persistentSessionStore``),
    held in memory: segmented by session end, lookups see only sessions ending after stream time - retention
    (``getActualFrom``), multi-key reads go segment by segment in ``SessionKeySchema`` order (key bytes, end,
    start)."""

    finds_sessions_by_end_time = False

    def __init__(self, name: str, retention_period_ms: int) -> None:
        super().__init__(name, retention_period_ms)
        self._init_segments()

    def session_order(self, row: tuple) -> tuple:
        """Multi-key read order as a sort key of a ``(key bytes, start, end, ...)`` row."""
        return self._segment_id(row[2]), row[0], row[2], row[1]

    def _unexpired(self, rows: list[tuple[bytes, int, int, bytes]], order: Callable[[tuple], Any],
                   forward: bool) -> list[tuple[bytes, int, int, bytes]]:
        expired = self.observed_stream_time - self.retention_period_ms
        return sorted((row for row in rows if row[2] > expired), key=order, reverse=not forward)

    def find_sessions(self, key_from: Optional[bytes], key_to: Optional[bytes], earliest_session_end_time: int,
                      latest_session_start_time: int, forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        return self._unexpired(super().find_sessions(key_from, key_to, earliest_session_end_time,
                                                     latest_session_start_time, forward), self.session_order, forward)

    def fetch_keys(self, key_from: Optional[bytes], key_to: Optional[bytes],
                   forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        """As the in-memory store's, but ``key_from > key_to`` reads nothing (with Kafka's warning)."""
        if invalid_range(key_from, key_to):
            return []
        return self._unexpired(super().fetch_keys(key_from, key_to, forward), self.session_order, forward)

    def end_time_order(self, row: tuple) -> tuple:
        """``find_sessions_by_end_time`` order as a sort key of a row."""
        return self.session_order(row)

    def find_sessions_by_end_time(self, earliest_session_end_time: int, latest_session_end_time: int,
                                  forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        rows = super().find_sessions_by_end_time(earliest_session_end_time, latest_session_end_time, forward)
        return sorted(rows, key=self.end_time_order, reverse=not forward)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class TimeOrderedSessionBytesStore(PersistentSessionBytesStore):
    """The session store of an ON_WINDOW_CLOSE aggregation, read as Kafka's default one for it (the time-ordered
    ``RocksDbTimeOrderedSessionBytesStoreSupplier``): as the persistent store, but emission by end time reads
    every session of the live segments in time-first key order (end, start, key bytes), without the retention
    check lookups make."""

    end_time_order = staticmethod(itemgetter(2, 1, 0))   # type: ignore[assignment]
    finds_sessions_by_end_time = True


class PersistentSessionBytesStoreSupplier(SessionBytesStoreSupplier):
    """Makes :class:`PersistentSessionBytesStore` s (``Stores.persistent_session_store``): RocksDB's rules, held in
    memory in the driver; on Spark the task's local RocksDB keeps them (``state/local_windows.py``)."""

    def get(self) -> PersistentSessionBytesStore:
        return PersistentSessionBytesStore(self.name, self.retention_period_ms)

    def metrics_scope(self) -> str:
        return "rocksdb-session"

    def __repr__(self) -> str:
        return f"PersistentSessionBytesStoreSupplier({self.name!r}, retentionPeriod={self.retention_period_ms})"


class TimeOrderedSessionBytesStoreSupplier(SessionBytesStoreSupplier):
    """Makes :class:`TimeOrderedSessionBytesStore` s: the default session store of ON_WINDOW_CLOSE aggregations."""

    def get(self) -> TimeOrderedSessionBytesStore:
        return TimeOrderedSessionBytesStore(self.name, self.retention_period_ms)


class SessionStoreBuilder(StoreBuilder):
    """Builds a :class:`SessionStore` per task (Kafka's ``SessionStoreBuilder``)."""

    own_suppliers = (SessionBytesStoreSupplier, PersistentSessionBytesStoreSupplier,
                     TimeOrderedSessionBytesStoreSupplier)

    def __init__(self, supplier: SessionBytesStoreSupplier, key_serde: Any = None, value_serde: Any = None) -> None:
        if supplier is None:
            raise ValueError("supplier cannot be null")
        self.supplier = supplier
        self.name = supplier.name
        self.key_serde = key_serde
        self.value_serde = value_serde
        self.logging_enabled = True

    def retention_period(self) -> int:
        return self.supplier.retention_period_ms

    def build(self, bytes_store: Any = None) -> SessionStore:
        """The typed store over ``bytes_store``, or over a new store from the supplier."""
        inner = self.supplier.get() if bytes_store is None else bytes_store
        return SessionStore(CachingSessionBytesStore(inner) if self.caching_enabled else inner, self.key_serde,
                            self.value_serde)


__all__ = [
    "InMemorySessionBytesStore",
    "SessionStore",
    "SessionBytesStoreSupplier",
    "PersistentSessionBytesStore",
    "TimeOrderedSessionBytesStore",
    "PersistentSessionBytesStoreSupplier",
    "TimeOrderedSessionBytesStoreSupplier",
    "SessionStoreBuilder",
]

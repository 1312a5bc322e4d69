"""Session stores: the bytes store over an ordered bytes table, typed views, suppliers and builders (``Stores`` makes
them).

One bytes store, :class:`SessionBytesStore`, reproduces Kafka's ``InMemorySessionStore``, its RocksDB session store
and the time-ordered one (``org.apache.kafka.streams.state.internals``) over an ordered bytes table under
``SessionKeySchema`` (``key_schemas.py``): in memory in the in-process engine, the task's local RocksDB on Spark.
Sessions expire by their end (``expiry.py``); the in-memory store iterates by session end, then key bytes, then
session start **descending** (Kafka's forward order), the RocksDB ones segment by segment by key bytes, end, start;
the backward variants reverse all. Reads return snapshots (lists), so a processor may write while it iterates.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Generic, Optional, TypeVar

from streams_on_spark.errors import UnsupportedOperationError
from streams_on_spark.keyvalue import KeyValue
from streams_on_spark.state.caching import CachingSessionBytesStore, FlushListener
from streams_on_spark.state.expiry import SegmentedBytesStore, SegmentedStoreBuilder, check_store_name, ordered
from streams_on_spark.state.key_schemas import SessionKeySchema, kafka_segment_interval
from streams_on_spark.state.stores import (
    KeyValueIterator,
    SerdeStore,
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


class SessionBytesStore(SegmentedBytesStore):
    """Sessions ``(key bytes, start, end) -> aggregate bytes`` in an ordered bytes table (Kafka's session stores).

    The kinds differ only in their rules: Kafka's ``InMemorySessionStore`` (the default: per-record expiry by
    session end; reads by end, key bytes, start descending; ``fetch`` refuses ``from > to``); its RocksDB store
    (``segmented``: segment expiry, lookups see only sessions ending after stream time - retention
    (``getActualFrom``), multi-key reads segment by segment in ``SessionKeySchema`` order (key bytes, end, start), no
    ``findSessions`` by end time); the time-ordered one of ON_WINDOW_CLOSE aggregations (``segmented`` and
    ``time_ordered``, Kafka's ``RocksDbTimeOrderedSessionBytesStoreSupplier``: as the RocksDB store, but emission by
    end time reads every session of the live segments in time-first order (end, start, key bytes), without the
    retention check lookups make).
    """

    def __init__(self, name: str, retention_period_ms: int, segmented: bool = False, time_ordered: bool = False,
                 table: Any = None) -> None:
        self._init_table(name, retention_period_ms, segmented, table,
                         SessionKeySchema(kafka_segment_interval(retention_period_ms)))
        #: whether Kafka's store answers ``findSessions(earliestSessionEndTime, latestSessionEndTime)`` (its RocksDB
        #: session store does not)
        self.finds_sessions_by_end_time = time_ordered or not segmented
        self.time_ordered = time_ordered

    def session_order(self, row: tuple) -> tuple:
        """The order of ``find_sessions``/``fetch_keys`` as a sort key of a ``(key bytes, start, end, ...)`` row."""
        if self.segmented:
            return self._segment_id(row[2]), row[0], row[2], row[1]
        return _session_order(row)

    def end_time_order(self, row: tuple) -> tuple:
        """The order of ``find_sessions_by_end_time`` as a sort key of a row."""
        if self.time_ordered:
            return row[2], row[1], row[0]
        return self.session_order(row)

    def _time_of(self, composite: bytes) -> int:
        return self.schema.from_store_key(composite)[2]

    def put(self, key: bytes, start: int, end: int, aggregate: Optional[bytes]) -> bool:
        """Store the session ``[start, end]`` of ``key``; None removes it. Skipped when its end has expired. Returns
        whether Kafka's store of this kind takes the put into its position (``StoreQueryUtils.updatePosition``): the
        in-memory store every put, an expired one too; RocksDB's a put it stores."""
        if not self._admit(end):
            return not self.segmented
        self._table.put(self.schema.to_store_key(key, start, end), aggregate)
        return True

    def remove(self, key: bytes, start: int, end: int) -> None:
        """Delete the session ``[start, end]`` of ``key`` (no retention check, as in Kafka). Neither of Kafka's stores
        takes a remove into its position (the in-memory one's ``remove`` does not update it, RocksDB's deletes from
        a segment, which keeps none)."""
        self._table.put(self.schema.to_store_key(key, start, end), None)

    def fetch_session(self, key: bytes, start: int, end: int) -> Optional[bytes]:
        self._remove_expired_segments()
        if end <= self.observed_stream_time - self.retention_period_ms or end < self._min_live_time():
            return None
        return self._table.get(self.schema.to_store_key(key, start, end))

    def _rows(self, key_from: Optional[bytes], key_to: Optional[bytes], earliest_end: int, latest_end: int,
              latest_start: int) -> list[tuple[bytes, int, int, bytes]]:
        """``(key bytes, start, end, aggregate)`` of live sessions, in table order."""
        lo, hi = max(earliest_end, self._min_live_time()), min(latest_end, self.observed_stream_time)
        if hi < lo:
            return []
        decode = self.schema.from_store_key
        out: list[tuple[bytes, int, int, bytes]] = []
        for composite, value in self.schema.scan(self._table, key_from, key_to, lo, hi):
            key, start, end = decode(composite)
            if lo <= end <= hi and start <= latest_start:
                out.append((key, start, end, value))
        return out

    def _unexpired(self, rows: list[tuple[bytes, int, int, bytes]]) -> list[tuple[bytes, int, int, bytes]]:
        """A segmented store's lookups see only sessions ending after stream time - retention."""
        if not self.segmented:
            return rows
        expired = self.observed_stream_time - self.retention_period_ms
        return [row for row in rows if row[2] > expired]

    def find_sessions(self, key_from: Optional[bytes], key_to: Optional[bytes], earliest_session_end_time: int,
                      latest_session_start_time: int, forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        """``(key, start, end, aggregate)`` of sessions with ``end >= earliest_end`` and ``start <= latest_start``,
        in :meth:`session_order` (backward reverses it)."""
        self._remove_expired_segments()
        if invalid_range(key_from, key_to):
            return []
        rows = self._rows(key_from, key_to, earliest_session_end_time, LONG_MAX, latest_session_start_time)
        return ordered(self._unexpired(rows), self.session_order, forward)

    def find_sessions_by_end_time(self, earliest_session_end_time: int, latest_session_end_time: int,
                                  forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        """Sessions of every key whose end is in ``[earliest_end, latest_end]`` (Kafka's 2-argument findSessions)."""
        self._remove_expired_segments()
        rows = self._rows(None, None, earliest_session_end_time, latest_session_end_time, LONG_MAX)
        return ordered(rows, self.end_time_order, forward)

    def fetch_keys(self, key_from: Optional[bytes], key_to: Optional[bytes],
                   forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        """Every session of the keys in ``[key_from, key_to]`` (None = open); ``key_from > key_to`` fails in the
        in-memory store, as Kafka's (its ``subMap``), and reads nothing in a segmented one (with Kafka's warning)."""
        self._remove_expired_segments()
        if self.segmented:
            if invalid_range(key_from, key_to):
                return []
        else:
            check_fetch_range(key_from, key_to)
        rows = self._rows(key_from, key_to, self._min_live_time(), LONG_MAX, LONG_MAX)
        return ordered(self._unexpired(rows), self.session_order, forward)

    def restore(self, entries: dict[str, Any]) -> None:
        """Load :meth:`entries`; a snapshot written by an older version (``{end: {key: {start: aggregate}}}`` under
        ``sessions``) moves its sessions into the table."""
        super().restore(entries)
        for end, key_map in entries.get("sessions", {}).items():
            for key, starts in key_map.items():
                for start, aggregate in starts.items():
                    self._table.put(self.schema.to_store_key(key, start, end), aggregate)


class SessionStore(SerdeStore, Generic[K, V]):
    """A typed session store: keys are :class:`Windowed` with a :class:`SessionWindow` (both bounds inclusive)."""

    def __init__(self, inner: SessionBytesStore, key_serde: Any = None, value_serde: Any = None) -> None:
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
        if self._cached:   # the cache hands the objects back on flush, and the position moves then
            self.inner.put(kb, w.start, w.end, data, (session_key, aggregate))
        elif self.inner.put(kb, w.start, w.end, data):
            self._written()

    def remove(self, session_key: Windowed[K]) -> None:
        """Remove the session; the position stays (Kafka's stores), unless a cache flushes the removal as a put."""
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
    """Makes the bytes store a session-store builder wraps (``Stores.in_memory_session_store``): Kafka's in-memory
    store's rules."""

    #: RocksDB's rules (segment expiry, lookups within retention, read order)
    segmented = False
    #: the time-ordered store's emission by end time
    time_ordered = False

    def __init__(self, name: str, retention_period_ms: int) -> None:
        self.name = check_store_name(name)
        self.retention_period_ms = retention_period_ms

    def get(self, table: Any = None) -> SessionBytesStore:
        """A store over ``table`` (an engine's ordered bytes table), or over a new in-memory one."""
        return SessionBytesStore(self.name, self.retention_period_ms, self.segmented, self.time_ordered, table)

    def metrics_scope(self) -> str:
        return "in-memory-session"

    def __repr__(self) -> str:
        return f"InMemorySessionBytesStoreSupplier({self.name!r}, retentionPeriod={self.retention_period_ms})"


class PersistentSessionBytesStoreSupplier(SessionBytesStoreSupplier):
    """Makes session stores with Kafka's RocksDB store's rules (``Stores.persistent_session_store``), held in memory
    in the driver, in the task's local RocksDB on Spark."""

    segmented = True

    def metrics_scope(self) -> str:
        return "rocksdb-session"

    def __repr__(self) -> str:
        return f"PersistentSessionBytesStoreSupplier({self.name!r}, retentionPeriod={self.retention_period_ms})"


class TimeOrderedSessionBytesStoreSupplier(SessionBytesStoreSupplier):
    """Makes the default session store of ON_WINDOW_CLOSE aggregations (Kafka's time-ordered one)."""

    segmented = True
    time_ordered = True


class SessionStoreBuilder(SegmentedStoreBuilder):
    """Builds a :class:`SessionStore` per task (Kafka's ``SessionStoreBuilder``)."""

    store_type: Callable[..., SessionStore] = SessionStore
    own_suppliers = (SessionBytesStoreSupplier, PersistentSessionBytesStoreSupplier,
                     TimeOrderedSessionBytesStoreSupplier)

    def build(self, bytes_store: Any = None) -> SessionStore:
        """The typed store over ``bytes_store``, or over a new store from the supplier."""
        inner = self.supplier.get() if bytes_store is None else bytes_store
        return self.store_type(CachingSessionBytesStore(inner) if self.caching_enabled else inner, self.key_serde,
                               self.value_serde)


__all__ = [
    "SessionBytesStore",
    "SessionStore",
    "SessionBytesStoreSupplier",
    "PersistentSessionBytesStoreSupplier",
    "TimeOrderedSessionBytesStoreSupplier",
    "SessionStoreBuilder",
]

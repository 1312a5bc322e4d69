"""Window and session stores whose entries live in an ordered bytes table: a column family of the task's local
RocksDB on Spark (:class:`~streams_on_spark.state.local.LocalKeyValueBytesStore`), or an in-memory table for an
offline copy.

The rules are the in-memory classes' (``window_stores.py``: retention, segment expiry, read orders), inherited; only
where the entries live differs. Entries are kept under composite keys whose byte order is the order of the tuple

- window store:  ``(segment, key bytes, window start[, sequence number])``
- session store: ``(segment, key bytes, session end, session start)``

(the key escaped order-preservingly, ``0x00 -> 0x00 0xff`` and a ``0x00 0x00`` terminator; times offset so negative
ones sort first), so reading one key touches only that key's entries, a key range is an exact table range, and
Kafka's RocksDB stores' own read order (segment, key, time) comes out of the table as it is. Segments are Kafka's,
``max(retention / 2, 60 s)`` wide; whole expired segments leave with one range deletion. A store's stream time and
sequence number are all it puts in the task's snapshot, so a batch costs what it reads and writes.
"""
from __future__ import annotations

import logging
import struct
from typing import Any, Callable, Optional

from streams_on_spark.window import LONG_MAX
from streams_on_spark.state.stores import INVALID_RANGE_WARNING
from streams_on_spark.state.stores import ordered_time as _time
from streams_on_spark.state.stores import time_of as _untime
from streams_on_spark.state.session_stores import (
    InMemorySessionBytesStore,
    PersistentSessionBytesStore,
    PersistentSessionBytesStoreSupplier,
    SessionBytesStoreSupplier,
    TimeOrderedSessionBytesStore,
    TimeOrderedSessionBytesStoreSupplier,
    check_fetch_range,
)
from streams_on_spark.state.window_stores import (
    InMemoryWindowBytesStore,
    PersistentWindowBytesStore,
    PersistentWindowBytesStoreSupplier,
    WindowBytesStoreSupplier,
)

log = logging.getLogger(__name__)

_SEQ = struct.Struct(">i")    # a retained duplicate's sequence number, as the in-memory store's
_HIGH = b"\xff" * 16          # above every time and sequence suffix


def _escape(key: bytes) -> bytes:
    """``key`` so that escaped keys, followed by anything, sort as the keys do (and none is a prefix of another)."""
    return key.replace(b"\x00", b"\x00\xff") + b"\x00\x00"


def _unescape(part: bytes) -> bytes:
    return part[:-2].replace(b"\x00\xff", b"\x00")


class _Table:
    """Entries in a table, in segments: the storage both local stores share."""

    retention_period_ms: int
    _min_live_time: Callable[[], int]

    def attach(self, table: Any) -> None:
        """Keep the entries in ``table`` (``get``/``put``/``range``/``delete_below``/``approximate_num_entries``)."""
        self._table = table
        self._interval = max(self.retention_period_ms // 2, 60_000)
        self._floor: Optional[int] = None   # the lowest live segment this instance has told the table

    def _segment(self, t: int) -> int:
        """Java's ``t / interval`` (rounds toward zero), as Kafka's segments."""
        interval = self._interval
        return t // interval if t >= 0 else -(-t // interval)

    def _remove_expired_segments(self) -> None:
        segment = self._segment(self._min_live_time())
        if self._floor is None or segment > self._floor:
            self._floor = segment
            self._table.delete_below(_time(segment))

    def _table_scan(self, key_from: Optional[bytes], key_to: Optional[bytes], lo: int, hi: int,
              suffix: int) -> list[tuple[bytes, bytes]]:
        """Raw ``(composite, value)`` entries of segments ``lo..hi`` (times) with keys in ``[key_from, key_to]``,
        in table order; one key reads from its ``lo`` time on."""
        table = self._table
        first, last = self._segment(lo), self._segment(hi)
        if key_from is None and key_to is None:
            return table.range(_time(first), _time(last + 1))
        out: list[tuple[bytes, bytes]] = []
        single = _escape(key_from) if key_from is not None and key_from == key_to else None
        for segment in range(first, last + 1):
            prefix = _time(segment)
            if single is not None:
                out.extend(table.range(prefix + single + _time(lo), prefix + single + _time(hi) + _HIGH[:suffix - 8]))
                continue
            lower = prefix + _escape(key_from) if key_from is not None else prefix
            upper = prefix + _escape(key_to) + _HIGH[:suffix] if key_to is not None else _time(segment + 1)
            out.extend(table.range(lower, upper))
        return out

    def approximate_num_entries(self) -> int:
        return self._table.approximate_num_entries()

    def close(self) -> None:
        """Nothing to release: the table belongs to the task's local store."""


def _ordered(rows: list, order: Optional[Callable[[tuple], Any]], forward: bool) -> list:
    """``rows`` (in table order) in a store's read ``order`` (None: table order), reversed when not ``forward``."""
    if order is not None:
        rows.sort(key=order)
    if not forward:
        rows.reverse()
    return rows


class LocalWindowBytesStore(_Table, InMemoryWindowBytesStore):
    """An in-memory window store's behaviour over a table: ``segment | key | start [| seq]`` keys."""

    #: whether the table order (segment, key, start) is the store's multi-key read order
    table_ordered = False

    def _suffix(self) -> int:
        return 12 if self.retain_duplicates else 8

    def _key(self, key: bytes, start: int) -> bytes:
        return _time(self._segment(start)) + _escape(key) + _time(start)

    def put(self, key: bytes, value: Optional[bytes], window_start_timestamp: int) -> None:
        if not self._admit(window_start_timestamp):
            return
        if value is not None:
            composite = self._key(key, window_start_timestamp)
            if self.retain_duplicates:
                self.seqnum = (self.seqnum + 1) & 0x7FFFFFFF
                composite += _SEQ.pack(self.seqnum)
            self._table.put(composite, value)
        elif not self.retain_duplicates:
            self._table.put(self._key(key, window_start_timestamp), None)

    def fetch(self, key: bytes, window_start_timestamp: int) -> Optional[bytes]:
        self._remove_expired_segments()
        if window_start_timestamp <= self._retention_cut() or window_start_timestamp < self._min_live_time():
            return None
        return self._table.get(self._key(key, window_start_timestamp))

    def _bounds(self, time_from: int, time_to: int) -> tuple[int, int]:
        """The window starts a read may see: within retention and live segments, not after stream time."""
        return max(self._min_time(time_from), self._min_live_time()), min(time_to, self.observed_stream_time)

    def _rows(self, key_from: Optional[bytes], key_to: Optional[bytes], lo: int,
              hi: int) -> list[tuple[bytes, int, bytes]]:
        """``(key bytes, start, value)`` with starts in ``[lo, hi]``, in table order."""
        suffix = self._suffix()
        out: list[tuple[bytes, int, bytes]] = []
        for composite, value in self._table_scan(key_from, key_to, lo, hi, suffix):
            at = len(composite) - suffix
            start = _untime(composite[at:at + 8])
            if lo <= start <= hi:
                out.append((_unescape(composite[8:at]), start, value))
        return out

    def fetch_key(self, key: bytes, time_from: int, time_to: int, forward: bool = True) -> list[tuple[int, bytes]]:
        self._remove_expired_segments()
        lo, hi = self._bounds(time_from, time_to)
        if hi < lo:
            return []
        return _ordered([(start, value) for _, start, value in self._rows(key, key, lo, hi)], None, forward)

    def fetch_keys(self, key_from: Optional[bytes], key_to: Optional[bytes], time_from: int, time_to: int,
                   forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        self._remove_expired_segments()
        if key_from is not None and key_to is not None and key_from > key_to:
            log.warning(INVALID_RANGE_WARNING)
            return []
        lo, hi = self._bounds(time_from, time_to)
        if hi < lo:
            return []
        return self._ordered(self._rows(key_from, key_to, lo, hi), forward)

    def fetch_all(self, time_from: int, time_to: int, forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        return self.fetch_keys(None, None, time_from, time_to, forward)

    def all(self, forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        self._remove_expired_segments()
        lo = max(self._retention_cut() + 1, self._min_live_time())
        hi = self.observed_stream_time
        return [] if hi < lo else self._ordered(self._rows(None, None, lo, hi), forward)

    def _ordered(self, rows: list[tuple[bytes, int, bytes]], forward: bool) -> list[tuple[bytes, int, bytes]]:
        return _ordered(rows, None if self.table_ordered else self.window_order, forward)

    def entries(self) -> dict[str, Any]:
        """For the task's snapshot: stream time and sequence number (the entries are the table's)."""
        return {"observed_stream_time": self.observed_stream_time, "seqnum": self.seqnum}

    def restore(self, entries: dict[str, Any]) -> None:
        """Load :meth:`entries`; a snapshot from the in-memory store (an older version) moves its windows into the
        table."""
        self.observed_stream_time = entries["observed_stream_time"]
        self.seqnum = entries["seqnum"]
        for start, segment in entries.get("segments", {}).items():
            for key, value in segment.items():
                if self.retain_duplicates:
                    self._table.put(self._key(key[:-4], start) + key[-4:], value)
                else:
                    self._table.put(self._key(key, start), value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class LocalPersistentWindowBytesStore(PersistentWindowBytesStore, LocalWindowBytesStore):
    """Kafka's RocksDB window store's behaviour (``PersistentWindowBytesStore``) over a table."""

    def _ordered(self, rows: list[tuple[bytes, int, bytes]], forward: bool) -> list[tuple[bytes, int, bytes]]:
        return _ordered(rows, self.window_order if self.time_first else None, forward)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class LocalSessionBytesStore(_Table, InMemorySessionBytesStore):
    """An in-memory session store's behaviour over a table: ``segment | key | end | start`` keys."""

    def _key(self, key: bytes, start: int, end: int) -> bytes:
        return _time(self._segment(end)) + _escape(key) + _time(end) + _time(start)

    def put(self, key: bytes, start: int, end: int, aggregate: Optional[bytes]) -> None:
        if not self._admit(end):
            return
        self._table.put(self._key(key, start, end), aggregate)

    def remove(self, key: bytes, start: int, end: int) -> None:
        self._table.put(self._key(key, start, end), None)

    def fetch_session(self, key: bytes, start: int, end: int) -> Optional[bytes]:
        self._remove_expired_segments()
        if end <= self.observed_stream_time - self.retention_period_ms or end < self._min_live_time():
            return None
        return self._table.get(self._key(key, start, end))

    def _rows(self, key_from: Optional[bytes], key_to: Optional[bytes], earliest_end: int, latest_end: int,
              latest_start: int) -> list[tuple[bytes, int, int, bytes]]:
        """``(key bytes, start, end, aggregate)`` of live sessions, in table order."""
        lo, hi = max(earliest_end, self._min_live_time()), min(latest_end, self.observed_stream_time)
        if hi < lo:
            return []
        out: list[tuple[bytes, int, int, bytes]] = []
        for composite, value in self._table_scan(key_from, key_to, lo, hi, 16):
            end, start = _untime(composite[-16:-8]), _untime(composite[-8:])
            if lo <= end <= hi and start <= latest_start:
                out.append((_unescape(composite[8:-16]), start, end, value))
        return out

    def find_sessions(self, key_from: Optional[bytes], key_to: Optional[bytes], earliest_session_end_time: int,
                      latest_session_start_time: int, forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        self._remove_expired_segments()
        if key_from is not None and key_to is not None and key_from > key_to:
            log.warning(INVALID_RANGE_WARNING)
            return []
        rows = self._rows(key_from, key_to, earliest_session_end_time, LONG_MAX, latest_session_start_time)
        return _ordered(rows, self.session_order, forward)

    def find_sessions_by_end_time(self, earliest_session_end_time: int, latest_session_end_time: int,
                                  forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        self._remove_expired_segments()
        rows = self._rows(None, None, earliest_session_end_time, latest_session_end_time, LONG_MAX)
        return _ordered(rows, self.end_time_order, forward)

    def fetch_keys(self, key_from: Optional[bytes], key_to: Optional[bytes],
                   forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        self._remove_expired_segments()
        check_fetch_range(key_from, key_to)
        return _ordered(self._rows(key_from, key_to, self._min_live_time(), LONG_MAX, LONG_MAX), self.session_order,
                        forward)

    def entries(self) -> dict[str, Any]:
        """For the task's snapshot: stream time (the sessions are the table's)."""
        return {"observed_stream_time": self.observed_stream_time}

    def restore(self, entries: dict[str, Any]) -> None:
        """Load :meth:`entries`; a snapshot from the in-memory store (an older version) moves its sessions into the
        table."""
        self.observed_stream_time = entries["observed_stream_time"]
        for end, key_map in entries.get("sessions", {}).items():
            for key, starts in key_map.items():
                for start, aggregate in starts.items():
                    self._table.put(self._key(key, start, end), aggregate)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class LocalPersistentSessionBytesStore(PersistentSessionBytesStore, LocalSessionBytesStore):
    """Kafka's RocksDB session store's behaviour (``PersistentSessionBytesStore``) over a table."""


class LocalTimeOrderedSessionBytesStore(TimeOrderedSessionBytesStore, LocalSessionBytesStore):
    """The time-ordered session store of ON_WINDOW_CLOSE aggregations over a table."""


def bytes_store_over(builder: Any, table: Any) -> Any:
    """The bytes store ``builder`` builds its store over, with the entries in ``table`` (for a builder whose
    ``engine_kept()`` is true): a window or session store over the table, else the table itself (key-value stores
    and buffers are key-value bytes stores already)."""
    supplier = getattr(builder, "supplier", None)
    kind = type(supplier)
    store: Any
    if kind is WindowBytesStoreSupplier:
        store = LocalWindowBytesStore(supplier.name, supplier.retention_period_ms, supplier.window_size_ms,
                                      supplier.retain_duplicates)
    elif kind is PersistentWindowBytesStoreSupplier:
        store = LocalPersistentWindowBytesStore(supplier.name, supplier.retention_period_ms, supplier.window_size_ms,
                                                supplier.retain_duplicates, supplier.time_first)
    else:
        local = {SessionBytesStoreSupplier: LocalSessionBytesStore,
                 PersistentSessionBytesStoreSupplier: LocalPersistentSessionBytesStore,
                 TimeOrderedSessionBytesStoreSupplier: LocalTimeOrderedSessionBytesStore}.get(kind)
        if local is None:
            return table
        store = local(supplier.name, supplier.retention_period_ms)
    store.attach(table)
    return store


__all__ = ["LocalWindowBytesStore", "LocalPersistentWindowBytesStore", "LocalSessionBytesStore",
           "LocalPersistentSessionBytesStore", "LocalTimeOrderedSessionBytesStore", "bytes_store_over"]

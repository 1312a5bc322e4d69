"""Brute-force models of Kafka's window and session stores: every entry in a dict, every read a filter and a sort by
the rules the stores document. The reference the table stores are checked against, call by call
(``test_local_windows.py``)."""
from __future__ import annotations

from typing import Any, Optional


def _segment_id(t: int, interval: int) -> int:
    return t // interval if t >= 0 else -(-t // interval)


class _Model:
    """Stream time, expiry (per record, or by Kafka's segments) and dropped-record counting."""

    def __init__(self, retention_ms: int, segmented: bool) -> None:
        self.retention_ms = retention_ms
        self.segmented = segmented
        self.interval = max(retention_ms // 2, 60_000)
        self.observed_stream_time = -1
        self.metrics: Any = None
        self.data: dict[tuple, bytes] = {}

    def _seg(self, t: int) -> int:
        return _segment_id(t, self.interval)

    def _min_live(self) -> int:
        cut = self.observed_stream_time - self.retention_ms
        return max(0, self._seg(cut) * self.interval) if self.segmented else max(0, cut + 1)

    def _expire(self) -> None:
        live = self._min_live()
        self.data = {k: v for k, v in self.data.items() if self._time(k) >= live}

    def _admit(self, t: int) -> bool:
        self._expire()
        self.observed_stream_time = max(self.observed_stream_time, t)
        cut = self.observed_stream_time - self.retention_ms
        if (self._seg(t) < self._seg(cut)) if self.segmented else t <= cut:
            self.metrics.record_dropped()
            return False
        return True

    @staticmethod
    def _in(key: bytes, key_from: Optional[bytes], key_to: Optional[bytes]) -> bool:
        return (key_from is None or key >= key_from) and (key_to is None or key <= key_to)

    @staticmethod
    def _time(entry_key: tuple) -> int:
        raise NotImplementedError

    def approximate_num_entries(self) -> int:
        return len(self.data)


class WindowModel(_Model):
    """Entries ``(key, start, seq) -> value`` (``seq`` 0 without duplicates)."""

    def __init__(self, retention_ms: int, dups: bool, segmented: bool, time_first: bool) -> None:
        super().__init__(retention_ms, segmented)
        self.dups, self.time_first, self.seqnum = dups, time_first, 0

    @staticmethod
    def _time(entry_key: tuple) -> int:
        return entry_key[1]

    def put(self, key: bytes, value: Optional[bytes], start: int) -> bool:
        """Whether the store's position takes the put: InMemoryWindowStore's every put (an expired one too);
        RocksDBWindowStore's a put stored, and a null one retaining duplicates is not even passed on (no stream
        time)."""
        if value is None and self.dups and self.segmented:
            return False
        if not self._admit(start):
            return not self.segmented
        if value is not None and self.dups:
            self.seqnum += 1
            self.data[(key, start, self.seqnum)] = value
        elif value is not None:
            self.data[(key, start, 0)] = value
        elif not self.dups:
            self.data.pop((key, start, 0), None)
        return True

    def _cut(self) -> int:
        return self.observed_stream_time - self.retention_ms - (1 if self.time_first else 0)

    def fetch(self, key: bytes, start: int) -> Optional[bytes]:
        self._expire()
        return None if start <= self._cut() or self.dups else self.data.get((key, start, 0))

    def _select(self, key_from: Optional[bytes], key_to: Optional[bytes], lo: int, hi: int, forward: bool) -> list:
        rows = [(k, t, s, v) for (k, t, s), v in self.data.items()
                if self._in(k, key_from, key_to) and max(lo, self._cut() + 1) <= t <= hi]
        if self.segmented and not self.time_first:
            rows.sort(key=lambda r: (self._seg(r[1]), r[0], r[1], r[2]))
        else:
            rows.sort(key=lambda r: (r[1], r[0], r[2]))
        return [(k, t, v) for k, t, _, v in (rows if forward else rows[::-1])]

    def fetch_key(self, key: bytes, time_from: int, time_to: int, forward: bool = True) -> list:
        self._expire()
        rows = self._select(key, key, time_from, time_to, True)
        rows.sort(key=lambda r: r[1])   # one key: by start (duplicates keep their order)
        return [(t, v) for _, t, v in (rows if forward else rows[::-1])]

    def fetch_keys(self, key_from: Optional[bytes], key_to: Optional[bytes], time_from: int, time_to: int,
                   forward: bool = True) -> list:
        self._expire()
        if key_from is not None and key_to is not None and key_from > key_to:
            return []
        return self._select(key_from, key_to, time_from, time_to, forward)

    def fetch_all(self, time_from: int, time_to: int, forward: bool = True) -> list:
        return self.fetch_keys(None, None, time_from, time_to, forward)

    def all(self, forward: bool = True) -> list:
        return self.fetch_keys(None, None, -(1 << 63), 1 << 63, forward)


class SessionModel(_Model):
    """Entries ``(key, start, end) -> aggregate``."""

    def __init__(self, retention_ms: int, segmented: bool, time_ordered: bool) -> None:
        super().__init__(retention_ms, segmented)
        self.time_ordered = time_ordered

    @staticmethod
    def _time(entry_key: tuple) -> int:
        return entry_key[2]

    def put(self, key: bytes, start: int, end: int, aggregate: Optional[bytes]) -> bool:
        """Whether the store's position takes the put: InMemorySessionStore's every put (an expired one too);
        RocksDB's a put stored."""
        if not self._admit(end):
            return not self.segmented
        if aggregate is None:
            self.remove(key, start, end)
        else:
            self.data[(key, start, end)] = aggregate
        return True

    def remove(self, key: bytes, start: int, end: int) -> None:
        self.data.pop((key, start, end), None)

    def fetch_session(self, key: bytes, start: int, end: int) -> Optional[bytes]:
        self._expire()
        return self.data.get((key, start, end)) if end > self.observed_stream_time - self.retention_ms else None

    def _order(self, row: tuple) -> tuple:
        key, start, end, _ = row
        return (self._seg(end), key, end, start) if self.segmented else (end, key, -start)

    def _rows(self, key_from: Optional[bytes], key_to: Optional[bytes], keep: Any, order: Any,
              forward: bool) -> list:
        rows = sorted(((k, s, e, v) for (k, s, e), v in self.data.items() if self._in(k, key_from, key_to)
                       and keep(s, e)), key=order)
        return rows if forward else rows[::-1]

    def _live(self, end: int) -> bool:
        return not self.segmented or end > self.observed_stream_time - self.retention_ms

    def find_sessions(self, key_from: Optional[bytes], key_to: Optional[bytes], earliest_end: int,
                      latest_start: int, forward: bool = True) -> list:
        self._expire()
        if key_from is not None and key_to is not None and key_from > key_to:
            return []
        return self._rows(key_from, key_to, lambda s, e: e >= earliest_end and s <= latest_start and self._live(e),
                          self._order, forward)

    def find_sessions_by_end_time(self, earliest_end: int, latest_end: int, forward: bool = True) -> list:
        self._expire()
        order = (lambda r: (r[2], r[1], r[0])) if self.time_ordered else self._order
        return self._rows(None, None, lambda s, e: earliest_end <= e <= latest_end, order, forward)

    def fetch_keys(self, key_from: Optional[bytes], key_to: Optional[bytes], forward: bool = True) -> list:
        self._expire()
        if key_from is not None and key_to is not None and key_from > key_to:
            if not self.segmented:
                raise ValueError("fromKey > toKey")
            return []
        return self._rows(key_from, key_to, lambda s, e: self._live(e), self._order, forward)


def reference(supplier: Any) -> Any:
    """The model of the store ``supplier`` makes."""
    if hasattr(supplier, "window_size_ms"):
        return WindowModel(supplier.retention_period_ms, supplier.retain_duplicates, supplier.segmented,
                           supplier.time_first)
    return SessionModel(supplier.retention_period_ms, supplier.segmented, supplier.time_ordered)

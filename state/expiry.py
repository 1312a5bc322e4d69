"""What window and session stores share: expiry by observed stream time, in Kafka's segments or per record."""
from __future__ import annotations

import bisect
import logging
from typing import Any, Optional

log = logging.getLogger(__name__)

NO_TIMESTAMP = -1


def sub_keys(keys: list[bytes], key_from: Optional[bytes], key_to: Optional[bytes]) -> list[bytes]:
    """The sorted ``keys`` within ``[key_from, key_to]`` (None = unbounded), like ``NavigableMap.subMap``."""
    lo = 0 if key_from is None else bisect.bisect_left(keys, key_from)
    hi = len(keys) if key_to is None else bisect.bisect_right(keys, key_to)
    return keys[lo:hi]


class Expiring:
    """Shared bookkeeping of the in-memory stores: observed stream time, sorted segment times, expired drops."""

    name: str
    retention_period_ms: int

    def _init_times(self) -> None:
        self.observed_stream_time = NO_TIMESTAMP
        self._times: list[int] = []          # sorted segment timestamps (window starts / session ends)
        self.metrics: Any = None             # set by the typed store's init: counts dropped expired records

    def _record_expired(self) -> None:
        if self.metrics is not None:
            self.metrics.record_dropped()
        log.warning("Skipping record for expired segment.")

    def _min_live_time(self) -> int:
        return max(0, self.observed_stream_time - self.retention_period_ms + 1)

    def _admit(self, timestamp: int) -> bool:
        """Before a put at ``timestamp`` (window start, session end): drop expired segments and advance stream time;
        whether the put may be stored (a late one is dropped, logged and counted)."""
        self._remove_expired_segments()
        self.observed_stream_time = max(self.observed_stream_time, timestamp)
        if self._expired(timestamp):
            self._record_expired()
            return False
        return True

    def _expired(self, timestamp: int) -> bool:
        """Whether a put at ``timestamp`` (window start, session end) comes too late to be stored."""
        return timestamp <= self.observed_stream_time - self.retention_period_ms

    def _times_between(self, time_from: int, time_to: int, forward: bool) -> list[int]:
        times = self._times
        selected = times[bisect.bisect_left(times, time_from):bisect.bisect_right(times, time_to)]
        return selected if forward else selected[::-1]


class Segmented(Expiring):
    """Kafka's RocksDB stores' expiry (``AbstractSegments``), kept in memory: time falls in segments of
    ``max(retention / 2, 60 s)``; data leaves a whole segment at a time, and a put is dropped (and counted) only when
    its segment has expired. Reads still see only what is within retention (``getActualFrom``)."""

    segment_interval_ms: int

    def _init_segments(self) -> None:
        self.segment_interval_ms = max(self.retention_period_ms // 2, 60_000)

    def _segment_id(self, timestamp: int) -> int:
        """Java's ``timestamp / segmentInterval`` (rounds toward zero)."""
        interval = self.segment_interval_ms
        return timestamp // interval if timestamp >= 0 else -(-timestamp // interval)

    def _min_live_time(self) -> int:
        """The start of the oldest live segment."""
        return max(0, self._segment_id(self.observed_stream_time - self.retention_period_ms)
                   * self.segment_interval_ms)

    def _expired(self, timestamp: int) -> bool:
        return self._segment_id(timestamp) < self._segment_id(self.observed_stream_time - self.retention_period_ms)


def check_store_name(name: Optional[str]) -> str:
    if not name:
        raise ValueError("store name cannot be null or empty")
    return name

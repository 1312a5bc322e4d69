"""How window and session stores lay their entries out in an ordered bytes table (Kafka's
``SegmentedBytesStore.KeySchema``: ``WindowKeySchema``, ``SessionKeySchema``).

A store's entries live in a table (``get``/``put``/``range``/``delete_below``/``approximate_num_entries``): the
task's local RocksDB on Spark (:class:`~streams_on_spark.state.local.LocalKeyValueBytesStore`), or an in-memory
one (:class:`~streams_on_spark.state.stores.InMemoryKeyValueBytesStore`). Entries are kept under composite keys whose
byte order is the order of the tuple

- window store:  ``(segment, key bytes, window start[, sequence number])``
- session store: ``(segment, key bytes, session end, session start)``

(the key escaped order-preservingly, ``0x00 -> 0x00 0xff`` and a ``0x00 0x00`` terminator; times offset so negative
ones sort first), so reading one key touches only that key's entries, a key range is an exact table range, and
Kafka's RocksDB stores' own read order (segment, key, time) comes out of the table as it is (the other kinds sort
what they read). Segments are Kafka's, ``max(retention / 2, 60 s)`` wide, for every kind and table (on Spark, the
layout the changelog holds); whole expired segments leave with one range deletion.
"""
from __future__ import annotations

import struct
from typing import Any, Optional

from streams_on_spark.state.stores import ordered_time as _time
from streams_on_spark.state.stores import time_of as _untime

_SEQ = struct.Struct(">i")    # a retained duplicate's sequence number
_HIGH = b"\xff" * 16          # above every time and sequence suffix


def kafka_segment_interval(retention_period_ms: int) -> int:
    """Kafka's segment width of a RocksDB window or session store: ``max(retention / 2, 60 s)``."""
    return max(retention_period_ms // 2, 60_000)


def _escape(key: bytes) -> bytes:
    """``key`` so that escaped keys, followed by anything, sort as the keys do (and none is a prefix of another)."""
    return key.replace(b"\x00", b"\x00\xff") + b"\x00\x00"


def _unescape(part: bytes) -> bytes:
    return part[:-2].replace(b"\x00\xff", b"\x00")


class KeySchema:
    """Composite keys ``segment | escaped key | times`` in segments of ``segment_interval_ms``."""

    #: bytes of the time (and sequence) suffix after the escaped key
    suffix = 8

    def __init__(self, segment_interval_ms: int) -> None:
        self.segment_interval_ms = segment_interval_ms

    def segment_id(self, t: int) -> int:
        """Java's ``t / interval`` (rounds toward zero), as Kafka's segments."""
        interval = self.segment_interval_ms
        return t // interval if t >= 0 else -(-t // interval)

    def segment_bound(self, t: int) -> bytes:
        """The lowest composite key of ``t``'s segment: what ``delete_below`` takes to drop the segments before it."""
        return _time(self.segment_id(t))

    def scan(self, table: Any, key_from: Optional[bytes], key_to: Optional[bytes], lo: int,
             hi: int) -> list[tuple[bytes, bytes]]:
        """Raw ``(composite, value)`` entries of the segments of times ``lo..hi`` with keys in ``[key_from, key_to]``
        (None = open), in table order; one key reads from its ``lo`` time on."""
        first, last = self.segment_id(lo), self.segment_id(hi)
        if key_from is None and key_to is None:
            return table.range(_time(first), _time(last + 1))
        suffix = self.suffix
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


class WindowKeySchema(KeySchema):
    """``segment | key | window start [| sequence number]`` (Kafka's ``WindowKeySchema``, segment first)."""

    def __init__(self, segment_interval_ms: int, retain_duplicates: bool) -> None:
        super().__init__(segment_interval_ms)
        self.suffix = 12 if retain_duplicates else 8

    def to_store_key(self, key: bytes, start: int, seqnum: Optional[int] = None) -> bytes:
        composite = _time(self.segment_id(start)) + _escape(key) + _time(start)
        return composite if seqnum is None else composite + _SEQ.pack(seqnum)

    def from_store_key(self, composite: bytes) -> tuple[bytes, int, bytes]:
        """``(key bytes, window start, sequence bytes)`` of a composite key (no sequence: empty bytes)."""
        at = len(composite) - self.suffix
        return _unescape(composite[8:at]), _untime(composite[at:at + 8]), composite[at + 8:]


class SessionKeySchema(KeySchema):
    """``segment | key | session end | session start`` (Kafka's ``SessionKeySchema``, segment first)."""

    suffix = 16

    def to_store_key(self, key: bytes, start: int, end: int) -> bytes:
        return _time(self.segment_id(end)) + _escape(key) + _time(end) + _time(start)

    def from_store_key(self, composite: bytes) -> tuple[bytes, int, int]:
        """``(key bytes, session start, session end)`` of a composite key."""
        return _unescape(composite[8:-16]), _untime(composite[-8:]), _untime(composite[-16:-8])


__all__ = ["KeySchema", "WindowKeySchema", "SessionKeySchema", "kafka_segment_interval"]

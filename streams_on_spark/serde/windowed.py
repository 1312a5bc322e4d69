"""Serdes for windowed keys, byte-for-byte like Kafka's ``TimeWindowedSerializer``/``SessionWindowedSerializer``.

* time-windowed: ``inner key bytes + 8-byte big-endian window start`` (``WindowKeySchema.toBinary``); the end is
  not stored, so the deserializer needs the window size. With :meth:`TimeWindowedSerde.for_changelog` the
  deserializer reads the store-changelog layout instead (``key + start + 4-byte sequence number``).
* session-windowed: ``inner key bytes + 8-byte end + 8-byte start`` (``SessionKeySchema.toBinary``).

``serialize_base_key`` returns just the inner key bytes: the windowed stream partitioner hashes those, so windowed
results land on the partition of their unwindowed key (Kafka's ``WindowedStreamPartitioner``).
"""
from __future__ import annotations

import logging
import struct
from typing import Any, Optional

from streams_on_spark.window import LONG_MAX, SessionWindow, TimeWindow, Windowed, validate_millis
from streams_on_spark.errors import SerializationException
from streams_on_spark.serde import Serde

log = logging.getLogger(__name__)

__all__ = ["WindowedSerde", "TimeWindowedSerde", "SessionWindowedSerde", "WindowedSerdes", "time_window_for_size"]

_LONG = struct.Struct(">q")
_TWO_LONGS = struct.Struct(">qq")
TIMESTAMP_SIZE = 8
SEQNUM_SIZE = 4


def time_window_for_size(start: int, window_size: int) -> TimeWindow:
    """``TimeWindow(start, start + size)``, the end clamped to ``Long.MAX_VALUE`` on overflow (as Kafka does)."""
    end = start + window_size
    if end > LONG_MAX:
        log.warning("Warning: window end time was truncated to Long.MAX")
        end = LONG_MAX
    return TimeWindow(start, end)


class WindowedSerde(Serde[Windowed[Any]]):
    """Base of the windowed serdes (Kafka's ``WindowedSerializer``): adds :meth:`serialize_base_key`."""

    def __init__(self, inner: Serde[Any]) -> None:
        if inner is None:
            raise ValueError(f"Inner serde is `null`. {type(self).__name__} needs the serde of the window's key.")
        self.inner = inner

    def _inner_bytes(self, topic: Optional[str], windowed: Windowed[Any]) -> bytes:
        if not isinstance(windowed, Windowed):
            raise SerializationException(f"{type(self).__name__} cannot serialize a value of type "
                                         f"{type(windowed).__name__} for topic {topic!r}: expected Windowed")
        data = self.inner.serialize(topic, windowed.key)
        if data is None:
            raise SerializationException(f"{type(self).__name__} cannot serialize {windowed} for topic {topic!r}: "
                                         "the inner serde returned null for the key")
        return bytes(data)

    def serialize_base_key(self, topic: Optional[str], windowed: Windowed[Any]) -> Optional[bytes]:
        """The inner key's bytes only: what the windowed partitioner hashes."""
        return self.inner.serialize(topic, windowed.key)

    def _check_length(self, topic: Optional[str], data: bytes, minimum: int) -> None:
        if len(data) < minimum:
            raise SerializationException(f"{type(self).__name__} cannot deserialize {len(data)} bytes for topic "
                                         f"{topic!r}: a windowed key has at least {minimum} bytes")


class TimeWindowedSerde(WindowedSerde):
    """Time-windowed keys: ``key bytes + start`` (big-endian long); deserializes to ``TimeWindow(start, start+size)``."""

    def __init__(self, inner: Serde[Any], window_size_ms: Any) -> None:
        super().__init__(inner)
        self.window_size_ms = validate_millis(window_size_ms, "windowSize")
        self.is_changelog_topic = False

    def for_changelog(self, is_changelog_topic: bool) -> "TimeWindowedSerde":
        """Deserialize the window store's changelog layout (``key + start + seqnum``) instead; returns self."""
        self.is_changelog_topic = is_changelog_topic
        return self

    def serialize(self, topic: Optional[str], windowed: Optional[Windowed[Any]]) -> Optional[bytes]:
        if windowed is None:
            return None
        return self._inner_bytes(topic, windowed) + _LONG.pack(windowed.window.start)

    def deserialize(self, topic: Optional[str], data: Optional[bytes]) -> Optional[Windowed[Any]]:
        if data is None or len(data) == 0:
            return None
        suffix = TIMESTAMP_SIZE + (SEQNUM_SIZE if self.is_changelog_topic else 0)
        self._check_length(topic, data, suffix)
        cut = len(data) - suffix
        start = _LONG.unpack_from(data, cut)[0]
        key = self.inner.deserialize(topic, bytes(data[:cut]))
        return Windowed(key, time_window_for_size(start, self.window_size_ms))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TimeWindowedSerde):
            return NotImplemented
        return (self.inner == other.inner and self.window_size_ms == other.window_size_ms
                and self.is_changelog_topic == other.is_changelog_topic)

    def __hash__(self) -> int:
        return hash((TimeWindowedSerde, self.inner, self.window_size_ms))

    def __repr__(self) -> str:
        return f"WindowedSerdes.time_windowed({self.inner!r}, {self.window_size_ms})"


class SessionWindowedSerde(WindowedSerde):
    """Session-windowed keys: ``key bytes + end + start`` (big-endian longs); deserializes to ``SessionWindow``."""

    def serialize(self, topic: Optional[str], windowed: Optional[Windowed[Any]]) -> Optional[bytes]:
        if windowed is None:
            return None
        return self._inner_bytes(topic, windowed) + _TWO_LONGS.pack(windowed.window.end, windowed.window.start)

    def deserialize(self, topic: Optional[str], data: Optional[bytes]) -> Optional[Windowed[Any]]:
        if data is None or len(data) == 0:
            return None
        self._check_length(topic, data, 2 * TIMESTAMP_SIZE)
        cut = len(data) - 2 * TIMESTAMP_SIZE
        end, start = _TWO_LONGS.unpack_from(data, cut)
        return Windowed(self.inner.deserialize(topic, bytes(data[:cut])), SessionWindow(start, end))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionWindowedSerde):
            return NotImplemented
        return self.inner == other.inner

    def __hash__(self) -> int:
        return hash((SessionWindowedSerde, self.inner))

    def __repr__(self) -> str:
        return f"WindowedSerdes.session_windowed({self.inner!r})"


class WindowedSerdes:
    """Factories named like Kafka's ``WindowedSerdes``."""

    @staticmethod
    def time_windowed(inner: Serde[Any], window_size_ms: Any) -> TimeWindowedSerde:
        return TimeWindowedSerde(inner, window_size_ms)

    @staticmethod
    def session_windowed(inner: Serde[Any]) -> SessionWindowedSerde:
        return SessionWindowedSerde(inner)

    # Kafka's names for the same factories (there the inner serde comes from a Class).
    time_windowed_serde_from = time_windowed
    session_windowed_serde_from = session_windowed

"""The grace buffer of a stream-table join against a versioned table (KIP-914; Kafka's
``RocksDBTimeOrderedKeyValueBuffer``): stream records wait until the buffer's stream time passes their timestamp plus
the grace period, then leave in (timestamp, key bytes, arrival) order."""
from __future__ import annotations

import pickle
import struct
from typing import Any, Callable, Optional

from streams_on_spark.state.stores import (
    InMemoryKeyValueBytesStore,
    SerdeStore,
    StoreBuilder,
    ordered_time,
    prefix_upper_bound,
    time_of,
)

NO_TIMESTAMP = -1
_META = b"\x00"        # (observed stream time, sequence number)
_BY_TIME = b"\x01"     # time | key bytes | sequence number -> (value bytes, headers)
_META_VALUE = struct.Struct(">qi")
_SEQ = struct.Struct(">i")


class TimeOrderedJoinBuffer(SerdeStore):
    """Stream records of a stream-table join with a grace period, in a key-value bytes store (in memory, or where the
    engine keeps it): ``0x01 | time | key | seq`` in eviction order, and the buffer's stream time (the largest
    timestamp buffered, as Kafka's) with the last sequence number under ``0x00``."""

    def __init__(self, name: str, key_serde: Any, value_serde: Any, grace_ms: int, inner: Any = None) -> None:
        self._init_serdes(inner if inner is not None else InMemoryKeyValueBytesStore(name), key_serde, value_serde)
        self.grace_ms = grace_ms

    @property
    def persistent(self) -> bool:
        return True

    def _meta(self) -> tuple[int, int]:
        data = self.inner.get(_META)
        return (NO_TIMESTAMP, 0) if data is None else _META_VALUE.unpack(data)

    def observed_stream_time(self) -> int:
        return self._meta()[0]

    def put(self, key: Any, value: Any, timestamp: int, headers: Any = ()) -> bool:
        """Buffer a record; False (not buffered: join it now) when it is older than stream time minus grace."""
        stream_time, seq = self._meta()
        if stream_time - self.grace_ms > timestamp:
            return False
        seq = (seq + 1) & 0x7FFFFFFF
        where = _BY_TIME + ordered_time(timestamp) + self._kser(key) + _SEQ.pack(seq)
        self.inner.put(where, pickle.dumps((self._vser(value), tuple(headers)), protocol=pickle.HIGHEST_PROTOCOL))
        self.inner.put(_META, _META_VALUE.pack(max(stream_time, timestamp), seq))
        return True

    def evict(self, emit: Callable[[Any, Any, int, Any], None]) -> None:
        """Emit ``(key, value, timestamp, headers)`` of every record at or before stream time minus grace, oldest
        first (then by key bytes, then arrival), removing each."""
        stream_time = self.observed_stream_time()
        if stream_time == NO_TIMESTAMP:
            return
        last = ordered_time(stream_time - self.grace_ms)
        for where, entry in self.inner.range(_BY_TIME, prefix_upper_bound(_BY_TIME + last)):
            if where[1:9] > last:
                break
            self.inner.delete(where)
            raw, headers = pickle.loads(entry)
            emit(self._kde(where[9:-_SEQ.size]), self._vde(raw), time_of(where[1:9]), headers)

    def num_records(self) -> int:
        """Records buffered (counted by a lazy scan: nothing is materialized)."""
        return sum(1 for _ in self.inner.scan(_BY_TIME, prefix_upper_bound(_BY_TIME)))


class TimeOrderedJoinBufferBuilder(StoreBuilder):
    """Builds the ``<join name>-Buffer`` store of a stream-table join with a grace period."""

    def __init__(self, name: str, key_serde: Any, value_serde: Any, grace_ms: int) -> None:
        self.name, self.key_serde, self.value_serde, self.grace_ms = name, key_serde, value_serde, grace_ms
        self.logging_enabled = True

    def engine_kept(self) -> bool:
        return True

    def build(self, bytes_store: Optional[Any] = None) -> TimeOrderedJoinBuffer:
        """The buffer over ``bytes_store`` (where the engine keeps it), or in memory."""
        return TimeOrderedJoinBuffer(self.name, self.key_serde, self.value_serde, self.grace_ms, bytes_store)


__all__ = ["TimeOrderedJoinBuffer", "TimeOrderedJoinBufferBuilder"]

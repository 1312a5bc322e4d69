"""The suppression buffer behind ``KTable.suppress`` (Kafka's ``InMemoryTimeOrderedKeyValueChangeBuffer``): the
latest update per key, evicted in (buffer time, key bytes) order, in a key-value bytes store."""
from __future__ import annotations

import pickle
from itertools import islice
from typing import Any, Callable, Optional

from streams_on_spark.change import Change
from streams_on_spark.errors import StreamsException
from streams_on_spark.state.stores import (
    InMemoryKeyValueBytesStore,
    StateStore,
    StoreBuilder,
    ValueAndTimestamp,
    ordered_time,
    prefix_upper_bound,
)

NO_TIMESTAMP = -1   # a prior value's timestamp is not kept (Kafka's priorValueForBuffered gives none either)
_BUFFERED = b"\x01"   # key bytes -> buffer time: which keys are buffered, and since when
_BY_TIME = b"\x02"    # buffer time | key bytes -> the entry: the buffer in eviction order


class SuppressionBuffer(StateStore):
    """Kafka's time-ordered change buffer: latest update per key, evicted in (buffer time, key bytes) order.

    Each entry keeps the key's first buffer time, the latest update (new and old value) and the prior value: the
    old value when the key was first buffered, which is what the suppressed table's view still shows. Entries are
    bytes (key serde, and the upstream value serde for values) in a key-value bytes store under two kinds of keys:
    ``0x02 | buffer time | key`` holds the entry, so eviction by time reads just what it evicts, oldest first, and
    ``0x01 | key`` the key's buffer time, for lookups by key. The bytes store is in memory, or
    where the engine keeps it (the task's local RocksDB on Spark).
    """

    def __init__(self, name: str, key_serde: Any, value_serde: Any, inner: Any = None) -> None:
        self.name = name
        self.inner = inner if inner is not None else InMemoryKeyValueBytesStore(name)
        self.key_serde, self.value_serde = key_serde, value_serde
        self._size: Optional[tuple[int, int]] = None   # (entries, bytes), counted on first use

    def init(self, context: Any) -> None:
        if self.key_serde is None:
            self.key_serde = getattr(context, "default_key_serde", None)
        if self.value_serde is None:
            self.value_serde = getattr(context, "default_value_serde", None)
        if self.key_serde is None or self.value_serde is None:
            raise StreamsException(f"suppression buffer {self.name} has no key or value serde: give the suppressed "
                                   "table serdes (Materialized) or set 'default.key.serde'/'default.value.serde'")

    def _serialize(self, value: Any) -> Optional[bytes]:
        return None if value is None else self.value_serde.serialize(self.name, value)

    def _deserialize(self, data: Optional[bytes]) -> Any:
        return None if data is None else self.value_serde.deserialize(self.name, data)

    def _entry_key(self, kb: bytes) -> Optional[bytes]:
        """Where the entry of key bytes ``kb`` is, if the key is buffered."""
        since = self.inner.get(_BUFFERED + kb)
        return None if since is None else _BY_TIME + since + kb

    def _sizes(self) -> tuple[int, int]:
        if self._size is None:
            count = total = 0
            for k, v in self.inner.scan(_BY_TIME, prefix_upper_bound(_BY_TIME)):
                count += 1
                total += len(k) - 9 + len(v)
            self._size = (count, total)
        return self._size

    def _resize(self, entries: int, size: int) -> None:
        count, total = self._sizes()
        self._size = (count + entries, total + size)

    def put(self, buffer_time: int, key: Any, timestamp: int, headers: Any, change: Change) -> None:
        """Buffer ``key``'s update (its record's timestamp and headers) at ``buffer_time``."""
        self._sizes()
        kb = self.key_serde.serialize(self.name, key)
        where = self._entry_key(kb)
        existing = None if where is None else self.inner.get(where)
        old = self._serialize(change.old_value)
        if existing is None:
            prior = old
            where = _BY_TIME + ordered_time(buffer_time) + kb
            self.inner.put(_BUFFERED + kb, where[1:9])
            self._resize(1, len(kb))
        else:  # a buffered key keeps its first buffer time and prior value; the latest update replaces the rest
            buffer_time, *_, prior = pickle.loads(existing)
            self._resize(0, -len(existing))
        entry = pickle.dumps((buffer_time, timestamp, tuple(headers), self._serialize(change.new_value), old, prior))
        self.inner.put(where, entry)
        self._resize(0, len(entry))

    def prior_value_for_buffered(self, key: Any) -> tuple[bool, Optional[ValueAndTimestamp]]:
        """Kafka's ``priorValueForBuffered``: (is the key buffered, its prior value with an unknown timestamp)."""
        where = self._entry_key(self.key_serde.serialize(self.name, key))
        existing = None if where is None else self.inner.get(where)
        if existing is None:
            return False, None
        return True, ValueAndTimestamp.make(self._deserialize(pickle.loads(existing)[-1]), NO_TIMESTAMP)

    def size(self) -> int:
        return self._sizes()[0]

    def size_bytes(self) -> int:
        """Key and entry bytes of every buffered key."""
        return self._sizes()[1]

    def evict(self, until: Optional[int], emit: Callable[[Any, Change, int, Any], None], force: int = 0) -> None:
        """Emit ``(key, change, timestamp, headers)``, oldest first, of the entries buffered at or before ``until``
        (None: none by time), then ``force`` more. Reads only what it evicts when evicting by time."""
        self._sizes()
        if until is not None:
            last = ordered_time(until)
            upper = prefix_upper_bound(_BY_TIME + last)   # may be the first key past ``until`` itself: checked
            self._evict([e for e in self.inner.range(_BY_TIME, upper) if e[0][1:9] <= last], emit)
        if force > 0 and self.size():
            # the oldest ``force`` entries only, read before evicting them (the scan is not a snapshot)
            self._evict(list(islice(self.inner.scan(_BY_TIME, prefix_upper_bound(_BY_TIME)), force)), emit)

    def _evict(self, entries: list[tuple[bytes, bytes]], emit: Callable[[Any, Change, int, Any], None]) -> None:
        for where, entry in entries:
            _buffer_time_, ts, headers, new, old, _prior = pickle.loads(entry)
            kb = where[9:]
            self.inner.delete(where)
            self.inner.delete(_BUFFERED + kb)
            self._resize(-1, -len(kb) - len(entry))
            change = Change(self._deserialize(new), self._deserialize(old))  # the latest update, as buffered
            emit(self.key_serde.deserialize(self.name, kb), change, ts, headers)


class SuppressionBufferBuilder(StoreBuilder):
    def __init__(self, name: str, key_serde: Any, value_serde: Any, logging_enabled: bool) -> None:
        self.name, self.key_serde, self.value_serde = name, key_serde, value_serde
        self.logging_enabled = logging_enabled

    def engine_kept(self) -> bool:
        return True

    def build(self, bytes_store: Any = None) -> SuppressionBuffer:
        """The buffer over ``bytes_store`` (where the engine keeps it), or in memory."""
        return SuppressionBuffer(self.name, self.key_serde, self.value_serde, bytes_store)

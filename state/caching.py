"""The record cache (Kafka's ``ThreadCache``/``CachingKeyValueStore``): writes to a DSL store are held and forwarded
downstream when the task commits, so several updates of one key between commits leave as one.

A :class:`CachingKeyValueBytesStore` sits between a typed store and its bytes store. Reads see the cached value;
writes become dirty entries. On :meth:`~CachingKeyValueBytesStore.flush` (the task's commit) each dirty entry, in
the order its key was first dirtied, is written through and handed to the flush listener the store's processor
registered, with the value the bytes store held before (the old value downstream sees) and the timestamp and
headers of the record that last wrote it. When the task's cache grows past ``statestore.cache.max.bytes`` the
least recently used entry of the store being written is evicted, and evicting a dirty entry flushes the store.

Kafka's test driver commits after every record, and so does ours: caching then only merges the updates one input
record makes to a key. On Spark a commit is the end of a micro-batch, where caching cuts what an aggregation emits
to the last update per key and batch (Kafka's commit interval).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Optional

from streams_on_spark.errors import IllegalStateError

#: what one cached entry costs besides its key and value bytes (Kafka's LRUCacheEntry overhead is of this order)
ENTRY_OVERHEAD_BYTES = 64

# (key, new value, old value, timestamp and headers of the record that last wrote it, what the writer attached)
FlushListener = Callable[[bytes, Optional[bytes], Optional[bytes], int, Any, Any], None]


class TaskCache:
    """The cache budget of one task, shared by its caching stores (Kafka shares one per stream thread)."""

    __slots__ = ("max_bytes", "size")

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0


class _Entry:
    __slots__ = ("value", "timestamp", "headers", "size", "typed")

    def __init__(self, value: Optional[bytes], timestamp: int, headers: Any, size: int, typed: Any) -> None:
        self.value, self.timestamp, self.headers, self.size, self.typed = value, timestamp, headers, size, typed


class CachingKeyValueBytesStore:
    """A write-back cache over an ``InMemoryKeyValueBytesStore`` (same interface), flushed on commit."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        self.name = wrapped.name
        self._entries: OrderedDict[bytes, _Entry] = OrderedDict()   # least recently used first
        self._dirty: dict[bytes, None] = {}                         # in order of first dirtying since the flush
        self._cache: Optional[TaskCache] = None
        self._context: Any = None
        self._listener: Optional[FlushListener] = None
        self._send_old_values = False

    def init(self, context: Any) -> None:
        """Join the task's cache; without one (a global store, or a cache size of 0) writes go straight through."""
        cache = getattr(context, "cache", None)
        self._cache = cache if cache is not None and cache.max_bytes > 0 else None
        self._context = context

    @property
    def enabled(self) -> bool:
        return self._cache is not None

    def set_flush_listener(self, listener: FlushListener, send_old_values: bool) -> bool:
        """Forward through ``listener`` on flush; False when caching is off (the processor forwards itself)."""
        if self._cache is None:
            return False
        self._listener, self._send_old_values = listener, send_old_values
        return True

    # ------------------------------------------------------------------ reads
    def get(self, key: bytes) -> Optional[bytes]:
        entry = self._entries.get(key)
        if entry is None:
            return self.wrapped.get(key)
        self._entries.move_to_end(key)
        return entry.value

    def range(self, key_from: Optional[bytes], key_to: Optional[bytes], reverse: bool = False) -> list[tuple[bytes, bytes]]:
        """The store's entries in the range as the processors see them: cached values over stored ones."""
        if not self._entries:
            return self.wrapped.range(key_from, key_to, reverse)
        merged = dict(self.wrapped.range(key_from, key_to))
        for key, entry in self._entries.items():
            if (key_from is None or key >= key_from) and (key_to is None or key <= key_to):
                if entry.value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = entry.value
        return sorted(merged.items(), reverse=reverse)

    def approximate_num_entries(self) -> int:
        return self.wrapped.approximate_num_entries() + sum(1 for k in self._dirty if self.wrapped.get(k) is None)

    # ------------------------------------------------------------------ writes
    def put(self, key: bytes, value: Optional[bytes], typed: Any = None) -> None:
        """Cache a write; ``typed`` is what the typed store above wants back on flush (its objects, to spare
        deserializing what it just serialized)."""
        cache = self._cache
        if cache is None:
            self.wrapped.put(key, value)
            return
        record = self._context.record
        size = len(key) + (len(value) if value is not None else 0) + ENTRY_OVERHEAD_BYTES
        entries = self._entries
        old = entries.pop(key, None)
        if old is not None:
            cache.size -= old.size
        if record is None:
            entries[key] = _Entry(value, -1, (), size, typed)
        else:
            entries[key] = _Entry(value, record.timestamp, record.headers, size, typed)
        cache.size += size
        if key not in self._dirty:
            self._dirty[key] = None
        while cache.size > cache.max_bytes and entries:
            self._evict_eldest()

    def delete(self, key: bytes) -> Optional[bytes]:
        old = self.get(key)
        self.put(key, None)
        return old

    def _evict_eldest(self) -> None:
        key = next(iter(self._entries))
        if key in self._dirty:
            self.flush(first=key)   # Kafka: evicting a dirty entry flushes the store, the evicted entry first
        entry = self._entries.pop(key, None)
        if entry is not None and self._cache is not None:
            self._cache.size -= entry.size

    # ------------------------------------------------------------------ commit
    def flush(self, first: Optional[bytes] = None) -> None:
        """Write every dirty entry through and forward it (the task commits), ``first`` before the others."""
        if not self._dirty:
            return
        dirty, self._dirty = self._dirty, {}   # cleared first: forwarding may write to this store again
        if first is not None:
            dirty = {first: None, **dirty}
        listener, wrapped, entries, send_old_values = self._listener, self.wrapped, self._entries, self._send_old_values
        for key in dirty:
            entry = entries[key]
            new, typed = entry.value, entry.typed
            old = wrapped.get(key) if new is None or send_old_values else None
            if new is None and old is None:
                continue   # never existed downstream: nothing to write or forward
            wrapped.put(key, new)
            entry.typed = None   # clean now; reads deserialize the bytes again
            if listener is not None:
                listener(key, new, old if send_old_values else None, entry.timestamp, entry.headers, typed)

    @property
    def dirty(self) -> bool:
        return bool(self._dirty)

    # ------------------------------------------------------------------ snapshots
    def entries(self) -> dict[bytes, bytes]:
        if self._dirty:
            raise IllegalStateError(f"store {self.name} has unflushed cached writes; commit before a snapshot")
        return self.wrapped.entries()

    def restore(self, entries: dict[bytes, bytes]) -> None:
        self.clear_cache()
        self.wrapped.restore(entries)

    def clear_cache(self) -> None:
        if self._cache is not None:
            self._cache.size -= sum(e.size for e in self._entries.values())
        self._entries.clear()
        self._dirty.clear()

    def close(self) -> None:
        self.clear_cache()
        self.wrapped.close()

    def __repr__(self) -> str:
        return f"CachingKeyValueBytesStore({self.name!r}, {len(self._entries)} cached, {len(self._dirty)} dirty)"

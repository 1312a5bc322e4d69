"""``Stores.lru_map``: Kafka's in-memory LRU key-value store (``MemoryNavigableLRUCache``).

It keeps at most ``max_cache_size`` entries: a write of a new key beyond that evicts the least recently used one
(written or read by ``get``; reads of ranges do not count as uses), as Java's access-ordered ``LinkedHashMap`` in
Kafka's ``MemoryLRUCache`` does. Ranges, ``all`` and prefix scans read a sorted copy, so keys come in the order of
their bytes as in every other key-value store.
"""
from __future__ import annotations

from typing import Optional

from streams_on_spark.state.stores import InMemoryKeyValueBytesStore, KeyValueBytesStoreSupplier, PositionRules


class LruKeyValueBytesStore(InMemoryKeyValueBytesStore):
    """The ``bytes -> bytes`` store of ``Stores.lru_map``: the in-memory store, its dict kept in recency order (the
    eldest first) and cut to ``max_cache_size`` entries after each new key."""

    def __init__(self, name: str, max_cache_size: int) -> None:
        super().__init__(name)
        self.max_cache_size = max_cache_size

    def get(self, key: bytes) -> Optional[bytes]:
        """The value of ``key``, which becomes the most recently used (Java's access-ordered map)."""
        value = self._map.pop(key, None)
        if value is not None:
            self._map[key] = value
        return value

    def get_many(self, keys: list[bytes]) -> list[Optional[bytes]]:
        """:meth:`get` of each key, in order: each read present key becomes the most recently used, as one by one
        (the in-memory store's ``get_many`` reads its dict without touching the order)."""
        return [self.get(key) for key in keys]

    def put(self, key: bytes, value: Optional[bytes]) -> None:
        """Write ``key`` (the most recently used now); a new key beyond ``max_cache_size`` evicts the eldest entry
        (which may be this one when the size is 0), an update evicts nothing (Java's ``removeEldestEntry`` runs on
        insertions only)."""
        if value is None:
            self.delete(key)
        elif key in self._map:
            del self._map[key]
            self._map[key] = value
        else:
            super().put(key, value)
            if len(self._map) > self.max_cache_size:
                self.delete(next(iter(self._map)))


class LruMapBytesStoreSupplier(KeyValueBytesStoreSupplier):
    """``Stores.lru_map(name, max_cache_size)``: makes :class:`LruKeyValueBytesStore` instances. Not kept by an engine
    in its own table (the recency order is the store's): Spark snapshots its entries, in that order, with the task.
    Its store's position follows the in-memory store's but for ``delete``, which moves it (``MemoryLRUCache.delete``
    calls ``StoreQueryUtils.updatePosition``, ``InMemoryKeyValueStore.delete`` does not)."""

    position_rules = PositionRules(in_memory=True, delete_moves=True)

    def __init__(self, name: str, max_cache_size: int) -> None:
        super().__init__(name)
        self.max_cache_size = max_cache_size

    def get(self) -> LruKeyValueBytesStore:
        return LruKeyValueBytesStore(self.name, self.max_cache_size)

    def metrics_scope(self) -> str:
        return "in-memory-lru"


__all__ = ["LruKeyValueBytesStore", "LruMapBytesStoreSupplier"]

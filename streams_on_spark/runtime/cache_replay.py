"""The record cache's eviction rule replayed by a batch path (:mod:`~streams_on_spark.runtime.fused`) over a batch
with more keys than the cache holds.

An aggregation reads each record's key and then writes it, so its cache is, in least recently used order, the
entries untouched since they were last flushed (clean) and then those written since (dirty, in the order of their
last write). While the cache is over budget the eldest clean entry leaves (unobservable: the store holds its value);
when none is left the eldest is dirty, and its eviction flushes every dirty entry, in order, as
:meth:`~streams_on_spark.state.caching.CachingBytesStore.flush` does (written through, forwarded downstream), before it
leaves. :class:`CacheReplay` holds that account as plain dicts while a batch path folds its records, and leaves the
cache as the per-record path leaves it.
"""
from __future__ import annotations

import struct
from collections import OrderedDict
from typing import Any, Optional

from streams_on_spark.change import Change
from streams_on_spark.processor.api import Record
from streams_on_spark.state.caching import CacheEntry
from streams_on_spark.serde import LongSerde
from streams_on_spark.state.stores import _TS

_TS_LONG = struct.Struct(">qq")   # a timestamped Long's stored bytes: the timestamp, then the value

__all__ = ["CacheReplay"]


class CacheReplay:
    """One cached aggregation's record cache during a batch: ``clean`` (cache key -> entry size, least recently used
    first), ``dirty`` (cache key -> ``[key, aggregate, its timestamp, entry size, writer timestamp, writer headers,
    writer queue, writer offset]``, in order of last write) and ``size``, the task cache's bytes.

    A batch path binds ``clean`` and ``dirty`` once (they are changed in place, never replaced), moves a key it
    writes to the end of ``dirty`` (out of ``clean``), keeps ``size`` and calls :meth:`make_room` when it is over
    ``limit``; :meth:`leave` writes the account back into the cache."""

    __slots__ = ("store", "cache_store", "node", "ctx", "clean", "kept", "dirty", "size", "limit", "_serialize",
                 "_topic")

    def __init__(self, store: Any, node: Any, ctx: Any, clean: OrderedDict, kept: dict, dirty: dict) -> None:
        self.store, self.cache_store, self.node, self.ctx = store, store.record_cache, node, ctx
        self.clean, self.kept, self.dirty = clean, kept, dirty
        budget = self.cache_store.budget
        self.size, self.limit = budget.size, budget.max_bytes
        self._serialize, self._topic = store.plain_value_serde.serialize, store._topic

    @staticmethod
    def of(store: Any, node: Any, ctx: Any) -> Optional["CacheReplay"]:
        """The replay of ``store``'s cache (the typed store of the aggregation at ``node``), or None where the cache is
        not what reads followed by writes leave (a cached delete, a clean entry after a dirty one, dirty entries out of
        their write order): the per-record path decides there."""
        cache_store = store.record_cache
        dirty_before = cache_store.dirty_keys
        clean: OrderedDict[Any, int] = OrderedDict()
        kept: dict[Any, Any] = {}   # the clean entries: a CacheEntry, or what a replayed flush left (see _flush)
        dirty: dict[Any, list] = {}
        for kb, entry in cache_store.cached_entries.items():
            if kb in dirty_before:
                if entry.typed is None:
                    return None
                key, agg, ts = entry.typed
                dirty[kb] = [key, agg, ts, entry.size, entry.timestamp, entry.headers, entry.queue, entry.offset]
            elif dirty:
                return None
            else:
                clean[kb] = entry.size
                kept[kb] = entry
        if list(dirty) != list(dirty_before):
            return None
        return CacheReplay(store, node, ctx, clean, kept, dirty)

    def old_value(self, kb: Any) -> Optional[bytes]:
        """The stored bytes a clean entry of ``kb`` holds (None: not a clean entry)."""
        entry = self.kept.get(kb)
        if entry is None:
            return None
        return entry.value if entry.__class__ is CacheEntry else entry[0]

    def take_clean(self, kb: Any) -> int:
        """Take ``kb`` out of the clean entries (it is written again); the size it had, 0 if it was not one."""
        size = self.clean.pop(kb, 0)
        if size:
            del self.kept[kb]
        return size

    def make_room(self, size: int, queue: Any, offset: int) -> int:
        """Evict as the cache does while ``size`` is over the limit, the record at ``offset`` of ``queue`` in process
        (an eviction of a dirty entry flushes every dirty entry first); the size left."""
        clean, kept, dirty, limit = self.clean, self.kept, self.dirty, self.limit
        while size > limit:
            if not clean:
                if not dirty:
                    break
                self._flush(queue, offset)
            evicted, evicted_size = clean.popitem(last=False)
            del kept[evicted]
            size -= evicted_size
        return size

    def _flush(self, queue: Any, offset: int) -> None:
        """Every dirty entry written through and forwarded, in order, each from its writer (as
        :meth:`CachingBytesStore.flush`); they are clean after it. Where the aggregation forwards without old values,
        what its flush listener does for an entry (:func:`~streams_on_spark.operators.shared.forward_on_flush`
        through the typed store's adapter) is done here directly: the store beneath written, then
        ``Change(aggregate, None)`` forwarded with the aggregate's timestamp and the writer's headers."""
        ctx, clean, kept, dirty = self.ctx, self.clean, self.kept, self.dirty
        flush_entry, vser, topic, pack = self.cache_store.flush_entry, self._serialize, self._topic, _TS.pack
        write, forward = self.cache_store.write_stored, self.node.processor.forward
        direct = not self.node.processor.send_old_values
        longs, pack_long = type(self.store.plain_value_serde) is LongSerde, _TS_LONG.pack
        ctx.queue, ctx.offset, ctx.current = queue, offset, self.node
        try:
            for flushed, (fkey, fagg, fts, fsize, wts, wheaders, wqueue, woff) in dirty.items():
                if wqueue is not None:   # each entry from its writer, as CachingBytesStore.flush
                    ctx.queue, ctx.offset = wqueue, woff
                # a Long store's int aggregate is an int64 (sized or serialized once already): Kafka's 16 bytes
                data = pack_long(fts, fagg) if longs and fagg.__class__ is int else pack(fts) + vser(topic, fagg)
                if direct:
                    write(flushed, data)
                    forward(Record(fkey, Change(fagg, None), fts, wheaders))
                else:
                    flush_entry(flushed, data, (fkey, fagg, fts), wts, wheaders)
                clean[flushed] = fsize
                kept[flushed] = (data, wts, wheaders, fsize)   # a CacheEntry if it is still cached at the end
                ctx.queue, ctx.offset = queue, offset
        finally:
            ctx.current = ctx.queue = None
        dirty.clear()

    def leave(self) -> None:
        """The cache as the per-record path leaves it: the clean entries, then the dirty ones in write order."""
        cache_store = self.cache_store
        entries = cache_store.cached_entries
        entries.clear()
        kept = self.kept
        for kb in self.clean:
            entry = kept[kb]
            entries[kb] = entry if entry.__class__ is CacheEntry else CacheEntry(*entry, None)
        vser, topic, pack = self._serialize, self._topic, _TS.pack
        longs, pack_long = type(self.store.plain_value_serde) is LongSerde, _TS_LONG.pack
        for kb, (key, agg, ts, held, wts, wheaders, wqueue, woff) in self.dirty.items():
            data = pack_long(ts, agg) if longs and agg.__class__ is int else pack(ts) + vser(topic, agg)
            entries[kb] = CacheEntry(data, wts, wheaders, held, (key, agg, ts), wqueue, woff)
        cache_store.set_dirty_keys(self.dirty)
        cache_store.budget.size = self.size

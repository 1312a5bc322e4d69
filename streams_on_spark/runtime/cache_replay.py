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

import itertools
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
    writer queue, writer offset]`` (a list or a tuple), in order of last write) and ``size``, the task cache's bytes.

    A batch path binds ``clean`` and ``dirty`` once (they are changed in place, never replaced), moves a key it
    writes to the end of ``dirty`` (out of ``clean``), keeps ``size`` and calls :meth:`make_room` when it is over
    ``limit``; :meth:`leave` writes the account back into the cache."""

    __slots__ = ("store", "cache_store", "node", "ctx", "clean", "kept", "dirty", "size", "limit", "_serialize",
                 "_topic", "columns")

    def __init__(self, store: Any, node: Any, ctx: Any, clean: OrderedDict, kept: dict, dirty: dict,
                 columns: Any = None) -> None:
        self.store, self.cache_store, self.node, self.ctx = store, store.record_cache, node, ctx
        self.clean, self.kept, self.dirty = clean, kept, dirty
        # the aggregation's flush in bulk (fused.FlushedColumns), where nothing below it tells one entry from the next
        self.columns = columns
        budget = self.cache_store.budget
        self.size, self.limit = budget.size, budget.max_bytes
        self._serialize, self._topic = store.plain_value_serde.serialize, store._topic

    @staticmethod
    def of(store: Any, node: Any, ctx: Any, columns: Any = None) -> Optional["CacheReplay"]:
        """The replay of ``store``'s cache (the typed store of the aggregation at ``node``), or None where the cache is
        not what reads followed by writes leave (a cached delete, a clean entry after a dirty one, dirty entries out of
        their write order): the per-record path decides there. ``columns``: the aggregation's flush in bulk, if it
        has one (see :meth:`_flush`)."""
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
        return CacheReplay(store, node, ctx, clean, kept, dirty, columns)

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
        ``Change(aggregate, None)`` forwarded with the aggregate's timestamp and the writer's headers; where nothing
        below it can tell one entry from the next (``columns``) and no entry has headers, all of them at once
        (:meth:`~streams_on_spark.runtime.fused.FlushedColumns.write`: the store's writes and the output in bulk)."""
        if self.columns is not None and self._flush_columns():
            return
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

    def _flush_columns(self) -> bool:
        """:meth:`_flush` in bulk; False (nothing done) where an entry has headers or the aggregation sends old
        values."""
        dirty = self.dirty
        if not dirty:
            return True
        if self.node.processor.send_old_values:
            return False
        keys, aggs, tss, sizes, wtss, headers, _, _ = zip(*dirty.values())
        if any(headers):
            return False
        flushed = list(dirty)
        datas = self.columns.stored(tss, aggs)
        self.columns.write(flushed, datas, keys, aggs, tss)
        self.clean.update(zip(flushed, sizes))
        self.kept.update(zip(flushed, zip(datas, wtss, headers, sizes)))
        dirty.clear()
        return True

    def write_new(self, cache_keys: list, keys: list, aggregates: list, timestamps: list, sizes: Any,
                  writer_timestamps: list, queue: Any, offset: int) -> None:
        """Each of ``cache_keys`` written once, in this order (its key, aggregate with its timestamp and entry size;
        written by the record at ``offset + i`` of ``queue``, stamped ``writer_timestamps[i]``, without headers),
        none of them cached now, with the cache's rule — in columns: the entries in LRU order (the clean ones, the
        dirty ones, then these) evict from the eldest, and a write that finds no clean entry left to evict flushes
        every dirty one, so the evictions and flushes follow from the entries' cumulative sizes alone (numpy), and
        what every flush of the run writes and sends is one bulk flush (:attr:`columns`, required; no dirty entry
        with headers). A write's eviction is that of :meth:`make_room`."""
        import numpy as np
        clean, kept, dirty, columns = self.clean, self.kept, self.dirty, self.columns
        nc, n = len(clean), len(cache_keys)
        m = nc + len(dirty)
        upto = np.empty(m + n + 1, np.int64)   # upto[j]: the bytes of the first j entries in LRU order
        upto[0] = 0
        upto[1:nc + 1] = np.fromiter(clean.values(), np.int64, nc)
        upto[nc + 1:m + 1] = np.fromiter((state[3] for state in dirty.values()), np.int64, m - nc)
        upto[m + 1:] = sizes
        np.cumsum(upto, out=upto)
        base = self.size - int(upto[m])   # what else the task's cache holds (nothing: the task's only store)
        # after write i the cache holds entries [need[i], m + i + 1): the eldest leave while it is over its limit
        need = np.searchsorted(upto, upto[m + 1:] + (base - self.limit), side="left")
        np.minimum(need, np.arange(m + 1, m + n + 1), out=need)
        boundary, flushed = nc, 0   # entries before boundary are clean; the new ones before flushed were flushed
        while True:   # a write whose evictions pass the clean entries flushes every dirty one, itself included
            i = int(np.searchsorted(need, boundary, side="right"))
            if i >= n:
                break
            boundary, flushed = m + i + 1, i + 1
        evicted = max(int(need[-1]), 0) if n else 0
        for _ in range(min(evicted, nc)):
            kb, _ = clean.popitem(last=False)
            del kept[kb]
        sizes = sizes.tolist()
        if boundary > nc:   # flushed: the dirty entries, then the new ones up to the last write that flushed
            if dirty:
                old_keys, old_aggs, old_ts, old_sizes, old_wts, _, _, _ = zip(*dirty.values())
                flushed_keys = [*dirty, *cache_keys[:flushed]]
                typed_keys, aggs, tss = [*old_keys, *keys[:flushed]], [*old_aggs, *aggregates[:flushed]], \
                    [*old_ts, *timestamps[:flushed]]
                entry_sizes, wtss = [*old_sizes, *sizes[:flushed]], [*old_wts, *writer_timestamps[:flushed]]
            else:
                flushed_keys, typed_keys, aggs, tss = (cache_keys[:flushed], keys[:flushed], aggregates[:flushed],
                                                       timestamps[:flushed])
                entry_sizes, wtss = sizes[:flushed], writer_timestamps[:flushed]
            datas = columns.stored(tss, aggs)
            columns.write(flushed_keys, datas, typed_keys, aggs, tss)
            dirty.clear()
            kept_from = max(evicted - nc, 0)   # the flushed entries still cached: clean
            clean.update(zip(flushed_keys[kept_from:], entry_sizes[kept_from:]))
            kept.update(zip(flushed_keys[kept_from:], zip(datas[kept_from:], wtss[kept_from:],
                                                          itertools.repeat(()), entry_sizes[kept_from:])))
        dirty.update(zip(cache_keys[flushed:], zip(keys[flushed:], aggregates[flushed:], timestamps[flushed:],
                                                     sizes[flushed:], writer_timestamps[flushed:],
                                                     itertools.repeat(()), itertools.repeat(queue),
                                                     range(offset + flushed, offset + n))))
        self.size = base + int(upto[m + n]) - int(upto[evicted])

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

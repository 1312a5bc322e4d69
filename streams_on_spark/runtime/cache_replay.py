"""The record cache's eviction rule replayed by a batch path (:mod:`~streams_on_spark.runtime.fused`) over a batch
with more keys than the cache holds.

An aggregation reads each record's key and then writes it, so its cache is, in least recently used order, the
entries untouched since they were last flushed (clean) and then those written since (dirty, in the order of their
last write). While the cache is over budget the eldest clean entry leaves (unobservable: the store holds its value);
when none is left the eldest is dirty, and its eviction flushes every dirty entry, in order, as
:meth:`~streams_on_spark.state.caching.CachingBytesStore.flush` does (written through, forwarded downstream), before it
leaves. :class:`CacheReplay` holds that account as plain dicts while a batch path folds its records (as columns while
a fill's new keys are written, :class:`_Tail`), and leaves the cache as the per-record path leaves it.
"""
from __future__ import annotations

import itertools
import struct
from collections import OrderedDict
from typing import Any, Callable, Optional, Sequence

from streams_on_spark.change import Change
from streams_on_spark.processor.api import Record
from streams_on_spark.state.caching import CacheEntry
from streams_on_spark.serde import LongSerde
from streams_on_spark.state.stores import _TS

_TS_LONG = struct.Struct(">qq")   # a timestamped Long's stored bytes: the timestamp, then the value

__all__ = ["CacheReplay", "long_sized", "stored_bytes"]


def long_sized(store: Any) -> bool:
    """Whether the typed ``store`` holds Longs, whose entries' sizes depend on their keys only (see
    :func:`~streams_on_spark.runtime.fused._entry_sizer`) and whose stored bytes are Kafka's 16 packed at once."""
    return type(store.plain_value_serde) is LongSerde


def stored_bytes(store: Any, timestamps: Sequence[int], aggregates: Sequence[Any]) -> list[bytes]:
    """What the typed ``store`` writes beneath itself for each aggregate with its timestamp (Kafka's
    ``ValueAndTimestamp``: the timestamp, then the serialized value): for a Long store's int aggregates (int64s:
    sized or serialized once already) Kafka's 16 bytes packed at once. The one way the account's dirty entries get
    their stored bytes, in either form (:meth:`CacheReplay.leave`, :meth:`_Tail.leave`) and in every flush it replays
    (:meth:`CacheReplay._flush`, its bulk form and :meth:`CacheReplay.write_new`'s, which hand them to
    :meth:`~streams_on_spark.runtime.fused.FlushedColumns.write`)."""
    if long_sized(store) and set(map(type, aggregates)) <= {int}:
        return list(map(_TS_LONG.pack, timestamps, aggregates))
    pack, vser, topic = _TS.pack, store.plain_value_serde.serialize, store._topic
    return [pack(ts) + vser(topic, agg) for ts, agg in zip(timestamps, aggregates)]

_COMPACT_AT = 65_536   # evicted entries a fill's columns (_Tail) keep before dropping them (when half are evicted)


class CacheReplay:
    """One cached aggregation's record cache during a batch: ``clean`` (cache key -> entry size, least recently used
    first), ``dirty`` (cache key -> ``[key, aggregate, its timestamp, entry size, writer timestamp, writer headers,
    writer queue, writer offset]`` (a list or a tuple), in order of last write) and ``size``, the task cache's bytes.

    A batch path binds ``clean`` and ``dirty`` once (they are changed in place, never replaced), moves a key it
    writes to the end of ``dirty`` (out of ``clean``), keeps ``size`` and calls :meth:`make_room` when it is over
    ``limit``; :meth:`leave` writes the account back into the cache."""

    __slots__ = ("store", "cache_store", "node", "ctx", "_clean", "_kept", "_dirty", "_tail", "size", "limit",
                 "columns")

    def __init__(self, store: Any, node: Any, ctx: Any, clean: OrderedDict, kept: dict, dirty: dict,
                 columns: Any = None) -> None:
        self.store, self.cache_store, self.node, self.ctx = store, store.record_cache, node, ctx
        self._clean, self._kept, self._dirty = clean, kept, dirty
        # the account in columns while only write_new writes it (a fill): then the dicts are empty (see _Tail)
        self._tail: Optional[_Tail] = None
        # the aggregation's flush in bulk (fused.FlushedColumns), where nothing below it tells one entry from the next
        self.columns = columns
        budget = self.cache_store.budget
        self.size, self.limit = budget.size, budget.max_bytes

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

    @property
    def clean(self) -> OrderedDict:
        """The clean entries' cache keys -> entry sizes, least recently used first (the account's dicts: from the
        columns :meth:`write_new` keeps, if it keeps them)."""
        if self._tail is not None:
            self._materialize()
        return self._clean

    @property
    def kept(self) -> dict:
        """The clean entries' cache keys -> a ``CacheEntry`` or ``(stored bytes, writer timestamp, writer headers,
        entry size)``."""
        if self._tail is not None:
            self._materialize()
        return self._kept

    @property
    def dirty(self) -> dict:
        """The dirty entries' cache keys -> their states (see the class doc), in order of last write."""
        if self._tail is not None:
            self._materialize()
        return self._dirty

    def held(self, cache_keys: list) -> Any:
        """Those of ``cache_keys`` the account holds (a collection; empty: none of them, told without building one
        where none is held)."""
        tail = self._tail
        if tail is not None and tail.live.isdisjoint(cache_keys):
            return ()
        clean, dirty = self.clean, self.dirty
        if clean.keys().isdisjoint(cache_keys) and dirty.keys().isdisjoint(cache_keys):
            return ()
        return (clean.keys() & cache_keys) | (dirty.keys() & cache_keys)

    def occupied(self, kb: Any) -> int:
        """The entry size of ``kb``, which the account holds."""
        return self.clean.get(kb) or self.dirty[kb][3]

    def dirty_with_headers(self) -> bool:
        """Whether a dirty entry's writer had headers (what the bulk flushes do not take)."""
        return self._tail is None and any(state[5] for state in self._dirty.values())

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
        flush_entry, write, forward = self.cache_store.flush_entry, self.cache_store.write_stored, \
            self.node.processor.forward
        direct = not self.node.processor.send_old_values
        states = list(dirty.values())
        datas = stored_bytes(self.store, [state[2] for state in states], [state[1] for state in states])
        ctx.queue, ctx.offset, ctx.current = queue, offset, self.node
        try:
            for flushed, (fkey, fagg, fts, fsize, wts, wheaders, wqueue, woff), data in zip(dirty, states, datas):
                if wqueue is not None:   # each entry from its writer, as CachingBytesStore.flush
                    ctx.queue, ctx.offset = wqueue, woff
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
        _, aggs, tss, sizes, wtss, headers, _, _ = zip(*dirty.values())
        if any(headers):
            return False
        flushed = list(dirty)
        datas = stored_bytes(self.store, tss, aggs)
        self.columns.write(flushed, datas, tss)
        self.clean.update(zip(flushed, sizes))
        self.kept.update(zip(flushed, zip(datas, wtss, headers, sizes)))
        dirty.clear()
        return True

    def write_new(self, cache_keys: list, key_of: Callable[[list], list], aggregates: list, timestamps: list,
                  sizes: Any, writer_timestamps: list, queue: Any, offset: int) -> None:
        """Each of ``cache_keys`` written once, in this order (its aggregate with its timestamp and entry size;
        written by the record at ``offset + i`` of ``queue``, stamped ``writer_timestamps[i]``, without headers;
        ``key_of`` gives the writer's keys of cache keys, asked only for those still dirty when the account is read:
        a fill flushes most of its keys before, whose ``str`` is never needed),
        none of them cached now, with the cache's rule — in columns: the entries in LRU order (the clean ones, the
        dirty ones, then these) evict from the eldest, and a write that finds no clean entry left to evict flushes
        every dirty one, so the evictions and flushes follow from the entries' cumulative sizes alone (numpy), and
        what every flush of the run writes and sends is one bulk flush (:attr:`columns`, required; no dirty entry
        with headers). A write's eviction is that of :meth:`make_room`. The account is kept in columns
        (:class:`_Tail`) until something else reads it."""
        import numpy as np
        tail = self._tail
        if tail is None:
            tail = self._tail = _Tail.of(self._clean, self._kept, self._dirty)
        columns, n = self.columns, len(cache_keys)
        head, boundary, end = tail.head, tail.boundary, len(tail.cache_keys)
        nc, m = boundary - head, end - head
        upto = np.empty(m + n + 1, np.int64)   # upto[j]: the bytes of the first j entries in LRU order
        upto[0] = 0
        upto[1:m + 1] = tail.sizes[head:end]
        upto[m + 1:] = sizes
        np.cumsum(upto, out=upto)
        base = self.size - int(upto[m])   # what else the task's cache holds (nothing: the task's only store)
        # after write i the cache holds entries [need[i], m + i + 1): the eldest leave while it is over its limit
        need = np.searchsorted(upto, upto[m + 1:] + (base - self.limit), side="left")
        np.minimum(need, np.arange(m + 1, m + n + 1), out=need)
        clean_to, flushed = nc, 0   # entries before clean_to are clean; the new ones before flushed were flushed
        while True:   # a write whose evictions pass the clean entries flushes every dirty one, itself included
            i = int(np.searchsorted(need, clean_to, side="right"))
            if i >= n:
                break
            clean_to, flushed = m + i + 1, i + 1
        evicted = max(int(need[-1]), 0) if n else 0
        if clean_to > nc:   # flushed: the dirty entries, then the new ones up to the last write that flushed
            flushed_keys = tail.cache_keys[boundary:] + cache_keys[:flushed]
            tss, aggs = tail.timestamps + timestamps[:flushed], tail.aggregates + aggregates[:flushed]
            datas = stored_bytes(self.store, tss, aggs)
            columns.write(flushed_keys, datas, tss)
            tail.datas[boundary:] = datas[:end - boundary]   # clean now: their stored bytes
            tail.datas += datas[end - boundary:]
            tail.datas += itertools.repeat(None, n - flushed)
            tail.keys, tail.raw_from, tail.key_of = cache_keys[flushed:], 0, key_of   # decoded when read
            tail.aggregates, tail.timestamps = aggregates[flushed:], timestamps[flushed:]
            tail.queues, tail.offsets = [queue] * (n - flushed), list(range(offset + flushed, offset + n))
            tail.boundary = end + flushed
        else:
            tail.datas += itertools.repeat(None, n)
            if tail.raw_from is None:
                tail.raw_from, tail.key_of = len(tail.keys), key_of
            tail.keys += cache_keys
            tail.aggregates += aggregates
            tail.timestamps += timestamps
            tail.queues += itertools.repeat(queue, n)
            tail.offsets += range(offset, offset + n)
        tail.cache_keys += cache_keys
        tail.writer_timestamps += writer_timestamps
        tail.sizes = np.concatenate((tail.sizes, sizes))
        tail.live.update(cache_keys)
        tail.evict(evicted)
        self.size = base + int(upto[m + n]) - int(upto[evicted])

    def _materialize(self) -> None:
        """The account's columns (:class:`_Tail`) back into its dicts, for what reads or writes them."""
        tail, self._tail = self._tail, None
        tail.into(self._clean, self._kept, self._dirty)

    def leave(self) -> None:
        """The cache as the per-record path leaves it: the clean entries, then the dirty ones in write order."""
        cache_store = self.cache_store
        entries = cache_store.cached_entries
        entries.clear()
        if self._tail is not None:
            tail, self._tail = self._tail, None
            dirty = tail.leave(entries, self.store)
            cache_store.set_dirty_keys(dirty)
            cache_store.budget.size = self.size
            return
        kept = self.kept
        for kb in self.clean:
            entry = kept[kb]
            entries[kb] = entry if entry.__class__ is CacheEntry else CacheEntry(*entry, None)
        dirty = self.dirty
        states = list(dirty.values())
        datas = stored_bytes(self.store, [state[2] for state in states], [state[1] for state in states])
        for kb, (key, agg, ts, held, wts, wheaders, wqueue, woff), data in zip(dirty, states, datas):
            entries[kb] = CacheEntry(data, wts, wheaders, held, (key, agg, ts), wqueue, woff)
        cache_store.set_dirty_keys(self.dirty)
        cache_store.budget.size = self.size


class _Tail:
    """:class:`CacheReplay`'s account in columns while a fill writes it (:meth:`CacheReplay.write_new` only): the
    cached entries in LRU order as lists, ``[head, boundary)`` clean and ``[boundary, end)`` dirty, so a record
    batch's writes, flushes and evictions are list extensions, slices and a moving ``head`` instead of a dict update
    per entry. For every entry: its cache key, entry size (numpy), writer timestamp and, once clean, its stored bytes
    (or, for one taken from the cache, its ``CacheEntry``); for the dirty ones (``[boundary, end)``, indexed from
    ``boundary``) the key, aggregate, its timestamp and the writer's queue and offset (no headers: write_new takes
    none). ``live`` is the set of the cache keys held. The dirty keys from ``raw_from`` on are still cache keys, whose
    keys ``key_of`` gives when they are read (:meth:`typed_keys`): most of a fill's entries are flushed before."""

    __slots__ = ("cache_keys", "sizes", "writer_timestamps", "datas", "head", "boundary", "keys", "raw_from", "key_of",
                 "aggregates", "timestamps", "queues", "offsets", "live")

    @staticmethod
    def of(clean: OrderedDict, kept: dict, dirty: dict) -> "_Tail":
        """The account's dicts (emptied) as columns."""
        import numpy as np
        tail = _Tail()
        tail.cache_keys = [*clean, *dirty]
        states = list(dirty.values())
        tail.sizes = np.fromiter(itertools.chain(clean.values(), (state[3] for state in states)), np.int64,
                                 len(tail.cache_keys))
        tail.writer_timestamps = [None] * len(clean) + [state[4] for state in states]
        tail.datas = [entry if entry.__class__ is CacheEntry else CacheEntry(*entry, None)
                      for entry in map(kept.__getitem__, clean)] + [None] * len(states)
        tail.head, tail.boundary = 0, len(clean)
        tail.keys = [state[0] for state in states]
        tail.raw_from = tail.key_of = None
        tail.aggregates = [state[1] for state in states]
        tail.timestamps = [state[2] for state in states]
        tail.queues = [state[6] for state in states]
        tail.offsets = [state[7] for state in states]
        tail.live = set(tail.cache_keys)
        clean.clear()
        kept.clear()
        dirty.clear()
        return tail

    def evict(self, count: int) -> None:
        """The ``count`` eldest entries out (clean ones: the store holds them)."""
        head = self.head
        self.live.difference_update(self.cache_keys[head:head + count])
        head += count
        if head > _COMPACT_AT and 2 * head > len(self.cache_keys):   # the evicted prefix dropped from the columns
            del self.cache_keys[:head], self.writer_timestamps[:head], self.datas[:head]
            self.sizes = self.sizes[head:].copy()
            self.boundary -= head
            head = 0
        self.head = head

    def typed_keys(self) -> list:
        """The dirty entries' keys (those still cache keys decoded now)."""
        raw_from = self.raw_from
        if raw_from is not None:
            self.keys[raw_from:] = self.key_of(self.keys[raw_from:])
            self.raw_from = None
        return self.keys

    def into(self, clean: OrderedDict, kept: dict, dirty: dict) -> None:
        """The columns into the account's (empty) dicts."""
        head, boundary = self.head, self.boundary
        clean_keys = self.cache_keys[head:boundary]
        clean.update(zip(clean_keys, self.sizes[head:boundary].tolist()))
        kept.update(zip(clean_keys, [data if data.__class__ is CacheEntry else (data, wts, (), size)
                                     for data, wts, size in zip(self.datas[head:boundary],
                                                                self.writer_timestamps[head:boundary],
                                                                self.sizes[head:boundary].tolist())]))
        dirty.update(zip(self.cache_keys[boundary:],
                         map(list, zip(self.typed_keys(), self.aggregates, self.timestamps,
                                       self.sizes[boundary:].tolist(),
                                       self.writer_timestamps[boundary:], itertools.repeat(()), self.queues,
                                       self.offsets))))

    def leave(self, entries: OrderedDict, store: Any) -> list:
        """The entries into the cache's (empty) ``entries`` as the per-record path leaves them; the dirty cache keys,
        in write order."""
        head, boundary = self.head, self.boundary
        entries.update(zip(self.cache_keys[head:boundary],
                           [data if data.__class__ is CacheEntry else CacheEntry(data, wts, (), size, None)
                            for data, wts, size in zip(self.datas[head:boundary],
                                                       self.writer_timestamps[head:boundary],
                                                       self.sizes[head:boundary].tolist())]))
        dirty = self.cache_keys[boundary:]
        datas = stored_bytes(store, self.timestamps, self.aggregates)
        entries.update(zip(dirty, map(CacheEntry, datas, self.writer_timestamps[boundary:], itertools.repeat(()),
                                      self.sizes[boundary:].tolist(),
                                      zip(self.typed_keys(), self.aggregates, self.timestamps), self.queues,
                                      self.offsets)))
        return dirty

"""The record cache (Kafka's ``ThreadCache``/``NamedCache`` with ``CachingKeyValueStore``, ``CachingWindowStore`` and
``CachingSessionStore``): writes to a DSL store are held and forwarded downstream when the task commits, so several
updates of one key (or window, or session) between commits leave as one.

A caching layer sits between a typed store and its bytes store and has the bytes store's interface. Reads see the
cached values merged with the stored ones, in the store's order; writes become dirty entries. On
:meth:`~CachingBytesStore.flush` (the task's commit) each dirty entry, in the order of its last write (Kafka's
``NamedCache`` moves a re-dirtied key to the end), is written through and handed to the flush listener the store's
processor registered, with the value the bytes store held before (the old value downstream sees) and the timestamp
and headers of the record that last wrote it. An entry that never existed downstream (new and old value null) is
neither written nor forwarded, and flushed deletes leave the cache. When the task's cache grows past
``statestore.cache.max.bytes`` the least recently used entry of the store being written is evicted, and evicting a
dirty entry flushes the store, evicted entry first.

:class:`CachingBytesStore` is that machinery, keyed by a *cache key*: the key bytes for key-value stores,
``(key bytes, window start)`` for window stores and ``(key bytes, session start, session end)`` for session stores
(Kafka's binary store keys, kept as tuples). The three layers add the bytes-store interface on top.

Kafka's test driver commits after every record, and so does ours: caching then only merges the updates one input
record makes to a key. On Spark a commit is the end of a micro-batch, where caching cuts what an aggregation emits
to the last update per key and batch (Kafka's commit interval).
"""
from __future__ import annotations

from abc import ABC
from collections import OrderedDict
from operator import itemgetter
from typing import Any, Callable, Hashable, Iterable, Iterator, Mapping, Optional, Protocol, runtime_checkable

from streams_on_spark.errors import IllegalStateError
from streams_on_spark.window import LONG_MAX

#: what one cached entry costs besides its key and value bytes (Kafka's LRUCacheEntry overhead is of this order)
ENTRY_OVERHEAD_BYTES = 64
_TIMESTAMP_BYTES = 8      # what a window start or session bound adds to a cache key (Kafka's binary store keys)

# (cache key, new value, old value, timestamp and headers of the record that last wrote it, what the writer attached)
FlushListener = Callable[[Any, Optional[bytes], Optional[bytes], int, Any, Any], None]


@runtime_checkable
class BulkFlush(Protocol):
    """A way to flush a cache's dirty entries all at once, given to a caching store by its owner
    (:meth:`CachingBytesStore.use_bulk_flush`). :meth:`CachingBytesStore.flush` otherwise writes each entry through
    and hands it to the flush listener one by one (a ``Record`` and a ``Change`` per entry); where nothing downstream
    of the store's processor can tell one flushed entry from the next, the runtime's batch path gives one
    (``runtime/fused.py``'s ``FlushedColumns``: the store beneath written with one ``put_many``, the records encoded
    at once). The state layer knows only this interface, so it imports nothing above it."""

    def flush_entries(self, cache_keys: list[Any], entries: Mapping[Any, "CacheEntry"]) -> bool:
        """Write through and forward the dirty entries ``cache_keys`` (in flush order; ``entries``: the cache's, by
        cache key) as the per-entry flush would, leaving each one clean (``typed`` None); or do nothing and return
        False (an entry it cannot flush: a delete, headers), and the per-entry flush takes them."""


class TaskCache:
    """The cache budget of one task, shared by its caching stores (Kafka shares one per stream thread)."""

    __slots__ = ("max_bytes", "size")

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0

    # A pickled task (an engine moving a live task between processes) starts with empty caches: their entries are
    # clean after a commit and would only cost the pickle their size.
    def __getstate__(self) -> dict:
        return {"max_bytes": self.max_bytes, "size": 0}

    def __setstate__(self, state: dict) -> None:
        self.max_bytes, self.size = state["max_bytes"], state["size"]


class NoRecordInProcess:
    """The record context of a store outside a stream task (a global store's, a test's): no record in process, so
    writes add nothing to a position and cached entries keep no writer."""

    queue = None
    offset = -1


def record_context(context: Any) -> Any:
    """Where a store reads the record in process (``queue``: its RecordQueue, None in a punctuation; ``offset``): a
    stream task's context, which says so with ``tracks_store_positions``, else :class:`NoRecordInProcess`."""
    return context if getattr(context, "tracks_store_positions", False) else NoRecordInProcess


class CacheEntry:
    """A cached write: the value, the writer's timestamp and headers, its size, the writer's objects (``typed``), and
    where the writer came from (``queue``, ``offset``: the task context's, None in a punctuation), which a flush
    restores, as Kafka's does the entry's record context."""

    __slots__ = ("value", "timestamp", "headers", "size", "typed", "queue", "offset")

    def __init__(self, value: Optional[bytes], timestamp: int, headers: Any, size: int, typed: Any,
                 queue: Any = None, offset: int = -1) -> None:
        self.value, self.timestamp, self.headers, self.size, self.typed = value, timestamp, headers, size, typed
        self.queue, self.offset = queue, offset


class CachingBytesStore(ABC):
    """A write-back cache over one bytes store, flushed on commit: entries, LRU order, dirty order, eviction, flush
    and the snapshot guard. ``stored(cache_key)`` and ``write(cache_key, value)`` read and write the store beneath."""

    def __init__(self, wrapped: Any, stored: Callable[[Any], Optional[bytes]],
                 write: Callable[[Any, Optional[bytes]], None]) -> None:
        self.wrapped = wrapped
        self.name = wrapped.name
        self._stored, self._write = stored, write
        self._entries: OrderedDict[Any, CacheEntry] = OrderedDict()   # least recently used first
        self._dirty: dict[Any, None] = {}                         # in order of last write since the flush
        self._cache: Optional[TaskCache] = None
        self._context: Any = None
        self._listener: Optional[FlushListener] = None
        self._send_old_values = False
        self._through = False   # write_through(): every write flushed as it is made
        # the typed store's position update (SerdeStore._written), called when a flushed write moves the position of
        # the store beneath (a window or session store's ``put`` says so; a key-value store's position moves as it
        # is written, in the typed store: Kafka's CachingKeyValueStore keeps a position of its own)
        self.flushed_into_position: Optional[Callable[[], None]] = None
        self._bulk_flush: Optional[BulkFlush] = None   # see use_bulk_flush

    def init(self, context: Any) -> None:
        """Join the task's cache; without one (a global store, or a cache size of 0) writes go straight through."""
        cache = getattr(context, "cache", None)
        self._cache = cache if cache is not None and cache.max_bytes > 0 else None
        self._context = context
        self._writer = record_context(context)   # where a cached write's writer came from, restored by a flush

    @property
    def enabled(self) -> bool:
        return self._cache is not None

    def __getstate__(self) -> dict:
        """Pickled empty (see :class:`TaskCache`); only a flushed cache may be pickled."""
        if self._dirty:
            raise IllegalStateError(f"store {self.name} has unflushed cached writes; commit before pickling")
        state = dict(self.__dict__)
        state["_entries"] = OrderedDict()
        state["_bulk_flush"] = None   # the batch path's (use_bulk_flush): planned again with the task's
        return state

    @property
    def metrics(self) -> Any:
        """The dropped-records counter of the store beneath (AttributeError when it keeps none)."""
        return self.wrapped.metrics

    @metrics.setter
    def metrics(self, metrics: Any) -> None:
        self.wrapped.metrics = metrics

    def use_bulk_flush(self, flush: Optional["BulkFlush"]) -> None:
        """Flush the dirty entries through ``flush`` from now on, where it takes them (see :class:`BulkFlush`); None:
        entry by entry again. Given by the one who plans how the store's task runs (the runtime's batch path), which
        knows what downstream can observe; not pickled with the store (a pickled task plans it again)."""
        self._bulk_flush = flush

    def set_flush_listener(self, listener: FlushListener, send_old_values: bool) -> bool:
        """Forward through ``listener`` on flush; False when caching is off (the processor forwards itself)."""
        if self._cache is None:
            return False
        self._listener, self._send_old_values = listener, send_old_values
        return True

    # ------------------------------------------------------------------ cache entries
    def _cached_entry(self, cache_key: Hashable) -> Optional[CacheEntry]:
        """The cached entry of ``cache_key`` (now the most recently used), or None when it is not cached."""
        entry = self._entries.get(cache_key)
        if entry is not None:
            self._entries.move_to_end(cache_key)
        return entry

    def _cache_put(self, cache_key: Hashable, key_size: int, value: Optional[bytes], typed: Any) -> None:
        """Cache a write stamped with the record in process; evict while the task's cache is over budget."""
        record = self._context.record
        if self._through:
            if record is None:
                self.flush_entry(cache_key, value, typed, -1, ())
            else:
                self.flush_entry(cache_key, value, typed, record.timestamp, record.headers)
            return
        cache: Any = self._cache
        size = key_size + (len(value) if value is not None else 0) + ENTRY_OVERHEAD_BYTES
        entries = self._entries
        old = entries.pop(cache_key, None)
        if old is not None:
            cache.size -= old.size
        writer = self._writer
        if record is None:
            entries[cache_key] = CacheEntry(value, -1, (), size, typed, writer.queue, writer.offset)
        else:
            entries[cache_key] = CacheEntry(value, record.timestamp, record.headers, size, typed, writer.queue,
                                        writer.offset)
        cache.size += size
        dirty = self._dirty
        if cache_key in dirty:
            del dirty[cache_key]   # Kafka: re-dirtied keys move to the end (the arrival order of the records)
        dirty[cache_key] = None
        while cache.size > cache.max_bytes and entries:
            self._evict_eldest()

    def _evict_eldest(self) -> None:
        cache_key = next(iter(self._entries))
        if cache_key in self._dirty:
            self.flush(first=cache_key)   # Kafka: evicting a dirty entry flushes the store, the evicted entry first
        self._drop(cache_key)

    def _drop(self, cache_key: Hashable) -> None:
        """Remove an entry from the cache (evicted, or a flushed delete)."""
        entry = self._entries.pop(cache_key, None)
        if entry is not None and self._cache is not None:
            self._cache.size -= entry.size

    def _merged(self, stored: dict[Any, bytes], cache_keys: Iterable[Any], order: Optional[Callable[[Any], Any]],
                reverse: bool) -> list[tuple[Any, bytes]]:
        """``stored`` (cache key -> value, read from the store beneath) with the cached values of ``cache_keys`` over
        it (a cached delete hides the stored value), sorted by ``order`` of the cache key: the store's order."""
        entries = self._entries
        for cache_key in cache_keys:
            entry = entries[cache_key]
            entries.move_to_end(cache_key)
            if entry.value is None:
                stored.pop(cache_key, None)
            else:
                stored[cache_key] = entry.value
        return sorted(stored.items(), key=None if order is None else lambda item: order(item[0]), reverse=reverse)

    def approximate_num_entries(self) -> int:
        """The store beneath's count, as Kafka's caching store answers: writes still in the cache (flushed at the
        next commit: after every record in the driver, every micro-batch on Spark) are not counted."""
        return self.wrapped.approximate_num_entries()

    # ------------------------------------------------------------------ commit
    def flush(self, first: Optional[Hashable] = None) -> None:
        """Write every dirty entry through and forward it (the task commits), ``first`` before the others."""
        if not self._dirty:
            return
        dirty, self._dirty = self._dirty, {}   # cleared first: forwarding may write to this store again
        if first is not None:
            dirty = {first: None, **dirty}
        entries = self._entries
        if self._bulk_flush is not None and self._bulk_flush.flush_entries(list(dirty), entries):
            return
        deleted = []
        # each entry is forwarded from where its writer came from (Kafka restores the entry's record context): what
        # a store written downstream adds to its position; an entry without one (a punctuation's) keeps the caller's
        context = self._writer   # (NoRecordInProcess: its entries keep no writer, nothing is set on it)
        caller = context.queue, context.offset
        try:
            for cache_key in dirty:
                entry = entries[cache_key]
                typed, entry.typed = entry.typed, None   # clean now; reads deserialize the bytes again
                if entry.value is None:
                    deleted.append(cache_key)
                if entry.queue is None:   # no record wrote it: a flush into the store moves no position
                    self.flush_entry(cache_key, entry.value, typed, entry.timestamp, entry.headers, False)
                    continue
                context.queue, context.offset = entry.queue, entry.offset
                self.flush_entry(cache_key, entry.value, typed, entry.timestamp, entry.headers)
                context.queue, context.offset = caller
        finally:
            if context is not NoRecordInProcess:   # a failed flush too: the caller's context back
                context.queue, context.offset = caller
        for cache_key in deleted:
            if cache_key not in self._dirty:   # Kafka's NamedCache drops flushed deletes
                self._drop(cache_key)

    def flush_entry(self, cache_key: Hashable, new: Optional[bytes], typed: Any, timestamp: int, headers: Any,
                     positioned: bool = True) -> None:
        """Write one entry through and forward it with the value the store held before; an entry that never existed
        downstream (new and old value null) is neither written nor forwarded. A write the store beneath takes into
        its position moves the typed store's, from the entry's writer (``positioned``: it has one)."""
        listener, send_old_values = self._listener, self._send_old_values
        old = self._stored(cache_key) if new is None or send_old_values else None
        if new is None and old is None and listener is not None:
            return
        if self._write(cache_key, new) and positioned and self.flushed_into_position is not None:
            self.flushed_into_position()
        if listener is not None:
            listener(cache_key, new, old if send_old_values else None, timestamp, headers, typed)

    @property
    def dirty(self) -> bool:
        return bool(self._dirty)

    # ------------------------------------------------------------------ the batch paths' access
    # A batch path (runtime/fused.py) folds a whole batch into the cache and leaves it as the per-record path would:
    # it reads and sets the entries, their dirty order and the budget directly, through these names (bound once per
    # batch, never per record).
    @property
    def budget(self) -> Optional[TaskCache]:
        """The task's cache budget this store counts against; None while caching is off."""
        return self._cache

    @property
    def cached_entries(self) -> OrderedDict[Any, CacheEntry]:
        """The cached entries by cache key, least recently used first (the live mapping, not a copy)."""
        return self._entries

    @property
    def dirty_keys(self) -> dict[Any, None]:
        """The dirty entries' cache keys in the order of their last write (the live mapping, not a copy)."""
        return self._dirty

    def set_dirty_keys(self, cache_keys: Iterable[Any]) -> None:
        """Make ``cache_keys`` (cached entries) the dirty ones, in this order of last write."""
        self._dirty = dict.fromkeys(cache_keys)

    @property
    def read_stored(self) -> Callable[[Any], Optional[bytes]]:
        """The value a cache key has in the store beneath (what a flush sends as the old value)."""
        return self._stored

    @property
    def write_stored(self) -> Callable[[Any, Optional[bytes]], Any]:
        """``write(cache key, value)`` into the store beneath (what a flush writes through)."""
        return self._write

    # ------------------------------------------------------------------ snapshots
    def entries(self) -> Any:
        if self._dirty:
            raise IllegalStateError(f"store {self.name} has unflushed cached writes; commit before a snapshot")
        return self.wrapped.entries()

    def restore(self, entries: Any) -> None:
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
        return f"{type(self).__name__}({self.name!r}, {len(self._entries)} cached, {len(self._dirty)} dirty)"


@runtime_checkable
class RecordCached(Protocol):
    """A store that may keep a record cache in front of its bytes store (every typed store does): the task's state
    manager finds the caches it flushes on commit through it, and the batch paths the cache they fold into."""

    @property
    def record_cache(self) -> Optional[CachingBytesStore]:
        """The enabled record cache in front of the store's bytes store, once the store is initialized; None
        without one (caching off, a cache size of 0, a global store)."""


class CachingKeyValueBytesStore(CachingBytesStore):
    """A write-back cache over an ``InMemoryKeyValueBytesStore`` (same interface), flushed on commit."""

    def __init__(self, wrapped: Any) -> None:
        super().__init__(wrapped, wrapped.get, wrapped.put)

    def get(self, key: bytes) -> Optional[bytes]:
        entry = self._cached_entry(key)
        return self.wrapped.get(key) if entry is None else entry.value

    def range(self, key_from: Optional[bytes], key_to: Optional[bytes], reverse: bool = False) -> list[tuple[bytes, bytes]]:
        """The store's entries in the range as the processors see them: cached values over stored ones."""
        if not self._entries:
            return self.wrapped.range(key_from, key_to, reverse)
        cached = [key for key in self._entries
                  if (key_from is None or key >= key_from) and (key_to is None or key <= key_to)]
        return self._merged(dict(self.wrapped.range(key_from, key_to)), cached, None, reverse)

    def scan(self, key_from: Optional[bytes], key_to: Optional[bytes],
             reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        """The bytes stores' lazy scan; here over the snapshot :meth:`range` (cached entries merged in)."""
        return iter(self.range(key_from, key_to, reverse))

    def read_stored_many(self, keys: list[bytes]) -> list[Optional[bytes]]:
        """The values ``keys`` have in the store beneath, in order (one multi-get where it has ``get_many``)."""
        get_many = getattr(self.wrapped, "get_many", None)
        return get_many(keys) if get_many is not None else [self.wrapped.get(key) for key in keys]

    def write_through(self) -> None:
        """Flush every write as it is made (nothing held): what a commit right after each record leaves where that
        record makes the store's only write before it, chosen by the task for Kafka's driver (see
        :func:`~streams_on_spark.runtime.fused.written_through`)."""
        if self._dirty:
            raise IllegalStateError(f"store {self.name} has unflushed cached writes; commit before writing through")
        self._through = True

    def put(self, key: bytes, value: Optional[bytes], typed: Any = None) -> None:
        """Cache a write; ``typed`` is what the typed store above wants back on flush (its objects, to spare
        deserializing what it just serialized)."""
        if self._cache is None:
            self.wrapped.put(key, value)
        else:
            self._cache_put(key, len(key), value, typed)

    def delete(self, key: bytes) -> Optional[bytes]:
        old = self.get(key)
        self.put(key, None)
        return old


def _wrapped_attribute(name: str) -> Any:
    """A read-only attribute answered by the wrapped store (what typed stores read through the cache)."""
    return property(lambda self: getattr(self.wrapped, name), doc=f"The wrapped store's ``{name}``.")


class _CompositeKeyCache(CachingBytesStore):
    """A cache whose keys are tuples led by the key bytes, indexed by those bytes so the processors' single-key
    range reads (every record of a sliding-window or session aggregation makes one) cost what that key has cached."""

    def __init__(self, wrapped: Any, stored: Callable[[Any], Optional[bytes]],
                 write: Callable[[Any, Optional[bytes]], None]) -> None:
        super().__init__(wrapped, stored, write)
        self._by_key: dict[bytes, dict[tuple, None]] = {}

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state["_by_key"] = {}   # the index of the entries, pickled empty with them
        return state

    def _cache_composite(self, cache_key: tuple, value: Optional[bytes], typed: Any) -> None:
        """Index the entry under its key bytes (before caching it: caching may evict it again), then cache it."""
        keys = self._by_key.get(cache_key[0])
        if keys is None:
            keys = self._by_key[cache_key[0]] = {}
        keys[cache_key] = None
        self._cache_put(cache_key, len(cache_key[0]) + (len(cache_key) - 1) * _TIMESTAMP_BYTES, value, typed)

    def _drop(self, cache_key: tuple) -> None:
        super()._drop(cache_key)
        keys = self._by_key.get(cache_key[0])
        if keys is not None:
            keys.pop(cache_key, None)
            if not keys:
                del self._by_key[cache_key[0]]

    def _cached_keys(self, key_from: Optional[bytes], key_to: Optional[bytes],
                     accept: Callable[[tuple], bool]) -> list[tuple]:
        """The cached keys with key bytes in ``[key_from, key_to]`` (None = open) that ``accept`` takes."""
        if key_from is not None and key_from == key_to:
            return [k for k in self._by_key.get(key_from, ()) if accept(k)]
        return [k for k in self._entries
                if (key_from is None or k[0] >= key_from) and (key_to is None or k[0] <= key_to) and accept(k)]

    def _merged_rows(self, rows: list[tuple], cached: list[tuple], order: Callable[[tuple], Any],
                     forward: bool) -> list[tuple]:
        """Rows of the store beneath (a cache key's fields, then the value) with the ``cached`` entries over them,
        in ``order``."""
        if not cached:
            return rows
        merged = self._merged({row[:-1]: row[-1] for row in rows}, cached, order, not forward)
        return [(*cache_key, value) for cache_key, value in merged]

    def clear_cache(self) -> None:
        super().clear_cache()
        self._by_key.clear()


_BY_START = itemgetter(1)   # one key's windows, (key bytes, window start), by start


class CachingWindowBytesStore(_CompositeKeyCache):
    """A write-back cache over a ``WindowBytesStore`` (same interface; Kafka's ``CachingWindowStore``).
    Reads come in the wrapped store's order (``window_order`` of a ``(key bytes, start)`` row). Not for stores
    retaining duplicates (builders switch caching off for them, as Kafka does)."""

    def __init__(self, wrapped: Any) -> None:
        super().__init__(wrapped, lambda k: wrapped.fetch(k[0], k[1]), lambda k, value: wrapped.put(k[0], value, k[1]))

    retention_period_ms = _wrapped_attribute("retention_period_ms")
    window_size_ms = _wrapped_attribute("window_size_ms")
    retain_duplicates = _wrapped_attribute("retain_duplicates")
    observed_stream_time = _wrapped_attribute("observed_stream_time")

    def put(self, key: bytes, value: Optional[bytes], window_start_timestamp: int, typed: Any = None) -> bool:
        """Cache a write of the window starting at ``window_start_timestamp``; None deletes. Whether the write moved
        the store's position: a cached one does when it is flushed."""
        if self._cache is None:
            return self.wrapped.put(key, value, window_start_timestamp)
        self._cache_composite((key, window_start_timestamp), value, typed)
        return False

    def fetch(self, key: bytes, window_start_timestamp: int) -> Optional[bytes]:
        entry = self._cached_entry((key, window_start_timestamp))
        return self.wrapped.fetch(key, window_start_timestamp) if entry is None else entry.value

    def fetch_key(self, key: bytes, time_from: int, time_to: int, forward: bool = True) -> list[tuple[int, bytes]]:
        rows = self.wrapped.fetch_key(key, time_from, time_to, forward)
        cached = self._cached_keys(key, key, lambda k: time_from <= k[1] <= time_to) if self._entries else None
        if not cached:
            return rows
        merged = self._merged({(key, start): value for start, value in rows}, cached, _BY_START, not forward)
        return [(start, value) for (_, start), value in merged]

    def fetch_keys(self, key_from: Optional[bytes], key_to: Optional[bytes], time_from: int, time_to: int,
                   forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        rows = self.wrapped.fetch_keys(key_from, key_to, time_from, time_to, forward)
        if key_from is not None and key_to is not None and key_from > key_to:
            return rows   # the store warned and returned nothing, as Kafka's caching store does
        return self._merged_rows(rows, self._cached_keys(key_from, key_to, lambda k: time_from <= k[1] <= time_to),
                                 self.wrapped.window_order, forward)

    def fetch_all(self, time_from: int, time_to: int, forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        return self._merged_rows(self.wrapped.fetch_all(time_from, time_to, forward),
                                 self._cached_keys(None, None, lambda k: time_from <= k[1] <= time_to),
                                 self.wrapped.window_order, forward)

    def all(self, forward: bool = True) -> list[tuple[bytes, int, bytes]]:
        return self._merged_rows(self.wrapped.all(forward), list(self._entries), self.wrapped.window_order, forward)


class CachingSessionBytesStore(_CompositeKeyCache):
    """A write-back cache over a ``SessionBytesStore`` (same
    interface; Kafka's ``CachingSessionStore``). Reads come in the wrapped store's orders (``session_order``,
    ``end_time_order`` of a ``(key bytes, start, end)`` row)."""

    def __init__(self, wrapped: Any) -> None:
        super().__init__(wrapped, lambda k: wrapped.fetch_session(*k), lambda k, value: wrapped.put(*k, value))

    retention_period_ms = _wrapped_attribute("retention_period_ms")
    observed_stream_time = _wrapped_attribute("observed_stream_time")

    def put(self, key: bytes, start: int, end: int, aggregate: Optional[bytes], typed: Any = None) -> bool:
        """Cache the session ``[start, end]`` of ``key``; None removes it. Whether the write moved the store's
        position: a cached one does when it is flushed."""
        if self._cache is None:
            return self.wrapped.put(key, start, end, aggregate)
        self._cache_composite((key, start, end), aggregate, typed)
        return False

    def remove(self, key: bytes, start: int, end: int, typed: Any = None) -> None:
        """Kafka's ``CachingSessionStore.remove``: a cached delete."""
        if self._cache is None:
            self.wrapped.remove(key, start, end)
        else:
            self._cache_composite((key, start, end), None, typed)

    def fetch_session(self, key: bytes, start: int, end: int) -> Optional[bytes]:
        entry = self._cached_entry((key, start, end))
        return self.wrapped.fetch_session(key, start, end) if entry is None else entry.value

    def find_sessions(self, key_from: Optional[bytes], key_to: Optional[bytes], earliest_session_end_time: int,
                      latest_session_start_time: int, forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        rows = self.wrapped.find_sessions(key_from, key_to, earliest_session_end_time, latest_session_start_time,
                                          forward)
        if not self._entries or (key_from is not None and key_to is not None and key_from > key_to):
            return rows
        cached = self._cached_keys(key_from, key_to, lambda k: k[2] >= earliest_session_end_time
                                   and k[1] <= latest_session_start_time)
        return self._merged_rows(rows, cached, self.wrapped.session_order, forward)

    def find_sessions_by_end_time(self, earliest_session_end_time: int, latest_session_end_time: int,
                                  forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        rows = self.wrapped.find_sessions_by_end_time(earliest_session_end_time, latest_session_end_time, forward)
        cached = self._cached_keys(None, None, lambda k: earliest_session_end_time <= k[2] <= latest_session_end_time)
        return self._merged_rows(rows, cached, self.wrapped.end_time_order, forward)

    def fetch_keys(self, key_from: Optional[bytes], key_to: Optional[bytes],
                   forward: bool = True) -> list[tuple[bytes, int, int, bytes]]:
        """Kafka's ``CachingSessionStore.fetch``: ``find_sessions(key_from, key_to, 0, Long.MAX_VALUE)`` (so a range
        ``from > to`` reads nothing, with the warning, on any store under the cache)."""
        return self.find_sessions(key_from, key_to, 0, LONG_MAX, forward)


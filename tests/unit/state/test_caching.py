"""The record cache: Kafka's ``CachingKeyValueStore``, ``CachingWindowStore`` and ``CachingSessionStore`` over a
``ThreadCache``, flushed on commit."""
from __future__ import annotations

import pytest

from streams_on_spark import (Consumed, Grouped, KeyValue, Materialized, Produced, Serdes, StreamsBuilder, TestRecord,
                              TopologyTestDriver)
from streams_on_spark.dsl.windows import SessionWindow, TimeWindow, Windowed
from streams_on_spark.processor.api import Record
from streams_on_spark.change import Change
from streams_on_spark.operators.shared import forward_on_flush
from streams_on_spark.state.caching import (ENTRY_OVERHEAD_BYTES, BulkFlush, CachingKeyValueBytesStore,
                                            CachingSessionBytesStore, CachingWindowBytesStore, RecordCached, TaskCache)
from streams_on_spark.state.stores import InMemoryKeyValueBytesStore, ValueAndTimestamp
from streams_on_spark.state.factory import Stores
from streams_on_spark.state.session_stores import SessionBytesStore
from streams_on_spark.state.window_stores import WindowBytesStore

S, L = Serdes.String(), Serdes.Long()


class _Context:
    def __init__(self, max_bytes: int) -> None:
        self.cache = TaskCache(max_bytes)
        self.record = Record("k", "v", 7, (("h", b"1"),))


def _store(max_bytes: int = 10_000, send_old_values: bool = True):
    store = CachingKeyValueBytesStore(InMemoryKeyValueBytesStore("s"))
    context = _Context(max_bytes)
    store.init(context)
    flushed: list = []
    assert store.set_flush_listener(lambda *entry: flushed.append(entry[:5]), send_old_values)
    return store, context, flushed


def test_writes_wait_for_the_flush_which_forwards_each_key_once_in_last_write_order():
    """NamedCache.put: a re-dirtied key is removed and re-added to dirtyKeys (the arrival order of the records)."""
    store, _, flushed = _store()
    store.put(b"b", b"1")
    store.put(b"a", b"1")
    store.put(b"b", b"2", typed="b=2")
    assert store.get(b"b") == b"2" and store.wrapped.get(b"b") is None and flushed == []
    typed: list = []
    store.set_flush_listener(lambda *entry: (flushed.append(entry[:5]), typed.append(entry[5])), True)
    store.flush()
    assert typed == [None, "b=2"]   # what the writer attached comes back with the flush
    assert flushed == [(b"a", b"1", None, 7, (("h", b"1"),)), (b"b", b"2", None, 7, (("h", b"1"),))]
    assert store.wrapped.entries() == {b"a": b"1", b"b": b"2"}


class _Bulk:
    """A bulk flush that takes the entries only where none is a delete, writing them itself."""

    def __init__(self, store) -> None:
        self.store, self.taken = store, []

    def flush_entries(self, cache_keys, entries) -> bool:
        if any(entries[kb].value is None for kb in cache_keys):
            return False
        self.taken.append([(kb, entries[kb].value) for kb in cache_keys])
        for kb in cache_keys:
            self.store.wrapped.put(kb, entries[kb].value)
            entries[kb].typed = None
        return True


def test_a_store_given_a_bulk_flush_flushes_through_it_until_it_declines_and_is_pickled_without_it():
    """``use_bulk_flush``: the dirty entries in flush order (an evicted one first) go to the strategy the store was
    given instead of the listener one by one; where it declines (False) the per-entry flush takes them."""
    entry = 1 + 1 + ENTRY_OVERHEAD_BYTES
    store, _, flushed = _store(max_bytes=3 * entry)
    bulk = _Bulk(store)
    assert isinstance(bulk, BulkFlush)
    store.use_bulk_flush(bulk)
    store.put(b"a", b"1")
    store.put(b"b", b"1")
    store.put(b"c", b"1")
    store.put(b"a", b"2")
    store.put(b"d", b"1")   # evicts b, the eldest: b first, then c, a, d
    assert bulk.taken == [[(b"b", b"1"), (b"c", b"1"), (b"a", b"2"), (b"d", b"1")]] and flushed == []
    store.put(b"a", b"3")
    store.delete(b"c")
    store.flush()   # a delete: declined, flushed entry by entry
    assert [(k, new) for k, new, *_ in flushed] == [(b"a", b"3"), (b"c", None)] and len(bulk.taken) == 1
    assert store.wrapped.entries() == {b"a": b"3", b"b": b"1", b"d": b"1"}
    assert store.__getstate__()["_bulk_flush"] is None   # what a pickle holds (the listener here is a lambda)
    store.use_bulk_flush(None)
    store.put(b"e", b"1")
    store.flush()
    assert len(bulk.taken) == 1 and flushed[-1][:2] == (b"e", b"1")


def test_old_value_is_the_one_as_of_the_last_flush_and_deletes_of_unknown_keys_vanish():
    store, _, flushed = _store()
    store.put(b"k", b"1")
    store.flush()
    store.put(b"k", b"2")
    store.put(b"k", b"3")
    store.put(b"gone", b"x")
    store.delete(b"gone")          # never flushed: nothing downstream ever saw it
    store.flush()
    assert [(k, new, old) for k, new, old, *_ in flushed] == [(b"k", b"1", None), (b"k", b"3", b"1")]


def test_without_old_values_a_delete_still_forwards_when_the_key_existed():
    store, _, flushed = _store(send_old_values=False)
    store.put(b"k", b"1")
    store.flush()
    store.delete(b"k")
    store.flush()
    assert [(k, new, old) for k, new, old, *_ in flushed] == [(b"k", b"1", None), (b"k", None, None)]
    assert store.wrapped.get(b"k") is None


def test_evicting_a_dirty_entry_flushes_the_store_and_reads_merge_cache_and_store():
    entry = 1 + 1 + ENTRY_OVERHEAD_BYTES          # one-byte keys and values
    store, context, flushed = _store(max_bytes=2 * entry)
    store.put(b"a", b"1")
    store.put(b"b", b"1")
    assert flushed == []
    store.get(b"a")                                # "b" becomes the least recently used
    store.put(b"c", b"1")                          # over budget: "b" is evicted, dirty -> the store flushes,
    assert [k for k, *_ in flushed] == [b"b", b"a", b"c"]   # the evicted entry first (Kafka's NamedCache.flush)
    assert context.cache.size == 2 * entry and store.wrapped.entries() == {b"a": b"1", b"b": b"1", b"c": b"1"}
    store.put(b"a", None)
    assert store.range(None, None) == [(b"b", b"1"), (b"c", b"1")]
    assert store.range(b"b", b"b", reverse=True) == [(b"b", b"1")]


def test_a_snapshot_needs_a_flush_and_a_zero_budget_writes_through():
    store, _, _ = _store()
    store.put(b"k", b"1")
    with pytest.raises(Exception, match="unflushed cached writes"):
        store.entries()
    off = CachingKeyValueBytesStore(InMemoryKeyValueBytesStore("off"))
    off.init(_Context(0))
    assert not off.set_flush_listener(lambda *entry: None, True)
    off.put(b"k", b"1")
    assert off.wrapped.get(b"k") == b"1"


def _counts_per_document(materialized: Materialized, config: dict) -> list:
    builder = StreamsBuilder()
    (builder.stream("in", Consumed.with_(S, S)).flat_map_values(str.split).group_by_key()
     .count(materialized).to_stream().to("out", Produced.with_(S, L)))
    with TopologyTestDriver(builder.build(), {"application.id": "cache", **config}) as driver:
        topic = driver.create_input_topic("in", S, S)
        topic.pipe_input(TestRecord("doc", "a b c", 5, headers={"trace": b"t"}))
        topic.pipe_input("doc", "d", 9)
        return [(r.key, r.value, r.timestamp, r.headers) for r in
                driver.create_output_topic("out", S, L).read_records_to_list()]


def test_the_driver_commits_after_every_input_record_so_its_updates_of_a_key_leave_as_one():
    """Kafka's driver: a real cache flushed after each record; 3 words of one sentence -> one count."""
    cached = _counts_per_document(Materialized.with_(S, L), {})
    assert cached == [("doc", 3, 5, (("trace", b"t"),)), ("doc", 4, 9, ())]
    every = [("doc", 1, 5, (("trace", b"t"),)), ("doc", 2, 5, (("trace", b"t"),)), ("doc", 3, 5, (("trace", b"t"),)),
             ("doc", 4, 9, ())]
    assert _counts_per_document(Materialized.with_(S, L).with_caching_disabled(), {}) == every
    assert _counts_per_document(Materialized.with_(S, L), {"statestore.cache.max.bytes": 0}) == every
    assert _counts_per_document(Materialized.with_(S, L), {"cache.max.bytes.buffering": "0"}) == every


def test_a_cached_table_sends_old_values_as_of_the_last_commit_to_a_subtractor():
    """A re-keyed table aggregation subtracts what downstream last saw, whatever the cache merged."""
    builder = StreamsBuilder()
    table = builder.table("users", Consumed.with_(S, S), Materialized.as_("users"))
    (table.group_by(lambda user, city: KeyValue(city, user), Grouped.with_(S, S)).count(Materialized.as_("per-city"))
     .to_stream().to("per-city-out", Produced.with_(S, L)))
    with TopologyTestDriver(builder.build(), {"application.id": "cache"}) as driver:
        users = driver.create_input_topic("users", S, S)
        users.pipe_key_value_list([KeyValue("ann", "oslo"), KeyValue("bob", "oslo"), KeyValue("ann", "rome")],
                                  start_timestamp=1)
        store = driver.get_key_value_store("per-city")
        assert (store.get("oslo"), store.get("rome")) == (1, 1)
        assert driver.create_output_topic("per-city-out", S, L).read_key_values_to_list() == [
            KeyValue("oslo", 1), KeyValue("oslo", 2), KeyValue("oslo", 1), KeyValue("rome", 1)]


def test_a_bad_cache_size_is_a_value_error():
    with pytest.raises(ValueError, match="Invalid value -5 for configuration statestore.cache.max.bytes: "
                                         "Value must be at least 0"):
        TopologyTestDriver(StreamsBuilder().build(), {"application.id": "x", "statestore.cache.max.bytes": -5})


# ------------------------------------------------------------------------------------------------------------------
# Window and session stores: Kafka's CachingWindowStore / CachingSessionStore over the same task cache

MAX = 2**63 - 1


def _cached(layer, context=None, send_old_values: bool = True):
    context = context or _Context(10_000)
    layer.init(context)
    flushed: list = []
    assert layer.set_flush_listener(lambda *entry: flushed.append(entry[:3]), send_old_values)
    return layer, context, flushed


def _window_cache(context=None, send_old_values: bool = True):
    return _cached(CachingWindowBytesStore(WindowBytesStore("w", 100, 10)), context, send_old_values)


def _session_cache(wrapped=None, context=None):
    return _cached(CachingSessionBytesStore(wrapped or SessionBytesStore("s", 100)), context)


def test_a_window_cache_forwards_each_window_once_in_last_write_order_with_the_old_value_of_the_last_flush():
    """CachingWindowStore.putAndMaybeForward: Change(new, old fetched from the store beneath), in dirty-key order."""
    store, _, flushed = _window_cache()
    store.put(b"a", b"1", 0)
    store.flush()
    store.put(b"b", b"1", 10)
    store.put(b"a", b"2", 0)
    store.put(b"b", b"2", 10)
    assert (store.fetch(b"a", 0), store.wrapped.fetch(b"a", 0)) == (b"2", b"1")   # reads see the cache
    store.flush()
    assert flushed == [((b"a", 0), b"1", None), ((b"a", 0), b"2", b"1"), ((b"b", 10), b"2", None)]
    assert store.wrapped.fetch(b"b", 10) == b"2"


def test_without_old_values_a_window_cache_forwards_none_as_old():
    """CachingWindowStore: sendOldValues ? rawOldValue : null."""
    store, _, flushed = _window_cache(send_old_values=False)
    store.put(b"a", b"1", 0)
    store.flush()
    store.put(b"a", b"2", 0)
    store.flush()
    assert flushed == [((b"a", 0), b"1", None), ((b"a", 0), b"2", None)]


def test_window_reads_merge_cache_and_store_in_the_stores_order():
    """MergedSortedCacheWindowStore(KeyValue)Iterator: cached values win, cached deletes hide stored windows."""
    store, _, _ = _window_cache()
    for key, start in ((b"a", 0), (b"c", 0), (b"b", 10)):
        store.put(key, b"1", start)
    store.flush()
    store.put(b"a", b"3", 10)      # new window
    store.put(b"b", b"2", 0)       # new key in a stored window start
    store.put(b"c", None, 0)       # delete of a stored window
    every = [(b"a", 0, b"1"), (b"b", 0, b"2"), (b"a", 10, b"3"), (b"b", 10, b"1")]   # by start, then key bytes
    assert store.fetch_keys(None, None, 0, 10) == every == store.all()
    assert store.fetch_keys(None, None, 0, 10, forward=False) == every[::-1] == store.all(forward=False)
    assert store.fetch_keys(b"b", b"c", 0, 10) == [(b"b", 0, b"2"), (b"b", 10, b"1")]
    assert store.fetch_keys(b"c", b"b", 0, 10) == []          # invalid range: empty, as the store says
    assert store.fetch_all(0, 5) == every[:2]
    assert store.fetch_key(b"a", 0, 10) == [(0, b"1"), (10, b"3")]
    assert store.fetch_key(b"a", 0, 10, forward=False) == [(10, b"3"), (0, b"1")]
    assert store.fetch_key(b"c", 0, 10) == [] and store.fetch(b"c", 0) is None


def test_window_eviction_flushes_only_the_store_written_and_shares_the_task_budget():
    """ThreadCache.maybeEvict evicts from the namespace being written; NamedCache.flush puts the evicted entry first."""
    window_entry, kv_entry = 1 + 8 + 1 + ENTRY_OVERHEAD_BYTES, 1 + 1 + ENTRY_OVERHEAD_BYTES
    context = _Context(2 * window_entry + kv_entry)
    windows, _, flushed = _window_cache(context)
    kv = CachingKeyValueBytesStore(InMemoryKeyValueBytesStore("kv"))
    kv.init(context)
    windows.put(b"a", b"1", 0)
    kv.put(b"x", b"1")
    windows.put(b"b", b"1", 0)
    assert flushed == [] and context.cache.size == 2 * window_entry + kv_entry
    windows.fetch(b"a", 0)                         # "b" is now the window cache's least recently used
    windows.put(b"c", b"1", 0)                     # over budget: "b" is evicted, so the window store flushes
    assert [k for k, *_ in flushed] == [(b"b", 0), (b"a", 0), (b"c", 0)]
    assert kv.dirty and kv.wrapped.get(b"x") is None   # the key-value cache was not touched
    assert context.cache.size == 2 * window_entry + kv_entry


def test_flushed_deletes_leave_the_cache_and_deletes_of_never_flushed_windows_vanish():
    """NamedCache.flush deletes flushed null entries; CachingWindowStore skips entries with no new and no old value."""
    store, context, flushed = _window_cache()
    store.put(b"a", b"1", 0)
    store.flush()
    store.put(b"a", None, 0)
    store.put(b"n", b"1", 0)
    store.put(b"n", None, 0)
    store.flush()
    assert flushed == [((b"a", 0), b"1", None), ((b"a", 0), None, b"1")]
    assert context.cache.size == 0 and store.all() == []


def test_a_session_cache_forwards_the_merge_and_drops_tombstones_of_never_flushed_sessions():
    """CachingSessionStore: remove() is put(null); a session created and merged away before a flush never existed
    downstream (new and old null), so it is neither written nor forwarded."""
    store, _, flushed = _session_cache()
    store.put(b"a", 0, 5, b"1")
    store.flush()
    store.remove(b"a", 0, 5)
    store.put(b"a", 0, 12, b"2")
    store.put(b"b", 20, 20, b"1")
    store.remove(b"b", 20, 20)
    store.put(b"b", 20, 25, b"2")
    store.flush()
    assert flushed == [((b"a", 0, 5), b"1", None), ((b"a", 0, 5), None, b"1"), ((b"a", 0, 12), b"2", None),
                       ((b"b", 20, 25), b"2", None)]
    assert store.wrapped.fetch_keys(None, None) == [(b"a", 0, 12, b"2"), (b"b", 20, 25, b"2")]


def test_session_reads_merge_cache_and_store_in_the_stores_order():
    """MergedSortedCacheSessionStoreIterator: findSessions/fetch see cached sessions, by end, key, start descending."""
    store, _, _ = _session_cache()
    store.put(b"a", 0, 12, b"2")
    store.put(b"b", 20, 25, b"2")
    store.flush()
    store.put(b"a", 30, 30, b"3")
    store.put(b"c", 1, 12, b"1")
    store.remove(b"b", 20, 25)
    every = [(b"a", 0, 12, b"2"), (b"c", 1, 12, b"1"), (b"a", 30, 30, b"3")]
    assert store.find_sessions(None, None, 0, MAX) == every == store.fetch_keys(None, None)
    assert store.find_sessions(None, None, 0, MAX, forward=False) == every[::-1]
    assert store.find_sessions(b"a", b"a", 10, 40) == [(b"a", 0, 12, b"2"), (b"a", 30, 30, b"3")]
    assert store.find_sessions(b"a", b"a", 13, 40) == [(b"a", 30, 30, b"3")]
    assert store.find_sessions_by_end_time(12, 12) == every[:2]
    assert (store.fetch_session(b"a", 30, 30), store.fetch_session(b"b", 20, 25)) == (b"3", None)


def test_session_reads_by_end_time_follow_a_time_ordered_store():
    """The ON_WINDOW_CLOSE session store orders by end, start, key; a cache over it merges in that order."""
    store, _, _ = _session_cache(SessionBytesStore("s", 100, segmented=True, time_ordered=True))
    store.put(b"a", 5, 12, b"1")
    store.flush()
    store.put(b"b", 1, 12, b"2")
    assert store.find_sessions_by_end_time(0, 20) == [(b"b", 1, 12, b"2"), (b"a", 5, 12, b"1")]
    assert store.find_sessions_by_end_time(0, 20, forward=False) == [(b"a", 5, 12, b"1"), (b"b", 1, 12, b"2")]


class _Forwarding:
    """What forward_on_flush needs of a processor: its forward and whether it sends old values."""

    def __init__(self) -> None:
        self.send_old_values = True
        self.records: list = []
        self.forward = self.records.append


def _typed(builder, context):
    store = builder.with_caching_enabled().build()
    store.init(context)
    processor = _Forwarding()
    assert forward_on_flush(processor, store)
    return store, processor.records


def test_typed_window_and_session_flushes_forward_windowed_changes_with_the_writers_headers():
    """TimestampedCacheFlushListener: Windowed key of the store's window size, timestamp of the new value (else the
    record's); SessionCacheFlushListener: timestamp = session end; both with the writing record's headers."""
    context = _Context(10_000)
    context.application_id, context.default_key_serde, context.default_value_serde = "app", S, L
    windows, out = _typed(Stores.timestamped_window_store_builder(
        Stores.in_memory_window_store("w", 100, 10, False), S, L), context)
    windows.put("k", ValueAndTimestamp(3, 4), 0)   # the record in process has timestamp 7
    windows.inner.flush()
    windows.put("k", None, 0)
    windows.inner.flush()
    headers = (("h", b"1"),)
    assert [(r.key, r.value, r.timestamp, r.headers) for r in out] == [
        (Windowed("k", TimeWindow(0, 10)), Change(3, None), 4, headers),
        (Windowed("k", TimeWindow(0, 10)), Change(None, 3), 7, headers)]
    sessions, out = _typed(Stores.session_store_builder(Stores.in_memory_session_store("s", 100), S, L),
                           context)
    sessions.put(Windowed("k", SessionWindow(2, 5)), 1)
    sessions.inner.flush()
    assert [(r.key, r.value, r.timestamp, r.headers) for r in out] == [
        (Windowed("k", SessionWindow(2, 5)), Change(1, None), 5, headers)]


def test_window_caches_follow_the_task_budget_and_global_stores_stay_uncached():
    """A cache size of 0 (or no task cache) writes straight through and the processor forwards itself."""
    for context in (_Context(0), object()):
        store = Stores.timestamped_window_store_builder(
            Stores.in_memory_window_store("w", 100, 10, False), S, L).with_caching_enabled().build()
        store.init(context)
        assert isinstance(store.inner, WindowBytesStore) and not forward_on_flush(_Forwarding(), store)
    dups = Stores.window_store_builder(Stores.in_memory_window_store("j", 100, 10, True), S, L)
    assert not dups.with_caching_enabled().caching_enabled   # duplicates cannot be cached (Kafka disables it)


def test_a_typed_store_names_its_enabled_record_cache_and_none_without_one():
    """RecordCached: the state manager and the batch paths find a store's cache through ``record_cache``; a store
    built with caching whose task has no cache budget (or none at all: a global store) has none."""
    builder = Stores.timestamped_key_value_store_builder(Stores.in_memory_key_value_store("c"), S, L)
    cached = builder.with_caching_enabled().build()
    assert isinstance(cached, RecordCached) and cached.record_cache is None   # known once initialized
    cached.init(_Context(10_000))
    assert type(cached.record_cache) is CachingKeyValueBytesStore and cached.record_cache.budget.max_bytes == 10_000
    cached.put("k", ValueAndTimestamp(1, 2))
    assert list(cached.record_cache.dirty_keys) == [S.serialize("c", "k")] == list(cached.record_cache.cached_entries)
    for context in (_Context(0), object()):
        uncached = builder.with_caching_enabled().build()
        uncached.init(context)
        assert uncached.record_cache is None
    plain = builder.with_caching_disabled().build()
    plain.init(_Context(10_000))
    assert plain.record_cache is None

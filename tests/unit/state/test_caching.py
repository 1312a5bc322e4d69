"""The record cache: Kafka's ``CachingKeyValueStore`` over a ``ThreadCache``, flushed on commit."""
from __future__ import annotations

import pytest

from streams_on_spark import (Consumed, Grouped, KeyValue, Materialized, Produced, Serdes, StreamsBuilder, TestRecord,
                              TopologyTestDriver)
from streams_on_spark.processor.api import Record
from streams_on_spark.state.caching import ENTRY_OVERHEAD_BYTES, CachingKeyValueBytesStore, TaskCache
from streams_on_spark.state.stores import InMemoryKeyValueBytesStore

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


def test_writes_wait_for_the_flush_which_forwards_each_key_once_in_first_dirtied_order():
    store, _, flushed = _store()
    store.put(b"b", b"1")
    store.put(b"a", b"1")
    store.put(b"b", b"2", typed="b=2")
    assert store.get(b"b") == b"2" and store.wrapped.get(b"b") is None and flushed == []
    typed: list = []
    store.set_flush_listener(lambda *entry: (flushed.append(entry[:5]), typed.append(entry[5])), True)
    store.flush()
    assert typed == ["b=2", None]   # what the writer attached comes back with the flush
    assert flushed == [(b"b", b"2", None, 7, (("h", b"1"),)), (b"a", b"1", None, 7, (("h", b"1"),))]
    assert store.wrapped.entries() == {b"a": b"1", b"b": b"2"}


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
    with pytest.raises(ValueError, match="'statestore.cache.max.bytes': expected an int >= 0"):
        TopologyTestDriver(StreamsBuilder().build(), {"application.id": "x", "statestore.cache.max.bytes": -5})

"""A store's position (what an IQv2 position bound is checked against) as Kafka 4.3.1's stores keep it, where Kafka's
test driver cannot show it: its commit after every record flushes each cache right after its one write, so the
``interactive-queries`` golden pins which writes move a position per store kind, and these tests what a commit
after many records (a Spark micro-batch) leaves."""
from __future__ import annotations

from streams_on_spark import Consumed, Materialized, Serdes, StreamsBuilder, TimeWindows
from streams_on_spark.config import TaskConfig
from streams_on_spark.runtime.local import LocalEngine
from streams_on_spark.state.factory import Stores
from streams_on_spark.state.stores import KeyValueStore

S, L = Serdes.String(), Serdes.Long()


def run_batch(topology, config: dict, records: list[tuple[str, bytes, int]]) -> dict:
    """Process ``records`` (topic, key, timestamp; one partition each) as one micro-batch of one task and commit:
    the task's stores' positions."""
    engine = LocalEngine(topology.internal_builder, TaskConfig.from_config({"application.id": "pos", **config}),
                         {topic: 1 for topic, _, _ in records}, True, 0)
    [task] = engine.tasks.values()
    offsets: dict[str, int] = {}
    for topic, key, timestamp in records:
        offset = offsets[topic] = offsets.get(topic, -1) + 1
        task.add_record(topic, 0, offset, timestamp, key, b"v", ())
    task.process_available()
    task.commit()
    return task.state.positions()


def windowed_count_of_two_topics(cached: bool):
    builder = StreamsBuilder()
    materialized = Materialized.as_("windows").with_key_serde(S).with_value_serde(L)
    (builder.stream(["left", "right"], Consumed.with_(S, S)).group_by_key()
     .windowed_by(TimeWindows.of_size_with_no_grace(100))
     .count(materialized if cached else materialized.with_caching_disabled()))
    return builder.build()


def test_a_cached_window_store_takes_the_writer_of_each_flushed_entry_into_its_position():
    """Kafka's CachingWindowStore keeps no position: its store's moves when the cache flushes an entry into it, from
    the record that last wrote the entry. A window written from "left" and then again from "right" within one commit
    leaves "right" only; without the cache both wrote the store."""
    records = [("left", b"k", 1), ("right", b"k", 2), ("right", b"j", 3)]
    assert run_batch(windowed_count_of_two_topics(True), {}, records) == {"windows": {("right", 0): 1}}
    assert run_batch(windowed_count_of_two_topics(False), {}, records) == {
        "windows": {("left", 0): 0, ("right", 0): 1}}


def test_a_dsl_store_with_headers_behind_a_cache_has_a_position():
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).group_by_key().count(Materialized.as_("counts"))
    positions = run_batch(builder.build({"dsl.store.format": "HEADERS"}), {"dsl.store.format": "HEADERS"},
                          [("in", b"a", 1), ("in", b"b", 2)])
    assert positions == {"counts": {("in", 0): 1}}


class _Queue:
    topic_partition = ("in", 0)


class _Context:
    def __init__(self) -> None:
        self.queue, self.offset = _Queue(), -1


def test_a_write_from_an_older_record_does_not_move_a_position_back():
    """Position.withComponent keeps the highest offset: a cache flushing an entry of an older record into a store
    that a newer one wrote already leaves the newer one's."""
    store = Stores.key_value_store_builder(Stores.in_memory_key_value_store("kv"), S, L).build()
    context = store._record_context = _Context()
    for offset in (12, 10):
        context.offset = offset
        store.put("a", offset)
    assert store.position_offsets == {("in", 0): 12}


def test_which_key_value_writes_move_the_position_follows_the_supplier():
    """In-memory: not a delete. RocksDB: a delete, and a put_all of nothing, but not a put_if_absent of None (it
    writes nothing). Kafka's InMemoryKeyValueStore and RocksDBStore."""
    moved = {}
    for supplier in (Stores.in_memory_key_value_store, Stores.persistent_key_value_store):
        store: KeyValueStore = Stores.key_value_store_builder(supplier("kv"), S, L).build()
        context = store._record_context = _Context()
        for offset, write in enumerate((lambda: store.delete("a"), lambda: store.put_if_absent("a", None),
                                        lambda: store.put_all([]), lambda: store.put("a", None))):
            context.offset = offset
            store.position_offsets.clear()
            write()
            moved.setdefault(supplier.__name__, []).append(bool(store.position_offsets))
    assert moved == {"in_memory_key_value_store": [False, True, False, True],
                     "persistent_key_value_store": [True, False, True, True]}


def test_a_persistent_window_store_retaining_duplicates_ignores_a_null_put_stream_time_included():
    """RocksDBWindowStore does not pass a null put on when it retains duplicates: nothing moves, not even stream
    time; the in-memory store's put advances stream time (and its position)."""
    for supplier, advanced in ((Stores.persistent_window_store, False), (Stores.in_memory_window_store, True)):
        store = Stores.window_store_builder(supplier("w", 100, 10, True), S, L).build()
        store.put("a", None, 50)
        assert (store.observed_stream_time == 50) is advanced

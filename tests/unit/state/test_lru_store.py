"""``Stores.lru_map``'s store beyond the store-factories goldens: its recency order survives a task's snapshot (what
the Spark engine keeps of it between micro-batches), and a timestamped store over it keeps the timestamps."""
from __future__ import annotations

import pickle

from streams_on_spark import Serdes, Stores
from streams_on_spark.state.lru_store import LruKeyValueBytesStore
from streams_on_spark.state.stores import ValueAndTimestamp


def test_the_recency_order_survives_a_snapshot_and_decides_the_next_eviction():
    store = Stores.lru_map("recent", 3).get()
    for key in (b"a", b"b", b"c"):
        store.put(key, b"v")
    assert store.get(b"a") == b"v"   # a is now the most recently used: b is the eldest
    restored = LruKeyValueBytesStore("recent", 3)
    restored.restore(pickle.loads(pickle.dumps(store.entries())))
    restored.put(b"d", b"v")
    assert [k for k, _ in restored.range(None, None)] == [b"a", b"c", b"d"]


def test_a_timestamped_store_over_lru_map_keeps_the_timestamps_and_one_over_a_plain_rocksdb_store_does_not():
    S, L = Serdes.String(), Serdes.Long()
    lru = Stores.timestamped_key_value_store_builder(Stores.lru_map("lru", 2), S, L).build()
    plain = Stores.timestamped_key_value_store_builder(Stores.persistent_key_value_store("plain"), S, L).build()
    timestamped = Stores.timestamped_key_value_store_builder(
        Stores.persistent_timestamped_key_value_store("ts"), S, L).build()
    for store in (lru, plain, timestamped):
        store.put("k", ValueAndTimestamp(1, 42))
    assert [s.get("k") for s in (lru, plain, timestamped)] == [
        ValueAndTimestamp(1, 42), ValueAndTimestamp(1, -1), ValueAndTimestamp(1, 42)]
    assert plain.inner.wrapped.get(plain._kser("k")) == L.serialize(None, 1)   # kept without the timestamp


def test_a_read_of_many_keys_makes_each_present_one_the_most_recently_used_as_one_by_one():
    """A batch path reads a batch's keys at once (``get_many``, a count through the cache's evictions): the keys it
    finds become the most recently used, in the order read, as ``get`` one by one makes them."""
    many, single = Stores.lru_map("recent", 3).get(), Stores.lru_map("recent", 3).get()
    for store in (many, single):
        for key in (b"a", b"b", b"c"):
            store.put(key, b"v")
    assert many.get_many([b"b", b"x", b"a"]) == [single.get(k) for k in (b"b", b"x", b"a")] == [b"v", None, b"v"]
    for store in (many, single):
        store.put(b"d", b"v")   # evicts the eldest: c (a and b were read)
    assert [k for k, _ in many.range(None, None)] == [k for k, _ in single.range(None, None)] == [b"a", b"b", b"d"]

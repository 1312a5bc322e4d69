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

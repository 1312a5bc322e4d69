"""Key-value stores: Kafka's semantics (byte order, null handling, timestamps) on the in-memory store."""
from __future__ import annotations

import struct

import pytest

from streams_on_spark import KeyValue, Serdes, StreamsException, Stores, ValueAndTimestamp
from streams_on_spark.state import KeyValueIterator, KeyValueStoreFacade, TimestampedKeyValueStore


class Ctx:
    application_id = "app"
    default_key_serde = None
    default_value_serde = None


def kv(name="s", key=Serdes.String(), value=Serdes.Long()):
    store = Stores.key_value_store_builder(Stores.in_memory_key_value_store(name), key, value).build()
    store.init(Ctx())
    return store


def test_put_get_delete_and_put_if_absent():
    store = kv()
    assert store.get("a") is None
    store.put("a", 1)
    assert store.get("a") == 1
    assert store.put_if_absent("a", 2) == 1 and store.get("a") == 1
    assert store.put_if_absent("b", 3) is None and store.get("b") == 3
    assert store.delete("a") == 1 and store.get("a") is None
    store.put("b", None)  # null value deletes, as in Kafka
    assert store.approximate_num_entries() == 0


def test_all_and_range_follow_serialized_key_order():
    store = kv(key=Serdes.Integer())
    for k in [10, -1, 3, 256, 0]:
        store.put(k, k * 10)
    # big-endian two's complement: -1 (ff ff ff ff) sorts last by bytes
    assert [e.key for e in store.all()] == [0, 3, 10, 256, -1]
    assert list(store.range(3, 256)) == [KeyValue(3, 30), KeyValue(10, 100), KeyValue(256, 2560)]
    assert list(store.range(None, 3)) == [KeyValue(0, 0), KeyValue(3, 30)]
    assert [k for k, _ in store.reverse_all()] == [-1, 256, 10, 3, 0]
    assert list(store.range(256, 3)) == []  # from > to: empty, with a warning


def test_iteration_is_a_snapshot():
    store = kv()
    store.put("a", 1)
    store.put("b", 2)
    for key, _ in store.all():
        store.delete(key)
    assert store.approximate_num_entries() == 0


def test_values_read_back_are_copies():
    store = kv(value=Serdes.JSON())
    doc = {"items": [1]}
    store.put("k", doc)
    doc["items"].append(2)
    assert store.get("k") == {"items": [1]}


def test_null_key_is_rejected():
    with pytest.raises(ValueError, match="key cannot be null"):
        kv().put(None, 1)


def test_missing_serde_names_the_store():
    store = Stores.key_value_store_builder(Stores.in_memory_key_value_store("nameless")).build()
    store.init(Ctx())
    with pytest.raises(StreamsException, match="Store nameless has no key serde"):
        store.put("k", 1)


def test_timestamped_store_layout_is_kafkas():
    builder = Stores.timestamped_key_value_store_builder(Stores.in_memory_key_value_store("t"), Serdes.String(),
                                                         Serdes.Long())
    store = builder.build()
    store.init(Ctx())
    assert isinstance(store, TimestampedKeyValueStore)
    store.put("k", ValueAndTimestamp(7, 1234))
    raw = store.inner.get(b"k")
    assert raw == struct.pack(">q", 1234) + struct.pack(">q", 7)
    assert store.get("k") == ValueAndTimestamp(7, 1234)
    facade = KeyValueStoreFacade(store)
    assert facade.get("k") == 7
    assert list(facade.all()) == [KeyValue("k", 7)]
    with pytest.raises(ValueError, match="ValueAndTimestamp"):
        store.put("k", 7)


def test_store_supplier_rejects_empty_names():
    with pytest.raises(ValueError):
        Stores.in_memory_key_value_store("")


def test_reads_return_kafkas_key_value_iterator_over_a_snapshot():
    """``KeyValueIterator``: a Python iterator with Kafka's ``peek_next_key`` and ``close``, a context manager; the
    store may be written while it is read."""
    store = Stores.key_value_store_builder(Stores.in_memory_key_value_store("kv"), Serdes.String(),
                                           Serdes.Long()).build()
    for key, value in (("b", 2), ("a", 1), ("c", 3)):
        store.put(key, value)
    with store.range("a", "b") as it:
        assert isinstance(it, KeyValueIterator)
        assert it.peek_next_key() == "a" and next(it) == ("a", 1)
        store.delete("b")                                    # a snapshot: the read goes on as it started
        assert it.peek_next_key() == "b" and list(it) == [("b", 2)]
        with pytest.raises(StopIteration):
            it.peek_next_key()
    it = store.all()
    it.close()
    assert list(it) == []

"""The Java orders ``describe()`` reproduces: String.hashCode, HashSet iteration, TreeSet with drifting keys."""
from __future__ import annotations

import pytest

from streams_on_spark.topology.java_order import (
    JavaTreeSet,
    hash_order,
    hash_set_order,
    java_compare_strings,
    java_set_str,
    java_string_hash,
    topic_partition_hash,
)


@pytest.mark.parametrize("text, expected", [
    ("", 0), ("a", 97), ("abc", 96354), ("hello", 99162322),
    ("KSTREAM-SOURCE-0000000000", None),  # computed below against the definition
    ("😀", None),                          # a surrogate pair: two UTF-16 code units
])
def test_string_hash_is_javas(text, expected):
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    h = h - (1 << 32) if h & 0x80000000 else h
    assert java_string_hash(text) == h
    if expected is not None:
        assert java_string_hash(text) == expected


@pytest.mark.parametrize("items, printed", [
    # verified by running Java (reference §4.1)
    (["store", "KSTREAM-AGGREGATE-STATE-STORE-0000000003"], "[KSTREAM-AGGREGATE-STATE-STORE-0000000003, store]"),
    (["b", "a"], "[a, b]"),
    (["orders", "payments", "customers"], "[payments, orders, customers]"),
    (["only"], "[only]"),
    ([], "[]"),
])
def test_hash_set_to_string(items, printed):
    assert java_set_str(items, from_collection=True) == printed


def test_hash_set_grows_past_twelve_entries():
    names = [f"node-{i}" for i in range(30)]
    order = hash_set_order(names)
    assert sorted(order) == sorted(names)
    assert order != names  # not insertion order
    # bucket index at capacity 64 (30 > 24 = 32 * .75) decides the order
    def bucket(s):
        h = java_string_hash(s) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & 63
    assert [bucket(s) for s in order] == sorted(bucket(s) for s in order)


def test_compare_strings_uses_utf16_code_units():
    assert java_compare_strings("A", "a") < 0
    assert java_compare_strings("abc", "ab") > 0
    assert java_compare_strings("\uffff", "😀") > 0  # U+FFFF > high surrogate 0xD83D


def test_tree_set_sorted_when_keys_are_stable():
    tree = JavaTreeSet(lambda a, b: a - b)
    for x in [5, 3, 8, 1, 4, 7, 9, 2, 6, 5]:
        tree.add(x)
    assert list(tree) == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert len(tree) == 9


def test_tree_set_keeps_insertion_time_order_when_keys_drift():
    """What Kafka's successor lists do: an element's position is fixed by comparisons made when it was added."""
    weight = {"a": 1, "b": 1}
    tree = JavaTreeSet(lambda x, y: (weight[y] - weight[x]) or (-1 if x < y else (x > y) - 0))
    tree.add("b")
    tree.add("a")
    weight["b"] = 5  # would sort first now, but the tree already placed it
    assert list(tree) == ["a", "b"]


def test_topic_partition_hash_is_kafkas():
    # TopicPartition.hashCode(): 31 * (31 + partition) + topic.hashCode(); "left".hashCode() == 3317767
    assert topic_partition_hash(("left", 0)) == 961 + 3317767
    assert topic_partition_hash(("left", 2)) == 31 * 33 + 3317767
    # int overflow wraps as Java's does
    long_name = "x" * 40
    assert topic_partition_hash((long_name, 0)) == ((961 + java_string_hash(long_name) + 2**31) % 2**32) - 2**31


def test_a_hash_map_of_topic_partitions_iterates_by_bucket():
    """PartitionGroup's HashMap<TopicPartition, RecordQueue>: bucket index (spread hash & 15), not insertion."""
    partitions = [("left", 0), ("right", 0), ("x-by-word-repartition", 0)]
    order = hash_order(partitions, topic_partition_hash)
    buckets = [(h ^ (h >> 16)) & 15 for h in (topic_partition_hash(p) & 0xFFFFFFFF for p in order)]
    assert buckets == sorted(buckets)
    assert order == [("x-by-word-repartition", 0), ("left", 0), ("right", 0)]
    assert hash_order(["b", "a"], java_string_hash) == hash_set_order(["b", "a"])

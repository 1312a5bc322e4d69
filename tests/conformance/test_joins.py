"""Joins on every engine and partition count.

Rules checked (Kafka's ``KStreamKStreamJoin``, ``KStreamKTableJoin``, ``KTableKTableJoin``):
- stream-stream: a left record at ts joins right records in [ts - before, ts + after] (and vice versa), emitted
  with the larger timestamp; left/outer joins emit an unmatched record with ``None`` once stream time passes its
  window end plus grace.
- stream-table: a stream record joins the table's value at that moment; a left join emits ``None`` when absent.
- table-table: every update of either side re-joins with the other side's current value.
Within one Spark batch a task orders records by timestamp across its partitions, so stream-stream results are
compared as multisets per partition; everything else is compared in order.
"""
from __future__ import annotations

import json

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    JoinWindows,
    KeyValue,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TopologyException,
    TopologyTestDriverBuilder,
)
from streams_on_spark.dsl.params import StreamJoined
from streams_on_spark.partitioner import partition_for_key

S = Serdes.String()
JSON = Serdes.JSON()
EVENTS = [("left", "a", 100), ("right", "x", 105), ("right", "y", 120), ("left", "b", 95), ("left", "c", 130),
          ("left", "d", 200), ("right", "z", 300), ("left", "w", 400)]


def stream_join(kind: str):
    builder = StreamsBuilder()
    left = builder.stream("left", Consumed.with_(S, S))
    right = builder.stream("right", Consumed.with_(S, S))
    join = getattr(left, {"inner": "join", "left": "left_join", "outer": "outer_join"}[kind])
    join(right, lambda l, r: [l, r], JoinWindows.of_time_difference_and_grace(10, 5)).to(
        "joined", Produced.with_(S, JSON))
    return builder.build()


def pipe_events(driver) -> None:
    topics = {name: driver.create_input_topic(name, S, S) for name in ("left", "right")}
    for topic, value, ts in EVENTS:  # one record at a time: the same order on both engines
        topics[topic].pipe_input("k", value, ts)


@pytest.mark.parametrize("kind, expected", [
    ("inner", [(["a", "x"], 105), (["b", "x"], 105), (["c", "y"], 130)]),
    ("left", [(["a", "x"], 105), (["b", "x"], 105), (["c", "y"], 130), (["d", None], 200)]),
    ("outer", [(["a", "x"], 105), (["b", "x"], 105), (["c", "y"], 130), (["d", None], 200), ([None, "z"], 300)]),
])
def test_stream_stream_joins(make_driver, partitions, kind, expected):
    driver = make_driver(stream_join(kind), "left", "right", "joined")
    pipe_events(driver)
    records = driver.create_output_topic("joined", S, JSON).read_records_to_list()
    home = partition_for_key(b"k", partitions)
    assert all(r.key == "k" and r.partition == home for r in records)
    def order(item):
        return json.dumps(item[0]), item[1]
    assert sorted(((r.value, r.timestamp) for r in records), key=order) == sorted(expected, key=order)


def test_stream_stream_join_repartitions_a_rekeyed_side(make_driver, partitions):
    builder = StreamsBuilder()
    left = builder.stream("left", Consumed.with_(S, S)).select_key(lambda k, v: v.split(":")[0])
    right = builder.stream("right", Consumed.with_(S, S))
    left.join(right, lambda l, r: l + "+" + r, JoinWindows.of_time_difference_with_no_grace(50),
              StreamJoined.with_(S, S, S)).to("joined", Produced.with_(S, S))
    driver = make_driver(builder.build(), "left", "right", "joined")
    driver.create_input_topic("right", S, S).pipe_input("user-7", "profile", 10)
    driver.create_input_topic("left", S, S).pipe_input("click-1", "user-7:home", 20)
    records = driver.create_output_topic("joined", S, S).read_records_to_list()
    assert [(r.key, r.value, r.timestamp) for r in records] == [("user-7", "user-7:home+profile", 20)]
    assert records[0].partition == partition_for_key(b"user-7", partitions)
    assert "conformance-KSTREAM-KEY-SELECT-0000000001-repartition" in driver.produced_topic_names()


@pytest.mark.parametrize("left", [False, True])
def test_stream_table_join(make_driver, partitions, left):
    builder = StreamsBuilder()
    table = builder.table("profiles", Consumed.with_(S, S))
    stream = builder.stream("clicks", Consumed.with_(S, S))
    join = stream.left_join if left else stream.join
    join(table, lambda click, profile: f"{click}/{profile}").to("enriched", Produced.with_(S, S))
    driver = make_driver(builder.build(), "profiles", "clicks", "enriched")
    profiles = driver.create_input_topic("profiles", S, S)
    clicks = driver.create_input_topic("clicks", S, S)
    profiles.pipe_input("u1", "p1", 1)
    clicks.pipe_input("u1", "c1", 2)
    profiles.pipe_input("u1", "p2", 3)
    clicks.pipe_input("u1", "c2", 4)
    clicks.pipe_input("u2", "c3", 5)                  # no profile for u2
    records = driver.create_output_topic("enriched", S, S).read_records_to_list()
    expected = [("u1", "c1/p1", 2), ("u1", "c2/p2", 4)] + ([("u2", "c3/None", 5)] if left else [])
    assert [(r.key, r.value, r.timestamp) for r in records] == expected
    assert all(r.partition == partition_for_key(r.key.encode(), partitions) for r in records)


@pytest.mark.parametrize("kind, expected", [
    ("join", [("k", "a1+b1"), ("k", "a2+b1"), ("k", None)]),
    ("left_join", [("k", "a1+None"), ("k", "a1+b1"), ("k", "a2+b1"), ("k", "a2+None"), ("q", "x+None")]),
    ("outer_join", [("k", "a1+None"), ("k", "a1+b1"), ("k", "a2+b1"), ("k", "a2+None"), ("q", "x+None")]),
])
def test_table_table_joins(make_driver, partitions, kind, expected):
    builder = StreamsBuilder()
    a = builder.table("a", Consumed.with_(S, S))
    b = builder.table("b", Consumed.with_(S, S))
    getattr(a, kind)(b, lambda x, y: f"{x}+{y}").to_stream().to("ab", Produced.with_(S, S))
    driver = make_driver(builder.build(), "a", "b", "ab")
    ta, tb = driver.create_input_topic("a", S, S), driver.create_input_topic("b", S, S)
    ta.pipe_input("k", "a1", 1)
    tb.pipe_input("k", "b1", 2)
    ta.pipe_input("k", "a2", 3)
    tb.pipe_input("k", None, 4)                       # b deleted
    ta.pipe_input("q", "x", 5)
    records = driver.create_output_topic("ab", S, S).read_records_to_list()
    assert [(r.key, r.value) for r in records] == expected


@pytest.mark.parametrize("left", [False, True])
def test_stream_global_table_join(make_driver, partitions, left):
    """No repartition: each order looks up the product its value names, in a store fed by every partition."""
    builder = StreamsBuilder()
    products = builder.global_table("products", Consumed.with_(S, S), Materialized.as_("product-store"))
    orders = builder.stream("orders", Consumed.with_(S, S))
    join = orders.left_join if left else orders.join
    join(products, lambda order_id, order: order.split(":")[0], lambda order, product: f"{order}={product}").to(
        "enriched", Produced.with_(S, S))
    driver = make_driver(builder.build(), "orders", "products", "enriched")
    driver.create_input_topic("products", S, S).pipe_key_value_list([("p1", "pen"), ("p2", "cup"), ("p3", "ink")])
    driver.create_input_topic("orders", S, S).pipe_key_value_list([("o1", "p1:2"), ("o2", "p3:1"), ("o3", "p9:5")])
    records = driver.create_output_topic("enriched", S, S).read_records_to_list()
    expected = {"o1": "p1:2=pen", "o2": "p3:1=ink"} | ({"o3": "p9:5=None"} if left else {})
    assert {r.key: r.value for r in records} == expected
    assert all(r.partition == partition_for_key(r.key.encode(), partitions) for r in records)
    assert {kv.key for kv in driver.get_key_value_store("product-store").all()} == {"p1", "p2", "p3"}


def test_copartitioning_is_checked_before_anything_runs():
    builder = StreamsBuilder()
    builder.stream("clicks", Consumed.with_(S, S)).join(
        builder.table("profiles", Consumed.with_(S, S)), lambda c, p: c).to("out", Produced.with_(S, S))
    topology = builder.build()
    with pytest.raises(TopologyException, match=r"Topics not co-partitioned: \[\{clicks=4, profiles=2\}\]"):
        TopologyTestDriverBuilder(topology).declare_topic("clicks", 4).declare_topic("profiles", 2).build()


def per_key(records) -> dict:
    grouped: dict = {}
    for r in records:
        grouped.setdefault(r.key, []).append(r.value)
    return grouped


@pytest.mark.parametrize("kind, expected", [
    ("join", {"a1+b1": [1, 0], "a2+b1": [1, 0], "a2+b2": [1]}),
    ("left_join", {"a1+None": [1, 0], "a1+b1": [1, 0], "a2+b1": [1, 0], "a2+b2": [1]}),
])
def test_table_table_join_sends_old_values_of_both_tables(make_driver, partitions, kind, expected):
    """KTableKTableAbstractJoin.enableSendingOldValues enables old values on both joined tables."""
    builder = StreamsBuilder()
    a, b = builder.table("a", Consumed.with_(S, S)), builder.table("b", Consumed.with_(S, S))
    (getattr(a, kind)(b, lambda x, y: f"{x}+{y}")
     .group_by(lambda k, v: KeyValue(v, v), Grouped.with_(S, S)).count()
     .to_stream().to("counts", Produced.with_(S, Serdes.Long())))
    driver = make_driver(builder.build(), "a", "b", "counts")
    ta, tb = driver.create_input_topic("a", S, S), driver.create_input_topic("b", S, S)
    ta.pipe_input("k", "a1", 1)
    tb.pipe_input("k", "b1", 2)
    ta.pipe_input("k", "a2", 3)
    tb.pipe_input("k", "b2", 4)                       # the old join result a2+b1 must be subtracted
    assert per_key(driver.create_output_topic("counts", S, Serdes.Long()).read_records_to_list()) == expected


@pytest.mark.parametrize("kind, expected", [
    ("join", {"both": "s/A+B"}),
    ("left_join", {"both": "s/A+B", "a-only": "s/A+None"}),
    ("outer_join", {"both": "s/A+B", "a-only": "s/A+None", "b-only": "s/None+B"}),
])
def test_stream_joins_an_unmaterialized_table_table_join(make_driver, partitions, kind, expected):
    """KTableKTableJoinMerger.view(): an unmaterialized join result is read by joining both tables' values."""
    builder = StreamsBuilder()
    a, b = builder.table("a", Consumed.with_(S, S)), builder.table("b", Consumed.with_(S, S))
    joined = getattr(a, kind)(b, lambda x, y: f"{x}+{y}")
    builder.stream("s", Consumed.with_(S, S)).join(joined, lambda s, t: f"{s}/{t}").to("out", Produced.with_(S, S))
    driver = make_driver(builder.build(), "a", "b", "s", "out")
    driver.create_input_topic("a", S, S).pipe_key_value_list([("both", "A"), ("a-only", "A")])
    driver.create_input_topic("b", S, S).pipe_key_value_list([("both", "B"), ("b-only", "B")])
    driver.create_input_topic("s", S, S).pipe_key_value_list([("both", "s"), ("a-only", "s"), ("b-only", "s")])
    records = driver.create_output_topic("out", S, S).read_records_to_list()
    assert {r.key: r.value for r in records} == expected


def test_chained_table_table_joins(make_driver, partitions):
    """KTableKTableJoinMerger.view(): a join result joins again without being materialized."""
    builder = StreamsBuilder()
    a, b, c = (builder.table(t, Consumed.with_(S, S)) for t in "abc")
    a.join(b, lambda x, y: x + y).join(c, lambda x, y: x + y).to_stream().to("out", Produced.with_(S, S))
    driver = make_driver(builder.build(), "a", "b", "c", "out")
    for topic in "abc":
        driver.create_input_topic(topic, S, S).pipe_input("k", topic.upper(), 1)
    assert [(r.key, r.value) for r in driver.create_output_topic("out", S, S).read_records_to_list()] == [("k", "ABC")]


def test_stream_joins_a_suppressed_table_through_its_buffer(make_driver, partitions):
    """KTableSuppressProcessorSupplier.view(): a buffered key shows its prior value, others the parent's."""
    from streams_on_spark.dsl.suppressed import BufferConfig, Suppressed
    builder = StreamsBuilder()
    table = builder.table("t", Consumed.with_(S, S), Materialized.as_("t-store")).suppress(
        Suppressed.until_time_limit(10, BufferConfig.unbounded()))
    builder.stream("s", Consumed.with_(S, S)).left_join(table, lambda s, t: f"{s}/{t}").to("out", Produced.with_(S, S))
    driver = make_driver(builder.build(), "t", "s", "out")
    t, s = driver.create_input_topic("t", S, S), driver.create_input_topic("s", S, S)
    t.pipe_input("k", "v1", 0)
    t.pipe_input("k", "v2", 5)
    s.pipe_input("k", "s1", 6)                        # buffered since 0 with prior value None
    t.pipe_input("k", "v3", 10)                       # evicted: the view falls back to the table
    s.pipe_input("k", "s2", 11)
    t.pipe_input("k", "v4", 15)                       # buffered again, prior value v3
    s.pipe_input("k", "s3", 16)
    records = driver.create_output_topic("out", S, S).read_records_to_list()
    assert [(r.value, r.timestamp) for r in records] == [("s1/None", 6), ("s2/v3", 11), ("s3/v3", 16)]


@pytest.mark.parametrize("kind, windows, events", [
    # right side of an outer join: its own after bound is the windows' before (0), so r1 waits only until 50
    ("outer_join", JoinWindows.of_time_difference_with_no_grace(0).after(100),
     [("right", "r1", 50, []), ("right", "r2", 60, [("None+r1", 50)])]),
    # a right record checks pending left records with its own after bound, the windows' before (100)
    ("left_join", JoinWindows.of_time_difference_with_no_grace(0).before(100),
     [("left", "l1", 0, []), ("right", "r1", 50, []), ("right", "r2", 100, []),
      ("right", "r3", 101, [("l1+None", 0)])]),
], ids=["outer-after", "left-before"])
def test_outer_join_right_side_uses_its_own_after_bound(make_driver, partitions, kind, windows, events):
    """KStreamKStreamJoinRightSide passes (afterMs, beforeMs): its joinAfterMs gates emitting non-joined records."""
    builder = StreamsBuilder()
    left, right = builder.stream("left", Consumed.with_(S, S)), builder.stream("right", Consumed.with_(S, S))
    getattr(left, kind)(right, lambda l, r: f"{l}+{r}", windows).to("out", Produced.with_(S, S))
    driver = make_driver(builder.build(), "left", "right", "out")
    topics = {name: driver.create_input_topic(name, S, S) for name in ("left", "right")}
    out = driver.create_output_topic("out", S, S)
    for topic, value, ts, expected in events:
        topics[topic].pipe_input("k", value, ts)
        assert [(r.value, r.timestamp) for r in out.read_records_to_list()] == expected


@pytest.mark.parametrize("kind", ["left_join", "outer_join"])
def test_deprecated_join_windows_emit_unmatched_results_eagerly(make_driver, partitions, kind):
    """JoinWindows.of has no spurious-result fix: unmatched left/outer results are emitted at once."""
    builder = StreamsBuilder()
    left, right = builder.stream("left", Consumed.with_(S, S)), builder.stream("right", Consumed.with_(S, S))
    getattr(left, kind)(right, lambda l, r: f"{l}+{r}", JoinWindows.of(10)).to("out", Produced.with_(S, S))
    driver = make_driver(builder.build(), "left", "right", "out")
    driver.create_input_topic("left", S, S).pipe_input("k", "l1", 0)
    driver.create_input_topic("right", S, S).pipe_input("k", "r1", 5)
    records = driver.create_output_topic("out", S, S).read_records_to_list()
    assert [(r.value, r.timestamp) for r in records] == [("l1+None", 0), ("l1+r1", 5)]

"""KTable operators: source materialization, filter/map_values as changes, to_stream, group_by aggregations."""
from __future__ import annotations

import re

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    KeyValue,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TopologyTestDriver,
)

S, L = Serdes.String(), Serdes.Long()
CONFIG = {"application.id": "tables", "default.key.serde": S, "default.value.serde": S}


def test_table_filter_turns_non_matching_updates_into_deletes():
    builder = StreamsBuilder()
    (builder.table("in", Consumed.with_(S, S))
     .filter(lambda k, v: v.startswith("keep"), materialized=Materialized.as_("kept"))
     .to_stream().to("out"))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        inp = driver.create_input_topic("in", S, S, start_timestamp=0)
        inp.pipe_key_value_list([("a", "keep-1"), ("a", "drop"), ("b", "drop"), ("b", "keep-2")])
        assert driver.create_output_topic("out", S, S).read_key_values_to_list() == [
            ("a", "keep-1"), ("a", None), ("b", "keep-2")]  # b's first update deleted nothing: not forwarded
        kept = driver.get_key_value_store("kept")
        assert kept.get("a") is None and kept.get("b") == "keep-2"


def test_unmaterialized_table_filter_forwards_every_update():
    builder = StreamsBuilder()
    builder.table("in", Consumed.with_(S, S)).filter_not(lambda k, v: v == "x").to_stream().to("out")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("in", S, S, start_timestamp=0).pipe_key_value_list([("a", "x"), ("a", "y")])
        assert driver.create_output_topic("out", S, S).read_key_values_to_list() == [("a", None), ("a", "y")]


def test_table_map_values_and_tombstones():
    builder = StreamsBuilder()
    builder.table("in", Consumed.with_(S, S)).map_values(len).to_stream().to("out", Produced.with_(S, L))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("in", S, S, start_timestamp=0).pipe_key_value_list(
            [("a", "xyz"), ("a", None), ("b", "")])
        assert driver.create_output_topic("out", S, L).read_key_values_to_list() == [("a", 3), ("a", None), ("b", 0)]


def test_named_table_is_queryable_and_null_keys_are_dropped():
    builder = StreamsBuilder()
    builder.table("in", Consumed.with_(S, S), Materialized.as_("latest"))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        inp = driver.create_input_topic("in", S, S, start_timestamp=0)
        inp.pipe_key_value_list([("a", "1"), (None, "lost"), ("a", "2")])
        assert list(driver.get_key_value_store("latest").all()) == [KeyValue("a", "2")]
        ts = driver.get_timestamped_key_value_store("latest").get("a")
        assert (ts.value, ts.timestamp) == ("2", 0)
        assert driver.metrics()["dropped-records-total"] == 1


def test_grouped_table_reduce_with_adder_and_subtractor():
    builder = StreamsBuilder()
    (builder.table("scores", Consumed.with_(S, S))
     .map_values(int)
     .group_by(lambda player, score: KeyValue("total", score), Grouped.with_(S, L))
     .reduce(lambda agg, v: agg + v, lambda agg, v: agg - v, materialized=Materialized.as_("totals").with_value_serde(L))
     .to_stream().to("out", Produced.with_(S, L)))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        inp = driver.create_input_topic("scores", S, S, start_timestamp=0)
        inp.pipe_key_value_list([("p1", "10"), ("p2", "5"), ("p1", "7"), ("p2", None)])
        # same new key as old key: one record carrying both values (Kafka 3.x+)
        assert driver.create_output_topic("out", S, L).read_values_to_list() == [10, 15, 12, 7]
        assert driver.get_key_value_store("totals").get("total") == 7


def test_grouped_table_repartition_carries_old_and_new_values_in_kafkas_layout():
    builder = StreamsBuilder()
    (builder.table("t", Consumed.with_(S, S))
     .group_by(lambda k, v: KeyValue(v, k), Grouped.with_(S, S, name="g"))
     .count())
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        inp = driver.create_input_topic("t", S, S, start_timestamp=0)
        inp.pipe_input("k", "v")      # new only:   b"k" + 0x01
        inp.pipe_input("k", "w")      # other key:  old to "v" (b"k" + 0x00), new to "w"
        raw = driver.create_output_topic("tables-g-repartition", S, Serdes.ByteArray()).read_key_values_to_list()
        assert raw == [("v", b"k\x01"), ("v", b"k\x00"), ("w", b"k\x01")]


@pytest.mark.parametrize("call, what", [
    (lambda t, f: t.filter(f), "predicate"),
    (lambda t, f: t.filter_not(f), "predicate"),
    (lambda t, f: t.map_values(f), "mapper"),
])
def test_table_operators_reject_a_missing_or_non_callable_function(call, what):
    """KTableImpl.filter/filterNot/mapValues: Objects.requireNonNull(..., "<arg> can't be null") at the call."""
    table = StreamsBuilder().table("in", Consumed.with_(S, S))
    with pytest.raises(ValueError, match=f"^{what} can't be null$"):
        call(table, None)
    with pytest.raises(ValueError, match=f"^{what} must be callable"):
        call(table, "not a function")


def test_table_join_with_unnamed_materialized_is_stored_under_a_generated_name():
    """KTableImpl.join: MaterializedInternal(materialized, builder, "KTABLE-MERGE-") names the store at the call."""
    builder = StreamsBuilder()
    a, b = builder.table("a", Consumed.with_(S, S)), builder.table("b", Consumed.with_(S, S))
    a.join(b, lambda x, y: x + y, Materialized.with_(S, S)).to_stream().to("out", Produced.with_(S, S))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("a", S, S).pipe_input("k", "x", 1)
        driver.create_input_topic("b", S, S).pipe_input("k", "y", 2)
        assert driver.get_key_value_store("KTABLE-MERGE-STATE-STORE-0000000006").get("k") == "xy"


def test_suppress_until_window_closes_on_a_non_windowed_table_names_the_chain():
    """GraphGraceSearchUtil.findAndVerifyWindowGrace: every path upstream must reach a windowed aggregation."""
    from streams_on_spark import TopologyException
    from streams_on_spark.dsl.suppressed import BufferConfig, Suppressed
    table = StreamsBuilder().table("t", Consumed.with_(S, S)).filter(lambda k, v: True)
    with pytest.raises(TopologyException, match=re.escape(
            "Window close time is only defined for windowed computations. "
            "Got [root->KTABLE-SOURCE-0000000002->KTABLE-FILTER-0000000003].")):
        table.suppress(Suppressed.until_window_closes(BufferConfig.unbounded()))

"""Foreign-key table-table joins (KIP-213): the API's overloads and errors, Kafka's generated names, default serdes,
``with_key`` extractors, ``TableJoined`` partitioners, and results across partitions (Kafka's goldens for the full
scenario: tests/conformance/test_kafka_reference.py, fk-join-*)."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    Materialized,
    Named,
    Produced,
    Serdes,
    StreamsBuilder,
    TableJoined,
    TopologyTestDriver,
    TopologyTestDriverBuilder,
)
from streams_on_spark.errors import TopologyException

S = Serdes.String()
CONFIG = {"application.id": "fk", "default.key.serde": S, "default.value.serde": S}


def customer_of(order):
    return order.split(",")[0] or None


def joined(o, c):
    return f"{o}/{c}"


def tables(builder=None, serdes=True):
    builder = builder or StreamsBuilder()
    consumed = Consumed.with_(S, S) if serdes else Consumed()
    return builder, builder.table("orders", consumed), builder.table("customers", consumed)


def run(topology, steps, partitions=1, config=CONFIG):
    """Pipe (topic, key, value) steps; returns the output records and the driver's dropped-records count."""
    driver_builder = TopologyTestDriverBuilder(topology).with_config(config)
    for topic in ("orders", "customers", "out"):
        driver_builder = driver_builder.declare_topic(topic, partitions)
    with driver_builder.build() as driver:
        inputs = {t: driver.create_input_topic(t, S, S) for t in ("orders", "customers")}
        out = driver.create_output_topic("out", S, S)
        for ts, (topic, key, value) in enumerate(steps):
            inputs[topic].pipe_input(key, value, ts)
        return [(r.key, r.value) for r in out.read_records_to_list()], driver.metrics()["dropped-records-total"]


# ------------------------------------------------------------------ API errors

def test_a_null_extractor_is_a_clear_error():
    _, orders, customers = tables()
    with pytest.raises(ValueError, match="foreignKeyExtractor can't be null"):
        orders.join(customers, None, joined)
    with pytest.raises(ValueError, match="foreignKeyExtractor can't be null"):
        orders.left_join(customers, joined, foreign_key_extractor=None)


def test_a_null_joiner_and_non_callables_are_clear_errors():
    _, orders, customers = tables()
    with pytest.raises(ValueError, match="joiner can't be null"):
        orders.join(customers, None, foreign_key_extractor=customer_of)
    with pytest.raises(ValueError, match="foreignKeyExtractor must be callable"):
        orders.join(customers, joined, foreign_key_extractor="customer")


def test_the_other_side_must_be_a_table():
    builder, orders, _ = tables()
    stream = builder.stream("s", Consumed.with_(S, S))
    with pytest.raises(ValueError, match="foreignKeyTable must be a KTable"):
        orders.join(stream, customer_of, joined)


def test_optional_arguments_are_one_table_joined_and_one_materialized():
    _, orders, customers = tables()
    with pytest.raises(ValueError, match="one TableJoined and/or one Materialized"):
        orders.join(customers, customer_of, joined, Named.as_("x"))
    with pytest.raises(ValueError, match="one TableJoined and/or one Materialized"):
        orders.join(customers, customer_of, joined, TableJoined.as_("a"), TableJoined.as_("b"))
    with pytest.raises(TopologyException, match="illegal"):
        TableJoined.as_("bad name!")
    with pytest.raises(ValueError, match="partitioner must be callable"):
        TableJoined.with_("p", None)


def test_key_join_arguments_stay_the_key_join():
    _, orders, customers = tables()
    with pytest.raises(ValueError, match="a key join's arguments"):
        orders.join(customers, joined, None, None, TableJoined.as_("x"))
    with pytest.raises(ValueError, match="a key join's arguments"):
        orders.join(customers, joined, with_key=True)
    assert orders.join(customers, joined).name.startswith("KTABLE-MERGE-")


# ------------------------------------------------------------------ topology

def test_generated_names_and_internal_topics_are_kafkas():
    builder, orders, customers = tables()
    orders.join(customers, customer_of, joined).to_stream().to("out", Produced.with_(S, S))
    text = str(builder.build().describe())
    for name in ("KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic",
                 "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000007", "KTABLE-SINK-0000000008",
                 "KTABLE-SOURCE-0000000009", "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010",
                 "KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000011", "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic",
                 "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-0000000017", "KTABLE-FK-JOIN-OUTPUT-0000000018",
                 # an unnamed result store burns index 19 (MaterializedInternal), so to_stream is 20
                 "KTABLE-TOSTREAM-0000000020"):
        assert name in text
    # not materialized: the result processor has no store
    assert "Processor: KTABLE-FK-JOIN-OUTPUT-0000000018 (stores: [])" in text


def test_table_joined_names_everything():
    builder, orders, customers = tables()
    orders.left_join(customers, customer_of, joined, Materialized.as_("res"), TableJoined.as_("j")).to_stream().to(
        "out", Produced.with_(S, S))
    text = str(builder.build().describe())
    for name in ("j-subscription-registration-topic", "j-subscription-registration-processor",
                 "j-subscription-registration-sink", "j-subscription-registration-source", "j-subscription-store",
                 "j-subscription-receive", "j-subscription-join-foreign", "j-foreign-join-subscription",
                 "j-subscription-response-topic", "j-subscription-response-sink", "j-subscription-response-source",
                 "j-subscription-response-resolver", "Processor: j-result (stores: [res])"):
        assert name in text


# ------------------------------------------------------------------ results

STEPS = [("customers", "c1", "alice"), ("orders", "o1", "c1,10"), ("orders", "o2", "c2,20"),
         ("customers", "c2", "bob"), ("customers", "c1", "alice2"), ("orders", "o1", "c2,11"),
         ("orders", "o3", ",30"), ("customers", "c2", None), ("orders", "o2", None)]


def fk_topology(left, serdes=True, **kwargs):
    builder, orders, customers = tables(serdes=serdes)
    join = orders.left_join if left else orders.join
    join(customers, customer_of, joined, **kwargs).to_stream().to("out", Produced.with_(S, S) if serdes else None)
    return builder.build()


@pytest.mark.parametrize("partitions", [1, 4])
def test_inner_join_follows_updates_foreign_key_changes_and_tombstones(partitions):
    out, dropped = run(fk_topology(False), STEPS, partitions)
    # c2's tombstone reaches both of its subscribers, then o2's own tombstone follows
    expected = [("o1", "c1,10/alice"), ("o2", "c2,20/bob"), ("o1", "c1,10/alice2"), ("o1", "c2,11/bob"),
                ("o1", None), ("o2", None), ("o2", None)]
    if partitions == 1:
        assert out == expected
    else:
        for key in ("o1", "o2"):
            assert [r for r in out if r[0] == key] == [r for r in expected if r[0] == key]
    assert dropped == 1   # o3's null foreign key


@pytest.mark.parametrize("partitions", [1, 4])
def test_left_join_keeps_rows_without_a_match(partitions):
    out, dropped = run(fk_topology(True), STEPS, partitions)
    expected = [("o1", "c1,10/alice"), ("o2", "c2,20/None"), ("o2", "c2,20/bob"), ("o1", "c1,10/alice2"),
                ("o1", "c2,11/bob"), ("o3", ",30/None"), ("o1", "c2,11/None"), ("o2", "c2,20/None"), ("o2", None)]
    for key in ("o1", "o2", "o3"):
        assert [r for r in out if r[0] == key] == [r for r in expected if r[0] == key]
    if partitions == 1:
        assert out == expected
    assert dropped == 0


def test_default_serdes_serve_the_internal_topics():
    out, _ = run(fk_topology(False, serdes=False), STEPS[:4])
    assert out == [("o1", "c1,10/alice"), ("o2", "c2,20/bob")]


def test_with_key_extractor_gets_key_and_value():
    builder, orders, customers = tables()
    orders.join(customers, lambda key, value: key.split("-")[0], joined, with_key=True).to_stream().to(
        "out", Produced.with_(S, S))
    out, _ = run(builder.build(), [("customers", "c1", "alice"), ("orders", "c1-o1", "10")])
    assert out == [("c1-o1", "10/alice")]


def test_table_joined_partitioners_place_the_internal_records():
    seen = {"primary": [], "foreign": []}

    def primary(topic, key, value, n):
        seen["primary"].append((topic, key, value))
        return 0

    def foreign(topic, key, value, n):
        seen["foreign"].append((topic, key, value))
        return 0

    builder, orders, customers = tables()
    orders.join(customers, customer_of, joined, TableJoined.with_(primary, foreign).with_name("p")).to_stream().to(
        "out", Produced.with_(S, S))
    # one partition: a partitioner that disagrees with how the table's topic is partitioned loses the responses
    out, _ = run(builder.build(), [("customers", "c1", "alice"), ("orders", "o1", "c1,10")])
    assert out == [("o1", "c1,10/alice")]
    assert seen["foreign"] == [("fk-p-subscription-registration-topic", "c1", None)]
    assert seen["primary"] == [("fk-p-subscription-response-topic", "o1", None)]


def test_the_result_table_is_queryable_when_named():
    builder, orders, customers = tables()
    orders.join(customers, customer_of, joined, Materialized.as_("res").with_value_serde(S))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("customers", S, S).pipe_input("c1", "alice")
        driver.create_input_topic("orders", S, S).pipe_input("o1", "c1,1")
        assert driver.get_key_value_store("res").get("o1") == "c1,1/alice"


def test_derived_tables_join_and_the_result_feeds_further_table_operations():
    """An unmaterialized ``map_values`` table on either side (read through its parent's store), and the result
    grouped and counted (its store materialized for the old values)."""
    builder, orders, customers = tables()
    upper = customers.map_values(str.upper)
    trimmed = orders.map_values(lambda v: v.strip())
    result = trimmed.join(upper, customer_of, joined)
    result.group_by(lambda k, v: (v.split("/")[1], v)).count().to_stream().to(
        "out", Produced.with_(S, Serdes.Long()))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("customers", S, S).pipe_input("c1", "alice")
        orders_in = driver.create_input_topic("orders", S, S)
        orders_in.pipe_input("o1", " c1,1 ")
        orders_in.pipe_input("o2", "c1,2")
        orders_in.pipe_input("o1", None)
        counts = driver.create_output_topic("out", S, Serdes.Long()).read_key_values_to_list()
    assert counts == [("ALICE", 1), ("ALICE", 2), ("ALICE", 1)]

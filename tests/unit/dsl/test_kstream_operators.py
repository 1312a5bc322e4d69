"""Each KStream operator's behaviour in the driver (single partition unless the operator is about partitions)."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Branched,
    Grouped,
    KeyValue,
    Materialized,
    Named,
    Produced,
    Repartitioned,
    Serdes,
    StreamsBuilder,
    TopologyTestDriverBuilder,
)
from streams_on_spark.partitioner import partition_for_key

S, L, I = Serdes.String(), Serdes.Long(), Serdes.Integer()
CONFIG = {"application.id": "ops", "default.key.serde": S, "default.value.serde": S}


def run(build, records, outputs=("out",), partitions=None, value_serdes=None, **driver_topics):
    """Build with ``build(builder)``, pipe ``(key, value)`` records into "in", return each output's key-values."""
    builder = StreamsBuilder()
    build(builder)
    driver_builder = TopologyTestDriverBuilder(builder.build()).with_config(CONFIG)
    for topic, n in driver_topics.items():
        driver_builder.declare_topic(topic, n)
    with driver_builder.build() as driver:
        inp = driver.create_input_topic("in", S, S, start_timestamp=0, auto_advance=1)
        for key, value in records:
            inp.pipe_input(key, value)
        return {name: driver.create_output_topic(name, S, (value_serdes or {}).get(name, S)).read_key_values_to_list()
                for name in outputs}


def test_filter_and_filter_not():
    got = run(lambda b: (lambda s: (s.filter(lambda k, v: int(v) % 2 == 0).to("out"),
                                    s.filter_not(lambda k, v: int(v) % 2 == 0).to("odd")))(b.stream("in")),
              [("a", "1"), ("b", "2"), ("c", "4")], outputs=("out", "odd"))
    assert got == {"out": [("b", "2"), ("c", "4")], "odd": [("a", "1")]}


def test_map_accepts_keyvalue_and_tuples():
    got = run(lambda b: b.stream("in").map(lambda k, v: KeyValue(v, k) if k == "a" else (v, k)).to("out"),
              [("a", "1"), ("b", "2")])
    assert got["out"] == [("1", "a"), ("2", "b")]


def test_map_values_with_and_without_key():
    got = run(lambda b: (lambda s: (s.map_values(str.upper).to("out"),
                                    s.map_values(lambda k, v: k + v, with_key=True).to("keyed")))(b.stream("in")),
              [("a", "x")], outputs=("out", "keyed"))
    assert got == {"out": [("a", "X")], "keyed": [("a", "ax")]}


def test_flat_map_and_flat_map_values():
    got = run(lambda b: (lambda s: (s.flat_map(lambda k, v: [KeyValue(c, k) for c in v]).to("out"),
                                    s.flat_map_values(lambda v: list(v)).to("vals")))(b.stream("in")),
              [("k", "ab"), ("z", "")], outputs=("out", "vals"))
    assert got == {"out": [("a", "k"), ("b", "k")], "vals": [("k", "a"), ("k", "b")]}


def test_bad_mapper_result_names_the_node():
    from streams_on_spark import StreamsException
    with pytest.raises(StreamsException, match="KSTREAM-MAP-0000000001"):
        run(lambda b: b.stream("in").map(lambda k, v: v).to("out"), [("a", "1")])


def test_peek_and_foreach():
    peeked, each = [], []
    got = run(lambda b: (lambda s: (s.peek(lambda k, v: peeked.append((k, v))).to("out"),
                                    s.foreach(lambda k, v: each.append(v))))(b.stream("in")),
              [("a", "1"), ("b", "2")])
    assert peeked == [("a", "1"), ("b", "2")] and each == ["1", "2"]
    assert got["out"] == [("a", "1"), ("b", "2")]


def test_split_routes_to_the_first_matching_branch():
    def build(b):
        branches = (b.stream("in").split(Named.as_("split-"))
                    .branch(lambda k, v: v.startswith("a"), Branched.as_("a"))
                    .branch(lambda k, v: v.startswith("b"))
                    .branch(lambda k, v: v.startswith("c"), Branched.with_consumer(lambda s: s.to("c-out")))
                    .default_branch(Branched.with_function(lambda s: s.map_values(str.upper), "rest")))
        assert sorted(branches) == ["split-2", "split-a", "split-rest"]
        branches["split-a"].to("a-out")
        branches["split-2"].to("b-out")
        branches["split-rest"].to("rest-out")

    got = run(build, [("1", "apple"), ("2", "banana"), ("3", "avocado"), ("4", "cherry"), ("5", "date")],
              outputs=("a-out", "b-out", "c-out", "rest-out"))
    assert got == {"a-out": [("1", "apple"), ("3", "avocado")], "b-out": [("2", "banana")],
                   "c-out": [("4", "cherry")], "rest-out": [("5", "DATE")]}


def test_merge_interleaves_by_processing_order():
    def build(b):
        b.stream("in").merge(b.stream("other")).to("out")

    builder = StreamsBuilder()
    build(builder)
    with TopologyTestDriverBuilder(builder.build()).with_config(CONFIG).build() as driver:
        a = driver.create_input_topic("in", S, S, start_timestamp=0)
        o = driver.create_input_topic("other", S, S, start_timestamp=0)
        a.pipe_input("a", "1")
        o.pipe_input("o", "2")
        a.pipe_input("a", "3")
        assert driver.create_output_topic("out", S, S).read_values_to_list() == ["1", "2", "3"]


def test_repartition_with_explicit_partition_count_and_partitioner():
    def build(b):
        (b.stream("in").repartition(Repartitioned.as_("spread").with_number_of_partitions(3)
                                    .with_stream_partitioner(lambda topic, k, v, n: int(v) % n))
         .to("out"))

    builder = StreamsBuilder()
    build(builder)
    with TopologyTestDriverBuilder(builder.build()).with_config(CONFIG).declare_topic("in", 2).build() as driver:
        inp = driver.create_input_topic("in", S, S, start_timestamp=0)
        for i in range(6):
            inp.pipe_input("same-key", str(i))
        records = driver.create_output_topic("ops-spread-repartition", S, S).read_records_to_list()
        assert [(r.value, r.partition) for r in records] == [(str(i), i % 3) for i in range(6)]


def test_repartitioned_chains_keep_every_setting():
    """``with_number_of_partitions`` on the class makes one (Kafka's static ``numberOfPartitions``); on an instance it
    keeps what the chain set before (``withNumberOfPartitions``)."""
    chained = Repartitioned.with_(S, S).with_name("by-word").with_number_of_partitions(4)
    assert chained == Repartitioned(name="by-word", number_of_partitions=4, key_serde=S, value_serde=S)
    assert Repartitioned.with_number_of_partitions(2) == Repartitioned(number_of_partitions=2)


def test_partitioner_out_of_range_is_an_error():
    from streams_on_spark import StreamsException
    with pytest.raises(StreamsException, match="returned partition 5"):
        run(lambda b: b.stream("in").to("out", Produced.stream_partitioner(lambda t, k, v, n: 5)), [("a", "1")])


def test_reduce_and_aggregate():
    def build(b):
        grouped = b.stream("in").group_by_key()
        grouped.reduce(lambda agg, v: agg + v, materialized=Materialized.as_("concat")).to_stream().to("out")
        (grouped.aggregate(lambda: 0, lambda k, v, agg: agg + int(v),
                           materialized=Materialized.as_("sum").with_value_serde(L))
         .to_stream().to("sum", Produced.with_(S, L)))

    got = run(build, [("a", "1"), ("a", "2"), ("b", "5"), ("a", "3")], outputs=("out", "sum"),
              value_serdes={"sum": L})
    assert got["out"] == [("a", "1"), ("a", "12"), ("b", "5"), ("a", "123")]
    assert got["sum"] == [("a", 1), ("a", 3), ("b", 5), ("a", 6)]


def test_aggregations_skip_null_keys_and_values_and_count_them_as_dropped():
    builder = StreamsBuilder()
    builder.stream("in").group_by_key().count(Materialized.as_("c")).to_stream().to("out", Produced.with_(S, L))
    with TopologyTestDriverBuilder(builder.build()).with_config(CONFIG).build() as driver:
        inp = driver.create_input_topic("in", S, S, start_timestamp=0)
        inp.pipe_input("a", "1")
        inp.pipe_input("a", None)
        inp.pipe_input(None, "x")
        assert driver.create_output_topic("out", S, L).read_key_values_to_list() == [("a", 1)]
        assert driver.metrics()["dropped-records-total"] == 2


def test_group_by_repartitions_by_the_new_key():
    builder = StreamsBuilder()
    (builder.stream("in").group_by(lambda k, v: v[0], Grouped.as_("first-letter"))
     .count(Materialized.as_("letters")).to_stream().to("out", Produced.with_(S, L)))
    with TopologyTestDriverBuilder(builder.build()).with_config(CONFIG).declare_topic("in", 4).build() as driver:
        inp = driver.create_input_topic("in", S, S, start_timestamp=0)
        for i, word in enumerate(["apple", "avocado", "banana", "apricot", "blueberry"]):
            inp.pipe_input(str(i), word)
        for letter, count in {"a": 3, "b": 2}.items():
            assert driver.get_key_value_store("letters", partition_for_key(letter.encode(), 4)).get(letter) == count


def test_to_table_keeps_the_latest_value_per_key():
    builder = StreamsBuilder()
    builder.stream("in").to_table(materialized=Materialized.as_("latest")).to_stream().to("out")
    with TopologyTestDriverBuilder(builder.build()).with_config(CONFIG).build() as driver:
        inp = driver.create_input_topic("in", S, S, start_timestamp=0)
        inp.pipe_key_value_list([("a", "1"), ("b", "2"), ("a", "3"), ("b", None)])
        assert driver.create_output_topic("out", S, S).read_key_values_to_list() == [
            ("a", "1"), ("b", "2"), ("a", "3"), ("b", None)]
        store = driver.get_key_value_store("latest")
        assert store.get("a") == "3" and store.get("b") is None


def test_topology_optimization_merges_repartition_topics_at_runtime_too():
    def build(config):
        builder = StreamsBuilder()
        keyed = builder.stream("in").select_key(lambda k, v: v)
        keyed.group_by_key(Grouped.as_("one")).count(Materialized.as_("c1")).to_stream().to("o1", Produced.with_(S, L))
        keyed.group_by_key(Grouped.as_("two")).count(Materialized.as_("c2")).to_stream().to("o2", Produced.with_(S, L))
        return builder.build(config)

    for config, topics in [({}, {"ops-one-repartition", "ops-two-repartition"}),
                           ({"topology.optimization": "all"}, {"ops-one-repartition"})]:
        with TopologyTestDriverBuilder(build(config)).with_config(CONFIG).declare_topic("in", 2).build() as driver:
            inp = driver.create_input_topic("in", S, S, start_timestamp=0)
            for i, v in enumerate(["x", "y", "x"]):
                inp.pipe_input(str(i), v)
            assert {t for t in driver.produced_topic_names() if t.endswith("-repartition")} == topics
            for store in ("c1", "c2"):
                assert driver.get_key_value_store(store, partition_for_key(b"x", 2)).get("x") == 2


def test_invalid_optimization_value_is_rejected():
    builder = StreamsBuilder()
    builder.stream("in").to("out")
    with pytest.raises(ValueError, match="topology.optimization"):
        builder.build({"topology.optimization": "everything"})

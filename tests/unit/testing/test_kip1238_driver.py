"""KIP-1238's test plan for the multi-partition TopologyTestDriver, item by item.

1. routing: explicit partition, key-based (murmur2 % n), null keys round-robin (never an error);
2. repartition (and the join-less equivalents we have now) across partitions;
3. backward compatibility: the 1-partition default behaves like Kafka's driver;
plus the contract details of the KIP and its review: store accessors, declaration rules, scheduling order.
"""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    IllegalStateError,
    KeyValue,
    Materialized,
    Processor,
    Produced,
    PunctuationType,
    Record,
    Repartitioned,
    Serdes,
    StreamsBuilder,
    TestRecord,
    Topology,
    TopologyTestDriver,
    TopologyTestDriverBuilder,
)
from streams_on_spark.partitioner import partition_for_key

S = Serdes.String()


def passthrough_topology() -> Topology:
    builder = StreamsBuilder()
    builder.stream("input", Consumed.with_(S, S)).to("output", Produced.with_(S, S))
    return builder.build()


def driver_with(topology: Topology, **topics: int) -> TopologyTestDriver:
    builder = TopologyTestDriverBuilder(topology).with_config({"application.id": "kip1238"})
    for name, n in topics.items():
        builder.declare_topic(name, n)
    return builder.build()


# --- 1. routing ----------------------------------------------------------------------------------------------
def test_explicit_partition_is_used_as_is():
    with driver_with(passthrough_topology(), input=3, output=3) as driver:
        inp = driver.create_input_topic("input", S, S)
        out = driver.create_output_topic("output", S, S)
        inp.pipe_input(TestRecord("key0", "value0", 1000, partition=0))
        inp.pipe_input(TestRecord("key0", "value1", 1000, partition=2))
        # the pass-through sink re-partitions by key, so look at where the input was processed instead
        records = out.read_records_to_list()
        assert [r.value for r in records] == ["value0", "value1"]
        assert {r.partition for r in records} == {partition_for_key(b"key0", 3)}


def test_explicit_partition_is_what_the_task_sees():
    seen: list[tuple[str, int]] = []

    class Recorder(Processor):
        def process(self, record: Record) -> None:
            meta = self.context.record_metadata()
            seen.append((record.value, meta.partition))

    topology = Topology().add_source("src", "input", key_serde=S, value_serde=S).add_processor("rec", Recorder, "src")
    with driver_with(topology, input=3) as driver:
        inp = driver.create_input_topic("input", S, S)
        inp.pipe_input(TestRecord("k", "a", 1, partition=2))
        inp.pipe_input(TestRecord("k", "b", 1, partition=0))
    assert seen == [("a", 2), ("b", 0)]


@pytest.mark.parametrize("partition", [-1, 3, 7])
def test_explicit_partition_out_of_range_is_a_value_error(partition):
    with driver_with(passthrough_topology(), input=3) as driver:
        inp = driver.create_input_topic("input", S, S)
        with pytest.raises(ValueError) as err:
            inp.pipe_input(TestRecord("k", "v", 1, partition=partition) if partition >= 0 else
                           TestRecord("k", "v", 1))  # negative partitions are rejected by TestRecord itself
            inp.pipe_input("k", "v", partition=partition)
        assert "partition" in str(err.value).lower()


@pytest.mark.parametrize("key", ["key1", "alice", "bob", "user1", "héllo", "21", "foobar"])
def test_key_routing_matches_murmur2(key):
    seen: list[int] = []

    class Recorder(Processor):
        def process(self, record: Record) -> None:
            seen.append(self.context.record_metadata().partition)

    topology = Topology().add_source("src", "input", key_serde=S, value_serde=S).add_processor("rec", Recorder, "src")
    with driver_with(topology, input=3) as driver:
        driver.create_input_topic("input", S, S).pipe_input(key, "v")
    assert seen == [partition_for_key(key.encode("utf-8"), 3)]


def test_null_keys_round_robin_across_partitions():
    seen: list[int] = []

    class Recorder(Processor):
        def process(self, record: Record) -> None:
            seen.append(self.context.record_metadata().partition)

    topology = Topology().add_source("src", "input", key_serde=S, value_serde=S).add_processor("rec", Recorder, "src")
    with driver_with(topology, input=3) as driver:
        inp = driver.create_input_topic("input", S, S)
        for value in ["value2", "value3", "value4", "value5"]:
            inp.pipe_input(TestRecord(None, value, 1000))
    assert seen == [0, 1, 2, 0]


# --- 2. repartition across partitions -----------------------------------------------------------------------
def count_by_value_topology() -> Topology:
    builder = StreamsBuilder()
    (builder.stream("input", Consumed.with_(S, S))
     .group_by(lambda k, v: v, Grouped.with_(S, S, name="by-value"))
     .count(Materialized.as_("counts"))
     .to_stream().to("output", Produced.with_(S, Serdes.Long())))
    return builder.build()


def test_repartition_routes_each_new_key_to_its_murmur2_partition():
    with driver_with(count_by_value_topology(), input=4, output=4) as driver:
        inp = driver.create_input_topic("input", S, S)
        for i, color in enumerate(["red", "blue", "red", "green", "red", "blue"]):
            inp.pipe_input(f"user-{i}", color, 100 + i)
        repartition = driver.create_output_topic("kip1238-by-value-repartition", S, S).read_records_to_list()
        assert len(repartition) == 6
        for r in repartition:
            assert r.partition == partition_for_key(r.key.encode(), 4)
        for color, count in {"red": 3, "blue": 2, "green": 1}.items():
            home = partition_for_key(color.encode(), 4)
            for p in range(4):
                store = driver.get_key_value_store("counts", p)
                assert store.get(color) == (count if p == home else None)
        assert "kip1238-by-value-repartition" in driver.produced_topic_names()


def test_key_change_before_process_splits_state_across_partitions():
    """The KIP's motivating bug: process() never repartitions, so a changed key is counted where it arrived."""

    class CountProcessor(Processor):
        def init(self, context):
            super().init(context)
            self.store = context.get_state_store("per-key")

        def process(self, record: Record) -> None:
            self.store.put(record.key, (self.store.get(record.key) or 0) + 1)

    from streams_on_spark import Stores
    builder = StreamsBuilder()
    builder.add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("per-key"), S,
                                                           Serdes.Long()))
    (builder.stream("input", Consumed.with_(S, S))
     .select_key(lambda k, v: v)
     .process(CountProcessor, "per-key"))
    topology = builder.build()
    # keys chosen to land on different partitions, all mapping to the same new key
    keys = ["a", "b", "c", "d", "e", "f", "g", "h"]
    partitions = {partition_for_key(k.encode(), 4) for k in keys}
    assert len(partitions) > 1
    with driver_with(topology, input=4) as driver:
        inp = driver.create_input_topic("input", S, S)
        for k in keys:
            inp.pipe_input(k, "same")
        holders = [p for p in range(4) if driver.get_key_value_store("per-key", p).get("same")]
        assert sorted(holders) == sorted(partitions)
        assert sum(driver.get_key_value_store("per-key", p).get("same") or 0 for p in range(4)) == len(keys)


# --- 3. backward compatibility ---------------------------------------------------------------------------------
@pytest.mark.parametrize("make", ["constructor", "builder-undeclared", "builder-declared-1"])
def test_single_partition_mode_is_kafkas_driver(make):
    topology = count_by_value_topology()
    config = {"application.id": "single"}
    if make == "constructor":
        driver = TopologyTestDriver(topology, config)
    elif make == "builder-undeclared":
        driver = TopologyTestDriverBuilder(topology).with_config(config).build()
    else:
        driver = (TopologyTestDriverBuilder(topology).with_config(config).declare_topic("input", 1)
                  .declare_topic("output", 1).build())
    with driver:
        assert not driver.multi_partition
        inp = driver.create_input_topic("input", S, S)
        out = driver.create_output_topic("output", S, Serdes.Long())
        inp.pipe_key_value_list([KeyValue("u1", "red"), KeyValue("u2", "red"), KeyValue("u3", "blue")])
        records = out.read_records_to_list()
        assert [(r.key, r.value, r.partition) for r in records] == [("red", 1, 0), ("red", 2, 0), ("blue", 1, 0)]
        store = driver.get_key_value_store("counts")   # no partition needed
        assert store.get("red") == 2 and store.get("blue") == 1
        assert driver.get_key_value_store("counts", 0).get("red") == 2


class _StreamTimeTicks(Processor):
    """Records its task id, and the stream time at each STREAM_TIME punctuation (every 10 ms)."""

    seen: list = []

    def init(self, context):
        super().init(context)
        context.schedule(10, PunctuationType.STREAM_TIME, lambda now: _StreamTimeTicks.seen.append(("tick", now)))

    def process(self, record):
        _StreamTimeTicks.seen.append(("task", str(self.context.task_id)))


def two_subtopologies() -> Topology:
    """input-a -> punctuating processor; input-b -> repartition -> sink: two subtopologies."""
    builder = StreamsBuilder()
    builder.stream("input-a", Consumed.with_(S, S)).process(_StreamTimeTicks)
    builder.stream("input-b", Consumed.with_(S, S)).repartition().to("output", Produced.with_(S, S))
    return builder.build()


def test_single_partition_mode_runs_every_subtopology_in_task_0_0_with_one_stream_time():
    """Kafka's driver: one task 0_0 for all subtopologies, so stream time (and its punctuation) is shared."""
    _StreamTimeTicks.seen = []
    with TopologyTestDriver(two_subtopologies(), {"application.id": "one-task"}) as driver:
        assert [str(t) for t in driver.task_ids()] == ["0_0"]
        driver.create_input_topic("input-a", S, S).pipe_input("k", "v", 5)
        b = driver.create_input_topic("input-b", S, S)
        b.pipe_input("k", "v", 100)   # another subtopology's record moves the shared stream time
        b.pipe_input("k", "v", 200)
        assert driver.create_output_topic("output", S, S).read_values_to_list() == ["v", "v"]
    assert _StreamTimeTicks.seen == [("task", "0_0"), ("tick", 5), ("tick", 100), ("tick", 200)]


def test_multi_partition_mode_has_a_task_and_a_stream_time_per_subtopology_and_partition():
    _StreamTimeTicks.seen = []
    with driver_with(two_subtopologies(), **{"input-a": 2, "input-b": 2}) as driver:
        assert [str(t) for t in driver.task_ids()] == ["0_0", "0_1", "1_0", "1_1", "2_0", "2_1"]
        driver.create_input_topic("input-a", S, S).pipe_input(TestRecord("k", "v", 5, partition=1))
        driver.create_input_topic("input-b", S, S).pipe_input(TestRecord("k", "v", 100, partition=1))
    assert _StreamTimeTicks.seen == [("task", "0_1"), ("tick", 5)]


# --- contract details ----------------------------------------------------------------------------------------------
def test_no_argument_store_accessors_raise_in_multi_partition_mode():
    with driver_with(count_by_value_topology(), input=2) as driver:
        for accessor in (driver.get_key_value_store, driver.get_timestamped_key_value_store):
            with pytest.raises(IllegalStateError, match="partition"):
                accessor("counts")
        with pytest.raises(IllegalStateError):
            driver.get_all_state_stores()
        assert driver.get_key_value_store("counts", 1) is not None


def test_store_partition_out_of_range_names_the_valid_range():
    with driver_with(count_by_value_topology(), input=2) as driver:
        with pytest.raises(ValueError, match=r"\[0, 2\)"):
            driver.get_key_value_store("counts", 2)


def test_global_stores_are_shared_and_need_no_partition():
    builder = StreamsBuilder()
    builder.global_table("rates", Consumed.with_(S, S), Materialized.as_("rates-store"))
    builder.stream("input", Consumed.with_(S, S)).to("output", Produced.with_(S, S))
    with driver_with(builder.build(), input=3, rates=3) as driver:
        rates = driver.create_input_topic("rates", S, S)
        for currency in ["EUR", "USD", "GBP", "JPY"]:
            rates.pipe_input(currency, f"rate-{currency}")
        store = driver.get_key_value_store("rates-store")
        assert {kv.key for kv in store.all()} == {"EUR", "USD", "GBP", "JPY"}
        assert driver.get_key_value_store("rates-store", 2) is store


def test_piping_to_an_undeclared_input_topic_in_multi_partition_mode_raises():
    builder = StreamsBuilder()
    builder.stream(["a", "b"], Consumed.with_(S, S)).to("output", Produced.with_(S, S))
    with driver_with(builder.build(), a=2) as driver:
        with pytest.raises(ValueError, match="declare_topic"):
            driver.create_input_topic("b", S, S).pipe_input("k", "v")


def test_unknown_topic_is_a_value_error():
    with TopologyTestDriver(passthrough_topology(), {"application.id": "x"}) as driver:
        with pytest.raises(ValueError, match="Unknown topic: nope"):
            driver.create_input_topic("nope", S, S).pipe_input("k", "v")


@pytest.mark.parametrize("partitions", [0, -1, "2", 1.5, True])
def test_declare_topic_rejects_bad_partition_counts(partitions):
    with pytest.raises(ValueError, match="partitions"):
        TopologyTestDriverBuilder(passthrough_topology()).declare_topic("input", partitions)


def test_declare_topic_rejects_redeclaration_with_another_count():
    builder = TopologyTestDriverBuilder(passthrough_topology()).declare_topic("input", 2).declare_topic("input", 2)
    with pytest.raises(ValueError, match="already declared with 2"):
        builder.declare_topic("input", 3)


def test_output_records_carry_their_real_partition():
    with driver_with(passthrough_topology(), input=4, output=4) as driver:
        inp = driver.create_input_topic("input", S, S)
        out = driver.create_output_topic("output", S, S)
        for key in ["alice", "bob", "user1", "key"]:
            inp.pipe_input(key, "v")
        got = {r.key: r.partition for r in out.read_records_to_list()}
        assert got == {k: partition_for_key(k.encode(), 4) for k in got}
        assert TestRecord("bob", "v", 5, partition=2).equals_ignore_partition(TestRecord("bob", "v", 5, partition=0))
        assert TestRecord("bob", "v", 5, partition=2) != TestRecord("bob", "v", 5, partition=0)


def test_fan_out_drains_lowest_stream_time_first_then_task_id_order():
    """After a fan-out every downstream task has unknown stream time: (subtopology, partition) order wins."""
    order: list[tuple[int, int, str]] = []

    class Recorder(Processor):
        def process(self, record: Record) -> None:
            task = self.context.task_id
            order.append((task.subtopology, task.partition, record.key))

    builder = StreamsBuilder()
    (builder.stream("input", Consumed.with_(S, S))
     .flat_map(lambda k, v: [KeyValue(w, w) for w in v.split()])
     .repartition(Repartitioned.with_(S, S))
     .process(Recorder))
    words = "alice bob user1 key a b c"
    with driver_with(builder.build(), input=4) as driver:
        driver.create_input_topic("input", S, S).pipe_input("k", words, 10)
    # every downstream task starts at unknown stream time and all records share ts=10, so each scheduling step
    # picks the lowest (subtopology, partition) among tasks that still have records: a round-robin in id order
    queues: dict[int, list[str]] = {}
    for word in words.split():
        queues.setdefault(partition_for_key(word.encode(), 4), []).append(word)
    expected = []
    while any(queues.values()):
        for p in sorted(queues):
            if queues[p]:
                expected.append((1, p, queues[p].pop(0)))
    assert order == expected


def test_each_task_has_its_own_stream_time():
    times: dict[int, list[int]] = {}

    class Recorder(Processor):
        def process(self, record: Record) -> None:
            times.setdefault(self.context.task_id.partition, []).append(self.context.current_stream_time_ms())

    topology = Topology().add_source("src", "input", key_serde=S, value_serde=S).add_processor("rec", Recorder, "src")
    with driver_with(topology, input=2) as driver:
        inp = driver.create_input_topic("input", S, S)
        inp.pipe_input(TestRecord("k", "v", 500, partition=0))
        inp.pipe_input(TestRecord("k", "v", 100, partition=1))
        inp.pipe_input(TestRecord("k", "v", 50, partition=0))
    assert times == {0: [500, 500], 1: [100]}

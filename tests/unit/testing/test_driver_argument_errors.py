"""The test driver's bad arguments: a ValueError at the call naming the argument; store errors name the accessor."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    IllegalStateError,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TestRecord,
    Topology,
    TopologyTestDriver,
    TopologyTestDriverBuilder,
)

S = Serdes.String()


def _topology() -> Topology:
    """``in`` -> ``out``, plus a count per key in the store ``counts``."""
    builder = StreamsBuilder()
    stream = builder.stream("in", Consumed.with_(S, S))
    stream.to("out", Produced.with_(S, S))
    stream.group_by_key(Grouped.with_(S, S)).count(Materialized.as_("counts"))
    return builder.build()


@pytest.fixture
def driver():
    with TopologyTestDriver(_topology(), {"application.id": "args"}) as d:
        yield d


@pytest.fixture
def multi_partition_driver():
    with _builder().with_config({"application.id": "args"}).declare_topic("in", 2) \
            .build() as d:
        yield d


def _builder() -> TopologyTestDriverBuilder:
    return TopologyTestDriverBuilder(_topology())


BUILDER = [
    (lambda: TopologyTestDriverBuilder(None), "topology must be a Topology (StreamsBuilder.build()), got None"),
    (lambda: TopologyTestDriverBuilder(StreamsBuilder()), "topology must be a Topology (StreamsBuilder.build())"),
    (lambda: _builder().with_config(None), "config can't be null"),
    (lambda: _builder().with_config("a=b"), "config must be a Mapping, got 'a=b'"),
    (lambda: _builder().with_initial_wall_clock_time("x"),
     "initial wall clock time (ms) must be an int, got 'x'"),
    (lambda: _builder().declare_topic(None, 2), "topic name can't be null"),
    (lambda: _builder().declare_topic("in", 0), "partitions of topic in must be an int >= 1"),
    (lambda: _builder().declare_topic("in", True), "partitions of topic in must be an int,"),
    (lambda: _builder().with_engine("flink"), "engine must be 'local' or 'spark'"),
    (lambda: TopologyTestDriver(_topology(), "a=b"), "config must be a Mapping, got 'a=b'"),
    (lambda: TopologyTestDriver(_topology(), None, "now"), "initial_wall_clock_time_ms must be an int, got 'now'"),
    (lambda: TopologyTestDriver(_topology(), declared_topics=["in"]), "declared_topics must be a Mapping"),
    (lambda: TopologyTestDriver(_topology(), declared_topics={"in": -1}), "partitions of topic in must be an int >= 1"),
    (lambda: TopologyTestDriver(_topology(), engine=None), "engine must be 'local' or 'spark', got None"),
    (lambda: TestRecord("k", "v", "5"), "timestamp (ms) must be an int, got '5'"),
    (lambda: TestRecord("k", "v", partition=True), "partition must be an int, got True"),
    (lambda: TestRecord("k", "v", partition=-1), "partition must be an int >= 0, got -1"),
]


@pytest.mark.parametrize("call, fragment", BUILDER, ids=[fragment for _, fragment in BUILDER])
def test_builder_and_constructor_arguments(call, fragment):
    with pytest.raises(ValueError) as excinfo:
        call()
    assert fragment in str(excinfo.value)


DRIVER = [
    (lambda d: d.create_input_topic(None, S, S), "topic name can't be null"),
    (lambda d: d.create_input_topic("in", None, S), "key_serde can't be null"),
    (lambda d: d.create_input_topic("in", S, S, start_timestamp="0"), "start_timestamp must be an int, got '0'"),
    (lambda d: d.create_input_topic("in", S, S, auto_advance=-1), "auto_advance must be an int >= 0, got -1"),
    (lambda d: d.create_output_topic(5, S, S), "topic name must be a non-empty str, got 5"),
    (lambda d: d.create_output_topic("out", S, "String"), "value_serde must be a Serde (e.g. Serdes.String())"),
    (lambda d: d.advance_wall_clock_time(None), "advance can't be null"),
    (lambda d: d.advance_wall_clock_time(-5), "advance must be an int >= 0, got -5"),
    (lambda d: d.get_key_value_store(None), "store name can't be null"),
    (lambda d: d.get_window_store("counts", "0"), "partition must be an int, got '0'"),
    (lambda d: d.store_partitions(3), "store name must be a non-empty str, got 3"),
    (lambda d: d.create_input_topic("in", S, S).pipe_input(), "pipe_input() needs a TestRecord, a value, or a key"),
    (lambda d: d.create_input_topic("in", S, S).advance_time(None), "advance can't be null"),
    (lambda d: d.create_input_topic("in", S, S).pipe_record_list(None), "records can't be null"),
    (lambda d: d.create_input_topic("in", S, S).pipe_record_list([TestRecord("k", "v"), ("k", "v")]),
     "each item of pipe_record_list must be a TestRecord, got ('k', 'v')"),
    (lambda d: d.create_input_topic("in", S, S).pipe_key_value_list(5), "pairs must be an Iterable, got 5"),
    (lambda d: d.create_input_topic("in", S, S).pipe_key_value_list([("k", "v"), ("k",)]),
     "each item of pipe_key_value_list must be a KeyValue or a (key, value) pair, got ('k',)"),
    (lambda d: d.create_input_topic("in", S, S).pipe_key_value_list([("k", "v")], start_timestamp=-1),
     "start_timestamp must be an int >= 0, got -1"),
    (lambda d: d.create_input_topic("in", S, S).pipe_value_list(["v"], 0, advance_ms="1"),
     "advance_ms must be an int, got '1'"),
    (lambda d: d.create_input_topic("in", S, S).pipe_value_list(None), "values can't be null"),
]


@pytest.mark.parametrize("call, fragment", DRIVER, ids=[fragment for _, fragment in DRIVER])
def test_driver_and_topic_arguments(driver, call, fragment):
    with pytest.raises(ValueError) as excinfo:
        call(driver)
    assert fragment in str(excinfo.value)
    assert driver.create_output_topic("out", S, S).is_empty()  # a rejected list pipes none of its records


def test_pipe_input_needs_a_record_or_a_value(driver):
    inp = driver.create_input_topic("in", S, S)
    with pytest.raises(ValueError, match="topic in"):
        inp.pipe_input()
    with pytest.raises(ValueError, match="from the TestRecord"):
        inp.pipe_input(TestRecord("k", "v"), timestamp=5)
    inp.pipe_input("v")  # one argument is a value with a null key, as Kafka's pipeInput(V)
    inp.pipe_input(value="w")
    assert [(r.key, r.value) for r in driver.create_output_topic("out", S, S).read_records_to_list()] == [
        (None, "v"), (None, "w")]


@pytest.mark.parametrize("accessor", ["get_state_store", "get_key_value_store", "get_timestamped_key_value_store",
                                      "get_window_store", "get_timestamped_window_store", "get_session_store",
                                      "get_versioned_key_value_store"])
def test_partition_needed_error_names_the_accessor_called(multi_partition_driver, accessor):
    with pytest.raises(IllegalStateError) as excinfo:
        getattr(multi_partition_driver, accessor)("counts")
    assert f"e.g. {accessor}('counts', partition=0)" in str(excinfo.value)


def test_get_all_state_stores_needs_the_partition_in_multi_partition_mode(multi_partition_driver):
    with pytest.raises(IllegalStateError, match=r"get_all_state_stores\(partition=0\)"):
        multi_partition_driver.get_all_state_stores()
    assert set(multi_partition_driver.get_all_state_stores(1)) == {"counts"}


def test_get_state_store_refuses_built_in_stores_with_kafkas_texts_naming_the_python_accessor():
    """Kafka's ``throwIfBuiltInStore`` texts, most specific kind first; each typed accessor answers None for a store of
    another kind, as Kafka's."""
    from streams_on_spark import SessionWindows, Stores, TimeWindows
    builder = StreamsBuilder()
    grouped = builder.stream("in", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
    grouped.count(Materialized.as_("counts"))
    grouped.windowed_by(TimeWindows.of_size_with_no_grace(10)).count(Materialized.as_("windows"))
    grouped.windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(10)).count(Materialized.as_("sessions"))
    builder.table("t", Consumed.with_(S, S), Materialized.as_(Stores.persistent_versioned_key_value_store("v", 10)))
    with TopologyTestDriver(builder.build(), {"application.id": "kinds"}) as driver:
        for store, kind, accessor in (("counts", "timestamped key-value store", "get_timestamped_key_value_store"),
                                      ("windows", "timestamped window store", "get_timestamped_window_store"),
                                      ("sessions", "session store", "get_session_store"),
                                      ("v", "versioned key-value store", "get_versioned_key_value_store")):
            with pytest.raises(ValueError) as excinfo:
                driver.get_state_store(store)
            assert str(excinfo.value) == f"Store {store} is a {kind} and should be accessed via `{accessor}()`"
            assert getattr(driver, accessor)(store) is not None
        assert driver.get_versioned_key_value_store("counts") is None
        assert driver.get_key_value_store("v") is None and driver.get_timestamped_key_value_store("v") is None

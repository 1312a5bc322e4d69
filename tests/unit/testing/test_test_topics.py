"""TestInputTopic / TestOutputTopic: Kafka's timestamp rules and read semantics."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    IllegalStateError,
    KeyValue,
    Produced,
    Serdes,
    StreamsBuilder,
    TestRecord,
    TopologyTestDriver,
)

S = Serdes.String()


@pytest.fixture
def driver():
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).to("out", Produced.with_(S, S))
    with TopologyTestDriver(builder.build(), {"application.id": "topics"}) as d:
        yield d


def test_topic_clock_auto_advances_and_explicit_timestamps_do_not_move_it(driver):
    inp = driver.create_input_topic("in", S, S, start_timestamp=1_000, auto_advance=5)
    out = driver.create_output_topic("out", S, S)
    inp.pipe_input("a", "1")           # 1000
    inp.pipe_input("a", "2", 50)       # explicit
    inp.pipe_input("a", "3")           # 1005
    inp.advance_time(100)
    inp.pipe_input("a", "4")           # 1110
    assert [r.timestamp for r in out.read_records_to_list()] == [1_000, 50, 1_005, 1_110]


def test_value_only_and_list_forms(driver):
    inp = driver.create_input_topic("in", S, S, start_timestamp=0)
    out = driver.create_output_topic("out", S, S)
    inp.pipe_input("just-a-value")
    inp.pipe_value_list(["x", "y"], start_timestamp=10, advance_ms=5)
    inp.pipe_key_value_list([KeyValue("k", "v"), ("k2", "v2")])
    inp.pipe_record_list([TestRecord("r", "rv", 99, headers={"h": b"1"})])
    records = out.read_records_to_list()
    assert [(r.key, r.value) for r in records] == [(None, "just-a-value"), (None, "x"), (None, "y"), ("k", "v"),
                                                   ("k2", "v2"), ("r", "rv")]
    assert [r.timestamp for r in records[1:3]] == [10, 15]
    assert records[-1].headers == (("h", b"1"),)


def test_reads_consume_and_report_empty_or_uninitialized(driver):
    out = driver.create_output_topic("out", S, S)
    with pytest.raises(LookupError, match="Uninitialized topic: out"):
        out.read_record()
    assert out.is_empty() and out.get_queue_size() == 0 and out.read_records_to_list() == []
    driver.create_input_topic("in", S, S).pipe_input("a", "1")
    assert out.get_queue_size() == 1
    assert out.read_key_value() == KeyValue("a", "1")
    with pytest.raises(LookupError, match="Empty topic: out"):
        out.read_value()


def test_read_key_values_to_map_keeps_the_last_value_and_rejects_null_keys(driver):
    inp = driver.create_input_topic("in", S, S)
    out = driver.create_output_topic("out", S, S)
    inp.pipe_key_value_list([("a", "1"), ("b", "2"), ("a", "3"), ("b", None)])
    assert out.read_key_values_to_map() == {"a": "3", "b": None}
    inp.pipe_input("no key value")
    with pytest.raises(IllegalStateError, match="Null keys"):
        out.read_key_values_to_map()


def test_bad_arguments_are_value_errors(driver):
    with pytest.raises(ValueError, match="auto_advance"):
        driver.create_input_topic("in", S, S, auto_advance=-1)
    with pytest.raises(ValueError, match="key_serde"):
        driver.create_input_topic("in", "String", S)
    with pytest.raises(ValueError, match="advance"):
        driver.advance_wall_clock_time(-1)
    with pytest.raises(ValueError, match="Invalid timestamp"):
        TestRecord("k", "v", -1)

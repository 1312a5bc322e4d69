"""Errors name what went wrong (task, processor, topic, partition, offset) and the handlers behave as Kafka's."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    IllegalStateError,
    Produced,
    Serdes,
    StreamsBuilder,
    StreamsException,
    Topology,
    TopologyTestDriver,
    TopologyTestDriverBuilder,
)

S, I = Serdes.String(), Serdes.Integer()


def failing_topology():
    builder = StreamsBuilder()
    (builder.stream("in", Consumed.with_(S, S))
     .map_values(lambda v: 1 // int(v))
     .to("out", Produced.with_(S, I)))
    return builder.build()


def test_processing_error_names_task_processor_topic_partition_offset():
    with TopologyTestDriverBuilder(failing_topology()).with_config({"application.id": "e"}).declare_topic("in", 2).build() as d:
        inp = d.create_input_topic("in", S, S, start_timestamp=0)
        inp.pipe_input("k", "1")
        with pytest.raises(StreamsException) as err:
            inp.pipe_input("k", "0")
    message = str(err.value)
    assert "Exception caught in process. taskId=0_" in message
    assert "processor=KSTREAM-MAPVALUES-0000000001" in message
    assert "topic=in" in message and "offset=1" in message
    assert "ZeroDivisionError" in message
    assert isinstance(err.value.__cause__, ZeroDivisionError)


def test_log_and_continue_drops_the_failing_record_only():
    config = {"application.id": "e", "processing.exception.handler": "log-and-continue"}
    with TopologyTestDriver(failing_topology(), config) as d:
        inp = d.create_input_topic("in", S, S, start_timestamp=0)
        for v in ["1", "0", "1"]:
            inp.pipe_input("k", v)
        assert d.create_output_topic("out", S, I).read_values_to_list() == [1, 1]
        assert d.metrics()["dropped-records-total"] == 1


def test_deserialization_error_names_the_record_and_continue_skips_it():
    with TopologyTestDriver(_rebuild(), {"application.id": "e"}) as d:
        with pytest.raises(StreamsException, match=r"topic=in, partition=0, offset=0"):
            d.create_input_topic("in", S, S).pipe_input("k", "not-four-bytes")
    config = {"application.id": "e", "deserialization.exception.handler": "log-and-continue"}
    with TopologyTestDriver(_rebuild(), config) as d:
        raw = d.create_input_topic("in", S, S, start_timestamp=0)
        raw.pipe_input("k", "bad")
        d.create_input_topic("in", S, I, start_timestamp=0).pipe_input("k", 7)
        assert d.create_output_topic("out", S, I).read_values_to_list() == [7]
        assert d.metrics()["dropped-records-total"] == 1


def _rebuild():
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, I)).to("out", Produced.with_(S, I))
    return builder.build()


def test_missing_serdes_fail_when_the_driver_is_built_naming_the_node():
    builder = StreamsBuilder()
    builder.stream("in").to("out")
    with pytest.raises(StreamsException) as raised:
        TopologyTestDriver(builder.build(), {"application.id": "e"})
    # Kafka's text (its SourceNode's init, the first node without one); the cause names what to set
    assert str(raised.value) == "Failed to initialize key serdes for source node KSTREAM-SOURCE-0000000000"
    assert str(raised.value.__cause__) == ("Source KSTREAM-SOURCE-0000000000 reading topic in has no key serde: set "
                                           "one with Consumed, or set 'default.key.serde' in the config")
    topology = Topology().add_source("s", "in", key_serde=S, value_serde=S).add_sink("k", "out", "s")
    with pytest.raises(StreamsException, match="^Failed to initialize key serdes for sink node k$") as raised:
        TopologyTestDriver(topology, {"application.id": "e"})
    assert "Sink k writing to topic out has no key serde" in str(raised.value.__cause__)


def test_serialization_error_at_a_sink_names_sink_and_topic():
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).to("out", Produced.with_(S, I))
    with TopologyTestDriver(builder.build(), {"application.id": "e"}) as d:
        with pytest.raises(StreamsException, match="KSTREAM-SINK-0000000001.*out"):
            d.create_input_topic("in", S, S).pipe_input("k", "a string, not an int")


def test_closed_driver_rejects_input_and_bad_config_is_named():
    driver = TopologyTestDriver(failing_topology(), {"application.id": "e"})
    driver.close()
    with pytest.raises(IllegalStateError, match="closed"):
        driver.create_input_topic("in", S, S).pipe_input("k", "1")
    with pytest.raises(ValueError, match="processing.exception.handler"):
        TopologyTestDriver(failing_topology(), {"processing.exception.handler": "ignore"})
    with pytest.raises(ValueError, match="default.key.serde"):
        TopologyTestDriver(failing_topology(), {"default.key.serde": "String"})


def test_negative_timestamps_are_rejected_at_the_edge():
    with TopologyTestDriver(failing_topology(), {"application.id": "e"}) as d:
        with pytest.raises(ValueError, match="timestamp"):
            d.create_input_topic("in", S, S).pipe_input("k", "1", -5)

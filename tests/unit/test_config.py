"""Application configuration read as Kafka Streams reads it: processing.guarantee."""
from __future__ import annotations

import pytest

from streams_on_spark import Serdes, StreamsBuilder, TopologyTestDriver
from streams_on_spark.config import TaskConfig

S = Serdes.String()


def test_the_processing_guarantee_is_at_least_once_unless_exactly_once_v2_is_asked_for():
    assert TaskConfig.from_config({"application.id": "a"}).processing_guarantee == "at_least_once"
    assert not TaskConfig.from_config({"application.id": "a"}).exactly_once
    config = TaskConfig.from_config({"application.id": "a", "processing.guarantee": "exactly_once_v2"})
    assert config.exactly_once and config.processing_guarantee == "exactly_once_v2"


@pytest.mark.parametrize("value", ["exactly_once", "exactly_once_beta", "EXACTLY_ONCE_V2", "at-least-once", None])
def test_another_processing_guarantee_fails_with_kafkas_message(value):
    # Kafka 4.3.1's StreamsConfig: ConfigException with exactly this text (exactly_once and exactly_once_beta were
    # removed in Kafka 4.0)
    with pytest.raises(ValueError) as info:
        TaskConfig.from_config({"application.id": "a", "processing.guarantee": value})
    assert str(info.value) == (f"Invalid value {value} for configuration processing.guarantee: String must be one "
                               "of: at_least_once, exactly_once_v2")


def test_the_test_driver_checks_the_guarantee_too():
    builder = StreamsBuilder()
    builder.stream("in").to("out")
    with pytest.raises(ValueError, match="processing.guarantee"):
        TopologyTestDriver(builder.build(), {"processing.guarantee": "exactly_once"})
    config = {"processing.guarantee": "exactly_once_v2", "default.key.serde": S, "default.value.serde": S}
    with TopologyTestDriver(builder.build(), config) as driver:
        driver.create_input_topic("in", S, S).pipe_input("k", "v")
        assert driver.create_output_topic("out", S, S).read_key_value().value == "v"

"""``KStream.to(TopicNameExtractor)``, ``Topology.add_sink`` with one, and stream partitioners (KIP-837): bad
arguments and bad answers are clear errors naming the sink; the record context of a punctuation; a dropped record is
never serialized (Kafka asks the partitioner first). Kafka's goldens (``dynamic-routing``, ``stream-partitioner``) and
tests/conformance/test_routing.py cover the results on both engines."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    Processor,
    Produced,
    PunctuationType,
    Record,
    RecordContext,
    Serdes,
    StreamPartitioner,
    StreamsBuilder,
    StreamsException,
    TopicNameExtractor,
    Topology,
    TopologyTestDriver,
)
from streams_on_spark.serde import Serde

S = Serdes.String()
CONFIG = {"application.id": "routing"}


class Router(TopicNameExtractor):
    def extract(self, key, value, record_context):
        return f"to-{value}"

    def __str__(self) -> str:
        return "Router"


def test_to_takes_a_topic_name_extractor_or_a_callable_and_nothing_else():
    stream = StreamsBuilder().stream("in")
    with pytest.raises(ValueError, match=r"topic must be a non-empty str, or a TopicNameExtractor \(a callable"):
        stream.to(42)
    with pytest.raises(ValueError, match="topic can't be null"):
        stream.to(None)
    with pytest.raises(ValueError, match="produced must be"):
        stream.to(Router(), "not produced")


def test_add_sink_with_an_extractor_describes_it_as_kafka_does():
    topology = (Topology().add_source("src", "in", key_serde=S, value_serde=S)
                .add_sink("sink", Router(), "src", key_serde=S, value_serde=S))
    assert "    Sink: sink (extractor class: Router)\n      <-- src\n" in str(topology.describe())
    with pytest.raises(ValueError, match="topic must be a non-empty str, or a TopicNameExtractor"):
        Topology().add_source("src", "in").add_sink("sink", 3.5, "src")
    with TopologyTestDriver(topology, CONFIG) as driver:
        driver.create_input_topic("in", S, S).pipe_input("k", "x")
        assert [(r.key, r.value) for r in driver.create_output_topic("to-x", S, S).read_records_to_list()] == [
            ("k", "x")]


def test_an_extractor_answering_no_topic_is_an_error_naming_the_sink():
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).to(lambda k, v, context: None, Produced.with_(S, S).with_name("nowhere"))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        with pytest.raises(StreamsException, match="topic name extractor of sink nowhere returned None"):
            driver.create_input_topic("in", S, S).pipe_input("k", "v")


@pytest.mark.parametrize("answer, message", [
    ("2", "returned '2' for topic out: expected None"),
    ({0, 7}, "returned partition 7 for topic out, which has 1 partitions"),
    (True, "returned True for topic out"),
])
def test_a_partitioners_bad_answer_is_an_error_naming_the_sink(answer, message):
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).to("out", Produced.with_(S, S).with_name("s").with_stream_partitioner(
        lambda topic, key, value, n: answer))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        with pytest.raises(StreamsException, match=f"Partitioner of sink s {message}"):
            driver.create_input_topic("in", S, S).pipe_input("k", "v")


def test_a_stream_partitioner_overrides_partition_or_partitions():
    class Single(StreamPartitioner):
        def partition(self, topic, key, value, num_partitions):
            return None if key == "d" else num_partitions - 1

    class Neither(StreamPartitioner):
        pass

    assert Single().partitions("t", "k", "v", 4) == {3}
    assert Single().partitions("t", "d", "v", 4) is None
    with pytest.raises(NotImplementedError, match="StreamPartitioner Neither must override partitions"):
        Neither()("t", "k", "v", 4)


class Unserializable(Serde):
    def serialize(self, topic, data):
        raise AssertionError("a dropped record must not be serialized")

    def deserialize(self, topic, data):
        return data


def test_a_dropped_record_is_never_serialized_and_counts_as_dropped():
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).to("out", Produced.with_(S, Unserializable()).with_stream_partitioner(
        lambda topic, key, value, n: set()))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("in", S, S).pipe_input("k", "v")
        assert driver.metrics()["dropped-records-total"] == 1
        assert "out" not in driver.produced_topic_names()


class Ticker(Processor):
    """Forwards one record from a wall-clock punctuation: no record in process there."""

    def init(self, context):
        self.context = context
        context.schedule(10, PunctuationType.WALL_CLOCK_TIME, self.tick)

    def tick(self, timestamp):
        self.context.forward(Record("tick", "t", timestamp, [("h", b"1")]))

    def process(self, record):
        self.context.forward(record)


def test_the_record_context_of_a_punctuation_has_no_topic_partition_or_offset():
    seen = []

    def extract(key, value, record_context):
        seen.append(record_context)
        return "out"

    topology = (Topology().add_source("src", "in", key_serde=S, value_serde=S).add_processor("tick", Ticker, "src")
                .add_sink("sink", extract, "tick", key_serde=S, value_serde=S))
    with TopologyTestDriver(topology, CONFIG, initial_wall_clock_time_ms=0) as driver:
        driver.create_input_topic("in", S, S).pipe_input("k", "v", 5)
        driver.advance_wall_clock_time(10)
    assert seen == [RecordContext("in", 0, 0, 5, ()), RecordContext(None, -1, -1, 10, (("h", b"1"),))]

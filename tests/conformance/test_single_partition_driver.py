"""Single-partition mode is Kafka's driver on both engines: one task ``0_0`` runs every subtopology, each record is
processed to the end — through the repartition topics — before the next, and a list piped at once gives the results
of piping its records one by one. On Spark that task is one query whose task feeds its repartition records back into
itself at the topic's offsets."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    KeyValue,
    Materialized,
    Processor,
    Produced,
    Record,
    Repartitioned,
    Serdes,
    StreamsBuilder,
    Topology,
)

S, L = Serdes.String(), Serdes.Long()
# pinned: one partition, both engines (the plugin adds none)
ENGINES = pytest.mark.parametrize("streams_engine, streams_partitions",
                                  [("local", 1), pytest.param("spark", 1, marks=pytest.mark.spark)])


def direct_and_repartitioned() -> Topology:
    """Each value goes to "out" at once, and upper-cased through a repartition topic."""
    builder = StreamsBuilder()
    words = builder.stream("in", Consumed.with_(S, S))
    words.to("out", Produced.with_(S, S))
    (words.select_key(lambda k, v: v).repartition(Repartitioned.as_("by-value").with_key_serde(S).with_value_serde(S))
     .map_values(str.upper).to("out", Produced.with_(S, S)))
    return builder.build({"application.id": "single-task"})


@ENGINES
def test_each_record_goes_through_the_repartition_topic_before_the_next(topology_driver):
    driver = topology_driver(direct_and_repartitioned(), {"application.id": "single-task"})
    words = driver.create_input_topic("in", S, S)
    out = driver.create_output_topic("out", S, S)
    words.pipe_value_list(["a", "b", "c"])
    assert [(r.key, r.value) for r in out.read_records_to_list()] == [
        (None, "a"), ("a", "A"), (None, "b"), ("b", "B"), (None, "c"), ("c", "C")]
    assert [str(t) for t in driver.task_ids()] == ["0_0"]


class Position(Processor):
    """Forwards where each record came from: topic, partition, offset."""

    def process(self, record: Record) -> None:
        metadata = self.context.record_metadata()
        self.context.forward(record.with_value(f"{metadata.topic}:{metadata.partition}:{metadata.offset}"))


@ENGINES
def test_records_fed_back_carry_their_offsets_in_the_repartition_topic(topology_driver):
    builder = StreamsBuilder()
    (builder.stream("in", Consumed.with_(S, S)).select_key(lambda k, v: v)
     .repartition(Repartitioned.as_("by-value").with_key_serde(S).with_value_serde(S))
     .process(Position).to("positions", Produced.with_(S, S)))
    driver = topology_driver(builder.build({"application.id": "positions"}), {"application.id": "positions"})
    words = driver.create_input_topic("in", S, S)
    out = driver.create_output_topic("positions", S, S)
    words.pipe_value_list(["a", "b"])
    words.pipe_value_list(["c"])
    words.pipe_input("d")
    assert [r.value for r in out.read_records_to_list()] == [
        f"positions-by-value-repartition:0:{offset}" for offset in range(4)]


@ENGINES
def test_a_count_after_a_repartition_sees_one_stream_time_and_its_store_is_task_0_0s(topology_driver):
    builder = StreamsBuilder()
    (builder.stream("in", Consumed.with_(S, S)).group_by(lambda k, v: v, Grouped.with_(S, S))
     .count(Materialized.as_("counts")).to_stream().to("counts", Produced.with_(S, L)))
    driver = topology_driver(builder.build({"application.id": "counts"}), {"application.id": "counts"})
    words = driver.create_input_topic("in", S, S)
    out = driver.create_output_topic("counts", S, L)
    words.pipe_key_value_list([KeyValue(None, w) for w in "x y x x".split()])
    assert out.read_key_values_to_list() == [KeyValue("x", 1), KeyValue("y", 1), KeyValue("x", 2), KeyValue("x", 3)]
    assert sorted((e.key, e.value) for e in driver.get_key_value_store("counts").all()) == [("x", 3), ("y", 1)]

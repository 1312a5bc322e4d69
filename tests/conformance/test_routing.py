"""Dynamic routing (``KStream.to(TopicNameExtractor)``) and stream partitioners (KIP-837) on both engines, with 1 and
4 partitions: what Kafka's goldens cannot show (its driver has one partition per topic) — multicast to several
partitions, the partitions a partitioner picks, the record context an extractor sees, and a topic the driver was never
told about (Kafka's driver accepts any topic, with one partition)."""
from __future__ import annotations

from streams_on_spark import (
    Consumed,
    Produced,
    RecordContext,
    Repartitioned,
    Serdes,
    StreamPartitioner,
    StreamsBuilder,
    TestRecord,
    TopicNameExtractor,
)

S = Serdes.String()


class Everywhere(StreamPartitioner):
    """Keys starting "all" go to every partition, "none" nowhere, "first" to partition 0, the rest by default."""

    def partitions(self, topic, key, value, num_partitions):
        if key.startswith("all"):
            return set(range(num_partitions))
        if key.startswith("none"):
            return set()
        if key.startswith("first"):
            return {0}
        return None


def last_partition(topic, key, value, num_partitions):
    """The single-partition form, as a plain callable."""
    return num_partitions - 1


def test_a_partitioner_multicasts_drops_and_picks_partitions(make_driver, partitions):
    builder = StreamsBuilder()
    source = builder.stream("in", Consumed.with_(S, S))
    source.to("out", Produced.with_(S, S).with_stream_partitioner(Everywhere()))
    source.to("last", Produced.with_(S, S).with_stream_partitioner(last_partition))
    driver = make_driver(builder.build(), "in", "out", "last")
    out = driver.create_output_topic("out", S, S)
    last = driver.create_output_topic("last", S, S)
    driver.create_input_topic("in", S, S).pipe_record_list(
        [TestRecord(k, "v-" + k, 10 + i) for i, k in enumerate(["all-1", "none-1", "first-1", "other"])])
    got = out.read_records_to_list()
    assert sorted(r.partition for r in got if r.key == "all-1") == list(range(partitions))
    assert [r.partition for r in got if r.key == "first-1"] == [0]
    assert [r.key for r in got].count("other") == 1
    assert "none-1" not in [r.key for r in got]
    assert {r.partition for r in last.read_records_to_list()} == {partitions - 1}
    assert driver.metrics()["dropped-records-total"] == 1


def test_a_repartition_with_a_partitioner_reads_each_copy(make_driver, partitions):
    builder = StreamsBuilder()
    (builder.stream("in", Consumed.with_(S, S))
     .repartition(Repartitioned.with_(S, S).with_name("spread").with_stream_partitioner(Everywhere()))
     .to("out", Produced.with_(S, S)))
    driver = make_driver(builder.build(), "in", "out")
    out = driver.create_output_topic("out", S, S)
    driver.create_input_topic("in", S, S).pipe_record_list(
        [TestRecord("all-1", "a", 10), TestRecord("none-1", "b", 11), TestRecord("x", "c", 12)])
    assert sorted(r.value for r in out.read_records_to_list()) == sorted(["a"] * partitions + ["c"])
    assert driver.metrics()["dropped-records-total"] == 1


class ByContext(TopicNameExtractor):
    """A topic naming where the record came from: its source topic, timestamp and "dest" header."""

    def extract(self, key, value, record_context: RecordContext) -> str:
        assert isinstance(record_context, RecordContext)
        assert record_context.partition >= 0 and record_context.offset >= 0
        dest = dict(record_context.headers).get("dest", b"none").decode()
        return f"{record_context.topic}-{record_context.timestamp}-{dest}"


def test_an_extractor_routes_by_record_context_to_topics_the_driver_was_not_told_about(make_driver, partitions):
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).to(ByContext(), Produced.with_(S, S))
    driver = make_driver(builder.build(), "in")
    driver.create_input_topic("in", S, S).pipe_record_list(
        [TestRecord("a", "1", 5, [("dest", b"x")]), TestRecord("b", "2", 6), TestRecord("a", "3", 5, [("dest", b"x")])])
    assert driver.produced_topic_names() >= {"in-5-x", "in-6-none"}
    five = driver.create_output_topic("in-5-x", S, S).read_records_to_list()
    assert [(r.key, r.value, r.partition) for r in five] == [("a", "1", 0), ("a", "3", 0)]   # one partition
    assert [r.value for r in driver.create_output_topic("in-6-none", S, S).read_records_to_list()] == ["2"]


def test_a_callable_extractor_with_a_partitioner(make_driver, partitions):
    builder = StreamsBuilder()
    (builder.stream("in", Consumed.with_(S, S))
     .to(lambda key, value, context: "evens" if int(value) % 2 == 0 else "odds",
         Produced.with_(S, S).with_stream_partitioner(Everywhere())))
    driver = make_driver(builder.build(), "in", "evens", "odds")
    driver.create_input_topic("in", S, S).pipe_record_list(
        [TestRecord("all", "2", 1), TestRecord("none", "3", 2), TestRecord("k", "5", 3)])
    assert sorted(r.partition for r in driver.create_output_topic("evens", S, S).read_records_to_list()) == list(
        range(partitions))
    assert [r.value for r in driver.create_output_topic("odds", S, S).read_records_to_list()] == ["5"]
    assert driver.metrics()["dropped-records-total"] == 1


def test_an_extractor_routing_to_a_source_topic_of_the_topology(make_driver, partitions):
    """A record routed to a topic the topology reads is read back (Kafka's driver pipes it back at once)."""
    builder = StreamsBuilder()
    (builder.stream("in", Consumed.with_(S, S))
     .to(lambda key, value, context: "retry" if value.startswith("retry:") else "done", Produced.with_(S, S)))
    builder.stream("retry", Consumed.with_(S, S)).map_values(lambda v: v[len("retry:"):]).to("done", Produced.with_(
        S, S))
    driver = make_driver(builder.build(), "in", "retry", "done")
    driver.create_input_topic("in", S, S).pipe_record_list(
        [TestRecord("a", "retry:1", 1), TestRecord("a", "2", 2), TestRecord("b", "retry:3", 3)])
    done = driver.create_output_topic("done", S, S).read_records_to_list()
    assert sorted((r.key, r.value) for r in done) == [("a", "1"), ("a", "2"), ("b", "3")]

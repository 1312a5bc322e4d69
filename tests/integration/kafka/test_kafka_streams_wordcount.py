"""The README word count on a real broker: KafkaStreams on Spark, input produced and output consumed with
kafka-python, compared per partition with the in-process driver; plus the errors users hit first."""
from __future__ import annotations

import time
import uuid

import pytest
from kafka import KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

from streams_on_spark import (
    Consumed,
    Grouped,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    StreamsException,
    TopologyException,
    TopologyTestDriverBuilder,
)
from streams_on_spark.partitioner import partition_for_key

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
S, L = Serdes.String(), Serdes.Long()
SENTENCES = [(f"doc-{i}", s) for i, s in enumerate([
    "the quick brown fox", "jumps over the lazy dog", "the dog barks", "a quick brown dog",
    "the end of the story", "over and over again", "héllo wörld the end"])]


def word_count(source: str, sink: str):
    builder = StreamsBuilder()
    (builder.stream(source, Consumed.with_(S, S))
     .flat_map_values(lambda sentence: sentence.split())
     .select_key(lambda _key, word: word)
     .group_by_key(Grouped.as_("by-word").with_key_serde(S).with_value_serde(S))
     .count(Materialized.as_("word-counts"))
     .to_stream().to(sink, Produced.with_(S, L)))
    return builder.build()


def create_topics(bootstrap: str, topics: dict[str, int]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    try:
        admin.create_topics([NewTopic(t, n, 1) for t, n in topics.items()])
    finally:
        admin.close()


def consume_all(read_topic, topic: str, partitions: int) -> dict[int, list[tuple]]:
    out: dict[int, list[tuple]] = {p: [] for p in range(partitions)}
    for r in read_topic(topic, partitions):
        out[r.partition].append((r.key, r.value, r.timestamp))
    return out


def per_key(outputs: dict[int, list[tuple]]) -> dict[tuple, tuple[list, int]]:
    """Per (partition, key): the count updates in order, and the last one's timestamp (a count's timestamp is the
    largest of the records counted so far, so only the last one is independent of their order)."""
    found: dict[tuple, tuple[list, list]] = {}
    for p, records in outputs.items():
        for key, value, timestamp in records:
            counts, stamps = found.setdefault((p, key), ([], []))
            counts.append(value)
            stamps.append(timestamp)
    return {k: (counts, stamps[-1]) for k, (counts, stamps) in found.items()}


def test_word_count_on_kafka_equals_the_in_process_driver(kafka_bootstrap, kafka_spark, read_topic, tmp_path):
    run = uuid.uuid4().hex[:8]
    source, sink, app = f"sentences-{run}", f"counts-{run}", f"wc-{run}"
    create_topics(kafka_bootstrap, {source: 4, sink: 4})
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
    for i, (key, sentence) in enumerate(SENTENCES):
        producer.send(source, key=key.encode(), value=sentence.encode(), timestamp_ms=1_000 + 10 * i)
    producer.flush()
    producer.close()

    # every update, as the driver (which commits per record) emits: an application's record cache would keep only
    # each batch's last count per word (tests/integration/spark/test_record_cache.py)
    config = {"application.id": app, "bootstrap.servers": kafka_bootstrap, "checkpoint.location": str(tmp_path),
              "statestore.cache.max.bytes": 0}
    with KafkaStreams(word_count(source, sink), config, kafka_spark) as streams:
        streams.start()
        streams.process_all_available()
    got = consume_all(read_topic, sink, 4)

    driver = (TopologyTestDriverBuilder(word_count(source, sink)).with_config({"application.id": app})
              .declare_topic(source, 4).declare_topic(sink, 4).build())
    with driver:
        driver.create_input_topic(source, S, S, start_timestamp=1_000, auto_advance=10).pipe_key_value_list(SENTENCES)
        expected: dict[int, list[tuple]] = {p: [] for p in range(4)}
        for r in driver.create_output_topic(sink, S, L).read_records_to_list():
            expected[r.partition].append((r.key.encode(), L.serialize(sink, r.value), r.timestamp))
    # Per key the same count updates on the same partition. Which occurrence got which count may differ: the upstream
    # tasks write to a repartition partition each when done, so their records interleave as they arrive (as in Kafka).
    assert per_key(got) == per_key(expected)
    assert sum(len(v) for v in got.values()) == sum(len(s.split()) for _, s in SENTENCES)

    repartition = f"{app}-by-word-repartition"
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        assert len(admin.describe_topics([repartition])[0]["partitions"]) == 4
        # as Kafka Streams creates it: never deleted by time (the records carry 1970 timestamps here)
        configs = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, repartition)])["topic"][repartition]
        assert {k: v["value"] for k, v in configs.items()} == {
            "cleanup.policy": "delete", "segment.bytes": "52428800", "retention.ms": "-1",
            "message.timestamp.type": "CreateTime"}
    finally:
        admin.close()
    for p, records in consume_all(read_topic, repartition, 4).items():
        assert records, f"partition {p} of {repartition} is empty"
        assert all(partition_for_key(key, 4) == p for key, _, _ in records)


def test_missing_source_topic_is_named_within_seconds(kafka_bootstrap, kafka_spark, tmp_path):
    config = {"application.id": f"missing-{uuid.uuid4().hex[:6]}", "bootstrap.servers": kafka_bootstrap,
              "checkpoint.location": str(tmp_path)}
    start = time.monotonic()
    with KafkaStreams(word_count("no-such-topic-anywhere", "out"), config, kafka_spark) as streams:
        with pytest.raises(TopologyException, match=r"source topics \['no-such-topic-anywhere'\] do not exist"):
            streams.start()
    assert time.monotonic() - start < 30


def test_replication_factor_is_used_for_the_topics_the_application_creates(kafka_bootstrap, kafka_spark, tmp_path):
    run = uuid.uuid4().hex[:8]
    create_topics(kafka_bootstrap, {f"sentences-{run}": 2})
    config = {"application.id": f"replicated-{run}", "bootstrap.servers": kafka_bootstrap,
              "checkpoint.location": str(tmp_path), "replication.factor": 2}
    with KafkaStreams(word_count(f"sentences-{run}", f"counts-{run}"), config, kafka_spark) as streams:
        # the test broker is one node: two replicas are refused, naming the repartition topic
        with pytest.raises(StreamsException, match=rf"cannot create topic replicated-{run}-by-word-repartition .*"
                                                    r"InvalidReplicationFactor"):
            streams.start()


def test_copartition_mismatch_is_reported_before_anything_runs(kafka_bootstrap, kafka_spark, tmp_path):
    run = uuid.uuid4().hex[:8]
    clicks, profiles = f"clicks-{run}", f"profiles-{run}"
    create_topics(kafka_bootstrap, {clicks: 4, profiles: 2})
    builder = StreamsBuilder()
    builder.stream(clicks, Consumed.with_(S, S)).join(builder.table(profiles, Consumed.with_(S, S)),
                                                      lambda c, p: c).to(f"joined-{run}", Produced.with_(S, S))
    config = {"application.id": f"copart-{run}", "bootstrap.servers": kafka_bootstrap,
              "checkpoint.location": str(tmp_path)}
    with KafkaStreams(builder.build(), config, kafka_spark) as streams:
        with pytest.raises(TopologyException, match=rf"Topics not co-partitioned: \[\{{{clicks}=4, {profiles}=2\}}\]"):
            streams.start()


def test_unreachable_broker_fails_fast_with_a_clear_error(kafka_spark, tmp_path):
    config = {"application.id": "unreachable", "bootstrap.servers": "127.0.0.1:1",
              "checkpoint.location": str(tmp_path), "default.api.timeout.ms": 3_000}
    start = time.monotonic()
    with KafkaStreams(word_count("a", "b"), config, kafka_spark) as streams:
        with pytest.raises(StreamsException, match="127.0.0.1:1"):
            streams.start()
    assert time.monotonic() - start < 30

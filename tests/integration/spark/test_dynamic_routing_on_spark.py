"""An application on Spark with ``KStream.to(TopicNameExtractor)`` over embedded topics: it writes the topics that
existed when it started, each record on the partition its key hashes to among that topic's partitions, and a record
routed to a topic that does not exist fails the application with an ``UnknownTopicException`` naming the topic (Kafka's
producer finds no metadata for it)."""
from __future__ import annotations

import pytest

from streams_on_spark import Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder, StreamsException
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.partitioner import partition_for_key
from streams_on_spark.records import ProducerRecord

pytestmark = pytest.mark.spark
S = Serdes.String()


def read(topics: EmbeddedTopics, topic: str) -> list:
    return [r for p, end in enumerate(topics.end_offsets(topic)) for r in topics.read(topic, p, 0, end)]


def routed():
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).to(lambda key, value, context: value, Produced.with_(S, S))
    return builder.build()


def test_an_extractor_writes_existing_topics_by_their_partition_counts_and_fails_on_a_missing_one(spark, tmp_path):
    topics = EmbeddedTopics(str(tmp_path / "topics"))
    topics.create_topic("in", 2)
    topics.create_topic("red", 3)
    topics.create_topic("blue", 1)
    topics.append([ProducerRecord("in", i % 2, 1_000 + i, f"k{i}".encode(), colour.encode(), ())
                   for i, colour in enumerate(["red", "blue", "red", "red"])])
    config = {"application.id": "routing-app", "embedded.topics.dir": topics.root,
              "checkpoint.location": str(tmp_path / "ck")}
    with KafkaStreams(routed(), config, spark) as streams:
        streams.start()
        streams.process_all_available()
        red = read(topics, "red")
        assert sorted((r.key, r.partition) for r in red) == sorted(
            (k, partition_for_key(k, 3)) for k in (b"k0", b"k2", b"k3"))
        assert [r.key for r in read(topics, "blue")] == [b"k1"]
        topics.append([ProducerRecord("in", 0, 2_000, b"k9", b"green", ())])
        with pytest.raises(StreamsException, match="UnknownTopicException: Topic green not present in metadata"):
            streams.process_all_available()

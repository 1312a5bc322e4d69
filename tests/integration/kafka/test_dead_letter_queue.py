"""The dead letter queue (KIP-1034) on Spark with the real broker: a corrupt record and a record a processor raises
on land in the DLQ topic with Kafka's ``__streams.errors.*`` headers and their original bytes and headers; the good
records around them are processed; ``dropped-records-total`` counts both."""
from __future__ import annotations

import uuid

import pytest

from streams_on_spark import Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder
from streams_on_spark.connectors.kafka import KafkaConnector
from streams_on_spark.records import ProducerRecord

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
S, L = Serdes.String(), Serdes.Long()


def checked(v: int) -> int:
    if v == 13:
        raise ValueError("unlucky number 13")
    return v * 2


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_bad_records_go_to_the_dead_letter_queue_and_the_rest_is_processed(kafka_bootstrap, kafka_spark, read_topic,
                                                                          tmp_path, guarantee):
    run = uuid.uuid4().hex[:8]
    source, sink, dlq = f"dlq-in-{run}", f"dlq-out-{run}", f"dlq-{run}"
    inputs = [(b"a", L.serialize(source, 1), ()), (b"b", b"corrupt", (("trace", b"b-1"),)),
              (b"c", L.serialize(source, 13), ()), (b"d", L.serialize(source, 4), ())]
    with KafkaConnector(kafka_bootstrap, timeout_ms=10_000) as admin:
        admin.create_topic(source, 1)
        admin.create_topic(sink, 1)
        admin.create_topic(dlq, 1)
        admin.append([ProducerRecord(source, 0, 1_000 + i, k, v, h) for i, (k, v, h) in enumerate(inputs)])
    builder = StreamsBuilder()
    builder.stream(source, Consumed.with_(S, L)).map_values(checked).to(sink, Produced.with_(S, L))
    config = {"application.id": f"dlq-{run}", "bootstrap.servers": kafka_bootstrap,
              "checkpoint.location": str(tmp_path / "checkpoints"), "processing.guarantee": guarantee,
              "deserialization.exception.handler": "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler",
              "processing.exception.handler":
                  "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler",
              "errors.dead.letter.queue.topic.name": dlq}
    with KafkaStreams(builder.build(), config, kafka_spark) as streams:
        streams.start()
        streams.process_all_available()
        dropped = sum(t.metrics.dropped for t in streams.read_tasks(0).values())

    committed = guarantee == "exactly_once_v2"
    assert [(r.key, L.deserialize(sink, r.value)) for r in read_topic(sink, 1, committed=committed)] == [
        (b"a", 2), (b"d", 8)]
    dead = read_topic(dlq, 1, committed=committed)
    assert [(r.key, r.value, r.timestamp) for r in dead] == [(b"b", b"corrupt", 1_001),
                                                             (b"c", L.serialize(source, 13), 1_002)]
    corrupt, raised = ({k: v for k, v in r.headers} for r in dead)
    assert [k for k, _ in dead[0].headers] == ["trace", "__streams.errors.exception", "__streams.errors.message",
                                              "__streams.errors.stacktrace", "__streams.errors.topic",
                                              "__streams.errors.partition", "__streams.errors.offset"]
    assert corrupt["trace"] == b"b-1"
    assert corrupt["__streams.errors.exception"] == b"streams_on_spark.errors.SerializationException"
    assert corrupt["__streams.errors.message"].startswith(b"Size of data received by LongDeserializer is not 8")
    assert (corrupt["__streams.errors.topic"], corrupt["__streams.errors.partition"],
            corrupt["__streams.errors.offset"]) == (source.encode(), b"0", b"1")
    assert raised["__streams.errors.exception"] == b"ValueError"
    assert raised["__streams.errors.message"] == b"unlucky number 13"
    assert b"in checked" in raised["__streams.errors.stacktrace"]
    assert raised["__streams.errors.offset"] == b"2"
    assert dropped == 2

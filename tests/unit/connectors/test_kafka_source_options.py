"""What of an application's config reaches Spark's Kafka source: the consumer's read sizes by their plain names and
under Kafka Streams' ``consumer.``/``main.consumer.`` prefixes (``main.consumer.`` first), over the library's
defaults for the source; the prefixed ones reach no other client. No broker needed."""
from __future__ import annotations

from streams_on_spark.connectors.kafka import SOURCE_CONSUMER_DEFAULTS, KafkaConnector
from streams_on_spark.kafka_streams import client_config


def test_an_applications_consumer_settings_reach_the_kafka_source_and_only_it():
    config = {"application.id": "app", "max.poll.records": 7, "fetch.min.bytes": 1024,
              "consumer.fetch.max.wait.ms": 3, "main.consumer.max.poll.records": 9, "num.stream.threads": 2}
    connector = KafkaConnector("127.0.0.1:1", client_config(config))
    options = connector.reader_options(["t"])[1]
    assert options["kafka.max.poll.records"] == "9"
    assert options["kafka.fetch.max.wait.ms"] == "3"
    assert options["kafka.fetch.min.bytes"] == "1024"
    assert options["kafka.max.partition.fetch.bytes"] == SOURCE_CONSUMER_DEFAULTS["max.partition.fetch.bytes"]
    assert not any(k.startswith(("kafka.consumer.", "kafka.main.consumer.", "kafka.num.")) for k in options)
    assert connector.client_config == {"max.poll.records": 7, "fetch.min.bytes": 1024}   # producer and admin


def test_without_settings_the_source_reads_with_the_librarys_defaults():
    options = KafkaConnector("127.0.0.1:1", client_config({"application.id": "app"})).reader_options(["t"])[1]
    assert {k: options[f"kafka.{k}"] for k in SOURCE_CONSUMER_DEFAULTS} == SOURCE_CONSUMER_DEFAULTS

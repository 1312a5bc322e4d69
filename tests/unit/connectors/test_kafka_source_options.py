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


def test_admin_settings_reach_the_admin_client_and_only_it(caplog):
    config = {"application.id": "app", "client.id": "shared", "admin.client.id": "admin-only",
              "admin.request.timeout.ms": 1234, "admin.max.poll.records": 5}
    connector = KafkaConnector("127.0.0.1:1", client_config(config))
    settings = connector.admin_settings()
    assert settings["client_id"] == "admin-only" and settings["request_timeout_ms"] == 1234
    assert "admin.max.poll.records" in caplog.text and "admin client" in caplog.text   # said, not dropped
    assert connector.global_reader().python_config["client_id"] == "shared"
    assert not any(k.startswith("kafka.admin.") for k in connector.reader_options(["t"])[1])
    assert "admin.client.id" not in connector.client_config


def test_global_consumer_settings_reach_the_global_stores_consumer_over_the_consumer_prefix(caplog):
    config = {"application.id": "app", "consumer.client.id": "consumers", "consumer.metadata.max.age.ms": 100,
              "global.consumer.client.id": "global", "global.consumer.fetch.min.bytes": 9}
    connector = KafkaConnector("127.0.0.1:1", client_config(config))
    python_config = connector.global_reader().python_config
    assert python_config["client_id"] == "global" and python_config["metadata_max_age_ms"] == 100
    assert "global.consumer.fetch.min.bytes" in caplog.text and "global stores' consumer" in caplog.text
    assert "consumer.metadata.max.age.ms" not in caplog.text
    options = connector.reader_options(["t"])[1]
    assert options["kafka.client.id"] == "consumers" and "kafka.global.consumer.client.id" not in options
    assert connector.admin_settings()["client_id"] == "streams-on-spark-admin"

"""An application's producer settings, followed from ``KafkaStreams`` to the tasks' librdkafka producers: ProducerConfig's
own names and Kafka Streams' ``producer.`` prefix (over the plain name, as ``StreamsConfig.getProducerConfigs``
resolves them) reach the producers only; one that librdkafka cannot apply is a ``ConfigException`` naming the key
when the application is made. No broker needed: nothing here connects."""
from __future__ import annotations

import pytest

from streams_on_spark import Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder, TopologyTestDriver
from streams_on_spark.config import ConfigException
from streams_on_spark.connectors.kafka import MASK
from streams_on_spark.connectors.kafka_producer import PRODUCER_DEFAULTS, librdkafka_config

S = Serdes.String()
PASSWORD = "pr0ducer-Pa55"


def topology():
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).map_values(str.upper).to("out", Produced.with_(S, S))
    return builder.build()


def application(config):
    """The Kafka connector a ``KafkaStreams`` with ``config`` (and a broker address) starts with."""
    return KafkaStreams(topology(), {"application.id": "app", "bootstrap.servers": "127.0.0.1:1", **config})


def producer_of(config):
    """The librdkafka settings of the tasks' producers of that application, as an executor builds them."""
    spec = application(config)._make_connector().writer().spec
    return librdkafka_config(spec.bootstrap_servers, dict(spec.client_config), dict(spec.config_overrides))


def test_plain_producer_settings_reach_the_tasks_producers():
    out = producer_of({"linger.ms": 20, "batch.size": 65536, "compression.type": "zstd", "compression.zstd.level": 6,
                       "compression.gzip.level": 9, "acks": "1", "delivery.timeout.ms": 45000,
                       "max.request.size": 2_000_000, "buffer.memory": 64 << 20, "retries": 3,
                       "max.in.flight.requests.per.connection": 2})
    assert {k: out[k] for k in ("linger.ms", "batch.size", "compression.type", "compression.level", "acks",
                                "message.timeout.ms", "message.max.bytes", "queue.buffering.max.kbytes", "retries",
                                "max.in.flight.requests.per.connection", "enable.idempotence")} == {
        "linger.ms": "20", "batch.size": "65536", "compression.type": "zstd", "compression.level": "6",
        "acks": "1", "message.timeout.ms": "45000", "message.max.bytes": "2000000",
        "queue.buffering.max.kbytes": "65536", "retries": "3", "max.in.flight.requests.per.connection": "2",
        "enable.idempotence": "false"}   # acks=1: no idempotence, as the Java producer decides


def test_the_producer_prefix_wins_over_the_plain_name_and_reaches_the_producers_only():
    config = {"linger.ms": 20, "producer.linger.ms": 50, "request.timeout.ms": 20000,
              "producer.request.timeout.ms": 9000, "producer.batch.num.messages": 500,   # librdkafka's own name
              "producer.client.id": "writer", "max.poll.records": 7}
    out = producer_of(config)
    assert (out["linger.ms"], out["request.timeout.ms"], out["batch.num.messages"], out["client.id"]) == (
        "50", "9000", "500", "writer")
    connector = application(config)._make_connector()
    options = connector.reader_options(["in"])[1]   # Spark's Kafka source: the plain shared settings, no producer's
    assert options["kafka.request.timeout.ms"] == "20000" and options["kafka.max.poll.records"] == "7"
    assert not any(k.startswith(("kafka.producer.", "kafka.linger", "kafka.batch")) for k in options)
    assert connector.client_config == {"request.timeout.ms": 20000, "max.poll.records": 7}   # and the admin client's


def test_without_settings_the_producers_keep_the_librarys_defaults():
    out = producer_of({})
    assert "linger.ms" not in out and "acks" not in out   # KafkaBatchProducer puts PRODUCER_DEFAULTS under these
    assert PRODUCER_DEFAULTS["acks"] == "all" and PRODUCER_DEFAULTS["enable.idempotence"] == "true"


@pytest.mark.parametrize("key,value", [
    ("producer.partitioner.class", "com.example.MyPartitioner"),   # the task's record collector picks partitions
    ("partitioner.ignore.keys", True),
    ("interceptor.classes", "com.example.Audit"),
    ("max.block.ms", 1000),
    ("metadata.max.idle.ms", 1000),
    ("transactional.id", "mine"),
    ("producer.max.poll.records", 5),   # a consumer's setting, for the producers
    ("producer.no.such.setting", 1),
    ("main.producer.linger.ms", 5),   # Kafka Streams has no main.producer. prefix
])
def test_a_producer_setting_librdkafka_cannot_apply_is_refused_when_the_application_is_made(key, value):
    with pytest.raises(ConfigException, match=rf"for configuration {key}: "):
        application({key: value})


def test_the_refusal_masks_a_secret_value():
    with pytest.raises(ConfigException) as refused:
        application({"producer.ssl.keystore.password": PASSWORD})   # no keystore for it: JVM-only here
    assert PASSWORD not in str(refused.value) and MASK in str(refused.value)


@pytest.mark.parametrize("key,value", [("enable.idempotence", False), ("producer.acks", "1"), ("retries", 0),
                                       ("max.in.flight.requests.per.connection", 6)])
def test_exactly_once_refuses_what_its_transactional_producers_cannot_take(key, value):
    with pytest.raises(ConfigException, match=rf"for configuration {key}: "):
        application({"processing.guarantee": "exactly_once_v2", key: value})
    application({key: value})   # at least once takes them


@pytest.mark.parametrize("key,value", [("acks", "1"), ("producer.retries", 0),
                                       ("max.in.flight.requests.per.connection", 6)])
def test_a_setting_an_idempotent_producer_cannot_take_turns_idempotence_off_unless_it_is_asked_for(key, value):
    assert producer_of({key: value})["enable.idempotence"] == "false"   # as the Java producer decides
    with pytest.raises(ConfigException, match=rf"for configuration {key}: Must set .* idempotent producer"):
        application({key: value, "enable.idempotence": True})


def test_exactly_once_gets_the_producer_prefixed_transaction_timeout():
    config = {"processing.guarantee": "exactly_once_v2", "transaction.timeout.ms": 30000,
              "producer.transaction.timeout.ms": 20000, "acks": "all", "max.in.flight.requests.per.connection": 5}
    assert application(config)._make_connector().writer().transaction_timeout_ms == 20000


def test_serializers_are_ignored_as_kafka_streams_ignores_them():
    out = producer_of({"key.serializer": "org.apache.kafka.common.serialization.StringSerializer",
                       "producer.value.serializer": "org.apache.kafka.common.serialization.StringSerializer"})
    assert not any("serializer" in k for k in out)


def test_secrets_of_the_producer_prefix_are_masked_by_the_connector():
    jaas = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
            f'username="writer" password="{PASSWORD}";')
    connector = application({"producer.sasl.jaas.config": jaas})._make_connector()
    assert producer_of({"producer.sasl.jaas.config": jaas})["sasl.password"] == PASSWORD
    assert connector.redact(f"failed with {PASSWORD}") == f"failed with {MASK}"
    assert PASSWORD not in repr(connector.writer())


def test_without_a_producer_nothing_is_refused():
    """The test driver and embedded topics write through no Kafka producer: as Kafka's driver, they take the
    settings a production config carries."""
    config = {"application.id": "app", "producer.partitioner.class": "x", "max.block.ms": 5}
    KafkaStreams(topology(), config)
    with TopologyTestDriver(topology(), config) as driver:
        driver.create_input_topic("in", S, S).pipe_input("k", "v")
        assert driver.create_output_topic("out", S, S).read_value() == "V"

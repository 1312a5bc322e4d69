"""An unreachable cluster fails fast and clearly; secrets in client settings never reach logs or messages.

These need no broker: the "cluster" is a closed loopback port.
"""
from __future__ import annotations

import logging
import socket
import time

import pytest

from streams_on_spark.connectors.kafka import MASK, KafkaConnector, is_secret, mask_config
from streams_on_spark.records import ProducerRecord
from streams_on_spark.errors import StreamsException

pytestmark = pytest.mark.kafka

PASSWORD = "s3cr3t-Pa55word"
KEY_PASSWORD = "key-pw-0815"
TOKEN = "tok-abcdef-123456"
SECRET_CONFIG = {
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": "PLAIN",
    "sasl.jaas.config": ('org.apache.kafka.common.security.plain.PlainLoginModule required '
                         f'username="alice" password="{PASSWORD}";'),
    "ssl.key.password": KEY_PASSWORD,
    "sasl.oauthbearer.token.endpoint.url": f"https://127.0.0.1:1/token?t={TOKEN}",
    "client.secret": "cs-9f8e7d",
}
SECRETS = (PASSWORD, KEY_PASSWORD, TOKEN, "cs-9f8e7d")


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed: connections are refused at once)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("call", ["topics", "partitions", "create_topic", "end_offsets", "append"])
def test_unreachable_broker_fails_fast_with_a_clear_error(closed_port, call):
    connector = KafkaConnector(f"127.0.0.1:{closed_port}", {}, timeout_ms=2000)
    started = time.monotonic()
    with pytest.raises(StreamsException) as info:
        {"topics": lambda: connector.topics(),
         "partitions": lambda: connector.partitions("t"),
         "create_topic": lambda: connector.create_topic("t", 2),
         "end_offsets": lambda: connector.end_offsets("t"),
         "append": lambda: connector.append([ProducerRecord("t", 0, 1, b"k", b"v")])}[call]()
    elapsed = time.monotonic() - started
    connector.close()
    assert elapsed < 15, f"{call} took {elapsed:.1f}s to fail"
    assert f"127.0.0.1:{closed_port}" in str(info.value)
    assert "Kafka" in str(info.value)


def test_secret_names():
    for name in ("sasl.jaas.config", "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password",
                 "sasl.oauthbearer.token.endpoint.url", "client.secret", "ssl.keystore.key", "SASL.JAAS.CONFIG"):
        assert is_secret(name), name
    for name in ("security.protocol", "sasl.mechanism", "client.id", "request.timeout.ms"):
        assert not is_secret(name), name
    masked = mask_config(SECRET_CONFIG)
    assert masked["sasl.jaas.config"] == MASK and masked["ssl.key.password"] == MASK
    assert masked["security.protocol"] == "SASL_PLAINTEXT"


def test_secrets_never_appear_in_errors_logs_or_repr(closed_port, caplog):
    caplog.set_level(logging.DEBUG)  # every logger, kafka-python's included
    connector = KafkaConnector(f"127.0.0.1:{closed_port}", SECRET_CONFIG, timeout_ms=2000)
    messages = [repr(connector)]
    for call in (connector.topics, lambda: connector.create_topic("t", 1),
                 lambda: connector.append([ProducerRecord("t", 0, 1, b"k", b"v")])):
        with pytest.raises(StreamsException) as info:
            call()
        messages.append(str(info.value))
        messages.append(repr(info.value))
    connector.close()
    assert MASK in messages[0] and "SASL_PLAINTEXT" in messages[0]
    texts = messages + [r.getMessage() for r in caplog.records]
    leaked = [(secret, text[:300]) for text in texts for secret in SECRETS if secret in text]
    assert not leaked, f"secrets leaked: {leaked}"


def test_secrets_reach_spark_options_and_the_admin_client():
    """Masking is for humans only: the settings themselves must still reach the clients."""
    connector = KafkaConnector("127.0.0.1:1", {**SECRET_CONFIG, "kafka.request.timeout.ms": "3000"})
    fmt, options = connector.reader_options(["a", "b"])
    assert fmt == "kafka"
    assert options["kafka.sasl.jaas.config"] == SECRET_CONFIG["sasl.jaas.config"]
    assert options["kafka.security.protocol"] == "SASL_PLAINTEXT"
    assert options["kafka.request.timeout.ms"] == "3000"  # a "kafka." prefix is not doubled
    assert options["kafka.bootstrap.servers"] == "127.0.0.1:1"
    assert options["subscribe"] == "a,b"
    assert options["startingOffsets"] == "earliest" and options["includeHeaders"] == "true"
    assert options["failOnDataLoss"] == "true"  # never skip records silently unless asked to
    assert KafkaConnector("127.0.0.1:1", fail_on_data_loss=False).reader_options(["a"])[1]["failOnDataLoss"] == "false"
    # the source's consumer reads in large polls and fetches unless the application sets them
    assert options["kafka.max.poll.records"] == "10000" and options["kafka.fetch.max.bytes"] == str(64 << 20)
    assert options["kafka.fetch.max.wait.ms"] == "10"
    own = KafkaConnector("127.0.0.1:1", {"max.poll.records": 50, "kafka.max.partition.fetch.bytes": "1024"})
    assert own.reader_options(["a"])[1]["kafka.max.poll.records"] == "50"
    assert own.reader_options(["a"])[1]["kafka.max.partition.fetch.bytes"] == "1024"
    # Kafka Streams' consumer prefixes reach the source's consumer only, main.consumer. first
    prefixed = KafkaConnector("127.0.0.1:1", {"max.poll.records": 1, "consumer.max.poll.records": 2,
                                              "main.consumer.max.poll.records": 3, "consumer.fetch.max.bytes": 4})
    options = prefixed.reader_options(["a"])[1]
    assert options["kafka.max.poll.records"] == "3" and options["kafka.fetch.max.bytes"] == "4"
    assert not any(k.startswith(("kafka.consumer.", "kafka.main.consumer.")) for k in options)
    assert prefixed.client_config == {"max.poll.records": 1}   # what the producer and admin clients get
    python = connector._python_config
    assert python["sasl_plain_username"] == "alice" and python["sasl_plain_password"] == PASSWORD
    assert python["security_protocol"] == "SASL_PLAINTEXT" and python["sasl_mechanism"] == "PLAIN"
    assert python["ssl_password"] == KEY_PASSWORD and python["request_timeout_ms"] == 3000
    assert connector.redact(f"boom {PASSWORD} {KEY_PASSWORD}") == f"boom {MASK} {MASK}"


def test_bad_arguments():
    with pytest.raises(ValueError):
        KafkaConnector("", {})
    with pytest.raises(ValueError, match="bootstrap_servers"):
        KafkaConnector("127.0.0.1:1", {"bootstrap.servers": "x:1"})
    with pytest.raises(ValueError):
        KafkaConnector("127.0.0.1:1", {}).reader_options([])

"""``librdkafka_config``: Kafka (Java client) settings -> librdkafka's, and the picklable ``KafkaWriterSpec``.

No broker needed: nothing here connects.
"""
from __future__ import annotations

import logging
import pickle

import pytest

from streams_on_spark.connectors.kafka import MASK
from streams_on_spark.connectors.kafka_producer import KafkaWriterSpec, librdkafka_config

PASSWORD = "s3cr3t-Pa55word"
JAAS_PLAIN = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              f'username="alice" password="{PASSWORD}";')
JAAS_SCRAM = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
              f"username='bob' password='{PASSWORD}';")


def test_same_names_and_renames():
    out = librdkafka_config(" 127.0.0.1:9092 ", {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "client.id": "c",
        "request.timeout.ms": 5000, "delivery.timeout.ms": "60000", "max.request.size": 2_000_000,
        "send.buffer.bytes": -1, "receive.buffer.bytes": "65536", "enable.idempotence": True,
        "ssl.endpoint.identification.algorithm": "", "kafka.linger.ms": "20", "metadata.max.age.ms": None})
    assert out == {
        "bootstrap.servers": "127.0.0.1:9092", "security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512",
        "client.id": "c", "request.timeout.ms": "5000", "message.timeout.ms": "60000",
        "message.max.bytes": "2000000", "socket.send.buffer.bytes": "0", "socket.receive.buffer.bytes": "65536",
        "enable.idempotence": "true", "ssl.endpoint.identification.algorithm": "none", "linger.ms": "20"}


@pytest.mark.parametrize("jaas,username", [(JAAS_PLAIN, "alice"), (JAAS_SCRAM, "bob")])
def test_jaas_becomes_username_and_password(jaas, username):
    out = librdkafka_config("h:1", {"sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas})
    assert out["sasl.username"] == username and out["sasl.password"] == PASSWORD
    assert "sasl.jaas.config" not in out


def test_oauthbearer_and_kerberos_jaas():
    out = librdkafka_config("h:1", {
        "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": "https://idp/token",
        "sasl.jaas.config": 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
                            'clientId="app" clientSecret="cs" scope="kafka";'})
    assert {k: out[k] for k in out if k.startswith("sasl.oauthbearer")} == {
        "sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.token.endpoint.url": "https://idp/token",
        "sasl.oauthbearer.client.id": "app", "sasl.oauthbearer.client.secret": "cs", "sasl.oauthbearer.scope": "kafka"}
    out = librdkafka_config("h:1", {"sasl.jaas.config": 'com.sun.security.auth.module.Krb5LoginModule required '
                                                        'useKeyTab=true keyTab="/etc/k.keytab" principal="p@R";'})
    assert out["sasl.kerberos.keytab"] == "/etc/k.keytab" and out["sasl.kerberos.principal"] == "p@R"


def test_unknown_login_module_is_refused_without_its_options():
    with pytest.raises(ValueError, match="sasl.jaas.config with login module 'MyModule'") as info:
        librdkafka_config("h:1", {"sasl.jaas.config": f'com.acme.MyModule required password="{PASSWORD}";'})
    assert PASSWORD not in str(info.value)


@pytest.mark.parametrize("config,key", [
    ({"ssl.truststore.location": "/t.jks", "ssl.truststore.password": PASSWORD}, "ssl.truststore.location"),
    ({"ssl.truststore.location": "/t.jks", "ssl.truststore.type": "JKS"}, "ssl.truststore.location"),
    ({"ssl.truststore.location": "/t.p12", "ssl.truststore.type": "PKCS12"}, "ssl.truststore.location"),
    ({"ssl.keystore.location": "/k.jks", "ssl.keystore.password": PASSWORD}, "ssl.keystore.location"),
])
def test_jks_stores_are_refused_naming_the_setting_and_the_alternative(config, key):
    with pytest.raises(ValueError) as info:
        librdkafka_config("h:1", config)
    message = str(info.value)
    assert message.startswith(key) and "PEM" in message
    assert ("ssl.ca.location" if "truststore" in key else "ssl.certificate.location") in message
    assert PASSWORD not in message


def test_jks_store_with_librdkafka_replacement_is_accepted():
    config = {"ssl.truststore.location": "/t.jks", "ssl.truststore.password": PASSWORD,
              "ssl.keystore.location": "/k.jks", "ssl.keystore.password": PASSWORD}
    out = librdkafka_config("h:1", config, {"ssl.ca.location": "/ca.pem", "ssl.certificate.location": "/c.pem",
                                            "ssl.key.location": "/k.pem"})
    assert out["ssl.ca.location"] == "/ca.pem" and out["ssl.certificate.location"] == "/c.pem"
    assert PASSWORD not in out.values()
    out = librdkafka_config("h:1", {**config, "ssl.ca.location": "/ca.pem", "ssl.certificate.location": "/c.pem",
                                    "ssl.key.location": "/k.pem"})  # librdkafka's names in the client config
    assert out["ssl.ca.location"] == "/ca.pem" and "ssl.truststore.location" not in out


def test_pem_and_pkcs12_stores():
    out = librdkafka_config("h:1", {"ssl.truststore.type": "PEM", "ssl.truststore.location": "/ca.pem",
                                    "ssl.keystore.type": "pem", "ssl.keystore.location": "/me.pem",
                                    "ssl.key.password": "kp"})
    assert out == {"bootstrap.servers": "h:1", "ssl.ca.location": "/ca.pem", "ssl.certificate.location": "/me.pem",
                   "ssl.key.location": "/me.pem", "ssl.key.password": "kp"}
    out = librdkafka_config("h:1", {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "/me.p12",
                                    "ssl.keystore.password": "sp"})
    assert out == {"bootstrap.servers": "h:1", "ssl.keystore.location": "/me.p12", "ssl.keystore.password": "sp"}
    out = librdkafka_config("h:1", {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": "-----BEGIN CA",
                                    "ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": "-----BEGIN C",
                                    "ssl.keystore.key": "-----BEGIN K"})
    assert out == {"bootstrap.servers": "h:1", "ssl.ca.pem": "-----BEGIN CA", "ssl.certificate.pem": "-----BEGIN C",
                   "ssl.key.pem": "-----BEGIN K"}


def test_consumer_and_jvm_settings_are_dropped_with_a_debug_log_naming_only_the_setting(caplog):
    caplog.set_level(logging.DEBUG, logger="streams_on_spark.connectors.kafka_producer")
    out = librdkafka_config("h:1", {
        "group.id": "g", "auto.offset.reset": "earliest", "isolation.level": "read_committed",
        "max.poll.records": 5, "key.deserializer": "x", "value.serializer": "y", "sasl.login.refresh.window.factor": 1,
        "ssl.protocol": "TLSv1.3", "metrics.num.samples": 2, "interceptor.classes": "a.B",
        "sasl.oauthbearer.token.endpoint.url": "https://idp/token?secret=zz9"})
    assert out == {"bootstrap.servers": "h:1"}
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert any("group.id" in m and "consumers only" in m for m in debug)
    assert any("ssl.protocol" in m and "JVM" in m for m in debug)
    assert not any(r.levelno >= logging.WARNING for r in caplog.records)
    assert "zz9" not in caplog.text


def test_unknown_and_unsupported_settings_warn_without_their_values(caplog):
    caplog.set_level(logging.DEBUG, logger="streams_on_spark.connectors.kafka_producer")
    out = librdkafka_config("h:1", {"no.such.setting": "v-123", "ssl.cipher.suites": "TLS_AES_128_GCM_SHA256",
                                    "transactional.id": "tx-1"})
    assert out == {"bootstrap.servers": "h:1"}
    warnings = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert "no.such.setting" in warnings and "ssl.cipher.suites" in warnings and "transactional.id" in warnings
    assert "v-123" not in caplog.text and "tx-1" not in caplog.text


def test_acks_below_all_turns_idempotence_off_unless_set():
    assert librdkafka_config("h:1", {"acks": "1"})["enable.idempotence"] == "false"
    assert librdkafka_config("h:1", {"acks": "all"}).get("enable.idempotence") is None
    assert librdkafka_config("h:1", {"acks": "1", "enable.idempotence": "true"})["enable.idempotence"] == "true"


def test_overrides_win_and_bootstrap_servers_is_not_a_client_setting():
    out = librdkafka_config("h:1", {"linger.ms": 5}, {"linger.ms": 50, "debug": None})
    assert out["linger.ms"] == "50" and "debug" not in out
    with pytest.raises(ValueError, match="pass bootstrap.servers as bootstrap_servers"):
        librdkafka_config("h:1", {"bootstrap.servers": "other:1"})
    with pytest.raises(ValueError, match="bootstrap_servers"):
        librdkafka_config(" ", {})


def test_writer_spec_is_small_picklable_and_masks_secrets():
    spec = KafkaWriterSpec.of("h:1", {"sasl.jaas.config": JAAS_PLAIN, "ssl.key.password": "kp9",
                                      "security.protocol": "SASL_SSL"}, 4000, {"sasl.password": "ov-pw"})
    again = pickle.loads(pickle.dumps(spec))
    assert again == spec and hash(again) == hash(spec)
    assert dict(spec.client_config)["security.protocol"] == "SASL_SSL"
    shown = repr(spec)
    for secret in (PASSWORD, "kp9", "ov-pw", "alice"):
        assert secret not in shown
    assert MASK in shown and "SASL_SSL" in shown and "h:1" in shown
    assert len(pickle.dumps(spec)) < 1000


def test_writer_spec_checks_its_config_when_made():
    with pytest.raises(ValueError, match="ssl.truststore.location"):
        KafkaWriterSpec("h:1", (("ssl.truststore.location", "/t.jks"),))
    with pytest.raises(ValueError, match="timeout_ms"):
        KafkaWriterSpec("h:1", (), 0)
    assert KafkaWriterSpec("h:1", (("b", 2), ("a", 1))).client_config == (("a", "1"), ("b", "2"))


def _closed_port() -> int:
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]   # closed again: nothing listens there


def _rdkafka_lines_while_unreachable(caplog) -> list[str]:
    """librdkafka's log records for a producer of the library retrying a broker nobody listens on, for ~1.5 s."""
    import time

    from streams_on_spark.connectors.kafka_producer import KafkaBatchProducer
    producer = KafkaBatchProducer(f"127.0.0.1:{_closed_port()}", timeout_ms=2000)
    try:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            producer._producer.poll(0.1)
    finally:
        producer.close(timeout_s=0)
    return [r.getMessage() for r in caplog.records if r.name.endswith(".librdkafka")]


def test_a_producers_failed_connections_stay_off_the_console_unless_its_logger_has_a_level(caplog):
    """librdkafka logs each failed connection to a broker that is down at ERROR ("FAIL [...] Connect to ... failed"),
    ~2 a second per producer: a Spark application's every task producer did so through an outage. They are dropped
    (the driver's broker watch says the outage once); a level set on the logger brings them back."""
    from streams_on_spark.connectors.kafka_producer import rdkafka_log
    assert not [line for line in _rdkafka_lines_while_unreachable(caplog) if line.startswith("FAIL [")]
    caplog.clear()
    rdkafka_log.setLevel(logging.DEBUG)
    try:
        assert [line for line in _rdkafka_lines_while_unreachable(caplog) if line.startswith("FAIL [")]
    finally:
        rdkafka_log.setLevel(logging.NOTSET)

"""Writing record batches to Kafka from any Python process, with librdkafka (confluent-kafka).

What a Spark task's Python worker uses to write its own output (instead of collecting every record to the driver
and writing through the driver JVM's ``KafkaProducer``):

* :class:`KafkaWriterSpec` is what crosses to the executors: a small, frozen, picklable description of the
  cluster (bootstrap servers, client settings with Kafka's Java names, timeout). Its ``repr`` masks secrets.
* :meth:`KafkaWriterSpec.producer` / :func:`producer_for` give the process's :class:`KafkaBatchProducer` for that
  spec: one per process and distinct config, made on first use, kept for the next tasks (Spark reuses its Python
  workers), made anew in a forked child, closed at interpreter exit.
* :meth:`KafkaBatchProducer.send` writes :class:`RecordBatch` es (explicit partition, timestamp as CreateTime,
  headers, null keys/values/header values kept), returns once every record is acknowledged (``acks=all``,
  idempotent), with each batch's base offset, and raises :class:`StreamsException` naming the topic, partition,
  error and cluster (secrets masked) otherwise.
* :func:`librdkafka_config` turns Kafka (Java client) settings into librdkafka's; :func:`producer_settings` picks
  an application's producer settings (``linger.ms``, ``producer.acks``, ...) as Kafka Streams does and refuses the
  ones librdkafka has no equivalent of.

librdkafka cannot write a record whose timestamp is 0 (it stamps such a record with the current time), and Kafka
rejects negative ones: :meth:`KafkaBatchProducer.send` refuses both with a :class:`StreamsException` rather than
write a different timestamp.

Hot loop: each batch's columns (a task's output never encoded for Kafka: ``RecordBatch.columns``; a batch read as
bytes is decoded once), then one ``produce`` per record with positional
arguments. Every record carries a delivery callback: the first record's records its batch's base offset, the
others only count errors. Called for every delivered record, that costs a Python call (and a message object) per
record, measured at ~0.4 s of CPU per million records (bench/kafka_producer.py: 1.45 s vs 1.06 s for a producer with
no callback at all). With librdkafka's ``delivery.report.only.error=true`` (the runtime's writers:
``KafkaConnector._writer_spec``) only a failed record calls back: errors are seen as before, and ``send`` returns no
base offsets (-1); a callback on the first record alone would have left the other records' errors unseen.
"""
from __future__ import annotations

import atexit
import logging
import os
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from streams_on_spark.connectors.kafka_config import _REDACTING_FILTER, MASK, _jaas_options, is_secret, mask_config
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.errors import ConfigException, StreamsException

__all__ = ["librdkafka_config", "producer_settings", "KafkaBatchProducer", "KafkaWriterSpec", "producer_for",
           "close_producers", "PRODUCER_DEFAULTS", "PRODUCER_CONFIG_NAMES", "PRODUCER_PREFIX"]

log = logging.getLogger(__name__)


class _BrokerFailures(logging.Filter):
    """librdkafka logs every failed attempt to reach a broker that is down (facility ``FAIL``: "Connect to ...
    failed: Connection refused", "Disconnected"), at ERROR, about twice a second per producer, and every task's
    producer in every Python worker keeps trying between batches. While the application set no level on the
    librdkafka logger, those lines are dropped: an outage is said once, on the driver, by the broker watch
    (``kafka_config.BrokerWatch``), and a record that cannot be delivered still fails its write. Setting the
    logger's level brings them back."""

    def filter(self, record: logging.LogRecord) -> bool:
        if rdkafka_log.level != logging.NOTSET:
            return True
        try:
            return not record.getMessage().startswith("FAIL [")   # confluent-kafka: "<facility> [<client>] <text>"
        except Exception:
            return True


#: librdkafka's own log lines (forwarded from ``poll``/``flush``), with secret values masked.
rdkafka_log = logging.getLogger(__name__ + ".librdkafka")
rdkafka_log.addFilter(_REDACTING_FILTER)
rdkafka_log.addFilter(_BrokerFailures())

#: Producer settings (librdkafka names) under the client's: acks from all in-sync replicas, idempotent (no
#: duplicates or reordering from retries), a short linger (``send`` flushes anyway), large batches and queue.
PRODUCER_DEFAULTS: dict[str, str] = {
    "client.id": "streams-on-spark-producer",
    "acks": "all",
    "enable.idempotence": "true",
    "linger.ms": "5",
    "compression.type": "none",
    "batch.size": "1000000",
    "batch.num.messages": "100000",
    "queue.buffering.max.messages": "1000000",
    "queue.buffering.max.kbytes": "262144",  # 256 MiB of queued messages at most; produce waits beyond
    "allow.auto.create.topics": "false",  # the runtime creates its topics; never create one with broker defaults
}

# -- Kafka (Java client) settings -> librdkafka ---------------------------------------------------------------------

# Same name and meaning in librdkafka (for a producer).
_SAME = frozenset({
    "security.protocol", "client.id", "client.rack", "client.dns.lookup", "request.timeout.ms", "retry.backoff.ms",
    "retry.backoff.max.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms", "connections.max.idle.ms",
    "metadata.max.age.ms", "socket.connection.setup.timeout.ms", "enable.metrics.push",
    "acks", "enable.idempotence", "linger.ms", "batch.size", "compression.type", "retries",
    "max.in.flight.requests.per.connection", "ssl.key.password",
    "sasl.kerberos.service.name", "sasl.kerberos.min.time.before.relogin",
})
# Same meaning, another name.
_RENAMED = {
    "sasl.mechanism": "sasl.mechanisms",
    "delivery.timeout.ms": "message.timeout.ms",
    "max.request.size": "message.max.bytes",
    "ssl.truststore.certificates": "ssl.ca.pem",
    "ssl.keystore.certificate.chain": "ssl.certificate.pem",
    "ssl.keystore.key": "ssl.key.pem",
}
# librdkafka's own names (no Java client has them): passed through, so that one client config can carry both
# (the JVM clients only warn about a setting they do not know). Also how to replace a JKS store (see below).
_NATIVE = frozenset({
    "ssl.ca.location", "ssl.ca.pem", "ssl.ca.certificate.stores", "ssl.certificate.location", "ssl.certificate.pem",
    "ssl.key.location", "ssl.key.pem", "ssl.crl.location", "enable.ssl.certificate.verification", "ssl.curves.list",
    "ssl.sigalgs.list", "sasl.mechanisms", "sasl.username", "sasl.password", "sasl.kerberos.keytab",
    "sasl.kerberos.principal", "sasl.oauthbearer.method", "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.secret", "sasl.oauthbearer.scope", "sasl.oauthbearer.extensions",
    "sasl.oauthbearer.config", "enable.sasl.oauthbearer.unsecure.jwt", "message.timeout.ms", "message.max.bytes",
    "socket.send.buffer.bytes", "socket.receive.buffer.bytes", "socket.timeout.ms", "socket.keepalive.enable",
    "batch.num.messages", "queue.buffering.max.messages", "queue.buffering.max.kbytes", "queue.buffering.max.ms",
    "compression.codec", "compression.level", "topic.metadata.propagation.max.ms", "topic.metadata.refresh.interval.ms",
    "broker.address.family", "debug", "statistics.interval.ms", "sticky.partitioning.linger.ms",
})
# Settings of the Java consumer/admin clients only: nothing to do for a producer.
_CONSUMER_ONLY = frozenset({
    "group.id", "group.instance.id", "group.protocol", "group.remote.assignor", "auto.offset.reset",
    "enable.auto.commit", "auto.commit.interval.ms", "fetch.min.bytes", "fetch.max.bytes", "fetch.max.wait.ms",
    "max.partition.fetch.bytes", "max.poll.records", "max.poll.interval.ms", "session.timeout.ms",
    "heartbeat.interval.ms", "isolation.level", "partition.assignment.strategy", "check.crcs",
    "exclude.internal.topics", "allow.auto.create.topics", "key.deserializer", "value.deserializer",
    "default.api.timeout.ms", "internal.leave.group.on.close", "client.rack.aware.assignment",
})
# Settings that only mean something inside a JVM (classes, JAAS plumbing, Java's TLS machinery, metrics).
_JVM_ONLY = frozenset({
    "key.serializer", "value.serializer", "partitioner.class", "partitioner.ignore.keys",
    "partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms", "interceptor.classes",
    "metric.reporters", "auto.include.jmx.reporter", "security.providers", "max.block.ms",
    "metadata.max.idle.ms", "metadata.recovery.strategy",
    "metadata.recovery.rebootstrap.trigger.ms", "ssl.protocol", "ssl.enabled.protocols", "ssl.provider",
    "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.secure.random.implementation",
    "ssl.engine.factory.class", "ssl.truststore.type", "ssl.keystore.type", "ssl.truststore.password",
    "sasl.client.callback.handler.class", "sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.ticket.renew.window.factor", "sasl.oauthbearer.token.endpoint.url",
})
_JVM_ONLY_PREFIXES = ("metrics.", "sasl.login.", "sasl.oauthbearer.", "ssl.keystore.", "ssl.truststore.")

# Java's per-codec compression levels: librdkafka's one compression.level, for the codec compression.type names
_COMPRESSION_LEVELS = {"compression.gzip.level": "gzip", "compression.lz4.level": "lz4",
                       "compression.zstd.level": "zstd"}
# JVM-only settings another setting's translation reads (a store's type and password, the OIDC endpoint)
_READ_WITH = {"ssl.truststore.type": "ssl.truststore.location", "ssl.keystore.type": "ssl.keystore.location",
              "ssl.keystore.password": "ssl.keystore.location", "sasl.oauthbearer.token.endpoint.url": "sasl.jaas.config"}

#: Kafka Streams' prefix of settings for its producers only (``StreamsConfig.producerPrefix``).
PRODUCER_PREFIX = "producer."
#: Kafka 4.3.1's ProducerConfig names that no setting shared by every client covers: an application's plain ones
#: reach the tasks' producers (not Spark's Kafka source), as ``StreamsConfig.getProducerConfigs`` hands them over.
PRODUCER_CONFIG_NAMES = frozenset({
    "acks", "batch.size", "buffer.memory", "compression.type", "compression.gzip.level", "compression.lz4.level",
    "compression.zstd.level", "delivery.timeout.ms", "enable.idempotence", "interceptor.classes", "key.serializer",
    "value.serializer", "linger.ms", "max.block.ms", "max.in.flight.requests.per.connection", "max.request.size",
    "metadata.max.idle.ms", "partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms",
    "partitioner.class", "partitioner.ignore.keys", "retries", "transaction.timeout.ms", "transactional.id",
    "transaction.two.phase.commit.enable",
})
# what an idempotent producer needs (setting, what it may be, the Java producer's message when it is not)
_IDEMPOTENCE_NEEDS = (
    ("acks", lambda v: v.lower() in ("all", "-1"),
     "Must set acks to all in order to use the idempotent producer. Otherwise we cannot guarantee idempotence."),
    ("retries", lambda v: v != "0", "Must set retries to non-zero when using the idempotent producer."),
    ("max.in.flight.requests.per.connection", lambda v: not v.isdigit() or int(v) <= 5,
     "Must set max.in.flight.requests.per.connection to at most 5 when using the idempotent producer."),
)
# producer settings that do not reach librdkafka and yet are not lost: the transactions' timeout under
# exactly_once_v2 (KafkaConnector.writer; a producer without transactions has no use for it, in Java too), and the
# serializers, which Kafka Streams' own producers ignore as well (it gives them ByteArraySerializer instances)
_APPLIED_ELSEWHERE = frozenset({"transaction.timeout.ms", "key.serializer", "value.serializer"})

# Java ``sasl.jaas.config`` login modules with a librdkafka counterpart.
_PLAIN_MODULES = ("PlainLoginModule", "ScramLoginModule")


def _normalized(client_config: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """``client_config`` with str names, ``kafka.`` prefixes removed and ``None`` values dropped."""
    out: dict[str, Any] = {}
    for key, value in dict(client_config or {}).items():
        name = str(key)
        if name.startswith("kafka."):
            name = name[len("kafka."):]
        if name == "bootstrap.servers":
            raise ValueError("pass bootstrap.servers as bootstrap_servers, not in client_config")
        if value is not None:
            out[name] = value
    return out


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _login_module(jaas: str) -> str:
    """The class name of a ``sasl.jaas.config`` line, without its package (``PlainLoginModule``...)."""
    head = jaas.strip().split(None, 1)[0] if jaas.strip() else ""
    return head.rsplit(".", 1)[-1]


def _map_jaas(jaas: str, config: Mapping[str, Any], out: dict[str, str]) -> None:
    module = _login_module(jaas)
    options = _jaas_options(jaas)
    if module in _PLAIN_MODULES:
        for option in ("username", "password"):
            if option in options:
                out[f"sasl.{option}"] = options[option]
    elif module == "OAuthBearerLoginModule":
        endpoint = config.get("sasl.oauthbearer.token.endpoint.url")
        if endpoint:
            out["sasl.oauthbearer.method"] = "oidc"
            out["sasl.oauthbearer.token.endpoint.url"] = str(endpoint)
            for option, name in (("clientId", "client.id"), ("clientSecret", "client.secret"), ("scope", "scope")):
                if option in options:
                    out[f"sasl.oauthbearer.{name}"] = options[option]
        elif "unsecuredLoginStringClaim_sub" in options:
            out["enable.sasl.oauthbearer.unsecure.jwt"] = "true"
            out["sasl.oauthbearer.config"] = f"principal={options['unsecuredLoginStringClaim_sub']}"
        else:
            raise ValueError("sasl.jaas.config with OAuthBearerLoginModule needs sasl.oauthbearer.token.endpoint.url "
                             "(OIDC client credentials: clientId/clientSecret) for librdkafka; a custom login "
                             "callback handler has no librdkafka equivalent")
    elif module == "Krb5LoginModule":
        if "keyTab" in options:
            out["sasl.kerberos.keytab"] = options["keyTab"]
        if "principal" in options:
            out["sasl.kerberos.principal"] = options["principal"]
    else:
        raise ValueError(f"sasl.jaas.config with login module {module or '(none)'!r} has no librdkafka equivalent: "
                         "librdkafka supports PlainLoginModule, ScramLoginModule, OAuthBearerLoginModule (OIDC) and "
                         "Krb5LoginModule; or pass sasl.username/sasl.password (librdkafka's names)")


def librdkafka_config(bootstrap_servers: str, client_config: Optional[Mapping[str, Any]],
                      overrides: Optional[Mapping[str, Any]] = None) -> dict[str, str]:
    """librdkafka's settings for a producer equivalent to Kafka (Java client) ``client_config``.

    * Same name in both (``security.protocol``, ``client.id``, ``request.timeout.ms``, ``acks``, ...): copied.
    * Renamed: ``sasl.mechanism`` -> ``sasl.mechanisms``, ``delivery.timeout.ms`` -> ``message.timeout.ms``,
      ``max.request.size`` -> ``message.max.bytes``, ``send/receive.buffer.bytes`` -> ``socket.*`` (-1 -> 0,
      the OS default), ``ssl.endpoint.identification.algorithm`` -> the same name with ``""`` -> ``none``, PEM
      strings ``ssl.truststore.certificates`` / ``ssl.keystore.certificate.chain`` / ``ssl.keystore.key`` ->
      ``ssl.ca.pem`` / ``ssl.certificate.pem`` / ``ssl.key.pem``, ``buffer.memory`` (bytes) ->
      ``queue.buffering.max.kbytes``, the level of the ``compression.type`` codec (``compression.gzip.level``, ...)
      -> ``compression.level``.
    * Stores: ``ssl.truststore.location`` with ``ssl.truststore.type=PEM`` -> ``ssl.ca.location``;
      ``ssl.keystore.location`` with ``PEM`` -> ``ssl.certificate.location`` and ``ssl.key.location`` (one file
      with both), with ``PKCS12`` -> librdkafka's ``ssl.keystore.location``/``ssl.keystore.password``. A JKS store
      (Java's default type) has no librdkafka equivalent: ``ValueError`` naming the setting, unless librdkafka's
      own replacement is given too (``ssl.ca.location``/``ssl.ca.pem`` for the truststore,
      ``ssl.certificate.*``/``ssl.key.*`` for the keystore), in ``client_config`` or ``overrides``.
    * ``sasl.jaas.config``: Plain/Scram login modules -> ``sasl.username``/``sasl.password``; OAuthBearer with
      ``sasl.oauthbearer.token.endpoint.url`` -> OIDC client credentials; Krb5 -> keytab/principal; any other
      module -> ``ValueError``.
    * librdkafka's own names (``ssl.ca.location``, ``sasl.username``, ``queue.buffering.max.ms``, ...): copied.
    * Consumer-only and JVM-only settings: dropped (debug log); ``ssl.cipher.suites`` (Java names, not
      OpenSSL's), ``transactional.id`` (this producer is not transactional) and unknown names: dropped with a
      warning. Logs name settings, never their values. (An application's own producer settings are checked before:
      :func:`producer_settings` refuses those that would be dropped.)

    ``overrides`` (librdkafka names) are applied last. Returns str values, ``bootstrap.servers`` included.
    """
    if not isinstance(bootstrap_servers, str) or not bootstrap_servers.strip():
        raise ValueError(f"bootstrap_servers must be a non-empty 'host:port[,host:port]' str, "
                         f"got {bootstrap_servers!r}")
    config = _normalized(client_config)
    extra = {str(k): _text(v) for k, v in dict(overrides or {}).items() if v is not None}
    out, dropped = _translate(config, extra)
    for key, (level, why) in dropped.items():
        log.log(level, "client setting %s is ignored by the librdkafka producer: %s", key, why)
    if "enable.idempotence" not in out and _idempotence_conflict(out) is not None:
        out["enable.idempotence"] = "false"  # as the Java producer does when a setting conflicts with its default
    out.update(extra)
    out["bootstrap.servers"] = bootstrap_servers.strip()
    return out


def _translate(config: Mapping[str, Any], extra: Mapping[str, str]) -> tuple[dict[str, str], dict[str, tuple]]:
    """``config`` (Java names) as librdkafka settings, and what has none: setting -> (log level, why)."""
    out: dict[str, str] = {}
    dropped: dict[str, tuple] = {}
    for key, value in config.items():
        text = _text(value)
        if key in _SAME or key in _NATIVE:
            out[key] = text
        elif key in _RENAMED:
            out[_RENAMED[key]] = text
        elif key in ("send.buffer.bytes", "receive.buffer.bytes"):
            out[f"socket.{key}"] = "0" if text.strip() == "-1" else text
        elif key == "buffer.memory" and text.strip().isdigit():   # bytes of records to send; librdkafka's in KiB
            out["queue.buffering.max.kbytes"] = str(max(1, int(text) // 1024))
        elif key in _COMPRESSION_LEVELS:   # Java reads a codec's level only when compression.type is that codec
            if str(config.get("compression.type", "none")).strip().lower() == _COMPRESSION_LEVELS[key]:
                out["compression.level"] = text
        elif key == "ssl.endpoint.identification.algorithm":
            out[key] = text.strip().lower() or "none"
        elif key == "sasl.jaas.config":
            _map_jaas(text, config, out)
        elif key == "ssl.truststore.location":
            kind = str(config.get("ssl.truststore.type", "JKS")).strip().upper()
            if kind == "PEM":
                out["ssl.ca.location"] = text
            elif not any(k in config or k in extra for k in ("ssl.ca.location", "ssl.ca.pem")):
                raise ValueError(f"ssl.truststore.location is a {kind} truststore, which librdkafka cannot read: "
                                 "use a PEM file (ssl.truststore.type=PEM), or give librdkafka's ssl.ca.location "
                                 "(a PEM CA file) or ssl.ca.pem as well")
        elif key == "ssl.keystore.location":
            kind = str(config.get("ssl.keystore.type", "JKS")).strip().upper()
            if kind == "PEM":
                out["ssl.certificate.location"] = text
                out["ssl.key.location"] = text
            elif kind == "PKCS12":
                out["ssl.keystore.location"] = text
                if config.get("ssl.keystore.password") is not None:
                    out["ssl.keystore.password"] = _text(config["ssl.keystore.password"])
            elif not any(k in config or k in extra for k in ("ssl.certificate.location", "ssl.certificate.pem")):
                raise ValueError(f"ssl.keystore.location is a {kind} keystore, which librdkafka cannot read: "
                                 "use PEM (ssl.keystore.type=PEM, certificate chain and key in one file) or "
                                 "PKCS12, or give librdkafka's ssl.certificate.location and ssl.key.location "
                                 "(PEM files) as well")
        elif key == "ssl.cipher.suites":
            dropped[key] = (logging.WARNING, "Java cipher names differ from OpenSSL's; set librdkafka's "
                                             "ssl.cipher.suites in the producer's overrides")
        elif key == "transactional.id":
            dropped[key] = (logging.WARNING, "the batch producer is idempotent, not transactional; under "
                                             "processing.guarantee=exactly_once_v2 the library gives each task's "
                                             "producer its own transactional.id")
        elif key in _CONSUMER_ONLY:
            dropped[key] = (logging.DEBUG, "it is for consumers only")
        elif key in _READ_WITH and _READ_WITH[key] in config:
            pass   # read with the setting it qualifies, above
        elif key in _JVM_ONLY or key.startswith(_JVM_ONLY_PREFIXES):
            dropped[key] = (logging.DEBUG, "it has no librdkafka equivalent (a Java class or a setting of the "
                                           "JVM clients only)")
        else:
            dropped[key] = (logging.WARNING, "it is unknown to librdkafka")
    return out, dropped


def _idempotence_conflict(settings: Mapping[str, str]) -> Optional[tuple[str, str]]:
    """The librdkafka setting that rules out an idempotent producer, with the Java producer's message; or None."""
    for name, allowed, message in _IDEMPOTENCE_NEEDS:
        if name in settings and not allowed(settings[name].strip()):
            return name, message
    return None


def producer_settings(client_config: Optional[Mapping[str, Any]], *, exactly_once: bool = False) -> dict[str, Any]:
    """The tasks' producers' own settings in an application's client config (Java names), as Kafka Streams'
    ``StreamsConfig.getProducerConfigs`` resolves them: the plain :data:`PRODUCER_CONFIG_NAMES`, each overridden by
    its ``producer.``-prefixed form (which may carry any other client setting, for the producers only).

    Every one must reach librdkafka (:func:`librdkafka_config`): one with no equivalent there (a Java class such as
    ``partitioner.class``, ``max.block.ms``, a consumer's setting under ``producer.``, ...) is a
    :class:`ConfigException` naming the key as given; so is ``main.producer.`` (Kafka Streams has no such prefix),
    and, as the Java producer refuses them, a setting an idempotent producer cannot take (``acks`` other than
    ``all``, ``retries=0``, more than 5 requests in flight) with ``enable.idempotence=true`` or under
    ``exactly_once_v2``, whose transactional producers are idempotent (``enable.idempotence=false`` is refused there,
    as Kafka's ``NON_CONFIGURABLE_PRODUCER_EOS_CONFIGS`` say). Without ``enable.idempotence``, such a setting turns
    idempotence off, as in Java.
    """
    config = _normalized(client_config)
    for key in config:
        if key.startswith("main.producer."):
            raise ConfigException.invalid(key, config[key], "Kafka Streams has no 'main.producer.' prefix "
                                          f"(its producers read 'producer.'): set {PRODUCER_PREFIX}"
                                          f"{key[len('main.producer.'):]}")
    given = {k: k for k in config if k in PRODUCER_CONFIG_NAMES}
    given.update({k[len(PRODUCER_PREFIX):]: k for k in config if k.startswith(PRODUCER_PREFIX)})
    own = {name: config[key] for name, key in given.items()}
    shared = {k: v for k, v in config.items() if not k.startswith(PRODUCER_PREFIX)}
    out, dropped = _translate({**shared, **own}, {})
    for name, key in given.items():
        if name in dropped and name not in _APPLIED_ELSEWHERE:
            raise ConfigException.invalid(key, _shown(key, _text(own[name])), "the tasks' producers (librdkafka) "
                                          f"cannot apply it: {dropped[name][1]}")
    idempotence = out.get("enable.idempotence", "").strip().lower()
    eos = " (processing.guarantee=exactly_once_v2 writes through idempotent transactional producers)"
    if exactly_once and idempotence not in ("", "true"):
        key = given["enable.idempotence"]
        raise ConfigException.invalid(key, idempotence, "Can't be disabled when exactly-once "
                                      "processing is enabled" + eos)
    conflict = _idempotence_conflict(out) if exactly_once or idempotence == "true" else None
    if conflict is not None:
        name, message = conflict
        raise ConfigException.invalid(given.get(name, name), out[name], message + (eos if exactly_once else ""))
    return own


def _shown(key: str, value: Any) -> Any:
    """A value as an error message may show it: masked for a secret setting."""
    return MASK if is_secret(key) else value


def _secret_values(*configs: Mapping[str, Any]) -> list[str]:
    """The values to mask in text: those of secret settings and the secret options of a JAAS line."""
    values: set[str] = set()
    for config in configs:
        for key, value in config.items():
            if value in (None, "") or not is_secret(str(key)):
                continue
            values.add(_text(value))
            if "jaas" in str(key).lower():
                values.update(v for k, v in _jaas_options(str(value)).items() if v and is_secret(k))
    return sorted(values, key=len, reverse=True)


# -- the producer -----------------------------------------------------------------------------------------------


class _Send:
    """Delivery bookkeeping of one ``send`` call: the base offset of each batch and the first errors."""

    __slots__ = ("bases", "errors", "failed")

    def __init__(self, count: int) -> None:
        self.bases = [-1] * count
        self.errors: list[tuple[Any, str, int]] = []  # (KafkaError, topic, partition), the first few
        self.failed = 0

    def on_delivery(self, err: Any, msg: Any) -> None:
        """Every record but the first of a batch: only errors matter."""
        if err is not None:
            self.failed += 1
            if len(self.errors) < 5:
                self.errors.append((err, msg.topic(), msg.partition()))

    def first(self, index: int) -> Any:
        """The callback of the first record of batch ``index``: records the batch's base offset."""
        def on_first(err: Any, msg: Any) -> None:
            if err is None:
                self.bases[index] = msg.offset()
            else:
                self.on_delivery(err, msg)
        return on_first


class KafkaBatchProducer:
    """A librdkafka producer that writes :class:`RecordBatch` es and waits for every acknowledgement.

    ``client_config`` uses Kafka's Java setting names (mapped by :func:`librdkafka_config`); ``config_overrides``
    are librdkafka settings applied last. ``timeout_ms`` bounds a ``send``: a record not acknowledged by then
    (unreachable cluster, unknown topic or partition, ...) fails it with a :class:`StreamsException`.

    Lives only in the process that made it (not picklable): ship a :class:`KafkaWriterSpec` instead. Not for
    concurrent ``send`` calls from several threads.
    """

    def __init__(self, bootstrap_servers: str, client_config: Optional[Mapping[str, Any]] = None, *,
                 timeout_ms: int = 30000, config_overrides: Optional[Mapping[str, Any]] = None) -> None:
        if not isinstance(timeout_ms, int) or isinstance(timeout_ms, bool) or timeout_ms < 1:
            raise ValueError(f"timeout_ms must be an int >= 1, got {timeout_ms!r}")
        from confluent_kafka import Producer
        settings = librdkafka_config(bootstrap_servers, client_config, config_overrides)
        self.bootstrap_servers = settings["bootstrap.servers"]
        self.timeout_ms = timeout_ms
        self._client_config = _normalized(client_config)
        self._overrides = dict(config_overrides or {})
        self._secrets = _secret_values(self._client_config, self._overrides, settings)
        _REDACTING_FILTER.secrets.update(self._secrets)
        self._pid = os.getpid()
        self._closed = True  # until the librdkafka producer exists
        self._last_error: Optional[str] = None
        self._fatal: Optional[str] = None
        conf: dict[str, Any] = {
            **PRODUCER_DEFAULTS,
            "message.timeout.ms": str(timeout_ms),
            "request.timeout.ms": str(min(timeout_ms, 30000)),
            "socket.connection.setup.timeout.ms": str(min(timeout_ms, 30000)),
            "topic.metadata.propagation.max.ms": str(min(timeout_ms // 2, 10000)),
            "reconnect.backoff.max.ms": "1000",
            **settings,
            "error_cb": self._on_error,
            "logger": rdkafka_log,
        }
        only_errors = _text(conf.pop("delivery.report.only.error", "false")).lower() == "true"
        conf["delivery.report.only.error"] = only_errors   # confluent-kafka takes this one as a bool only
        if float(conf["linger.ms"]) >= float(conf["message.timeout.ms"]):  # librdkafka refuses that
            conf["linger.ms"] = str(max(0, int(float(conf["message.timeout.ms"])) - 1))
        # every queued record gets its delivery report within message.timeout.ms (0: librdkafka waits forever)
        self._delivery_s = (float(conf["message.timeout.ms"]) or timeout_ms) / 1000
        #: whether ``send`` returns base offsets: not with librdkafka's delivery.report.only.error, where a delivered
        #: record calls no Python callback (what the runtime's writers use: ~1 µs less per record)
        self.reports_offsets = not only_errors
        try:
            self._producer: Any = Producer(conf)
        except Exception as e:
            raise self._exception("cannot create the Kafka producer", e) from None
        self._closed = False
        _live.add(self)

    # -- errors --------------------------------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """``text`` with every secret value of the producer's settings replaced by ``******``."""
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    def _describe(self, error: Any) -> str:
        if hasattr(error, "name") and hasattr(error, "str"):  # a KafkaError
            return self.redact(f"{error.name()}: {error.str()}")
        if hasattr(error, "args") and error.args and hasattr(error.args[0], "name"):  # a KafkaException
            return self._describe(error.args[0])
        return self.redact(f"{type(error).__name__}: {error}".strip())

    def _exception(self, what: str, error: Any = None) -> StreamsException:
        detail = f": {self._describe(error)}" if error is not None else ""
        if self._last_error and self._last_error not in detail:
            detail += f" (last client error: {self._last_error})"
        return StreamsException(f"{what} (Kafka at {self.bootstrap_servers}, client settings "
                                f"{mask_config({**self._client_config, **self._overrides})}){detail}")

    def _on_error(self, err: Any) -> None:
        """librdkafka's error callback (served by poll/flush): connection and authentication failures, fatal
        errors of the idempotent producer. Non-fatal ones are retried by librdkafka; kept for messages."""
        self._last_error = self._describe(err)
        if err.fatal():
            self._fatal = self._last_error
        log.debug("Kafka client error (%s): %s", self.bootstrap_servers, self._last_error)

    # -- writing -------------------------------------------------------------------------------------------------

    def send(self, batches: Iterable[RecordBatch]) -> list[int]:
        """Write every record of ``batches`` to its batch's topic and partition, in order, with its timestamp
        (CreateTime) and headers; return once all are acknowledged, with each batch's base offset (the offset of
        its first record; -1 for an empty batch). Raises :class:`StreamsException` naming the topic, partition,
        error and cluster if any record fails or is not acknowledged within ``timeout_ms``."""
        if self._closed:
            raise StreamsException(f"the Kafka producer for {self.bootstrap_servers} is closed")
        if self._pid != os.getpid():
            raise StreamsException("a KafkaBatchProducer cannot be used in a forked child process; "
                                   "call producer_for() there (it makes a new one)")
        batches = list(batches)
        state = _Send(len(batches))
        producer = self._producer
        produce, on_delivery = producer.produce, state.on_delivery
        count = 0
        for index, batch in enumerate(batches):
            n = len(batch)
            if not n:
                continue
            topic, partition = batch.topic, batch.partition
            timestamps, keys, values, headers = batch.columns()
            if min(timestamps) <= 0:
                bad = next(t for t in timestamps if t <= 0)
                self._await(state, count, batches[:index])  # what went before is written, then fail
                raise StreamsException(f"cannot write a record with timestamp {bad} to {topic}-{partition} "
                                       f"(Kafka at {self.bootstrap_servers}): timestamps must be > 0 (librdkafka "
                                       "replaces 0 by the current time, Kafka rejects negative ones)")
            callback = state.first(index) if self.reports_offsets else on_delivery
            try:
                for value, key, ts, hs in zip(values, keys, timestamps, headers):
                    try:
                        produce(topic, value, key, partition, callback, None, ts, list(hs) if hs else None)
                    except BufferError:
                        self._produce_when_room(topic, value, key, partition, callback, ts, hs)
                    callback = on_delivery
            except StreamsException:
                raise
            except Exception as e:  # KafkaException: unknown partition, message too large, fatal error...
                self._abandon()
                raise self._exception(f"cannot write a record to {topic}-{partition}", e) from None
            count += n
            producer.poll(0)
        self._await(state, count, batches)
        return state.bases

    def _produce_when_room(self, topic: str, value: Any, key: Any, partition: int, callback: Any, ts: int,
                           hs: Any) -> None:
        """The queue is full (``queue.buffering.max.*``): serve deliveries until the record fits (every queued
        record is delivered or timed out within ``timeout_ms``, so room comes by then)."""
        deadline = time.monotonic() + self._delivery_s + 5.0
        while True:
            self._producer.poll(0.05)
            self._check_fatal()
            try:
                self._producer.produce(topic, value, key, partition, callback, None, ts, list(hs) if hs else None)
                return
            except BufferError:
                if time.monotonic() > deadline:
                    self._abandon()
                    raise self._exception(f"the producer's queue stayed full while writing to {topic}-{partition} "
                                          f"for {self._delivery_s + 5.0:.0f} s") from None

    def _check_fatal(self) -> None:
        if self._fatal is not None:
            self._abandon()
            raise self._exception("the Kafka producer failed fatally and was closed")

    def _await(self, state: _Send, count: int, batches: list[RecordBatch]) -> None:
        """Flush until every record has its delivery report (or the deadline passed), then check them."""
        producer = self._producer
        # librdkafka times a queued record out message.timeout.ms (= timeout_ms) after it was produced, so every
        # report is due by then; a little slack for librdkafka's timeout scan (every second) and the report
        hard_deadline = time.monotonic() + self._delivery_s + 5.0
        while True:
            remaining = producer.flush(min(1.0, max(0.0, hard_deadline - time.monotonic())))
            if state.errors:
                break
            self._check_fatal()
            if remaining == 0 or time.monotonic() >= hard_deadline:
                break
        if state.errors:
            err, topic, partition = state.errors[0]
            more = f" ({state.failed} records failed)" if state.failed > 1 else ""
            self._abandon()  # a failed producer (dead cluster, bad credentials...) must not linger in the cache
            raise self._exception(f"writing to {topic}-{partition} failed{more}", err)
        if remaining:
            self._abandon()
            where = sorted({f"{b.topic}-{b.partition}" for b in batches if len(b)})
            raise self._exception(f"{remaining} of {count} records to {', '.join(where)} were not acknowledged "
                                  f"within {self._delivery_s:.0f} s")
        missing = [b for b, base in zip(batches, state.bases) if len(b) and base < 0] if self.reports_offsets else []
        if missing:  # pragma: no cover - a delivered first record always has its offset (acks=all)
            raise self._exception(f"no offset for the first record written to {missing[0].topic}-"
                                  f"{missing[0].partition}")

    def _abandon(self) -> None:
        """After a failure: drop what is still queued (it would be written later, behind the caller's back) and
        close (no reconnecting to a dead cluster in the background), so that :func:`producer_for` makes a fresh
        producer for the next attempt."""
        if self._closed:
            return
        self._closed = True
        try:
            self._producer.purge(True, True, False)
            self._producer.poll(0)
            self._producer.close()
        except Exception:
            log.debug("closing a failed Kafka producer failed", exc_info=True)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self, timeout_s: float = 30.0) -> None:
        """Deliver what is still queued (for up to ``timeout_s``) and close; idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._pid != os.getpid():
            return  # librdkafka's threads live in the parent: never touch its handle here
        try:
            left = self._producer.flush(timeout_s)
            if left:
                log.warning("closing the Kafka producer for %s with %d records not delivered", self.bootstrap_servers,
                            left)
            self._producer.close()
        except Exception:
            log.debug("closing a Kafka producer failed", exc_info=True)

    def __enter__(self) -> "KafkaBatchProducer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __len__(self) -> int:
        """Records queued or in flight."""
        return 0 if self._closed else len(self._producer)

    def __reduce__(self) -> Any:
        raise TypeError("a KafkaBatchProducer lives only in the process that made it; ship a KafkaWriterSpec and "
                        "call its producer() where the records are")

    def __repr__(self) -> str:
        return (f"KafkaBatchProducer(bootstrap_servers={self.bootstrap_servers!r}, client_config="
                f"{mask_config(self._client_config)!r}, timeout_ms={self.timeout_ms}"
                f"{', closed' if self._closed else ''})")


# -- one producer per process and config -------------------------------------------------------------------------

_lock = threading.Lock()
_producers: dict[tuple, KafkaBatchProducer] = {}
_owner_pid = os.getpid()
_inherited: list[KafkaBatchProducer] = []  # the parent's cached producers, in a forked child
_live: "weakref.WeakSet[KafkaBatchProducer]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """A forked child must never destroy a librdkafka handle of its parent (its threads exist only there): hold
    one more reference to each, forever."""
    import ctypes
    for producer in list(_live):
        handle = producer.__dict__.get("_producer")
        if handle is not None:
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(handle))


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _cache_key(bootstrap_servers: str, client_config: Optional[Mapping[str, Any]], timeout_ms: int,
               config_overrides: Optional[Mapping[str, Any]]) -> tuple:
    def frozen(config: Optional[Mapping[str, Any]]) -> tuple:
        return tuple(sorted((str(k), _text(v)) for k, v in dict(config or {}).items() if v is not None))
    return bootstrap_servers.strip(), frozen(client_config), timeout_ms, frozen(config_overrides)


def producer_for(bootstrap_servers: str, client_config: Optional[Mapping[str, Any]], timeout_ms: int = 30000,
                 config_overrides: Optional[Mapping[str, Any]] = None) -> KafkaBatchProducer:
    """This process's producer for that cluster and config: made on first use, reused after (a Spark Python
    worker runs many tasks), replaced if a failure closed it, made anew in a forked child."""
    global _owner_pid
    key = _cache_key(bootstrap_servers, client_config, timeout_ms, config_overrides)
    with _lock:
        if _owner_pid != os.getpid():
            _inherited.extend(_producers.values())
            _producers.clear()
            _owner_pid = os.getpid()
        producer = _producers.get(key)
        if producer is None or producer.closed:
            producer = KafkaBatchProducer(bootstrap_servers, client_config, timeout_ms=timeout_ms,
                                          config_overrides=config_overrides)
            _producers[key] = producer
        return producer


def close_producers(timeout_s: float = 10.0) -> None:
    """Flush and close this process's cached producers (runs at interpreter exit)."""
    with _lock:
        if _owner_pid != os.getpid():
            return
        producers = list(_producers.values())
        _producers.clear()
    for producer in producers:
        producer.close(timeout_s)


atexit.register(close_producers)


@dataclass(frozen=True)
class KafkaWriterSpec:
    """What crosses to Spark's executors to write there: picklable, small; :meth:`producer` gives the
    executor process's :class:`KafkaBatchProducer` for it. ``client_config`` uses Kafka's Java setting names;
    ``config_overrides`` are librdkafka settings. Checked when made (a JKS store fails on the driver)."""

    bootstrap_servers: str
    client_config: tuple[tuple[str, str], ...] = ()
    timeout_ms: int = 30000
    config_overrides: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.timeout_ms, int) or isinstance(self.timeout_ms, bool) or self.timeout_ms < 1:
            raise ValueError(f"timeout_ms must be an int >= 1, got {self.timeout_ms!r}")
        for name in ("client_config", "config_overrides"):
            value = getattr(self, name)
            pairs = value.items() if isinstance(value, Mapping) else value
            object.__setattr__(self, name, tuple(sorted((str(k), _text(v)) for k, v in pairs if v is not None)))
        object.__setattr__(self, "bootstrap_servers", str(self.bootstrap_servers).strip())
        librdkafka_config(self.bootstrap_servers, dict(self.client_config), dict(self.config_overrides))

    @classmethod
    def of(cls, bootstrap_servers: str, client_config: Optional[Mapping[str, Any]] = None, timeout_ms: int = 30000,
           config_overrides: Optional[Mapping[str, Any]] = None) -> "KafkaWriterSpec":
        """A spec from mappings."""
        return cls(bootstrap_servers, tuple(dict(client_config or {}).items()), timeout_ms,
                   tuple(dict(config_overrides or {}).items()))

    def producer(self) -> KafkaBatchProducer:
        return producer_for(self.bootstrap_servers, dict(self.client_config), self.timeout_ms,
                            dict(self.config_overrides) or None)

    def __repr__(self) -> str:
        overrides = f", config_overrides={mask_config(dict(self.config_overrides))!r}" if self.config_overrides else ""
        return (f"KafkaWriterSpec(bootstrap_servers={self.bootstrap_servers!r}, "
                f"client_config={mask_config(dict(self.client_config))!r}, timeout_ms={self.timeout_ms}{overrides})")

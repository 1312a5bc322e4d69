"""Configuration keys, named as Kafka Streams names them, their defaults, and their validation (``StreamsConfig``)."""
from __future__ import annotations

import logging
import os
import random
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from streams_on_spark.error_handlers import (
    DESERIALIZATION_EXCEPTION_HANDLER,
    ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME,
    PROCESSING_EXCEPTION_HANDLER,
    PRODUCTION_EXCEPTION_HANDLER,
    configured_handler,
)

APPLICATION_ID = "application.id"
BOOTSTRAP_SERVERS = "bootstrap.servers"
DEFAULT_KEY_SERDE = "default.key.serde"
DEFAULT_VALUE_SERDE = "default.value.serde"
TOPOLOGY_OPTIMIZATION = "topology.optimization"
DEFAULT_TIMESTAMP_EXTRACTOR = "default.timestamp.extractor"
STATESTORE_CACHE_MAX_BYTES = "statestore.cache.max.bytes"
CACHE_MAX_BYTES_BUFFERING = "cache.max.bytes.buffering"   # the name before Kafka 3.4, still read
DEFAULT_CACHE_MAX_BYTES = 10 * 1024 * 1024
# where the Spark engine keeps tasks' local stores on each executor (default: Spark's per-application files directory)
STATE_DIR = "state.dir"
PROCESSING_GUARANTEE = "processing.guarantee"
AT_LEAST_ONCE = "at_least_once"
EXACTLY_ONCE_V2 = "exactly_once_v2"
# Kafka's private StreamsConfig.InternalConfig key: the wall-clock throttle of ON_WINDOW_CLOSE windowed aggregations
EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION = "__emit.interval.ms.kstreams.windowed.aggregation__"
DEFAULT_EMIT_INTERVAL_MS = 1000
# KIP-1111: building the topology fails when a repartition topic, changelog or store name was generated
ENSURE_EXPLICIT_INTERNAL_RESOURCE_NAMING = "ensure.explicit.internal.resource.naming"
# this library's own keys (KafkaStreams on Spark; streams_on_spark.checkpoint_manifest)
CHECKPOINT_LOCATION = "checkpoint.location"
EMBEDDED_TOPICS_DIR = "embedded.topics.dir"
TRIGGER_INTERVAL = "trigger.interval"
UPGRADE_ALLOW_UNSAFE = "upgrade.allow.unsafe"

log = logging.getLogger(__name__)


class ConfigException(ValueError):
    """Kafka's ``ConfigException``: a configuration value that is missing, of the wrong type or out of range."""

    @staticmethod
    def invalid(name: str, value: Any, message: Optional[str] = None) -> "ConfigException":
        """Kafka's ``ConfigException(name, value, message)``: "Invalid value <v> for configuration <name>: <m>"."""
        return ConfigException(f"Invalid value {value} for configuration {name}" + ("" if message is None
                                                                                     else f": {message}"))


# ---------------------------------------------------------------------------------------------------------- types
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = (
    "BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD")
_BITS = {SHORT: 16, INT: 32, LONG: 64}
_INTEGER = re.compile(r"[+-]?[0-9]+")
_COMMA = re.compile(r"\s*,\s*")


def _type_name(value: Any) -> str:
    return type(value).__name__


def parse_type(name: str, value: Any, type_: str) -> Any:
    """Kafka's ``ConfigDef.parseType``: the value as ``type_``, or a ``ConfigException`` with Kafka's message.

    Python values stand in for Java's: an ``int`` for Integer/Long (within the type's range), ``str`` paths and
    ``os.PathLike`` for STRING, any object but a number, bool or collection for CLASS (a class, an instance, a
    callable or a class name: what the library resolves it to is checked where it is resolved)."""
    if value is None:
        return None
    trimmed = value.strip() if isinstance(value, str) else None
    if type_ == BOOLEAN:
        if isinstance(value, bool):
            return value
        if trimmed is not None and trimmed.lower() in ("true", "false"):
            return trimmed.lower() == "true"
        raise ConfigException.invalid(name, value, "Expected value to be either true or false")
    if type_ in (STRING, PASSWORD):
        if trimmed is not None:
            return trimmed
        if isinstance(value, os.PathLike):
            return os.fspath(value)
        raise ConfigException.invalid(name, value, f"Expected value to be a string, but it was a {_type_name(value)}")
    if type_ in _BITS:
        bits = _BITS[type_]
        if trimmed is not None:
            if not _INTEGER.fullmatch(trimmed):
                raise ConfigException.invalid(name, value, f"Not a number of type {type_}")
            number = int(trimmed)
        elif isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            what = {SHORT: "a 16-bit integer (short)", INT: "a 32-bit integer", LONG: "a 64-bit integer (long)"}
            raise ConfigException.invalid(name, value, f"Expected value to be {what[type_]}, but it was a "
                                                       f"{_type_name(value)}")
        if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
            raise ConfigException.invalid(name, value, f"Not a number of type {type_}")
        return number
    if type_ == DOUBLE:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if trimmed is not None:
            try:
                return float(trimmed)
            except ValueError:
                raise ConfigException.invalid(name, value, f"Not a number of type {type_}") from None
        raise ConfigException.invalid(name, value, f"Expected value to be a double, but it was a {_type_name(value)}")
    if type_ == LIST:
        if isinstance(value, (list, tuple)):
            return list(value)
        if trimmed is not None:
            return [] if not trimmed else _COMMA.split(trimmed)
        raise ConfigException.invalid(name, value, "Expected a comma separated list.")
    if type_ == CLASS:
        if isinstance(value, (bool, int, float, bytes, list, tuple, dict, set, frozenset)):
            raise ConfigException.invalid(name, value, "Expected a Class instance or class name.")
        return trimmed if trimmed is not None else value
    raise ValueError(f"unknown config type {type_!r} for {name}")


# ----------------------------------------------------------------------------------------------------- validators
@dataclass(frozen=True)
class Range:
    """Kafka's ``ConfigDef.Range``: a number within [min, max] (either end open when ``None``)."""

    min: Optional[float] = None
    max: Optional[float] = None

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigException.invalid(name, None, "Value must be non-null")
        if self.min is not None and value < self.min:
            raise ConfigException.invalid(name, value, f"Value must be at least {self.min}")
        if self.max is not None and value > self.max:
            raise ConfigException.invalid(name, value, f"Value must be no more than {self.max}")


@dataclass(frozen=True)
class ValidString:
    """Kafka's ``ConfigDef.ValidString`` (or ``CaseInsensitiveValidString``): one of the given strings."""

    valid: tuple[Optional[str], ...]
    case_insensitive: bool = False

    def __call__(self, name: str, value: Any) -> None:
        if self.case_insensitive:
            if value is None or str(value).upper() not in {v.upper() for v in self.valid if v is not None}:
                raise ConfigException.invalid(name, value, "String must be one of (case insensitive): "
                                                           + ", ".join(str(v) for v in self.valid))
        elif value not in self.valid:
            raise ConfigException.invalid(name, value, "String must be one of: "
                                                       + ", ".join("null" if v is None else v for v in self.valid))


@dataclass(frozen=True)
class ValidList:
    """Kafka's ``ConfigDef.ValidList``: entries neither empty nor duplicated, optionally from a set of strings."""

    valid: tuple[str, ...] = ()
    empty_allowed: bool = True
    null_allowed: bool = False

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            if self.null_allowed:
                return
            raise ConfigException(f"Configuration '{name}' values must not be null.")
        if not self.empty_allowed and not value:
            valid = "[" + ", ".join(self.valid) + "]" if self.valid else "any non-empty value"
            raise ConfigException(f"Configuration '{name}' must not be empty. Valid values include: {valid}")
        if len(set(map(str, value))) != len(value):
            raise ConfigException(f"Configuration '{name}' values must not be duplicated.")
        for entry in value:
            if isinstance(entry, str):
                if not entry:
                    raise ConfigException(f"Configuration '{name}' values must not be empty.")
                if self.valid:
                    ValidString(self.valid)(name, entry)


@dataclass(frozen=True)
class ListSize:
    """Kafka's ``ConfigDef.ListSize``: at most ``max_size`` entries."""

    max_size: int

    def __call__(self, name: str, value: Any) -> None:
        if value is not None and len(value) > self.max_size:
            shown = "[" + ", ".join(map(str, value)) + "]"
            raise ConfigException.invalid(name, shown, f"exceeds maximum list size of [{self.max_size}].")


_OPTIMIZATIONS = ("all", "none", "reuse.ktable.source.topics", "merge.repartition.topics", "single.store.self.join")


def _topology_optimization(name: str, value: Any) -> None:
    """Kafka's ``verifyTopologyOptimizationConfigs``: ``all``, ``none`` or a comma list of the rules."""
    rules = _COMMA.split(str(value)) if value is not None else [None]
    acceptable = ("Acceptable values are: none, all, or a comma separated list of specific optimizations: "
                  "(reuse.ktable.source.topics, merge.repartition.topics, single.store.self.join).")
    if ("none" in rules or "all" in rules) and len(rules) > 1:
        raise ConfigException.invalid(name, value, f"\"{value}\" is not a valid optimization config. {acceptable}")
    if any(rule not in _OPTIMIZATIONS for rule in rules):
        raise ConfigException.invalid(name, value, f"Unrecognized config. {acceptable}")


def _serde(name: str, value: Any) -> None:
    """A default serde: an instance with ``serialize`` and ``deserialize`` (the library does not load classes)."""
    if value is None or (hasattr(value, "serialize") and hasattr(value, "deserialize")):
        return
    if isinstance(value, str):
        raise ConfigException.invalid(name, value, f"Class {value} could not be found.")
    raise ConfigException.invalid(name, value, "Expected a Serde instance (e.g. Serdes.String()), but it was a "
                                               f"{_type_name(value)}")


def _topic_name(name: str, value: Any) -> None:
    """A topic name: a non-empty string (the dead letter queue topic)."""
    if value is not None and not value:
        raise ConfigException(f"Invalid value {value!r} for configuration {name}: expected a topic name")


NO_DEFAULT = object()


@dataclass(frozen=True)
class ConfigKey:
    """One known key, as Kafka's ``ConfigDef.ConfigKey``: its type, default and validator."""

    name: str
    type: str
    default: Any = None
    validator: Optional[Callable[[str, Any], None]] = None


def _keys(*keys: ConfigKey) -> dict[str, ConfigKey]:
    return {k.name: k for k in keys}


_AT_LEAST_0 = Range(0)
# Kafka 4.3.1's StreamsConfig.configDef(): every key, with its type, default and validator
STREAMS_CONFIG_KEYS: dict[str, ConfigKey] = _keys(
    ConfigKey(APPLICATION_ID, STRING, NO_DEFAULT),
    ConfigKey(BOOTSTRAP_SERVERS, LIST, None, ValidList(empty_allowed=False)),
    ConfigKey("num.standby.replicas", INT, 0),
    ConfigKey("processing.exception.handler.global.enabled", BOOLEAN, False),
    ConfigKey(STATE_DIR, STRING, None),
    ConfigKey(ENSURE_EXPLICIT_INTERNAL_RESOURCE_NAMING, BOOLEAN, False),
    ConfigKey("acceptable.recovery.lag", LONG, 10000, _AT_LEAST_0),
    ConfigKey(CACHE_MAX_BYTES_BUFFERING, LONG, DEFAULT_CACHE_MAX_BYTES, _AT_LEAST_0),
    ConfigKey(STATESTORE_CACHE_MAX_BYTES, LONG, DEFAULT_CACHE_MAX_BYTES, _AT_LEAST_0),
    ConfigKey("client.id", STRING, ""),
    ConfigKey("default.deserialization.exception.handler", CLASS),
    ConfigKey(DEFAULT_KEY_SERDE, CLASS, None, _serde),
    ConfigKey("default.list.key.serde.inner", CLASS),
    ConfigKey("default.list.value.serde.inner", CLASS),
    ConfigKey("default.list.key.serde.type", CLASS),
    ConfigKey("default.list.value.serde.type", CLASS),
    ConfigKey("default.production.exception.handler", CLASS),
    ConfigKey(DEFAULT_TIMESTAMP_EXTRACTOR, CLASS),
    ConfigKey(DEFAULT_VALUE_SERDE, CLASS, None, _serde),
    ConfigKey(DESERIALIZATION_EXCEPTION_HANDLER, CLASS),
    ConfigKey(ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME, STRING, None, _topic_name),
    ConfigKey("max.task.idle.ms", LONG, 0),
    ConfigKey("max.warmup.replicas", INT, 2, Range(1)),
    ConfigKey("num.stream.threads", INT, 1),
    ConfigKey(PROCESSING_EXCEPTION_HANDLER, CLASS),
    ConfigKey(PROCESSING_GUARANTEE, STRING, AT_LEAST_ONCE, ValidString((AT_LEAST_ONCE, EXACTLY_ONCE_V2))),
    ConfigKey(PRODUCTION_EXCEPTION_HANDLER, CLASS),
    ConfigKey("task.assignor.class", STRING),
    ConfigKey("replication.factor", INT, -1),
    ConfigKey("security.protocol", STRING, "PLAINTEXT",
              ValidString(("SASL_SSL", "PLAINTEXT", "SSL", "SASL_PLAINTEXT"), case_insensitive=True)),
    ConfigKey("task.timeout.ms", LONG, 300000, _AT_LEAST_0),
    ConfigKey(TOPOLOGY_OPTIMIZATION, STRING, "none", _topology_optimization),
    ConfigKey("group.protocol", STRING, "classic", ValidString(("STREAMS", "CLASSIC"), case_insensitive=True)),
    ConfigKey("allow.os.group.write.access", BOOLEAN, False),
    ConfigKey("application.server", STRING, ""),
    ConfigKey("buffered.records.per.partition", INT, 1000),
    ConfigKey("built.in.metrics.version", STRING, "latest", ValidString(("latest",))),
    ConfigKey("commit.interval.ms", LONG, 30000, _AT_LEAST_0),
    ConfigKey("config.providers", LIST, [], ValidList()),
    ConfigKey("enable.metrics.push", BOOLEAN, True),
    ConfigKey("rack.aware.assignment.non_overlap_cost", INT),
    ConfigKey("rack.aware.assignment.strategy", STRING, "none",
              ValidString(("none", "min_traffic", "balance_subtopology"))),
    ConfigKey("rack.aware.assignment.tags", LIST, [], ListSize(5)),
    ConfigKey("rack.aware.assignment.traffic_cost", INT),
    ConfigKey("repartition.purge.interval.ms", LONG, 30000, _AT_LEAST_0),
    ConfigKey("connections.max.idle.ms", LONG, 540000),
    ConfigKey("default.dsl.store", STRING, "rocksDB", ValidString(("rocksDB", "in_memory"))),
    ConfigKey("dsl.store.suppliers.class", CLASS),
    ConfigKey("dsl.store.format", STRING, "DEFAULT", ValidString(("HEADERS", "DEFAULT"), case_insensitive=True)),
    ConfigKey("default.client.supplier", CLASS),
    ConfigKey("log.summary.interval.ms", LONG, 120000),
    ConfigKey("metadata.max.age.ms", LONG, 300000, _AT_LEAST_0),
    ConfigKey("metrics.num.samples", INT, 2, Range(1)),
    ConfigKey("metric.reporters", LIST, ["org.apache.kafka.common.metrics.JmxReporter"], ValidList()),
    ConfigKey("metrics.recording.level", STRING, "INFO", ValidString(("INFO", "DEBUG", "TRACE"))),
    ConfigKey("metrics.sample.window.ms", LONG, 30000, _AT_LEAST_0),
    ConfigKey("poll.ms", LONG, 100),
    ConfigKey("probing.rebalance.interval.ms", LONG, 600000, Range(60000)),
    ConfigKey("processor.wrapper.class", CLASS),
    ConfigKey("receive.buffer.bytes", INT, 32768, Range(-1)),
    ConfigKey("reconnect.backoff.ms", LONG, 50, _AT_LEAST_0),
    ConfigKey("reconnect.backoff.max.ms", LONG, 1000, _AT_LEAST_0),
    ConfigKey("retry.backoff.ms", LONG, 100, _AT_LEAST_0),
    ConfigKey("request.timeout.ms", INT, 40000, _AT_LEAST_0),
    ConfigKey("metadata.recovery.strategy", STRING, "rebootstrap",
              ValidString(("REBOOTSTRAP", "NONE"), case_insensitive=True)),
    ConfigKey("metadata.recovery.rebootstrap.trigger.ms", LONG, 300000, _AT_LEAST_0),
    ConfigKey("rocksdb.config.setter", CLASS),
    ConfigKey("send.buffer.bytes", INT, 131072, Range(-1)),
    ConfigKey("state.cleanup.delay.ms", LONG, 600000),
    ConfigKey("state.cleanup.dir.max.age.ms", LONG, -1),
    ConfigKey("upgrade.from", STRING, None, ValidString((None, "2.4", "2.5", "2.6", "2.7", "2.8", "3.0", "3.1", "3.2",
                                                        "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0", "4.1",
                                                        "4.2"))),
    ConfigKey("windowed.inner.class.serde", STRING),
    ConfigKey("windowstore.changelog.additional.retention.ms", LONG, 86400000),
    ConfigKey("window.size.ms", LONG),
)
# keys only this library reads (KafkaStreams on Spark, the checkpoint manifest)
LIBRARY_CONFIG_KEYS: dict[str, ConfigKey] = _keys(
    ConfigKey(CHECKPOINT_LOCATION, STRING),
    ConfigKey(EMBEDDED_TOPICS_DIR, STRING),
    ConfigKey(TRIGGER_INTERVAL, STRING, "100 milliseconds"),
    ConfigKey(UPGRADE_ALLOW_UNSAFE, BOOLEAN, False),
)
# Kafka 4.3.1's ConsumerConfig, ProducerConfig and AdminClientConfig names that StreamsConfig does not define itself
# (ssl.*, sasl.* and security.* are known by prefix): StreamsConfig hands these to its clients
CLIENT_CONFIG_NAMES = frozenset("""
acks allow.auto.create.topics auto.commit.interval.ms auto.offset.reset batch.size bootstrap.controllers
buffer.memory check.crcs client.dns.lookup client.rack compression.gzip.level compression.lz4.level compression.type
compression.zstd.level default.api.timeout.ms delivery.timeout.ms enable.auto.commit enable.idempotence
exclude.internal.topics fetch.max.bytes fetch.max.wait.ms fetch.min.bytes group.id group.instance.id
group.remote.assignor heartbeat.interval.ms interceptor.classes internal.throw.on.fetch.stable.offset.unsupported
isolation.level key.deserializer key.serializer linger.ms max.block.ms max.in.flight.requests.per.connection
max.partition.fetch.bytes max.poll.interval.ms max.poll.records max.request.size metadata.max.idle.ms
partition.assignment.strategy partitioner.adaptive.partitioning.enable partitioner.availability.timeout.ms
partitioner.class partitioner.ignore.keys retries retry.backoff.max.ms session.timeout.ms share.acknowledgement.mode
share.acquire.mode socket.connection.setup.timeout.max.ms socket.connection.setup.timeout.ms transaction.timeout.ms
transaction.two.phase.commit.enable transactional.id value.deserializer value.serializer
""".split())
# StreamsConfig's client and topic prefixes (originalsWithPrefix), and the client security settings
KNOWN_PREFIXES = ("consumer.", "main.consumer.", "restore.consumer.", "global.consumer.", "producer.", "admin.",
                  "topic.", "client.tag.", "security.", "sasl.", "ssl.")

_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
_MAX_TOPIC_LENGTH = 249
_warned_unknown: set[str] = set()
_warned_lock = threading.Lock()


def is_known_config(key: str) -> bool:
    """Whether Kafka Streams (or this library) knows ``key``: a StreamsConfig or client config, a prefixed client
    or topic config, or one of Kafka's private ``__internal__`` keys."""
    return (key in STREAMS_CONFIG_KEYS or key in LIBRARY_CONFIG_KEYS or key in CLIENT_CONFIG_NAMES
            or key.startswith(KNOWN_PREFIXES) or (key.startswith("__") and key.endswith("__")))


def check_application_id(value: Any) -> str:
    """``application.id`` prefixes every internal topic (``<application.id>-<name>``), which Kafka validates with
    ``Topic.validate`` when it creates them: check its characters up front, naming the key."""
    if not value:
        raise ConfigException.invalid(APPLICATION_ID, value, "the empty string is not allowed")
    if not _LEGAL_TOPIC.fullmatch(value):
        raise ConfigException.invalid(APPLICATION_ID, value, f"'{value}' contains one or more characters other "
                                      "than ASCII alphanumerics, '.', '_' and '-' (it prefixes the application's "
                                      "internal topic names)")
    if len(value) > _MAX_TOPIC_LENGTH:
        raise ConfigException.invalid(APPLICATION_ID, value, f"the length of '{value}' is longer than the max "
                                      f"allowed length {_MAX_TOPIC_LENGTH} (it prefixes the application's internal "
                                      "topic names)")
    return value


class StreamsConfig:
    """Kafka's ``StreamsConfig``: the application config checked once, at construction, as Kafka checks it.

    Each known key is parsed to its type and validated (a :class:`ConfigException`, a ``ValueError``, with Kafka's
    message naming the key and value); ``application.id`` is required and must be a legal topic prefix; a key
    neither Kafka Streams, its clients nor this library knows is logged once per process at WARNING.
    """

    def __init__(self, props: Optional[Mapping[str, Any]], default_application_id: Optional[str] = None) -> None:
        self.originals: dict[str, Any] = dict(props or {})
        self.values: dict[str, Any] = {}
        if self.originals.get(APPLICATION_ID) is None and default_application_id is not None:
            self.originals[APPLICATION_ID] = default_application_id
        for key, value in self.originals.items():
            if not isinstance(key, str):   # AbstractConfig's check of its originals
                raise ConfigException.invalid(str(key), value, "Key must be a string.")
            definition = STREAMS_CONFIG_KEYS.get(key) or LIBRARY_CONFIG_KEYS.get(key)
            if definition is None:
                if not is_known_config(key):
                    _warn_unknown(key)
                continue
            if key == BOOTSTRAP_SERVERS and value is None:
                continue   # no Kafka: the library's embedded topics
            parsed = parse_type(key, value, definition.type)
            if definition.validator is not None:
                definition.validator(key, parsed)
            self.values[key] = parsed
        app_id = self.values.get(APPLICATION_ID)
        if app_id is None:
            raise ConfigException(f"Missing required configuration \"{APPLICATION_ID}\" which has no default value.")
        check_application_id(app_id)

    def get(self, key: str) -> Any:
        """The parsed value of ``key``, or its default (``None`` for a key without one)."""
        if key in self.values:
            return self.values[key]
        definition = STREAMS_CONFIG_KEYS.get(key) or LIBRARY_CONFIG_KEYS.get(key)
        if definition is None:
            raise ConfigException(f"Unknown configuration '{key}'")
        return None if definition.default is NO_DEFAULT else definition.default

    @property
    def application_id(self) -> str:
        return self.values[APPLICATION_ID]


def _warn_unknown(key: str) -> None:
    """Kafka's wording for a supplied key nobody knows (``AbstractConfig.logUnused`` up to Kafka 3.x; 4.x logs the
    unused keys together at INFO instead), once per key per process."""
    with _warned_lock:
        if key in _warned_unknown:
            return
        _warned_unknown.add(key)
    log.warning("The configuration '%s' was supplied but isn't a known config.", key)


def _handler_field(key: str) -> Any:
    """A ``TaskConfig`` field holding the error handler ``key`` names (Kafka's default when not configured)."""
    return field(default_factory=lambda: configured_handler({}, key), compare=False, repr=False)


@dataclass(frozen=True)
class TaskConfig:
    """What a task reads from the application config."""

    application_id: str
    default_key_serde: Any = None
    default_value_serde: Any = None
    # error handlers, resolved and configured once (streams_on_spark.error_handlers)
    deserialization_handler: Any = _handler_field(DESERIALIZATION_EXCEPTION_HANDLER)
    processing_handler: Any = _handler_field(PROCESSING_EXCEPTION_HANDLER)
    production_handler: Any = _handler_field(PRODUCTION_EXCEPTION_HANDLER)
    dead_letter_queue_topic: Optional[str] = None
    timestamp_extractor: Any = None
    cache_max_bytes: int = DEFAULT_CACHE_MAX_BYTES
    # Kafka's test driver commits after every record; an application commits per micro-batch on Spark
    commit_every_record: bool = False
    processing_guarantee: str = AT_LEAST_ONCE
    # everything the application was configured with, for ``ProcessorContext.app_configs()``; never printed, as it
    # may hold client secrets
    app_configs: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @staticmethod
    def from_config(config: Optional[Mapping[str, Any]], default_app_id: Optional[str] = None, *,
                    commit_every_record: bool = False) -> "TaskConfig":
        """The task's view of ``config``, validated once through :class:`StreamsConfig`."""
        config = dict(config or {})
        streams_config = StreamsConfig(config, default_app_id)
        cache_key = STATESTORE_CACHE_MAX_BYTES if STATESTORE_CACHE_MAX_BYTES in config else CACHE_MAX_BYTES_BUFFERING
        return TaskConfig(streams_config.application_id, config.get(DEFAULT_KEY_SERDE),
                          config.get(DEFAULT_VALUE_SERDE),
                          configured_handler(config, DESERIALIZATION_EXCEPTION_HANDLER),
                          configured_handler(config, PROCESSING_EXCEPTION_HANDLER),
                          configured_handler(config, PRODUCTION_EXCEPTION_HANDLER),
                          streams_config.get(ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME),
                          config.get(DEFAULT_TIMESTAMP_EXTRACTOR), streams_config.get(cache_key), commit_every_record,
                          streams_config.get(PROCESSING_GUARANTEE), dict(config))

    @property
    def exactly_once(self) -> bool:
        return self.processing_guarantee == EXACTLY_ONCE_V2


def processing_guarantee(config: Mapping[str, Any]) -> str:
    """``processing.guarantee``: ``at_least_once`` (the default) or ``exactly_once_v2``, with Kafka's error for
    anything else (Kafka 4 removed ``exactly_once`` and ``exactly_once_beta``)."""
    key = STREAMS_CONFIG_KEYS[PROCESSING_GUARANTEE]
    value = parse_type(PROCESSING_GUARANTEE, config.get(PROCESSING_GUARANTEE, AT_LEAST_ONCE), key.type)
    key.validator(PROCESSING_GUARANTEE, value)   # type: ignore[misc]
    return value


def internal_long(config: Mapping[str, Any], key: str, default: int) -> int:
    """Kafka's ``InternalConfig.getLong``: a number, or a numeric string (another string is a ``ValueError``, as
    ``Long.parseLong`` throws); a value of any other type is warned about and the default used."""
    value = config.get(key, default)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"Invalid value {value!r} for internal configuration '{key}': expected a long") from None
    log.warning("Invalid value (%s) on internal configuration '%s'. Please specify a numeric value.", value, key)
    return default


def dummy_application_id() -> str:
    """The test driver's default application id, as Kafka's (``dummy-topology-test-driver-app-id-<n>``)."""
    return f"dummy-topology-test-driver-app-id-{random.randint(0, 2**31 - 1)}"

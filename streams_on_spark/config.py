"""Configuration keys, named as Kafka Streams names them, their defaults, and their validation (``StreamsConfig``)."""
from __future__ import annotations

import difflib
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
from streams_on_spark.errors import ConfigException  # noqa: F401 - Kafka's ConfigException, where config keys live
from streams_on_spark.timestamp_extractors import DEFAULT_TIMESTAMP_EXTRACTOR, timestamp_extractor

APPLICATION_ID = "application.id"
BOOTSTRAP_SERVERS = "bootstrap.servers"
DEFAULT_KEY_SERDE = "default.key.serde"
DEFAULT_VALUE_SERDE = "default.value.serde"
TOPOLOGY_OPTIMIZATION = "topology.optimization"
MAX_TASK_IDLE_MS = "max.task.idle.ms"
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
# ... and of the scans of left/outer stream-stream joins' outer-join store for non-joined records (same default)
EMIT_INTERVAL_MS_KSTREAMS_OUTER_JOIN_SPURIOUS_RESULTS_FIX = (
    "__emit.interval.ms.kstreams.outer.join.spurious.results.fix__")
# KIP-1111: building the topology fails when a repartition topic, changelog or store name was generated
ENSURE_EXPLICIT_INTERNAL_RESOURCE_NAMING = "ensure.explicit.internal.resource.naming"
# KIP-1271/Kafka 4.3: HEADERS builds the DSL's stores headers-aware
DSL_STORE_FORMAT = "dsl.store.format"
# this library's own keys (KafkaStreams on Spark; streams_on_spark.checkpoint_manifest)
CHECKPOINT_LOCATION = "checkpoint.location"
EMBEDDED_TOPICS_DIR = "embedded.topics.dir"
EMBEDDED_TOPICS_BATCH_RECORDS = "embedded.topics.batch.records"
DEFAULT_EMBEDDED_TOPICS_BATCH_RECORDS = 65536
TRIGGER_INTERVAL = "trigger.interval"
UPGRADE_ALLOW_UNSAFE = "upgrade.allow.unsafe"
BATCH_FAST_PATH = "batch.fast.path"
PIPELINE_MODE = "pipeline.mode"
INTERACTIVE_QUERIES = "interactive.queries"
BROKER_WATCH_STALLED_MS = "broker.watch.stalled.ms"
BROKER_WATCH_INTERVAL_MS = "broker.watch.interval.ms"
APPLICATION_SERVER = "application.server"
REPLICATION_FACTOR = "replication.factor"
DEFAULT_API_TIMEOUT_MS = "default.api.timeout.ms"

log = logging.getLogger(__name__)


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
    """One known key, as Kafka's ``ConfigDef.ConfigKey`` (type, default, validator), and what it does here.

    ``effect`` says what the library does with the key (docs/configuration.md shows it). A key without one is
    validated as Kafka's and does nothing on this runtime: ``instead`` says what does its job here, logged once per
    :class:`StreamsConfig` at WARNING when the key is set to another value than its default; ``refused`` keys are
    those an application would rely on where the runtime cannot honour them and results would change: another value
    than the default is a :class:`ConfigException` instead."""

    name: str
    type: str
    default: Any = None
    validator: Optional[Callable[[str, Any], None]] = None
    effect: Optional[str] = None
    instead: str = ""
    refused: bool = False

    @property
    def has_effect(self) -> bool:
        return self.effect is not None

    def is_default(self, value: Any) -> bool:
        """Whether ``value`` (parsed) is the key's default, or unset (``None``); case-insensitive strings compare
        without case, as their validator does."""
        if value is None or value == self.default:
            return True
        case_insensitive = isinstance(self.validator, ValidString) and self.validator.case_insensitive
        return case_insensitive and isinstance(self.default, str) and str(value).upper() == self.default.upper()


def _keys(*keys: ConfigKey) -> dict[str, ConfigKey]:
    return {k.name: k for k in keys}


_AT_LEAST_0 = Range(0)
# what does the job of the keys with no effect here (warnings and docs say it)
_SPARK_SCHEDULES = ("Spark schedules the tasks (one per subtopology and partition) on its executors; there are no "
                    "consumer group rebalances or task assignments to tune")
_CHECKPOINT_STATE = ("state is kept in Spark's checkpoint and a task restores from it wherever Spark runs it; there "
                     "are no standby or warm-up replicas")
_CLIENTS = ("the Kafka clients get security.*, sasl.*, ssl.*, client.id, client.dns.lookup, request.timeout.ms, "
            "default.api.timeout.ms, the consumer's read sizes, the producer's own settings and what is set under "
            "consumer., main.consumer., global.consumer., producer. or admin. (see Kafka: client settings): prefix "
            "this key to reach one")
RESTORE_CONSUMER_PREFIX = "restore.consumer."
_NO_RESTORE_CONSUMER = ("a task's stores are restored from Spark's checkpoint wherever Spark runs it, not from a "
                        "changelog topic: there is no restore consumer")
_METRICS = "read the application's metrics with KafkaStreams.metrics() (see Metrics)"
_SERDE_INSTANCE = "give default.key.serde / default.value.serde a serde instance that carries its own settings"
_STORES = ("the engine picks the stores: in memory in the test driver, a local store per task on Spark's executors "
           "kept in Spark's checkpoint (results are the same)")
# Kafka 4.3.1's StreamsConfig.configDef(): every key, with its type, default and validator
STREAMS_CONFIG_KEYS: dict[str, ConfigKey] = _keys(
    ConfigKey(APPLICATION_ID, STRING, NO_DEFAULT,
              effect="Required. Prefixes internal topics (`<application.id>-<name>-repartition`), names the Spark "
                     "queries, is the consumer group under `exactly_once_v2` and the default checkpoint directory."),
    ConfigKey(BOOTSTRAP_SERVERS, LIST, None, ValidList(empty_allowed=False),
              effect="The Kafka cluster. Absent: topics are the library's embedded topics."),
    ConfigKey("num.standby.replicas", INT, 0, instead=_CHECKPOINT_STATE),
    ConfigKey("processing.exception.handler.global.enabled", BOOLEAN, False,
              instead="an exception in a global store processor always fails the application here"),
    ConfigKey(STATE_DIR, STRING, None,
              effect="Where executors keep tasks' local RocksDB stores (default: Spark's per-application files "
                     "directory); and the root of the default `checkpoint.location` (`<tmp>/kafka-streams` if "
                     "unset)."),
    ConfigKey(ENSURE_EXPLICIT_INTERNAL_RESOURCE_NAMING, BOOLEAN, False,
              effect="KIP-1111: building the topology fails when a repartition topic, changelog or store name was "
                     "generated (else a warning)."),
    ConfigKey("acceptable.recovery.lag", LONG, 10000, _AT_LEAST_0, instead=_CHECKPOINT_STATE),
    ConfigKey(CACHE_MAX_BYTES_BUFFERING, LONG, DEFAULT_CACHE_MAX_BYTES, _AT_LEAST_0,
              effect="Kafka's name before 3.4 of `statestore.cache.max.bytes`, read when that is absent."),
    ConfigKey(STATESTORE_CACHE_MAX_BYTES, LONG, DEFAULT_CACHE_MAX_BYTES, _AT_LEAST_0,
              effect="The record cache per task; 0 turns caching off."),
    ConfigKey("client.id", STRING, "", effect="Passed to the Kafka clients."),
    ConfigKey("default.deserialization.exception.handler", CLASS,
              effect="Kafka's older name of `deserialization.exception.handler`, read (with a warning) when that is "
                     "absent."),
    ConfigKey(DEFAULT_KEY_SERDE, CLASS, None, _serde,
              effect="The key serde (an instance, e.g. `Serdes.String()`) where none is given."),
    ConfigKey("default.list.key.serde.inner", CLASS, instead=_SERDE_INSTANCE),
    ConfigKey("default.list.value.serde.inner", CLASS, instead=_SERDE_INSTANCE),
    ConfigKey("default.list.key.serde.type", CLASS, instead=_SERDE_INSTANCE),
    ConfigKey("default.list.value.serde.type", CLASS, instead=_SERDE_INSTANCE),
    ConfigKey("default.production.exception.handler", CLASS,
              effect="Kafka's older name of `production.exception.handler`, read (with a warning) when that is "
                     "absent."),
    ConfigKey(DEFAULT_TIMESTAMP_EXTRACTOR, CLASS,
              effect="The timestamp extractor of sources that set none: one of Kafka's class names "
                     "(`FailOnInvalidTimestamp`, the default, `LogAndSkipOnInvalidTimestamp`, "
                     "`UsePartitionTimeOnInvalidTimestamp`, `WallclockTimestampExtractor`), a `TimestampExtractor` "
                     "class or instance, or a function `(record, partition_time) -> ms`; see Event time."),
    ConfigKey(DEFAULT_VALUE_SERDE, CLASS, None, _serde, effect="The value serde (an instance) where none is given."),
    ConfigKey(DESERIALIZATION_EXCEPTION_HANDLER, CLASS,
              effect="A source record that cannot be deserialized: see Error handling."),
    ConfigKey(ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME, STRING, None, _topic_name,
              effect="KIP-1034's dead letter queue topic: see Error handling."),
    ConfigKey(MAX_TASK_IDLE_MS, LONG, 0,
              effect="How long (ms of the wall clock) a task with several input partitions waits for an empty one "
                     "before it processes the others' records (-1: never waits; see Waiting for empty partitions). "
                     "The test driver waits as Kafka's does; on Spark, where a micro-batch holds what every "
                     "partition had, only 0 and -1 are accepted."),
    ConfigKey("max.warmup.replicas", INT, 2, Range(1), instead=_CHECKPOINT_STATE),
    ConfigKey("num.stream.threads", INT, 1,
              instead="parallelism is one task per subtopology and partition, run on Spark's executors: give Spark "
                      "more cores or executors (and the topics more partitions)"),
    ConfigKey(PROCESSING_EXCEPTION_HANDLER, CLASS,
              effect="A processor or punctuator that raises (KIP-1033): see Error handling."),
    ConfigKey(PROCESSING_GUARANTEE, STRING, AT_LEAST_ONCE, ValidString((AT_LEAST_ONCE, EXACTLY_ONCE_V2)),
              effect="`at_least_once` or `exactly_once_v2` (one Kafka transaction per task and micro-batch)."),
    ConfigKey(PRODUCTION_EXCEPTION_HANDLER, CLASS,
              effect="A sink record that cannot be serialized: see Error handling."),
    ConfigKey("task.assignor.class", STRING, instead=_SPARK_SCHEDULES),
    ConfigKey(REPLICATION_FACTOR, INT, -1,
              effect="The replication factor of the topics the application creates on Kafka (repartition and "
                     "foreign-key topics); -1: the broker's `default.replication.factor`."),
    ConfigKey("security.protocol", STRING, "PLAINTEXT",
              ValidString(("SASL_SSL", "PLAINTEXT", "SSL", "SASL_PLAINTEXT"), case_insensitive=True),
              effect="Passed to the Kafka clients (with `sasl.*` and `ssl.*`)."),
    ConfigKey("task.timeout.ms", LONG, 300000, _AT_LEAST_0,
              instead="a client timeout fails the micro-batch's Spark task, which Spark retries (spark.task."
                      "maxFailures)"),
    ConfigKey(TOPOLOGY_OPTIMIZATION, STRING, "none", _topology_optimization,
              effect="Read by `StreamsBuilder.build(config)`; recorded in the checkpoint's topology.json."),
    ConfigKey("group.protocol", STRING, "classic", ValidString(("STREAMS", "CLASSIC"), case_insensitive=True),
              instead=_SPARK_SCHEDULES),
    ConfigKey("allow.os.group.write.access", BOOLEAN, False,
              instead="the local stores' directories get the executor process's default permissions"),
    ConfigKey(APPLICATION_SERVER, STRING, "",
              effect="`host:port` of this instance: the host `query_metadata_for_key()` names (see Querying state)."),
    ConfigKey("buffered.records.per.partition", INT, 1000,
              instead="a task processes the whole micro-batch Spark's source gives it"),
    ConfigKey("built.in.metrics.version", STRING, "latest", ValidString(("latest",)), instead=_METRICS),
    ConfigKey("commit.interval.ms", LONG, 30000, _AT_LEAST_0,
              instead="on Spark each micro-batch is one commit, so trigger.interval sets how often; the test driver "
                      "commits after every record, as Kafka's does"),
    ConfigKey("config.providers", LIST, [], ValidList(), refused=True,
              instead="values referring to a config provider (${provider:path:key}) would be used unresolved: "
                      "resolve them before building the config"),
    ConfigKey("enable.metrics.push", BOOLEAN, True, instead="nothing is pushed to the broker; " + _METRICS),
    ConfigKey("rack.aware.assignment.non_overlap_cost", INT, instead=_SPARK_SCHEDULES),
    ConfigKey("rack.aware.assignment.strategy", STRING, "none",
              ValidString(("none", "min_traffic", "balance_subtopology")), instead=_SPARK_SCHEDULES),
    ConfigKey("rack.aware.assignment.tags", LIST, [], ListSize(5), instead=_SPARK_SCHEDULES),
    ConfigKey("rack.aware.assignment.traffic_cost", INT, instead=_SPARK_SCHEDULES),
    ConfigKey("repartition.purge.interval.ms", LONG, 30000, _AT_LEAST_0,
              instead="the library does not purge repartition topics: their records stay until the topic's own "
                      "retention deletes them"),
    ConfigKey("connections.max.idle.ms", LONG, 540000, instead=_CLIENTS),
    ConfigKey("default.dsl.store", STRING, "rocksDB", ValidString(("rocksDB", "in_memory")), instead=_STORES),
    ConfigKey("dsl.store.suppliers.class", CLASS, instead=_STORES),
    ConfigKey(DSL_STORE_FORMAT, STRING, "DEFAULT", ValidString(("HEADERS", "DEFAULT"), case_insensitive=True),
              effect="`HEADERS` (Kafka 4.3, any case): the DSL's stores are headers-aware stores, as Kafka "
                     "builds them: those of aggregations (windowed and session ones too) and tables (sources, global "
                     "tables, materialized filter, map_values, transform_values, table-table and foreign-key joins) "
                     "with empty headers, a stream-stream join's windows with each record's headers. The driver's "
                     "`..._with_headers` accessors read them, the other accessors through views; the outer join's "
                     "shared store stays as it is, and a store over a supplier the application gives follows the "
                     "supplier (headers-aware for a headers-aware supplier, in either format). See State and "
                     "checkpoints."),
    ConfigKey("default.client.supplier", CLASS,
              instead="the clients are Spark's Kafka source and the library's own admin client and producers"),
    ConfigKey("log.summary.interval.ms", LONG, 120000,
              instead="Spark reports each micro-batch's progress (StreamingQuery.lastProgress)"),
    ConfigKey("metadata.max.age.ms", LONG, 300000, _AT_LEAST_0, instead=_CLIENTS),
    ConfigKey("metrics.num.samples", INT, 2, Range(1),
              instead="rates and averages are sampled over Kafka's default windows (2 of 30 s)"),
    ConfigKey("metric.reporters", LIST, ["org.apache.kafka.common.metrics.JmxReporter"], ValidList(),
              instead=_METRICS),
    ConfigKey("metrics.recording.level", STRING, "INFO", ValidString(("INFO", "DEBUG", "TRACE")),
              instead="the metrics the library provides are recorded at any level; " + _METRICS),
    ConfigKey("metrics.sample.window.ms", LONG, 30000, _AT_LEAST_0,
              instead="rates and averages are sampled over Kafka's default windows (2 of 30 s)"),
    ConfigKey("poll.ms", LONG, 100, instead="trigger.interval sets how often a query looks for new data"),
    ConfigKey("probing.rebalance.interval.ms", LONG, 600000, Range(60000), instead=_SPARK_SCHEDULES),
    ConfigKey("processor.wrapper.class", CLASS, refused=True,
              instead="processors are not wrapped here (KIP-1112 is not implemented): wrap them in your "
                      "ProcessorSupplier instead"),
    ConfigKey("receive.buffer.bytes", INT, 32768, Range(-1), instead=_CLIENTS),
    ConfigKey("reconnect.backoff.ms", LONG, 50, _AT_LEAST_0, instead=_CLIENTS),
    ConfigKey("reconnect.backoff.max.ms", LONG, 1000, _AT_LEAST_0, instead=_CLIENTS),
    ConfigKey("retry.backoff.ms", LONG, 100, _AT_LEAST_0, instead=_CLIENTS),
    ConfigKey("request.timeout.ms", INT, 40000, _AT_LEAST_0, effect="Passed to the Kafka clients."),
    ConfigKey("metadata.recovery.strategy", STRING, "rebootstrap",
              ValidString(("REBOOTSTRAP", "NONE"), case_insensitive=True), instead=_CLIENTS),
    ConfigKey("metadata.recovery.rebootstrap.trigger.ms", LONG, 300000, _AT_LEAST_0, instead=_CLIENTS),
    ConfigKey("rocksdb.config.setter", CLASS, instead="the executors' local stores are not tuned through it"),
    ConfigKey("send.buffer.bytes", INT, 131072, Range(-1), instead=_CLIENTS),
    ConfigKey("state.cleanup.delay.ms", LONG, 600000,
              instead="Spark cleans its checkpoint (spark.sql.streaming.minBatchesToRetain)"),
    ConfigKey("state.cleanup.dir.max.age.ms", LONG, -1,
              instead="Spark cleans its checkpoint (spark.sql.streaming.minBatchesToRetain)"),
    ConfigKey("upgrade.from", STRING, None, ValidString((None, "2.4", "2.5", "2.6", "2.7", "2.8", "3.0", "3.1", "3.2",
                                                        "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0", "4.1",
                                                        "4.2")),
              instead="a restart checks the topology against the checkpoint's (see Upgrades and "
                      "upgrade.allow.unsafe)"),
    ConfigKey("windowed.inner.class.serde", STRING, instead=_SERDE_INSTANCE),
    ConfigKey("windowstore.changelog.additional.retention.ms", LONG, 86400000,
              instead="there are no changelog topics: state is kept in Spark's checkpoint"),
    ConfigKey("window.size.ms", LONG, instead=_SERDE_INSTANCE),
)
# keys only this library reads (KafkaStreams on Spark, the checkpoint manifest)
LIBRARY_CONFIG_KEYS: dict[str, ConfigKey] = _keys(
    ConfigKey(CHECKPOINT_LOCATION, STRING,
              effect="Where the Spark checkpoints live (a path, `hdfs://`, `s3a://`); default "
                     "`<state.dir>/<application.id>`. Starting again on it resumes."),
    ConfigKey(EMBEDDED_TOPICS_DIR, STRING,
              effect="The embedded topics' directory (without `bootstrap.servers`); on a cluster, one every executor "
                     "sees. Default: a temporary directory. Set together with `bootstrap.servers`, `KafkaStreams` "
                     "refuses both with a `ConfigException` (the topics are either Kafka's or embedded)."),
    ConfigKey(EMBEDDED_TOPICS_BATCH_RECORDS, INT, DEFAULT_EMBEDDED_TOPICS_BATCH_RECORDS, Range(1),
              effect="The most records of one topic-partition the embedded topics' Spark source hands a task as one "
                     "record batch: a micro-batch with more gives the task several, in offset order. Spark's Kafka "
                     "source packs its records per Arrow batch of `spark.sql.execution.arrow.maxRecordsPerBatch` "
                     "(10,000): the same value gives the embedded topics' tasks the same record batches; a smaller "
                     "one has a test's few records reach its tasks as several record batches. No effect with "
                     "`bootstrap.servers` (another value than the default logs a warning)."),
    ConfigKey(TRIGGER_INTERVAL, STRING, "100 milliseconds",
              effect="Spark's processing-time trigger of every query (how often it looks for new data)."),
    ConfigKey(UPGRADE_ALLOW_UNSAFE, BOOLEAN, False,
              effect="`true` starts despite a topology change that loses state (see Upgrades)."),
    ConfigKey(BATCH_FAST_PATH, BOOLEAN, True,
              effect="`true` runs a micro-batch on Spark through a task's fused stateless chains or its aggregation "
                     "folded per key, where that gives exactly the per-record path's results (see Performance); "
                     "`false` takes every record through the per-record path."),
    ConfigKey(PIPELINE_MODE, BOOLEAN, False,
              effect="Opt-in, beyond Kafka Streams' shape: `true` runs a stateless subtopology that only feeds a "
                     "repartition topic before the shuffle of the query of the subtopology reading it (one query "
                     "for both; Spark's shuffle replaces the topic, which is not created). Switching it on an "
                     "existing checkpoint is refused (see Performance)."),
    ConfigKey(INTERACTIVE_QUERIES, BOOLEAN, False,
              effect="`true` keeps a copy of every task's stores on the driver, fed with each micro-batch's store "
                     "changes, so `KafkaStreams.store()`/`query()` answer without a Spark job (see Querying state); "
                     "it holds the whole state in the driver's memory."),
    ConfigKey(BROKER_WATCH_STALLED_MS, LONG, 5000, Range(1),
              effect="With Kafka on Spark: after this long without progress of any query (a batch, or an idle "
                     "query's no-data report, every 10 s by Spark's default), the broker watch tries to reach "
                     "`bootstrap.servers` and says once that Kafka is unreachable (and once that it is back): Spark's "
                     "Kafka source waits without a word."),
    ConfigKey(BROKER_WATCH_INTERVAL_MS, LONG, 1000, Range(1),
              effect="How often the broker watch looks whether the queries stalled (and, while they do or an outage "
                     "is being reported, tries the brokers)."),
    # a client key (AdminClientConfig's, default 60 s there): the library's own admin calls wait 10 s unless set
    ConfigKey(DEFAULT_API_TIMEOUT_MS, INT, 10_000, _AT_LEAST_0,
              effect="How long the library's Kafka admin calls (listing, creating and deleting topics, the consumer "
                     "group's offsets) wait for the brokers; when set, also handed to the Kafka clients."),
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

_CLIENT_PREFIXES = ("consumer.", "main.consumer.", "restore.consumer.", "global.consumer.", "producer.", "admin.")
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
_MAX_TOPIC_LENGTH = 249
_warned_unknown: set[str] = set()
_warned_lock = threading.Lock()
# the library's keys that act on its embedded topics alone, and what does their job when the application reads Kafka
EMBEDDED_ONLY_KEYS = {
    EMBEDDED_TOPICS_BATCH_RECORDS: "it sizes the record batches of the embedded topics' Spark source; Spark's Kafka "
                                   "source packs the records of Kafka's topics per Arrow batch of "
                                   "spark.sql.execution.arrow.maxRecordsPerBatch",
}


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
    neither Kafka Streams, its clients nor this library knows is logged once per process at WARNING. A key with no
    effect here (:attr:`ConfigKey.effect` unset) set to another value than its default is logged at WARNING once per
    config object, as Kafka logs the unused keys of each config it builds: every application or test driver made
    with it is told, and one config is told once; a ``refused`` key set so is a :class:`ConfigException`.
    """

    def __init__(self, props: Optional[Mapping[str, Any]], default_application_id: Optional[str] = None) -> None:
        self.originals: dict[str, Any] = dict(props or {})
        self.values: dict[str, Any] = {}
        self._warned_no_effect: set[str] = set()
        if self.originals.get(APPLICATION_ID) is None and default_application_id is not None:
            self.originals[APPLICATION_ID] = default_application_id
        for key, value in self.originals.items():
            if not isinstance(key, str):   # AbstractConfig's check of its originals
                raise ConfigException.invalid(str(key), value, "Key must be a string.")
            definition = STREAMS_CONFIG_KEYS.get(key) or LIBRARY_CONFIG_KEYS.get(key)
            if definition is None:
                if not is_known_config(key):
                    _warn_unknown(key)
                elif key.startswith(RESTORE_CONSUMER_PREFIX) and key not in self._warned_no_effect:
                    self._warned_no_effect.add(key)
                    log.warning("The configuration '%s' was supplied but has no effect on streams-on-spark: %s.",
                                key, _NO_RESTORE_CONSUMER)
                continue
            if key == BOOTSTRAP_SERVERS and value is None:
                continue   # no Kafka: the library's embedded topics
            parsed = parse_type(key, value, definition.type)
            if definition.validator is not None:
                definition.validator(key, parsed)
            self._check_effect(definition, parsed)
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

    def check_embedded_only_keys(self) -> None:
        """Check the library's keys that act on its embedded topics alone in an application reading Kafka
        (``bootstrap.servers``): ``embedded.topics.dir`` says where the application's topics are, as
        ``bootstrap.servers`` does, so both set is a :class:`ConfigException` naming both (one of them would be
        ignored); the others (``EMBEDDED_ONLY_KEYS``) set to another value than their default have no effect and are
        warned about once per config object, as :meth:`_check_effect` warns. Called by ``KafkaStreams``, which decides
        between Kafka and the embedded topics (a test driver reads neither, whatever ``bootstrap.servers`` says)."""
        topics_dir = self.values.get(EMBEDDED_TOPICS_DIR)
        if topics_dir is not None:
            raise ConfigException(f"Both '{BOOTSTRAP_SERVERS}' and '{EMBEDDED_TOPICS_DIR}' are set "
                                  f"({EMBEDDED_TOPICS_DIR}={topics_dir}): an application's topics are either on the "
                                  f"Kafka cluster of {BOOTSTRAP_SERVERS} or the embedded topics in "
                                  f"{EMBEDDED_TOPICS_DIR}; set only one of them.")
        for key, instead in EMBEDDED_ONLY_KEYS.items():
            value = self.values.get(key)
            if LIBRARY_CONFIG_KEYS[key].is_default(value) or key in self._warned_no_effect:
                continue
            self._warned_no_effect.add(key)
            log.warning("The configuration '%s' was supplied but has no effect on streams-on-spark with %s set: %s.",
                        key, BOOTSTRAP_SERVERS, instead)

    def _check_effect(self, definition: ConfigKey, value: Any) -> None:
        """Refuse or warn about ``value`` of a key that does nothing here, unless it is the key's default."""
        if definition.has_effect or definition.is_default(value):
            return
        if definition.refused:
            shown = "[" + ", ".join(map(str, value)) + "]" if isinstance(value, list) else value
            raise ConfigException.invalid(definition.name, shown, f"not supported by streams-on-spark: "
                                                                  f"{definition.instead}")
        if definition.name in self._warned_no_effect:
            return
        self._warned_no_effect.add(definition.name)
        log.warning("The configuration '%s' was supplied but has no effect on streams-on-spark: %s.",
                    definition.name, definition.instead)


def suggest_config(key: str) -> Optional[str]:
    """The known key ``key`` most likely misspells, or None: the closest of Kafka Streams', this library's and
    Kafka's client keys (also under the client prefixes, ``consumer.`` ...) by :func:`difflib.get_close_matches`
    (similarity 0.8 or more)."""
    known = [k for k in (*STREAMS_CONFIG_KEYS, *LIBRARY_CONFIG_KEYS, *CLIENT_CONFIG_NAMES) if not k.startswith("__")]
    known += [prefix + k for prefix in _CLIENT_PREFIXES for k in CLIENT_CONFIG_NAMES]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
    return close[0] if close else None


def _warn_unknown(key: str) -> None:
    """Kafka's wording for a supplied key nobody knows (``AbstractConfig.logUnused`` up to Kafka 3.x; 4.x logs the
    unused keys together at INFO instead), once per key per process, with the known key it most likely misspells."""
    with _warned_lock:
        if key in _warned_unknown:
            return
        _warned_unknown.add(key)
    suggestion = suggest_config(key)
    log.warning("The configuration '%s' was supplied but isn't a known config.%s", key,
                f" Did you mean '{suggestion}'?" if suggestion else "")


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
    timestamp_extractor: Any = None   # a TimestampExtractor; None: Kafka's default, FailOnInvalidTimestamp
    # max.task.idle.ms: > 0, a task waits that long for its empty partitions (Kafka's PartitionGroup.readyToProcess)
    max_task_idle_ms: int = 0
    cache_max_bytes: int = DEFAULT_CACHE_MAX_BYTES
    # Kafka's test driver commits after every record; an application commits per micro-batch on Spark
    commit_every_record: bool = False
    processing_guarantee: str = AT_LEAST_ONCE
    # the batch fast paths (fused stateless chains) where they apply; False: every record one by one
    batch_fast_path: bool = True
    # dsl.store.format=HEADERS: the DSL's stores over the default suppliers are built headers-aware (Kafka 4.3)
    dsl_headers_stores: bool = False
    # the application config, typed (its originals are ``ProcessorContext.app_configs()``); never printed, as it may
    # hold client secrets. None: made from the application id alone
    streams_config: Optional["StreamsConfig"] = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.streams_config is None:
            object.__setattr__(self, "streams_config", StreamsConfig({APPLICATION_ID: self.application_id}))

    @property
    def app_configs(self) -> Mapping[str, Any]:
        """Everything the application was configured with (Kafka's ``StreamsConfig.originals()``)."""
        return self.streams_config.originals   # type: ignore[union-attr]

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
                          timestamp_extractor(config.get(DEFAULT_TIMESTAMP_EXTRACTOR)),
                          streams_config.get(MAX_TASK_IDLE_MS), streams_config.get(cache_key), commit_every_record,
                          streams_config.get(PROCESSING_GUARANTEE), streams_config.get(BATCH_FAST_PATH),
                          streams_config.get(DSL_STORE_FORMAT).upper() == "HEADERS", streams_config)

    @property
    def exactly_once(self) -> bool:
        return self.processing_guarantee == EXACTLY_ONCE_V2

    def check_micro_batches(self) -> None:
        """What Spark's micro-batches cannot honour, refused: a micro-batch hands each task what every input
        partition had up to its end offset (Kafka's lag 0 for all), and the task processes that in timestamp order at
        once; waiting ``max.task.idle.ms`` for an empty partition would carry records into a later batch after Spark
        committed their offsets."""
        if self.max_task_idle_ms > 0:
            raise ConfigException.invalid(MAX_TASK_IDLE_MS, self.max_task_idle_ms,
                                          "on Spark a task processes what its micro-batch holds, in timestamp order "
                                          "across its input partitions, and cannot wait for an empty partition: use "
                                          "0 or -1 (the same there; see docs/configuration.md, Waiting for empty "
                                          "partitions)")


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

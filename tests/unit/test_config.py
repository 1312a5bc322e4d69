"""Application configuration read and checked as Kafka Streams' StreamsConfig reads and checks it."""
from __future__ import annotations

import logging

import pytest

from streams_on_spark import (
    Consumed,
    KafkaStreams,
    Produced,
    Serdes,
    StreamsBuilder,
    TopologyTestDriver,
    TopologyTestDriverBuilder,
)
from streams_on_spark.config import (
    BOOLEAN,
    INT,
    LONG,
    STREAMS_CONFIG_KEYS,
    ConfigException,
    Range,
    StreamsConfig,
    TaskConfig,
)

S = Serdes.String()


def test_the_processing_guarantee_is_at_least_once_unless_exactly_once_v2_is_asked_for():
    assert TaskConfig.from_config({"application.id": "a"}).processing_guarantee == "at_least_once"
    assert not TaskConfig.from_config({"application.id": "a"}).exactly_once
    config = TaskConfig.from_config({"application.id": "a", "processing.guarantee": "exactly_once_v2"})
    assert config.exactly_once and config.processing_guarantee == "exactly_once_v2"


@pytest.mark.parametrize("value", ["exactly_once", "exactly_once_beta", "EXACTLY_ONCE_V2", "at-least-once", None])
def test_another_processing_guarantee_fails_with_kafkas_message(value):
    # Kafka 4.3.1's StreamsConfig: ConfigException with exactly this text (exactly_once and exactly_once_beta were
    # removed in Kafka 4.0)
    with pytest.raises(ValueError) as info:
        TaskConfig.from_config({"application.id": "a", "processing.guarantee": value})
    assert str(info.value) == (f"Invalid value {value} for configuration processing.guarantee: String must be one "
                               "of: at_least_once, exactly_once_v2")


def test_the_test_driver_checks_the_guarantee_too():
    builder = StreamsBuilder()
    builder.stream("in").to("out")
    with pytest.raises(ValueError, match="processing.guarantee"):
        TopologyTestDriver(builder.build(), {"processing.guarantee": "exactly_once"})
    config = {"processing.guarantee": "exactly_once_v2", "default.key.serde": S, "default.value.serde": S}
    with TopologyTestDriver(builder.build(), config) as driver:
        driver.create_input_topic("in", S, S).pipe_input("k", "v")
        assert driver.create_output_topic("out", S, S).read_key_value().value == "v"


def _topology():
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).to("out", Produced.with_(S, S))
    return builder.build()


# ------------------------------------------------------------------------------------------------ unknown keys
def test_an_unknown_key_is_logged_once_with_kafkas_wording(caplog):
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        StreamsConfig({"application.id": "a", "num.stream.thread": 2})     # a typo of num.stream.threads
        StreamsConfig({"application.id": "b", "num.stream.thread": 3})
        with TopologyTestDriver(_topology(), {"num.stream.thread": 4}):
            pass
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert messages == ["The configuration 'num.stream.thread' was supplied but isn't a known config. "
                        "Did you mean 'num.stream.threads'?"]


@pytest.mark.parametrize("key, suggestion", [
    ("deserialisation.exception.handler", "deserialization.exception.handler"),   # Kafka Streams' keys
    ("processing.guarentee", "processing.guarantee"),
    ("checkpoint.locaton", "checkpoint.location"),                                 # this library's
    ("linger.msec", "linger.ms"),                                                  # its clients'
    ("consumr.max.poll.records", "consumer.max.poll.records"),                     # a misspelled client prefix
])
def test_a_misspelled_key_is_warned_about_with_the_known_key_it_misspells(caplog, key, suggestion):
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        with TopologyTestDriver(_topology(), {"application.id": f"typo-{key}", key: "1"}):
            pass
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        f"The configuration '{key}' was supplied but isn't a known config. Did you mean '{suggestion}'?"]


def test_an_unknown_key_like_no_known_one_gets_no_suggestion(caplog):
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        StreamsConfig({"application.id": "a", "my.team.owner": "data-eng"})
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "The configuration 'my.team.owner' was supplied but isn't a known config."]


@pytest.mark.parametrize("key", [
    "num.stream.threads", "commit.interval.ms", "ensure.explicit.internal.resource.naming",   # StreamsConfig's
    "default.api.timeout.ms", "linger.ms", "isolation.level",                                 # its clients'
    "consumer.max.poll.records", "main.consumer.fetch.min.bytes", "producer.acks", "admin.retries",
    "topic.segment.bytes", "security.protocol", "sasl.jaas.config", "ssl.truststore.location",
    "checkpoint.location", "embedded.topics.dir", "trigger.interval", "upgrade.allow.unsafe",    # this library's
    "__emit.interval.ms.kstreams.windowed.aggregation__",                                      # Kafka's internal
])
def test_kafka_streams_client_prefixed_and_library_keys_are_known(caplog, key):
    value = {"security.protocol": "SSL", "ensure.explicit.internal.resource.naming": "false",
             "upgrade.allow.unsafe": "true"}.get(key, "1")
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        StreamsConfig({"application.id": "a", key: value})
    assert "isn't a known config" not in caplog.text


# ------------------------------------------------------------------------------------------------ types and values
@pytest.mark.parametrize("key, value, message", [
    # ConfigDef.parseType
    ("num.stream.threads", "abc", "Invalid value abc for configuration num.stream.threads: Not a number of type INT"),
    ("num.stream.threads", "2147483648", "Invalid value 2147483648 for configuration num.stream.threads: Not a "
                                         "number of type INT"),
    ("num.stream.threads", 2.5, "Invalid value 2.5 for configuration num.stream.threads: Expected value to be a "
                                "32-bit integer, but it was a float"),
    ("commit.interval.ms", "soon", "Invalid value soon for configuration commit.interval.ms: Not a number of type "
                                   "LONG"),
    ("ensure.explicit.internal.resource.naming", "yes", "Invalid value yes for configuration "
     "ensure.explicit.internal.resource.naming: Expected value to be either true or false"),
    ("client.id", 7, "Invalid value 7 for configuration client.id: Expected value to be a string, but it was a int"),
    ("production.exception.handler", 42, "Invalid value 42 for configuration production.exception.handler: "
                                         "Expected a Class instance or class name."),
    ("default.key.serde", "StringSerde", "Invalid value StringSerde for configuration default.key.serde: Class "
                                         "StringSerde could not be found."),
    # Range, ValidString, CaseInsensitiveValidString, ValidList, ListSize
    ("statestore.cache.max.bytes", -1, "Invalid value -1 for configuration statestore.cache.max.bytes: Value must "
                                       "be at least 0"),
    ("probing.rebalance.interval.ms", "1000", "Invalid value 1000 for configuration probing.rebalance.interval.ms: "
                                              "Value must be at least 60000"),
    ("metrics.recording.level", "WARN", "Invalid value WARN for configuration metrics.recording.level: String must "
                                        "be one of: INFO, DEBUG, TRACE"),
    ("security.protocol", "tls", "Invalid value tls for configuration security.protocol: String must be one of "
                                 "(case insensitive): SASL_SSL, PLAINTEXT, SSL, SASL_PLAINTEXT"),
    ("bootstrap.servers", "a:9092, a:9092", "Configuration 'bootstrap.servers' values must not be duplicated."),
    ("bootstrap.servers", "", "Configuration 'bootstrap.servers' must not be empty. Valid values include: any "
                              "non-empty value"),
    ("rack.aware.assignment.tags", "a,b,c,d,e,f", "Invalid value [a, b, c, d, e, f] for configuration "
                                                  "rack.aware.assignment.tags: exceeds maximum list size of [5]."),
    ("topology.optimization", "everything", "Invalid value everything for configuration topology.optimization: "
                                            "Unrecognized config. Acceptable values are: none, all, or a comma "
                                            "separated list of specific optimizations: (reuse.ktable.source.topics, "
                                            "merge.repartition.topics, single.store.self.join)."),
    ("upgrade.allow.unsafe", "maybe", "Invalid value maybe for configuration upgrade.allow.unsafe: Expected value "
                                      "to be either true or false"),
])
def test_a_wrong_type_or_value_is_a_value_error_with_kafkas_message(key, value, message):
    with pytest.raises(ValueError) as info:
        StreamsConfig({"application.id": "a", key: value})
    assert str(info.value) == message
    with pytest.raises(ValueError) as info:   # the driver checks through the same validator
        TopologyTestDriver(_topology(), {key: value})
    assert str(info.value) == message


def test_values_are_parsed_to_their_types_and_defaults_are_kafkas():
    config = StreamsConfig({"application.id": " app ", "num.stream.threads": " 3", "commit.interval.ms": 100,
                            "ensure.explicit.internal.resource.naming": "TRUE", "bootstrap.servers": "a:1, b:2"})
    assert config.application_id == "app"          # Kafka trims strings
    assert (config.get("num.stream.threads"), config.get("commit.interval.ms")) == (3, 100)
    assert config.get("ensure.explicit.internal.resource.naming") is True
    assert config.get("bootstrap.servers") == ["a:1", "b:2"]
    assert (config.get("statestore.cache.max.bytes"), config.get("processing.guarantee"),
            config.get("topology.optimization")) == (10 * 1024 * 1024, "at_least_once", "none")
    with pytest.raises(ValueError, match="Unknown configuration 'no.such.key'"):
        config.get("no.such.key")


def test_python_objects_are_valid_for_class_keys():
    def extractor(record, partition_time):
        return 0

    def handler(context, record, exception):
        return None

    config = {"application.id": "a", "default.key.serde": S, "default.value.serde": S,
              "default.timestamp.extractor": extractor, "processing.exception.handler": handler}
    assert StreamsConfig(config).get("default.timestamp.extractor") is extractor
    task = TaskConfig.from_config(config)
    # the task's extractor calls the function (streams_on_spark.timestamp_extractors)
    assert task.default_key_serde is S and task.timestamp_extractor.function is extractor


def test_a_key_must_be_a_string():
    with pytest.raises(ValueError) as info:
        StreamsConfig({"application.id": "a", 3: "x"})
    assert str(info.value) == "Invalid value x for configuration 3: Key must be a string."


def test_application_id_is_required():
    with pytest.raises(ValueError) as info:
        StreamsConfig({"num.stream.threads": 1})
    assert str(info.value) == 'Missing required configuration "application.id" which has no default value.'


# ------------------------------------------------------------------------------------------------ application.id
BAD_ID = ("Invalid value my app! for configuration application.id: 'my app!' contains one or more characters other "
          "than ASCII alphanumerics, '.', '_' and '-' (it prefixes the application's internal topic names)")


@pytest.mark.parametrize("app_id, message", [
    ("my app!", BAD_ID),
    ("", "Invalid value  for configuration application.id: the empty string is not allowed"),
    ("a" * 250, f"Invalid value {'a' * 250} for configuration application.id: the length of '{'a' * 250}' is longer "
                "than the max allowed length 249 (it prefixes the application's internal topic names)"),
])
def test_a_bad_application_id_fails_the_driver_at_construction(app_id, message):
    with pytest.raises(ValueError) as info:
        TopologyTestDriver(_topology(), {"application.id": app_id})
    assert str(info.value) == message


def test_a_bad_application_id_fails_kafka_streams_at_construction_without_a_broker():
    config = {"application.id": "my app!", "bootstrap.servers": "127.0.0.1:1"}   # nothing listens there
    with pytest.raises(ValueError) as info:
        KafkaStreams(_topology(), config)
    assert str(info.value) == BAD_ID


def test_kafka_streams_checks_types_at_construction_too():
    with pytest.raises(ValueError, match="Invalid value abc for configuration num.stream.threads: Not a number of "
                                         "type INT"):
        KafkaStreams(_topology(), {"application.id": "ok", "num.stream.threads": "abc"})


@pytest.mark.parametrize("app_id", ["orders-v2", "my_app.prod", "A-1"])
def test_legal_application_ids_are_accepted(app_id):
    assert TaskConfig.from_config({"application.id": app_id}).application_id == app_id


# ------------------------------------------------------------------------------------------------ keys with no effect
def _no_effect_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "has no effect on streams-on-spark" in r.getMessage()]


def test_a_key_with_no_effect_set_to_another_value_is_logged_once_naming_it_and_what_to_do(caplog):
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        config = StreamsConfig({"application.id": "a", "num.stream.threads": "4"})
    assert _no_effect_warnings(caplog) == [
        "The configuration 'num.stream.threads' was supplied but has no effect on streams-on-spark: parallelism is one "
        "task per subtopology and partition, run on Spark's executors: give Spark more cores or executors (and the "
        "topics more partitions)."]
    assert config.get("num.stream.threads") == 4   # still validated and readable, as Kafka's
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        StreamsConfig({"application.id": "a", "commit.interval.ms": 100})
    [message] = _no_effect_warnings(caplog)
    assert "'commit.interval.ms'" in message and "trigger.interval" in message


def test_each_key_with_no_effect_is_logged_once_per_config(caplog):
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        # the driver builder merges its configs into one: the key given twice is one warning
        (TopologyTestDriverBuilder(_topology()).with_config({"num.standby.replicas": 1, "max.warmup.replicas": 3})
         .with_config({"num.standby.replicas": 2}).build().close())
    warnings = _no_effect_warnings(caplog)
    assert sorted(m.split("'")[1] for m in warnings) == ["max.warmup.replicas", "num.standby.replicas"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        # once per config object, as Kafka logs each config's unused keys: another application is told again
        StreamsConfig({"application.id": "a", "poll.ms": 5})
        StreamsConfig({"application.id": "b", "poll.ms": 5})
    assert [m.split("'")[1] for m in _no_effect_warnings(caplog)] == ["poll.ms", "poll.ms"]


def test_kafka_streams_logs_a_key_with_no_effect_at_construction(caplog):
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        KafkaStreams(_topology(), {"application.id": "a", "num.standby.replicas": 1})   # no Spark, no broker yet
    [message] = _no_effect_warnings(caplog)
    assert "'num.standby.replicas'" in message and "no standby" in message


def test_an_embedded_topics_key_in_an_application_reading_kafka_is_logged_naming_it_and_why(caplog):
    """``embedded.topics.batch.records`` acts on the embedded topics alone: with ``bootstrap.servers`` another value
    than its default is warned about (once per config), at its default or without Kafka it is silent; a test driver
    reads neither, whatever ``bootstrap.servers`` says."""
    kafka = {"application.id": "a", "bootstrap.servers": "localhost:9092"}
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        KafkaStreams(_topology(), {**kafka, "embedded.topics.batch.records": 8})   # no Spark, no broker yet
        KafkaStreams(_topology(), {**kafka, "embedded.topics.batch.records": 65536})
        KafkaStreams(_topology(), {"application.id": "a", "embedded.topics.batch.records": 8})
        TopologyTestDriver(_topology(), {**kafka, "embedded.topics.batch.records": 8}).close()
    assert _no_effect_warnings(caplog) == [
        "The configuration 'embedded.topics.batch.records' was supplied but has no effect on streams-on-spark with "
        "bootstrap.servers set: it sizes the record batches of the embedded topics' Spark source; Spark's Kafka source "
        "packs the records of Kafka's topics per Arrow batch of spark.sql.execution.arrow.maxRecordsPerBatch."]


def test_an_application_given_both_kafka_and_embedded_topics_is_refused_naming_both_keys(caplog):
    """``embedded.topics.dir`` with ``bootstrap.servers``: one of the two would be ignored, so ``KafkaStreams``
    refuses them at construction; either alone is taken, and a test driver reads neither."""
    both = {"application.id": "a", "bootstrap.servers": "localhost:9092", "embedded.topics.dir": "/e"}
    with pytest.raises(ConfigException, match=r"Both 'bootstrap.servers' and 'embedded.topics.dir' are set "
                                              r"\(embedded.topics.dir=/e\).*set only one of them"):
        KafkaStreams(_topology(), both)   # no Spark, no broker yet
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        KafkaStreams(_topology(), {**both, "embedded.topics.dir": None})
        KafkaStreams(_topology(), {**both, "bootstrap.servers": None})
        TopologyTestDriver(_topology(), both).close()
    assert caplog.records == []


@pytest.mark.parametrize("key, value", [
    ("num.stream.threads", 1), ("num.stream.threads", "1"), ("commit.interval.ms", 30000),
    ("num.standby.replicas", 0), ("metrics.recording.level", "INFO"), ("group.protocol", "CLASSIC"),  # any case
    ("config.providers", ""), ("dsl.store.format", "default"), ("processor.wrapper.class", None),
    ("rack.aware.assignment.tags", []), ("upgrade.from", None),
])
def test_a_key_with_no_effect_at_its_default_is_silent(caplog, key, value):
    # a properties file shared with a Java application often spells the defaults out
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        StreamsConfig({"application.id": "a", key: value})
    assert caplog.records == []


@pytest.mark.parametrize("key, value", [
    ("statestore.cache.max.bytes", 0), ("cache.max.bytes.buffering", 0), ("processing.guarantee", "exactly_once_v2"),
    ("state.dir", "/tmp/x"), ("topology.optimization", "all"), ("client.id", "c"), ("request.timeout.ms", 1000),
    ("security.protocol", "SSL"), ("ensure.explicit.internal.resource.naming", True),
    ("errors.dead.letter.queue.topic.name", "dlq"), ("trigger.interval", "1 second"), ("checkpoint.location", "/c"),
    ("embedded.topics.dir", "/e"), ("upgrade.allow.unsafe", True), ("bootstrap.servers", "a:9092"),
])
def test_a_key_with_an_effect_is_silent(caplog, key, value):
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        StreamsConfig({"application.id": "a", key: value})
    assert caplog.records == []


def test_the_driver_takes_keys_with_an_effect_without_a_warning(caplog):
    config = {"statestore.cache.max.bytes": 0, "processing.guarantee": "exactly_once_v2", "topology.optimization": "all",
              "default.key.serde": S, "default.value.serde": S}
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        with TopologyTestDriver(_topology(), config):
            pass
    assert caplog.records == []


@pytest.mark.parametrize("key, value, message", [
    ("config.providers", "file", "Invalid value [file] for configuration config.providers: not supported by "
     "streams-on-spark: values referring to a config provider (${provider:path:key}) would be used unresolved: "
     "resolve them before building the config"),
    ("processor.wrapper.class", "com.example.Tracing", "Invalid value com.example.Tracing for configuration "
     "processor.wrapper.class: not supported by streams-on-spark: processors are not wrapped here (KIP-1112 is not "
     "implemented): wrap them in your ProcessorSupplier instead"),
])
def test_a_key_the_runtime_cannot_honour_is_refused_naming_it(key, value, message):
    with pytest.raises(ConfigException) as info:
        StreamsConfig({"application.id": "a", key: value})
    assert str(info.value) == message
    with pytest.raises(ValueError) as info:   # the driver and KafkaStreams check through the same config
        TopologyTestDriver(_topology(), {key: value})
    assert str(info.value) == message
    with pytest.raises(ValueError) as info:
        KafkaStreams(_topology(), {"application.id": "a", key: value})
    assert str(info.value) == message


def test_every_key_with_no_effect_warns_or_is_refused_and_every_other_key_is_silent(caplog):
    # one non-default value per key of a type that has an obvious one
    other = {BOOLEAN: lambda d: not d, INT: lambda d: (d or 0) + 7, LONG: lambda d: (d or 0) + 70000}
    for key in STREAMS_CONFIG_KEYS.values():
        if key.type not in other or key.validator is not None and not isinstance(key.validator, Range):
            continue
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
            StreamsConfig({"application.id": "a", key.name: other[key.type](key.default)})
        assert len(_no_effect_warnings(caplog)) == (0 if key.has_effect else 1), key.name


def test_a_restore_consumer_setting_is_said_to_have_no_effect_once(caplog):
    from streams_on_spark.config import StreamsConfig
    config = StreamsConfig({"application.id": "app", "restore.consumer.max.poll.records": 5})
    StreamsConfig({"application.id": "app", "restore.consumer.max.poll.records": 5})
    assert config.originals["restore.consumer.max.poll.records"] == 5
    lines = [r.getMessage() for r in caplog.records if "restore.consumer.max.poll.records" in r.getMessage()]
    assert len(lines) == 2 and "no restore consumer" in lines[0]   # once per config, as Kafka logs unused keys


# ---------------------------------------------------------------------------------------------------- one typed config

def test_the_librarys_admin_timeout_is_a_typed_key_with_its_default_in_one_place():
    from streams_on_spark.config import DEFAULT_API_TIMEOUT_MS, LIBRARY_CONFIG_KEYS, REPLICATION_FACTOR
    assert LIBRARY_CONFIG_KEYS[DEFAULT_API_TIMEOUT_MS].default == 10_000
    config = StreamsConfig({"application.id": "a"})
    assert config.get(DEFAULT_API_TIMEOUT_MS) == 10_000 and config.get(REPLICATION_FACTOR) == -1
    given = StreamsConfig({"application.id": "a", DEFAULT_API_TIMEOUT_MS: "2500", REPLICATION_FACTOR: "3"})
    assert given.get(DEFAULT_API_TIMEOUT_MS) == 2500 and given.get(REPLICATION_FACTOR) == 3
    with pytest.raises(ConfigException, match="default.api.timeout.ms"):
        StreamsConfig({"application.id": "a", DEFAULT_API_TIMEOUT_MS: -1})
    with pytest.raises(ConfigException, match="default.api.timeout.ms"):
        StreamsConfig({"application.id": "a", DEFAULT_API_TIMEOUT_MS: "soon"})


def test_a_task_config_reads_one_streams_config_whose_originals_are_the_app_configs():
    config = TaskConfig.from_config({"application.id": "a", "trigger.interval": "1 second", "custom.key": 1})
    assert config.streams_config.get("trigger.interval") == "1 second"
    assert config.app_configs is config.streams_config.originals and config.app_configs["custom.key"] == 1
    assert TaskConfig("b").streams_config.get("trigger.interval") == "100 milliseconds"   # every key at its default


def test_no_library_code_retypes_a_config_keys_default():
    """A known key is read as a typed value from StreamsConfig/TaskConfig, its default given once by its ConfigKey:
    no ``<mapping>.get(key, default)`` of a StreamsConfig or library key outside config.py."""
    import ast
    from pathlib import Path

    import streams_on_spark.config as config_module
    from streams_on_spark.config import LIBRARY_CONFIG_KEYS
    root = Path(__file__).resolve().parents[2]
    known = set(STREAMS_CONFIG_KEYS) | set(LIBRARY_CONFIG_KEYS)
    constants = {name for name, value in vars(config_module).items() if isinstance(value, str) and value in known}
    found = []
    for path in sorted([*(root / "streams_on_spark").rglob("*.py"), *(root / "connectors").rglob("*.py"),
                        *(root / "state").rglob("*.py")]):
        if path.name == "config.py" and path.parent.name == "streams_on_spark":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                    and len(node.args) == 2):
                key = node.args[0]
                if (isinstance(key, ast.Constant) and key.value in known
                        or isinstance(key, ast.Name) and key.id in constants):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not found, "defaults retyped at call sites (read StreamsConfig.get(key) instead):\n" + "\n".join(found)

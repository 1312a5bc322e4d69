"""The Kafka connector: Spark's ``kafka`` source for reading, librdkafka producers for writing, kafka-python for admin.

:class:`KafkaConnector` implements :class:`~streams_on_spark.connectors.base.Connector`: it gives Spark's Kafka source
its options (:meth:`~KafkaConnector.reader_options`); the Spark runtime packs the source's rows into record batches
(:mod:`streams_on_spark.runtime.spark.kafka_rows`).

Reading goes through Spark's ``spark-sql-kafka-0-10`` connector, whose jars must be on ``spark.jars`` before
the JVM starts (``spark-submit --jars``): :func:`kafka_jars` lists the ones ``make deps-spark-kafka`` resolved from
Maven Central.

Writing happens where the records are: every Spark task writes its own output from its executor through a
:class:`KafkaTopicWriter`, whose ``confluent-kafka`` (librdkafka) producer is made once per Python worker process
(:mod:`streams_on_spark.connectors.kafka_producer`), with each record's explicit partition, timestamp and headers.
Not Spark's Kafka sink: it (spark-sql-kafka 4.2.0, ``KafkaRowWriter``) builds ``ProducerRecord(topic, partition,
key, value, headers)`` with no timestamp, so every record would get the producer's wall-clock time — and record
timestamps are part of Kafka Streams' semantics (stream time, windows, the timestamps of output records). Nothing
of the data path goes through the driver or py4j.

Client settings use Kafka's own names (``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config``,
``ssl.truststore.location``, ...). Every one reaches Spark as ``kafka.<name>``; the admin client and producers get
their equivalent where one exists. Values of secret settings (any name containing password, secret, jaas, token or
key) never appear in logs, reprs or error messages.
"""
from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from streams_on_spark.connectors.kafka_config import (  # noqa: F401 - re-exported: see __all__
    MASK,
    _guard_kafka_python_logs,
    _jaas_options,
    _python_client_config,
    client_settings_of,
    is_secret,
    mask_config,
    quiet_kafka_python_clients,
    quiet_kafka_python_logs,
)
from streams_on_spark.connectors.kafka_producer import (
    PRODUCER_CONFIG_NAMES,
    PRODUCER_PREFIX,
    KafkaWriterSpec,
    producer_settings,
)
from streams_on_spark.record_batch import RecordBatch, encode_by_partition
from streams_on_spark.records import ConsumerRecord, ProducerRecord
from streams_on_spark.errors import StreamsException

__all__ = ["KafkaConnector", "KafkaTopicWriter", "kafka_jars", "mask_config", "is_secret", "quiet_kafka_python_clients",
           "JARS_ENV", "MASK"]

log = logging.getLogger(__name__)

#: Environment variable naming the Spark Kafka connector jars: a directory or a comma-separated list of jars.
JARS_ENV = "STREAMS_ON_SPARK_KAFKA_JARS"
_DEFAULT_JARS_DIR = Path(__file__).resolve().parents[1] / ".deps" / "spark-kafka"
# The jars of the connector (one of each), by group and artifact id; kafka-clients and commons-pool2 are its runtime
# dependencies (the rest of them, compression codecs and slf4j, are in pyspark's own jars).
_REQUIRED_JARS = (("org.apache.spark", "spark-sql-kafka-0-10_"),
                  ("org.apache.spark", "spark-token-provider-kafka-0-10_"),
                  ("org.apache.kafka", "kafka-clients-"), ("org.apache.commons", "commons-pool2-"))
# A group's coordinator not there yet (a new cluster's __consumer_offsets being created), loading, or moved
_RETRIABLE_COORDINATOR_ERRORS = ("CoordinatorNotAvailableError", "CoordinatorLoadInProgressError",
                                 "NotCoordinatorError")
# Kafka Streams' RepartitionTopicConfig / InternalTopicConfig defaults for repartition topics.
# The consumer of Spark's Kafka source, unless the application's client config says otherwise. Kafka's defaults made
# reading small records mostly round trips and waits: 500 records a poll and 1 MiB a partition per fetch (Spark's
# read of 1M records of a word count's repartition topic: 1.9 s, 0.55 s with these), and a fetch that finds nothing
# yet new held by the broker for fetch.max.wait.ms=500 (each task of a 100k-record read waited ~550 ms for its second
# Arrow batch: 1.9 s, 0.86 s with 10 ms). The source reads bounded offset ranges, so a short wait costs no idle polls.
SOURCE_CONSUMER_DEFAULTS = {"max.poll.records": "10000", "max.partition.fetch.bytes": str(8 << 20),
                            "fetch.max.bytes": str(64 << 20), "fetch.max.wait.ms": "10"}
_CONSUMER_PREFIXES = ("consumer.", "main.consumer.")   # in increasing precedence
ADMIN_PREFIX = "admin."   # Kafka Streams' admin client prefix: the library's admin client only
GLOBAL_CONSUMER_PREFIX = "global.consumer."   # the global stores' consumer, over consumer. (as Kafka's)
REPARTITION_TOPIC_CONFIGS = {"cleanup.policy": "delete", "segment.bytes": "52428800", "retention.ms": "-1",
                             "message.timestamp.type": "CreateTime"}


def kafka_jars(where: Optional[str] = None, *, required: bool = False) -> list[str]:
    """The absolute paths of the Spark Kafka connector jars, for ``spark.jars``; ``[]`` if they are not there, or
    with ``required=True`` a :class:`StreamsException` naming ``$STREAMS_ON_SPARK_KAFKA_JARS`` and what was searched.

    Looks in ``where``, else ``$STREAMS_ON_SPARK_KAFKA_JARS`` (a directory or a comma-separated list of jars),
    else ``.deps/spark-kafka/`` of the source checkout (filled by ``make deps-spark-kafka``). A directory counts
    only when it holds all four jars (connector, token provider, kafka-clients, commons-pool2), named as Maven names
    them (``spark-sql-kafka-0-10_2.13-4.2.0.jar``) or as spark-submit's Ivy does (``--packages`` leaves
    ``org.apache.spark_spark-sql-kafka-0-10_2.13-4.2.0.jar`` in ``~/.ivy2.5.2/jars``); those four are returned, of
    several versions of one the one of pyspark's version (Spark's) or the newest (the others).
    """
    spec = where if where is not None else os.environ.get(JARS_ENV)
    source = ("given to kafka_jars" if where is not None else f"from {JARS_ENV}" if spec
              else f"the source checkout's, {JARS_ENV} being unset")
    if spec and ("," in spec or spec.endswith(".jar")):
        return [str(Path(j).expanduser().resolve()) for j in spec.split(",") if j.strip()]
    folder = Path(spec).expanduser() if spec else _DEFAULT_JARS_DIR
    found = _connector_jars(folder) if folder.is_dir() else {}
    missing = [artifact.rstrip("_-") for _, artifact in _REQUIRED_JARS if artifact not in found]
    if not missing:
        return [str(found[artifact].resolve()) for _, artifact in _REQUIRED_JARS]
    if required:
        what = "does not exist" if not folder.exists() else "is not a directory" if not folder.is_dir() else \
            f"has no {', '.join(missing)} jar"
        raise StreamsException(
            f"the Spark Kafka connector jars were not found: searched {folder} ({source}), which {what}. Set "
            f"{JARS_ENV} to a directory holding spark-sql-kafka-0-10, spark-token-provider-kafka-0-10, kafka-clients "
            "and commons-pool2 jars (Maven's or Ivy's names, e.g. ~/.ivy2.5.2/jars after spark-submit --packages "
            "org.apache.spark:spark-sql-kafka-0-10_2.13:<pyspark's version>) or to a comma-separated list of jars, "
            "or run `make deps-spark-kafka` in a source checkout")
    return []


def _connector_jars(folder: Path) -> dict[str, Path]:
    """The jar of each required artifact in ``folder`` (Maven's ``artifact-version.jar`` or Ivy's
    ``group_artifact-version.jar``), by artifact prefix; of several versions, pyspark's (Spark's artifacts) or the
    newest."""
    candidates: dict[str, list[tuple[str, Path]]] = {}
    for jar in folder.glob("*.jar"):
        for group, artifact in _REQUIRED_JARS:
            for prefix in (artifact, f"{group}_{artifact}"):
                if jar.name.startswith(prefix):
                    candidates.setdefault(artifact, []).append((jar.name[len(prefix):-len(".jar")], jar))
    spark_version = _pyspark_version()
    chosen = {}
    for artifact, versions in candidates.items():
        versions.sort(key=lambda found: (found[0].endswith(f"-{spark_version}") if artifact.startswith("spark-")
                                         else False, _version_key(found[0])))
        chosen[artifact] = versions[-1][1]
    return chosen


def _version_key(version: str) -> tuple:
    """A version (``2.13-4.2.0``, ``3.9.2``) as numbers to compare, its non-numeric parts after them."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"[.\-_]", version))


def _pyspark_version() -> str:
    try:
        from importlib.metadata import version
        return version("pyspark")
    except Exception:
        return ""


class KafkaGlobalReader:
    """Reads global topics from given offsets up to their current end with kafka-python; picklable, so a Spark
    executor can keep its global stores up to date. The consumer is opened on first use and kept (not pickled)."""

    def __init__(self, bootstrap_servers: str, python_config: Mapping[str, Any], timeout_ms: int) -> None:
        self.bootstrap_servers, self.python_config, self.timeout_ms = bootstrap_servers, dict(python_config), timeout_ms
        self._consumer: Any = None

    def __repr__(self) -> str:
        return f"KafkaGlobalReader({self.bootstrap_servers!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_consumer": None}

    def _open(self) -> Any:
        if self._consumer is None:
            from kafka import KafkaConsumer
            quiet_kafka_python_clients(self.bootstrap_servers)
            self._consumer = KafkaConsumer(bootstrap_servers=self.bootstrap_servers, enable_auto_commit=False,
                                           auto_offset_reset="earliest",
                                           request_timeout_ms=max(self.timeout_ms, 1000), **self.python_config)
        return self._consumer

    def read(self, topic: str, positions: Mapping[int, int]) -> tuple[list[ConsumerRecord], dict[int, int]]:
        from kafka import TopicPartition
        try:
            consumer = self._open()
            partitions = consumer.partitions_for_topic(topic) or set()
            tps = [TopicPartition(topic, p) for p in sorted(partitions)]
            ends = {tp.partition: end for tp, end in consumer.end_offsets(tps).items()}
            tps = [tp for tp in tps if positions.get(tp.partition, 0) < ends[tp.partition]]
            out: list[ConsumerRecord] = []
            if not tps:
                return out, ends
            consumer.assign(tps)
            for tp in tps:
                consumer.seek(tp, positions.get(tp.partition, 0))
            deadline = time.monotonic() + max(30.0, self.timeout_ms / 1000)
            while any(consumer.position(tp) < ends[tp.partition] for tp in tps):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"could not read {topic} up to its end offsets")
                for tp, records in consumer.poll(timeout_ms=self.timeout_ms).items():
                    out.extend(ConsumerRecord(topic, tp.partition, r.offset, r.timestamp, r.key, r.value,
                                              tuple(r.headers or ())) for r in records if r.offset < ends[tp.partition])
            out.sort(key=lambda r: (r.partition, r.offset))
            return out, ends
        except Exception as e:
            self.close()
            raise StreamsException(f"reading global topic {topic} from Kafka at {self.bootstrap_servers} failed: "
                                   f"{type(e).__name__}") from None

    def close(self) -> None:
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            consumer.close()


class KafkaConnector:
    """Topics in a Kafka cluster as the Spark runtime's connector.

    ``bootstrap_servers``: ``host:port[,host:port...]``. ``client_config``: Kafka client settings with their Java
    names (security, SASL, SSL, timeouts...), passed to Spark's source as ``kafka.<name>`` and to the admin client
    and producers as their kafka-python and librdkafka equivalents (reading needs the Kafka connector jars on
    ``spark.jars``, see :func:`kafka_jars`). As in Kafka Streams, ``consumer.``/``main.consumer.`` settings go to the
    source only (:attr:`consumer_config`), and ``producer.`` settings and ProducerConfig's own names (``linger.ms``,
    ``acks``, ...) to the producers only (:attr:`producer_config`, see
    :func:`~streams_on_spark.connectors.kafka_producer.producer_settings`: one librdkafka cannot apply is a
    ``ConfigException``).

    ``timeout_ms`` bounds every admin and producer call (an unreachable cluster fails with a
    :class:`StreamsException` after about that long). ``fail_on_data_loss`` is Spark's ``failOnDataLoss``; the
    default ``True`` (Spark's default) fails the query when offsets it expected are gone, rather than silently
    skipping records; pass ``False`` to skip offsets deleted by retention as ``auto.offset.reset=earliest`` does.
    ``replication_factor`` is used for the topics :meth:`create_topic` creates (-1: the broker's
    ``default.replication.factor``, as Kafka Streams' default ``replication.factor``).

    ``exactly_once_group`` (the ``application.id``, given under ``processing.guarantee=exactly_once_v2``): tasks
    write through :class:`~streams_on_spark.connectors.kafka_transactions.KafkaTransactionalWriter` (one transaction
    per task and micro-batch, its positions committed for that group), and every read is ``read_committed``.
    """

    whole_batches = False   # Spark's Kafka source reads to the latest offsets

    def __init__(self, bootstrap_servers: str, client_config: Optional[Mapping[str, Any]] = None,
                 *, timeout_ms: int = 10000, fail_on_data_loss: bool = True,
                 replication_factor: int = -1, exactly_once_group: Optional[str] = None) -> None:
        if not isinstance(bootstrap_servers, str) or not bootstrap_servers.strip():
            raise ValueError(f"bootstrap_servers must be a non-empty 'host:port[,host:port]' str, "
                             f"got {bootstrap_servers!r}")
        if not isinstance(timeout_ms, int) or timeout_ms < 1:
            raise ValueError(f"timeout_ms must be an int >= 1, got {timeout_ms!r}")
        config = {str(k): v for k, v in dict(client_config or {}).items()}
        for key in config:
            if key in ("bootstrap.servers", "kafka.bootstrap.servers"):
                raise ValueError("pass bootstrap.servers as bootstrap_servers, not in client_config")
        quiet_kafka_python_logs(bootstrap_servers.strip())
        self.bootstrap_servers = bootstrap_servers.strip()
        config = {(k[len("kafka."):] if k.startswith("kafka.") else k): v for k, v in config.items()}
        # Kafka Streams' consumer prefixes: settings of the consumer only (here: Spark's Kafka source), main.consumer.
        # over consumer. over the plain key, as StreamsConfig.getMainConsumerConfigs resolves them
        self.consumer_config = {k[len(prefix):]: config[k] for prefix in _CONSUMER_PREFIXES for k in config
                                if k.startswith(prefix)}
        # and the producers' (Kafka Streams' producer. prefix and ProducerConfig's own names): the tasks' producers
        # only, producer. over the plain key, as StreamsConfig.getProducerConfigs resolves them; a ConfigException
        # for one librdkafka cannot apply
        self.producer_config = producer_settings(config, exactly_once=exactly_once_group is not None)
        # the admin client's (admin.) and the global stores' consumer's (consumer. under global.consumer., as
        # StreamsConfig.getGlobalConsumerConfigs resolves them): those clients only
        self.admin_config = {k[len(ADMIN_PREFIX):]: v for k, v in config.items() if k.startswith(ADMIN_PREFIX)}
        self.global_consumer_shared = {k[len("consumer."):]: v for k, v in config.items() if k.startswith("consumer.")}
        self.global_consumer_own = {k[len(GLOBAL_CONSUMER_PREFIX):]: v for k, v in config.items()
                                    if k.startswith(GLOBAL_CONSUMER_PREFIX)}
        self.client_config = {k: v for k, v in config.items()
                              if not k.startswith((*_CONSUMER_PREFIXES, PRODUCER_PREFIX, ADMIN_PREFIX,
                                                   GLOBAL_CONSUMER_PREFIX)) and k not in PRODUCER_CONFIG_NAMES}
        self.timeout_ms = timeout_ms
        self.fail_on_data_loss = fail_on_data_loss
        self.replication_factor = replication_factor
        self.exactly_once_group = exactly_once_group
        if exactly_once_group is not None:   # Kafka Streams' consumers under exactly-once read committed records only
            self.client_config["isolation.level"] = "read_committed"
        self._python_config = _python_client_config(self.client_config)
        self._admin_client: Any = None
        self._writer: Optional[KafkaTopicWriter] = None

    def __repr__(self) -> str:
        return (f"KafkaConnector(bootstrap_servers={self.bootstrap_servers!r}, "
                f"client_config={mask_config(self.client_config)!r})")

    # -- secrets -------------------------------------------------------------------------------------------------

    def _secret_values(self) -> list[str]:
        values: list[str] = []
        for config in (self.client_config, self.consumer_config, self.producer_config, self.admin_config,
                       self.global_consumer_shared, self.global_consumer_own):
            values += [str(v) for k, v in config.items() if is_secret(k) and v not in (None, "")]
            jaas = config.get("sasl.jaas.config")
            if jaas:
                values += [v for k, v in _jaas_options(str(jaas)).items() if is_secret(k) and v]
        return sorted(set(values), key=len, reverse=True)

    def redact(self, text: str) -> str:
        """``text`` with every secret value of the client config replaced by ``******``."""
        for secret in self._secret_values():
            text = text.replace(secret, MASK)
        return text

    def _error(self, what: str, error: BaseException) -> StreamsException:
        detail = self.redact(f"{type(error).__name__}: {error}".strip())
        return StreamsException(f"{what} (Kafka at {self.bootstrap_servers}, client settings "
                                f"{mask_config(self.client_config)}): {detail}")

    # -- clients -------------------------------------------------------------------------------------------------

    def _common(self) -> dict[str, Any]:
        return {"request_timeout_ms": self.timeout_ms, "bootstrap_timeout_ms": self.timeout_ms,
                "reconnect_backoff_max_ms": 1000, **self._python_config,
                "bootstrap_servers": self.bootstrap_servers.split(",")}

    def admin_settings(self) -> dict[str, Any]:
        """The admin client's keyword arguments: the shared settings, its own (``admin.``) over them."""
        return {"client_id": "streams-on-spark-admin", **self._common(),
                **client_settings_of(self.admin_config, "admin client", ADMIN_PREFIX)}

    def _admin(self) -> Any:
        if self._admin_client is None:
            from kafka import KafkaAdminClient
            _guard_kafka_python_logs(self._secret_values())
            try:
                self._admin_client = KafkaAdminClient(**self.admin_settings())
            except Exception as e:
                raise self._error("cannot connect to Kafka", e) from None
        return self._admin_client

    def close(self) -> None:
        """Close the admin client; this process's producers are closed at exit (they are shared per config)."""
        admin, self._admin_client = self._admin_client, None
        if admin is not None:
            try:
                admin.close()
            except Exception:
                log.debug("closing the Kafka admin client failed", exc_info=True)

    def __enter__(self) -> "KafkaConnector":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- Spark source ----------------------------------------------------------------------------------------------

    def global_reader(self) -> KafkaGlobalReader:
        """What Spark tasks read global topics through (each Python worker keeps its global stores and follows)."""
        shared = {k: v for k, v in self.global_consumer_shared.items() if k not in self.global_consumer_own}
        config = {**self._python_config, **_python_client_config(shared),   # consumer.: the source's too
                  **client_settings_of(self.global_consumer_own, "global stores' consumer", GLOBAL_CONSUMER_PREFIX)}
        if self.exactly_once_group is not None:
            config["isolation_level"] = "read_committed"
        return KafkaGlobalReader(self.bootstrap_servers, config, self.timeout_ms)

    def reader_options(self, topics: list[str], whole_batches: Sequence[str] = ()) -> tuple[str, dict[str, str]]:
        """Format and options of Spark's Kafka source for ``topics`` (read from the earliest offsets, headers too).
        Spark's Kafka source reads up to the latest offsets: ``whole_batches`` cannot apply (:attr:`whole_batches`
        is False)."""
        if not topics:
            raise ValueError("reader_options needs at least one topic")
        settings = {**SOURCE_CONSUMER_DEFAULTS, **self.client_config, **self.consumer_config}
        options = {f"kafka.{k}": str(v) for k, v in settings.items() if v is not None}
        options.update({
            "kafka.bootstrap.servers": self.bootstrap_servers,
            "subscribe": ",".join(topics),
            "startingOffsets": "earliest",
            "failOnDataLoss": "true" if self.fail_on_data_loss else "false",
            "includeHeaders": "true",
        })
        return "kafka", options

    # -- topic admin -----------------------------------------------------------------------------------------------

    def _describe(self, topics: Optional[list[str]]) -> list[dict]:
        try:
            return self._admin().describe_topics(topics)
        except StreamsException:
            raise
        except Exception as e:
            raise self._error(f"cannot describe topics {topics if topics else '(all)'}", e) from None

    def topics(self) -> dict[str, int]:
        """Every (non-internal) topic with its partition count."""
        return {t["name"]: len(t["partitions"]) for t in self._describe(None)
                if not t.get("is_internal") and t.get("error_code", 0) == 0}

    def partitions(self, topic: str) -> int:
        """The partition count of ``topic``; ``ValueError`` if it does not exist."""
        count = self._partition_count(topic)
        if count is None:
            raise ValueError(f"unknown topic {topic!r} in Kafka at {self.bootstrap_servers}")
        return count

    def _partition_count(self, topic: str) -> Optional[int]:
        from kafka.errors import for_code
        (info,) = [t for t in self._describe([topic]) if t["name"] == topic] or [None]
        if info is None or info["error_code"] == 3:  # UNKNOWN_TOPIC_OR_PARTITION
            return None
        if info["error_code"] != 0:
            raise StreamsException(f"cannot describe topic {topic} in Kafka at {self.bootstrap_servers}: "
                                   f"{for_code(info['error_code']).__name__}")
        return len(info["partitions"])

    def create_repartition_topic(self, topic: str, partitions: int) -> None:
        """Create a repartition topic as Kafka Streams does (``RepartitionTopicConfig``): never deleted by time
        (``retention.ms=-1``; its records carry the input's timestamps, which may be far in the past, and time
        retention would delete them before the downstream task read them), 50 MB segments, CreateTime."""
        self.create_topic(topic, partitions, REPARTITION_TOPIC_CONFIGS)

    def create_topic(self, topic: str, partitions: int, configs: Optional[Mapping[str, str]] = None) -> None:
        """Create ``topic`` with ``partitions`` partitions (and topic ``configs``); nothing to do if it exists with
        that many."""
        from kafka.errors import TopicAlreadyExistsError
        if not isinstance(partitions, int) or isinstance(partitions, bool) or partitions < 1:
            raise ValueError(f"partitions of topic {topic} must be an int >= 1, got {partitions!r}")
        if not isinstance(topic, str) or not topic:
            raise ValueError(f"topic name must be a non-empty str, got {topic!r}")
        existing = self._partition_count(topic)
        if existing is None:
            try:
                self._admin().create_topics(
                    {topic: {"num_partitions": partitions, "replication_factor": self.replication_factor,
                             "configs": dict(configs or {})}},
                    timeout_ms=self.timeout_ms)
            except TopicAlreadyExistsError:
                pass  # created concurrently: check its partition count below
            except Exception as e:
                raise self._error(f"cannot create topic {topic} with {partitions} partitions", e) from None
            else:
                try:
                    self._admin().wait_for_topics([topic], timeout_ms=self.timeout_ms)
                except Exception as e:
                    raise self._error(f"topic {topic} was created but has no leader yet", e) from None
                log.info("created topic %s with %d partitions", topic, partitions)
                return
            existing = self.partitions(topic)
        if existing != partitions:
            raise ValueError(f"topic {topic} already exists with {existing} partitions, "
                             f"cannot create it with {partitions}")

    def delete_topics(self, topics: list[str]) -> None:
        """Delete ``topics`` (those that exist) and wait until they are gone (the application reset tool's step)."""
        from kafka.errors import UnknownTopicOrPartitionError
        if not topics:
            return
        try:
            self._admin().delete_topics(list(topics), timeout_ms=self.timeout_ms)
        except UnknownTopicOrPartitionError:
            pass
        except Exception as e:
            raise self._error(f"cannot delete topics {sorted(topics)}", e) from None
        deadline = time.monotonic() + self.timeout_ms / 1000
        while any(self._partition_count(t) is not None for t in topics):
            if time.monotonic() > deadline:
                raise StreamsException(f"topics {sorted(topics)} were deleted in Kafka at {self.bootstrap_servers} "
                                       "but still exist")
            time.sleep(0.1)
        log.info("deleted topics %s", sorted(topics))

    def consumer_groups(self) -> list[str]:
        """The ids of the cluster's consumer groups."""
        try:
            return sorted(str(g["group_id"]) for g in self._admin().list_groups())
        except Exception as e:
            raise self._error("cannot list consumer groups", e) from None

    def delete_consumer_group(self, group: str) -> bool:
        """Delete consumer group ``group`` and its committed offsets; False if there is no such group.

        The group's coordinator may not be there yet (a new cluster creates ``__consumer_offsets``, where coordinators
        live, on the first request for one: ``COORDINATOR_NOT_AVAILABLE`` meanwhile) or may be loading or moving:
        those retriable errors are retried for up to ``timeout_ms``, as Kafka's admin client retries them."""
        deadline = time.monotonic() + self.timeout_ms / 1000
        while True:
            try:
                results = self._admin().delete_groups([group])
            except StreamsException:
                raise
            except Exception as e:
                name, error = type(e).__name__, e
            else:
                outcome = dict(results).get(group)   # kafka-python: {group: "OK" | an error (class or instance)}
                name = outcome if isinstance(outcome, str) or outcome is None else getattr(
                    outcome, "__name__", type(outcome).__name__)
                error = None
                if name in (None, "OK", "NoError"):
                    return True
                if name == "GroupIdNotFoundError":
                    return False
            if name not in _RETRIABLE_COORDINATOR_ERRORS or time.monotonic() > deadline:
                if error is not None:
                    raise self._error(f"cannot delete consumer group {group}", error) from None
                raise StreamsException(f"cannot delete consumer group {group} in Kafka at {self.bootstrap_servers}: "
                                       f"{name}")
            log.debug("deleting consumer group %s: %s, retrying", group, name)
            time.sleep(0.2)

    def publish_batch(self, topics: Sequence[str]) -> None:
        """Nothing to record: Spark's Kafka source cannot read in whole batches (:attr:`whole_batches`)."""

    def end_offsets(self, topic: str) -> list[int]:
        """The log-end offset of each partition of ``topic``, by partition."""
        from kafka import TopicPartition
        from kafka.admin import OffsetSpec
        n = self.partitions(topic)
        try:
            found = self._admin().list_partition_offsets(
                {TopicPartition(topic, p): OffsetSpec.LATEST for p in range(n)}, timeout_ms=self.timeout_ms)
        except Exception as e:
            raise self._error(f"cannot read the end offsets of topic {topic}", e) from None
        return [int(found[TopicPartition(topic, p)].offset) for p in range(n)]

    # -- writing ---------------------------------------------------------------------------------------------------

    def writer(self) -> Any:
        """The picklable writer Spark tasks write their output with, from their executors (a task's write may wait
        up to ``delivery.timeout.ms``, at least 30 s, for the cluster's acknowledgements)."""
        delivery = int(self._producer_client_config().get("delivery.timeout.ms", 30_000))
        spec = self._writer_spec(max(self.timeout_ms, delivery))
        if self.exactly_once_group is None:
            return KafkaTopicWriter(spec)
        from streams_on_spark.connectors.kafka_transactions import (DEFAULT_TRANSACTION_TIMEOUT_MS,
                                                                     KafkaTransactionalWriter)
        timeout = int(self._producer_client_config().get("transaction.timeout.ms", DEFAULT_TRANSACTION_TIMEOUT_MS))
        return KafkaTransactionalWriter(spec, self.exactly_once_group, timeout)

    def _writer_spec(self, timeout_ms: int) -> Any:
        """The tasks' producer: delivery reports for failed records only (a delivered record calls no Python
        callback), so its writes return no base offsets (-1 in the commit rows)."""
        return KafkaWriterSpec.of(self.bootstrap_servers, self._producer_client_config(), timeout_ms,
                                  {"delivery.report.only.error": "true"})

    def _producer_client_config(self) -> dict[str, Any]:
        """What the tasks' producers are configured with (Java names): the shared settings, their own over them."""
        return {**self.client_config, **self.producer_config}

    def append(self, records: Iterable[ProducerRecord]) -> None:
        """Write ``records`` to their topic partitions with their timestamps and headers, in order per partition;
        returns once the cluster acknowledged all of them (``acks=all``) within ``timeout_ms``, raises
        ``StreamsException`` otherwise."""
        batches = encode_by_partition(records)
        if batches:
            if self._writer is None:
                self._writer = KafkaTopicWriter(self._writer_spec(self.timeout_ms))
            self._writer.write(batches)


class KafkaTopicWriter:
    """Writes record batches to Kafka from whichever process holds it (a Spark executor's Python worker), through
    that process's librdkafka producer for the spec. At least once: a replayed micro-batch is written again
    (exactly-once is :class:`~streams_on_spark.connectors.kafka_transactions.KafkaTransactionalWriter`)."""

    def __init__(self, spec: Any) -> None:  # a kafka_producer.KafkaWriterSpec
        self.spec = spec

    def __repr__(self) -> str:
        return f"KafkaTopicWriter({self.spec!r})"

    def write(self, batches: list[RecordBatch], producer: Optional[str] = None, sequence: Optional[int] = None,
              positions: Optional[Mapping[tuple[str, int], int]] = None) -> list[int]:
        return self.spec.producer().send(batches)

"""What the examples share: their command line, logging, and one runner for the three ways an example runs.

An example is a topology, the topics it reads and writes (with their serdes) and its input in *waves*: each wave is
sent, then processed to the end before the next one is sent (a customers table loaded before the orders that look
it up, late clicks after the ones that closed their windows). The runner returns every record of the output topics:

- ``--engine local``: the in-process ``TopologyTestDriver``, no Spark;
- ``--engine spark`` (the default): ``KafkaStreams`` on Spark Structured Streaming over embedded topics;
- ``--bootstrap-servers host:port``: ``KafkaStreams`` on Spark against a Kafka cluster (topics created if missing,
  named with ``--topic-prefix`` so runs do not mix).

Records are partitioned as Kafka's default partitioner does (murmur2 of the serialized key) on every engine, so a
table and the stream joined with it agree on where a key lives.
"""
from __future__ import annotations

import argparse
import logging
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from streams_on_spark import KafkaStreams, Serde, TestRecord, Topology, TopologyTestDriverBuilder
from streams_on_spark.connectors.kafka import quiet_kafka_python_clients
from streams_on_spark.partitioner import partition_for_key

log = logging.getLogger("examples")


@dataclass(frozen=True)
class Topic:
    """A topic an example reads or writes, with the serdes of its keys and values."""

    name: str
    key_serde: Serde
    value_serde: Serde


@dataclass(frozen=True)
class Input:
    """One record an example sends to ``topic``."""

    topic: str
    key: Any
    value: Any
    timestamp: int


@dataclass(frozen=True)
class Output:
    """One record read back from an output topic, deserialized."""

    topic: str
    partition: int
    key: Any
    value: Any
    timestamp: int


@dataclass(frozen=True)
class Run:
    """How to run: the engine, the partitions of every topic, and where Spark keeps topics and checkpoints."""

    engine: str = "spark"
    partitions: int = 4
    bootstrap_servers: Optional[str] = None
    topics_dir: Optional[str] = None
    checkpoint_dir: Optional[str] = None
    spark: Any = None           # a SparkSession to run in (tests); default: the one spark-submit made, or a local one

    def __post_init__(self) -> None:
        if self.engine not in ("spark", "local"):
            raise ValueError(f"engine must be 'spark' or 'local', not {self.engine!r}")
        if not isinstance(self.partitions, int) or self.partitions < 1:
            raise ValueError(f"partitions must be a positive int, not {self.partitions!r}")

    @property
    def label(self) -> str:
        """What the report says the example ran on."""
        if self.bootstrap_servers:
            return f"spark+kafka ({self.bootstrap_servers})"
        return self.engine


def parser(description: str) -> argparse.ArgumentParser:
    """The flags every example takes (wordcount.py's, where they mean the same)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--partitions", type=int, default=4, help="partitions of every topic")
    p.add_argument("--engine", choices=["spark", "local"], default="spark",
                   help="spark: KafkaStreams on Spark; local: the in-process driver")
    p.add_argument("--bootstrap-servers", help="run against this Kafka cluster instead of embedded topics")
    p.add_argument("--topic-prefix", default="", help="prepended to every topic name and the application.id")
    p.add_argument("--topics-dir", help="embedded topics directory (default: a temporary one)")
    p.add_argument("--checkpoint-dir", help="Spark checkpoints (default: a temporary directory)")
    p.add_argument("--describe", action="store_true", help="print the topology's description first")
    p.add_argument("--verbose", action="store_true", help="log every micro-batch (the library at DEBUG)")
    return p


def configure_logging(verbose: bool = False) -> None:
    """The library at INFO (start, progress, warnings), Spark's py4j at WARNING, and kafka-python quieted by the
    library before the examples' own clients (admin, producer, consumer) exist: its lines below WARNING off, a broker
    outage one line (docs/logging.md). A level set here on the ``kafka`` logger would switch that quieting off."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    quiet_kafka_python_clients()
    if verbose:
        logging.getLogger("streams_on_spark").setLevel(logging.DEBUG)


def run_from_args(args: argparse.Namespace, spark: Any = None) -> Run:
    """The ``Run`` the parsed command line asks for."""
    return Run(args.engine, args.partitions, args.bootstrap_servers, args.topics_dir, args.checkpoint_dir, spark)


def run_example(topology: Topology, app_id: str, topics: Sequence[Topic], waves: Sequence[Sequence[Input]],
                outputs: Sequence[str], run: Run) -> list[Output]:
    """Send ``waves`` through ``topology`` as ``run`` says; every record of ``outputs``, by topic, partition, offset."""
    by_name = {t.name: t for t in topics}
    unknown = sorted(({i.topic for wave in waves for i in wave} | set(outputs)) - set(by_name))
    if unknown:
        raise ValueError(f"topics {unknown} are not among the example's topics {sorted(by_name)}")
    if run.bootstrap_servers:
        return _run_on_kafka(topology, app_id, by_name, waves, outputs, run)
    if run.engine == "spark":
        return _run_on_embedded(topology, app_id, by_name, waves, outputs, run)
    return _run_in_process(topology, app_id, by_name, waves, outputs, run)


def _partition(topic: Topic, key: Any, partitions: int) -> tuple[bytes, int]:
    key_bytes = topic.key_serde.serialize(topic.name, key)
    return key_bytes, partition_for_key(key_bytes, partitions)


def _run_in_process(topology: Topology, app_id: str, topics: dict[str, Topic], waves: Sequence[Sequence[Input]],
                    outputs: Sequence[str], run: Run) -> list[Output]:
    builder = TopologyTestDriverBuilder(topology).with_config({"application.id": app_id})
    for name in topics:
        builder.declare_topic(name, run.partitions)
    with builder.build() as driver:
        inputs = {name: driver.create_input_topic(name, t.key_serde, t.value_serde) for name, t in topics.items()}
        readers = {name: driver.create_output_topic(name, topics[name].key_serde, topics[name].value_serde)
                   for name in outputs}
        for wave in waves:
            for record in wave:
                inputs[record.topic].pipe_input(TestRecord(record.key, record.value, record.timestamp))
        return [Output(name, r.partition, r.key, r.value, r.timestamp)
                for name, reader in readers.items() for r in reader.read_records_to_list()]


def _run_on_embedded(topology: Topology, app_id: str, topics: dict[str, Topic], waves: Sequence[Sequence[Input]],
                     outputs: Sequence[str], run: Run) -> list[Output]:
    from streams_on_spark.connectors.embedded import EmbeddedTopics
    from streams_on_spark.records import ProducerRecord

    with EmbeddedTopics(run.topics_dir) as embedded, tempfile.TemporaryDirectory(prefix=f"{app_id}-") as tmp:
        for name in topics:
            embedded.create_topic(name, run.partitions)
        config = {"application.id": app_id, "checkpoint.location": run.checkpoint_dir or tmp,
                  "embedded.topics.dir": embedded.root}
        with KafkaStreams(topology, config, run.spark) as streams:
            log.info("starting Spark (a local session takes a few seconds)")
            streams.start()
            say_where(streams)
            for wave in waves:
                records = []
                for r in wave:
                    topic = topics[r.topic]
                    key, partition = _partition(topic, r.key, run.partitions)
                    records.append(ProducerRecord(r.topic, partition, r.timestamp, key,
                                                  topic.value_serde.serialize(r.topic, r.value)))
                embedded.append(records)
                log.info("sent %d records", len(records))
                streams.process_all_available()
        result = []
        for name in outputs:
            topic = topics[name]
            for p in range(run.partitions):
                for r in embedded.read(name, p, 0, embedded.end_offset(name, p)):
                    result.append(Output(name, p, topic.key_serde.deserialize(name, r.key),
                                         topic.value_serde.deserialize(name, r.value), r.timestamp))
        return result


def _run_on_kafka(topology: Topology, app_id: str, topics: dict[str, Topic], waves: Sequence[Sequence[Input]],
                  outputs: Sequence[str], run: Run) -> list[Output]:
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import TopicAlreadyExistsError

    bootstrap = run.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    try:
        for name in topics:
            try:
                admin.create_topics([NewTopic(name, run.partitions, 1)])
            except TopicAlreadyExistsError:
                log.info("topic %s already exists", name)
    finally:
        admin.close()
    with tempfile.TemporaryDirectory(prefix=f"{app_id}-") as tmp:
        config = {"application.id": app_id, "checkpoint.location": run.checkpoint_dir or tmp,
                  "bootstrap.servers": bootstrap}
        with KafkaStreams(topology, config, run.spark) as streams:
            streams.start()
            say_where(streams)
            producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
            try:
                for wave in waves:
                    for r in wave:
                        topic = topics[r.topic]
                        key, partition = _partition(topic, r.key, run.partitions)
                        producer.send(r.topic, key=key, value=topic.value_serde.serialize(r.topic, r.value),
                                      partition=partition, timestamp_ms=r.timestamp)
                    producer.flush()
                    log.info("produced %d records", len(wave))
                    streams.process_all_available()
            finally:
                producer.close()
    result = []
    for name in outputs:
        topic = topics[name]
        for r in read_topic(bootstrap, name, run.partitions):
            result.append(Output(name, r.partition, topic.key_serde.deserialize(name, r.key),
                                 topic.value_serde.deserialize(name, r.value), r.timestamp))
    return result


def say_where(streams: KafkaStreams) -> None:
    """Print the master and application name the Spark session runs with (spark-submit's, when it launched us)."""
    context = streams.spark.sparkContext
    print(f"spark: master {context.master}, app {context.appName}", flush=True)


def read_topic(bootstrap: str, topic: str, partitions: int, timeout_s: float = 120) -> list[Any]:
    """Every record of ``topic`` up to its end offsets now; fails (never returns less) if they cannot be read."""
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest")
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)              # all partitions at once: a later assign() would drop earlier seeks
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        records: list[Any] = []
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            if time.monotonic() > deadline:
                raise RuntimeError(f"could not read {topic} to its end offsets {ends} within {timeout_s:.0f}s")
            for tp, batch in consumer.poll(timeout_ms=1_000).items():
                records.extend(r for r in batch if r.offset < ends[tp])
        log.info("read %d records of %s (end offsets %s)", len(records), topic, sorted(ends.values()))
        return sorted(records, key=lambda r: (r.partition, r.offset))
    finally:
        consumer.close()

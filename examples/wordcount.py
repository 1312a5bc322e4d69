"""Word count, the README topology, on Spark Structured Streaming over embedded topics (4 partitions).

Prints the topology description, logs progress (batches, records, lag) while Spark runs, then each partition's
counts and the top words, as read back from the output topic (it fails rather than print counts it did not read).
``--engine local`` runs the same topology on the in-process driver instead. ``--bootstrap-servers`` runs it against
a Kafka cluster: the bundled text is produced to ``--input-topic`` (created with ``--partitions`` partitions if
missing) and the counts are read back from ``--output-topic``.

Spark is whatever launched the script: ``spark-submit``'s ``--master``/``--conf``/``--jars`` are used as given; a
plain ``python wordcount.py`` starts a local session.

    make run          # or: .venv/bin/python examples/wordcount.py [--partitions N] [--repeat N] [--engine local]
    PYSPARK_PYTHON="$PWD/.venv/bin/python" .venv/bin/spark-submit --master 'local[2]' \
        --packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0 \
        --exclude-packages org.apache.hadoop:hadoop-client-api,org.apache.hadoop:hadoop-client-runtime \
        examples/wordcount.py --bootstrap-servers 127.0.0.1:9092      # README "Against Kafka"

What the examples share (logging, reading a Kafka topic back, saying where Spark runs) is in ``_common.py``.
"""
from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Optional

from streams_on_spark import (
    Consumed,
    Grouped,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    Topology,
    TopologyTestDriverBuilder,
)
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.records import ProducerRecord

sys.path.insert(0, str(Path(__file__).resolve().parent))   # _common, beside this file, also when imported by path
from _common import configure_logging, read_topic, say_where  # noqa: E402

log = logging.getLogger("wordcount")
TEXT = Path(__file__).parent / "data" / "streams.txt"
S, L = Serdes.String(), Serdes.Long()


def word_count_topology(input_topic: str = "sentences", output_topic: str = "word-counts-out") -> Topology:
    """sentences -> words -> re-keyed by word -> counted per word -> word-counts-out."""
    builder = StreamsBuilder()
    (builder.stream(input_topic, Consumed.with_(S, S))
     .flat_map_values(lambda sentence: sentence.lower().replace(",", " ").replace(".", " ").split())
     .select_key(lambda _key, word: word)
     .group_by_key(Grouped.as_("by-word").with_key_serde(S).with_value_serde(S))
     .count(Materialized.as_("word-counts"))
     .to_stream()
     .to(output_topic, Produced.with_(S, L)))
    return builder.build()


def sentences(repeat: int) -> list[tuple[str, str]]:
    lines = [line for line in TEXT.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(f"line-{i}", line) for _ in range(repeat) for i, line in enumerate(lines)]


def report(final: dict[int, dict[str, int]], seconds: float, engine: str, n_sentences: int) -> None:
    print(f"\n{engine}: {n_sentences} sentences counted in {seconds:.1f}s\n")
    totals: Counter[str] = Counter()
    for p, counts in sorted(final.items()):
        totals.update(counts)
        top = ", ".join(f"{w}={c}" for w, c in Counter(counts).most_common(5))
        print(f"partition {p}: {len(counts):3d} words  top: {top}")
    print("\ntop 10 words:", ", ".join(f"{w}={c}" for w, c in totals.most_common(10)))


HEADERS = (("source", b"streams.txt"),)  # every input record's headers; each count update carries them on


def spark_config(app_id: str, checkpoints: str, cache_bytes: Optional[int]) -> dict[str, Any]:
    config: dict[str, Any] = {"application.id": app_id, "checkpoint.location": checkpoints}
    if cache_bytes is not None:
        config["statestore.cache.max.bytes"] = cache_bytes
    return config


def run_on_spark(topology: Topology, lines: list[tuple[str, str]], partitions: int, topics_dir: Optional[str] = None,
                 checkpoint_dir: Optional[str] = None, cache_bytes: Optional[int] = None) -> dict[int, dict[str, int]]:
    with EmbeddedTopics(topics_dir) as topics, tempfile.TemporaryDirectory(prefix="wordcount-checkpoints-") as tmp:
        topics.create_topic("sentences", partitions)
        topics.create_topic("word-counts-out", partitions)
        config = {**spark_config("wordcount", checkpoint_dir or tmp, cache_bytes), "embedded.topics.dir": topics.root}
        with KafkaStreams(topology, config) as streams:
            log.info("starting Spark (a local session takes a few seconds)")
            streams.start()
            say_where(streams)
            half = len(lines) // 2
            for chunk in (lines[:half], lines[half:]):   # input arrives in two waves while the app runs
                topics.append([ProducerRecord("sentences", i % partitions, 1_000 + i, k.encode(), v.encode(), HEADERS)
                               for i, (k, v) in enumerate(chunk)])
                log.debug("appended %d sentences to 'sentences'", len(chunk))   # kept off make run's console
                streams.process_all_available()
        final: dict[int, dict[str, int]] = {}
        for p in range(partitions):
            end = topics.end_offset("word-counts-out", p)
            final[p] = {S.deserialize("o", r.key): L.deserialize("o", r.value)
                        for r in topics.read("word-counts-out", p, 0, end)}
            log.debug("partition %d of word-counts-out: %d count updates", p, end)   # the counts are printed below
        return final


def run_on_kafka(topology_for: Any, lines: list[tuple[str, str]], partitions: int, bootstrap: str,
                 input_topic: str, output_topic: str, checkpoint_dir: Optional[str] = None,
                 cache_bytes: Optional[int] = None) -> dict[int, dict[str, int]]:
    """Produce the text to Kafka, run the topology with KafkaStreams on Spark, read the counts back."""
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import TopicAlreadyExistsError

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    try:
        for topic in (input_topic, output_topic):
            try:
                admin.create_topics([NewTopic(topic, partitions, 1)])
            except TopicAlreadyExistsError:
                log.info("topic %s already exists", topic)
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
    for i, (key, line) in enumerate(lines):
        producer.send(input_topic, key=key.encode(), value=line.encode(), timestamp_ms=1_000 + i,
                      headers=list(HEADERS))
    producer.flush()
    producer.close()
    log.info("produced %d sentences to %s", len(lines), input_topic)
    with tempfile.TemporaryDirectory(prefix="wordcount-checkpoints-") as tmp:
        config = {**spark_config(f"wordcount-{input_topic}", checkpoint_dir or tmp, cache_bytes),
                  "bootstrap.servers": bootstrap}
        with KafkaStreams(topology_for(input_topic, output_topic), config) as streams:
            streams.start()
            say_where(streams)
            streams.process_all_available()
    final: dict[int, dict[str, int]] = {p: {} for p in range(partitions)}
    for r in read_topic(bootstrap, output_topic, partitions):
        final[r.partition][S.deserialize(output_topic, r.key)] = L.deserialize(output_topic, r.value)
    return final


def run_in_process(topology: Topology, lines: list[tuple[str, str]], partitions: int) -> dict[int, dict[str, int]]:
    driver = (TopologyTestDriverBuilder(topology).with_config({"application.id": "wordcount"})
              .declare_topic("sentences", partitions).declare_topic("word-counts-out", partitions).build())
    with driver:
        driver.create_input_topic("sentences", S, S, start_timestamp=1_000, auto_advance=1).pipe_key_value_list(lines)
        return {p: {kv.key: kv.value for kv in driver.get_key_value_store("word-counts", p).all()}
                for p in range(partitions)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Word count on Spark over embedded topics")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=50, help="how many times the bundled text is sent")
    parser.add_argument("--engine", choices=["spark", "local"], default="spark")
    parser.add_argument("--bootstrap-servers", help="run against this Kafka cluster instead of embedded topics")
    parser.add_argument("--input-topic", default="sentences")
    parser.add_argument("--output-topic", default="word-counts-out")
    parser.add_argument("--topics-dir", help="embedded topics directory (default: a temporary one)")
    parser.add_argument("--checkpoint-dir", help="Spark checkpoints (default: a temporary directory)")
    parser.add_argument("--cache-bytes", type=int, help="statestore.cache.max.bytes (0: emit every count update)")
    parser.add_argument("--describe", action="store_true", help="print the topology's description first")
    parser.add_argument("--verbose", action="store_true", help="log every micro-batch (the library at DEBUG)")
    args = parser.parse_args(argv)
    # the library logs start, progress and warnings at INFO; Spark and the Kafka clients only warnings (docs/logging.md)
    configure_logging(args.verbose)

    topology = word_count_topology(args.input_topic, args.output_topic)
    if args.describe:
        print(topology.describe())
    lines = sentences(args.repeat)
    start = time.perf_counter()
    if args.bootstrap_servers:
        final = run_on_kafka(word_count_topology, lines, args.partitions, args.bootstrap_servers, args.input_topic,
                             args.output_topic, args.checkpoint_dir, args.cache_bytes)
        engine = f"spark+kafka ({args.bootstrap_servers})"
    elif args.engine == "spark":
        final = run_on_spark(topology, lines, args.partitions, args.topics_dir, args.checkpoint_dir, args.cache_bytes)
        engine = "spark"
    else:
        final = run_in_process(topology, lines, args.partitions)
        engine = "local"
    if not any(final.values()):
        raise RuntimeError(f"no counts were read back from {args.output_topic}")
    report(final, time.perf_counter() - start, engine, len(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

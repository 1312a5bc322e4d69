"""Word count, the README topology, on Spark Structured Streaming over embedded topics (4 partitions).

Prints the topology description, logs progress (batches, records, lag) while Spark runs, then each partition's
counts and the top words. ``--engine local`` runs the same topology on the in-process driver instead.
``--bootstrap-servers`` runs it against a Kafka cluster: the bundled text is produced to ``--input-topic``
(created with ``--partitions`` partitions if missing) and the counts are read back from ``--output-topic``.

    make run          # or: .venv/bin/python examples/wordcount.py [--partitions N] [--repeat N] [--engine local]
    spark-submit --master 'local[2]' --jars "$(python -c 'from streams_on_spark.connectors.kafka import kafka_jars;
        print(",".join(kafka_jars()))')" examples/wordcount.py --bootstrap-servers 127.0.0.1:9092
"""
from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

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
from streams_on_spark.connectors.records import ProducerRecord

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


def run_on_spark(topology: Topology, lines: list[tuple[str, str]], partitions: int) -> dict[int, dict[str, int]]:
    with EmbeddedTopics() as topics, tempfile.TemporaryDirectory(prefix="wordcount-checkpoints-") as checkpoints:
        topics.create_topic("sentences", partitions)
        topics.create_topic("word-counts-out", partitions)
        config = {"application.id": "wordcount", "embedded.topics.dir": topics.root,
                  "checkpoint.location": checkpoints}
        with KafkaStreams(topology, config) as streams:
            log.info("starting Spark (a local session takes a few seconds)")
            streams.start()
            half = len(lines) // 2
            for chunk in (lines[:half], lines[half:]):   # input arrives in two waves while the app runs
                topics.append([ProducerRecord("sentences", i % partitions, 1_000 + i, k.encode(), v.encode(), ())
                               for i, (k, v) in enumerate(chunk)])
                log.info("appended %d sentences to 'sentences'", len(chunk))
                streams.process_all_available()
            final: dict[int, dict[str, int]] = {}
            for p in range(partitions):
                end = topics.end_offset("word-counts-out", p)
                latest = {S.deserialize("o", r.key): L.deserialize("o", r.value)
                          for r in topics.read("word-counts-out", p, 0, end)}
                final[p] = latest
                log.info("partition %d of word-counts-out: %d count updates", p, end)
            return final


def run_on_kafka(topology_for: Any, lines: list[tuple[str, str]], partitions: int, bootstrap: str,
                 input_topic: str, output_topic: str) -> dict[int, dict[str, int]]:
    """Produce the text to Kafka, run the topology with KafkaStreams on Spark, read the counts back."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
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
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i, (key, line) in enumerate(lines):
        producer.send(input_topic, key=key.encode(), value=line.encode(), timestamp_ms=1_000 + i)
    producer.flush()
    producer.close()
    log.info("produced %d sentences to %s", len(lines), input_topic)
    with tempfile.TemporaryDirectory(prefix="wordcount-checkpoints-") as checkpoints:
        config = {"application.id": f"wordcount-{input_topic}", "bootstrap.servers": bootstrap,
                  "checkpoint.location": checkpoints}
        with KafkaStreams(topology_for(input_topic, output_topic), config) as streams:
            streams.start()
            streams.process_all_available()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest",
                             consumer_timeout_ms=2_000)
    final: dict[int, dict[str, int]] = {p: {} for p in range(partitions)}
    try:
        tps = [TopicPartition(output_topic, p) for p in range(partitions)]
        consumer.assign(tps)              # all partitions at once: a later assign() would drop earlier seeks
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        deadline = time.monotonic() + 60
        while any(consumer.position(tp) < ends[tp] for tp in tps) and time.monotonic() < deadline:
            for tp, records in consumer.poll(timeout_ms=1_000).items():
                for r in records:
                    final[tp.partition][S.deserialize(output_topic, r.key)] = L.deserialize(output_topic, r.value)
    finally:
        consumer.close()
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
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)

    topology = word_count_topology(args.input_topic, args.output_topic)
    print(topology.describe())
    lines = sentences(args.repeat)
    start = time.perf_counter()
    if args.bootstrap_servers:
        final = run_on_kafka(word_count_topology, lines, args.partitions, args.bootstrap_servers, args.input_topic,
                             args.output_topic)
        engine = f"spark+kafka ({args.bootstrap_servers})"
    else:
        run = run_on_spark if args.engine == "spark" else run_in_process
        final = run(topology, lines, args.partitions)
        engine = args.engine
    report(final, time.perf_counter() - start, engine, len(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

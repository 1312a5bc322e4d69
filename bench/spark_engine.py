"""The Spark engine on the README word count, side by side with a hand-written PySpark query.

1. Throughput: N words (default 1,000,000; 10-word sentences, 5,000 distinct words) on 4-partition embedded
   topics. (a) our runtime: KafkaStreams running the word count as two subtopology queries (repartition topic in
   between, Kafka Streams semantics with the default record cache: the last count per word and micro-batch, as the
   hand-written query's update mode emits); (b) a hand-written Structured Streaming query:
   the same source, ``explode(split(value))`` -> ``groupBy(word).count()`` in update mode. Same session, same
   data; both runs checked to produce the same final counts. Prints words/s for each and the ratio.
2. State cost: per-batch time of a count whose store already holds 10k vs 1M keys when a batch updates the
   same 10k keys — the price of keeping a task's store as one snapshot in the group state.

    .venv/bin/python bench/spark_engine.py [--words N] [--big-store N]
"""
from __future__ import annotations

import argparse
import logging
import random
import sys
import tempfile
import time

from streams_on_spark import (Consumed, Grouped, KafkaStreams, Materialized, Produced, Serdes, StreamsBuilder)
from streams_on_spark.connectors.embedded import EmbeddedTopics, register
from streams_on_spark.connectors.records import ProducerRecord
from streams_on_spark.runtime.spark import local_session

log = logging.getLogger("bench.spark_engine")
S, L = Serdes.String(), Serdes.Long()
PARTITIONS = 4


def sentences(words: int, seed: int = 7, per_sentence: int = 10) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(5000)]
    return [" ".join(rng.choice(vocabulary) for _ in range(min(per_sentence, words - start)))
            for start in range(0, words, per_sentence)]


def word_count():
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(S, S))
     .flat_map_values(str.split)
     .select_key(lambda _k, w: w)
     .group_by_key(Grouped.with_(S, S, name="by-word"))
     .count(Materialized.as_("word-counts"))
     .to_stream().to("word-counts-out", Produced.with_(S, L)))
    return builder.build()


def key_count():
    builder = StreamsBuilder()
    (builder.stream("keys", Consumed.with_(S, S)).group_by_key()
     .count(Materialized.as_("counts")).to_stream().to("counts-out", Produced.with_(S, L)))
    return builder.build()


def run_ours(spark, lines: list[str]) -> tuple[float, dict[str, int]]:
    with EmbeddedTopics() as topics, tempfile.TemporaryDirectory() as checkpoints:
        topics.create_topic("sentences", PARTITIONS)
        topics.create_topic("word-counts-out", PARTITIONS)
        config = {"application.id": "bench-ours", "embedded.topics.dir": topics.root,
                  "checkpoint.location": checkpoints}
        with KafkaStreams(word_count(), config, spark) as streams:
            streams.start()
            topics.append([ProducerRecord("sentences", i % PARTITIONS, i, None, line.encode(), ())
                           for i, line in enumerate(lines)])
            start = time.perf_counter()
            streams.process_all_available()
            elapsed = time.perf_counter() - start
            counts = {}
            for p, task in streams.read_tasks(1).items():
                counts.update({kv.key: kv.value.value for kv in task.stores["word-counts"].all()})
    return elapsed, counts


def run_baseline(spark, lines: list[str]) -> tuple[float, dict[str, int]]:
    from pyspark.sql import functions as F
    register(spark)
    counts: dict[str, int] = {}

    def sink(frame, _batch_id):
        for row in frame.collect():
            counts[row["word"]] = row["count"]

    with EmbeddedTopics() as topics, tempfile.TemporaryDirectory() as checkpoint:
        topics.create_topic("sentences", PARTITIONS)
        topics.append([ProducerRecord("sentences", i % PARTITIONS, i, None, line.encode(), ())
                       for i, line in enumerate(lines)])
        spark.conf.set("spark.sql.shuffle.partitions", str(PARTITIONS))
        words = (spark.readStream.format("embedded-topics").option("path", topics.root).option("topics", "sentences")
                 .load().select(F.explode(F.split(F.col("value").cast("string"), " ")).alias("word")))
        query = (words.groupBy("word").count().writeStream.outputMode("update").foreachBatch(sink)
                 .option("checkpointLocation", checkpoint).trigger(processingTime="100 milliseconds").start())
        start = time.perf_counter()
        query.processAllAvailable()
        elapsed = time.perf_counter() - start
        query.stop()
    return elapsed, counts


def state_cost(spark, store_keys: int, updated: int) -> tuple[float, float]:
    """Seconds of the batch that fills the store, and of a later batch updating ``updated`` of its keys."""
    with EmbeddedTopics() as topics, tempfile.TemporaryDirectory() as checkpoints:
        topics.create_topic("keys", PARTITIONS)
        topics.create_topic("counts-out", PARTITIONS)
        config = {"application.id": f"bench-state-{store_keys}", "embedded.topics.dir": topics.root,
                  "checkpoint.location": checkpoints}
        with KafkaStreams(key_count(), config, spark) as streams:
            streams.start()
            fill = [ProducerRecord("keys", i % PARTITIONS, i, f"k{i}".encode(), b"v", ()) for i in range(store_keys)]
            topics.append(fill)
            start = time.perf_counter()
            streams.process_all_available()
            fill_s = time.perf_counter() - start
            topics.append(fill[:updated])
            start = time.perf_counter()
            streams.process_all_available()
            update_s = time.perf_counter() - start
    return fill_s, update_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--big-store", type=int, default=1_000_000)
    parser.add_argument("--small-store", type=int, default=10_000)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    spark = local_session("bench-spark-engine")
    lines = sentences(args.words)
    warm_lines = sentences(20_000, seed=1)
    run_baseline(spark, warm_lines)            # JVM/JIT and Python worker warm-up, not measured
    run_ours(spark, warm_lines)
    base_s, base_counts = run_baseline(spark, lines)
    ours_s, ours_counts = run_ours(spark, lines)
    if ours_counts != base_counts:
        print("MISMATCH: the two queries disagree on the counts", file=sys.stderr)
        return 1
    print(f"words={args.words} partitions={PARTITIONS} sentences={len(lines)} distinct_words={len(ours_counts)}")
    print(f"ours (KafkaStreams, 2 queries, record cache):          {ours_s:8.2f} s {args.words / ours_s:12,.0f} words/s")
    print(f"hand-written PySpark (explode + groupBy.count, update):  {base_s:8.2f} s {args.words / base_s:12,.0f} words/s")
    print(f"ratio ours/baseline throughput: {base_s / ours_s:.3f}")
    for keys in (args.small_store, args.big_store):
        fill_s, update_s = state_cost(spark, keys, args.small_store)
        print(f"store of {keys:>9,} keys: fill batch {fill_s:7.2f} s; batch updating {args.small_store:,} keys "
              f"{update_s:7.2f} s")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

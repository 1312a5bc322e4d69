"""The Spark engine on the README word count, side by side with a hand-written PySpark query.

1. Throughput: N words (default 1,000,000; 10-word sentences, 5,000 distinct words) on 4-partition embedded
   topics. (a) our runtime: KafkaStreams running the word count as two subtopology queries (repartition topic in
   between, Kafka Streams semantics with the default record cache: the last count per word and micro-batch, as the
   hand-written query's update mode emits); (b) a hand-written Structured Streaming query:
   the same source, ``explode(split(value))`` -> ``groupBy(word).count()`` in update mode; (c) our runtime in the
   opt-in pipeline mode (``pipeline.mode=true``: one query, the stateless upstream subtopology before Spark's shuffle,
   no repartition topic). Same session, same data; all runs checked to produce the same final counts. Two rounds:
   the data there when the queries start (their start, planning and first batch measured), and the data arriving at
   queries already running (their first, empty batch done: steady state). Prints words/s for each and the ratios.
2. State cost (``--only state``; ``--only fill``: only the fill's keys/s): per-batch time of a count whose one task's store already holds 10k, 1M or 10M keys when a batch
   updates the same 10k keys (median of 3 batches), and the Python workers' peak memory (VmHWM).
3. Window store cost: the same with a count in one-hour windows (10k and 1M keys in the window).
4. Global table cost: per-batch time of a stream joined with a global table of 1k vs 1M entries, a batch of 10k
   stream records (median of 3 batches, after warm-up batches that let every Python worker load the table).

    .venv/bin/python bench/spark_engine.py [--words N] [--big-store N] [--big-global N] [--only state,windows,global]
"""
from __future__ import annotations

import argparse
import logging
import os
import random
import sys
import tempfile
import time

from streams_on_spark import (Consumed, Grouped, KafkaStreams, Materialized, Produced, Serdes, StreamsBuilder,
                              TimeWindows)
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.runtime.spark.embedded_source import register
from streams_on_spark.records import ProducerRecord
from streams_on_spark.runtime.spark import local_session
from streams_on_spark.runtime.spark.session import session_conf

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


def run_ours(spark, lines: list[str], pipeline: bool = False, running: bool = False,
             timeline=None) -> tuple[float, dict[str, int]]:
    """Seconds from the sentences' arrival to the last count. ``running``: the application ran its queries' first
    (empty) batches before the sentences arrive (planned, Python workers up), as a running application meets new
    data; else the sentences arrive just after ``start()``, so the queries' start is measured too. ``timeline``:
    called with the measured round's start and end (epoch seconds) and the queries by name (bench/round_timeline.py)."""
    with EmbeddedTopics() as topics, tempfile.TemporaryDirectory() as checkpoints:
        topics.create_topic("sentences", PARTITIONS)
        topics.create_topic("word-counts-out", PARTITIONS)
        config = {"application.id": "bench-ours-pipeline" if pipeline else "bench-ours",
                  "embedded.topics.dir": topics.root, "checkpoint.location": checkpoints, "pipeline.mode": pipeline}
        with KafkaStreams(word_count(), config, spark) as streams:
            streams.start()
            if running:
                streams.process_all_available()
            topics.append([ProducerRecord("sentences", i % PARTITIONS, i, None, line.encode(), ())
                           for i, line in enumerate(lines)])
            start, since = time.perf_counter(), time.time()
            streams.process_all_available()
            elapsed = time.perf_counter() - start
            if timeline is not None:
                # the application's queries by their documented names, `<application.id>-subtopology-<id>`
                prefix = f"{config['application.id']}-subtopology-"
                timeline(since, time.time(), {q.name: q for q in spark.streams.active
                                              if q.name and q.name.startswith(prefix)})
            counts = {}
            for p, task in streams.read_tasks(1).items():
                counts.update({kv.key: kv.value.value for kv in task.stores["word-counts"].all()})
    return elapsed, counts


def run_baseline(spark, lines: list[str], running: bool = False, timeline=None) -> tuple[float, dict[str, int]]:
    """Seconds of the hand-written query over the sentences: from its start (they are there before it), or with
    ``running`` from their arrival at the query already running (its first, empty batch done). ``timeline``: as
    :func:`run_ours`'s."""
    from pyspark.sql import functions as F
    register(spark)
    counts: dict[str, int] = {}

    def sink(frame, _batch_id):
        for row in frame.collect():
            counts[row["word"]] = row["count"]

    records = [ProducerRecord("sentences", i % PARTITIONS, i, None, line.encode(), ()) for i, line in enumerate(lines)]
    with EmbeddedTopics() as topics, tempfile.TemporaryDirectory() as checkpoint:
        topics.create_topic("sentences", PARTITIONS)
        if not running:
            topics.append(records)
        words = (spark.readStream.format("embedded-topics").option("path", topics.root).option("topics", "sentences")
                 .load().select(F.explode(F.split(F.col("value").cast("string"), " ")).alias("word")))
        with session_conf(spark, "spark.sql.shuffle.partitions", str(PARTITIONS)):   # this query's; ours keep theirs
            query = (words.groupBy("word").count().writeStream.outputMode("update").foreachBatch(sink)
                     .option("checkpointLocation", checkpoint).trigger(processingTime="100 milliseconds").start())
        if running:
            query.processAllAvailable()
            topics.append(records)
        start, since = time.perf_counter(), time.time()
        query.processAllAvailable()
        elapsed = time.perf_counter() - start
        if timeline is not None:
            timeline(since, time.time(), {"hand-written": query})
        query.stop()
    return elapsed, counts


def window_count():
    """A count per key in one-hour tumbling windows: a window store (the records of a run share one window)."""
    builder = StreamsBuilder()
    (builder.stream("keys", Consumed.with_(S, S)).group_by_key()
     .windowed_by(TimeWindows.of_size_with_no_grace(3_600_000))
     .count(Materialized.as_("window-counts")).to_stream().select_key(lambda windowed, _count: windowed.key)
     .to("counts-out", Produced.with_(S, L)))
    return builder.build()


def state_cost(spark, store_keys: int, updated: int, fill_batch: int = 1_000_000,
               rounds: int = 3, topology=key_count, fill_batches: list | None = None) -> tuple[float, float]:
    """Seconds the queries took to fill one task's store with ``store_keys`` keys (batches of ``fill_batch`` records,
    each written before it is timed; each batch's seconds appended to ``fill_batches`` if given), and the median of
    ``rounds`` later batches each updating the same ``updated`` keys."""
    with EmbeddedTopics() as topics, tempfile.TemporaryDirectory() as checkpoints:
        topics.create_topic("keys", 1)
        topics.create_topic("counts-out", 1)
        config = {"application.id": f"bench-state-{store_keys}", "embedded.topics.dir": topics.root,
                  "checkpoint.location": checkpoints}
        with KafkaStreams(topology(), config, spark) as streams:
            streams.start()
            fill_s = 0.0   # the queries' time only: writing the input is the bench's, not the engine's
            for first in range(0, store_keys, fill_batch):
                topics.append([ProducerRecord("keys", 0, 1, f"k{i}".encode(), b"v", ())
                               for i in range(first, min(store_keys, first + fill_batch))])
                start = time.perf_counter()
                streams.process_all_available()
                fill_s += time.perf_counter() - start
                if fill_batches is not None:
                    fill_batches.append(time.perf_counter() - start)
            times = []
            for _ in range(rounds):
                topics.append([ProducerRecord("keys", 0, 2, f"k{i}".encode(), b"v", ()) for i in range(updated)])
                start = time.perf_counter()
                streams.process_all_available()
                times.append(time.perf_counter() - start)
    return fill_s, sorted(times)[rounds // 2]


def state_section(spark, label: str, sizes: tuple[int, ...], updated: int, topology, memory: bool = False) -> None:
    """Print the per-batch cost of updating ``updated`` keys of a ``label`` holding each of ``sizes`` keys, and the
    largest / smallest ratio."""
    results = {}
    for keys in sizes:
        fill_s, update_s = state_cost(spark, keys, updated, topology=topology)
        results[keys] = update_s
        peak = f"; Python workers' peak memory so far {python_workers_peak_rss_mb():,.0f} MB" if memory else ""
        print(f"{label} of {keys:>10,} keys in one task: filled in {fill_s:7.2f} s; batch updating {updated:,} of "
              f"its keys {update_s:6.2f} s (median of 3){peak}")
    ratio = results[sizes[-1]] / results[sizes[0]]
    print(f"ratio {sizes[-1]:,}-key / {sizes[0]:,}-key {label} per-batch cost: {ratio:.2f}")


def python_workers_peak_rss_mb() -> float:
    """The largest peak resident memory (VmHWM) among this machine's PySpark Python workers, in MB."""
    peak = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"pyspark.daemon" not in f.read():
                    continue
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            continue
    return peak / 1024


def global_join():
    builder = StreamsBuilder()
    table = builder.global_table("products", Consumed.with_(S, S), Materialized.as_("products"))
    (builder.stream("orders", Consumed.with_(S, S))
     .join(table, lambda _k, product: product, lambda order, product: product)
     .to("enriched", Produced.with_(S, S)))
    return builder.build()


def global_cost(spark, entries: int, batch: int, rounds: int = 3, warm: int = 4) -> tuple[float, float]:
    """Seconds of the first batch (every worker loads the table) and the median of ``rounds`` later batches of
    ``batch`` stream records joined with a global table of ``entries`` entries."""
    with EmbeddedTopics() as topics, tempfile.TemporaryDirectory() as checkpoints:
        topics.create_topic("products", PARTITIONS)
        topics.create_topic("orders", PARTITIONS)
        topics.create_topic("enriched", PARTITIONS)
        topics.append([ProducerRecord("products", i % PARTITIONS, 1, f"p{i}".encode(), f"item {i}".encode(), ())
                       for i in range(entries)])
        config = {"application.id": f"bench-global-{entries}", "embedded.topics.dir": topics.root,
                  "checkpoint.location": checkpoints}
        rng = random.Random(3)
        times = []
        with KafkaStreams(global_join(), config, spark) as streams:
            streams.start()
            for _ in range(warm + rounds):
                topics.append([ProducerRecord("orders", i % PARTITIONS, 2, f"o{i}".encode(),
                                              f"p{rng.randrange(entries)}".encode(), ()) for i in range(batch)])
                start = time.perf_counter()
                streams.process_all_available()
                times.append(time.perf_counter() - start)
        if sum(topics.end_offsets("enriched")) != (warm + rounds) * batch:
            raise AssertionError("the join lost or doubled records")
    return times[0], sorted(times[warm:])[rounds // 2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--big-store", type=int, default=10_000_000)
    parser.add_argument("--mid-store", type=int, default=1_000_000)
    parser.add_argument("--small-store", type=int, default=10_000)
    parser.add_argument("--big-global", type=int, default=1_000_000)
    parser.add_argument("--small-global", type=int, default=1_000)
    parser.add_argument("--fill-keys", type=int, default=2_000_000,
                        help="the fill section's distinct keys, in batches of 1M (default 2M)")
    parser.add_argument("--only", default="throughput,state,windows,global",
                        help="sections to run, comma-separated (also: fill)")
    parser.add_argument("--java-options", default="",
                        help="the local session's JVM options (default: none, the JVM's own JIT; local_session's "
                             "default is -XX:TieredStopAtLevel=1)")
    args = parser.parse_args(argv)
    sections = set(args.only.split(","))
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    # the JVM's default JIT (C2), as a hand-written PySpark application runs: the baseline shares the session, and
    # local_session's C1-only default (for short local runs) slows its per-row JVM work
    spark = local_session("bench-spark-engine", java_options=args.java_options)
    if "throughput" in sections and throughput(spark, args):
        return 1
    if "fill" in sections:
        batches: list[float] = []
        fill_s, _ = state_cost(spark, args.fill_keys, args.small_store, rounds=1, fill_batches=batches)
        # the first batch also pays the new session's first query (JIT, Python workers' start): each batch apart
        print(f"filling one task's store with {args.fill_keys:,} distinct keys (batches of 1M): {fill_s:.2f} s, "
              f"{args.fill_keys / fill_s:,.0f} keys/s; a batch: {', '.join(f'{b:.2f} s' for b in batches)}")
    if "state" in sections:
        state_section(spark, "store", (args.small_store, args.mid_store, args.big_store), args.small_store,
                      key_count, memory=True)
    if "windows" in sections:
        state_section(spark, "window store", (args.small_store, args.mid_store), args.small_store, window_count)
    if "global" in sections:
        results = {}
        for entries in (args.small_global, args.big_global):
            first_s, batch_s = global_cost(spark, entries, 10_000)
            results[entries] = batch_s
            print(f"global table of {entries:>9,} entries: first batch {first_s:7.2f} s; batch of 10,000 joined "
                  f"records {batch_s:7.2f} s (median of 3)")
        print(f"ratio big/small global table per-batch cost: "
              f"{results[args.big_global] / results[args.small_global]:.2f}")
    spark.stop()
    return 0


def warm_up(spark, words: int = 20_000) -> None:
    """Run each of the three once over ``words`` words, not measured: the JVM's JIT and the Python workers."""
    warm_lines = sentences(words, seed=1)
    run_baseline(spark, warm_lines)
    run_ours(spark, warm_lines)
    run_ours(spark, warm_lines, pipeline=True)


def throughput(spark, args) -> int:
    """Section 1; non-zero when the two queries disagree."""
    lines = sentences(args.words)
    warm_up(spark)
    print(f"words={args.words} partitions={PARTITIONS} sentences={len(lines)}")
    for running in (False, True):
        base_s, base_counts = run_baseline(spark, lines, running)
        ours_s, ours_counts = run_ours(spark, lines, running=running)
        pipe_s, pipe_counts = run_ours(spark, lines, pipeline=True, running=running)
        if ours_counts != base_counts or pipe_counts != base_counts:
            print("MISMATCH: the queries disagree on the counts", file=sys.stderr)
            return 1
        print("running queries meet the data (first batches done before it arrives):" if running else
              "the data is there when the queries start (their start measured):")
        print(f"  ours (KafkaStreams, 2 queries, record cache):            {ours_s:8.2f} s "
              f"{args.words / ours_s:12,.0f} words/s")
        print(f"  ours, pipeline.mode=true (1 query, no repartition topic): {pipe_s:8.2f} s "
              f"{args.words / pipe_s:12,.0f} words/s")
        print(f"  hand-written PySpark (explode + groupBy.count, update):  {base_s:8.2f} s "
              f"{args.words / base_s:12,.0f} words/s")
        label = "running" if running else "from start"
        print(f"  ratio ours/baseline throughput ({label}): {base_s / ours_s:.3f}")
        print(f"  ratio ours pipeline mode/baseline throughput ({label}): {base_s / pipe_s:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

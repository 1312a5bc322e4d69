"""Throughput of the in-process TopologyTestDriver on the README word count (4 partitions).

Pipes N words (default 1,000,000) as sentences through flat_map_values -> select_key -> group_by_key -> count ->
to_stream().to(), and prints input words per second: with Kafka's default record cache (flushed after every
record, as Kafka's driver commits) and with ``statestore.cache.max.bytes=0``. Baseline side by side in the same
run: the same counting done by a plain Python loop over the same sentences (dict of counts, murmur2 placement of
each word), so the ratio shows what the Kafka Streams semantics (serdes, repartition topic, per-task stores,
scheduling) cost.

    .venv/bin/python bench/driver_throughput.py [--words N] [--partitions P]
"""
from __future__ import annotations

import argparse
import logging
import random
import sys
import time

from streams_on_spark import (Consumed, Grouped, Materialized, Produced, Serdes, StreamsBuilder,
                              TopologyTestDriverBuilder)
from streams_on_spark.connectors.partitioner import partition_for_key

log = logging.getLogger("bench.driver_throughput")


def sentences(words: int, seed: int = 7, per_sentence: int = 10) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(5000)]
    out = []
    for start in range(0, words, per_sentence):
        n = min(per_sentence, words - start)
        out.append(" ".join(rng.choice(vocabulary) for _ in range(n)))
    return out


def word_count_topology():
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(Serdes.String(), Serdes.String()))
     .flat_map_values(lambda sentence: sentence.split())
     .select_key(lambda _key, word: word)
     .group_by_key(Grouped.with_(Serdes.String(), Serdes.String(), name="by-word"))
     .count(Materialized.as_("word-counts"))
     .to_stream()
     .to("word-counts-out", Produced.with_(Serdes.String(), Serdes.Long())))
    return builder.build()


def run_driver(lines: list[str], partitions: int, cache_bytes: int | None = None) -> tuple[float, dict[str, int]]:
    config = {"application.id": "bench-wc"}
    if cache_bytes is not None:
        config["statestore.cache.max.bytes"] = cache_bytes
    driver = (TopologyTestDriverBuilder(word_count_topology())
              .with_config(config)
              .declare_topic("sentences", partitions)
              .declare_topic("word-counts-out", partitions)
              .build())
    with driver:
        topic = driver.create_input_topic("sentences", Serdes.String(), Serdes.String(), start_timestamp=0)
        start = time.perf_counter()
        for i, line in enumerate(lines):
            topic.pipe_input(f"line-{i}", line)
            if i % 10000 == 9999:
                log.info("piped %d sentences", i + 1)
        elapsed = time.perf_counter() - start
        produced = driver.create_output_topic("word-counts-out", Serdes.String(), Serdes.Long()).get_queue_size()
        if produced != sum(len(line.split()) for line in lines):
            raise RuntimeError(f"expected one count update per word, got {produced} output records")
        counts: dict[str, int] = {}
        for p in range(partitions):
            for key, value in driver.get_key_value_store("word-counts", p).all():
                counts[key] = value
    return elapsed, counts


def run_baseline(lines: list[str], partitions: int) -> tuple[float, dict[str, int]]:
    start = time.perf_counter()
    stores: list[dict[str, int]] = [dict() for _ in range(partitions)]
    for line in lines:
        for word in line.split():
            store = stores[partition_for_key(word.encode("utf-8"), partitions)]
            store[word] = store.get(word, 0) + 1
    elapsed = time.perf_counter() - start
    counts = {k: v for store in stores for k, v in store.items()}
    return elapsed, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    lines = sentences(args.words)
    base_s, base_counts = run_baseline(lines, args.partitions)
    drv_s, drv_counts = run_driver(lines, args.partitions)
    raw_s, raw_counts = run_driver(lines, args.partitions, cache_bytes=0)
    if drv_counts != base_counts or raw_counts != base_counts:
        print("MISMATCH: driver counts differ from the baseline", file=sys.stderr)
        return 1
    drv_rate, raw_rate, base_rate = args.words / drv_s, args.words / raw_s, args.words / base_s
    print(f"words={args.words} partitions={args.partitions} sentences={len(lines)} distinct_words={len(drv_counts)}")
    print(f"driver:   {drv_s:8.2f} s  {drv_rate:12,.0f} words/s  (record cache on: Kafka's default)")
    print(f"driver:   {raw_s:8.2f} s  {raw_rate:12,.0f} words/s  (statestore.cache.max.bytes=0)")
    print(f"baseline: {base_s:8.2f} s  {base_rate:12,.0f} words/s  (plain Python dict counting, same placement)")
    print(f"ratio driver/baseline throughput: {drv_rate / base_rate:.3f} (cache on), {raw_rate / base_rate:.3f} (off)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The application the crash tests kill: counts per word, and per word in one-minute windows, over embedded topics
or Kafka, with either processing guarantee.

One input partition, repartitioned by word into four: each of the four counting tasks gets its words in timestamp
order, so no record is ever late and the windows expire (a whole 60 s segment at a time) the same however the run is
cut into batches.

``python crash_app.py TOPICS CHECKPOINTS STATE_DIR`` processes what arrives until it is killed; with ``--drain`` it
processes everything there is, prints the stores as JSON and exits. TOPICS is the embedded topics' directory, or with
``--kafka`` the broker's bootstrap address. ``--master submit`` takes the master spark-submit gives.

The crash tests (tests/integration/spark, tests/integration/cluster) load this module for its input (:func:`chunk`)
and its oracle (:func:`verify`).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from typing import Callable

from pyspark.sql import SparkSession

from streams_on_spark import (Consumed, KafkaStreams, Materialized, Produced, Repartitioned, Serdes, StreamsBuilder,
                              TimeWindows)
from streams_on_spark.runtime.spark.session import RUNTIME_DEFAULTS

S, L = Serdes.String(), Serdes.Long()
WORDS = [f"w{i}" for i in range(40)]
WINDOW = RETENTION = 60_000   # one-minute windows, no grace
OUTPUTS = ("counts-out", "window-counts-out")


def chunk(rng: random.Random, first: int, lines: int) -> list[tuple[int, str]]:
    """``lines`` random sentences, numbered from ``first``: line n goes to the input with timestamp (n + 1) s."""
    return [(first + i, " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 8)))) for i in range(lines)]


def records(prefix: str, lines: list[tuple[int, str]]) -> list:
    """The input records of ``lines`` (for ``append``)."""
    from streams_on_spark.connectors.records import ProducerRecord
    return [ProducerRecord(f"{prefix}sentences", 0, 1_000 * (n + 1), f"line-{n}".encode(), text.encode(), ())
            for n, text in lines]


def verify(sent: list[tuple[int, str]], stores: dict, read: Callable[[str, int], list[tuple[bytes, bytes]]],
           prefix: str, app_id: str, exactly_once: bool) -> None:
    """After a drain: the stores hold what an uninterrupted run holds; every count update reached the output topics
    once and in order (``exactly_once``), or at least once; the repartition topic holds every word once (or at
    least once). ``read(topic, partitions)`` gives a topic's (key, value) pairs, read_committed on Kafka."""
    from streams_on_spark.connectors.partitioner import partition_for_key
    words = Counter(word for _, text in sent for word in text.split())
    windows = Counter((word, (n + 1) * 1000 // WINDOW * WINDOW) for n, text in sent for word in text.split())
    assert stores["counts"] == dict(words)
    # a task's window store keeps the windows starting after its last window start - retention (size + grace)
    task_of = {word: partition_for_key(S.serialize("by-word", word), 4) for word in words}
    last = {task_of[word]: start for (word, start) in sorted(windows, key=lambda w: w[1])}
    kept = {f"{word}@{start}": n for (word, start), n in windows.items() if start > last[task_of[word]] - RETENTION}
    assert stores["window-counts"] == kept
    assert len(kept) < len(windows)   # windows expired along the way, by whole segments
    windows = Counter({f"{word}@{start}": n for (word, start), n in windows.items()})
    for topic, expected in ((f"{prefix}counts-out", words), (f"{prefix}window-counts-out", windows)):
        updates: dict[str, list[int]] = {}
        for key, value in read(topic, 4):
            updates.setdefault(S.deserialize(topic, key), []).append(L.deserialize(topic, value))
        assert set(updates) == set(expected), topic
        if exactly_once:
            wrong = {k: v for k, v in updates.items() if v != list(range(1, expected[k] + 1))}
        else:   # at least once: every update, in order once deduplicated; a replay may repeat some
            wrong = {k: v for k, v in updates.items() if sorted(set(v)) != list(range(1, expected[k] + 1))}
        assert not wrong, f"{topic}: {wrong}"
    repartitioned = Counter(S.deserialize("r", value) for _, value in read(f"{app_id}-by-word-repartition", 4))
    if exactly_once:
        assert repartitioned == words, "the repartition topic holds a word more or less often than it was sent"
    else:
        assert not words - repartitioned, "words lost in the repartition topic"


def topology(prefix: str = ""):
    builder = StreamsBuilder()
    words = (builder.stream(f"{prefix}sentences", Consumed.with_(S, S))
             .flat_map_values(str.split)
             .select_key(lambda _k, word: word)
             .repartition(Repartitioned.with_(S, S).with_name("by-word").with_number_of_partitions(4))
             .group_by_key())
    words.count(Materialized.as_("counts")).to_stream().to(f"{prefix}counts-out", Produced.with_(S, L))
    (words.windowed_by(TimeWindows.of_size_with_no_grace(60_000))
     .count(Materialized.as_("window-counts"))
     .to_stream().select_key(lambda windowed, _n: f"{windowed.key}@{windowed.window.start}")
     .to(f"{prefix}window-counts-out", Produced.with_(S, L)))
    return builder.build()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("topics")
    parser.add_argument("checkpoints")
    parser.add_argument("state_dir")
    parser.add_argument("--drain", action="store_true")
    parser.add_argument("--kafka", action="store_true", help="TOPICS is a Kafka bootstrap address")
    parser.add_argument("--guarantee", default="at_least_once")
    parser.add_argument("--app-id", default="crash")
    parser.add_argument("--master", default="local[2,4]")
    parser.add_argument("--prefix", default="", help="of the input and output topics' names")
    args = parser.parse_args()
    builder = SparkSession.builder if args.master == "submit" else SparkSession.builder.master(args.master)
    builder = (builder.appName("crash-app")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1"))
    for key, value in RUNTIME_DEFAULTS.items():
        builder = builder.config(key, value)
    if args.kafka and args.master != "submit":
        from streams_on_spark.connectors.kafka import kafka_jars
        builder = builder.config("spark.jars", ",".join(kafka_jars()))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    config = {"application.id": args.app_id, "checkpoint.location": args.checkpoints, "state.dir": args.state_dir,
              "statestore.cache.max.bytes": 0, "processing.guarantee": args.guarantee,
              ("bootstrap.servers" if args.kafka else "embedded.topics.dir"): args.topics}
    with KafkaStreams(topology(args.prefix), config, spark) as streams:
        streams.start()
        print("started", flush=True)
        if not args.drain:
            while True:
                streams.process_all_available()
                time.sleep(0.05)
        streams.process_all_available()
        tasks = streams.read_tasks(1)   # subtopology 1: after the repartition topic, both stores
        stores = {
            "counts": {kv.key: kv.value.value for task in tasks.values() for kv in task.stores["counts"].all()},
            "window-counts": {f"{kv.key.key}@{kv.key.window.start}": kv.value.value
                              for task in tasks.values() for kv in task.stores["window-counts"].all()},
        }
        print("stores " + json.dumps(stores), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

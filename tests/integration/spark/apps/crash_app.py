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
from streams_on_spark.runtime.spark.session import RUNTIME_DEFAULTS, local_session

S, L = Serdes.String(), Serdes.Long()
WORDS = [f"w{i}" for i in range(40)]
WINDOW = RETENTION = 60_000   # one-minute windows, no grace
OUTPUTS = ("counts-out", "window-counts-out")


def chunk(rng: random.Random, first: int, lines: int) -> list[tuple[int, str]]:
    """``lines`` random sentences, numbered from ``first``: line n goes to the input with timestamp (n + 1) s."""
    return [(first + i, " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 8)))) for i in range(lines)]


def records(prefix: str, lines: list[tuple[int, str]]) -> list:
    """The input records of ``lines`` (for ``append``)."""
    from streams_on_spark.records import ProducerRecord
    return [ProducerRecord(f"{prefix}sentences", 0, 1_000 * (n + 1), f"line-{n}".encode(), text.encode(), ())
            for n, text in lines]


def verify(sent: list[tuple[int, str]], stores: dict, read: Callable[[str, int], list[tuple]],
           prefix: str, app_id: str, exactly_once: bool) -> None:
    """After a drain: the stores hold what the counting tasks' input makes them hold; every count update reached the
    output topics once and in order (``exactly_once``), or at least once; the repartition topic holds every word once
    (or at least once). ``read(topic, partitions)`` gives a topic's records as ``(key, value, timestamp)`` tuples by
    partition and offset, read_committed on Kafka (``(key, value)`` pairs do for ``exactly_once``).

    Under ``exactly_once`` the counting tasks' input is exactly the words sent, so the stores hold the counts of an
    uninterrupted run. Under ``at_least_once`` a batch of the first subtopology replayed after a crash writes its words
    to the repartition topic again, and the counting tasks count them again, as Kafka Streams' do (a duplicate input
    record is a new record to an aggregation): nothing may be lost (every word sent is in the repartition topic at
    least as often), and the stores and updates are those of an uninterrupted run over what the repartition topic
    holds (the counting tasks' own state is exactly-once: Spark's checkpointed state), a duplicate landing in a
    window already closed being dropped as late."""
    from streams_on_spark.partitioner import partition_for_key
    words = Counter(word for _, text in sent for word in text.split())
    rows = read(f"{app_id}-by-word-repartition", 4)
    repartitioned = Counter(S.deserialize("r", row[1]) for row in rows)
    lost, doubled = words - repartitioned, repartitioned - words
    seen = (f"the repartition topic holds {sum(repartitioned.values())} words for {sum(words.values())} sent "
            f"(lost: {_some(lost)}; more than sent: {_some(doubled)})")
    task_of = {word: partition_for_key(S.serialize("by-word", word), 4) for word in words}
    if exactly_once:
        assert not lost and not doubled, \
            f"the repartition topic holds a word more or less often than it was sent: {seen}"
        counted = words
        windows = Counter((word, (n + 1) * 1000 // WINDOW * WINDOW) for n, text in sent for word in text.split())
    else:
        assert not lost, f"words lost in the repartition topic: {seen}"
        counted = repartitioned
        windows = _window_counts(rows, task_of)
    assert stores["counts"] == dict(counted), f"store counts: {_diff(stores['counts'], counted)}; {seen}"
    # a task's window store keeps the windows starting after its last window start - retention (size + grace)
    last = {task_of[word]: start for (word, start) in sorted(windows, key=lambda w: w[1])}
    kept = {f"{word}@{start}": n for (word, start), n in windows.items() if start > last[task_of[word]] - RETENTION}
    assert stores["window-counts"] == kept, f"store window-counts: {_diff(stores['window-counts'], kept)}; {seen}"
    assert len(kept) < len(windows), f"no window expired: {len(kept)} windows kept of {len(windows)}"
    windows = Counter({f"{word}@{start}": n for (word, start), n in windows.items()})
    for topic, expected in ((f"{prefix}counts-out", counted), (f"{prefix}window-counts-out", windows)):
        updates: dict[str, list[int]] = {}
        for row in read(topic, 4):
            updates.setdefault(S.deserialize(topic, row[0]), []).append(L.deserialize(topic, row[1]))
        assert set(updates) == set(expected), \
            f"{topic}: keys without updates: {_some(set(expected) - set(updates))}, " \
            f"keys never counted: {_some(set(updates) - set(expected))}; {seen}"
        if exactly_once:
            wrong = {k: v for k, v in updates.items() if v != list(range(1, expected[k] + 1))}
        else:   # at least once: every update, in order once deduplicated; a replay may repeat some
            wrong = {k: v for k, v in updates.items() if sorted(set(v)) != list(range(1, expected[k] + 1))}
        assert not wrong, f"{topic}: updates (key: updates, expected 1..n): " \
            f"{_some({k: (v, expected[k]) for k, v in wrong.items()})}; {seen}"


def _window_counts(rows: list[tuple], task_of: dict[str, int]) -> Counter:
    """What the window store counts of the repartition topic's records ``(key, value, timestamp)`` (by partition and
    offset: each counting task's input in its order): each record in its window unless the window closed (end <=
    the task's stream time: no grace), as ``KStreamWindowAggregate`` drops it."""
    if rows and len(rows[0]) < 3:
        raise TypeError("at_least_once needs the repartition topic's timestamps: read must give "
                        "(key, value, timestamp)")
    stream_time: dict[int, int] = {}
    counted: Counter = Counter()
    for _key, value, timestamp, *_ in rows:
        word = S.deserialize("r", value)
        task = task_of[word]
        stream_time[task] = now = max(stream_time.get(task, -1), timestamp)
        start = timestamp // WINDOW * WINDOW
        if start + WINDOW > now:
            counted[(word, start)] += 1
    return counted


def _diff(actual: dict, expected: dict) -> str:
    """What differs between two ``key -> count`` maps, a few keys of each kind."""
    keys = set(actual) | set(expected)
    more = {k: (actual[k], expected[k]) for k in keys if k in actual and k in expected and actual[k] > expected[k]}
    less = {k: (actual[k], expected[k]) for k in keys if k in actual and k in expected and actual[k] < expected[k]}
    return (f"{len(more)} keys above (key: (found, expected)) {_some(more)}, {len(less)} below {_some(less)}, "
            f"missing {_some({k: expected[k] for k in expected if k not in actual})}, "
            f"unexpected {_some({k: actual[k] for k in actual if k not in expected})}")


def _some(items, limit: int = 12) -> str:
    """A few of ``items`` (a dict, a Counter or a set) for a message, and how many there are."""
    if isinstance(items, dict):
        shown = dict(sorted(items.items())[:limit])
    else:
        shown = sorted(items)[:limit]
    return f"{shown}{f' (+{len(items) - limit} more)' if len(items) > limit else ''}" if items else "none"


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
    parser.add_argument("--master", default="local", help="'submit': the session spark-submit configured")
    parser.add_argument("--prefix", default="", help="of the input and output topics' names")
    args = parser.parse_args()
    if args.master == "submit":   # spark-submit's session, as a user's application gets it
        builder = (SparkSession.builder.appName("crash-app")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1"))
        for key, value in RUNTIME_DEFAULTS.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
    else:   # the library's local session (what an application started without Spark configured gets), each task
        # given 4 attempts; its starts are what a kill costs the test
        from streams_on_spark.connectors.kafka import kafka_jars
        spark = local_session("crash-app", cores=2, max_failures=4, jars=kafka_jars() if args.kafka else ())
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

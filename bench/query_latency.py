"""Interactive-query latency over a count store of N keys (default 1,000,000) in 4 tasks of the TopologyTestDriver.

Fills a ``count`` store through the driver (one record per key, piped as record lists, 4 partitions), then times,
each over ``--queries`` random keys after a warm-up: a point read through ``store()`` (IQv1, a composite key-value
store over the 4 tasks), a ``KeyQuery`` through ``query()`` (IQv2: every partition answers, with its position), and
a ``RangeQuery`` of ~100 keys (a range read costs what it returns). Prints the median and p99 of each in
microseconds, the memory the stores take (the process's RSS growth over the fill, read from /proc; and Python's
traced allocations when ``--tracemalloc``), and the fill time.

On the driver the stores answering are the tasks' own, updated in the same thread as each record is processed, so
the lag of an answer is zero; a running application's copy on the driver (docs/architecture.md, "Interactive
queries") would answer from the same in-memory stores through the same code, and add its own lag.

    .venv/bin/python bench/query_latency.py [--keys N] [--queries Q] [--tracemalloc]
    .venv/bin/python bench/query_latency.py --spark [--keys N]   # a running KafkaStreams, interactive.queries=true
"""
from __future__ import annotations

import argparse
import random
import statistics
import time
import tracemalloc

from streams_on_spark import Consumed, Grouped, Materialized, Serdes, StreamsBuilder, TestRecord
from streams_on_spark import TopologyTestDriverBuilder
from streams_on_spark.query import KeyQuery, QueryableStoreTypes, RangeQuery, StateQueryRequest, StoreQueryParameters

S, L = Serdes.String(), Serdes.Long()


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        import os
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def timed(fn, args: list) -> list[float]:
    """Microseconds per call of ``fn(arg)`` for each of ``args``."""
    out = []
    for a in args:
        started = time.perf_counter()
        fn(a)
        out.append((time.perf_counter() - started) * 1e6)
    return out


def summary(name: str, micros: list[float]) -> None:
    ordered = sorted(micros)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(f"{name:<40} median {statistics.median(ordered):9.1f} us   p99 {p99:9.1f} us   ({len(ordered)} queries)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--tracemalloc", action="store_true")
    args = parser.parse_args()
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .count(Materialized.as_("counts").with_key_serde(S).with_value_serde(L)))
    driver = (TopologyTestDriverBuilder(builder.build()).with_config({"application.id": "query-latency"})
              .declare_topic("events", 4).build())
    events = driver.create_input_topic("events", S, S)
    keys = [f"user-{i:08d}" for i in range(args.keys)]
    if args.tracemalloc:
        tracemalloc.start()
    before = rss_bytes()
    started = time.perf_counter()
    for i in range(0, len(keys), 50_000):
        events.pipe_record_list([TestRecord(k, "x", 0) for k in keys[i:i + 50_000]])
    fill = time.perf_counter() - started
    grown = rss_bytes() - before
    traced = tracemalloc.get_traced_memory()[0] if args.tracemalloc else None
    print(f"filled {args.keys:,} keys into 4 tasks in {fill:.1f} s; RSS grew {grown / 2**20:.0f} MiB "
          f"({grown / args.keys:.0f} bytes per key, the driver's input log included)"
          + ("" if traced is None else f"; traced {traced / 2**20:.0f} MiB"))
    tracemalloc.stop()

    store = driver.store(StoreQueryParameters.from_name_and_type("counts", QueryableStoreTypes.key_value_store()))
    rng = random.Random(1)
    sample = [rng.choice(keys) for _ in range(args.queries)]
    assert all(store.get(k) == 1 for k in sample[:100])
    timed(store.get, sample[:200])   # warm-up
    summary("store().get(key), IQv1", timed(store.get, sample))

    def key_query(k: str) -> None:
        result = driver.query(StateQueryRequest.in_store("counts").with_query(KeyQuery.with_key(k)))
        assert result.get_only_partition_result().get_result() == 1

    summary("query(KeyQuery), IQv2, 4 partitions", timed(key_query, sample))

    def range_query(k: str) -> None:
        lo = int(k[5:])
        hi = f"user-{min(lo + 99, args.keys - 1):08d}"
        result = driver.query(StateQueryRequest.in_store("counts").with_query(RangeQuery.with_range(k, hi)))
        assert sum(len(list(r.get_result())) for r in result.get_partition_results().values()) == \
            min(100, args.keys - lo)

    summary("query(RangeQuery) of 100 keys, IQv2", timed(range_query, sample[: max(1, args.queries // 10)]))
    driver.close()


def on_spark(keys: int, queries: int) -> None:
    """The same count on a running KafkaStreams (embedded topics, 4 partitions, interactive.queries=true): the
    driver's copy's memory and lag, and the point-query latency it answers with."""
    import os
    import tempfile

    from streams_on_spark import KafkaStreams
    from streams_on_spark.connectors.embedded import EmbeddedTopics
    from streams_on_spark.partitioner import partition_for_key
    from streams_on_spark.records import ProducerRecord
    root = tempfile.mkdtemp(prefix="query-latency-")
    topics = EmbeddedTopics(os.path.join(root, "topics"))
    topics.create_topic("events", 4)
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .count(Materialized.as_("counts").with_key_serde(S).with_value_serde(L)))
    config = {"application.id": "query-latency", "embedded.topics.dir": topics.root, "interactive.queries": True,
              "checkpoint.location": os.path.join(root, "ck")}
    names = [f"user-{i:08d}" for i in range(keys)]
    for i in range(0, keys, 100_000):
        topics.append([ProducerRecord("events", partition_for_key(k.encode(), 4), 0, k.encode(), b"x", ())
                       for k in names[i:i + 100_000]])
    with KafkaStreams(builder.build(), config) as app:
        app.start()
        params = StoreQueryParameters.from_name_and_type("counts", QueryableStoreTypes.key_value_store())
        store = app.store(params)
        before = rss_bytes()
        started = time.perf_counter()
        app.process_all_available()
        print(f"Spark: {keys:,} keys counted in {time.perf_counter() - started:.1f} s; the driver's RSS grew "
              f"{(rss_bytes() - before) / 2**20:.0f} MiB with the copy ({(rss_bytes() - before) / keys:.0f} bytes "
              "per key, Spark's own driver memory included)")
        assert store.approximate_num_entries() == keys
        rng = random.Random(1)
        sample = [rng.choice(names) for _ in range(queries)]
        timed(store.get, sample[:200])
        summary("Spark: store().get(key), IQv1", timed(store.get, sample))
        # lag: a new record appended until the copy shows it
        lags = []
        for n in range(10):
            key = sample[n]
            expected = store.get(key) + 1
            topics.append([ProducerRecord("events", partition_for_key(key.encode(), 4), 1, key.encode(), b"x", ())])
            appended = time.perf_counter()
            while store.get(key) != expected:
                time.sleep(0.005)
            lags.append((time.perf_counter() - appended) * 1000)
        print(f"Spark: lag from append to the copy, 10 records one at a time: median {statistics.median(lags):.0f} "
              f"ms, max {max(lags):.0f} ms (trigger 100 ms; the batch runs, then its commit rows reach the copy)")


if __name__ == "__main__":
    if "--spark" in __import__("sys").argv:
        argv = __import__("sys").argv
        on_spark(int(argv[argv.index("--keys") + 1]) if "--keys" in argv else 1_000_000, 2_000)
    else:
        main()

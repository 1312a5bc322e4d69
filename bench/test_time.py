"""How long one Spark-engine test takes once the session is up, beside the same test on the in-process engine.

The test is the conformance suite's shape (tests/conformance/test_wordcount.py): the README word count (two
subtopologies, a repartition topic) in a multi-partition ``TopologyTestDriver`` on the Spark engine, 4 partitions,
six sentences piped as one list, the output read and checked against the in-process engine's, the driver closed.
One local session for every run (``local_session``, as the pytest plugin's ``spark_session``); the first run is the
session's warm-up and not counted. Per run: build + pipe + read + close, and each query's ``queryPlanning`` and
``triggerExecution`` of its batches.

Issue 25's target: a Spark-engine test of a 2-subtopology topology <= 5 s after the session is up. A benchmark: it
prints, never asserts timings.

    .venv/bin/python bench/test_time.py [--runs 8] [--partitions 4]
    make bench-test-time BENCH_ARGS="--runs 8"
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "wordcount.py"
SENTENCES = [("doc-1", "the quick brown fox"), ("doc-2", "jumps over the lazy dog"), ("doc-3", "the dog barks"),
             ("doc-4", "a quick brown dog"), ("doc-5", "the end of the story"), ("doc-6", "over and over again")]


def load_example() -> Any:
    """examples/wordcount.py as a module: the README's topology."""
    spec = importlib.util.spec_from_file_location("wordcount_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one_test(topology: Any, partitions: int, spark: Any, app_id: str) -> tuple[float, list, list[tuple]]:
    """One test: (seconds, output records, per query and batch (query, planning ms, trigger ms))."""
    from streams_on_spark import Serdes, TopologyTestDriverBuilder
    start = time.perf_counter()
    builder = (TopologyTestDriverBuilder(topology).with_config({"application.id": app_id})
               .declare_topic("sentences", partitions).declare_topic("word-counts-out", partitions))
    if spark is not None:
        builder = builder.with_engine("spark", spark)
    with builder.build() as driver:
        driver.create_input_topic("sentences", Serdes.String(), Serdes.String(), start_timestamp=1_000,
                                  auto_advance=10).pipe_key_value_list(SENTENCES)
        records = driver.create_output_topic("word-counts-out", Serdes.String(), Serdes.Long()).read_records_to_list()
        batches = []
        if spark is not None:
            for sid, query in sorted(driver._engine.runtime.queries.items()):
                batches += [(sid, p["durationMs"].get("queryPlanning", 0), p["durationMs"].get("triggerExecution", 0))
                            for p in query.recentProgress]
    return time.perf_counter() - start, [(r.key, r.value, r.timestamp, r.partition) for r in records], batches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=8, help="measured Spark-engine tests (after one warm-up)")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--java-options", default=None,
                        help="the local session's JVM options (default: local_session's, as the pytest plugin's)")
    args = parser.parse_args(argv)
    from streams_on_spark.runtime.spark.session import LOCAL_JAVA_OPTIONS, local_session
    topology = load_example().word_count_topology()
    _, expected, _ = one_test(topology, args.partitions, None, "test-time-local")
    local = [one_test(topology, args.partitions, None, f"test-time-local-{i}")[0] for i in range(args.runs)]
    started = time.perf_counter()
    spark = local_session("bench-test-time",
                          java_options=LOCAL_JAVA_OPTIONS if args.java_options is None else args.java_options)
    print(f"session up in {time.perf_counter() - started:.1f} s")
    spark_runs = []
    for i in range(args.runs + 1):
        seconds, records, batches = one_test(topology, args.partitions, spark, f"test-time-{i}-{time.time_ns()}")
        if sorted(records, key=repr) != sorted(expected, key=repr):
            raise SystemExit(f"run {i}: the Spark engine's output differs from the in-process engine's")
        queries = {sid: [(plan, trig) for s, plan, trig in batches if s == sid] for sid, _, _ in batches}
        print(f"run {i}{' (warm-up)' if i == 0 else ''}: {seconds:.2f} s; per query (planning ms, trigger ms) "
              f"per batch: {queries}")
        if i:
            spark_runs.append(seconds)
    spark.stop()
    print(f"\nSpark-engine test, {args.partitions} partitions, {args.runs} runs: "
          f"median {statistics.median(spark_runs):.2f} s, min {min(spark_runs):.2f} s, max {max(spark_runs):.2f} s "
          "(target <= 5 s)")
    print(f"in-process engine, same test: median {statistics.median(local) * 1000:.1f} ms; "
          f"Spark/in-process {statistics.median(spark_runs) / statistics.median(local):.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

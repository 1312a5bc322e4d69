"""One measured round of `bench/spark_engine.py`'s word count, as a timeline: each query's micro-batches and, with
Spark's event log on, each job's stages and tasks.

The three runs of the throughput section (hand-written PySpark, ours in the default shape, ours with
``pipeline.mode=true``) each meet N words with their queries already running (`spark_engine.py`'s ``running``).
Printed per run, relative to the moment the words arrived: every batch the queries started in the round (its start,
input rows and Spark's ``durationMs`` parts), then, when ``--event-log DIR`` is given, the jobs submitted in the
round with their stages' and tasks' times (launch, finish, executor run time, JVM CPU time). The event log is
written by the session this script starts (``spark.eventLog.enabled``), read back when it stops.

    .venv/bin/python bench/round_timeline.py [--words N] [--event-log DIR] [--only hand-written,ours,pipeline]
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spark_engine  # noqa: E402  (this directory's bench module)
from event_log import enable, events  # noqa: E402

from streams_on_spark.runtime.spark.embedded_source import SMALL_BATCH_RECORDS  # noqa: E402

RUNS = ("hand-written", "ours", "pipeline")


def batches(start: float, queries: dict) -> list[str]:
    """Each query's batches that began in the round, one line each, times relative to ``start``."""
    lines = []
    for name, query in queries.items():
        for progress in query.recentProgress:
            began = datetime.datetime.strptime(progress["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                tzinfo=datetime.timezone.utc).timestamp()
            if began < start - 0.5:
                continue
            parts = " ".join(f"{k}={v}" for k, v in sorted(progress["durationMs"].items()))
            lines.append(f"  {name} batch {progress['batchId']} at +{began - start:6.3f} s, "
                         f"{progress['numInputRows']} input rows: {parts}")
    return lines


def jobs(log: list[dict], start: float, end: float) -> list[str]:
    """The jobs submitted between ``start`` and ``end``: their stages and tasks, relative to ``start``."""
    stages, tasks, submitted = {}, {}, {}
    for event in log:
        kind = event["Event"]
        if kind == "SparkListenerStageCompleted":
            stages[event["Stage Info"]["Stage ID"]] = event["Stage Info"]
        elif kind == "SparkListenerTaskEnd":
            tasks.setdefault(event["Stage ID"], []).append((event["Task Info"], event.get("Task Metrics") or {}))
        elif kind == "SparkListenerJobStart":
            submitted[event["Job ID"]] = (event["Submission Time"] / 1000, event["Stage IDs"])
    lines = []
    for job, (at, stage_ids) in sorted(submitted.items()):
        if not start - 0.2 <= at <= end:
            continue
        lines.append(f"  job {job} submitted at +{at - start:.3f} s")
        for sid in stage_ids:
            info = stages.get(sid)
            if info is None or "Submission Time" not in info:
                continue   # skipped (its shuffle output was there)
            began, done = info["Submission Time"] / 1000, info["Completion Time"] / 1000
            lines.append(f"    stage {sid}, {info['Number of Tasks']} tasks: +{began - start:.3f} .. "
                         f"+{done - start:.3f} ({done - began:.3f} s)")
            for task, metrics in sorted(tasks.get(sid, []), key=lambda t: t[0]["Launch Time"]):
                lines.append(f"      task {task['Index']}: +{task['Launch Time'] / 1000 - start:.3f} .. "
                             f"+{task['Finish Time'] / 1000 - start:.3f}, run {metrics.get('Executor Run Time')} ms, "
                             f"JVM CPU {metrics.get('Executor CPU Time', 0) / 1e6:.0f} ms")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--event-log", help="a new directory for Spark's event log (stages and tasks)")
    parser.add_argument("--only", default=",".join(RUNS), help=f"runs, comma-separated ({', '.join(RUNS)})")
    args = parser.parse_args(argv)
    runs = args.only.split(",")
    if args.event_log:   # read by the JVM the session starts
        enable(args.event_log)
    from streams_on_spark.runtime.spark import local_session
    spark = local_session("bench-round-timeline", java_options="")   # as spark_engine.py's session
    # spark_engine.py's running round comes after its from-start round of as many words: its Python workers as many as a
    # batch read by one source task per core needs (in pipeline mode two a task: the source's reader and the upstream's
    # mapInArrow). A warm-up read by one task (SMALL_BATCH_RECORDS or fewer sentences) left this round to fork two more
    # workers, and its first wave of transformWithStateInPandas tasks to run on them (bench/RESULTS.md, h53).
    spark_engine.warm_up(spark, 10 * 2 * SMALL_BATCH_RECORDS)
    lines = spark_engine.sentences(args.words)
    rounds = {}

    def keep(run):
        return lambda start, end, queries: rounds.__setitem__(run, (start, end, batches(start, queries)))

    for run in runs:
        if run == "hand-written":
            spark_engine.run_baseline(spark, lines, running=True, timeline=keep(run))
        else:
            spark_engine.run_ours(spark, lines, pipeline=run == "pipeline", running=True, timeline=keep(run))
    spark.stop()
    log = events(args.event_log) if args.event_log else []
    for run, (start, end, lines_) in rounds.items():
        print(f"{run}: {args.words:,} words in {end - start:.2f} s")
        print("\n".join(lines_ + jobs(log, start, end)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

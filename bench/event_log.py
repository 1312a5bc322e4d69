"""Spark's event log for the benchmarks: turned on for the session a bench starts, read back after it stops, and one
streaming query's micro-batches broken down into their jobs, stages and tasks."""
from __future__ import annotations

import glob
import json
import os
import statistics
import subprocess
from collections import defaultdict
from typing import Optional

BATCH_ID_KEY = "streaming.sql.batchId"     # the local properties Spark's micro-batch execution sets on its jobs
QUERY_ID_KEY = "sql.streaming.queryId"
EXECUTION_ID_KEY = "spark.sql.execution.id"          # ... and its SQL executions: the job's own (the sink's collect)
ROOT_EXECUTION_ID_KEY = "spark.sql.execution.root.id"  # and the one it runs in (the batch's addBatch)
SQL_EXECUTION_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"


def enable(directory: str) -> None:
    """Write the event log of the session started next in this process to ``directory`` (read by its JVM)."""
    os.makedirs(directory, exist_ok=True)
    os.environ["PYSPARK_SUBMIT_ARGS"] = (f"--conf spark.eventLog.enabled=true --conf spark.eventLog.dir="
                                         f"file://{os.path.abspath(directory)} pyspark-shell")


def events(directory: str) -> list[dict]:
    """The event log's events (Spark 4's rolling layout, ``eventlog_v2_<app>/events_<n>_<app>[.zstd]``; its
    default codec read with the `zstd` tool)."""
    found = []
    for path in sorted(glob.glob(os.path.join(directory, "eventlog_v2_*", "events_*"))):
        data = (subprocess.run(["zstd", "-dcq", path], check=True, capture_output=True).stdout
                if path.endswith(".zstd") else open(path, "rb").read())
        found.extend(json.loads(line) for line in data.decode().splitlines() if line.strip())
    return found


class Timeline:
    """The jobs, stages and tasks of an event log, indexed by (query id, batch id)."""

    def __init__(self, log: list[dict]) -> None:
        self.stages: dict[int, dict] = {}
        self.tasks: dict[int, list[tuple[dict, dict]]] = defaultdict(list)
        self.jobs: dict[tuple[str, int], list[dict]] = defaultdict(list)
        self.executions: dict[int, float] = {}   # SQL execution id -> its start (ms)
        ended: dict[int, float] = {}
        for event in log:
            kind = event["Event"]
            if kind == SQL_EXECUTION_START:
                self.executions[int(event["executionId"])] = event["time"]
            elif kind == "SparkListenerStageCompleted":
                self.stages[event["Stage Info"]["Stage ID"]] = event["Stage Info"]
            elif kind == "SparkListenerTaskEnd":
                self.tasks[event["Stage ID"]].append((event["Task Info"], event.get("Task Metrics") or {}))
            elif kind == "SparkListenerJobStart":
                props = event.get("Properties") or {}
                if QUERY_ID_KEY in props and BATCH_ID_KEY in props:
                    self.jobs[(props[QUERY_ID_KEY], int(props[BATCH_ID_KEY]))].append(
                        {"id": event["Job ID"], "submitted": event["Submission Time"], "stages": event["Stage IDs"],
                         "execution": _int(props.get(EXECUTION_ID_KEY)),
                         "root execution": _int(props.get(ROOT_EXECUTION_ID_KEY))})
            elif kind == "SparkListenerJobEnd":
                ended[event["Job ID"]] = event["Completion Time"]
        for batch_jobs in self.jobs.values():
            for job in batch_jobs:
                job["completed"] = ended.get(job["id"])

    def batch(self, query_id: str, batch_id: int, started_ms: float, duration_ms: float) -> Optional[dict[str, float]]:
        """A batch's parts in ms: before its first job, each job's stages (wall, tasks, the tasks' run time and
        metrics with rows and without, tasks in a later wave), between jobs, after its last job."""
        jobs = sorted(self.jobs.get((query_id, batch_id), []), key=lambda j: j["submitted"])
        if not jobs or any(j["completed"] is None for j in jobs):
            return None
        parts: dict[str, float] = {"jobs": len(jobs), "before first job": jobs[0]["submitted"] - started_ms}
        parts.update(self._before_first_job(jobs[0], started_ms))
        parts["after last job"] = started_ms + duration_ms - jobs[-1]["completed"]
        for i, job in enumerate(jobs):
            if i:
                parts[f"job {i}: since job {i - 1} ended"] = job["submitted"] - jobs[i - 1]["completed"]
            ran = [s for s in job["stages"] if "Submission Time" in self.stages.get(s, {})]
            for n, sid in enumerate(sorted(ran)):
                info, tasks = self.stages[sid], sorted(self.tasks[sid], key=lambda t: t[0]["Launch Time"])
                name = f"job {i} stage {n}"
                parts[f"{name}: tasks"] = len(tasks)
                parts[f"{name}: submitted after job start"] = info["Submission Time"] - job["submitted"]
                parts[f"{name}: wall"] = info["Completion Time"] - info["Submission Time"]
                runs = [m.get("Executor Run Time", 0) for _, m in tasks]
                parts[f"{name}: task run, median"] = statistics.median(runs) if runs else 0
                parts[f"{name}: task run, sum"] = sum(runs)
                parts[f"{name}: task deserialize, median"] = statistics.median(
                    m.get("Executor Deserialize Time", 0) for _, m in tasks) if tasks else 0
                with_rows = [(t, m) for t, m in tasks if (m.get("Shuffle Read Metrics") or {}).get("Total Records Read")]
                parts[f"{name}: tasks with shuffled rows"] = len(with_rows)
                if len(tasks) > 1:   # a stateful stage: its tasks with rows and those without apart
                    without = [(t, m) for t, m in tasks if (t, m) not in with_rows]
                    for label, group in (("with rows", with_rows), ("without rows", without)):
                        for metric, values in _task_parts(group).items():
                            parts[f"{name}, a task {label}: {metric}"] = statistics.median(values)
                # a later wave: tasks launched once the first ones had run a while (Spark records a task's finish
                # after it has freed the core and launched the next task, so finish times cannot mark the waves)
                first = tasks[0][0]["Launch Time"] if tasks else 0
                later = [t["Launch Time"] - first for t, _ in tasks if t["Launch Time"] - first > LATER_WAVE_MS]
                parts[f"{name}: tasks in a later wave"] = len(later)
                if later:
                    parts[f"{name}: a later wave's launch after the first"] = statistics.median(later)
        return parts

    def _before_first_job(self, job: dict, started_ms: float) -> dict[str, float]:
        """The time before a batch's first job split at its SQL executions' starts (where the event log has them):
        the trigger's start to the batch's execution (offsets, planning), from there to the job's own execution (the
        sink's ``foreachBatch`` call: the batch's RDD built, py4j's call into Python, the sink's work before it
        collects), and that execution's start to the job (the collect's planning and the job's submission)."""
        root, own = self.executions.get(job["root execution"]), self.executions.get(job["execution"])
        if root is None or own is None or job["root execution"] == job["execution"]:
            return {}
        return {"before first job: to the batch's SQL execution": root - started_ms,
                "before first job: to the sink's collect (its SQL execution)": own - root,
                "before first job: the collect's execution to the job": job["submitted"] - own}


def _int(value: Optional[str]) -> Optional[int]:
    return None if value is None else int(value)


LATER_WAVE_MS = 5   # a task launched this long after the stage's first task waited for a core

TASK_ACCUMULABLES = ("time to initialize Python workers", "time to execute Python code", "time to run Python workers",
                     "time to update", "time to commit changes", "RocksDB: load - time taken to load the store",
                     "RocksDB: commit - changelog commit time")


def _task_parts(tasks: list[tuple[dict, dict]]) -> dict[str, list[float]]:
    """The tasks' run time and the SQL metrics of their stateful operator and Python runner that tell where it went
    (each task's own update of each accumulable), in lists over the tasks (none: empty)."""
    found: dict[str, list[float]] = defaultdict(list)
    for info, metrics in tasks:
        found["run"].append(metrics.get("Executor Run Time", 0))
        for acc in info.get("Accumulables") or []:
            if acc.get("Name") in TASK_ACCUMULABLES and "Update" in acc:
                found[acc["Name"]].append(float(acc["Update"]))
    return found


def medians(rows: list[dict[str, float]]) -> list[tuple[str, float, float]]:
    """Each part's median and min over batches (parts in the first batch's order, present in most batches)."""
    keys: list[str] = []
    for row in rows:
        keys.extend(k for k in row if k not in keys)
    out = []
    for key in keys:
        values = [r[key] for r in rows if key in r]
        if len(values) * 2 >= len(rows):
            out.append((key, statistics.median(values), min(values)))
    return out

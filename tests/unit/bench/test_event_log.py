"""bench/event_log.py: a batch's time before its first job, split at its SQL executions' starts."""
from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "bench" / "event_log.py"


def event_log():
    spec = importlib.util.spec_from_file_location("bench_event_log", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def events(m, own: str, root: str) -> list[dict]:
    """One batch (query q, batch 7, started at 1,000 ms): the batch's SQL execution 5 at 1,100, the sink's collect
    6 at 1,170, its job submitted at 1,210 and done at 1,600."""
    return [
        {"Event": m.SQL_EXECUTION_START, "executionId": 5, "time": 1_100},
        {"Event": m.SQL_EXECUTION_START, "executionId": 6, "time": 1_170},
        {"Event": "SparkListenerJobStart", "Job ID": 3, "Submission Time": 1_210, "Stage IDs": [],
         "Properties": {m.QUERY_ID_KEY: "q", m.BATCH_ID_KEY: "7", m.EXECUTION_ID_KEY: own,
                        m.ROOT_EXECUTION_ID_KEY: root}},
        {"Event": "SparkListenerJobEnd", "Job ID": 3, "Completion Time": 1_600},
    ]


def test_the_time_before_the_first_job_is_split_at_the_batch_and_collect_executions():
    m = event_log()
    parts = m.Timeline(events(m, own="6", root="5")).batch("q", 7, 1_000, 620)
    assert parts["before first job"] == 210
    assert parts["before first job: to the batch's SQL execution"] == 100
    assert parts["before first job: to the sink's collect (its SQL execution)"] == 70
    assert parts["before first job: the collect's execution to the job"] == 40
    assert parts["after last job"] == 20


def test_a_job_of_the_batch_execution_itself_is_not_split():
    m = event_log()
    parts = m.Timeline(events(m, own="5", root="5")).batch("q", 7, 1_000, 620)
    assert parts["before first job"] == 210 and not any(k.startswith("before first job:") for k in parts)

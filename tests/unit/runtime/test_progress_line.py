"""The progress line a running query logs once per interval (``CommitReport``): the rate over the window with the
digits that matter, and the lag with the time it was measured and how much of it the batch committing now read."""
from __future__ import annotations

import logging
import re

from streams_on_spark.runtime.spark import sink
from streams_on_spark.runtime.spark.sink import CommitReport


class Frame:
    """What ``foreachBatch`` hands the sink: the tasks' commit rows."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows

    def select(self, *columns: str) -> "Frame":
        return self

    def collect(self) -> list[dict]:
        return self.rows


class Clock:
    """``sink.time`` with a monotonic clock the test sets, and the wall clock's strftime."""

    def __init__(self, now: float) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now

    @staticmethod
    def strftime(fmt: str) -> str:
        import time
        return time.strftime(fmt)


def row(topic, records, processed=0, dropped=0, task=0):
    return {"topic": topic, "partition": 0, "task": task, "base": 0, "records": records, "bytes": 10 * records,
            "processed": processed, "dropped": dropped, "commit_ms": 1.0}


def progress_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.INFO and r.name == sink.__name__]


def test_a_few_records_after_a_quiet_window_show_their_rate_and_the_lag_says_what_the_batch_read(caplog,
                                                                                                   monkeypatch):
    clock = Clock(100.0)
    monkeypatch.setattr(sink, "time", clock)
    report = CommitReport("app-subtopology-0", lag=lambda: 10, progress_interval_s=30)
    clock.now = 131.0
    with caplog.at_level(logging.INFO, logger=sink.__name__):
        # batch 7 read 10 input records (one of them skipped by a deserialization handler) and wrote 13
        report(Frame([row("out", 13, processed=6, task=0), row(None, 0, processed=3, dropped=1, task=1)]), 7)
    [line] = progress_lines(caplog)
    assert re.fullmatch(r"app-subtopology-0: 1 batch in the last 31 s wrote 13 records \(0\.42 records/s\); "
                        r"lag at \d\d:\d\d:\d\d: 10 records, 10 of them in batch 7 \(committing now\)", line), line


def test_the_rate_keeps_its_digits_at_every_scale():
    assert [sink._rate(r) for r in (0, 0.0042, 0.42, 3.14159, 12.34, 123.4, 12345.6)] == [
        "0", "0.0042", "0.42", "3.1", "12.3", "123", "12346"]


def test_without_a_lag_the_line_has_none_and_batches_count_in_plural(caplog, monkeypatch):
    clock = Clock(0.0)
    monkeypatch.setattr(sink, "time", clock)
    report = CommitReport("q", progress_interval_s=30)   # Spark Connect: no lag here
    with caplog.at_level(logging.INFO, logger=sink.__name__):
        clock.now = 10.0
        report(Frame([row("out", 600)]), 0)
        clock.now = 40.0
        report(Frame([row("out", 600)]), 1)
    assert progress_lines(caplog) == ["q: 2 batches in the last 40 s wrote 1200 records (30.0 records/s)"]


class Projecting(Frame):
    """A frame that records the projections asked of it."""

    def __init__(self, rows: list[dict]) -> None:
        super().__init__(rows)
        self.selected: list[tuple[str, ...]] = []

    def select(self, *columns: str) -> "Frame":
        self.selected.append(columns)
        return self


def test_the_tasks_output_is_collected_as_it_is_and_only_a_narrower_report_projects_it():
    """Without ``columns`` the frame (the tasks' own output) is collected with no projection to plan per batch;
    Spark Connect's report names the commit columns (its output may carry state it does not read)."""
    seen: list = []
    whole, narrow = Projecting([row("out", 1)]), Projecting([row("out", 1)])
    CommitReport("q", on_commit=lambda batch, rows: seen.append(rows), columns=None)(whole, 0)
    CommitReport("q")(narrow, 0)
    assert whole.selected == [] and seen == [[row("out", 1)]]
    assert narrow.selected == [sink.COMMIT_COLUMNS]

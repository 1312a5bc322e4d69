"""The driver's side of each query's sink (``foreachBatch``): per micro-batch, what the tasks report.

:class:`CommitReport` goes with :class:`~streams_on_spark.runtime.spark.output.WrittenOutput`: the executors wrote
the records, the driver collects one small commit row per task and destination and logs them.
:class:`DriverAppend` goes with :class:`~streams_on_spark.runtime.spark.output.ReturnedOutput` (the test driver's
Spark mode): the driver merges what the tasks returned per topic-partition by stream time, appends it once per
batch id (the query's producer id and the batch id), and passes the records on in emission order.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from typing import Any, Callable, Optional

from streams_on_spark.connectors.base import TopicWriter
from streams_on_spark.record_batch import RecordBatch, merge_by_stream_time
from streams_on_spark.records import ProducerRecord
from streams_on_spark.errors import StreamsException
from streams_on_spark.runtime.spark.output import COMMIT_COLUMNS, RETURNED_COLUMNS

log = logging.getLogger(__name__)


class CommitReport:
    """``foreachBatch`` of a query whose tasks write their own output: runs the batch, logs what was written (each
    batch at DEBUG; at INFO once per ``progress_interval_s``: batches, records and their rate over that window, and
    the query's lag with the time it was measured and how much of it the batch committing now read) and hands the
    commit rows (with the tasks' metrics, see ``COMMIT_SCHEMA``) to ``on_commit(batch_id, rows)``."""

    PROGRESS_INTERVAL_S = 30.0

    def __init__(self, query: str, lag: Optional[Callable[[], int]] = None,
                 progress_interval_s: float = PROGRESS_INTERVAL_S,
                 on_commit: Optional[Callable[[int, list], None]] = None,
                 columns: Optional[tuple[str, ...]] = COMMIT_COLUMNS) -> None:
        self.query, self.lag, self.progress_interval_s = query, lag, progress_interval_s
        self.on_commit = on_commit
        # the columns collected; None: the frame's as they are (the tasks' output itself: no projection to plan on
        # each batch's critical path, 15-33 ms measured)
        self.columns = columns
        self._since, self._batches, self._records = time.monotonic(), 0, 0

    def bind(self, query_id: str) -> None:
        """Nothing to bind: the tasks read their query id from Spark's task context."""

    def __call__(self, frame: Any, batch_id: int) -> None:
        started = time.monotonic()
        rows = (frame if self.columns is None else frame.select(*self.columns)).collect()
        if self.on_commit is not None:
            self.on_commit(batch_id, rows)
        written = [r for r in rows if r["topic"] is not None]   # the others only carry a task's metrics
        count = sum(r["records"] for r in written)
        log.debug("%s: batch %d: %d tasks wrote %d records (%d bytes) to %d topic-partitions in %.2f s", self.query,
                  batch_id, len({r["task"] for r in written}), count, sum(r["bytes"] for r in written),
                  len({(r["topic"], r["partition"]) for r in written}), time.monotonic() - started)
        self._batches, self._records = self._batches + 1, self._records + count
        elapsed = time.monotonic() - self._since
        if elapsed >= self.progress_interval_s:
            # the lag counts from the last committed batch, i.e. this batch's input too (it commits when this
            # returns): say when it was measured and how much of it this batch read
            lag = "" if self.lag is None else (
                f"; lag at {time.strftime('%H:%M:%S')}: {self.lag()} records, "
                f"{sum(r['processed'] + r['dropped'] for r in rows)} of them in batch {batch_id} (committing now)")
            log.info("%s: %d %s in the last %.0f s wrote %d records (%s records/s)%s", self.query, self._batches,
                     "batch" if self._batches == 1 else "batches", elapsed, self._records,
                     _rate(self._records / elapsed), lag)
            self._since, self._batches, self._records = time.monotonic(), 0, 0


def _rate(per_second: float) -> str:
    """A rate with the digits that matter: 12345, 12.3, 0.42, 0.0042 (not 0 for a few records a minute)."""
    if per_second >= 100 or per_second == 0:
        return f"{per_second:.0f}"
    return f"{per_second:.1f}" if per_second >= 1 else f"{per_second:.2g}"


class DriverAppend:
    """``foreachBatch`` of the test driver's queries: merge, append once per batch id, hand records on."""

    def __init__(self, writer: TopicWriter, on_output: Optional[Callable[[list[ProducerRecord]], None]],
                 query: str, ensure_topic: Optional[Callable[[str], None]] = None) -> None:
        self.writer, self.on_output, self.query = writer, on_output, query
        # called once per topic written before writing to it: the driver's topics need not be declared
        self.ensure_topic = ensure_topic
        self._ensured: set[str] = set()
        self._query_id: Optional[str] = None
        self._bound = threading.Event()

    def bind(self, query_id: str) -> None:
        """The query's id (stable across restarts from its checkpoint), known once the query started."""
        self._query_id = query_id
        self._bound.set()

    def __call__(self, frame: Any, batch_id: int) -> None:
        if not self._bound.wait(60):
            raise StreamsException(f"query {self.query} ran a batch before it was bound to its id")
        started = time.monotonic()
        table = frame.toArrow()  # a few rows (record batches per task and destination), columnar
        computed = time.monotonic()
        parts: dict[tuple[str, int], list[tuple]] = defaultdict(list)
        for topic, partition, task, stamps, seqs, ends, data in zip(*(table.column(c).to_pylist()
                                                                      for c in RETURNED_COLUMNS)):
            parts[(topic, partition)].append((task, stamps, seqs, ends, data))
        merged = [merge_by_stream_time(topic, partition, parts[(topic, partition)]) for topic, partition in sorted(parts)]
        batches = [batch for batch, _ in merged]
        count = sum(len(b) for b in batches)
        if self.ensure_topic is not None:
            for topic in {topic for topic, _ in parts} - self._ensured:
                self.ensure_topic(topic)
                self._ensured.add(topic)
        if count:
            self.writer.write(batches, f"{self._query_id}-driver", batch_id)
            if self.on_output is not None:
                self.on_output(_in_emission_order(merged))
        log.info("%s: batch %d wrote %d records (tasks %.2f s, writing %.2f s)", self.query, batch_id, count,
                 computed - started, time.monotonic() - computed)


def _in_emission_order(merged: list[tuple[RecordBatch, Any]]) -> list[ProducerRecord]:
    """All records of the merged batches, ordered across topic-partitions by (stream time, task, seq)."""
    import numpy as np
    records = [r for batch, _ in merged for r in batch.records()]
    keys = np.concatenate([k for _, k in merged])
    return [records[i] for i in np.argsort(keys, order=("stamp", "task", "seq")).tolist()]

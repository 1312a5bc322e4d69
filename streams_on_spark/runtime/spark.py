"""Spark engine: every subtopology is one Structured Streaming query hosting its tasks.

A query reads the subtopology's source and repartition topics, groups rows by source partition and runs that
partition's :class:`StreamTask` inside ``applyInPandasWithState``: the task is rebuilt from the topology,
restored from its snapshot in the group state, fed the batch's records (sorted by offset per topic-partition;
the task itself picks the smallest head timestamp across partitions), drained, and snapshotted back. What
the task's record collector produced — already serialized and partitioned — is written to the topics by the
query's sink. No operator is re-implemented in Spark SQL.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import struct
import sys
import tempfile
import time
from array import array
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional

from streams_on_spark.config import TaskConfig
from streams_on_spark.connectors.record_batch import BIG_ENDIAN as RECORD_BATCH_BIG_ENDIAN
from streams_on_spark.connectors.record_batch import RecordBatch, merge_by_stream_time, parse_records
from streams_on_spark.connectors.records import ConsumerRecord, ProducerRecord
from streams_on_spark.errors import IllegalStateError, StreamsException
from streams_on_spark.processor.api import TaskId
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.topology.builder import InternalTopologyBuilder, SubtopologySpec

log = logging.getLogger(__name__)

# A task's output: one row per destination topic-partition (more for very large outputs), each a record batch
# (``RecordBatch`` layout: ``data`` and its records' ``ends``) with every record's merge key: the task's stream
# time when it emitted the record (``stamps``) and its position in the task's output (``seqs``), int64 arrays.
OUTPUT_SCHEMA = ("topic string, partition int, task int, stamps binary, seqs binary, ends binary, data binary")
_OUTPUT_COLUMNS = ("topic", "partition", "task", "stamps", "seqs", "ends", "data")
_MAX_PART_BYTES = 64 << 20  # a part's data stays far below Arrow's 2 GiB per binary column
# the task's snapshot, and the wall-clock time it last saw when the clock is the test driver's mock clock (else -1)
STATE_SCHEMA = "snapshot binary, wall_clock long"
_TICK = struct.Struct(">q")  # a wall-clock tick record's value: the mock time in ms


def local_session(app_name: str = "streams-on-spark", cores: int = 2, jars: Iterable[str] = ()) -> Any:
    """A local SparkSession set up as this project needs it: loopback only, no UI, small shuffles."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession
    builder = (SparkSession.builder.master(f"local[{cores}]").appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", str(cores))
               .config("spark.default.parallelism", str(cores))
               .config("spark.sql.execution.pyspark.udf.simplifiedTraceback.enabled", "false")
               .config("spark.sql.streaming.stopTimeout", "30s"))
    jars = [str(j) for j in jars]
    if jars:
        builder = builder.config("spark.jars", ",".join(jars))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class WallClock:
    """The wall clock of a task on Spark: the system's, or the test driver's mock time (``mock_ms``)."""

    __slots__ = ("mock_ms",)

    def __init__(self, mock_ms: Optional[int] = None) -> None:
        self.mock_ms = mock_ms

    def __call__(self) -> int:
        return int(time.time() * 1000) if self.mock_ms is None else self.mock_ms


class SubtopologyTaskFunction:
    """The ``applyInPandasWithState`` function of one subtopology: one call runs one task on one batch.

    Global stores are rebuilt for each call from what their topics hold at that moment (``global_reader``), the
    view a Kafka Streams task has of its global stores.

    Wall-clock punctuation: with the system clock the task punctuates after each batch, and when
    ``wall_clock_timeouts`` is set a processing-time timeout wakes the task when its next punctuation is due even
    if no data arrives. With a mock clock (``mock_wall_clock_ms``, the test driver's) time moves only through tick
    records on ``wall_clock_topic``: each carries the new time, and the task punctuates before its batch's data.
    """

    def __init__(self, topology: InternalTopologyBuilder, subtopology_id: int, config: TaskConfig,
                 partition_counts: Mapping[str, int], global_reader: Any = None, *,
                 mock_wall_clock_ms: Optional[int] = None, wall_clock_topic: Optional[str] = None,
                 wall_clock_timeouts: bool = False) -> None:
        self.topology = topology
        self.subtopology_id = subtopology_id
        self.config = config
        self.partition_counts = dict(partition_counts)
        self.global_reader = global_reader
        self.mock_wall_clock_ms = mock_wall_clock_ms
        self.wall_clock_topic = wall_clock_topic
        self.wall_clock_timeouts = wall_clock_timeouts
        self._spec: Optional[SubtopologySpec] = None

    def spec(self) -> SubtopologySpec:
        if self._spec is None:
            self._spec = next(s for s in self.topology.subtopologies() if s.id == self.subtopology_id)
        return self._spec

    def task_count(self) -> int:
        """Tasks of this subtopology: the most partitions among its source topics."""
        return max(self.partition_counts.get(t, 1) for t in self.spec().source_topics)

    def new_task(self, partition: int, snapshot: Optional[bytes], clock: Optional[WallClock] = None) -> StreamTask:
        """The task for ``partition`` with its saved state (also used to read stores back on the driver)."""
        counts = self.partition_counts
        clock = clock if clock is not None else WallClock(self.mock_wall_clock_ms)
        global_stores = self.global_stores(clock) if self.global_reader is not None else None
        task = StreamTask(TaskId(self.subtopology_id, partition), self.spec(), self.topology, self.config,
                          lambda topic: counts.get(topic, 1), clock, global_stores)
        if snapshot is not None:
            task.restore(snapshot)
        return task

    def global_stores(self, clock: Optional[WallClock] = None) -> dict[str, Any]:
        from streams_on_spark.runtime.local import GlobalTask
        clock = clock if clock is not None else WallClock(self.mock_wall_clock_ms)
        return GlobalTask(self.topology, self.config, clock).load(self.global_reader).stores

    def schedules_wall_clock_punctuation(self) -> bool:
        """Whether this subtopology's processors schedule wall-clock punctuation when they are initialized."""
        task = self.new_task(0, None)
        try:
            return task.next_wall_clock_punctuation() is not None
        finally:
            task.close()

    def __call__(self, key: tuple, frames: Iterator[Any], state: Any) -> Iterator[Any]:
        import pandas as pd
        partition = int(key[0]) % self.task_count()  # the group key is the task's slot (see task_slots)
        snapshot, wall = state.get if state.exists else (None, -1)
        mock = self.mock_wall_clock_ms
        clock = WallClock(None if mock is None else (wall if wall >= 0 else mock))
        task = self.new_task(partition, snapshot, clock)
        ticks = self._add_batch(task, [f for f in frames if len(f)])
        if ticks:  # the driver advanced its mock clock: punctuate first, as Kafka's driver does
            clock.mock_ms = max(ticks)
            task.punctuate_wall_clock()
        while task.process_one():
            pass
        if mock is None:
            task.punctuate_wall_clock()
        task.commit()  # the micro-batch is the commit interval: record caches flush their last update per key
        out = task.collector.drain()
        state.update((task.snapshot(), -1 if mock is None else clock.mock_ms))
        if self.wall_clock_timeouts:
            due = task.next_wall_clock_punctuation()
            if due is not None:
                state.setTimeoutDuration(max(1, due - clock()))
        task.close()
        rows = _output_rows(out, partition)
        yield pd.DataFrame(rows, columns=_OUTPUT_COLUMNS)

    def _add_batch(self, task: StreamTask, batches: list[Any]) -> list[int]:
        """Queue a batch's records in the task per topic-partition in offset order; return its wall-clock ticks.

        Rows are record batches (the embedded source's ``batches`` layout) or single records (Spark's Kafka
        source); Spark keeps no order inside a group, so they are sorted by (topic, partition, offset) first.
        """
        if not batches:
            return []
        import pandas as pd
        frame = pd.concat(batches, ignore_index=True) if len(batches) > 1 else batches[0]
        frame = frame.sort_values(["topic", "partition", "offset"], kind="stable")
        ticks: list[int] = []
        if "data" in frame.columns:
            for topic, part, offset, ends, data in zip(*(frame[c].tolist() for c in
                                                          ("topic", "partition", "offset", "ends", "data"))):
                batch = RecordBatch.from_bytes(topic, int(part), data, ends)
                timestamps, keys, values, headers = parse_records(batch.data, len(batch))
                if topic == self.wall_clock_topic:
                    ticks.extend(_TICK.unpack(v)[0] for v in values)
                else:
                    task.add_columns(topic, int(part), int(offset), timestamps, keys, values, headers)
            return ticks
        columns = [frame[c].tolist() for c in ("topic", "partition", "offset", "timestamp", "key", "value",
                                                "headers")]
        per_partition: dict[tuple[str, int], list[ConsumerRecord]] = defaultdict(list)
        for topic, part, offset, ts, k, v, headers in zip(*columns):
            if topic == self.wall_clock_topic:
                ticks.append(_TICK.unpack(v)[0])
                continue
            per_partition[(topic, int(part))].append(
                ConsumerRecord(topic, int(part), int(offset), int(ts), k, v, _headers_in(headers)))
        for (topic, part), records in per_partition.items():
            task.add_records(topic, part, records)
        return ticks


class _OutputPart:
    """What one task wrote to one topic-partition in one call, being encoded."""

    __slots__ = ("batch", "stamps", "seqs")

    def __init__(self, topic: str, partition: int) -> None:
        self.batch = RecordBatch(topic, partition)
        self.stamps = array("q")
        self.seqs = array("q")

    def row(self, task: int) -> tuple:
        order = (self.stamps, self.seqs)
        if RECORD_BATCH_BIG_ENDIAN:  # pragma: no cover - the shipped arrays are little-endian
            order = tuple(array("q", a) for a in order)
            for a in order:
                a.byteswap()
        return (self.batch.topic, self.batch.partition, task, order[0].tobytes(), order[1].tobytes(),
                self.batch.ends_bytes(), bytes(self.batch.data))


def _output_rows(records: list[ProducerRecord], task: int) -> list[tuple]:
    """Encode a task's output as record batches, one per destination topic-partition (split when very large)."""
    parts: dict[tuple[str, int], _OutputPart] = {}
    rows = []
    stream_time = -1
    for seq, (topic, partition, timestamp, key, value, headers) in enumerate(records):
        if timestamp > stream_time:
            stream_time = timestamp
        part = parts.get((topic, partition))
        if part is None:
            part = parts[(topic, partition)] = _OutputPart(topic, partition)
        part.batch.add(timestamp, key, value, headers)
        part.stamps.append(stream_time)
        part.seqs.append(seq)
        if len(part.batch.data) >= _MAX_PART_BYTES:
            rows.append(part.row(task))
            del parts[(topic, partition)]
    rows.extend(part.row(task) for part in parts.values())
    return rows


def task_slots(tasks: int) -> list[int]:
    """The grouping value of each of ``tasks`` tasks, chosen so that task ``p`` gets shuffle (state) partition ``p``.

    Spark places a group in partition ``pmod(murmur3(key, seed 42), spark.sql.shuffle.partitions)``. Grouping by the
    Kafka partition number itself collides: with 4 tasks, partitions 0, 1 and 3 all hash to shuffle partition 3, so
    three tasks would run one after the other in one Spark task. Slot ``p + k * tasks``, with the smallest ``k`` that
    hashes to ``p``, keeps ``slot % tasks == p`` (the function recovers the partition) and spreads the tasks.
    """
    import mmh3
    slots = []
    for p in range(tasks):
        for k in range(100_000):
            slot = p + k * tasks
            if mmh3.hash(slot.to_bytes(4, "little", signed=True), 42) % tasks == p:
                break
        else:  # pragma: no cover - murmur3 is well spread; a collision only costs parallelism
            slot = p
            log.warning("no grouping slot of task partition %d hashes to shuffle partition %d", p, p)
        slots.append(slot)
    return slots


def _headers_in(cell: Any) -> tuple:
    if cell is None:
        return ()
    return tuple((h["key"], h["value"]) for h in cell)


class SparkRuntime:
    """Runs a topology as one streaming query per subtopology over a topic connector.

    ``connector`` must provide ``partitions(topic)``, ``topics()``, ``create_topic(name, n)``,
    ``end_offsets(topic)``, ``append(records)``, ``append_batches(record_batches)`` and ``reader_options(topics)``
    (format + options of the streaming source). Sinks are ``foreachBatch`` writers that append what the tasks
    produced, as record batches merged per topic-partition by the tasks' stream time (each task's order kept).

    Tasks see the system clock, unless ``mock_wall_clock_ms`` is given (the test driver): then each subtopology
    also reads a tick topic (:meth:`wall_clock_topic`) and time moves only by :meth:`advance_wall_clock`.
    """

    def __init__(self, topology: InternalTopologyBuilder, config: TaskConfig, connector: Any, spark: Any,
                 checkpoint_dir: str, partition_counts: Mapping[str, int],
                 on_output: Optional[Callable[[list[ProducerRecord]], None]] = None,
                 trigger_interval: str = "100 milliseconds", mock_wall_clock_ms: Optional[int] = None) -> None:
        global_reader = None
        if topology.global_stores():
            global_reader = connector.global_reader()
        self.global_reader = global_reader
        self.topology = topology
        self.config = config
        self.connector = connector
        self.spark = spark
        self.checkpoint_dir = checkpoint_dir
        self.partition_counts = dict(partition_counts)
        self.on_output = on_output
        self.trigger_interval = trigger_interval
        self.mock_wall_clock_ms = mock_wall_clock_ms
        self.functions = {
            s.id: SubtopologyTaskFunction(topology, s.id, config, partition_counts, global_reader,
                                          mock_wall_clock_ms=mock_wall_clock_ms,
                                          wall_clock_topic=None if mock_wall_clock_ms is None
                                          else self.wall_clock_topic(s.id))
            for s in topology.subtopologies()}
        # what the queries read: quiescence means none of these grows (output-only topics may, e.g. by punctuation)
        self.input_topics = sorted({t for fn in self.functions.values() for t in self._input_topics(fn)}
                                   | set(topology.global_topics))
        self.queries: dict[int, Any] = {}
        self._logged: dict[int, int] = {}

    def query_name(self, subtopology_id: int) -> str:
        return f"{self.config.application_id}-subtopology-{subtopology_id}"

    def checkpoint(self, subtopology_id: int) -> str:
        return os.path.join(self.checkpoint_dir, f"subtopology-{subtopology_id}")

    def wall_clock_topic(self, subtopology_id: int) -> str:
        """The tick topic that moves a subtopology's mock wall clock (one partition per task)."""
        return f"{self.query_name(subtopology_id)}-wall-clock"

    def _input_topics(self, fn: SubtopologyTaskFunction) -> list[str]:
        return sorted(fn.spec().source_topics) + ([fn.wall_clock_topic] if fn.wall_clock_topic else [])

    def start(self) -> None:
        """Start every subtopology's query (upstream first)."""
        for sid, fn in self.functions.items():
            if fn.wall_clock_topic:
                self.connector.create_topic(fn.wall_clock_topic, fn.task_count())
            else:  # system clock: wake idle tasks for their punctuations with processing-time timeouts
                fn.wall_clock_timeouts = fn.schedules_wall_clock_punctuation()
            self.queries[sid] = self._start_query(sid, fn)
            log.info("started query %s reading %s", self.query_name(sid), sorted(fn.spec().source_topics))

    def _start_query(self, sid: int, fn: SubtopologyTaskFunction) -> Any:
        from pyspark.sql import functions as F
        from pyspark.sql.streaming.state import GroupStateTimeout
        tasks = fn.task_count()
        fmt, options = self.connector.reader_options(self._input_topics(fn))
        reader = self.spark.readStream.format(fmt)
        for key, value in options.items():
            reader = reader.option(key, value)
        # the state partitioning is frozen into the checkpoint at the first run; one shuffle partition per task
        self.spark.conf.set("spark.sql.shuffle.partitions", str(tasks))
        try:
            frame = reader.load()
        except Exception as e:
            if "Failed to find data source" in str(e):
                raise StreamsException(f"the Spark session has no '{fmt}' data source: for Kafka, create it with "
                                       "local_session(..., jars=kafka_jars()) or pass the connector jars in "
                                       "spark.jars before the session starts") from e
            raise
        prepare = getattr(self.connector, "prepare", None)
        if prepare is not None:
            frame = prepare(frame)
        slots = F.array(*[F.lit(slot) for slot in task_slots(tasks)])
        frame = frame.withColumn("slot", F.element_at(slots, F.col("partition") + 1).cast("int"))
        timeout = GroupStateTimeout.ProcessingTimeTimeout if fn.wall_clock_timeouts else GroupStateTimeout.NoTimeout
        stream = frame.groupBy("slot").applyInPandasWithState(fn, OUTPUT_SCHEMA, STATE_SCHEMA, "append", timeout)
        commits = _SinkCommits(os.path.join(self.checkpoint(sid), "sink-commits"))
        sink = _TopicSink(self.connector, commits, self.on_output, self.query_name(sid))
        return (stream.writeStream.queryName(self.query_name(sid)).outputMode("append")
                .foreachBatch(sink).option("checkpointLocation", self.checkpoint(sid))
                .trigger(processingTime=self.trigger_interval).start())

    def process_all_available(self, timeout_s: float = 600.0) -> None:
        """Run the queries until every topic they read is fully processed (quiescence), logging progress and lag.

        A round asks each query to process what is available; the topology is quiescent when a round grew no
        topic that a query reads and every query's committed progress has caught up with its topics' end offsets
        (a query that just started, or whose source saw a new topic late, may report "no new data" before its
        first batch). Output-only topics may still grow afterwards, e.g. from wall-clock punctuation.
        """
        deadline = time.monotonic() + timeout_s
        rounds = 0
        while True:
            before = self._end_offsets()
            for sid in sorted(self.queries):
                self._await(sid)
                progress = self.queries[sid].lastProgress
                if progress is not None and self._logged.get(sid) != progress["batchId"]:
                    self._logged[sid] = progress["batchId"]
                    records = sum(end - _source_offsets(progress, "startOffset").get(topic, {}).get(p, 0)
                                  for topic, ends in _source_offsets(progress, "endOffset").items()
                                  for p, end in ends.items())
                    log.info("%s: batch %s, %d input records, lag %d", self.query_name(sid), progress["batchId"],
                             records, self.lag(sid))
            rounds += 1
            if self._end_offsets() == before and all(self.lag(sid) == 0 for sid in self.queries):
                log.debug("quiescent after %d round(s)", rounds)
                return
            if time.monotonic() > deadline:
                lags = {self.query_name(sid): self.lag(sid) for sid in self.queries}
                raise StreamsException(f"topology did not become quiescent within {timeout_s:.0f}s ({rounds} rounds, "
                                       f"lag per query {lags}); is a subtopology feeding itself?")
            if rounds > 1:
                time.sleep(0.05)  # let a query that saw no data yet pick up its next trigger

    def _await(self, sid: int) -> None:
        """Block until query ``sid`` has processed everything its topics hold now.

        A query with processing-time timeouts runs a batch on every trigger, data or not, so Spark's
        ``processAllAvailable`` would never see it idle; for those, wait until its lag is zero instead.
        """
        query = self.queries[sid]
        try:
            if not self.functions[sid].wall_clock_timeouts:
                query.processAllAvailable()
                return
            while self.lag(sid) > 0:
                if not query.isActive:
                    error = query.exception()
                    raise error if error is not None else StreamsException(
                        f"query {self.query_name(sid)} stopped with records left to process")
                time.sleep(0.05)
        except StreamsException:
            raise
        except Exception as e:  # surface the task's error, not a JVM stack trace
            raise _query_error(self.query_name(sid), e) from e

    def lag(self, subtopology_id: int) -> int:
        """Records in the subtopology's input topics beyond what its query has processed."""
        done = _source_offsets(self.queries[subtopology_id].lastProgress, "endOffset")
        total = 0
        for topic in self._input_topics(self.functions[subtopology_id]):
            consumed = done.get(topic, {})
            for p, end_offset in enumerate(self.connector.end_offsets(topic)):
                total += end_offset - consumed.get(str(p), 0)
        return total

    def advance_wall_clock(self, now_ms: int) -> None:
        """Move the mock wall clock to ``now_ms``: every task gets a tick, punctuates, and the topology drains."""
        if self.mock_wall_clock_ms is None:
            raise IllegalStateError("advance_wall_clock needs a runtime started with a mock wall clock")
        self.connector.append([ProducerRecord(fn.wall_clock_topic, p, now_ms, None, _TICK.pack(now_ms), ())
                               for fn in self.functions.values() for p in range(fn.task_count())])
        self.process_all_available()

    def _end_offsets(self) -> dict[str, list[int]]:
        return {t: self.connector.end_offsets(t) for t in self.input_topics}

    def stop(self) -> None:
        """Stop every query. A batch in flight is interrupted and replayed by the next run from the checkpoint;
        py4j's report of the interrupted ``foreachBatch`` call is silenced while stopping."""
        py4j_log = logging.getLogger("py4j.clientserver")
        level = py4j_log.level
        py4j_log.setLevel(logging.CRITICAL)
        try:
            for sid, query in self.queries.items():
                try:
                    query.stop()
                except Exception:  # a failed query is already stopped; its error was reported
                    log.debug("stopping query %s failed", self.query_name(sid), exc_info=True)
        finally:
            py4j_log.setLevel(level)
        self.queries.clear()

    def task_snapshots(self, subtopology_id: int) -> dict[int, bytes]:
        """Each partition's saved task state, read from the query's checkpoint with Spark's state reader."""
        path = self.checkpoint(subtopology_id)
        if not os.path.isdir(os.path.join(path, "state")):
            return {}
        rows = self.spark.read.format("statestore").load(path).collect()
        tasks = self.functions[subtopology_id].task_count()
        return {int(r["key"]["slot"]) % tasks: bytes(r["value"]["groupState"]["snapshot"]) for r in rows
                if r["value"] is not None and r["value"]["groupState"] is not None}

    def read_tasks(self, subtopology_id: int) -> dict[int, StreamTask]:
        """Offline copies of the subtopology's tasks with the state Spark holds (for store inspection)."""
        fn = self.functions[subtopology_id]
        snapshots = self.task_snapshots(subtopology_id)
        return {p: fn.new_task(p, snapshots.get(p)) for p in range(fn.task_count())}


def _source_offsets(progress: Optional[dict], which: str) -> dict[str, dict[str, int]]:
    """A query progress's ``startOffset``/``endOffset`` of its source: topic -> partition (str) -> offset."""
    import json
    if not progress or not progress.get("sources"):
        return {}
    offsets = progress["sources"][0].get(which)
    offsets = (json.loads(offsets) if isinstance(offsets, str) else offsets) or {}
    return {t: {p: int(o) for p, o in ps.items()} for t, ps in offsets.items()}


class _SinkCommits:
    """The last batch id a query's sink wrote, kept beside its checkpoint so a replayed batch is not rewritten."""

    def __init__(self, path: str) -> None:
        self.path = path

    def last(self) -> int:
        try:
            return int(Path(self.path).read_text())
        except (FileNotFoundError, ValueError):
            return -1

    def commit(self, batch_id: int) -> None:
        tmp = self.path + ".tmp"
        Path(tmp).write_text(str(batch_id))
        os.replace(tmp, self.path)


class _TopicSink:
    """``foreachBatch`` writer: appends a batch's records to their topics once (idempotent per batch id)."""

    def __init__(self, connector: Any, commits: _SinkCommits, on_output: Optional[Callable[[list[ProducerRecord]], None]],
                 query: str) -> None:
        self.connector, self.commits, self.on_output, self.query = connector, commits, on_output, query

    def __call__(self, frame: Any, batch_id: int) -> None:
        if batch_id <= self.commits.last():
            log.info("%s: batch %d was already written, skipping its replay", self.query, batch_id)
            return
        started = time.monotonic()
        table = frame.toArrow()  # a few rows (record batches per task and destination), columnar
        computed = time.monotonic()
        parts: dict[tuple[str, int], list[tuple]] = defaultdict(list)
        for topic, partition, task, stamps, seqs, ends, data in zip(*(table.column(c).to_pylist()
                                                                      for c in _OUTPUT_COLUMNS)):
            parts[(topic, partition)].append((task, stamps, seqs, ends, data))
        merged = [merge_by_stream_time(topic, partition, parts[(topic, partition)]) for topic, partition in sorted(parts)]
        batches = [batch for batch, _ in merged]
        count = sum(len(b) for b in batches)
        if count:
            self.connector.append_batches(batches)
            if self.on_output is not None:
                self.on_output(_in_emission_order(merged))
        self.commits.commit(batch_id)
        log.info("%s: batch %d wrote %d records (tasks %.2f s, writing %.2f s)", self.query, batch_id, count,
                 computed - started, time.monotonic() - computed)


def _in_emission_order(merged: list[tuple[RecordBatch, Any]]) -> list[ProducerRecord]:
    """All records of the merged batches, ordered across topic-partitions by (stream time, task, seq)."""
    import numpy as np
    records = [r for batch, _ in merged for r in batch.records()]
    keys = np.concatenate([k for _, k in merged])
    return [records[i] for i in np.argsort(keys, order=("stamp", "task", "seq")).tolist()]


_PY_ERROR = re.compile(r"(streams_on_spark\.errors\.\w+|[A-Za-z_][\w.]*(?:Error|Exception)): (.+)")


def _query_error(query: str, error: Exception) -> StreamsException:
    """A ``StreamsException`` carrying the Python error raised inside the task, not the JVM's stack trace."""
    text = str(error)
    matches = [m for m in _PY_ERROR.finditer(text) if "py4j" not in m.group(1) and "java" not in m.group(1)]
    detail = next((m.group(0) for m in matches if m.group(1).startswith("streams_on_spark")),
                  matches[-1].group(0) if matches else text.splitlines()[0] if text else repr(error))
    return StreamsException(f"query {query} failed: {detail}")


def make_checkpoint_dir(prefix: str) -> str:
    return tempfile.mkdtemp(prefix=f"{prefix}-checkpoints-")


def remove_dir(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


class EmbeddedGlobalReader:
    """Reads a whole embedded topic (all partitions, up to their current end); picklable for executors."""

    def __init__(self, root: str) -> None:
        self.root = root

    def read_all(self, topic: str) -> list[ConsumerRecord]:
        from streams_on_spark.connectors.embedded import EmbeddedTopics
        topics = EmbeddedTopics(self.root)
        return [r for p, end in enumerate(topics.end_offsets(topic)) for r in topics.read(topic, p, 0, end)]


class EmbeddedTopicsConnector:
    """The embedded topics as the Spark runtime's connector (the default when no Kafka is configured)."""

    FORMAT = "embedded-topics"

    def __init__(self, topics: Any, spark: Any) -> None:
        from streams_on_spark.connectors.embedded import register
        self.embedded = topics
        register(spark)

    def reader_options(self, topics: list[str]) -> tuple[str, dict[str, str]]:
        return self.FORMAT, {"path": self.embedded.root, "topics": ",".join(topics), "layout": "batches"}

    def global_reader(self) -> EmbeddedGlobalReader:
        return EmbeddedGlobalReader(self.embedded.root)

    def topics(self) -> dict[str, int]:
        return self.embedded.topics()

    def partitions(self, topic: str) -> int:
        return self.embedded.partitions(topic)

    def create_topic(self, topic: str, partitions: int) -> None:
        self.embedded.create_topic(topic, partitions)

    def end_offsets(self, topic: str) -> list[int]:
        return self.embedded.end_offsets(topic)

    def append(self, records: list[ProducerRecord]) -> None:
        self.embedded.append(records)

    def append_batches(self, batches: list[RecordBatch]) -> None:
        self.embedded.append_batches(batches)


class SparkEngine:
    """The test driver's Spark mode: the same driver API, with Spark running the tasks over embedded topics.

    Input is appended to the embedded topics and the queries run to quiescence; lists of records piped at once
    form one batch. Stores are read back from the queries' checkpoints with Spark's state reader.
    """

    def __init__(self, topology: InternalTopologyBuilder, config: TaskConfig, declared: Mapping[str, int],
                 multi_partition: bool, wall_clock_ms: int, spark: Any = None) -> None:
        from streams_on_spark.connectors.embedded import EmbeddedTopics
        from streams_on_spark.topology.partitions import resolve_partition_counts
        self.multi_partition = multi_partition
        self.wall_clock_ms = wall_clock_ms
        topology.application_id = config.application_id
        self.topology = topology
        self.counts = resolve_partition_counts(topology, declared, default_unknown=1)
        for sub in topology.subtopologies():
            for topic in sub.sink_topics:
                self.counts.setdefault(topic, declared.get(topic, 1))
        for topic, n in declared.items():
            self.counts.setdefault(topic, n)
        self.spark = spark if spark is not None else local_session(f"{config.application_id}-driver")
        self.embedded = EmbeddedTopics()
        for topic, n in self.counts.items():
            self.embedded.create_topic(topic, n)
        self.captured: dict[str, Any] = {}
        self.produced_topics: set[str] = set()
        self.checkpoints = make_checkpoint_dir(config.application_id)
        self.runtime = SparkRuntime(topology, config, EmbeddedTopicsConnector(self.embedded, self.spark), self.spark,
                                    self.checkpoints, self.counts, on_output=self._capture,
                                    mock_wall_clock_ms=wall_clock_ms)
        self._sources = {t for s in topology.subtopologies() for t in s.source_topics} | set(topology.global_topics)
        self._tasks_cache: dict[Any, Any] = {}
        self.runtime.start()

    def _capture(self, records: list[ProducerRecord]) -> None:
        from collections import deque
        for r in records:
            self.produced_topics.add(r.topic)
            self.captured.setdefault(r.topic, deque()).append(r)

    def source_topics(self) -> set[str]:
        return set(self._sources)

    def partitions(self, topic: str) -> int:
        return self.counts.get(topic, 1)

    def pipe_many(self, records: list[ProducerRecord]) -> None:
        self.embedded.append(records)
        self._tasks_cache.clear()
        self.runtime.process_all_available()

    def pipe(self, record: ProducerRecord) -> None:
        self.pipe_many([record])

    def advance_wall_clock(self, ms: int) -> None:
        self.wall_clock_ms += ms
        self._tasks_cache.clear()
        self.runtime.advance_wall_clock(self.wall_clock_ms)

    def _tasks(self, subtopology_id: int) -> dict[int, StreamTask]:
        if subtopology_id not in self._tasks_cache:
            self._tasks_cache[subtopology_id] = self.runtime.read_tasks(subtopology_id)
        return self._tasks_cache[subtopology_id]

    def stores(self, name: str) -> dict[int, Any]:
        for sub in self.topology.subtopologies():
            if name in sub.store_names:
                return {p: task.stores[name] for p, task in self._tasks(sub.id).items()}
        return {}

    @property
    def global_stores(self) -> dict[str, Any]:
        """The global stores as a task sees them now (rebuilt from the global topics)."""
        if self.runtime.global_reader is None:
            return {}
        if "global" not in self._tasks_cache:
            fn = next(iter(self.runtime.functions.values()))
            self._tasks_cache["global"] = fn.global_stores()  # type: ignore[assignment]
        return self._tasks_cache["global"]  # type: ignore[return-value]

    def task_ids(self) -> list[TaskId]:
        ids = []
        for sub in self.topology.subtopologies():
            n = max(self.counts[t] for t in sub.source_topics)
            ids.extend(TaskId(sub.id, p) for p in range(n))
        return ids

    def metrics(self) -> dict[str, int]:
        processed = dropped = 0
        for sub in self.topology.subtopologies():
            for task in self._tasks(sub.id).values():
                processed += task.metrics.processed
                dropped += task.metrics.dropped
        return {"process-total": processed, "dropped-records-total": dropped}

    def close(self) -> None:
        self.runtime.stop()
        self.embedded.close()
        remove_dir(self.checkpoints)

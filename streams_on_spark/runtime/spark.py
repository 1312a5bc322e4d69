"""Spark engine: every subtopology is one Structured Streaming query hosting its tasks.

A query reads the subtopology's source and repartition topics, groups rows by source partition and runs that
partition's :class:`StreamTask` inside ``applyInPandasWithState``: the task is rebuilt from the topology,
restored from its snapshot in the group state, fed the batch's records (sorted by offset per topic-partition;
the task itself picks the smallest head timestamp across partitions), drained, and snapshotted back. What
the task's record collector produced — already serialized and partitioned — is written to the topics by the
query's sink. No operator is re-implemented in Spark SQL.
"""
from __future__ import annotations

import heapq
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional

from streams_on_spark.config import TaskConfig
from streams_on_spark.connectors.records import ConsumerRecord, ProducerRecord
from streams_on_spark.errors import StreamsException
from streams_on_spark.processor.api import TaskId
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.topology.builder import InternalTopologyBuilder, SubtopologySpec

log = logging.getLogger(__name__)

OUTPUT_SCHEMA = ("topic string, partition int, timestamp long, key binary, value binary, "
                 "headers array<struct<key:string,value:binary>>, task int, seq long")
STATE_SCHEMA = "snapshot binary"


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


class SubtopologyTaskFunction:
    """The ``applyInPandasWithState`` function of one subtopology: one call runs one task on one batch.

    Global stores are rebuilt for each call from what their topics hold at that moment (``global_reader``), the
    view a Kafka Streams task has of its global stores.
    """

    def __init__(self, topology: InternalTopologyBuilder, subtopology_id: int, config: TaskConfig,
                 partition_counts: Mapping[str, int], global_reader: Any = None) -> None:
        self.topology = topology
        self.subtopology_id = subtopology_id
        self.config = config
        self.partition_counts = dict(partition_counts)
        self.global_reader = global_reader
        self._spec: Optional[SubtopologySpec] = None

    def spec(self) -> SubtopologySpec:
        if self._spec is None:
            self._spec = next(s for s in self.topology.subtopologies() if s.id == self.subtopology_id)
        return self._spec

    def new_task(self, partition: int, snapshot: Optional[bytes]) -> StreamTask:
        """The task for ``partition`` with its saved state (also used to read stores back on the driver)."""
        counts = self.partition_counts
        global_stores = self.global_stores() if self.global_reader is not None else None
        task = StreamTask(TaskId(self.subtopology_id, partition), self.spec(), self.topology, self.config,
                          lambda topic: counts.get(topic, 1), lambda: int(time.time() * 1000), global_stores)
        if snapshot is not None:
            task.restore(snapshot)
        return task

    def global_stores(self) -> dict[str, Any]:
        from streams_on_spark.runtime.local import GlobalTask
        return GlobalTask(self.topology, self.config, lambda: int(time.time() * 1000)).load(self.global_reader).stores

    def __call__(self, key: tuple, frames: Iterator[Any], state: Any) -> Iterator[Any]:
        import pandas as pd
        partition = int(key[0])
        task = self.new_task(partition, state.get[0] if state.exists else None)
        batches = [f for f in frames if len(f)]
        if batches:
            frame = pd.concat(batches, ignore_index=True) if len(batches) > 1 else batches[0]
            frame = frame.sort_values(["topic", "partition", "offset"], kind="stable")
            columns = [frame[c].tolist() for c in ("topic", "partition", "offset", "timestamp", "key", "value",
                                                    "headers")]
            per_partition: dict[tuple[str, int], list[ConsumerRecord]] = defaultdict(list)
            for topic, part, offset, ts, k, v, headers in zip(*columns):
                per_partition[(topic, int(part))].append(
                    ConsumerRecord(topic, int(part), int(offset), int(ts), k, v, _headers_in(headers)))
            for (topic, part), records in per_partition.items():
                task.add_records(topic, part, records)
        while task.process_one():
            pass
        out = task.collector.drain()
        state.update((task.snapshot(),))
        yield pd.DataFrame({
            "topic": [r.topic for r in out],
            "partition": [r.partition for r in out],
            "timestamp": [r.timestamp for r in out],
            "key": [r.key for r in out],
            "value": [r.value for r in out],
            "headers": [[{"key": k, "value": v} for k, v in r.headers] for r in out],
            "task": [partition] * len(out),
            "seq": list(range(len(out))),
        })


def _headers_in(cell: Any) -> tuple:
    if cell is None:
        return ()
    return tuple((h["key"], h["value"]) for h in cell)


class SparkRuntime:
    """Runs a topology as one streaming query per subtopology over a topic connector.

    ``connector`` must provide ``partitions(topic)``, ``topics()``, ``create_topic(name, n)``,
    ``end_offsets(topic)``, ``append(records)`` and ``reader_options(topics)`` (format + options of the
    streaming source). Sinks are ``foreachBatch`` writers that append the produced records, merged across
    tasks by timestamp while keeping each task's order.
    """

    def __init__(self, topology: InternalTopologyBuilder, config: TaskConfig, connector: Any, spark: Any,
                 checkpoint_dir: str, partition_counts: Mapping[str, int],
                 on_output: Optional[Callable[[list[ProducerRecord]], None]] = None,
                 trigger_interval: str = "100 milliseconds") -> None:
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
        self.functions = {s.id: SubtopologyTaskFunction(topology, s.id, config, partition_counts, global_reader)
                          for s in topology.subtopologies()}
        self.topics = sorted({t for s in topology.subtopologies() for t in [*s.source_topics, *s.sink_topics]}
                             | set(topology.global_topics))
        self.queries: dict[int, Any] = {}
        self._logged: dict[int, int] = {}

    def query_name(self, subtopology_id: int) -> str:
        return f"{self.config.application_id}-subtopology-{subtopology_id}"

    def checkpoint(self, subtopology_id: int) -> str:
        return os.path.join(self.checkpoint_dir, f"subtopology-{subtopology_id}")

    def start(self) -> None:
        """Start every subtopology's query (upstream first)."""
        for sid, fn in self.functions.items():
            self.queries[sid] = self._start_query(sid, fn)
            log.info("started query %s reading %s", self.query_name(sid), sorted(fn.spec().source_topics))

    def _start_query(self, sid: int, fn: SubtopologyTaskFunction) -> Any:
        from pyspark.sql.streaming.state import GroupStateTimeout
        spec = fn.spec()
        tasks = max(self.partition_counts[t] for t in spec.source_topics)
        fmt, options = self.connector.reader_options(sorted(spec.source_topics))
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
        stream = frame.groupBy("partition").applyInPandasWithState(
            fn, OUTPUT_SCHEMA, STATE_SCHEMA, "append", GroupStateTimeout.NoTimeout)
        commits = _SinkCommits(os.path.join(self.checkpoint(sid), "sink-commits"))
        sink = _TopicSink(self.connector, commits, self.on_output, self.query_name(sid))
        return (stream.writeStream.queryName(self.query_name(sid)).outputMode("append")
                .foreachBatch(sink).option("checkpointLocation", self.checkpoint(sid))
                .trigger(processingTime=self.trigger_interval).start())

    def process_all_available(self, timeout_s: float = 600.0) -> None:
        """Run the queries until every topic they read is fully processed (quiescence), logging progress and lag.

        A round asks each query to process what is available; the topology is quiescent when a round changed no
        topic and every query's committed progress has caught up with its topics' end offsets (a query that
        just started, or whose source saw a new topic late, may report "no new data" before its first batch).
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
                    log.info("%s: batch %s, %s input rows, lag %d", self.query_name(sid), progress["batchId"],
                             progress["numInputRows"], self.lag(sid))
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
        query = self.queries[sid]
        try:
            query.processAllAvailable()
        except Exception as e:  # surface the task's error, not a JVM stack trace
            raise _query_error(self.query_name(sid), e) from e

    def lag(self, subtopology_id: int) -> int:
        """Records in the subtopology's input topics beyond what its query has processed."""
        import json
        progress = self.queries[subtopology_id].lastProgress
        done: dict = {}
        if progress is not None and progress.get("sources"):
            end = progress["sources"][0].get("endOffset")
            done = json.loads(end) if isinstance(end, str) else (end or {})
        total = 0
        for topic in self.functions[subtopology_id].spec().source_topics:
            consumed = done.get(topic, {})
            for p, end_offset in enumerate(self.connector.end_offsets(topic)):
                total += end_offset - int(consumed.get(str(p), 0))
        return total

    def _end_offsets(self) -> dict[str, list[int]]:
        return {t: self.connector.end_offsets(t) for t in self.topics}

    def stop(self) -> None:
        for sid, query in self.queries.items():
            try:
                query.stop()
            except Exception:  # a failed query is already stopped; its error was reported
                log.debug("stopping query %s failed", self.query_name(sid), exc_info=True)
        self.queries.clear()

    def task_snapshots(self, subtopology_id: int) -> dict[int, bytes]:
        """Each partition's saved task state, read from the query's checkpoint with Spark's state reader."""
        path = self.checkpoint(subtopology_id)
        if not os.path.isdir(os.path.join(path, "state")):
            return {}
        rows = self.spark.read.format("statestore").load(path).collect()
        return {int(r["key"]["partition"]): bytes(r["value"]["groupState"]["snapshot"]) for r in rows
                if r["value"] is not None and r["value"]["groupState"] is not None}

    def read_tasks(self, subtopology_id: int) -> dict[int, StreamTask]:
        """Offline copies of the subtopology's tasks with the state Spark holds (for store inspection)."""
        fn = self.functions[subtopology_id]
        spec = fn.spec()
        n = max(self.partition_counts[t] for t in spec.source_topics)
        snapshots = self.task_snapshots(subtopology_id)
        return {p: fn.new_task(p, snapshots.get(p)) for p in range(n)}


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
        table = frame.toArrow()  # columnar transfer: far cheaper than collecting Row objects
        columns = [table.column(c).to_pylist() for c in ("task", "seq", "timestamp", "topic", "partition", "key",
                                                          "value", "headers")]
        per_task: dict[int, list[tuple]] = defaultdict(list)
        for task, seq, ts, topic, partition, key, value, headers in zip(*columns):
            per_task[task].append((seq, ts, ProducerRecord(
                topic, partition, ts, key, value,
                tuple((h["key"], h["value"]) for h in headers) if headers else ())))
        ordered = [sorted(rows, key=lambda r: r[0]) for _, rows in sorted(per_task.items())]
        records = [r for _, _, r in heapq.merge(*ordered, key=lambda r: r[1])]
        if records:
            self.connector.append(records)
            if self.on_output is not None:
                self.on_output(records)
        self.commits.commit(batch_id)
        log.info("%s: batch %d wrote %d records", self.query, batch_id, len(records))


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
        return self.FORMAT, {"path": self.embedded.root, "topics": ",".join(topics)}

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
                                    self.checkpoints, self.counts, on_output=self._capture)
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
        raise StreamsException("advance_wall_clock_time is not supported on the Spark engine yet: wall-clock "
                               "punctuation runs on the in-process engine only")

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

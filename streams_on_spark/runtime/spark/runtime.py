"""``SparkRuntime``: a topology as one Structured Streaming query per subtopology, over a topic connector.

A query reads the subtopology's source and repartition topics, groups rows by task slot and runs that task's
:class:`~streams_on_spark.runtime.task.StreamTask` inside ``transformWithStateInPandas``
(:class:`~streams_on_spark.runtime.spark.task_function.SubtopologyTaskFunction`), with the task's state in Spark's
RocksDB state store and a local copy on the executor (:mod:`~streams_on_spark.runtime.spark.task_state`). What the task's record collector
produced — already serialized and partitioned — leaves the task by the runtime's output strategy: written by the
executor that ran the task (production), or returned to the driver (the test driver). No operator is
re-implemented in Spark SQL.

The test driver's modes are objects the driver's Spark engine builds and passes in (an application passes none):
a :class:`~streams_on_spark.runtime.spark.clock.Clock` (its mock clock), a
:class:`~streams_on_spark.runtime.spark.execution.BatchExecution` (Kafka's driver's single task) and the tasks'
:class:`~streams_on_spark.runtime.spark.output.TaskOutput` (returned to it).
"""
from __future__ import annotations

import datetime
import json
import logging
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping, Optional, Sequence

from streams_on_spark.config import TaskConfig
from streams_on_spark.connectors.base import Connector
from streams_on_spark.errors import StreamsException
from streams_on_spark.metrics import CONSUMER_FETCH_GROUP, THREAD_GROUP, MetricName, Metrics, Sensor, TaskSensors
from streams_on_spark.processor.api import TaskId
from streams_on_spark.runtime.spark.checkpoints import CheckpointLocation
from streams_on_spark.runtime.spark.clock import SYSTEM_CLOCK, Clock
from streams_on_spark.runtime.spark.errors import query_error
from streams_on_spark.runtime.spark.execution import PROCESS_AVAILABLE, BatchExecution
from streams_on_spark.runtime.spark.output import QueryableOutput, TaskOutput, WrittenOutput
from streams_on_spark.runtime.spark.sink import CommitReport
from streams_on_spark.runtime.spark.slots import state_partitions, task_slots
from streams_on_spark.runtime.spark.sources import read_topics
from streams_on_spark.runtime.spark.standby import StandbyCopies
from streams_on_spark.runtime.spark.session import (forget_hadoop_property_sources, is_spark_connect, quiet_spark_logs,
                                                    require_rocksdb_state_store, session_conf)
from streams_on_spark.runtime.spark.task_function import SubtopologyTaskFunction, query_name
from streams_on_spark.runtime.spark.task_state import CHANGELOG, TASK_STATE, SavedTask, decode_changes
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.state.local import Changes, apply_changes
from streams_on_spark.state.stores import InMemoryKeyValueBytesStore
from streams_on_spark.topology.builder import InternalTopologyBuilder
from streams_on_spark.topology.partitions import TopicLayout

log = logging.getLogger(__name__)
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


class SparkRuntime:
    """Runs a topology as one streaming query per subtopology over a :class:`Connector`.

    An application's tasks write their output from their executors (``output`` None: :class:`WrittenOutput`, or
    :class:`QueryableOutput` with ``interactive_queries``), read the micro-batch's time (:class:`SystemClock`) and
    process each batch whole (:class:`ProcessAvailable`), a task per subtopology and partition. The test driver's
    Spark engine passes its own: a :class:`ReturnedOutput` with each query's ``sink`` (the driver appends what the
    tasks return, merged by stream time, and hands every record on in emission order), a :class:`MockClock` (each
    query also reads a tick topic) and, in single-partition mode, a :class:`DriverTask` execution.
    """

    def __init__(self, topology: InternalTopologyBuilder, config: TaskConfig, layout: TopicLayout,
                 connector: Connector, spark: Any, checkpoint_dir: CheckpointLocation | str, *,
                 trigger_interval: str = "100 milliseconds", checkpoint_names: Optional[Mapping[int, str]] = None,
                 pipelines: Sequence[Any] = (), interactive_queries: bool = False,
                 output: Optional[TaskOutput] = None, clock: Clock = SYSTEM_CLOCK,
                 execution: BatchExecution = PROCESS_AVAILABLE, sink: Optional[Callable[[str], Any]] = None) -> None:
        config.check_micro_batches()
        if interactive_queries and (output is not None or pipelines or is_spark_connect(spark)):
            raise StreamsException("interactive.queries=true needs the tasks' commit rows on the driver: it is not "
                                   "supported with pipeline.mode=true nor on Spark Connect")
        self.global_reader = connector.global_reader() if topology.global_stores() else None
        self.topology = topology
        self.config = config
        self.layout = layout
        self.connector = connector
        self.spark = spark
        self.checkpoint_location = CheckpointLocation.of(checkpoint_dir)
        # each subtopology's checkpoint directory under the location (KafkaStreams matches them across upgrades)
        self.checkpoint_names = dict(checkpoint_names or {})
        self.trigger_interval = trigger_interval
        # how many state partitions a query may run at once (state_partitions): the session's shuffle partitions
        # (a local session's: its cores), read before any query of this runtime sets its own
        self.state_partition_limit = int(spark.conf.get(SHUFFLE_PARTITIONS))
        if output is None:
            output = QueryableOutput(connector.writer()) if interactive_queries else WrittenOutput(connector.writer())
        self.output = output
        # each query's foreachBatch sink, by query name, where the tasks return their output (the test driver's);
        # None: the application's commit report
        self.sink = sink
        run_id = uuid.uuid4().hex   # this run of the application (see SubtopologyTaskFunction.run_id)
        self.functions = {
            s.id: SubtopologyTaskFunction(topology, s.id, config, layout, output, self.global_reader, clock=clock,
                                          execution=execution, run_id=run_id, spec=s)
            for s in execution.subtopologies(topology)}
        # pipeline mode (pipeline.mode, KafkaStreams only): each pipeline's upstream subtopologies run in its
        # downstream's query, before the shuffle; they have no query of their own
        self.upstream_functions: dict[int, SubtopologyTaskFunction] = {}
        for pipeline in pipelines:
            from streams_on_spark.runtime.spark.pipeline import PipelineTaskFunction
            down = self.functions[pipeline.downstream]
            ups = {u: self.functions.pop(u) for u in pipeline.upstreams}
            self.upstream_functions.update(ups)
            self.functions[pipeline.downstream] = PipelineTaskFunction(
                topology, down.subtopology_id, config, layout, output, self.global_reader, clock=clock,
                execution=execution, run_id=run_id, spec=down.spec(),
                upstreams={next(iter(u.spec().source_topics)): u for u in ups.values()},
                replaced=frozenset(pipeline.topics))
        # what the queries read: quiescence means none of these grows (output-only topics may, e.g. by punctuation)
        self.input_topics = sorted({t for fn in self.functions.values() for t in fn.input_topics()}
                                   | set(topology.global_topics))
        # published by the commit report of tasks that write their output
        writes = isinstance(output, WrittenOutput) and not is_spark_connect(spark)
        self.whole_batches = self._whole_batch_topics() if writes and connector.whole_batches else {}
        self.queries: dict[int, Any] = {}
        self._logged: dict[int, int] = {}
        self._progress_marks: dict[int, tuple[Any, float]] = {}   # query -> (its last progress, when first seen)
        client_id = (config.app_configs or {}).get("client.id") or f"{layout.application_id}-{uuid.UUID(run_id)}"
        self.progress = RuntimeMetrics(str(client_id), {self.query_name(sid): sid for sid in self.functions})
        # interactive.queries: the driver's copy of every task's stores (runtime/spark/standby.py)
        self.standby = StandbyCopies(self) if interactive_queries else None

    def query_name(self, subtopology_id: int) -> str:
        return query_name(self.layout.application_id, subtopology_id)

    def checkpoint_name(self, subtopology_id: int) -> str:
        """The name of the subtopology's checkpoint directory under the location."""
        return self.checkpoint_names.get(subtopology_id, f"subtopology-{subtopology_id}")

    def checkpoint(self, subtopology_id: int) -> str:
        return self.checkpoint_location.join(self.checkpoint_name(subtopology_id))

    def _whole_batch_topics(self) -> dict[int, list[str]]:
        """Query -> the repartition topics it alone writes and another query reads: read downstream in its whole
        micro-batches, so a downstream batch never starts on the output of the first upstream tasks alone (one
        downstream batch per upstream batch, instead of a second with the rest, each with its fixed cost)."""
        internal = {self.topology.decorate_topic(t) for t in self.topology.internal_topics}
        writers: dict[str, set[int]] = {}
        for sid, fn in self.functions.items():
            for topic in fn.spec().sink_topics:
                writers.setdefault(topic, set()).add(sid)
        topics: dict[int, list[str]] = {}
        for topic, sids in sorted(writers.items()):
            read_elsewhere = any(topic in fn.input_topics() for sid, fn in self.functions.items() if sid not in sids)
            if topic in internal and len(sids) == 1 and read_elsewhere:
                topics.setdefault(next(iter(sids)), []).append(topic)
        return topics

    def start(self) -> None:
        """Start every subtopology's query (upstream first)."""
        quiet_spark_logs(self.spark)
        forget_hadoop_property_sources(self.spark)   # each batch broadcasts the configuration: a smaller copy
        if self.standby is not None:   # the checkpoint's state, before any batch commits
            self.standby.load()
        for topics in self.whole_batches.values():   # what the last run wrote is whole: readable now
            self.connector.publish_batch(topics)
        for sid, fn in self.functions.items():
            if fn.tick_topic:
                self.connector.create_topic(fn.tick_topic, fn.task_count())
            else:  # system clock: wake idle tasks for their punctuations with processing-time timeouts
                fn.wall_clock_timeouts = fn.schedules_wall_clock_punctuation()
            self.queries[sid] = self._start_query(sid, fn)
            log.debug("started query %s reading %s", self.query_name(sid), sorted(fn.spec().source_topics))

    def _start_query(self, sid: int, fn: SubtopologyTaskFunction) -> Any:
        from pyspark.sql import functions as F
        tasks = fn.task_count()
        whole = sorted(t for topics in self.whole_batches.values() for t in topics if t in fn.input_topics())
        require_rocksdb_state_store(self.spark)
        frame = read_topics(self.spark, self.connector, fn.input_topics(), whole)
        prefix = getattr(fn, "prefix", None)
        if prefix is not None:   # pipeline mode: the upstream subtopologies run here, before the shuffle
            from streams_on_spark.runtime.spark.pipeline import PREFIX_SCHEMA
            frame = frame.mapInArrow(prefix(), PREFIX_SCHEMA)
        slots = F.array(*[F.lit(slot) for slot in task_slots(tasks)])
        frame = frame.withColumn("slot", F.element_at(slots, F.col("partition") + 1).cast("int"))
        time_mode = "ProcessingTime" if fn.wall_clock_timeouts else "None"
        stream = frame.groupBy("slot").transformWithStateInPandas(fn.processor(), fn.output.schema, "Append",
                                                                  time_mode)
        name = self.query_name(sid)
        self.checkpoint_location.relocate_state_schema_paths(self.checkpoint_name(sid))
        if self.sink is not None:
            sink: Any = self.sink(name)
        elif is_spark_connect(self.spark):
            # Spark Connect runs foreachBatch in a Python worker of the server: the sink takes nothing of this
            # process (its log lines go to the server's log; the tasks' counters do not reach metrics())
            sink = CommitReport(name)
        else:
            sink = CommitReport(name, lambda: self.lag(sid),
                                on_commit=lambda batch_id, rows: self._on_commit(sid, batch_id, rows),
                                columns=None)   # the frame is the tasks' output: fn.output.columns
        # the state partitions, frozen into a new checkpoint by its first batch (Spark takes an existing
        # checkpoint's own from its offset log): set on the session while the query starts (it runs on a copy of
        # the session made then), the user's value restored after
        partitions = state_partitions(tasks, self.state_partition_limit)
        with session_conf(self.spark, SHUFFLE_PARTITIONS, str(partitions)):
            query = (stream.writeStream.queryName(name).outputMode("append")
                     .foreachBatch(sink).option("checkpointLocation", self.checkpoint(sid))
                     .trigger(processingTime=self.trigger_interval).start())
        log.debug("query %s: %d task(s) in %d state partition(s) (a new checkpoint's)", name, tasks, partitions)
        sink.bind(str(query.id))
        return query

    def _on_commit(self, sid: int, batch_id: int, rows: list) -> None:
        """A batch of query ``sid`` committed: what it wrote to topics read in whole batches is readable now; its
        tasks' metrics (and in pipeline mode its upstream tasks')."""
        if sid in self.whole_batches:
            self.connector.publish_batch(self.whole_batches[sid])
        if sid in self.functions and getattr(self.functions[sid], "prefix", None) is not None:
            from streams_on_spark.runtime.spark.pipeline import upstream_rows
            rows, upstream = upstream_rows(rows)
            for upstream_sid, upstream_tasks in sorted(upstream.items()):
                self.progress.on_commit(upstream_sid, batch_id, upstream_tasks)
        self.progress.on_commit(sid, batch_id, rows)
        if self.standby is not None:
            self.standby.apply(sid, batch_id, rows)

    def process_all_available(self, timeout_s: float = 600.0) -> None:
        """Run the queries until every topic they read is fully processed (quiescence), logging progress and lag.

        A round asks each query, upstream first, to process what is available; the topology is quiescent when
        every query's last committed batch has read its topics to their end offsets, no query is in the middle of a
        trigger, and no topic that a query reads grew meanwhile (see :meth:`_quiescent`). Output-only topics may
        still grow afterwards, e.g. from wall-clock punctuation.
        """
        deadline = time.monotonic() + timeout_s
        rounds = 0
        while True:
            before = self._end_offsets()
            for sid in sorted(self.queries):
                self._await(sid)
                self._log_progress(sid)
            rounds += 1
            if self._quiescent(before):
                log.debug("quiescent after %d round(s)", rounds)
                return
            if time.monotonic() > deadline:
                lags = {self.query_name(sid): self.lag(sid) for sid in self.queries}
                raise StreamsException(f"topology did not become quiescent within {timeout_s:.0f}s ({rounds} rounds, "
                                       f"lag per query {lags}); is a subtopology feeding itself?")
            if rounds > 1:
                time.sleep(0.05)  # let a query that saw no data yet pick up its next trigger

    def _quiescent(self, before: dict[str, list[int]]) -> bool:
        """Whether the queries are done, after a round that began with the end offsets ``before``.

        Seen at one moment (the end offsets read again after the queries' lags and triggers, and unchanged): every
        query's committed batches have read its topics to their end and none is running a batch with data. A query
        that runs a batch has records beyond its last committed batch, so nothing could write while it was seen;
        the round may have grown the topics (the upstream query's output, which the downstream query read in the
        same round) without a second round of empty triggers to prove it. Queries with wall-clock timeouts run
        batches without input (``_in_trigger`` does not see them): with those, a whole round must grow nothing.
        """
        settled = self._end_offsets()
        if any(self.lag(sid) for sid in self.queries) or any(self._in_trigger(sid) for sid in self.queries):
            return False
        if settled == before:
            return True
        if any(self.functions[sid].wall_clock_timeouts for sid in self.queries):
            return False
        return self._end_offsets() == settled

    def stalled(self, seconds: float) -> bool:
        """Whether no query reported progress (a batch, or an idle query's no-data report) for ``seconds``, as seen
        from the calls of this method (one caller: the broker watch)."""
        now = time.monotonic()
        for sid, query in self.queries.items():
            progress = query.lastProgress
            mark = None if progress is None else (progress.get("batchId"), progress.get("timestamp"))
            if mark != self._progress_marks.get(sid, (None, None))[0]:
                self._progress_marks[sid] = (mark, now)
        return all(now - seen >= seconds for _, seen in self._progress_marks.values())

    def _in_trigger(self, sid: int) -> bool:
        """Whether query ``sid`` is running a batch with data now (no-data batches of timeout queries don't count)."""
        if self.functions[sid].wall_clock_timeouts:
            return False
        status = self.queries[sid].status
        return bool(status.get("isTriggerActive") and status.get("isDataAvailable"))

    def _log_progress(self, sid: int) -> None:
        """Log every batch query ``sid`` finished since the last call: its input records, then the query's lag."""
        new = [p for p in self.queries[sid].recentProgress if p["batchId"] > self._logged.get(sid, -1)]
        for progress in new:
            self._logged[sid] = progress["batchId"]
            records = sum(end - source_offsets(progress, "startOffset").get(topic, {}).get(p, 0)
                          for topic, ends in source_offsets(progress, "endOffset").items()
                          for p, end in ends.items())
            if records or progress is new[-1]:
                log.info("%s: batch %s, %d input records, lag %d", self.query_name(sid), progress["batchId"],
                         records, self.lag(sid))

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
            raise query_error(self.query_name(sid), e) from None

    def lag(self, subtopology_id: int) -> int:
        """Records in the subtopology's input topics beyond what its last committed batch read."""
        return sum(self._lags(subtopology_id))

    def _lags(self, subtopology_id: int) -> list[int]:
        """Per input topic-partition: records beyond what the query's last committed batch read."""
        done = source_offsets(self.queries[subtopology_id].lastProgress, "endOffset")
        lags = []
        for topic in self.functions[subtopology_id].input_topics():
            consumed = done.get(topic, {})
            lags.extend(end_offset - consumed.get(str(p), 0)
                        for p, end_offset in enumerate(self.connector.end_offsets(topic)))
        return lags

    def metrics(self) -> Metrics:
        """Kafka's metrics of the running queries (see :class:`RuntimeMetrics`); ``records-lag-max`` is the
        current lag of each query's source, read when called (none once stopped)."""
        for query in self.queries.values():
            for progress in query.recentProgress:   # the last batches' progress Spark keeps (100 by default)
                self.progress.on_progress(progress)
        lags = {sid: max(self._lags(sid), default=0) for sid in self.queries}
        return self.progress.metrics(lags)

    def failure(self) -> Optional[StreamsException]:
        """The error of the first query that stopped with one, as a ``StreamsException``."""
        for sid, query in self.queries.items():
            if not query.isActive:
                error = query.exception()
                if error is not None:
                    return query_error(self.query_name(sid), error)
        return None

    def _end_offsets(self) -> dict[str, list[int]]:
        return {t: self.connector.end_offsets(t) for t in self.input_topics}

    def stop(self, timeout_s: Optional[float] = None) -> bool:
        """Stop every query within ``timeout_s`` (None: as long as it takes); True if all stopped in time.

        A batch in flight gets up to half the time to finish, so its writes and transactions commit; one still
        running after that is interrupted (its open transactions are aborted by the broker, or fenced when its
        tasks run again) and replayed by the next run from the checkpoint. py4j's report of an interrupted
        ``foreachBatch`` call is silenced while stopping."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        settle = time.monotonic() + (30.0 if timeout_s is None else timeout_s / 2)
        queries = list(self.queries.items())
        while any(self._running_batch(query) for _, query in queries) and time.monotonic() < settle:
            time.sleep(0.05)
        done = threading.Event()

        def stop_all() -> None:
            py4j_log = logging.getLogger("py4j.clientserver")
            level = py4j_log.level
            py4j_log.setLevel(logging.CRITICAL)
            try:
                for sid, query in queries:
                    try:
                        query.stop()
                    except Exception:  # a failed query is already stopped; its error was reported
                        log.debug("stopping query %s failed", self.query_name(sid), exc_info=True)
            finally:
                py4j_log.setLevel(level)
                done.set()

        stopper = threading.Thread(target=stop_all, name="streams-on-spark-stop", daemon=True)
        stopper.start()
        stopped = done.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        self.queries.clear()
        if not stopped:
            log.warning("queries still stopping after %.1f s", timeout_s)
        return stopped

    @staticmethod
    def _running_batch(query: Any) -> bool:
        try:
            status = query.status
            return bool(query.isActive and status.get("isTriggerActive") and status.get("isDataAvailable"))
        except Exception:   # a query that failed or stopped meanwhile
            return False

    def read_tasks(self, subtopology_id: int) -> dict[int, StreamTask]:
        """Offline copies of the subtopology's tasks with the state Spark holds (for store inspection): each task's
        snapshot and its local stores rebuilt in memory from the changelog, read with Spark's state reader. An
        upstream subtopology of pipeline mode has no state (nor query): its tasks are fresh."""
        if subtopology_id in self.upstream_functions:
            fn = self.upstream_functions[subtopology_id]
            return {p: fn.new_task(p, None, global_stores={}) for p in range(fn.task_count())}
        fn = self.functions[subtopology_id]
        return {p: fn.new_task(p, snapshot, bytes_stores=fn.bytes_stores(tables))
                for p, (_, snapshot, tables) in self.read_state(subtopology_id).items()}

    def read_state(self, subtopology_id: int) -> dict[int, tuple[int, Optional[bytes], dict[str, Any]]]:
        """Partition -> (the batch its state is at (-1: none), its snapshot, its local stores' tables rebuilt in
        memory from the changelog), read with Spark's state reader (a Spark job)."""
        fn = self.functions[subtopology_id]
        path = self.checkpoint(subtopology_id)
        tasks = fn.task_count()
        saved: dict[int, SavedTask] = {}
        changes: dict[int, list[Changes]] = {}
        if self.checkpoint_location.has_state(self.checkpoint_name(subtopology_id), self.spark):
            self.spark.streams.active  # noqa: B018 - creates the state store coordinator the RocksDB reader needs

            def read(state_variable: str) -> list:
                return self.spark.read.format("statestore").option("stateVarName", state_variable).load(path).collect()
            with ThreadPoolExecutor(1) as pool:   # the two jobs side by side: their fixed costs overlap
                changelog = pool.submit(read, CHANGELOG) if fn.local_store_names() else None
                for row in read(TASK_STATE):
                    value = row["value"]
                    if value is not None:
                        saved[int(row["key"]["slot"]) % tasks] = SavedTask(*value)
                for row in changelog.result() if changelog is not None else ():
                    if row["list_element"] is not None:
                        changes.setdefault(int(row["key"]["slot"]) % tasks, []).append(
                            decode_changes(bytes(row["list_element"]["changes"])))
        out = {}
        for p in range(tasks):
            tables = {name: InMemoryKeyValueBytesStore(name) for name in fn.local_store_names()}
            apply_changes(changes.get(p, ()), tables)
            state = saved.get(p)
            out[p] = (-1, None, tables) if state is None else (state.version, bytes(state.snapshot), tables)
        return out


class RuntimeMetrics:
    """Kafka's metrics of a runtime's queries, each query seen as a stream thread ``<client.id>-StreamThread-<n>``
    (n = subtopology + 1) with one consumer ``<thread-id>-consumer``. Fed by the queries' commit rows (the tasks'
    counters and commit latencies, per micro-batch) and by Spark's progress of each batch (the queries'
    ``recentProgress``, read when metrics are asked for: no listener, so the JVM never calls back into Python).

    Provided: per task (``stream-task-metrics``) ``process-total``, ``process-rate``, ``dropped-records-total``,
    ``dropped-records-rate``; per thread (``stream-thread-metrics``) ``process-total``, ``process-rate``,
    ``commit-total``, ``commit-rate``, ``commit-latency-avg``, ``commit-latency-max`` (a micro-batch is a commit;
    its latency is its slowest task's, flushing caches, writing and committing state), ``poll-total``,
    ``poll-rate``, ``poll-records-avg``, ``poll-records-max`` (a micro-batch's input records); per consumer
    (``consumer-fetch-manager-metrics``) ``records-consumed-total``, ``records-consumed-rate`` and
    ``records-lag-max`` (the largest partition lag now). Not provided: Kafka's latency and ratio metrics of
    processing, polling and punctuation, ``record-lateness-*``, ``enforced-processing-*``, task creation and
    closing, store and producer metrics, and the client-level ``stream-metrics``; Spark's own batch durations are in
    each query's ``lastProgress``.
    """

    def __init__(self, client_id: str, queries: Mapping[str, int]) -> None:
        self.client_id = client_id
        self.queries = dict(queries)   # query name -> subtopology
        self._lock = threading.Lock()
        self._tasks = TaskSensors()
        self._sensors: dict[tuple[int, str], Sensor] = {}
        self._batches: dict[int, int] = {}   # subtopology -> last batch id seen in a progress event

    def thread_id(self, subtopology_id: int) -> str:
        return f"{self.client_id}-StreamThread-{subtopology_id + 1}"

    def _sensor(self, sid: int, what: str) -> Sensor:
        sensor = self._sensors.get((sid, what))
        if sensor is None:
            sensor = self._sensors[(sid, what)] = Sensor()
        return sensor

    def on_commit(self, sid: int, batch_id: int, rows: list) -> None:
        """A micro-batch of query ``sid`` committed: its commit rows carry each task's counts and commit latency."""
        with self._lock:
            processed, latency = 0, 0.0
            for row in rows:
                if row["processed"] or row["dropped"] or row["commit_ms"]:
                    self._tasks.add(str(TaskId(sid, row["task"])), row["processed"], row["dropped"])
                    processed += row["processed"]
                    latency = max(latency, row["commit_ms"])
            self._sensor(sid, "process").record(processed)
            self._sensor(sid, "commit").record(latency)

    def on_progress(self, progress: Mapping[str, Any]) -> None:
        """Spark's progress of a batch (as a dict): records consumed, from its source offsets, recorded at the time
        the batch ran. A batch already seen is skipped, so progress can be read again and again."""
        sid = self.queries.get(progress.get("name") or "")
        batch = progress.get("batchId")
        if sid is None or batch is None:
            return
        start, end = source_offsets(dict(progress), "startOffset"), source_offsets(dict(progress), "endOffset")
        records = sum(o - start.get(t, {}).get(p, 0) for t, ends in end.items() for p, o in ends.items())
        with self._lock:
            if batch <= self._batches.get(sid, -1):   # seen, or an idle query's repeated progress
                return
            self._batches[sid] = batch
            self._sensor(sid, "poll").record(records, now=_monotonic_at(progress.get("timestamp")))

    def metrics(self, lags: Mapping[int, int]) -> Metrics:
        """Every metric (see the class doc), with ``lags`` (subtopology -> largest partition lag) as
        ``records-lag-max``."""
        now = time.monotonic()
        with self._lock:
            threads = sorted({sid for sid, _ in self._sensors} | set(lags))
            out = self._tasks.metrics(lambda task_id: self.thread_id(int(task_id.split("_")[0])), now)
            for sid in threads:
                thread = {"thread-id": self.thread_id(sid)}
                consumer = {"client-id": f"{self.thread_id(sid)}-consumer"}
                process, commit, poll = (self._sensor(sid, w) for w in ("process", "commit", "poll"))
                out[MetricName("process-total", THREAD_GROUP, thread)] = int(process.sum)
                out[MetricName("process-rate", THREAD_GROUP, thread)] = process.rate(now)
                out[MetricName("commit-total", THREAD_GROUP, thread)] = commit.count
                out[MetricName("commit-rate", THREAD_GROUP, thread)] = commit.events_rate(now)
                out[MetricName("commit-latency-avg", THREAD_GROUP, thread)] = commit.avg(now)
                out[MetricName("commit-latency-max", THREAD_GROUP, thread)] = commit.max(now)
                out[MetricName("poll-total", THREAD_GROUP, thread)] = poll.count
                out[MetricName("poll-rate", THREAD_GROUP, thread)] = poll.events_rate(now)
                out[MetricName("poll-records-avg", THREAD_GROUP, thread)] = poll.avg(now)
                out[MetricName("poll-records-max", THREAD_GROUP, thread)] = poll.max(now)
                out[MetricName("records-consumed-total", CONSUMER_FETCH_GROUP, consumer)] = int(poll.sum)
                out[MetricName("records-consumed-rate", CONSUMER_FETCH_GROUP, consumer)] = poll.rate(now)
                if sid in lags:
                    out[MetricName("records-lag-max", CONSUMER_FETCH_GROUP, consumer)] = lags[sid]
        return Metrics(out)


def _monotonic_at(timestamp: Optional[str]) -> Optional[float]:
    """The monotonic clock's reading at a progress ``timestamp`` (ISO 8601, UTC; None: now)."""
    if not timestamp:
        return None
    try:
        at = datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
    return time.monotonic() - max(0.0, time.time() - at)


def source_offsets(progress: Optional[dict], which: str) -> dict[str, dict[str, int]]:
    """A query progress's ``startOffset``/``endOffset`` of its source: topic -> partition (str) -> offset."""
    if not progress or not progress.get("sources"):
        return {}
    offsets = progress["sources"][0].get(which)
    offsets = (json.loads(offsets) if isinstance(offsets, str) else offsets) or {}
    return {t: {p: int(o) for p, o in ps.items()} for t, ps in offsets.items()}

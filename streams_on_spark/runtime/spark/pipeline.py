"""Pipeline mode (opt-in, ``pipeline.mode=true``): Spark's shuffle in place of a repartition topic.

In the default shape every subtopology is its own query, and a repartition topic sits between an upstream
subtopology U and the downstream one D that reads it: U's tasks write it, D's query reads it back. Where U is
*stateless* — one source topic (not an internal one), only stateless DSL operators that run as fused chains
(:class:`~streams_on_spark.runtime.fused.FusedChains`), and every sink a repartition topic that only D reads — this
mode runs U and D as ONE query::

    U's source topic(s) (+ D's other source topics)
      -> mapInArrow(UpstreamPrefix)     # on each source partition: U's task for that partition runs the batch; its
                                        # record collector's output (partition chosen with murmur2, as the
                                        # repartition topic would get it) leaves as rows of the batches layout
      -> groupBy("slot")                # Spark's shuffle: repartition partition p -> D's task p
      -> transformWithStateInPandas(D)  # D's tasks, as in the default shape
      -> foreachBatch(CommitReport)

The repartition topic is not created, written or read. What D sees of it:

- **Offsets.** A repartition partition is virtual: D's task ``p`` numbers the records it receives from it 0, 1, 2,
  ... in the order it processes them (the order a topic would have given them had the upstream tasks appended in
  that order), continuing from its snapshot's position (``next_offset``, kept with the task's state in Spark). So
  ``record_metadata()`` offsets are dense and increasing per partition, survive restarts, and a replayed batch
  numbers its records as the first run did. Within a micro-batch the upstream tasks' outputs to one partition are
  taken in the order (source topic, source partition, source offset): deterministic, so replay is exact; per key the
  order of records from one upstream task holds, as through a topic (across upstream tasks Kafka gives no order).
- **Exactly-once / replay.** U has no state: a replayed batch re-reads the same source offsets (Spark's checkpoint),
  U's tasks produce the same records (null-key round-robin counters start afresh for every source row), D numbers
  them the same way and its state comes back from the checkpoint of the previous batch.
- **Metrics.** U's tasks run on the source partitions, outside ``transformWithStateInPandas``; each sends its
  processed/dropped counts along as a row without a topic, which D's task adds to its commit rows (task ``-(q + 1)``,
  partition = U's subtopology), so ``KafkaStreams.metrics()`` keeps U's task and thread ``process-*`` metrics. U has no
  query: its thread has no poll/consumer metrics (the fused query's are under D's thread), and ``read_tasks(U)``
  returns fresh tasks (U has no state to read).
"""
from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional

from streams_on_spark.config import TaskConfig
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.errors import IllegalStateError
from streams_on_spark.processor.api import TaskId
from streams_on_spark.runtime.spark.execution import TaskBatch
from streams_on_spark.runtime.spark.output import COMMIT_SCHEMA, TaskOutput
from streams_on_spark.runtime.spark.task_function import SubtopologyTaskFunction, worker_gc
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.topology.builder import InternalTopologyBuilder
from streams_on_spark.topology.partitions import TopicLayout

log = logging.getLogger(__name__)

__all__ = ["Pipeline", "plan_pipelines", "PipelineTaskFunction", "UpstreamPrefix", "PREFIX_SCHEMA"]

REPARTITION_SUFFIX = "-repartition"
#: what :class:`UpstreamPrefix` yields: the ``batches`` layout plus where a row came from and its record count (null: a
#: passed-through row). An upstream task's output to one partition travels as the record batch its sinks encoded as
#: they produced it (:class:`~streams_on_spark.record_batch.PartitionedRecords`), decoded after the shuffle
#: by Arrow (:meth:`RecordBatch.columns`).
PREFIX_SCHEMA = ("topic string, partition int, offset long, ends binary, data binary, origin_topic string, "
                 "origin_partition int, count long")
_COUNTS = struct.Struct("<qq")   # an upstream task's records processed and dropped, in a row without a topic


@dataclass(frozen=True)
class Pipeline:
    """Stateless upstream subtopologies fused before the shuffle of ``downstream``'s query, in place of ``topics``
    (the decorated repartition topics they write and only ``downstream`` reads)."""

    downstream: int
    upstreams: tuple[int, ...]
    topics: tuple[str, ...]


def plan_pipelines(builder: InternalTopologyBuilder, config: TaskConfig, layout: TopicLayout) -> list[Pipeline]:
    """The pipelines of ``builder`` (see the module doc for when an upstream subtopology qualifies); an upstream that
    does not qualify keeps the default shape, with its repartition topic."""
    subtopologies = builder.subtopologies()
    internal = {builder.decorate_topic(t) for t in builder.internal_topics}
    readers: dict[str, set[int]] = {}
    for sub in subtopologies:
        for topic in sub.source_topics:
            readers.setdefault(topic, set()).add(sub.id)
    fused: dict[int, list[int]] = {}
    for sub in subtopologies:
        why = _not_fusable(builder, sub, config, layout, internal, readers)
        if why:
            log.debug("pipeline mode: subtopology %d keeps its own query: %s", sub.id, why)
            continue
        (downstream,) = {r for t in sub.sink_topics for r in readers[t]}
        fused.setdefault(downstream, []).append(sub.id)
    by_id = {s.id: s for s in subtopologies}
    pipelines = [Pipeline(d, tuple(sorted(ups)), tuple(sorted({t for u in ups for t in by_id[u].sink_topics})))
                 for d, ups in sorted(fused.items())]   # a downstream reads an internal topic: never an upstream
    for p in pipelines:
        log.info("pipeline mode: subtopologies %s run before the shuffle of subtopology %d's query, in place of %s",
                 list(p.upstreams), p.downstream, list(p.topics))
    return pipelines


def _not_fusable(builder: InternalTopologyBuilder, sub: Any, config: TaskConfig, layout: TopicLayout,
                 internal: set[str], readers: Mapping[str, set[int]]) -> Optional[str]:
    """Why subtopology ``sub`` cannot run before a shuffle (None: it can)."""
    if len(sub.source_topics) != 1:
        return "it reads several topics"
    if next(iter(sub.source_topics)) in internal:
        return "it reads an internal topic"
    if not sub.sink_topics or any(t not in internal or not t.endswith(REPARTITION_SUFFIX) for t in sub.sink_topics):
        return "it writes topics other than repartition topics"
    downstream = {r for t in sub.sink_topics for r in readers.get(t, ())}
    if len(downstream) != 1 or sub.id in downstream:
        return "its repartition topics are read by several subtopologies"
    if sub.store_names:
        return "it has state stores"
    if not config.batch_fast_path:
        return "batch.fast.path=false"
    if config.dead_letter_queue_topic:
        return "a dead letter queue topic is configured"
    task = StreamTask(TaskId(sub.id, 0), sub, builder, config, layout.partitions_of, lambda: 0, {})
    try:
        from streams_on_spark.runtime.fused import FusedChains
        if FusedChains.plan(task) is None:
            return "its task does not run as fused stateless chains"
    finally:
        task.close()
    return None


# ------------------------------------------------------------------------------------------- before the shuffle

_TASKS: dict[tuple, StreamTask] = {}   # per Python worker: (run id, subtopology, partition) -> an upstream task
_MAX_TASKS = 256


class UpstreamPrefix:
    """The ``mapInArrow`` function of a pipeline's query: rows of an upstream subtopology's source topic are run
    through that subtopology's task for their partition (built once per Python worker and kept); its output, one
    row per repartition partition, carries the row's origin. Other rows (the downstream's own topics) pass through."""

    def __init__(self, upstreams: Mapping[str, SubtopologyTaskFunction], replaced: frozenset[str],
                 downstream_tasks: int) -> None:
        self.upstreams = dict(upstreams)   # source topic -> upstream function
        self.replaced = replaced
        self.downstream_tasks = downstream_tasks

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        schema = pa.schema([("topic", pa.string()), ("partition", pa.int32()), ("offset", pa.int64()),
                            ("ends", pa.binary()), ("data", pa.binary()), ("origin_topic", pa.string()),
                            ("origin_partition", pa.int32()), ("count", pa.int64())])
        for batch in batches:
            if not batch.num_rows:
                continue
            out: list[tuple] = []
            with worker_gc():   # as a task call: no cyclic collections inside the batch (see task_function)
                for topic, part, offset, ends, data in zip(*(batch.column(c).to_pylist() for c in
                                                             ("topic", "partition", "offset", "ends", "data"))):
                    function = self.upstreams.get(topic)
                    if function is None:
                        out.append((topic, part, offset, ends, data, None, None, None))
                    else:
                        out.extend(self._run(function, topic, int(part), int(offset), ends, data))
            if out:
                yield pa.RecordBatch.from_arrays([pa.array(list(c), schema.field(i).type)
                                                  for i, c in enumerate(zip(*out))], schema=schema)

    def _run(self, function: SubtopologyTaskFunction, topic: str, part: int, offset: int, ends: bytes,
             data: bytes) -> list[tuple]:
        key = (function.run_id, function.subtopology_id, part)
        task = _TASKS.pop(key, None)
        if task is None:
            task = function.new_task(part, None, global_stores={}, partition_output=True)   # grouped as produced
        try:
            batch = RecordBatch.from_bytes(topic, part, data, ends)
            timestamps, keys, values, headers = batch.columns()
            processed, dropped = task.metrics.processed, task.metrics.dropped
            task.collector.restore({})   # null-key round-robin from the start of every row: replay places alike
            task.add_columns(topic, part, offset, timestamps, keys, values, headers)
            task.process_available()
            written = task.collector.drain_batches()
        except BaseException:
            try:
                task.close()
            except Exception:
                log.warning("closing upstream task %s failed", task.id, exc_info=True)
            raise
        _TASKS[key] = task
        while len(_TASKS) > _MAX_TASKS:
            _TASKS.pop(next(iter(_TASKS)))
        unknown = {out.topic for out in written} - self.replaced
        if unknown:
            raise IllegalStateError(f"upstream task {task.id} wrote to {sorted(unknown)}, which the pipeline does not "
                                    f"replace ({sorted(self.replaced)})")
        rows = [(out.topic, out.partition, offset, out.ends_bytes(), bytes(out.data), topic, part, len(out))
                for out in sorted(written, key=lambda out: (out.topic, out.partition))]
        counts = _COUNTS.pack(task.metrics.processed - processed, task.metrics.dropped - dropped)
        rows.append((None, part % self.downstream_tasks, offset, b"", counts, topic, part, None))
        return rows


# --------------------------------------------------------------------------------------------- after the shuffle

class PipelineTaskFunction(SubtopologyTaskFunction):
    """The downstream subtopology's task function in a pipeline's query: its virtual repartition partitions numbered
    from the task's positions, and its upstream tasks' counts reported with its commit rows (see the module doc)."""

    def __init__(self, *args: Any, upstreams: Mapping[str, SubtopologyTaskFunction], replaced: frozenset[str],
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.upstreams = dict(upstreams)
        self.replaced = replaced
        self.output = _PipelineOutput(self.output, self)
        self.upstream_counts: list[tuple[int, int, int, int]] = []   # (subtopology, partition, processed, dropped)

    def input_topics(self) -> list[str]:
        """What the query reads: the upstream subtopologies' source topics and the downstream's own (not the
        repartition topics the shuffle replaces)."""
        return sorted({t for t in super().input_topics() if t not in self.replaced} | set(self.upstreams))

    def prefix(self) -> UpstreamPrefix:
        return UpstreamPrefix(self.upstreams, self.replaced, self.task_count())

    def _add_batch(self, batch: TaskBatch, frames: list[Any], positions: dict[tuple[str, int], int]) -> list[int]:
        """Take the upstream tasks' counts out of the batch, number the virtual partitions' records from the task's
        positions, then queue them as any batch (:meth:`SubtopologyTaskFunction._add_batch`)."""
        import pandas as pd
        counts: list[tuple[int, int, int, int]] = []
        kept = []
        for frame in frames:
            marks = frame["topic"].isna()
            if marks.any():
                for origin, part, data in zip(frame.loc[marks, "origin_topic"], frame.loc[marks, "origin_partition"],
                                              frame.loc[marks, "data"]):
                    counts.append((self.upstreams[origin].subtopology_id, int(part), *_COUNTS.unpack(bytes(data))))
                frame = frame[~marks]
            if len(frame):
                kept.append(frame)
        self.upstream_counts = counts
        if not kept:
            return []
        frame = pd.concat(kept, ignore_index=True) if len(kept) > 1 else kept[0]
        virtual = frame["topic"].isin(self.replaced)
        if virtual.any():
            rows = frame[virtual].sort_values(["topic", "partition", "origin_topic", "origin_partition", "offset"],
                                              kind="stable")
            next_offsets: dict[tuple[str, int], int] = {}   # the virtual partitions' (from the task's snapshot)
            for topic, part, ends, data in zip(*(rows[c].tolist() for c in ("topic", "partition", "ends", "data"))):
                part = int(part)
                at = next_offsets.get((topic, part))
                if at is None:
                    at = batch.task.next_offset(topic, part)
                records = RecordBatch.from_bytes(topic, part, data, ends)
                batch.add_record_batch(topic, part, at, records)
                next_offsets[(topic, part)] = at + len(records)
            frame = frame[~virtual]
        ticks = super()._add_batch(batch, [frame] if len(frame) else [], positions)
        for key in [k for k in positions if k[0] in self.replaced]:
            del positions[key]   # no topic to commit a position of (the task's snapshot keeps it)
        return ticks


class _PipelineOutput:
    """The downstream's output strategy, with its upstream tasks' counts added to the commit rows."""

    def __init__(self, inner: TaskOutput, function: PipelineTaskFunction) -> None:
        self.inner = inner
        self.function = function
        self.schema = inner.schema
        self.columns = inner.columns
        self.partitioned = inner.partitioned

    def rows(self, output: list, task: int, positions: Optional[Mapping[tuple[str, int], int]] = None) -> list[tuple]:
        return self.inner.rows(output, task, positions)

    def report(self, rows: list[tuple], task: int, processed: int, dropped: int, commit_ms: float) -> list[tuple]:
        rows = self.inner.report(rows, task, processed, dropped, commit_ms)
        counts, self.function.upstream_counts = self.function.upstream_counts, []
        if self.schema != COMMIT_SCHEMA:
            return rows
        return rows + [(None, sid, -(part + 1), -1, 0, 0, n, d, 0.0) for sid, part, n, d in counts]


def upstream_rows(rows: list) -> tuple[list, dict[int, list]]:
    """A pipeline query's commit rows split into the downstream's and, per upstream subtopology, its tasks' rows
    (dicts of the commit columns, ``task`` the upstream partition)."""
    own, upstream = [], {}
    for row in rows:
        if row["task"] < 0:
            upstream.setdefault(row["partition"], []).append(
                {"task": -row["task"] - 1, "processed": row["processed"], "dropped": row["dropped"],
                 "commit_ms": 0.0})
        else:
            own.append(row)
    return own, upstream

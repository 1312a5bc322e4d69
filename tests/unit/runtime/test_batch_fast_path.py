"""The batch fast paths (fused stateless chains, aggregations folded per key) give exactly what the per-record path
gives.

Every golden's topology and a set of stateless topologies covering each fused operator run twice as the Spark engine
runs them — every task takes all records pending on its partitions as one batch (``StreamTask.process_available``),
its output is routed on to the tasks reading it, round after round — once with ``batch.fast.path`` and once without.
Each task's output must be the same records (topic, partition, timestamp, key, value, headers) in the same order,
with the same metrics, stream and partition times and snapshots; a failing user function fails both the same way.
"""
from __future__ import annotations

import contextlib
import functools
import importlib.util
import itertools
import random
from pathlib import Path
from typing import Any, Optional
from unittest import mock

import pytest

from streams_on_spark import (
    Branched,
    Consumed,
    Grouped,
    Materialized,
    KeyValue,
    Named,
    Produced,
    Repartitioned,
    Serdes,
    StreamPartitioner,
    StreamsBuilder,
    StreamsException,
    TopologyTestDriver,
)
from streams_on_spark.config import TaskConfig
from streams_on_spark.partitioner import partition_for_key
from streams_on_spark.processor.api import TaskId
from streams_on_spark.record_batch import PartitionedRecords, RecordBatch, parse_records
from streams_on_spark.records import ProducerRecord
from streams_on_spark.error_handlers import ProductionExceptionHandler, Response
from streams_on_spark.errors import UnknownTopicException
from streams_on_spark import record_batch
from streams_on_spark.runtime import column_sink, local
from streams_on_spark.runtime.fused import (BatchAggregation, FlushedColumns, FusedChains, _cached_aggregation, _Compiler,
                                             _NotFusable)
from streams_on_spark.runtime.local import LocalEngine
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.state.caching import RecordCached



def _reference_module():
    """tests/conformance/test_kafka_reference.py: its golden builders (pytest imports test modules by path)."""
    path = Path(__file__).resolve().parents[2] / "conformance" / "test_kafka_reference.py"
    spec = importlib.util.spec_from_file_location("_kafka_reference_scenarios", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_reference = _reference_module()
GOLDEN_NAMES, build_topology, load, serde = (_reference.GOLDEN_NAMES, _reference.build_topology, _reference.load,
                                              _reference.serde)
golden_config = _reference.golden_config
S, L = Serdes.String(), Serdes.Long()


def batch_run(topology, config: dict, inputs: list[ProducerRecord], partitions: int, fast: bool, batch: int = 7,
              partitioned: bool = False):
    """Feed ``inputs`` ``batch`` at a time; each round every task with records processes them all at once.
    ``partitioned``: as a Spark task does, each task takes its round's input as record batches
    (``StreamTask.process_record_batches``, where a count is counted from its columns), and its collector groups its
    output by destination (``RecordCollector.partition_output``) and hands it over as record batches."""
    builder = topology.internal_builder
    task_config = TaskConfig.from_config({**config, "batch.fast.path": fast})
    counts = {t: partitions for t in {r.topic for r in inputs}}
    if partitioned:   # built so, as a Spark task is: its fused forwards' sinks encode into the grouped output
        with mock.patch.object(local, "StreamTask", functools.partial(StreamTask, partition_output=True)):
            engine = LocalEngine(builder, task_config, counts, True, 0)
        assert all(task.collector.buffer.__class__ is PartitionedRecords for task in engine.tasks.values())
    else:
        engine = LocalEngine(builder, task_config, counts, True, 0)
    # each task's round: unqueued where partitioned; else queued as given, and kept only to know the task was given
    # records (one its deserializer dropped leaves it without any, yet with output: a dead letter)
    given: dict[Any, list[tuple]] = {tid: [] for tid in engine.tasks}
    for tid, task in engine.tasks.items():
        task.add_record = functools.partial(given_record, given[tid], None if partitioned else task.add_record)
    out: list[tuple] = []
    for at in range(0, len(inputs), batch):
        for record in inputs[at:at + batch]:
            n = engine.partitions(record.topic)
            engine._append(record._replace(partition=record.partition % n))
        while True:
            ready = [(tid, task) for tid, task in sorted(engine.tasks.items()) if task.has_records() or given[tid]]
            if not ready:
                break
            for tid, task in ready:
                if partitioned:
                    task.process_record_batches(record_batches(given[tid]))
                else:
                    task.process_available()
                given[tid].clear()
                task.commit()
                drained = ([r for b in task.collector.drain_batches() for r in well_formed(b).records()]
                           if partitioned else task.collector.drain())
                for produced in drained:
                    out.append((str(tid), produced))
                    engine._append(produced)
    fused = sum(isinstance(task._fused, (FusedChains, BatchAggregation)) for task in engine.tasks.values())
    state = {str(tid): (task.metrics.processed, task.metrics.dropped, task.stream_time,
                        sorted((k, q.partition_time, q.next_offset) for k, q in task._queues.items()),
                        task.snapshot(), cache_contents(task), task.state.positions())
             for tid, task in sorted(engine.tasks.items())}
    return out, state, fused


def well_formed(batch: RecordBatch) -> RecordBatch:
    """``batch``, checked: its ``ends`` are where its records, read one after the other, end (a writer ships them
    and a reader of some records decodes by them)."""
    data, ends = bytes(batch.data), list(batch.ends)
    columns = parse_records(data, len(ends))   # record by record from the prefixes, not by the ends
    again = RecordBatch.of_columns(batch.topic, batch.partition, *columns)
    assert (bytes(again.data), list(again.ends)) == (data, ends)
    return batch


def given_record(given: list[tuple], add_record: Any, *record: Any) -> None:
    """A task's ``add_record``, kept in ``given`` and then queued by ``add_record`` (None: only kept)."""
    given.append(record)
    if add_record is not None:
        add_record(*record)


def record_batches(records: list[tuple]) -> list[tuple[str, int, int, RecordBatch]]:
    """``add_record``'s arguments (topic, partition, offset, timestamp, key, value, headers), in the order given, as
    record batches of consecutive offsets of one topic-partition: what a Spark task's input hands it."""
    batches: list[tuple[str, int, int, RecordBatch]] = []
    for (topic, partition), run in itertools.groupby(records, key=lambda r: (r[0], r[1])):
        run = list(run)
        columns = [list(column) for column in zip(*run)][3:]
        encoded = RecordBatch.of_columns(topic, partition, *columns)   # held as bytes, as a Spark task reads it
        batches.append((topic, partition, run[0][2], RecordBatch(topic, partition, encoded.data, encoded.ends)))
    return batches


def cache_contents(task) -> list:
    """What the task's record caches hold, in least recently used order (what decides their next evictions)."""
    caches = {name: store.record_cache for name, store in task.stores.items() if isinstance(store, RecordCached)}
    return [(name, [(k, e.value, e.timestamp, e.headers, e.size) for k, e in cache.cached_entries.items()],
             cache.budget.size) for name, cache in sorted(caches.items()) if cache is not None]


def golden_inputs(golden: dict) -> list[ProducerRecord]:
    serdes = {t: (serde(s["key"]), serde(s["value"])) for t, s in golden["inputs"].items()}
    records = []
    for i, step in enumerate(golden["steps"]):
        if "pipe" not in step:
            continue
        topic = step["pipe"]
        ks, vs = serdes[topic]
        key = None if step["key"] is None else ks.serialize(topic, step["key"])
        value = None if step["value"] is None else vs.serialize(topic, step["value"])
        partition = i if key is None else partition_for_key(key, 1 << 20)
        records.append(ProducerRecord(topic, partition, step["timestamp"], key, value,
                                      tuple((k, None if v is None else v.encode()) for k, v in step["headers"])))
    return records


def assert_same(topology_factory, config: dict, inputs: list[ProducerRecord], partitions: int, batch: int = 7) -> int:
    slow_out, slow_state, slow_fused = batch_run(topology_factory(), config, inputs, partitions, False, batch)
    fast_out, fast_state, fused = batch_run(topology_factory(), config, inputs, partitions, True, batch)
    assert slow_fused == 0
    assert fast_out == slow_out
    assert fast_state == slow_state
    return fused


# goldens with a subtopology made only of stateless operators, or of a cached count/reduce/aggregate: the fast
# paths must be taken there
FUSED_GOLDENS = {"wordcount", "repartition", "split-merge", "merge-rekey", "selectkey-optimization",
                 "repartitioned-partitions", "reduce", "aggregate"}


@pytest.mark.parametrize("partitions", [1, 4])
@pytest.mark.parametrize("name", [n for n in GOLDEN_NAMES if n not in _reference.SPARK_REFUSED])  # not in batches
def test_every_golden_gives_the_same_with_and_without_the_fast_path(name, partitions):
    golden = load(name)
    inputs = golden_inputs(golden)
    fused = assert_same(lambda: build_topology(golden), golden_config(golden), inputs, partitions)
    if golden["scenario"] in FUSED_GOLDENS and (golden["scenario"] not in ("reduce", "aggregate")
                                                or golden["variant"] == "cached"):
        assert fused > 0, f"{name}: no task took the fast path"


def per_destination(out: list[tuple]) -> dict[tuple, list[ProducerRecord]]:
    """Each task's output per destination topic-partition, in order (what a writer of record batches keeps)."""
    grouped: dict[tuple, list[ProducerRecord]] = {}
    for tid, record in out:
        grouped.setdefault((tid, record.topic, record.partition), []).append(record)
    return grouped


@pytest.mark.parametrize("columns", ["as built", "every flush by columns"])
@pytest.mark.parametrize("name", [n for n in GOLDEN_NAMES if n not in _reference.SPARK_REFUSED])
def test_a_collector_grouping_by_destination_gives_each_destination_the_same_records(name, columns):
    """The Spark engine's tasks write their output grouped by destination as it is produced (fused sinks append
    straight to their partition's rows, or hold them as columns encoded at once): per destination the same records
    in the same order, the same state. "every flush by columns": a sink's held records are encoded by Arrow however
    few (the built threshold sends a golden's few records through the record-by-record encoding), in chunks of 3."""
    golden = load(name)
    inputs = golden_inputs(golden)
    topology = lambda: build_topology(golden)  # noqa: E731
    slow_out, slow_state, _ = batch_run(topology(), golden_config(golden), inputs, 4, False)
    counted = []
    original = BatchAggregation.count_columns
    with mock.patch.object(BatchAggregation, "count_columns",
                           lambda *args: counted.append(original(*args)) or counted[-1]), \
            encoded_by_columns(columns == "every flush by columns") as encoded:
        fast_out, fast_state, _ = batch_run(topology(), golden_config(golden), inputs, 4, True, partitioned=True)
    assert per_destination(fast_out) == per_destination(slow_out)
    assert fast_state == slow_state
    if name in COUNTED_FROM_COLUMNS:
        assert any(counted), f"{name}: no record batch was counted from its columns"
    if columns != "as built" and golden["scenario"] in ("wordcount", "repartition"):
        assert any(encoded), f"{name}: no sink's records were encoded as columns"


@contextlib.contextmanager
def encoded_by_columns(every: bool, chunk: int = 3, threshold: Optional[int] = None):
    """Yields a list of what each :meth:`ColumnSink._encode_columns` returned; with ``every``, every flush encodes
    as columns (no threshold), ``chunk`` records at a time; else from ``threshold`` records, if given."""
    encoded: list[bool] = []
    original = column_sink.ColumnSink._encode_columns

    def spied(self, *args):
        encoded.append(original(self, *args))
        return encoded[-1]
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(column_sink.ColumnSink, "_encode_columns", spied))
        if every:
            stack.enter_context(mock.patch.object(record_batch, "VECTOR_MIN_HEADERLESS", 1))
            stack.enter_context(mock.patch.object(column_sink, "CHUNK", chunk))
        elif threshold is not None:
            stack.enter_context(mock.patch.object(record_batch, "VECTOR_MIN_HEADERLESS", threshold))
        yield encoded


LONG_WORD = "long-" * 20   # past the 64 bytes positive_hashes hashes as a column
SURROGATE = "lone\ud800"   # Arrow refuses it; String's serializer writes "lone?"


def mixed_words(n: int, seed: int) -> list[ProducerRecord]:
    """Sentences of words a sink gets in every form: ASCII, multi-byte UTF-8, empty, long, and words the topology
    below turns into a lone surrogate, a null value, a null key or an int (unserializable); some records with
    headers, some timestamps near the int64 limit."""
    rng = random.Random(seed)
    common = ["a", "bb", "é", "日本語", "🙂x", "long", "empty", "w1", "w2", "w3"]
    rare = ["nul", "nokey", "int"]   # each one takes the inline code: what is held is flushed before it

    def word() -> str:
        pick = rng.random()
        return rng.choice(rare) if pick < 0.01 else "S" if pick < 0.013 else rng.choice(common)
    return [ProducerRecord("left" if rng.random() < 0.8 else "right", rng.randrange(8),
                           rng.choice([rng.randrange(1000), 2 ** 62 + rng.randrange(9)]),
                           None if rng.random() < 0.01 else f"k{rng.randrange(5)}".encode(),
                           " ".join(word() for _ in range(rng.randrange(6))).encode(),
                           (("h", b"1"),) if rng.random() < 0.01 else ())
            for _ in range(n)]


def _word(w: str):
    return {"long": LONG_WORD, "S": SURROGATE, "nul": None, "int": 7, "empty": ""}.get(w, w)


def column_sinks():
    """Sinks that hold their records as columns (String serdes, their topic's only sink), one that cannot (two sinks
    write "shared"), and a repartition into a count."""
    builder = StreamsBuilder()
    words = (builder.stream(["left", "right"], Consumed.with_(S, S))
             .flat_map_values(lambda v: [_word(w) for w in (v or "").split()]))
    keyed = words.select_key(lambda k, v: None if v == "nokey" else v if isinstance(v, str) else k)
    keyed.to("words", Produced.with_(S, S))
    words.filter(lambda k, v: v != "a").to("by-line", Produced.with_(S, S))
    words.filter(lambda k, v: v == "a").to("shared", Produced.with_(S, S))
    keyed.filter(lambda k, v: v == "bb").to("shared", Produced.with_(S, S))
    keyed.filter(lambda k, v: isinstance(v, str)).group_by_key(Grouped.with_(S, S)).count().to_stream().to(
        "counts", Produced.with_(S, L))
    return builder.build()


@pytest.mark.parametrize("every", [False, True])
@pytest.mark.parametrize("partitions", [1, 3, 8])
def test_sinks_holding_columns_give_each_destination_what_the_per_record_path_gives(partitions, every):
    """Every form of word through sinks that hold columns, in batches as a Spark task gets them: per destination
    the same records as the per-record path (a null value or key, an int, headers: those records take the inline
    code after what is held; a lone surrogate: its chunk is encoded record by record); the same state."""
    config = {"application.id": "columns", "production.exception.handler": SkipUnserializable}
    inputs = mixed_words(1500, seed=partitions)
    slow_out, slow_state, _ = batch_run(column_sinks(), config, inputs, partitions, False, 500)
    # not every: some held runs of these words are past the threshold, some not (they are shorter than the default's)
    with encoded_by_columns(every, chunk=37, threshold=64) as encoded:
        fast_out, fast_state, fused = batch_run(column_sinks(), config, inputs, partitions, True, 500,
                                                partitioned=True)
    assert fused > 0
    assert per_destination(fast_out) == per_destination(slow_out)
    assert fast_state == slow_state
    assert True in encoded and False in encoded   # columns, and a chunk with the surrogate record by record
    assert any(r.value == b"lone?" for _, r in fast_out)


def arrow_from(partitions: int) -> int:
    """The fewest records :func:`~streams_on_spark.record_batch.headerless_by_arrow` encodes by Arrow into
    ``partitions`` partitions."""
    return next(n for n in itertools.count(1) if record_batch.headerless_by_arrow(n, partitions))


@pytest.mark.parametrize("partitions", [1, 3, 64])
def test_a_sinks_flush_on_either_side_of_the_arrow_threshold_gives_the_bytes_of_add(partitions):
    """A sink's held records flushed one short of where Arrow takes them and at it (the threshold grows with the
    destination partitions): record by record, then by columns, and the same bytes and ends as
    ``RecordBatch.add`` of each record into its key's partition, after what the batches held."""
    rng = random.Random(partitions)
    words = ["a", "bb", "é", "日本語", "", LONG_WORD] + [f"w{i}" for i in range(200)]
    for n, by_columns in ((arrow_from(partitions) - 1, False), (arrow_from(partitions), True)):
        keys = [rng.choice(words) for _ in range(n)]
        values = [k if rng.random() < 0.3 else rng.choice(words) for k in keys]
        stamps = [rng.choice([0, 2 ** 62, rng.randrange(10 ** 13)]) for _ in range(n // 2)]
        marks = sorted(rng.sample(range(1, n), len(stamps) - 1)) + [n]
        got, expected = PartitionedRecords(), PartitionedRecords()
        for output in (got, expected):
            for p in range(partitions):
                output.add("t", p, 1, b"held", b"before", ())
        sink = column_sink.ColumnSink(got, "t", partitions)
        sink.keys.extend(keys)
        sink.values.extend(values)
        sink.stamps.extend(stamps)
        sink.marks.extend(marks)
        with encoded_by_columns(False) as encoded:
            sink.flush()
        assert encoded == ([True] if by_columns else []), n
        at = 0
        for ts, mark in zip(stamps, marks):
            for k, v in zip(keys[at:mark], values[at:mark]):
                kb = k.encode()
                expected.add("t", partition_for_key(kb, partitions) if partitions > 1 else 0, ts, kb, v.encode(), ())
            at = mark
        assert [(b.partition, bytes(b.data), b.ends_bytes()) for b in got.drain_batches()] == [
            (b.partition, bytes(b.data), b.ends_bytes()) for b in expected.drain_batches()]


def test_which_sinks_hold_columns():
    builder = column_sinks().internal_builder
    task_config = TaskConfig.from_config({"application.id": "columns"})
    with mock.patch.object(local, "StreamTask", functools.partial(StreamTask, partition_output=True)):
        engine = LocalEngine(builder, task_config, {"left": 2, "right": 2}, True, 0)
    task = engine.tasks[min(engine.tasks)]
    task.process_available()
    assert isinstance(task._fused, FusedChains)
    assert sorted(sink.topic for sink in task._fused.column_sinks) == [
        "by-line", "columns-KSTREAM-AGGREGATE-STATE-STORE-0000000011-repartition", "words"]
    assert task._fused.batch_chains is not task._fused.chains
    unpartitioned = LocalEngine(builder, task_config, {"left": 2, "right": 2}, True, 0).tasks[min(engine.tasks)]
    unpartitioned.process_available()
    assert unpartitioned._fused.column_sinks == () and unpartitioned._fused.batch_chains is unpartitioned._fused.chains


def test_a_failing_function_leaves_what_the_sinks_held_before_it_in_the_output():
    """A user function raising after records a sink holds as columns: the task fails as on the per-record path,
    and the records before the failure are in its output as they would be."""
    builder = StreamsBuilder()
    (builder.stream("left", Consumed.with_(S, S)).map_values(lambda v: v.upper(), Named.as_("upper"))
     .to("out", Produced.with_(S, S)))
    topology = builder.build()
    builder = topology.internal_builder
    builder.application_id = "fails"
    task = StreamTask(TaskId(0, 0), builder.subtopologies()[0], builder,
                      TaskConfig.from_config({"application.id": "fails"}), lambda topic: 3, lambda: 0,
                      partition_output=True)
    values = [b"a%d" % i for i in range(100)] + [None]
    batch = RecordBatch.of_columns("left", 0, list(range(101)), [b"k%d" % i for i in range(101)], values,
                                   [()] * 101)
    with pytest.raises(StreamsException, match="processor=upper, topic=left, partition=0, offset=100"):
        task.process_record_batches([("left", 0, 0, RecordBatch("left", 0, batch.data, batch.ends))])
    assert isinstance(task._fused, FusedChains) and task._fused.column_sinks
    out = sorted((r.timestamp, r.key, r.value) for b in task.collector.drain_batches() for r in b.records())
    assert out == [(i, b"k%d" % i, b"A%d" % i) for i in range(100)]


@pytest.mark.parametrize("what", ["count", "upper", "inline"])
def test_a_sink_topic_the_layout_does_not_know_leaves_the_record_path_and_nothing_else_is_hidden(what):
    """Where the task's partition counts do not know a sink's topic (``UnknownTopicException``: the layout knows
    every topic that exists), the bulk flush (``FlushedColumns.plan``) and the held columns
    (``_Compiler._column_sink``) are not planned, and the inline sink (``_Compiler._inline_sink``) leaves the task to
    the per-record path: its send names the topic at the record. Any other error of the partition counts is a
    failure, not a quiet fallback."""
    builder = StreamsBuilder()
    stream = builder.stream("in", Consumed.with_(S, S))
    if what == "count":
        stream.group_by_key().count().to_stream().to("out", Produced.with_(S, L))
    else:
        stream.map_values(lambda v: v.upper()).to("out", Produced.with_(S, S))
    internal = builder.build().internal_builder
    internal.application_id = "unknown"

    def planned(error: Exception) -> Any:
        task = StreamTask(TaskId(0, 0), internal.subtopologies()[0], internal,
                          TaskConfig.from_config({"application.id": "unknown"}), lambda topic: 1, lambda: 0,
                          partition_output=True)

        def partitions(topic: str) -> int:   # the counts asked again once the task's forward is fused
            if topic == "out":
                raise error
            return 1
        task.collector._partition_counts = partitions
        if what == "count":
            return FlushedColumns.plan(task, _cached_aggregation(task))
        sink = next(node for node in task.nodes.values() if type(node.processor).__name__ == "SinkProcessor")
        if what == "inline":
            try:
                _Compiler(task)._inline_sink(sink, "k1", "v1", 2)
            except _NotFusable:
                return None
            return "fused"
        return _Compiler(task, columnar=True)._column_sink(sink)

    assert planned(UnknownTopicException("Topic out not present in metadata")) is None
    with pytest.raises(ZeroDivisionError):
        planned(ZeroDivisionError("a bug in the partition counts"))


# goldens whose count() takes record batches without headers: some of their batches are counted from their columns
COUNTED_FROM_COLUMNS = {"repartition-default", "repartitioned-partitions-default", "merge-rekey-default",
                        "selectkey-optimization-none"}


def words(n: int, seed: int = 3) -> list[ProducerRecord]:
    rng = random.Random(seed)
    vocabulary = ["alpha", "beta", "gamma", "delta", "", "Epsilon", "zeta eta", "x"]
    records = []
    for i in range(n):
        key = None if rng.random() < 0.1 else f"k{rng.randrange(6)}".encode()
        value = None if rng.random() < 0.08 else " ".join(rng.choice(vocabulary) for _ in range(rng.randrange(5))
                                                           ).encode()
        headers = (("h", str(i).encode()),) if rng.random() < 0.3 else ()
        topic = "left" if rng.random() < 0.6 else "right"
        records.append(ProducerRecord(topic, rng.randrange(8), rng.randrange(0, 500), key, value, headers))
    return records


def every_operator():
    builder = StreamsBuilder()
    left = builder.stream("left", Consumed.with_(S, S))
    right = builder.stream("right", Consumed.with_(S, S))
    merged = left.merge(right.map_values(lambda v: None if v is None else v.upper()))
    split = (merged.filter(lambda k, v: v is not None)
             .flat_map_values(lambda v: v.split())
             .peek(lambda k, v: None)
             .split(Named.as_("s-"))
             .branch(lambda k, v: v.startswith("a"), Branched.as_("a"))
             .branch(lambda k, v: len(v) > 4, Branched.as_("long"))
             .default_branch(Branched.as_("rest")))
    split["s-a"].select_key(lambda k, v: v).to("by-value", Produced.with_(S, S))
    split["s-long"].map(lambda k, v: KeyValue(v, len(v))).to("lengths", Produced.with_(S, L))
    split["s-rest"].flat_map(lambda k, v: [(k, v), (None, v)]).filter_not(lambda k, v: v == "x").to(
        "rest", Produced.with_(S, S))
    merged.map_values(lambda k, v: f"{k}:{v}", with_key=True).to("with-key", Produced.with_(S, S))
    merged.filter(lambda k, v: k is not None).flat_map_values(lambda k, v: [k, v or ""], with_key=True).to("pairs", Produced.with_(S, S))
    merged.foreach(lambda k, v: None)
    return builder.build()


def rekey_through_repartition():
    builder = StreamsBuilder()
    (builder.stream("left", Consumed.with_(S, S))
     .flat_map_values(lambda v: (v or "").split())
     .select_key(lambda k, v: v)
     .repartition(Repartitioned.with_(S, S).with_name("words").with_number_of_partitions(3))
     .map_values(lambda v: v * 2)
     .to("doubled", Produced.with_(S, S)))
    builder.stream("right", Consumed.with_(S, S)).to("copy", Produced.with_(S, S))
    return builder.build()


class Spread(StreamPartitioner):
    """KIP-837's answers by key: every partition, none (dropped), one, or the default partitioning."""

    def partitions(self, topic, key, value, num_partitions):
        if key is None or key.endswith("0"):
            return None
        if key.endswith("1"):
            return set(range(num_partitions))
        if key.endswith("2"):
            return set()
        return {len(str(value or "")) % num_partitions}


def partitioned_and_routed():
    """A fused chain ending in a sink with a partitioner (the collector's own send), and a subtopology with a topic
    name extractor (the per-record path: its tasks never take a fast path)."""
    builder = StreamsBuilder()
    (builder.stream("left", Consumed.with_(S, S))
     .filter(lambda k, v: v is not None)
     .map_values(str.upper)
     .to("spread", Produced.with_(S, S).with_stream_partitioner(Spread())))
    (builder.stream("right", Consumed.with_(S, S))
     .map_values(lambda v: v or "")
     .to(lambda k, v, context: f"{context.topic}-{len(v) % 3}", Produced.with_(S, S).with_stream_partitioner(
         Spread())))
    return builder.build()


def test_a_topic_name_extractor_keeps_its_task_on_the_per_record_path():
    inputs = words(50)
    assert kinds(partitioned_and_routed(), {"application.id": "routed"}, inputs, 2) == ["FusedChains"] * 2 + [
        "per-record"] * 2


def counted_to_partitioner():
    """A cached count folded per key (``BatchAggregation``) whose results leave through a partitioner."""
    builder = StreamsBuilder()
    (builder.stream("left", Consumed.with_(S, S))
     .group_by_key(Grouped.with_(S, S))
     .count(Materialized.as_("counts"))
     .to_stream()
     .to("counted", Produced.with_(S, L).with_stream_partitioner(Spread())))
    return builder.build()


@pytest.mark.parametrize("partitions", [1, 3, 8])
@pytest.mark.parametrize("batch", [1, 5, 1000])
@pytest.mark.parametrize("topology", [every_operator, rekey_through_repartition, partitioned_and_routed,
                                      counted_to_partitioner])
def test_stateless_operators_give_the_same_with_and_without_the_fast_path(topology, batch, partitions):
    inputs = words(400, seed=partitions * 31 + batch)
    fused = assert_same(topology, {"application.id": "fused"}, inputs, partitions, batch)
    assert fused > 0


def event_time(record, partition_time: int) -> int:
    """From the value's length: negative (dropped) for an empty value, the partition time for a one-letter one."""
    if not record.value:
        return -1
    if len(record.value) == 1:
        return partition_time
    return record.timestamp + 7 * len(record.value)


def extracted():
    builder = StreamsBuilder()
    (builder.stream("left", Consumed.with_(S, S).with_timestamp_extractor(event_time))
     .merge(builder.stream("right", Consumed.with_(S, S)))
     .filter(lambda k, v: v is not None)
     .map_values(lambda v: v.upper())
     .to("stamped", Produced.with_(S, S)))
    return builder.build()


@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize("batch", [1, 5, 1000])
def test_a_timestamp_extractor_gives_the_same_with_and_without_the_fast_path(batch, partitions):
    """The fused chains run on the extracted timestamps; records dropped for a negative one are counted alike."""
    inputs = words(400, seed=partitions * 7 + batch)
    fused = assert_same(extracted, {"application.id": "fused", "default.timestamp.extractor":
                                    "LogAndSkipOnInvalidTimestamp"}, inputs, partitions, batch)
    assert fused > 0
    _, state, _ = batch_run(extracted(), {"application.id": "fused"}, inputs, partitions, True, batch)
    assert sum(dropped for _, dropped, *rest in state.values()) > 0   # the extractor's negative ones


@pytest.mark.parametrize("fast", [True, False])
def test_the_drivers_one_record_shortcut_applies_the_extractor(fast):
    """The driver's ``process_one`` runs a stateless task's fused chain per record: on the extracted timestamp."""
    with TopologyTestDriver(extracted(), {"application.id": "x", "batch.fast.path": fast}) as driver:
        left = driver.create_input_topic("left", S, S)
        for value, timestamp in [("a", 100), ("abc", 100), ("b", 5), ("", 9), ("cd", 1)]:
            left.pipe_input("k", value, timestamp)
        out = driver.create_output_topic("stamped", S, S)
        # "a": the partition time is still unknown (-1), dropped as "" is
        assert [(r.value, r.timestamp) for r in out.read_records_to_list()] == [("ABC", 121), ("B", 121), ("CD", 15)]
        assert driver.metrics()["dropped-records-total"] == 2


def failing():
    builder = StreamsBuilder()
    (builder.stream("left", Consumed.with_(S, S))
     .map_values(lambda v: v.upper(), Named.as_("upper"))
     .to("out", Produced.with_(S, S)))
    return builder.build()


def test_a_failing_user_function_fails_the_task_as_the_per_record_path_does():
    inputs = [ProducerRecord("left", 0, 5, b"k", b"a", ()), ProducerRecord("left", 0, 6, b"k", None, ()),
              ProducerRecord("left", 0, 7, b"k", b"c", ())]
    errors = []
    for fast in (False, True):
        with pytest.raises(StreamsException) as failure:
            batch_run(failing(), {"application.id": "fails"}, inputs, 1, fast)
        errors.append(str(failure.value).split("stacktrace=")[0])
        assert isinstance(failure.value.__cause__, AttributeError)
    assert errors[0] == errors[1]
    assert "processor=upper, topic=left, partition=0, offset=1" in errors[0]


class SkipUnserializable(ProductionExceptionHandler):
    def handle_serialization_error(self, context, record, exception, origin):
        return Response.resume()


def unserializable():
    builder = StreamsBuilder()
    (builder.stream("left", Consumed.with_(S, S))
     .map_values(lambda v: 7 if v == "bad" else v)
     .to("out", Produced.with_(S, S)))
    return builder.build()


def test_a_record_the_sink_cannot_serialize_goes_to_the_production_handler_on_both_paths():
    inputs = [ProducerRecord("left", 0, i, b"k", v, ()) for i, v in enumerate([b"a", b"bad", b"c", None])]
    config = {"application.id": "ser", "production.exception.handler": SkipUnserializable}
    fused = assert_same(unserializable, config, inputs, 1)
    assert fused == 1
    out, state, _ = batch_run(unserializable(), config, inputs, 1, True)
    assert [r.value for _, r in out] == [b"a", b"c", None]
    assert state["0_0"][1] == 1   # dropped


class RecordUnserializable(ProductionExceptionHandler):
    """Resumes, writing the ProducerRecord it was handed to "seen"."""

    def handle_serialization_error(self, context, record, exception, origin):
        return Response.resume([ProducerRecord("seen", 0, record.timestamp, None, repr(record).encode())])


def unserializable_spread():
    builder = StreamsBuilder()
    (builder.stream("left", Consumed.with_(S, S))
     .map_values(lambda v: 7 if v == "bad" else v)
     .repartition(Repartitioned.with_(S, S).with_name("spread").with_number_of_partitions(3)
                  .with_stream_partitioner(Spread()))
     .to("out", Produced.with_(S, S)))
    return builder.build()


def test_the_production_handler_gets_kafkas_producer_record_per_partition_sent_to_on_both_paths():
    """Kafka's RecordCollectorImpl sends (and serializes) once per partition a partitioner picks: the handler gets a
    ProducerRecord per partition, with that partition, and without one where the default partitioning applies."""
    inputs = [ProducerRecord("left", 0, i, k, b"bad", (("h", b"1"),)) for i, k in enumerate([b"k0", b"k1", b"k3"])]
    config = {"application.id": "ser", "production.exception.handler": RecordUnserializable}
    assert assert_same(unserializable_spread, config, inputs, 1) == 1
    out, state, _ = batch_run(unserializable_spread(), config, inputs, 1, True)
    assert [r.value.decode() for _, r in out] == [
        f"ProducerRecord(topic='ser-spread-repartition', partition={p}, timestamp={ts}, key='{k}', value=7, "
        "headers=(('h', b'1'),))" for ts, k, p in [(0, "k0", None), *((1, "k1", p) for p in range(3)), (2, "k3", 1)]]
    assert state["0_0"][1] == 5   # each send dropped


def kinds(topology, config: dict, inputs: list[ProducerRecord], partitions: int) -> list[str]:
    """Which fast path each task took (its plan's class name, or "per-record")."""
    builder = topology.internal_builder
    engine = LocalEngine(builder, TaskConfig.from_config(config), {t: partitions for t in {r.topic for r in inputs}},
                         True, 0)
    out = []
    for _, task in sorted(engine.tasks.items()):
        task.process_available()
        out.append(type(task._fused).__name__ if task._fused else "per-record")
    return out


def test_which_tasks_take_which_path():
    golden = load("wordcount-cached")
    inputs, config = golden_inputs(golden), golden_config(golden)
    assert kinds(build_topology(golden), config, inputs, 2) == ["FusedChains"] * 2 + ["BatchAggregation"] * 2
    uncached = load("wordcount-uncached")   # no record cache: every update leaves, so one by one
    assert kinds(build_topology(uncached), dict(uncached["config"]), inputs, 2) == ["FusedChains"] * 2 + [
        "per-record"] * 2
    handled = {**config, "processing.exception.handler":
               "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler"}
    assert kinds(build_topology(golden), handled, inputs, 2) == ["per-record"] * 4
    assert kinds(build_topology(golden), {**config, "batch.fast.path": False}, inputs, 2) == ["per-record"] * 4
    # dsl.store.format=HEADERS: the count's store is headers-aware (another byte layout): its task runs record by
    # record (the dsl-headers-kv goldens compare the two paths)
    headers_format = {**config, "dsl.store.format": "HEADERS"}
    assert kinds(build_topology(golden), headers_format, inputs, 2) == ["FusedChains"] * 2 + ["per-record"] * 2
    for name in ("headers-store-persistent-cached", "headers-window-store-persistent-cached",
                 "headers-session-store-persistent-cached"):   # a processor writing a headers-aware store
        headers = load(name)                                    # runs record by record
        assert kinds(build_topology(headers), dict(headers["config"]), golden_inputs(headers), 2) == ["per-record"] * 2


def sentences(n: int, seed: int) -> list[ProducerRecord]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        key = None if rng.random() < 0.05 else f"doc{rng.randrange(9)}".encode()
        value = None if rng.random() < 0.05 else " ".join(
            rng.choice(["a", "bb", "ccc", "dddd", "a"]) * rng.randrange(1, 4) for _ in range(rng.randrange(4))).encode()
        out.append(ProducerRecord("left" if rng.random() < 0.7 else "right", rng.randrange(4), rng.randrange(1000),
                                  key, value, (("n", str(i).encode()),) if i % 3 else ()))
    return out


def aggregations():
    """count, reduce and an aggregate whose values grow and shrink (so cache entries change size), over two topics
    and a repartition; null keys and values on the way."""
    builder = StreamsBuilder()
    lines = builder.stream(["left", "right"], Consumed.with_(S, S))
    lines.group_by_key().count().to_stream().to("counts", Produced.with_(S, L))
    lines.filter(lambda k, v: v is not None).group_by_key().reduce(lambda a, b: b if len(a) > 12 else a + b).to_stream(
        ).to("reduced", Produced.with_(S, S))
    (lines.flat_map_values(lambda v: (v or "").split()).select_key(lambda k, v: v if v != "bb" else None)
     .group_by_key(Grouped.with_(S, S))
     .aggregate(lambda: "", lambda k, v, agg: (agg + v)[-(len(v) * 3 % 7 + 1):], Materialized.with_(S, S))
     .to_stream().to("tails", Produced.with_(S, S)))
    return builder.build()


def two_topic_count():
    builder = StreamsBuilder()
    builder.stream(["left", "right"], Consumed.with_(S, S)).group_by_key().count().to_stream().to(
        "counts", Produced.with_(S, L))
    return builder.build()


def two_topic_reduce():
    builder = StreamsBuilder()
    builder.stream(["left", "right"], Consumed.with_(S, S)).group_by_key().reduce(
        lambda a, b: b if len(a) > 12 else a + b).to_stream().to("reduced", Produced.with_(S, S))
    return builder.build()


@pytest.mark.parametrize("cache_bytes", [0, 300, 2_000, 10 * 1024 * 1024])
@pytest.mark.parametrize("batch", [1, 9, 1000])
@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize("topology", [aggregations, two_topic_count, two_topic_reduce])
def test_aggregations_folded_per_key_give_the_same_even_where_the_cache_evicts(topology, cache_bytes, batch,
                                                                               partitions):
    """300 and 2000 bytes: the cache overflows within batches, so the fold hands over to the per-record path."""
    config = {"application.id": "agg", "statestore.cache.max.bytes": cache_bytes}
    inputs = sentences(600, seed=batch + partitions)
    fused = assert_same(topology, config, inputs, partitions, batch)
    assert (fused > 0) == (cache_bytes > 0)


@pytest.mark.parametrize("cache_bytes", [300, 10 * 1024 * 1024])
def test_a_folded_aggregation_leaves_the_stores_position_the_per_record_path_leaves(cache_bytes):
    """A store's position (what an interactive query's bound is checked against): per input partition, the offset of
    the last record that wrote it, also where a batch ends with records the aggregation dropped (null keys)."""
    config = {"application.id": "agg", "statestore.cache.max.bytes": cache_bytes}
    inputs = sentences(300, seed=3) + [ProducerRecord("left", 0, 999, None, b"dropped", ())]
    slow_out, slow_state, _ = batch_run(two_topic_count(), config, inputs, 1, False, 1000)
    fast_out, fast_state, fused = batch_run(two_topic_count(), config, inputs, 1, True, 1000)
    assert fused and fast_state == slow_state
    positions = fast_state["0_0"][-1]
    left = [i for i, r in enumerate(r for r in inputs if r.topic == "left")]
    last_written_left = max(i for i, r in enumerate(r for r in inputs if r.topic == "left")
                            if r.key is not None and r.value is not None)
    assert last_written_left < left[-1]   # the dropped record is not in the position
    assert positions == {"KSTREAM-AGGREGATE-STATE-STORE-0000000001": {
        ("left", 0): last_written_left,
        ("right", 0): max(i for i, r in enumerate(r for r in inputs if r.topic == "right")
                          if r.key is not None and r.value is not None)}}


def count_then_table():
    """A table materialized below a cached count: written while the count's cache flushes at the commit."""
    builder = StreamsBuilder()
    builder.stream(["left", "right"], Consumed.with_(S, S)).group_by_key().count().filter(
        lambda k, v: v % 2 == 0, Materialized.as_("even").with_key_serde(S).with_value_serde(L))
    return builder.build()


@pytest.mark.parametrize("cache_bytes", [300, 10 * 1024 * 1024])
@pytest.mark.parametrize("batch", [9, 1000])
def test_a_store_written_by_a_cache_flush_takes_each_entrys_writer_into_its_position(cache_bytes, batch):
    """Kafka's flush restores each cached entry's record context: a store written below it (here at a micro-batch's
    commit, where no record is in process) has the positions of the records that wrote the entries, on both paths."""
    config = {"application.id": "agg", "statestore.cache.max.bytes": cache_bytes}
    inputs = sentences(300, seed=5)
    slow_out, slow_state, _ = batch_run(count_then_table(), config, inputs, 1, False, batch)
    fast_out, fast_state, fused = batch_run(count_then_table(), config, inputs, 1, True, batch)
    assert fused and fast_state == slow_state
    even = fast_state["0_0"][-1]["even"]
    # without each entry's writer restored the table would have no position at all (no record is in process at the
    # commit); with 9 records a batch both topics' records are the last writers of some key when the cache flushes
    assert even and set(even) <= {("left", 0), ("right", 0)}
    assert batch != 9 or set(even) == {("left", 0), ("right", 0)}


def test_a_failing_aggregator_fails_the_task_as_the_per_record_path_does():
    builder = StreamsBuilder()
    (builder.stream("left", Consumed.with_(S, S)).group_by_key()
     .aggregate(lambda: 0, lambda k, v, agg: agg + int(v), Materialized.with_(S, L), Named.as_("sum"))
     .to_stream().to("sums", Produced.with_(S, L)))
    topology = builder.build()
    inputs = [ProducerRecord("left", 0, i, b"k%d" % (i % 2), v, ()) for i, v in enumerate([b"1", b"2", b"x", b"4"])]
    errors = []
    for fast in (False, True):
        with pytest.raises(StreamsException) as failure:
            batch_run(topology, {"application.id": "sum"}, inputs, 1, fast)
        errors.append(str(failure.value).split("stacktrace=")[0])
        assert isinstance(failure.value.__cause__, ValueError)
    assert errors[0] == errors[1]
    assert "processor=sum, topic=left, partition=0, offset=2" in errors[0]


def test_a_task_moved_to_another_worker_plans_its_fast_path_again():
    """A live task's image (pickled between Spark's Python workers) leaves the generated code out; the copy plans it
    again and gives what the original gives."""
    from streams_on_spark.runtime.spark import live_tasks

    golden = load("wordcount-cached")
    inputs, config = golden_inputs(golden), golden_config(golden)
    builder = build_topology(golden).internal_builder
    engine = LocalEngine(builder, TaskConfig.from_config(config), {"sentences": 1}, True, 0)
    task = engine.tasks[min(engine.tasks)]
    for at, record in enumerate(inputs):
        task.add_record(record.topic, 0, at, record.timestamp, record.key, record.value, record.headers)
        task.process_available()
        out = task.collector.drain()
        copy = live_tasks.restore(live_tasks.image(("query", "run", 1, 0), task, {}, "run"), {}, "run")
        assert copy._fused is None
        copy.add_record(record.topic, 0, at + 1000, record.timestamp, record.key, record.value, record.headers)
        task.add_record(record.topic, 0, at + 1000, record.timestamp, record.key, record.value, record.headers)
        copy.process_available()
        task.process_available()
        assert isinstance(copy._fused, FusedChains)
        assert copy.collector.drain() == task.collector.drain() != []
        assert out


def test_a_mapper_whose_generator_raises_fails_the_task_at_its_operator_on_both_paths():
    def words(value):
        for word in value.split():
            if word == "boom":
                raise ValueError("no boom")
            yield word

    def topology():
        builder = StreamsBuilder()
        (builder.stream("left", Consumed.with_(S, S)).flat_map_values(words, Named.as_("words"))
         .flat_map(lambda k, v: ((k, x) for x in v), Named.as_("letters")).to("out", Produced.with_(S, S)))
        return builder.build()

    good = [ProducerRecord("left", 0, 1, b"k", b"ab cd", ())]
    assert assert_same(topology, {"application.id": "gen"}, good, 1) == 1
    errors = []
    for fast in (False, True):
        with pytest.raises(StreamsException) as failure:
            batch_run(topology(), {"application.id": "gen"}, good + [ProducerRecord("left", 0, 2, b"k", b"x boom", ())],
                      1, fast)
        errors.append(str(failure.value).split("stacktrace=")[0])
    assert errors[0] == errors[1]
    assert "processor=words, topic=left, partition=0, offset=1" in errors[0]


def counted(caching: bool):
    builder = StreamsBuilder()
    m = Materialized.as_("counts-store").with_key_serde(S).with_value_serde(L)
    (builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .count(m.with_caching_enabled() if caching else m.with_caching_disabled())
     .to_stream().to("counts", Produced.with_(S, L)))
    return builder.build()


def test_a_store_with_caching_disabled_emits_every_update_of_a_batch():
    """Materialized.with_caching_disabled(): the aggregation is not folded per key (that is what the cache would have
    left at the commit); each record's update leaves, in a batch as record by record."""
    inputs = [ProducerRecord("events", 0, ts, key, b"x", ()) for ts, key in enumerate([b"a", b"b", b"a", b"a", b"b"])]
    config = {"application.id": "caching"}
    assert kinds(counted(False), config, inputs, 1) == ["per-record"]
    assert kinds(counted(True), config, inputs, 1) == ["BatchAggregation"]
    for caching, expected in ((False, [("a", 1), ("b", 1), ("a", 2), ("a", 3), ("b", 2)]),
                              (True, [("a", 3), ("b", 2)])):
        out, _, _ = batch_run(counted(caching), config, inputs, 1, fast=True, batch=1000)
        assert [(S.deserialize("counts", r.key), L.deserialize("counts", r.value)) for _, r in out] == expected


@pytest.mark.parametrize("key_serde, value_serde", [
    (Serdes.String(), Serdes.String()), (Serdes.ByteArray(), Serdes.String()), (Serdes.String("iso8859-1"),
                                                                                 Serdes.ByteArray()),
    (Serdes.String(), Serdes.Long())])   # a serde without a column decoder: the loop
def test_columns_are_queued_whole_as_the_per_record_loop_queues_them(key_serde, value_serde):
    """``add_columns`` with Kafka's String/ByteArray deserializers decodes each column at once: the same queue
    (timestamps, offsets, decoded and raw keys and values, headers) and next offset as the per-record loop, through
    nulls, malformed UTF-8, bytearrays and memoryviews; a negative timestamp fails at its record on both paths."""
    from streams_on_spark.processor.api import TaskId
    from streams_on_spark.runtime.task import StreamTask
    rng = random.Random(3)

    def raw(long: bool):
        pick = rng.random()
        if pick < 0.1:
            return None
        data = L.serialize("t", rng.randrange(-9, 9)) if long else rng.choice(
            [b"w1", "é".encode(), b"\xff\xfe", b"", "日本".encode()])
        return data if pick < 0.8 else (bytearray(data) if pick < 0.9 else memoryview(data))

    def queued(fast: bool, columns: tuple, offsets):
        builder = StreamsBuilder()
        builder.stream("in", Consumed.with_(key_serde, value_serde)).to("out")
        topology = builder.build().internal_builder
        topology.application_id = "columns"
        task = StreamTask(TaskId(0, 0), topology.subtopologies()[0], topology,
                          TaskConfig.from_config({"application.id": "columns", "batch.fast.path": fast}),
                          lambda topic: 1, lambda: 0)
        try:
            task.add_columns("in", 0, offsets, *columns)
        except StreamsException as e:
            return str(e)
        queue = task._queues[("in", 0)]
        return [tuple((type(x), bytes(x)) if isinstance(x, (bytearray, memoryview)) else (type(x), x) for x in r)
                for r in queue.records], queue.next_offset

    long_values = type(value_serde) is type(L)
    for trial in range(30):
        n = rng.randrange(1, 40)
        timestamps = [rng.randrange(-1 if trial % 5 == 4 else 0, 100) for _ in range(n)]
        headers = (itertools.repeat(()) if trial % 3 == 2 else   # what pipeline mode gives for records without any
                   [() if rng.random() < 0.8 else (("h", b"v"),) for _ in range(n)])
        columns = (timestamps, [raw(False) for _ in range(n)], [raw(long_values) for _ in range(n)], headers)
        for offsets in (rng.randrange(100), sorted(rng.sample(range(1000), n))):
            assert queued(True, columns, offsets) == queued(False, columns, offsets)


# ---------------------------------------------------------------------------------------------------------- driver
# Kafka's driver commits after every record, and so does ours (``commit_every_record``): there a stateless task runs
# its fused chain over each record, and a cache that only ever holds one write between commits writes through
# (``written_through``). Every golden, piped record by record as the driver pipes them, must give the same with
# and without the fast paths.


def driver_run(topology, config: dict, inputs: list[ProducerRecord], partitions: int, fast: bool):
    """Pipe ``inputs`` one by one through the driver's engine (``partitions`` > 1: KIP-1238's one task per partition;
    1: Kafka's driver, every subtopology in one task): everything produced, in order, and each task's state."""
    builder = topology.internal_builder
    task_config = TaskConfig.from_config({**config, "batch.fast.path": fast}, commit_every_record=True)
    engine = LocalEngine(builder, task_config, {t: partitions for t in {r.topic for r in inputs}}, partitions > 1, 0)
    out: list[ProducerRecord] = []
    produce = engine._produce
    engine._produce = lambda record: (out.append(record), produce(record))
    for record in inputs:
        engine.pipe(record._replace(partition=record.partition % engine.partitions(record.topic)))
    while any(task.has_records() for task in engine.tasks.values()):   # max.task.idle.ms: waiting for a partition
        engine.advance_wall_clock(task_config.max_task_idle_ms)   # each idle time passed lets some through
    state = {str(tid): (task.metrics.processed, task.metrics.dropped, task.stream_time,
                        sorted((k, q.partition_time, q.next_offset) for k, q in task._queues.items()),
                        task.snapshot()) for tid, task in sorted(engine.tasks.items())}
    paths = sorted(("fused" if task._chains else "") + ("through" if len(task.stores) > len(task._caches) and any(
        getattr(s.inner, "_through", False) for s in task.stores.values()) else "") for task in engine.tasks.values())
    return out, state, paths


def assert_same_in_driver(topology_factory, config: dict, inputs: list[ProducerRecord], partitions: int) -> list[str]:
    slow_out, slow_state, slow_paths = driver_run(topology_factory(), config, inputs, partitions, False)
    fast_out, fast_state, paths = driver_run(topology_factory(), config, inputs, partitions, True)
    assert set(slow_paths) <= {""}
    assert fast_out == slow_out
    assert fast_state == slow_state
    return paths


@pytest.mark.parametrize("partitions", [1, 4])
@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_every_golden_piped_through_the_driver_gives_the_same_with_and_without_the_fast_paths(name, partitions):
    golden = load(name)
    paths = assert_same_in_driver(lambda: build_topology(golden), golden_config(golden), golden_inputs(golden),
                                  partitions)
    if name in ("wordcount-cached", "repartition") and partitions > 1:
        assert "fused" in paths, f"{name}: no task ran its fused chain"
    if name == "wordcount-cached" and partitions > 1:
        # the count's cache writes through, and its task takes each record in one step (_written_through_steps)
        assert "fusedthrough" in paths, f"{name}: the count's cache did not write through in one step"


def nullable_aggregate(downstream_processor: bool = False):
    """An aggregate that answers None for some records (a delete: forwarded only where the key existed, as the
    cache's flush forwards it) and grows otherwise, after a repartition."""
    from streams_on_spark.processor.api import Processor

    class Tag(Processor):
        def init(self, context):
            self.context = context

        def process(self, record):
            # in a cache's flush too: the driver flushes in the context of the record that wrote (as Kafka does)
            self.context.forward(record.with_value(f"{record.value}@{self.context.record_metadata().offset}"))

    builder = StreamsBuilder()
    table = (builder.stream("left", Consumed.with_(S, S)).select_key(lambda k, v: (v or "")[:1] or None)
             .group_by_key(Grouped.with_(S, S))
             .aggregate(lambda: "", lambda k, v, agg: None if v.endswith("!") else agg + v[-1:],
                        Materialized.with_(S, S)))
    stream = table.to_stream()
    if downstream_processor:
        stream = stream.process(Tag)
    stream.map_values(lambda v: v if v is None else v.upper()).to("out", Produced.with_(S, S))
    return builder.build()


def exclaimed(n: int, seed: int) -> list[ProducerRecord]:
    rng = random.Random(seed)
    return [ProducerRecord("left", rng.randrange(4), rng.randrange(50), f"k{i}".encode(),
                           (rng.choice(["a", "ab", "b", "bc"]) + ("!" if rng.random() < 0.3 else "")).encode(),
                           (("n", str(i).encode()),) if i % 2 else ()) for i in range(n)]


@pytest.mark.parametrize("cache_bytes", [0, 60, 10 * 1024 * 1024])
@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize("topology", [aggregations, two_topic_count, two_topic_reduce, nullable_aggregate])
def test_aggregations_piped_through_the_driver_give_the_same_with_and_without_the_fast_paths(topology, cache_bytes,
                                                                                           partitions):
    """60 bytes: smaller than one entry, so the cache flushes each write as it evicts it."""
    config = {"application.id": "agg", "statestore.cache.max.bytes": cache_bytes}
    inputs = exclaimed(300, seed=partitions) if topology is nullable_aggregate else sentences(300, seed=partitions)
    paths = assert_same_in_driver(topology, config, inputs, partitions)
    # at 1 partition (Kafka's driver: one task for every subtopology) a repartitioned aggregation shares its task
    # with the operators before the repartition, so its cache keeps holding writes until the commit
    one_subtopology = topology in (two_topic_count, two_topic_reduce)
    assert ("through" in "".join(paths)) == (cache_bytes > 0 and (partitions > 1 or one_subtopology))
    # a count or an aggregate written through takes each record in one step; a reduce, node by node
    stepped = "fusedthrough" in paths
    assert stepped == (topology is not two_topic_reduce and "through" in "".join(paths))


def test_a_cache_with_a_processor_of_the_users_downstream_keeps_holding_writes_until_the_commit():
    """A user's processor may observe when the flush runs (its record metadata, say): the cache stays a cache."""
    inputs = exclaimed(100, seed=5)
    paths = assert_same_in_driver(lambda: nullable_aggregate(downstream_processor=True), {"application.id": "tag"},
                                  inputs, 3)
    assert "through" not in "".join(paths)
    assert "fused" in "".join(paths)


def counted_counts(only_to_stream: bool):
    """A count whose table something asks for old values: counted again by count (Kafka's ``KTableRepartitionMap``
    subtracts the old count and adds the new), or, with ``only_to_stream``, asked for them with nothing but
    ``to_stream`` below, which no DSL operator builds (the driver's step must still leave it to the per-record path)."""
    builder = StreamsBuilder()
    counts = builder.stream("left", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S)).count()
    if only_to_stream:
        counts.enable_sending_old_values(True)
    else:
        counts = counts.group_by(lambda key, count: KeyValue(str(count), key), Grouped.with_(S, S)).count()
    counts.to_stream().to("out", Produced.with_(S, L))
    return builder.build()


@pytest.mark.parametrize("only_to_stream", [False, True])
def test_an_aggregation_asked_for_old_values_keeps_the_per_record_path_in_the_driver(only_to_stream):
    """The driver's one step forwards ``Change(new, None)``: an aggregation sending old values is not planned into it,
    and gives what Kafka's driver gives (counts of counts: the old count's group loses the key as the new one gains
    it)."""
    inputs = [ProducerRecord("left", 0, ts, key, b"v", ()) for ts, key in enumerate([b"a", b"a", b"b"])]
    config = {"application.id": "counted"}
    topology = counted_counts(only_to_stream)
    engine = LocalEngine(topology.internal_builder, TaskConfig.from_config(config, commit_every_record=True),
                         {"left": 1}, False, 0)
    assert [node.processor.send_old_values for task in engine.tasks.values() for node in task.nodes.values()
            if node.name.startswith("KSTREAM-AGGREGATE-")] == [True]
    for partitions in (1, 3):
        paths = assert_same_in_driver(lambda: counted_counts(only_to_stream), config, inputs, partitions)
        assert "fusedthrough" not in paths
        assert ("through" in "".join(paths)) == only_to_stream
    out, _, _ = driver_run(counted_counts(only_to_stream), config, inputs, 1, True)
    assert [(r.key.decode(), L.deserialize("out", r.value)) for r in out if r.topic == "out"] == (
        [("a", 1), ("a", 2), ("b", 1)] if only_to_stream else [("1", 1), ("1", 0), ("2", 1), ("1", 1)])


def test_a_fused_forward_leaves_a_task_image_as_what_plans_it_again():
    """A stateful processor's forward with stateless operators below is generated code: a task image (pickled between
    Spark's Python workers) carries what plans it again, not the code, and the copy gives what the original gives."""
    from streams_on_spark.runtime.spark import live_tasks

    golden = load("wordcount-cached")
    inputs, config = golden_inputs(golden), golden_config(golden)
    builder = build_topology(golden).internal_builder
    engine = LocalEngine(builder, TaskConfig.from_config(config, commit_every_record=True), {"sentences": 1}, True, 0)
    upstream, downstream = (engine.tasks[tid] for tid in sorted(engine.tasks))
    count = next(node for node in downstream.nodes.values() if node.processor.forward.__name__ == "tail")
    for at, record in enumerate(inputs):
        upstream.add_record(record.topic, 0, at, record.timestamp, record.key, record.value, record.headers)
    upstream.process_available()
    words = upstream.collector.drain()
    assert len(words) > 4
    data = live_tasks.image(("query", "run", 1, 0), downstream, {}, "run")
    assert b"fused forward" not in data
    copy = live_tasks.restore(data, {}, "run")
    assert copy.nodes[count.name].processor.forward.__name__ == "forward"
    for task in (downstream, copy):
        for offset, word in enumerate(words):
            task.add_record(word.topic, 0, offset, word.timestamp, word.key, word.value, word.headers)
            task.process_one()
    assert copy.collector.drain() == downstream.collector.drain() != []
    assert copy.nodes[count.name].processor.forward.__name__ == "forward"   # planned again inside, on first use


def test_a_function_failing_below_an_aggregation_fails_the_task_at_its_operator_on_both_paths():
    """In a fused forward (and a cache writing through) a raising mapper fails the task naming that mapper and the
    record being processed, as the nodes one by one do."""
    def topology():
        builder = StreamsBuilder()
        (builder.stream("left", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S)).count()
         .to_stream().map_values(lambda count: 1 // (count - 3), Named.as_("third")).to("out", Produced.with_(S, L)))
        return builder.build()

    inputs = [ProducerRecord("left", 0, ts, b"k", b"v", ()) for ts in range(5)]
    errors = []
    for fast in (False, True):
        with pytest.raises(StreamsException) as failure:
            driver_run(topology(), {"application.id": "third"}, inputs, 1, fast)
        errors.append(str(failure.value).split("stacktrace=")[0])
    assert errors[0] == errors[1]
    assert "processor=third, topic=left, partition=0, offset=2" in errors[0]


@pytest.mark.parametrize("fails", ["aggregator", "store's serializer"])
def test_an_aggregation_failing_in_the_drivers_step_fails_the_task_as_the_per_record_path_does(fails):
    """The driver's one step for an aggregation written through (its read, aggregator, write and forward) fails the
    task naming the aggregation and the record, as the nodes and the store's layers one by one do."""
    def topology():
        builder = StreamsBuilder()
        aggregator = ((lambda k, v, agg: agg + int(v)) if fails == "aggregator" else
                      (lambda k, v, agg: agg + 1 if v != "x" else "not a long"))
        (builder.stream("left", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
         .aggregate(lambda: 0, aggregator, Materialized.with_(S, L), Named.as_("sum"))
         .to_stream().to("sums", Produced.with_(S, L)))
        return builder.build()

    inputs = [ProducerRecord("left", 0, i, b"k%d" % (i % 2), v, ()) for i, v in enumerate([b"1", b"2", b"x", b"4"])]
    outcomes = []
    for fast in (False, True):
        with pytest.raises(StreamsException) as failure:
            driver_run(topology(), {"application.id": "sum"}, inputs, 1, fast)
        outcomes.append((str(failure.value).split("stacktrace=")[0], type(failure.value.__cause__)))
    assert outcomes[0] == outcomes[1]
    assert ("processor=sum, topic=left, partition=0, offset=2" if fails == "aggregator" else
            "LongSerializer cannot serialize a value of type str") in outcomes[0][0]


def many_keys(n: int, distinct: int, seed: int) -> list[ProducerRecord]:
    """``n`` records over ``distinct`` keys, some far more often than others, so that a batch both re-reads keys the
    cache holds (clean and dirty) and brings new ones that push others out."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        k = int(rng.paretovariate(1.2)) % distinct if rng.random() < 0.5 else rng.randrange(distinct)
        value = None if rng.random() < 0.01 else ("x" * rng.randrange(1, 60) + ("!" if rng.random() < 0.02 else ""))
        out.append(ProducerRecord("left", rng.randrange(4), rng.randrange(10_000), f"key-{k}-{'k' * (k % 37)}".encode(),
                                  None if value is None else value.encode(), (("i", str(i).encode()),) if i % 5 else ()))
    return out


def evicting_aggregations(kind: str):
    def topology():
        builder = StreamsBuilder()
        grouped = builder.stream(["left"], Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
        if kind == "count":
            table = grouped.count()
            builder_out = table.to_stream().map_values(lambda c: c * 10)
            builder_out.to("out", Produced.with_(S, L))
        elif kind == "reduce":
            grouped.reduce(lambda a, b: (a + b)[-len(b) * 3:]).to_stream().to("out", Produced.with_(S, S))
        else:   # an aggregate that writes null when a value ends with "!" (a delete: the per-record path takes over)
            grouped.aggregate(lambda: "", lambda k, v, agg: None if v.endswith("!") else (agg + v)[-len(v) * 2:],
                              Materialized.with_(S, S)).to_stream().to("out", Produced.with_(S, S))
        return builder.build()
    return topology


@pytest.mark.parametrize("cache_bytes", [500, 5_000, 50_000])
@pytest.mark.parametrize("batch", [50, 3000])
@pytest.mark.parametrize("kind", ["count", "reduce", "aggregate"])
def test_a_batch_with_more_keys_than_the_cache_holds_folds_on_through_its_evictions(kind, batch, cache_bytes):
    """Past the first eviction the fold keeps the cache's own rule (the eldest clean entry leaves; a dirty eldest
    flushes every dirty entry first): the same records, order, stores and snapshots as record by record."""
    config = {"application.id": "evicting", "statestore.cache.max.bytes": cache_bytes}
    inputs = many_keys(6000, 1500, seed=batch + cache_bytes)
    for partitions in (1, 3):
        assert assert_same(evicting_aggregations(kind), config, inputs, partitions, batch) > 0


def keys_once_per_batch(batches: int, size: int, distinct: int, seed: int) -> list[ProducerRecord]:
    """``batches`` runs of ``size`` records whose keys are distinct within a run and met again in later runs (a store
    being filled, then updated), timestamps out of order; one partition, no headers: what a count takes as columns."""
    rng = random.Random(seed)
    return [ProducerRecord("left", 0, rng.randrange(10_000), f"key-{k}-{'k' * (k % 23)}".encode(), b"v", ())
            for _ in range(batches) for k in rng.sample(range(distinct), size)]


def spied_through_evictions() -> tuple[list, Any]:
    """What ``BatchAggregation._count_through_evictions`` returned, call by call, and the patch that records it."""
    taken: list = []
    original = BatchAggregation._count_through_evictions
    return taken, mock.patch.object(BatchAggregation, "_count_through_evictions",
                                    lambda *args: taken.append(original(*args)) or taken[-1])


@pytest.mark.parametrize("cache_bytes", [60, 2_000, 20_000])
def test_a_batch_of_keys_each_once_is_counted_from_its_columns_through_the_evictions(cache_bytes):
    """More new keys than the cache holds, each once in its batch (a store being filled): counted from the batch's
    columns with the cache's eviction rule, it gives the records, order, stores, caches and positions record by record
    gives (60 bytes: every write flushes as it is evicted)."""
    config = {"application.id": "filling", "statestore.cache.max.bytes": cache_bytes}
    inputs = keys_once_per_batch(6, 400, 1000, seed=cache_bytes)
    slow_out, slow_state, _ = batch_run(evicting_aggregations("count")(), config, inputs, 1, False, 400)
    taken, spy = spied_through_evictions()
    with spy:
        fast_out, fast_state, _ = batch_run(evicting_aggregations("count")(), config, inputs, 1, True, 400,
                                            partitioned=True)
    assert fast_out == slow_out
    assert fast_state == slow_state
    assert len(taken) == 6 and all(taken)


def test_a_second_record_batch_in_one_call_counts_on_through_the_entries_the_first_left_dirty():
    """Two record batches of one partition in one task call: the second meets the first's dirty entries (some of them
    its keys again) and evicts them as record by record."""
    inputs = keys_once_per_batch(2, 300, 400, seed=5)
    halves = []
    for first in (0, 300):   # held as bytes, as a Spark task reads them
        encoded = RecordBatch.of_columns("left", 0, *map(list, zip(*[(r.timestamp, r.key, r.value, r.headers)
                                                                     for r in inputs[first:first + 300]])))
        halves.append(("left", 0, first, RecordBatch("left", 0, encoded.data, encoded.ends)))
    results = []
    taken, spy = spied_through_evictions()
    for fast in (False, True):
        topology = evicting_aggregations("count")()
        builder = topology.internal_builder
        builder.application_id = "filling"
        config = TaskConfig.from_config({"application.id": "filling", "statestore.cache.max.bytes": 5_000,
                                         "batch.fast.path": fast})
        task = StreamTask(TaskId(0, 0), builder.subtopologies()[0], builder, config, lambda topic: 1, lambda: 0,
                          partition_output=True)
        with spy:
            task.process_record_batches(halves)
        before_commit = cache_contents(task)
        task.commit()
        results.append(([r for b in task.collector.drain_batches() for r in b.records()], before_commit,
                        cache_contents(task), task.snapshot(), task.state.positions()))
    assert results[0] == results[1]
    assert taken == [True, True]

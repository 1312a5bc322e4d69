"""The batch fast paths on Spark, where a task call gets several record batches and its record cache overflows inside
and across them: the same results as ``batch.fast.path=false`` (the per-record path), record for record.

``embedded.topics.batch.records=8`` has the embedded topics hand each task its micro-batch as record batches of 8
records, so a few dozen records give every task call several. (Spark's Arrow batches into
``transformWithStateInPandas``, ``spark.sql.execution.arrow.transformWithStateInPandas.maxRecordsPerBatch``, do not
matter: the task function reads them all, then gives the task the source's rows, one record batch each, in offset
order.) Each record batch of a partition is built to take one way through ``StreamTask.process_record_batches`` with
a 400-byte record cache (a handful of entries):

- two keys: ``count()`` counts it from its columns within the cache (``BatchAggregation.count_columns``);
- eight keys once each: more than the cache holds, counted from its columns through the cache's evictions
  (``_count_through_evictions``), the cache's account kept for the next record batch until ``settle()``;
- three keys over eight records: folded per key up to the overflow, the rest through ``_run_evicting``;
- a null key and a null value, or headers: not countable from the columns, folded by ``BatchAggregation.run``.

``reduce`` (values of changing sizes) and ``aggregate`` (a Long) fold the same record batches (``run``,
``_run_evicting``). They hang a ``witness`` branch below their ``to_stream()``, but the count at 3 partitions, whose
``to_stream()`` goes straight into its sink: its flushes are written and sent in bulk (``FlushedColumns``), and a
record batch of new keys (``new``: each once, none cached) written in columns (``CacheReplay.write_new``). A stateless
String to String stage into a sink of 3 partitions (``upper-1p``) has its records held and encoded as columns
(``ColumnSink``): the records of all keys on one partition, null values and headers among them (the inline code's
records, which flush what is held first), and a run of plain records long enough for Arrow's encoding. Windowed aggregations have no batch path of their own (``BatchAggregation``
takes ``KStreamAggregate``/``KStreamReduce`` only). Two micro-batches, at 1 and 3 partitions; keys keep their partition, so each output partition
is written by one task. Per partition the output records must be the per-record path's in order (key, value,
timestamp, headers), and the stores and the tasks' metrics the same; the fast paths' run is seen from the forwarding
task's stack (a ``witness`` topic), and the bulk paths', which call nothing of the application's, by a spy the
executors' Python workers install when they unpickle the topology (:class:`SpiedUpper`).
"""
from __future__ import annotations

import os
import random
import sys
from typing import Any

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
)
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.partitioner import partition_for_key
from streams_on_spark.query import QueryableStoreTypes, StoreQueryParameters
from streams_on_spark.records import ProducerRecord

pytestmark = pytest.mark.spark
S, L = Serdes.String(), Serdes.Long()
PARTITIONS = (1, 3)
# an aggregation at a partition count: one subtopology (a query) reading its own input topic ``in-<case>``. The count,
# which has the most ways (its columns), at both; reduce and aggregate fold alike (BatchAggregation.run), one each.
CASES = ("count-1p", "count-3p", "reduce-1p", "aggregate-3p", "upper-1p")
AGGREGATIONS = CASES[:4]
DIRECT = "count-3p"   # the aggregation whose to_stream() goes straight into its sink
OUT_PARTITIONS = {"upper-1p": 3}   # else the input topic's
PLAIN_TAIL = 300   # plain records closing each wave of upper-1p: more than VECTOR_MIN_HEADERLESS held at once
BATCH_RECORDS = 8
CACHE_BYTES = 400
WAVES = 2
# what a record batch of a partition holds, in this order in every wave (BATCH_RECORDS records each)
SHAPES = ("fits", "distinct", "new", "distinct", "repeated", "nulls", "distinct", "headers", "distinct")
FAST_FRAMES = ("_count_columns", "_count_through_evictions", "_run_evicting", "run")


def _fast_path_frame() -> str:
    """The innermost of ``FAST_FRAMES`` of streams_on_spark/runtime/fused.py on the caller's stack (in the executor's
    Python worker running the task), else ""."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name in FAST_FRAMES and code.co_filename.endswith("fused.py"):
            return code.co_name
        frame = frame.f_back
    return ""


# what each bulk path's spy records: (module, class, method, what it names the call by: its sink's topic)
SPIED = (("streams_on_spark.runtime.fused", "FlushedColumns", "write", lambda self: self.topic),
         ("streams_on_spark.runtime.cache_replay", "CacheReplay", "write_new", lambda self: self.columns.topic),
         ("streams_on_spark.runtime.column_sink", "ColumnSink", "flush", lambda self: self.topic if self.keys else None),
         ("streams_on_spark.runtime.column_sink", "ColumnSink", "_encode_columns", lambda self: self.topic))
SPY_FILE = "SOS_TEST_BULK_PATH_SPY"   # the executor's environment variable naming the file the spies append to


def install_spies(path: str) -> "SpiedUpper":
    """Run where the topology is unpickled (each task's Python worker): wrap the bulk paths of :data:`SPIED`, once per
    process, to append ``Class.method:topic`` to ``path`` for this test's topics; the upper case's function back.
    (A reused worker keeps the wrappers; they record nothing for another test's topics.)"""
    import importlib
    os.environ[SPY_FILE] = path
    for module, cls, method, topic_of in SPIED:
        kind = getattr(importlib.import_module(module), cls)
        original = getattr(kind, method)
        if getattr(original, "spied", False):
            continue

        def spy(self, *args, _original=original, _what=f"{cls}.{method}", _topic_of=topic_of, **kwargs):
            topic = _topic_of(self)
            if topic is not None and topic.startswith("out-") and topic[4:] in CASES:
                with open(os.environ[SPY_FILE], "a") as out:
                    out.write(f"{_what}:{topic}\n")
            return _original(self, *args, **kwargs)
        spy.spied = True
        setattr(kind, method, spy)
    return SpiedUpper(path)


class SpiedUpper:
    """upper-1p's ``map_values``: a value upper-cased (None kept). Unpickled (in an executor), it installs the spies
    (:func:`install_spies`): the topology is pickled whole with every subtopology's task function, so every task's
    worker has them before it runs, and the plans (which look at the nodes' types, not at user functions) are as
    they would be without."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, value: Any) -> Any:
        return None if value is None else value.upper()

    def __reduce__(self) -> tuple:
        return install_spies, (self.path,)


def spied(path) -> set[str]:
    """What the spies recorded (see :func:`install_spies`)."""
    return set(path.read_text().split()) if path.exists() else set()


def partitions_of(case: str) -> int:
    return int(case.rsplit("-", 1)[1][:-1])


def topology(spy_path: str):
    """A subtopology per case: its aggregation of ``in-<case>`` into store ``<case>``, its updates to ``out-<case>``
    and (but ``DIRECT``'s, whose updates go to its sink alone) what the fast paths forwarded (their frame's name) to
    ``witness``; upper-1p's values upper-cased from ``in-upper-1p`` to ``out-upper-1p``."""
    builder = StreamsBuilder()
    for case in AGGREGATIONS:
        grouped = builder.stream(f"in-{case}", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
        if case.startswith("count"):
            table, values = grouped.count(Materialized.as_(case)), L
        elif case.startswith("reduce"):   # values of changing sizes
            table, values = grouped.reduce(lambda a, b: (a + "|" + b)[-14:], Materialized.as_(case)), S
        else:
            table, values = grouped.aggregate(lambda: 0, lambda k, v, agg: agg + len(v),
                                              Materialized.as_(case).with_value_serde(L)), L
        stream = table.to_stream()
        stream.to(f"out-{case}", Produced.with_(S, values))
        if case == DIRECT:
            continue
        stream.filter(lambda k, v: bool(_fast_path_frame())).map_values(
            lambda v, case=case: f"{case}:{_fast_path_frame()}").to("witness", Produced.with_(S, S))
    builder.stream("in-upper-1p", Consumed.with_(S, S)).map_values(SpiedUpper(spy_path)).to(
        "out-upper-1p", Produced.with_(S, S))
    return builder.build()


def waves(partitions: int) -> list[list[ProducerRecord]]:
    """Each wave's records for an input topic of ``partitions``: per partition, one record batch of each of
    ``SHAPES`` (keys of that partition, so each output partition is written by one task), timestamps out of order."""
    rng = random.Random(25)
    pools: list[list[str]] = [[] for _ in range(partitions)]
    for k in range(200):
        key = f"key-{k:03d}" + "x" * (k % 5)
        pools[partition_for_key(key.encode(), partitions)].append(key)
    result = []
    for wave in range(WAVES):
        records = []
        for p, pool in enumerate(pools):
            pool = pool[:16]   # the same keys again and again: entries cached, evicted, read back
            for shape in SHAPES:
                if shape == "fits":
                    keys = [rng.choice(pool[:2]) for _ in range(BATCH_RECORDS)]
                elif shape == "new":   # never seen before
                    keys = pools[p][16 + BATCH_RECORDS * wave:16 + BATCH_RECORDS * (wave + 1)]
                elif shape == "repeated":
                    keys = [rng.choice(pool[3:6]) for _ in range(BATCH_RECORDS)]
                else:
                    keys = rng.sample(pool, BATCH_RECORDS)
                for i, key in enumerate(keys):
                    value = "v" * rng.randrange(1, 6)
                    headers: tuple = ()
                    if shape == "nulls" and i in (2, 5):
                        key, value = (None, value) if i == 2 else (key, None)
                    if shape == "headers" and i in (1, 6):
                        headers = (("h", f"{wave}-{i}".encode()),)
                    records.append(ProducerRecord("", p, 1000 * wave + rng.randrange(1000),
                                                  None if key is None else key.encode(),
                                                  None if value is None else value.encode(), headers))
        result.append(records)
    return result


def inputs(case: str) -> list[list[ProducerRecord]]:
    """Each wave's records of ``in-<case>``: for upper-1p every partition's of :func:`waves` at 3 partitions with a
    key (the sink would place a null key at random) on its one partition, and ``PLAIN_TAIL`` plain records."""
    if case != "upper-1p":
        return waves(partitions_of(case))
    rng = random.Random(42)
    return [[r._replace(partition=0) for r in wave if r.key is not None]
            + [ProducerRecord("", 0, 1000 * n + rng.randrange(1000), f"key-{rng.randrange(200):03d}".encode(),
                              b"w" * rng.randrange(1, 9), ()) for _ in range(PLAIN_TAIL)]
            for n, wave in enumerate(waves(3))]


def run(tmp_path, fast: bool) -> dict[str, Any]:
    """The topology with or without ``batch.fast.path`` over the waves: per case its output records per partition,
    its store and its tasks' metrics; the witness records, and what the spies recorded (in this run and before)."""
    name = "fast" if fast else "per-record"
    with EmbeddedTopics(str(tmp_path / name)) as topics:
        for case in CASES:
            topics.create_topic(f"in-{case}", partitions_of(case))
            topics.create_topic(f"out-{case}", OUT_PARTITIONS.get(case, partitions_of(case)))
        topics.create_topic("witness", 1)
        config = {"application.id": name, "embedded.topics.dir": topics.root, "interactive.queries": True,
                  "checkpoint.location": str(tmp_path / f"{name}-ck"), "statestore.cache.max.bytes": CACHE_BYTES,
                  "embedded.topics.batch.records": BATCH_RECORDS, "batch.fast.path": fast,
                  "trigger.interval": "10 milliseconds"}
        records = {case: inputs(case) for case in CASES}
        with KafkaStreams(topology(str(tmp_path / "spied")), config) as streams:
            streams.start()
            for wave in range(WAVES):
                topics.append([r._replace(topic=f"in-{case}") for case in CASES for r in records[case][wave]])
                streams.process_all_available()
            metrics = streams.metrics()
            result: dict[str, Any] = {}
            for sid, case in enumerate(CASES):   # subtopologies in the order built
                topic = f"out-{case}"
                result[case] = {
                    "records": [[(r.partition, r.key, r.value, r.timestamp, tuple(r.headers))
                                 for r in topics.read(topic, p, 0, topics.end_offset(topic, p))]
                                for p in range(topics.partitions(topic))],
                    "metrics": {(m.name, m.tags["task-id"]): v for what in ("process-total", "dropped-records-total")
                                for m, v in metrics.find(what, "stream-task-metrics").items()
                                if m.tags["task-id"].startswith(f"{sid}_")}}
                if case in AGGREGATIONS:
                    store = streams.store(StoreQueryParameters.from_name_and_type(
                        case, QueryableStoreTypes.timestamped_key_value_store()))
                    result[case]["store"] = sorted((kv.key, kv.value.value, kv.value.timestamp) for kv in store.all())
        witness = topics.read("witness", 0, 0, topics.end_offset("witness", 0))
        return {"results": result, "witness": {r.value.decode() for r in witness}, "spied": spied(tmp_path / "spied")}


def test_the_batch_paths_give_on_spark_what_the_per_record_path_gives(spark, tmp_path):
    per_record, fast = run(tmp_path, fast=False), run(tmp_path, fast=True)
    for case in CASES:
        assert fast["results"][case] == per_record["results"][case], case
        records = sum(map(len, inputs(case)))
        # a null key and a null value per partition and wave (upper-1p drops nothing)
        dropped = 2 * WAVES * partitions_of(case) if case in AGGREGATIONS else 0
        metrics = fast["results"][case]["metrics"]
        assert sum(v for (what, _), v in metrics.items() if what == "process-total") == records, case
        assert sum(v for (what, _), v in metrics.items() if what == "dropped-records-total") == dropped, case
        if case.startswith("count"):
            assert sum(count for _, count, _ in fast["results"][case]["store"]) == records - dropped
    assert per_record["witness"] == set()
    # the fast paths ran: each aggregation's fold through the cache's evictions, the count's through its columns too
    assert {f"{case}:_run_evicting" for case in AGGREGATIONS if case != DIRECT} | {
        "count-1p:_count_through_evictions"} <= fast["witness"], fast["witness"]
    # the bulk paths ran: count-3p's flushes (a new record batch's keys written in columns among them), upper-1p's
    # records held as columns, encoded by Arrow where a flush had enough of them
    assert per_record["spied"] == set()
    assert fast["spied"] == {"FlushedColumns.write:out-count-3p", "CacheReplay.write_new:out-count-3p",
                             "ColumnSink.flush:out-upper-1p", "ColumnSink._encode_columns:out-upper-1p"}

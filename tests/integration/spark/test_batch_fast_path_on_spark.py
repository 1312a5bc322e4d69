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
``_run_evicting``). Windowed aggregations have no batch path of their own (``BatchAggregation``
takes ``KStreamAggregate``/``KStreamReduce`` only). Two micro-batches, at 1 and 3 partitions; keys keep their partition, so each output partition
is written by one task. Per partition the output records must be the per-record path's in order (key, value,
timestamp, headers), and the stores and the tasks' metrics the same; the fast paths' run is seen from the forwarding
task's stack (a ``witness`` topic).
"""
from __future__ import annotations

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
CASES = ("count-1p", "count-3p", "reduce-1p", "aggregate-3p")
BATCH_RECORDS = 8
CACHE_BYTES = 400
WAVES = 2
# what a record batch of a partition holds, in this order in every wave (BATCH_RECORDS records each)
SHAPES = ("fits", "distinct", "distinct", "repeated", "nulls", "distinct", "headers", "distinct")
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


def partitions_of(case: str) -> int:
    return int(case.rsplit("-", 1)[1][:-1])


def topology():
    """A subtopology per case: its aggregation of ``in-<case>`` into store ``<case>``, its updates to ``out-<case>``
    and what the fast paths forwarded (their frame's name) to ``witness``."""
    builder = StreamsBuilder()
    for case in CASES:
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
        stream.filter(lambda k, v: bool(_fast_path_frame())).map_values(
            lambda v, case=case: f"{case}:{_fast_path_frame()}").to("witness", Produced.with_(S, S))
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


def run(tmp_path, fast: bool) -> dict[str, Any]:
    """The topology with or without ``batch.fast.path`` over the waves: per case its output records per partition,
    its store and its tasks' metrics; and the witness records."""
    name = "fast" if fast else "per-record"
    with EmbeddedTopics(str(tmp_path / name)) as topics:
        for case in CASES:
            topics.create_topic(f"in-{case}", partitions_of(case))
            topics.create_topic(f"out-{case}", partitions_of(case))
        topics.create_topic("witness", 1)
        config = {"application.id": name, "embedded.topics.dir": topics.root, "interactive.queries": True,
                  "checkpoint.location": str(tmp_path / f"{name}-ck"), "statestore.cache.max.bytes": CACHE_BYTES,
                  "embedded.topics.batch.records": BATCH_RECORDS, "batch.fast.path": fast,
                  "trigger.interval": "10 milliseconds"}
        inputs = {p: waves(p) for p in PARTITIONS}
        with KafkaStreams(topology(), config) as streams:
            streams.start()
            for wave in range(WAVES):
                topics.append([r._replace(topic=f"in-{case}") for case in CASES
                               for r in inputs[partitions_of(case)][wave]])
                streams.process_all_available()
            metrics = streams.metrics()
            result: dict[str, Any] = {}
            for sid, case in enumerate(CASES):   # subtopologies in the order built
                store = streams.store(StoreQueryParameters.from_name_and_type(
                    case, QueryableStoreTypes.timestamped_key_value_store()))
                topic = f"out-{case}"
                result[case] = {
                    "records": [[(r.partition, r.key, r.value, r.timestamp, tuple(r.headers))
                                 for r in topics.read(topic, p, 0, topics.end_offset(topic, p))]
                                for p in range(partitions_of(case))],
                    "store": sorted((kv.key, kv.value.value, kv.value.timestamp) for kv in store.all()),
                    "metrics": {(m.name, m.tags["task-id"]): v for what in ("process-total", "dropped-records-total")
                                for m, v in metrics.find(what, "stream-task-metrics").items()
                                if m.tags["task-id"].startswith(f"{sid}_")}}
        witness = topics.read("witness", 0, 0, topics.end_offset("witness", 0))
        return {"results": result, "witness": {r.value.decode() for r in witness}}


def test_the_batch_paths_give_on_spark_what_the_per_record_path_gives(spark, tmp_path):
    per_record, fast = run(tmp_path, fast=False), run(tmp_path, fast=True)
    for case in CASES:
        assert fast["results"][case] == per_record["results"][case], case
        records = sum(len(wave) for wave in waves(partitions_of(case)))
        dropped = 2 * WAVES * partitions_of(case)   # a null key and a null value per partition and wave
        metrics = fast["results"][case]["metrics"]
        assert sum(v for (what, _), v in metrics.items() if what == "process-total") == records, case
        assert sum(v for (what, _), v in metrics.items() if what == "dropped-records-total") == dropped, case
        if case.startswith("count"):
            assert sum(count for _, count, _ in fast["results"][case]["store"]) == records - dropped
    assert per_record["witness"] == set()
    # the fast paths ran: each aggregation's fold through the cache's evictions, the count's through its columns too
    assert {f"{case}:_run_evicting" for case in CASES} | {
        "count-1p:_count_through_evictions", "count-3p:_count_through_evictions"} <= fast["witness"], fast["witness"]

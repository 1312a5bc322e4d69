"""A store being filled through the Spark task function, in-process (no Spark): a ``count()`` with the record cache
on whose task calls bring record batches of keys each once, more than the cache holds, gives with the batch path
exactly what the per-record path (``batch.fast.path=false``) gives — the output records in their order with their
timestamps, the local store's content, the changelog rows appended to Spark's state and the task's saved value —
while the cache's account is kept from one record batch of a call to the next (``BatchAggregation.settle``).

Spark's state variables are stood in for by plain objects with the same methods (the Spark tests run the real ones);
the output goes to embedded topics as a running application's does.
"""
from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pandas as pd
import pytest

from streams_on_spark import Consumed, Grouped, Materialized, Produced, Serdes, StreamsBuilder
from streams_on_spark.config import TaskConfig
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.connectors.embedded_connector import EmbeddedTopicWriter
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.runtime.cache_replay import CacheReplay
from streams_on_spark.runtime.fused import FlushedColumns
from streams_on_spark.runtime.spark.output import WrittenOutput
from streams_on_spark.runtime.spark.task_function import SubtopologyTaskFunction
from streams_on_spark.runtime.spark.task_state import TaskState, decode_changes
from streams_on_spark.state.local import open_local_task_store
from streams_on_spark.topology.partitions import TopicLayout

S, L = Serdes.String(), Serdes.Long()


def key_count():
    builder = StreamsBuilder()
    (builder.stream("keys", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .count(Materialized.as_("counts")).to_stream().to("counts-out", Produced.with_(S, L)))
    return builder.build()


def state_handle() -> tuple[list, list]:
    """Spark's state variables of one task's group: the value's row and the changelog's rows, and the handle."""
    value: list = [None]
    changelog: list = []
    value_state = SimpleNamespace(get=lambda: value[0], update=lambda row: value.__setitem__(0, tuple(row)))
    list_state = SimpleNamespace(get=lambda: iter(list(changelog)), appendValue=lambda row: changelog.append(tuple(row)),
                                 appendList=lambda rows: changelog.extend(map(tuple, rows)),
                                 clear=changelog.clear)
    return value, changelog, SimpleNamespace(getValueState=lambda name, schema: value_state,
                                             getListState=lambda name, schema: list_state)


def frame_of(chunks: list[tuple[int, list[tuple]]]) -> pd.DataFrame:
    """The task's input rows as the embedded source gives them: one record batch per (first offset, records)."""
    rows = []
    for offset, records in chunks:
        batch = RecordBatch("keys", 0)
        for ts, key, value in records:
            batch.add(ts, key, value)
        rows.append(("keys", 0, offset, batch.ends.tobytes(), bytes(batch.data)))
    return pd.DataFrame(rows, columns=["topic", "partition", "offset", "ends", "data"])


def calls(seed: int) -> list[list[tuple[int, list[tuple]]]]:
    """Task calls of several record batches each: keys each once in their record batch (a fill, some keys met again
    in a later batch or call: updates of what the cache or the store holds), timestamps out of order; now and then a
    record batch in which a key repeats, one with a null value, one with a key that is not UTF-8."""
    rng = random.Random(seed)
    offset, result = 0, []
    for call in range(4):
        chunks = []
        for chunk in range(4):
            keys = [f"key-{k}-{'x' * (k % 17)}".encode() for k in rng.sample(range(900), 150)]
            records = [(rng.randrange(10_000), key, b"v") for key in keys]
            if (call, chunk) == (1, 2):
                records[40] = (records[40][0], records[3][1], b"v")   # a key twice: folded
            if (call, chunk) == (2, 1):
                records[7] = (records[7][0], records[7][1], None)     # a null value: dropped record by record
            if (call, chunk) == (3, 0):
                records[9] = (records[9][0], b"\xff\xfe", b"v")       # not UTF-8: String replaces it
            chunks.append((offset, records))
            offset += len(records)
        result.append(chunks)
    return result


def run(tmp_path, fast: bool, cache_bytes: int, seed: int, partitions: int = 1) -> tuple:
    """Every call through the task function; the output records (per partition of the output topic), the
    changelog's changes, the task's value, the local store's content."""
    topology = key_count()
    builder = topology.internal_builder
    builder.application_id = "filling"
    root = tmp_path / ("fast" if fast else "slow")
    topics = EmbeddedTopics(str(root / "topics"))
    topics.create_topic("keys", 1)
    topics.create_topic("counts-out", partitions)
    config = TaskConfig.from_config({"application.id": "filling", "state.dir": str(root / "state"),
                                     "statestore.cache.max.bytes": cache_bytes, "batch.fast.path": fast})
    layout = TopicLayout.of(builder, "filling", {"keys": 1, "counts-out": partitions})
    function = SubtopologyTaskFunction(builder, 0, config, layout, WrittenOutput(EmbeddedTopicWriter(topics.root)))
    value, changelog, handle = state_handle()
    for chunks in calls(seed):
        list(function.run((0,), iter([frame_of(chunks)]), TaskState(handle)))
    out = [record for p, end in enumerate(topics.end_offsets("counts-out"))
           for record in topics.read_batch("counts-out", p, 0, end).records()]
    local = open_local_task_store(str(root / "state" / "streams-on-spark-state" / "no-query" / "0"), ["counts"])
    try:
        stored = local.stores["counts"].range(None, None)
    finally:
        local.close()
    return ([(r.partition, r.timestamp, r.key, r.value, r.headers) for r in out], [decode_changes(row[0]) for row in changelog],
            value[0][1:], stored)


def spied(owner: type, name: str) -> tuple[list, Any]:
    """What ``owner.name`` returned, call by call (None for a method returning nothing), and the patch that records
    it."""
    calls: list = []
    original = getattr(owner, name)
    return calls, mock.patch.object(owner, name, lambda *args: calls.append(original(*args)) or calls[-1])


@pytest.mark.parametrize("partitions", [1, 3])
def test_a_fill_through_the_batch_path_gives_the_records_store_and_changelog_of_the_per_record_path(tmp_path,
                                                                                                      partitions):
    """The keys none of which the cache holds are written in columns (``CacheReplay.write_new``) and every flush,
    the commit's too, writes the store and encodes the output in bulk (``FlushedColumns``): into each partition of
    the output topic, in the order of the per-record path's flushes."""
    slow = run(tmp_path / "a", False, 6_000, seed=3, partitions=partitions)
    taken, of = spied(CacheReplay, "of")
    columns, write_new = spied(CacheReplay, "write_new")
    committed, flush_entries = spied(FlushedColumns, "flush_entries")
    with of, write_new, flush_entries:
        fast = run(tmp_path / "b", True, 6_000, seed=3, partitions=partitions)
    assert fast[0] == slow[0]   # the records, in order, with their partitions and timestamps
    assert fast[1] == slow[1]   # the changelog's rows
    assert fast[2] == slow[2]   # the task's value (batch, snapshot, clock, changelog size)
    assert fast[3] == slow[3]   # the store
    assert len(slow[0]) > 600 and len(slow[3]) > 500
    # the cache's account taken once per run of record batches counted through the evictions, not once per batch
    assert 0 < len(taken) < 12
    assert columns   # record batches of keys none of which the cache held, written in columns
    assert committed and all(committed)   # the commits' flushes in bulk
    assert {p for p, *_ in fast[0]} == set(range(partitions))


def test_a_fill_that_fits_the_cache_gives_what_the_per_record_path_gives(tmp_path):
    slow = run(tmp_path / "a", False, 10 * 1024 * 1024, seed=8)
    fast = run(tmp_path / "b", True, 10 * 1024 * 1024, seed=8)
    assert fast == slow


def test_the_cache_a_fill_leaves_holds_the_writers_keys_as_the_per_record_path_does(tmp_path):
    """``write_new`` keeps a String key's bytes until the account is read: the entries the cache is left with
    (``CacheReplay.leave``) carry the writer's key, a ``str``, where the per-record path leaves it (a flush that
    forwards entry by entry sends that key)."""
    left: list = []
    original = CacheReplay.leave

    def leave(self):
        original(self)
        left.extend((kb, entry.typed[0]) for kb, entry in self.cache_store.cached_entries.items()
                    if entry.typed is not None)
    with mock.patch.object(CacheReplay, "leave", leave):
        run(tmp_path, True, 6_000, seed=3)
    assert left and all(type(key) is str and key.encode() == kb for kb, key in left)

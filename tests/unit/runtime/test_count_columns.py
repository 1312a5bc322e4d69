"""``count()`` of a record batch from its Arrow columns (``BatchAggregation.count_columns``) leaves exactly what the
per-record path leaves: the same output records in the same order, metrics, stream and partition times, snapshots,
record caches (contents and order) and store positions — and hands a batch it cannot take to the other paths.

A Spark task gets its input as record batches (``StreamTask.process_record_batches``); here one task gets the same
batches, round after round with a commit after each, once counted from columns and once record by record
(``batch.fast.path=false``).
"""
from __future__ import annotations

import random
from unittest import mock

import pytest

from streams_on_spark import Consumed, Grouped, Materialized, Produced, Serdes, StreamsBuilder
from streams_on_spark.config import TaskConfig
from streams_on_spark.processor.api import TaskId
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.runtime import cache_replay
from streams_on_spark.runtime.cache_replay import CacheReplay
from streams_on_spark.runtime.fused import BatchAggregation, FlushedColumns
from streams_on_spark.runtime.task import StreamTask

S, L, B = Serdes.String(), Serdes.Long(), Serdes.ByteArray()


def count_of(key_serde=S, value_serde=S, topics=("words",)):
    builder = StreamsBuilder()
    streams = [builder.stream(t, Consumed.with_(key_serde, value_serde)) for t in topics]
    stream = streams[0]
    for other in streams[1:]:
        stream = stream.merge(other)
    (stream.group_by_key(Grouped.with_(key_serde, value_serde))
     .count(Materialized.as_("counts"))
     .to_stream().to("counts-out", Produced.with_(key_serde, L)))
    topology = builder.build()
    topology.internal_builder.application_id = "app"
    return topology


def count_only():
    """A count with nothing downstream: its flushes only write the store."""
    builder = StreamsBuilder()
    builder.stream("words", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S)).count(Materialized.as_("counts"))
    topology = builder.build()
    topology.internal_builder.application_id = "app"
    return topology


def new_task(topology, fast: bool, cache_bytes: int, partitions: int = 1) -> StreamTask:
    builder = topology.internal_builder
    config = TaskConfig.from_config({"application.id": "app", "batch.fast.path": fast,
                                     "statestore.cache.max.bytes": cache_bytes})
    spec = builder.subtopologies()[0]
    return StreamTask(TaskId(0, 0), spec, builder, config, lambda topic: partitions if topic == "counts-out" else 1,
                      lambda: 0, partition_output=True)


def encoded(topic: str, records: list[tuple]) -> RecordBatch:
    """A record batch as a Spark task receives it (shipped as bytes)."""
    batch = RecordBatch(topic, 0)
    for ts, key, value in records:
        batch.add(ts, key, value)
    return RecordBatch.from_bytes(topic, 0, bytes(batch.data), batch.ends.tobytes())


def state_of(task: StreamTask) -> tuple:
    cache = task.stores["counts"].record_cache
    # in LRU order; a dirty entry's writer is what its flush gives the store's position (a clean one's is never read)
    cached = ([(k, e.value, e.timestamp, e.headers, e.size, k in cache.dirty_keys and e.offset)
               for k, e in cache.cached_entries.items()], cache.budget.size) if cache is not None else None
    return (task.metrics.processed, task.metrics.dropped, task.stream_time,
            sorted((k, q.partition_time, q.next_offset) for k, q in task._queues.items()),
            task.snapshot(), cached, task.state.positions())


def run_rounds(topology_factory, rounds: list[list[tuple[str, int, list[tuple]]]], fast: bool,
               cache_bytes: int, partitions: int = 1) -> tuple[list, tuple, int]:
    """Each round: (topic, first offset, records) batches given to one call, then the commit; the output records
    (per partition of the output topic, ``partitions`` of them), the task's state after the last round, and how
    many batches were counted from columns."""
    task = new_task(topology_factory(), fast, cache_bytes, partitions)
    taken = []
    original = BatchAggregation.count_columns

    def counting(self, *args):
        result = original(self, *args)
        taken.append(result)
        return result

    out = []
    with mock.patch.object(BatchAggregation, "count_columns", counting):
        for batches in rounds:
            given = [(topic, 0, offset, encoded(topic, records)) for topic, offset, records in batches]
            if fast:
                task.process_record_batches(given)
            else:
                for topic, partition, offset, batch in given:
                    task.add_columns(topic, partition, offset, *batch.columns())
                task.process_available()
            task.commit()
            out.append([(b.topic, b.partition, b.records()) for b in task.collector.drain_batches()])
    return out, state_of(task), sum(taken)


def word_rounds(n_rounds: int, per_round: int, distinct: int, seed: int, topics=("words",), batches_per_round=2,
                raw=lambda w: w.encode()) -> list:
    rng = random.Random(seed)
    offsets = dict.fromkeys(topics, 0)
    ts = 1_000
    rounds = []
    for _ in range(n_rounds):
        batches = []
        for _ in range(batches_per_round):
            topic = rng.choice(topics)
            records = []
            for _ in range(max(1, per_round // batches_per_round)):
                ts += rng.choice((0, 1, 5, -3))   # out of order now and then
                word = raw(f"w{rng.randrange(distinct)}")
                records.append((max(ts, 0), word, b"x"))
            batches.append((topic, offsets[topic], records))
            offsets[topic] += len(records)
        rounds.append(batches)
    return rounds


def assert_same(topology_factory, rounds, cache_bytes: int, partitions: int = 1) -> int:
    slow_out, slow_state, _ = run_rounds(topology_factory, rounds, False, cache_bytes, partitions)
    fast_out, fast_state, taken = run_rounds(topology_factory, rounds, True, cache_bytes, partitions)
    assert fast_out == slow_out
    assert fast_state == slow_state
    return taken


@pytest.mark.parametrize("per_round", [1, 40, 600])
@pytest.mark.parametrize("key_serde", [S, B], ids=["String", "ByteArray"])
def test_a_count_from_columns_leaves_what_the_per_record_path_leaves(per_round, key_serde):
    rounds = word_rounds(5, per_round, distinct=50, seed=per_round)
    taken = assert_same(lambda: count_of(key_serde, key_serde), rounds, 10 * 1024 * 1024)
    assert taken == sum(len(r) for r in rounds)   # every batch was counted from its columns


@pytest.mark.parametrize("cache_bytes", [0, 300, 2_000, 5_000])
def test_a_batch_whose_entries_would_not_fit_the_cache_takes_the_fold_through_the_evictions(cache_bytes):
    rounds = word_rounds(6, 200, distinct=120, seed=cache_bytes)
    taken = assert_same(count_of, rounds, cache_bytes)
    if cache_bytes == 0:
        assert taken == 0   # no cache: not folded at all
    if cache_bytes == 300:
        assert taken == 0   # every batch overflows the cache


def test_records_the_columns_cannot_give_as_the_store_keys_them_take_the_other_paths():
    """A null key or value (dropped and counted), a key that is not UTF-8 (String replaces what it cannot decode),
    a negative timestamp: the batch is queued and processed as before; the batches after it are counted again."""
    rounds = word_rounds(4, 100, distinct=30, seed=5)
    first = rounds[1][0][2]
    first[3] = (first[3][0], None, b"x")
    first[7] = (first[7][0], b"w1", None)
    rounds[2][0][2][5] = (rounds[2][0][2][5][0], b"\xff\xfe", b"x")
    taken = assert_same(count_of, rounds, 10 * 1024 * 1024)
    assert taken == sum(len(r) for r in rounds) - 2   # the batch after each is counted from its columns again


def test_batches_of_several_partitions_are_processed_in_the_task_order_not_from_columns():
    rounds = word_rounds(4, 100, distinct=30, seed=9, topics=("a", "b"), batches_per_round=3)
    taken = assert_same(lambda: count_of(topics=("a", "b")), rounds, 10 * 1024 * 1024)
    assert taken == sum(1 for r in rounds if len({t for t, _, _ in r}) == 1 for _ in r)


def test_a_value_serde_that_can_fail_keeps_the_per_record_deserialization():
    rounds = word_rounds(3, 50, distinct=10, seed=2)
    rounds[1][0][2][4] = (rounds[1][0][2][4][0], b"w1", b"12")   # not 8 bytes: Long's deserializer fails
    with pytest.raises(Exception) as slow:
        run_rounds(lambda: count_of(S, L), rounds, False, 1 << 20)
    with pytest.raises(Exception) as fast:
        run_rounds(lambda: count_of(S, L), rounds, True, 1 << 20)
    assert type(fast.value) is type(slow.value) and str(fast.value) == str(slow.value)


def fill_rounds(n_rounds: int, per_batch: int, seed: int) -> list:
    """Rounds of two record batches whose keys each come once: new keys (a store being filled), and every third
    batch keys met before (the cache may hold some), timestamps out of order."""
    rng = random.Random(seed)
    offset, known, rounds = 0, 0, []
    for r in range(n_rounds):
        batches = []
        for b in range(2):
            if (2 * r + b) % 3 == 2 and known:
                keys = rng.sample(range(known), min(per_batch, known))
            else:
                keys, known = list(range(known, known + per_batch)), known + per_batch
            records = [(rng.randrange(5_000), f"k{k}-{'x' * (k % 13)}".encode(), b"x") for k in keys]
            batches.append(("words", offset, records))
            offset += len(records)
        rounds.append(batches)
    return rounds


def spied(owner: type, name: str) -> tuple[list, object]:
    """What ``owner.name`` returned, call by call, and the patch that records it."""
    calls: list = []
    original = getattr(owner, name)
    return calls, mock.patch.object(owner, name, lambda *args: calls.append(original(*args)) or calls[-1])


# 20,000 bytes: a round's second record batch flushes the first's entries, some of which stay cached (clean)
@pytest.mark.parametrize("cache_bytes", [300, 3_000, 20_000, 30_000])
@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize("compact_at", [65_536, 8])
def test_new_keys_are_written_in_columns_and_flushed_in_bulk_as_record_by_record(cache_bytes, partitions,
                                                                                  compact_at):
    """Record batches of keys none of which the cache holds go through the cache's rule in columns
    (``CacheReplay.write_new``: evictions and flushes from the entries' sizes) and every flush writes the store and
    encodes the output in bulk (``FlushedColumns``), into each partition of the output topic: the same records in
    the same order per partition, store, cache (its entries in LRU order, dirty ones' writers), positions and
    snapshots as record by record — which a wrong count, a lost write, an entry evicted too early or too late, or an
    output out of order would break. The account is kept in columns across a round's record batches, its evicted
    entries dropped from them from ``compact_at`` on."""
    rounds = fill_rounds(6, 150, seed=cache_bytes + partitions)
    columns, write_new = spied(CacheReplay, "write_new")
    flushed, write = spied(FlushedColumns, "write")
    with write_new, write, mock.patch.object(cache_replay, "_COMPACT_AT", compact_at):
        assert_same(count_of, rounds, cache_bytes, partitions)
    assert len(columns) >= 4 and flushed


@pytest.mark.parametrize("cache_bytes", [300, 30_000])
def test_a_count_with_nothing_downstream_flushes_into_its_store_in_bulk(cache_bytes):
    rounds = fill_rounds(5, 120, seed=cache_bytes)
    flushed, write = spied(FlushedColumns, "write")
    with write:
        assert_same(count_only, rounds, cache_bytes)
    assert flushed


LONG = [b"k%03d" % i for i in range(300)]   # more keys than _grouped_keys' first look takes


@pytest.mark.parametrize("keys", [[b"a", b"b", b"c"], [b"a", b"b", b"a", b"c", b"b"], [b"x"], LONG,
                                  LONG + [LONG[0]], [LONG[0]] + LONG])
def test_a_record_batch_s_keys_are_grouped_as_arrow_groups_them_with_or_without_a_repeat(keys):
    """``_grouped_keys``: keys each once skip Arrow's hash grouping; what it gives (the keys in the order of their
    last records, each one's last index, count and newest timestamp) is what the grouping gives."""
    import numpy as np
    import pyarrow as pa
    from streams_on_spark.runtime.fused import _grouped_keys
    timestamps = np.array([(5 + 7919 * i) % 10 for i in range(len(keys))], np.int64)
    raw_keys, grouped = _grouped_keys(pa.array(keys, pa.binary()), timestamps)
    last = {key: i for i, key in enumerate(keys)}
    order = sorted(last, key=last.get)
    assert raw_keys == order
    assert grouped() == ([last[k] for k in order], [keys.count(k) for k in order],
                         [max(int(t) for key, t in zip(keys, timestamps) if key == k) for k in order])


@pytest.mark.parametrize("keys", [[b"a", "é".encode(), "日本".encode(), b""], [b"\xc3", b"\xa9"],
                                  [b"a\xe6\x97", b"\xa5"], [b"\xed\xa0\x80"], [b"\xc0\xaf"], [b"\xf4\x90\x80\x80"],
                                  [b"ok", b"\xff\xfe"],
                                  [b"\xe6\x97\xa5", b"\x80"], [b"\x00", b"a\x00b"]])
def test_a_record_batch_s_keys_are_told_utf8_as_each_key_decodes(keys):
    """``_all_utf8`` (one decode of the keys joined) says what decoding each key alone says: a sequence split over
    two keys, a surrogate, an overlong form, a code point past U+10FFFF and a stray continuation byte are not
    UTF-8 in one key."""
    from streams_on_spark.runtime.fused import _all_utf8

    def decodes(key):
        try:
            key.decode()
        except UnicodeDecodeError:
            return False
        return True
    assert _all_utf8(keys) == all(map(decodes, keys))

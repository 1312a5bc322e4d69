"""A task's state survives snapshot/restore: what the Spark engine keeps in group state between batches."""
from __future__ import annotations

import pickle

import pytest

from streams_on_spark import Processor, PunctuationType, Record, Serdes, StreamsException, Stores, Topology
from streams_on_spark.config import TaskConfig
from streams_on_spark.records import ConsumerRecord
from streams_on_spark.processor.api import TaskId
from streams_on_spark.runtime.snapshot import READABLE_SNAPSHOT_VERSIONS, SNAPSHOT_VERSION, TaskSnapshot
from streams_on_spark.runtime.task import StreamTask

S, L = Serdes.String(), Serdes.Long()


class Counter(Processor):
    def init(self, context):
        super().init(context)
        self.store = context.get_state_store("counts")
        context.schedule(100, PunctuationType.STREAM_TIME, self.tick)

    def tick(self, now):
        self.context.forward(Record("tick", now, now))

    def process(self, record):
        count = (self.store.get(record.key) or 0) + 1
        self.store.put(record.key, count)
        self.context.forward(Record(record.key, count, record.timestamp))


def topology():
    return (Topology()
            .add_source("src", "in", key_serde=S, value_serde=S)
            .add_processor("count", Counter, "src")
            .add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("counts"), S, L), "count")
            .add_sink("out", "out", "count", key_serde=S, value_serde=L))


def new_task(t, snapshot=None):
    builder = t.internal_builder
    builder.application_id = "snap"
    spec = builder.subtopologies()[0]
    return StreamTask(TaskId(0, 1), spec, builder, TaskConfig("snap"), lambda topic: 4, lambda: 0, snapshot=snapshot)


def feed(task, records):
    task.add_records("in", 1, [ConsumerRecord("in", 1, off, ts, k.encode(), b"v", ()) for off, (k, ts) in records])
    while task.process_one():
        pass
    return [(S.deserialize("out", r.key), L.deserialize("out", r.value), r.timestamp, r.partition)
            for r in task.collector.drain()]


def test_restored_task_continues_exactly_where_the_first_stopped():
    t = topology()
    uninterrupted = new_task(t)
    full = feed(uninterrupted, [(0, ("a", 10)), (1, ("b", 20)), (2, ("a", 150)), (3, ("a", 160)), (4, ("b", 260))])

    first = new_task(t)
    head = feed(first, [(0, ("a", 10)), (1, ("b", 20)), (2, ("a", 150))])
    blob = first.snapshot()
    second = new_task(t, blob)
    tail = feed(second, [(3, ("a", 160)), (4, ("b", 260))])
    assert head + tail == full
    assert second.stream_time == uninterrupted.stream_time == 260
    assert list(second.stores["counts"].all()) == list(uninterrupted.stores["counts"].all())
    # the punctuation schedule carried over: ticks at 10 and 150 and 260, not again at 160
    assert [v for k, v, *_ in full if k == "tick"] == [10, 150, 260]


def test_snapshot_refuses_queued_records_and_unknown_versions_and_drops_state_of_removed_stores(caplog):
    t = topology()
    task = new_task(t)
    task.add_records("in", 1, [ConsumerRecord("in", 1, 0, 5, b"k", b"v", ())])
    with pytest.raises(Exception, match="queued records"):
        task.snapshot()
    # a store the topology no longer has (KafkaStreams refused the change unless upgrade.allow.unsafe=true)
    removed = pickle.dumps((SNAPSHOT_VERSION, 7, {}, {"other-store": {}}, [], [], {}, (0, 0), {},
                            {"other-store": {"in\x001": 4}}))
    assert new_task(t, removed).stream_time == 7
    assert "stores ['other-store'] that this topology does not have: their state is dropped" in caplog.text
    for version in (1, 9):  # 1: suppression buffer entries of an older layout
        with pytest.raises(StreamsException, match=f"version {version}"):
            new_task(t, pickle.dumps((version, -1, {}, {}, [], [], {}, (0, 0), {})))


def test_a_task_keeps_its_position_in_each_partition_across_snapshots_and_reads_the_older_format():
    t = topology()
    first = new_task(t)
    feed(first, [(0, ("a", 10)), (1, ("b", 20)), (2, ("a", 150))])
    assert first.next_offset("in", 1) == 3 and first.next_offset("in", 0) == 0
    second = new_task(t, first.snapshot())
    assert second.next_offset("in", 1) == 3
    assert second.stream_time == 150
    # format 2 (before positions): partition times only; the position starts from the next record queued
    older = pickle.dumps((2, 150, {"in\x001": 150}, {"counts": {}}, [], [], {}, (3, 0), {}))
    restored = new_task(t, older)
    assert restored.stream_time == 150 and restored.next_offset("in", 1) == 0
    feed(restored, [(3, ("a", 160))])
    assert restored.next_offset("in", 1) == 4


# one test per snapshot version the library reads: a snapshot in that version's shape, written by hand, is read

COUNTS = {b"a": L.serialize("t", 2), b"b": L.serialize("t", 1)}


def test_the_versions_read_are_2_3_and_4_and_4_is_written():
    assert SNAPSHOT_VERSION == 4 and READABLE_SNAPSHOT_VERSIONS == {2, 3, 4}
    task = new_task(topology())
    feed(task, [(0, ("a", 10)), (1, ("b", 20)), (2, ("a", 150))])
    # version 4's layout, item by item: what users' checkpoints hold (the counts store's position: every record of
    # partition 1 of "in" wrote it, the last at offset 2)
    assert pickle.loads(task.snapshot()) == (4, 150, {"in\x001": (150, 3)}, {"counts": COUNTS}, [200], [], {},
                                             (3, 0), {}, {"counts": {"in\x001": 2}})


def test_a_version_4_snapshot_is_read_with_its_stores_positions():
    v4 = pickle.dumps((4, 150, {"in\x001": (150, 3), "in\x000": (40, 8)}, {"counts": COUNTS}, [200], [], {},
                       (3, 1), {}, {"counts": {"in\x001": 2}}), protocol=pickle.HIGHEST_PROTOCOL)
    saved = TaskSnapshot.from_bytes(v4)
    assert saved.store_positions == {"counts": {("in", 1): 2}}
    assert pickle.loads(saved.to_bytes()) == pickle.loads(v4)   # the version written: read back, written again
    task = new_task(topology(), v4)
    assert task.stores["counts"].position_offsets == {("in", 1): 2}   # none of partition 0: it wrote nothing
    feed(task, [(3, ("a", 160))])
    assert task.stores["counts"].position_offsets == {("in", 1): 3}


def test_a_version_3_snapshot_is_read():
    v3 = pickle.dumps((3, 150, {"in\x001": (150, 3), "in\x000": (40, 8)}, {"counts": COUNTS}, [200], [], {"out": 2},
                       (3, 1), {"meta": 5}), protocol=pickle.HIGHEST_PROTOCOL)
    saved = TaskSnapshot.from_bytes(v3)
    assert saved == TaskSnapshot(150, {("in", 1): (150, 3), ("in", 0): (40, 8)}, {"counts": COUNTS}, [200], [],
                                 {"out": 2}, 3, 1, {"meta": 5})
    assert pickle.loads(saved.to_bytes()) == (4, *pickle.loads(v3)[1:], {})   # written again as version 4
    task = new_task(topology(), v3)
    assert task.stream_time == 150 and task.next_offset("in", 1) == 3 and task.next_offset("in", 0) == 8
    assert [(q.topic, q.partition, q.partition_time) for q in task.partition_group.queue_list] == [
        ("in", 1, 150), ("in", 0, 40)]   # the order first fed: process_one's tie order
    assert dict(task.stores["counts"].all()) == {"a": 2, "b": 1}
    assert task.stream_time_punctuation.times() == [200] and task.wall_clock_punctuation.times() == []
    assert (task.metrics.processed, task.metrics.dropped) == (3, 1)
    assert task.processor_metadata == {"meta": 5} and task.collector.snapshot() == {"out": 2}
    assert task.stores["counts"].position_offsets == {}   # no positions in version 3: a store's starts empty


def test_a_version_2_snapshot_is_read():
    v2 = pickle.dumps((2, 150, {"in\x001": 150}, {"counts": COUNTS}, [200], [], {}, (3, 0), {"meta": 5}))
    saved = TaskSnapshot.from_bytes(v2)
    assert saved == TaskSnapshot(150, {("in", 1): (150, 0)}, {"counts": COUNTS}, [200], [], {}, 3, 0, {"meta": 5})
    task = new_task(topology(), v2)
    assert task.stream_time == 150 and task.next_offset("in", 1) == 0   # no position yet: from the next record
    assert task.partition_group.queues[("in", 1)].partition_time == 150
    assert dict(task.stores["counts"].all()) == {"a": 2, "b": 1}
    assert task.processor_metadata == {"meta": 5}
    # written back as version 4
    assert pickle.loads(task.snapshot())[:3] == (4, 150, {"in\x001": (150, 0)})
    assert feed(task, [(3, ("a", 160))]) == [("a", 3, 160, 0)]   # the punctuation at 200 is not due yet


def test_an_unreadable_version_names_the_task_and_the_versions_read():
    with pytest.raises(StreamsException, match=r"task 0_1: snapshot version 1 is not supported \(this version reads "
                                               r"\[2, 3, 4\]\)"):
        new_task(topology(), pickle.dumps((1, -1, {}, {}, [], [], {}, (0, 0), {})))

"""Embedded topics: file-backed Kafka-like logs shared across processes (their Spark data source is the runtime's:
tests/unit/runtime/test_embedded_source.py)."""
from __future__ import annotations

import multiprocessing
import os
import pickle
import threading
import time

import pytest

from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.records import ConsumerRecord, ProducerRecord
from tests.unit.connectors.embedded_records import records as _records


@pytest.fixture
def topics(tmp_path):
    with EmbeddedTopics(tmp_path / "topics") as t:
        yield t


# ---------------------------------------------------------------------------- round trip


def test_round_trip_preserves_every_field_including_null_versus_empty(topics):
    topics.create_topic("in", 2)
    sent = [
        ProducerRecord("in", 0, 5, b"key", b"value", ()),
        ProducerRecord("in", 0, -1, None, None, ()),
        ProducerRecord("in", 0, 7, b"", b"", ()),
        ProducerRecord("in", 1, 2**62, None, b"v" * 100_000, (("h", b"1"), ("h", None), ("ünï", b""))),
        ProducerRecord("in", 0, 9, bytearray(b"ba"), memoryview(b"mv"), [("list-header", b"x")]),
    ]
    offsets = topics.append(sent)
    assert offsets == [0, 1, 2, 0, 3]
    assert topics.end_offsets("in") == [4, 1]
    assert topics.read("in", 0, 0, 4) == [
        ConsumerRecord("in", 0, 0, 5, b"key", b"value", ()),
        ConsumerRecord("in", 0, 1, -1, None, None, ()),
        ConsumerRecord("in", 0, 2, 7, b"", b"", ()),
        ConsumerRecord("in", 0, 3, 9, b"ba", b"mv", (("list-header", b"x"),)),
    ]
    [big] = topics.read("in", 1, 0, 1)
    assert big == ConsumerRecord("in", 1, 0, 2**62, None, b"v" * 100_000, (("h", b"1"), ("h", None), ("ünï", b"")))
    assert type(big.value) is bytes and type(big.headers) is tuple


def test_offsets_are_per_partition_in_arrival_order_across_calls_and_topics(topics):
    topics.create_topic("a", 3)
    topics.create_topic("b", 1)
    assert topics.append([ProducerRecord("a", 2, 1, b"x", b"1"), ProducerRecord("b", 0, 1, b"y", b"2")]) == [0, 0]
    mixed = [ProducerRecord("a", p, 10 + i, None, b"%d" % i) for i, p in enumerate([0, 2, 0, 1, 2, 2])]
    assert topics.append(mixed) == [0, 1, 1, 0, 2, 3]
    assert topics.append([]) == []
    assert topics.end_offsets("a") == [2, 1, 4]
    assert topics.end_offsets("b") == [1]
    assert [r.value for r in topics.read("a", 2, 0, 4)] == [b"1", b"1", b"4", b"5"]
    assert [r.offset for r in topics.read("a", 2, 0, 4)] == [0, 1, 2, 3]
    assert topics.end_offset("a", 2) == 4


def test_read_returns_exactly_the_requested_range(topics):
    topics.create_topic("t", 1)
    topics.append(_records("t", 0, 20))
    assert [r.offset for r in topics.read("t", 0, 5, 9)] == [5, 6, 7, 8]
    assert [r.value for r in topics.read("t", 0, 5, 9)] == [b"r5", b"r6", b"r7", b"r8"]
    assert [r.offset for r in topics.read("t", 0, 19, 20)] == [19]
    assert [r.offset for r in topics.read("t", 0, 0, 1)] == [0]
    assert topics.read("t", 0, 20, 20) == []
    assert topics.read("t", 0, 7, 7) == []
    assert len(topics.read("t", 0, 0, 20)) == 20
    with pytest.raises(ValueError, match=r"\[18, 21\) of t-0 is beyond its end offset 20"):
        topics.read("t", 0, 18, 21)
    with pytest.raises(ValueError, match=r"\[21, 22\) of t-0 is beyond its end offset 20"):
        topics.read("t", 0, 21, 22)
    with pytest.raises(ValueError, match="bad offset range"):
        topics.read("t", 0, -1, 3)
    with pytest.raises(ValueError, match="bad offset range"):
        topics.read("t", 0, 5, 4)


def test_large_read_matches_records_and_columns(topics):
    topics.create_topic("big", 1)
    topics.append(_records("big", 0, 25_000))
    records = topics.read("big", 0, 100, 25_000)
    assert len(records) == 24_900
    assert records[0] == ConsumerRecord("big", 0, 100, 1100, b"k100", b"r100", ())
    assert records[-1] == ConsumerRecord("big", 0, 24_999, 25_999, b"k24999", b"r24999", ())
    timestamps, keys, values, headers = topics.read_columns("big", 0, 100, 25_000)
    assert timestamps == [r.timestamp for r in records] and keys == [r.key for r in records]
    assert values == [r.value for r in records] and headers == [()] * 24_900


def test_replay_returns_identical_records_from_any_instance(topics):
    topics.create_topic("t", 2)
    topics.append(_records("t", 1, 10) + [ProducerRecord("t", 1, 3, None, b"h", (("a", None),))])
    first = topics.read("t", 1, 3, 11)
    topics.append(_records("t", 1, 5, tag="later"))  # appending more must not change the old range
    assert topics.read("t", 1, 3, 11) == first
    with EmbeddedTopics(topics.root) as other:
        assert other.read("t", 1, 3, 11) == first
        assert other.end_offsets("t") == [0, 16]


# ---------------------------------------------------------------------------- errors


def test_unknown_topic_and_partition_errors_name_them(topics):
    topics.create_topic("known", 2)
    for call in (
        lambda: topics.partitions("nope"),
        lambda: topics.end_offsets("nope"),
        lambda: topics.read("nope", 0, 0, 1),
        lambda: topics.append([ProducerRecord("nope", 0, 0, None, b"x")]),
    ):
        with pytest.raises(ValueError, match="unknown topic 'nope'"):
            call()
    with pytest.raises(ValueError, match="partition 2 of topic known is out of range: the topic has 2 partitions"):
        topics.append([ProducerRecord("known", 2, 0, None, b"x")])
    with pytest.raises(ValueError, match="partition -1 of topic known"):
        topics.read("known", -1, 0, 0)
    with pytest.raises(ValueError, match="unknown topic '../escape'"):
        topics.partitions("../escape")


def test_failed_append_writes_nothing(topics):
    topics.create_topic("t", 2)
    topics.append(_records("t", 0, 3))
    bad_batches = [
        _records("t", 0, 2) + [ProducerRecord("t", 5, 0, None, b"x")],
        _records("t", 1, 2) + [ProducerRecord("t", 0, 0, "str key", b"x")],
        _records("t", 1, 2) + [ProducerRecord("t", 0, None, None, b"x")],
        _records("t", 1, 2) + [ProducerRecord("t", 0, 0, None, b"x", (("h", "not bytes"),))],
        _records("t", 1, 2) + [ProducerRecord("t", 0, 0, None, b"x", ((1, b"v"),))],
        _records("t", 1, 2) + [("t", 0)],
    ]
    for bad in bad_batches:
        with pytest.raises((ValueError, TypeError), match="t-0|partition 5 of topic t|ProducerRecord"):
            topics.append(bad)
    assert topics.end_offsets("t") == [3, 0]
    assert topics.append(_records("t", 0, 1, tag="after")) == [3]


def test_create_topic_is_idempotent_and_rejects_conflicts_and_bad_names(topics):
    topics.create_topic("orders.v1_x-y", 3)
    topics.create_topic("orders.v1_x-y", 3)
    topics.append(_records("orders.v1_x-y", 2, 2))
    topics.create_topic("orders.v1_x-y", 3)  # must not truncate existing data
    assert topics.end_offsets("orders.v1_x-y") == [0, 0, 2]
    with pytest.raises(ValueError, match="topic orders.v1_x-y already exists with 3 partitions, cannot create it with 4"):
        topics.create_topic("orders.v1_x-y", 4)
    with EmbeddedTopics(topics.root) as other:  # conflict detected from another instance too
        with pytest.raises(ValueError, match="already exists with 3 partitions, cannot create it with 1"):
            other.create_topic("orders.v1_x-y", 1)
    for bad in ["", ".", "..", "a/b", "spa ce", "ü", "x" * 250]:
        with pytest.raises(ValueError, match="topic name"):
            topics.create_topic(bad, 1)
    topics.create_topic("x" * 249, 1)
    for bad_count in [0, -1, True, 1.0, "2"]:
        with pytest.raises(ValueError, match="partitions of topic t must be an int >= 1"):
            topics.create_topic("t", bad_count)
    assert topics.topics() == {"orders.v1_x-y": 3, "x" * 249: 1}
    assert topics.partitions("orders.v1_x-y") == 3


# ---------------------------------------------------------------------------- lifecycle, pickling


def test_pickles_as_its_root_and_only_the_creator_removes_a_temp_dir():
    owner = EmbeddedTopics()
    root = owner.root
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        assert root.startswith("/dev/shm/")
    owner.create_topic("t", 1)
    owner.append(_records("t", 0, 3))
    copy = pickle.loads(pickle.dumps(owner))
    assert copy.root == root and copy is not owner
    assert copy.read("t", 0, 0, 3) == owner.read("t", 0, 0, 3)
    copy.close()
    assert os.path.isdir(root)
    owner.close()
    assert not os.path.exists(root)


def test_close_keeps_an_explicit_root(tmp_path):
    with EmbeddedTopics(tmp_path / "keep") as t:
        t.create_topic("t", 1)
    assert (tmp_path / "keep" / "topics" / "t" / "meta.json").exists()
    with EmbeddedTopics(str(tmp_path / "keep")) as again:
        assert again.topics() == {"t": 1}


# ---------------------------------------------------------------------------- concurrency


def _writer(topics: EmbeddedTopics, writer: int, appends: int, queue) -> None:
    """Append ``appends`` batches of varying size to two partitions and another topic; report the offsets."""
    got = []
    seq = 0
    for call in range(appends):
        batch = []
        for _ in range(1 + (call * 7 + writer) % 13):
            batch.append(ProducerRecord("c", seq % 2, seq, b"w%d" % writer, b"%d:%d:" % (writer, seq) + b"x" * (seq % 50)))
            seq += 1
        batch.append(ProducerRecord("d", 0, seq, None, b"%d" % writer))
        offsets = topics.append(batch)
        got.extend((r.topic, r.partition, o, r.value) for r, o in zip(batch, offsets))
    queue.put((writer, got))


def test_concurrent_appends_from_processes_are_gap_free_and_lossless(topics):
    topics.create_topic("c", 2)
    topics.create_topic("d", 1)
    topics.append([ProducerRecord("c", 0, 0, None, b"parent")])  # populate the parent's fd caches before fork
    ctx = multiprocessing.get_context("fork")  # children inherit the instance and its (now stale) fds
    queue = ctx.Queue()
    writers = 4
    procs = [ctx.Process(target=_writer, args=(topics, w, 60, queue)) for w in range(writers)]
    for p in procs:
        p.start()
    reported = dict(queue.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    stored = {}
    for topic in ("c", "d"):
        for partition, end in enumerate(topics.end_offsets(topic)):
            records = topics.read(topic, partition, 0, end)
            assert [r.offset for r in records] == list(range(end))
            stored.update({(topic, partition, r.offset): r.value for r in records})
    expected = {(t, p, o): v for got in reported.values() for t, p, o, v in got}
    expected[("c", 0, 0)] = b"parent"
    assert stored == expected  # every reported offset holds that writer's record; nothing extra, nothing torn
    assert len(stored) == 1 + sum(len(got) for got in reported.values())
    for writer, got in reported.items():  # a writer's records keep their order within a partition
        for partition in (0, 1):
            mine = [o for t, p, o, _ in got if t == "c" and p == partition]
            assert mine == sorted(mine) and len(mine) > 0


def test_concurrent_appends_from_threads_share_one_instance(topics):
    topics.create_topic("t", 1)
    offsets: list[list[int]] = []

    def run(n: int) -> None:
        for _ in range(50):
            offsets.append(topics.append(_records("t", 0, n)))

    threads = [threading.Thread(target=run, args=(n,)) for n in (1, 3, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    flat = sorted(o for batch in offsets for o in batch)
    assert flat == list(range(450)) == [r.offset for r in topics.read("t", 0, 0, 450)]
    assert all(batch == list(range(batch[0], batch[0] + len(batch))) for batch in offsets)


def _busy_writer(topics: EmbeddedTopics, batches: int) -> None:
    for b in range(batches):
        size = 1 + b % 200
        topics.append([ProducerRecord("live", 0, b, b"%d" % b, bytes([b % 256]) * (1000 + i), ()) for i in range(size)])


def _check_whole(record: ConsumerRecord) -> None:
    b = int(record.key)
    assert record.timestamp == b
    assert len(record.value) >= 1000 and record.value == bytes([b % 256]) * len(record.value)


def test_a_reader_never_sees_partial_writes(topics):
    topics.create_topic("live", 1)
    ctx = multiprocessing.get_context("fork")
    writer = ctx.Process(target=_busy_writer, args=(topics, 400))
    writer.start()
    polls = 0
    seen = 0
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            writer_done = not writer.is_alive()  # checked BEFORE reading the end, so no append is missed
            end = topics.end_offset("live", 0)
            if end > seen:  # poll the newest record: the one a torn write would hit
                [newest] = topics.read("live", 0, end - 1, end)
                _check_whole(newest)
                seen = end
                polls += 1
            elif writer_done:
                break
    finally:
        writer.join(timeout=60)
    assert writer.exitcode == 0
    assert seen == topics.end_offset("live", 0) == sum(1 + b % 200 for b in range(400))
    for record in topics.read("live", 0, 0, seen):
        _check_whole(record)
    assert polls > 10  # the reader really overlapped the writer


def test_readers_trust_only_the_index_and_writers_repair_a_crashed_append(topics):
    topics.create_topic("t", 1)
    topics.append(_records("t", 0, 3))
    tdir = os.path.join(topics.root, "topics", "t")
    with open(os.path.join(tdir, "0.log"), "ab") as f:  # a writer died after its data write...
        f.write(b"\x01" * 37)
    with open(os.path.join(tdir, "0.index"), "ab") as f:  # ...halfway through its index write
        f.write(b"\x02" * 5)
    with EmbeddedTopics(topics.root) as reader:
        assert reader.end_offsets("t") == [3]
        assert [r.value for r in reader.read("t", 0, 0, 3)] == [b"r0", b"r1", b"r2"]
        with pytest.raises(ValueError, match="beyond its end offset 3"):
            reader.read("t", 0, 0, 4)
    assert topics.append(_records("t", 0, 2, tag="new")) == [3, 4]
    assert [r.value for r in topics.read("t", 0, 0, 5)] == [b"r0", b"r1", b"r2", b"new0", b"new1"]
    assert os.path.getsize(os.path.join(tdir, "0.index")) == 5 * 8


# ---------------------------------------------------------------------------- record batches in and out


def test_append_batches_and_read_batch_round_trip_any_range(topics):
    topics.create_topic("b", 2)
    first = RecordBatch("b", 1)
    for r in _records("b", 1, 5):
        first.add(r.timestamp, r.key, r.value, r.headers)
    assert topics.append_batches([first, RecordBatch("b", 0)]) == [0, 0]   # an empty batch writes nothing
    assert topics.append(_records("b", 1, 2, tag="x")) == [5, 6]
    assert topics.end_offsets("b") == [0, 7]
    for start, end in [(0, 7), (0, 1), (3, 7), (6, 7), (2, 5)]:
        batch = topics.read_batch("b", 1, start, end)
        assert (batch.topic, batch.partition, len(batch)) == ("b", 1, end - start)
        assert batch.records() == [ProducerRecord(r.topic, r.partition, r.timestamp, r.key, r.value, r.headers)
                                   for r in topics.read("b", 1, start, end)]
    with pytest.raises(ValueError, match="beyond its end offset 7"):
        topics.read_batch("b", 1, 5, 8)


def test_an_append_over_several_partitions_becomes_visible_at_once(topics):
    """Readers see the published end offsets: a downstream query never gets half of an upstream append."""
    topics.create_topic("t", 3)
    batches = [RecordBatch("t", p) for p in range(3)]
    for p, batch in enumerate(batches):
        batch.add(p, b"k", b"v")
    with EmbeddedTopics(topics.root) as writer:
        writer._write("t", 0, batches[0], 0)      # a writer between its partition writes...
        writer._write("t", 1, batches[1], 0)
        assert topics.end_offsets("t") == [0, 0, 0]   # ...has published nothing yet
    # it died there: what it wrote is not published, and the next writer drops it
    assert topics.append_batches(batches) == [0, 0, 0]
    assert topics.end_offsets("t") == [1, 1, 1] and topics.end_offset("t", 2) == 1
    assert [len(topics.read("t", p, 0, 1)) for p in range(3)] == [1, 1, 1]


def test_an_idempotent_producer_writes_each_sequence_once_per_topic(topics):
    """A replayed append (a retried Spark task, a batch replayed after a crash) is recognised and skipped."""
    topics.create_topic("a", 2)
    topics.create_topic("b", 1)
    first = [_batch("a", 1, b"x"), _batch("b", 0, b"y")]
    assert topics.append_batches(first, producer="q1:0", sequence=5) == [0, 0]
    assert topics.append_batches([_batch("a", 1, b"other")], producer="q1:1", sequence=5) == [1]
    assert topics.append_batches(first, producer="q1:0", sequence=5) == [0, 0]      # the replay: nothing written
    assert topics.append_batches(first, producer="q1:0", sequence=4) == [0, 0]      # older: nothing written
    assert topics.end_offsets("a") == [0, 2] and topics.end_offsets("b") == [1]
    # a replay that died after writing topic a only writes topic b again
    assert topics.append_batches([_batch("a", 0, b"z")], producer="q1:0", sequence=6) == [0]
    assert topics.append_batches([_batch("a", 0, b"z"), _batch("b", 0, b"w")], producer="q1:0",
                                 sequence=6) == [0, 1]
    assert topics.end_offsets("a") == [1, 2] and topics.end_offsets("b") == [2]
    assert [r.value for r in topics.read("b", 0, 0, 2)] == [b"y", b"w"]
    with pytest.raises(ValueError, match="both producer and sequence"):
        topics.append_batches(first, producer="q1:0")


def _batch(topic: str, partition: int, value: bytes) -> RecordBatch:
    batch = RecordBatch(topic, partition)
    batch.add(1, b"k", value)
    return batch


def test_the_topics_need_no_spark():
    """The plain log imports neither pyspark nor pyarrow (the Spark source over it is embedded_source.py)."""
    import subprocess
    import sys
    code = ("import sys, streams_on_spark.connectors.embedded; "
            "print(sorted(m for m in ('pyspark', 'pyarrow') if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"

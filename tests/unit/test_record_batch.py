"""``RecordBatch``: the binary layout records are stored and shipped in, and the sink's merge of task outputs."""
from __future__ import annotations

import itertools
import re
from array import array
from unittest import mock

import pytest

from streams_on_spark import record_batch
from streams_on_spark.partitioner import partition_for_key
from streams_on_spark.record_batch import (PREFIX, VECTOR_MIN_HEADERLESS, PartitionedRecords, RecordBatch,
                                           encode_by_partition, encode_headerless, headerless_by_arrow,
                                           merge_by_stream_time, parse_records)
from streams_on_spark.records import ProducerRecord


def _part(task: int, rows: list[tuple[int, int, int]], topic: str = "t", partition: int = 0) -> tuple:
    """A task's part: rows of (stamp, seq, timestamp); the value names the task and seq."""
    batch = RecordBatch(topic, partition)
    for _, seq, ts in rows:
        batch.add(ts, None, f"{task}:{seq}".encode())
    stamps = array("q", [stamp for stamp, _, _ in rows]).tobytes()
    seqs = array("q", [seq for _, seq, _ in rows]).tobytes()
    return task, stamps, seqs, batch.ends_bytes(), bytes(batch.data)


def test_round_trip_keeps_null_versus_empty_and_headers():
    batch = RecordBatch("t", 3)
    records = [ProducerRecord("t", 3, 1, None, None, ()), ProducerRecord("t", 3, 2, b"", b"", ()),
               ProducerRecord("t", 3, 3, b"k", b"v", (("a", b"1"), ("b", None)))]
    for r in records:
        batch.add(r.timestamp, r.key, r.value, r.headers)
    assert batch.records() == records
    shipped = RecordBatch.from_bytes("t", 3, bytes(batch.data), batch.ends_bytes())
    assert shipped.records() == records and len(shipped) == 3


def test_bad_records_are_named_and_corrupt_data_detected():
    batch = RecordBatch("t", 1)
    with pytest.raises(TypeError, match="record key for t-1 must be bytes or None, got str"):
        batch.add(1, "k", b"v")
    with pytest.raises(ValueError, match="timestamp of a record for t-1 must be an int64"):
        batch.add(None, b"k", b"v")
    batch.add(1, b"k", b"v")
    with pytest.raises(RuntimeError, match="corrupt record batch"):
        parse_records(bytes(batch.data)[:-1], 1)


def test_a_refused_record_leaves_nothing_in_the_batch_and_its_timestamp_is_named_first():
    """``add`` of a record it refuses (a header that is not a (str, bytes) pair, a timestamp past int64) appends
    nothing, so the batch stays whole; a record wrong in both ways is named by its timestamp."""
    batch = RecordBatch("t", 1)
    batch.add(1, b"k", b"v")
    with pytest.raises(TypeError, match="header key of a record for t-1 must be str, got int"):
        batch.add(2, b"k", b"v", ((1, b"x"),))
    with pytest.raises(ValueError, match="timestamp of a record for t-1 must be an int64, got 'late'"):
        batch.add("late", b"k", b"v", ((1, b"x"),))
    with pytest.raises(ValueError, match="timestamp of a record for t-1 must be an int64"):
        batch.add(2**63, b"k", b"v")
    batch.add(3, None, b"w", (("h", None),))
    assert batch.records() == [ProducerRecord("t", 1, 1, b"k", b"v"), ProducerRecord("t", 1, 3, None, b"w",
                                                                                        (("h", None),))]


def test_merge_interleaves_tasks_by_stream_time_and_keeps_each_tasks_order():
    # task 0 emitted at stream times 10, 10, 30; task 1 at 20, 20 (its 2nd record has an older timestamp)
    parts = [_part(1, [(20, 0, 20), (20, 4, 5)]), _part(0, [(10, 0, 10), (10, 1, 7), (30, 5, 30)])]
    merged, keys = merge_by_stream_time("t", 0, parts)
    assert [r.value for r in merged.records()] == [b"0:0", b"0:1", b"1:0", b"1:4", b"0:5"]
    assert [r.timestamp for r in merged.records()] == [10, 7, 20, 5, 30]
    assert keys.tolist() == [(10, 0, 0), (10, 0, 1), (20, 1, 0), (20, 1, 4), (30, 0, 5)]


def test_merge_ties_go_to_the_lower_task_and_a_single_part_is_kept_as_is():
    parts = [_part(2, [(5, 0, 5)]), _part(1, [(5, 3, 5)])]
    merged, _ = merge_by_stream_time("t", 0, parts)
    assert [r.value for r in merged.records()] == [b"1:3", b"2:0"]
    only = _part(4, [(1, 0, 1), (9, 1, 9)])
    merged, keys = merge_by_stream_time("t", 0, [only])
    assert bytes(merged.data) == only[4] and len(merged) == 2 and keys["task"].tolist() == [4, 4]


def test_encoding_by_partition_gives_the_bytes_one_add_per_record_gives():
    """``encode_by_partition`` joins each partition's parts at once; a record it cannot take as it is (bytearray,
    headers as a list) hands the rest to ``add``, which converts or rejects: the bytes must be ``add``'s."""
    import random
    rng = random.Random(9)
    records = []
    for i in range(3000):
        key = rng.choice([None, b"", b"k%d" % rng.randrange(50), bytearray(b"ba")] if i > 2000 else
                         [None, b"", b"k%d" % rng.randrange(50)])
        value = rng.choice([None, b"", rng.randbytes(rng.randrange(30))])
        headers = rng.choice([(), (("h", b"1"),), (("h", None), ("\u00e9", b""))] + ([[("l", b"x")]] if i > 2500 else []))
        records.append(ProducerRecord(f"t{rng.randrange(2)}", rng.randrange(3), rng.randrange(-2**63, 2**63), key,
                                      value, headers))
    expected: dict = {}
    for r in records:
        batch = expected.get((r.topic, r.partition))
        if batch is None:
            batch = expected[(r.topic, r.partition)] = RecordBatch(r.topic, r.partition)
        batch.add(r.timestamp, r.key, r.value, r.headers)
    got = encode_by_partition(records)
    assert [(b.topic, b.partition, bytes(b.data), b.ends_bytes()) for b in got] == [
        (b.topic, b.partition, bytes(b.data), b.ends_bytes()) for b in expected.values()]
    got[0].add(5, b"k", b"v")   # a batch encoded in one join still grows
    assert got[0].records()[-1] == ProducerRecord(got[0].topic, got[0].partition, 5, b"k", b"v", ())
    with pytest.raises(TypeError, match="record key for t-0 must be bytes or None, got str"):
        encode_by_partition([ProducerRecord("t", 0, 1, b"a", b"b"), ProducerRecord("t", 0, 1, "k", b"v")])
    with pytest.raises(ValueError, match="timestamp of a record for t-0 must be an int64"):
        encode_by_partition([ProducerRecord("t", 0, 2**63, b"k", b"v")])


def test_records_grouped_as_produced_give_the_batches_encoding_by_partition_gives():
    """``PartitionedRecords`` (a Spark task's output grouped as its sinks produce it) hands over what
    ``encode_by_partition`` makes of the same records: the same bytes per destination, the same conversions (a
    bytearray, a list of headers, None headers) and the same errors, raised at the drain; a sink's bound buffers
    stay valid across drains."""
    import random
    rng = random.Random(11)
    records = []
    for i in range(2000):
        key = rng.choice([None, b"", b"k%d" % rng.randrange(50)] + ([bytearray(b"ba")] if i > 1500 else []))
        headers = rng.choice([(), None, (("h", b"1"),)] + ([[("l", b"x")]] if i > 1800 else []))
        records.append(ProducerRecord(f"t{rng.randrange(2)}", rng.randrange(3), rng.randrange(-2**63, 2**63), key,
                                      rng.choice([None, b"", rng.randbytes(rng.randrange(30))]), headers))
    grouped = PartitionedRecords()
    buffers = [batch.buffers() for batch in grouped.partition_batches("t0", 3)]
    for round_ in range(2):   # the second round after a drain, through the same buffers
        for r in records:
            if r.topic == "t0" and not r.headers and r.key.__class__ is bytes and r.value.__class__ is bytes:
                data, ends = buffers[r.partition]   # as a fused sink encodes: the prefix, then key and value
                data += PREFIX.pack(r.timestamp, len(r.key), len(r.value), 0)
                data += r.key + r.value
                ends.append(len(data))
            else:
                grouped.append(r)
        assert len(grouped) == len(records) and grouped
        got = sorted(grouped.drain_batches(), key=lambda b: (b.topic, b.partition))
        expected = sorted(encode_by_partition(records), key=lambda b: (b.topic, b.partition))
        assert [(b.topic, b.partition, bytes(b.data), b.ends_bytes()) for b in got] == [
            (b.topic, b.partition, bytes(b.data), b.ends_bytes()) for b in expected]
        assert not grouped and grouped.drain_batches() == []
    grouped.append(ProducerRecord("t", 0, 1, b"a", b"b"))
    grouped.append(ProducerRecord("t", 0, 1, "k", b"v"))
    with pytest.raises(TypeError, match="record key for t-0 must be bytes or None, got str"):
        grouped.drain_batches()
    grouped.append(ProducerRecord("t", 1, 2**63, b"k", b"v"))
    with pytest.raises(ValueError, match="timestamp of a record for t-1 must be an int64"):
        grouped.drain_batches()
    grouped.append(ProducerRecord("t", 2, 5, b"a", b"1"))   # drain_records: the records, destination by destination
    grouped.append(ProducerRecord("u", 0, 6, b"b", b"2", (("h", b"x"),)))
    grouped.append(ProducerRecord("t", 2, 7, b"c", b"3"))
    assert grouped.drain_records() == [ProducerRecord("t", 2, 5, b"a", b"1"), ProducerRecord("t", 2, 7, b"c", b"3"),
                                       ProducerRecord("u", 0, 6, b"b", b"2", (("h", b"x"),))]
    assert not grouped
    grouped.append(ProducerRecord("t", 1, True, b"k", b"v"))   # not an int: converted as add converts it
    (batch,) = grouped.drain_batches()
    (expected_batch,) = encode_by_partition([ProducerRecord("t", 1, True, b"k", b"v")])
    assert bytes(batch.data) == bytes(expected_batch.data) and batch.records()[0].timestamp.__class__ is int


def test_batches_without_headers_encode_to_the_same_bytes():
    """A batch of columns without headers is encoded by ``encode_headerless`` (by Arrow from
    ``VECTOR_MIN_HEADERLESS`` records): the bytes of ``add`` on either side of that size, with nulls, empty keys and
    values, extreme timestamps."""
    import random
    rng = random.Random(4)
    for n in (1, VECTOR_MIN_HEADERLESS - 1, VECTOR_MIN_HEADERLESS, 255, 256, 3000):
        records = [ProducerRecord("t", 0, rng.choice([-2**63, 2**63 - 1, 0, rng.randrange(10**13)]),
                                  rng.choice([None, b"", rng.randbytes(rng.randrange(1, 20))]),
                                  rng.choice([None, b"", rng.randbytes(rng.randrange(1, 200))]), ())
                   for _ in range(n)]
        expected = RecordBatch("t", 0)
        for r in records:
            expected.add(r.timestamp, r.key, r.value, r.headers)
        (got,) = encode_by_partition(records)
        assert bytes(got.data) == bytes(expected.data) and got.ends_bytes() == expected.ends_bytes()
        assert got.records() == records


def arrow_from(partitions: int) -> int:
    """The fewest records :func:`headerless_by_arrow` encodes by Arrow into ``partitions`` partitions."""
    return next(n for n in itertools.count(1) if headerless_by_arrow(n, partitions))


def test_the_arrow_threshold_grows_with_the_destination_partitions():
    """One batch size decides into one partition (``VECTOR_MIN_HEADERLESS``); each further partition moves it up
    (Arrow's work per partition), and nothing below it goes to Arrow."""
    assert arrow_from(1) == VECTOR_MIN_HEADERLESS
    sizes = [arrow_from(p) for p in (1, 2, 8, 64, 128)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[2] < sizes[3] < sizes[4]
    assert not any(headerless_by_arrow(n, p) for p in (1, 8, 128) for n in range(arrow_from(p)))


@pytest.mark.parametrize("partitions", [1, 3, 64])
def test_records_without_headers_encoded_at_once_into_their_partitions_give_the_bytes_of_add(partitions):
    """``encode_headerless`` (record by record below :func:`headerless_by_arrow`'s size for the partitions, by Arrow
    from it) into batches that already hold records: each record in its key's partition in order, the same bytes
    and ends as ``RecordBatch.add`` of each; nulls (a key only at one partition), empty keys and values, extreme
    timestamps."""
    import random
    rng = random.Random(partitions)
    for n in (arrow_from(partitions) - 1, arrow_from(partitions), 2000):
        keys = [rng.choice([None if partitions == 1 else b"", b"", rng.randbytes(rng.randrange(1, 80))])
                for _ in range(n)]
        values = [rng.choice([None, b"", rng.randbytes(rng.randrange(1, 200))]) for _ in range(n)]
        timestamps = [rng.choice([-2**63, 2**63 - 1, 0, rng.randrange(10**13)]) for _ in range(n)]
        got, expected = ([RecordBatch("t", p) for p in range(partitions)] for _ in range(2))
        for batches in (got, expected):
            for p, batch in enumerate(batches):
                batch.add(p, b"held", b"before")
        with mock.patch.object(record_batch, "encode_arrow_headerless",
                               wraps=record_batch.encode_arrow_headerless) as by_arrow:
            encode_headerless([batch.buffers() for batch in got], timestamps, keys, values)
        assert by_arrow.called == (n >= arrow_from(partitions)), n
        for ts, key, value in zip(timestamps, keys, values):
            expected[0 if partitions == 1 else partition_for_key(key, partitions)].add(ts, key, value)
        assert [(bytes(b.data), b.ends_bytes()) for b in got] == [(bytes(b.data), b.ends_bytes()) for b in expected]


def test_batches_of_some_size_decode_by_arrow_to_the_columns_of_the_record_loop():
    """``parse_records`` given the batch's ends (what ``RecordBatch.columns`` and a Spark task's input do) decodes a
    batch of 256 records or more by Arrow: the same timestamps, keys, values (bytes, nulls, empty) and headers as
    the record loop; a batch with headers or whose lengths do not add up goes the loop's way (its error)."""
    import random
    rng = random.Random(5)
    for trial in range(60):
        n = rng.choice([256, 257, 1000, 3000])
        timestamps = [rng.choice([-2**63, 2**63 - 1, 0, rng.randrange(-2**63, 2**63)]) for _ in range(n)]
        keys = [rng.choice([None, b"", rng.randbytes(rng.randrange(1, 40))]) for _ in range(n)]
        values = [rng.choice([None, b"", rng.randbytes(rng.randrange(1, 40))]) for _ in range(n)]
        headers = [()] * n
        if trial % 3 == 0:
            headers[rng.randrange(n)] = (("h", b"x"), ("n", None))
        batch = RecordBatch.of_columns("t", 0, timestamps, keys, values, headers)
        data, ends = bytes(batch.data), batch.ends
        decoded = parse_records(data, n, ends)
        assert decoded == parse_records(data, n) == (timestamps, keys, values, headers)
        assert RecordBatch.from_bytes("t", 0, data, batch.ends_bytes()).columns() == decoded
        assert {k.__class__ for k in decoded[1] + decoded[2]} <= {bytes, type(None)}
    for corrupt in (data[:-1], data[:8] + (40).to_bytes(4, "little") + data[12:]):   # short; a key's length off
        with pytest.raises(Exception) as by_loop:
            parse_records(corrupt, n)
        with pytest.raises(type(by_loop.value), match=re.escape(str(by_loop.value))):
            parse_records(corrupt, n, ends)

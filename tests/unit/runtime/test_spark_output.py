"""What a task on Spark hands its sink: record batches per destination with each record's merge key."""
from __future__ import annotations

from array import array

import streams_on_spark.runtime.spark.output as spark_output
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.records import ProducerRecord
from streams_on_spark.runtime.spark.output import returned_rows


def _decode(row: tuple) -> tuple:
    topic, partition, task, stamps, seqs, ends, data = row
    records = RecordBatch.from_bytes(topic, partition, data, ends).records()
    return topic, partition, task, array("q", stamps).tolist(), array("q", seqs).tolist(), records


def test_one_batch_per_destination_with_running_stream_time_and_output_positions():
    out = [ProducerRecord("rep", 1, 30, b"a", b"1", ()), ProducerRecord("out", 0, 10, b"b", b"2", ()),
           ProducerRecord("rep", 1, 20, b"c", b"3", (("h", b"x"),)), ProducerRecord("rep", 0, 40, None, b"4", ())]
    rows = [_decode(row) for row in returned_rows(out, task=3)]
    assert [(t, p, task, stamps, seqs, [r.value for r in recs]) for t, p, task, stamps, seqs, recs in rows] == [
        ("rep", 1, 3, [30, 30], [0, 2], [b"1", b"3"]),
        ("out", 0, 3, [30], [1], [b"2"]),          # emitted when the task's stream time was already 30
        ("rep", 0, 3, [40], [3], [b"4"]),
    ]
    assert rows[0][5][1] == out[2]              # timestamps and headers travel inside the batch
    assert returned_rows([], task=0) == []


def test_a_destination_is_split_into_several_rows_when_large(monkeypatch):
    monkeypatch.setattr(spark_output, "_MAX_PART_BYTES", 50)
    out = [ProducerRecord("t", 0, i, b"key", b"value", ()) for i in range(5)]   # 28 bytes each
    rows = [_decode(row) for row in returned_rows(out, task=0)]
    assert [seqs for *_, seqs, _ in rows] == [[0, 1], [2, 3], [4]]
    assert [r for *_, recs in rows for r in recs] == out

"""What the Spark task function reads: Spark's Kafka source rows (one per record, in no order), packed into record
batches before the shuffle, become the task's input per topic-partition in offset order, with their offsets,
timestamps and headers; no Spark needed."""
from __future__ import annotations

import random

import pyarrow as pa

from streams_on_spark import Processor, Record, Serdes, Topology
from streams_on_spark.config import TaskConfig
from streams_on_spark.runtime.spark.kafka_rows import pack_batch, pack_kafka_rows
from streams_on_spark.record_batch import RecordBatch, _encode_headers, parse_records
from streams_on_spark.runtime.spark.output import ReturnedOutput
from streams_on_spark.runtime.spark.task_function import SubtopologyTaskFunction
from streams_on_spark.topology.partitions import TopicLayout

SEEN: list[tuple] = []


def kafka_rows(rows: list[tuple]) -> pa.RecordBatch:
    """An Arrow batch as ``select_kafka_rows`` selects it from Spark's Kafka source rows (topic, partition, offset,
    timestamp, key, value, headers: null or a list of {key, value}): the headers' count and their record batch
    encoding, which tests/integration/spark/test_kafka_rows.py checks the JVM computes byte for byte."""
    columns = list(zip(*rows))
    headers = [[(h["key"], h["value"]) for h in hs or ()] for hs in columns[6]]
    return pa.RecordBatch.from_arrays(
        [pa.array(columns[0], pa.string()), pa.array(columns[1], pa.int32()), pa.array(columns[2], pa.int64()),
         pa.array(columns[3], pa.int64()), pa.array(columns[4], pa.binary()), pa.array(columns[5], pa.binary()),
         pa.array([len(hs) for hs in headers], pa.int32()),
         pa.array([_encode_headers(hs, "t", 0) if hs else None for hs in headers], pa.binary())],
        names=["topic", "partition", "offset", "timestamp", "key", "value", "header_count", "headers"])


class Remember(Processor):
    def init(self, context) -> None:
        self.context = context

    def process(self, record: Record) -> None:
        meta = self.context.record_metadata()
        SEEN.append((meta.topic, meta.partition, meta.offset, record.timestamp, record.key, record.headers))


def test_kafka_rows_are_queued_per_partition_in_offset_order_with_their_metadata():
    topology = (Topology().add_source("src", "in", key_serde=Serdes.ByteArray(), value_serde=Serdes.ByteArray())
                .add_processor("remember", Remember, "src"))
    builder = topology.internal_builder
    layout = TopicLayout.of(builder, "app", {"in": 2})
    fn = SubtopologyTaskFunction(builder, 0, TaskConfig.from_config({"application.id": "app"}), layout,
                                 ReturnedOutput())
    rows = [  # (partition, offset, timestamp, key, headers): shuffled, a gap in partition 0's offsets
        ("in", 0, 7, 30, b"c", b"v", None), ("in", 1, 0, 5, b"x", b"v", [{"key": "h", "value": b"1"}]),
        ("in", 0, 3, 10, b"a", b"v", []), ("in", 0, 4, 20, b"b", b"v", None)]
    frame = pack_batch(kafka_rows(rows)).to_pandas()
    assert len(frame) == 3   # a row per run of consecutive offsets of one partition: (0: 7), (1: 0), (0: 3, 4)
    SEEN.clear()
    task = fn.new_task(0, None)
    positions: dict = {}
    batch = fn.execution.batch(task, frozenset())
    assert fn._add_batch(batch, [frame], positions) == []
    assert positions == {("in", 0): 8, ("in", 1): 1}   # the offset after the last record read per partition
    batch.process()
    assert SEEN == [("in", 1, 0, 5, b"x", (("h", b"1"),)), ("in", 0, 3, 10, b"a", ()), ("in", 0, 4, 20, b"b", ()),
                    ("in", 0, 7, 30, b"c", ())]


def test_packing_keeps_every_record_with_nulls_headers_and_offset_gaps():
    rng = random.Random(11)
    rows = []
    for topic in ("a", "b"):
        for partition in range(3):
            offset = rng.randrange(100)
            for _ in range(rng.randrange(60)):
                offset += 1 if rng.random() < 0.9 else rng.randrange(2, 5)   # transaction markers, compaction
                key = None if rng.random() < 0.1 else rng.randbytes(rng.randrange(6))
                value = None if rng.random() < 0.1 else rng.randbytes(rng.randrange(9))
                headers = None if rng.random() < 0.5 else [
                    {"key": f"h{j}é", "value": None if rng.random() < 0.3 else b"x" * j} for j in range(rng.randrange(3))]
                rows.append((topic, partition, offset, rng.randrange(-5, 10 ** 12), key, value, headers))
    packed = list(pack_kafka_rows(iter([kafka_rows(rows[:70]), kafka_rows(rows[70:])])))
    got = []
    for batch in packed:
        assert batch.schema.names == ["topic", "partition", "offset", "ends", "data"]
        for topic, partition, offset, ends, data in zip(*(batch.column(c).to_pylist() for c in batch.schema.names)):
            records = RecordBatch.from_bytes(topic, partition, data, ends)
            for i, record in enumerate(zip(*parse_records(records.data, len(records)))):
                got.append((topic, partition, offset + i, *record))
    assert got == [(t, p, o, ts, k, v, tuple((h["key"], h["value"]) for h in hs or ()))
                   for t, p, o, ts, k, v, hs in rows]

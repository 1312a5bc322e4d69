"""Spark's Kafka source rows as the runtime packs them (``select_kafka_rows`` in the JVM, then ``pack_kafka_rows``):
the headers encoded by Spark SQL are the record batch's own encoding, byte for byte, and every record comes out with
its timestamp, key, value and headers; rows built with the Kafka source's schema, no broker needed."""
from __future__ import annotations

import datetime
import random

import pytest

from streams_on_spark.runtime.spark.kafka_rows import PACKED_SCHEMA, pack_kafka_rows, select_kafka_rows
from streams_on_spark.record_batch import RecordBatch, parse_records

pytestmark = pytest.mark.spark

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def kafka_source_schema():
    from pyspark.sql import types as T
    header = T.StructType([T.StructField("key", T.StringType()), T.StructField("value", T.BinaryType())])
    return T.StructType([
        T.StructField("key", T.BinaryType()), T.StructField("value", T.BinaryType()),
        T.StructField("topic", T.StringType()), T.StructField("partition", T.IntegerType()),
        T.StructField("offset", T.LongType()), T.StructField("timestamp", T.TimestampType()),
        T.StructField("timestampType", T.IntegerType()), T.StructField("headers", T.ArrayType(header))])


def test_headers_encoded_in_the_jvm_come_out_as_the_record_batch_encodes_them(spark_session):
    rng = random.Random(5)
    rows, want = [], []
    for offset in range(400):
        headers = None if rng.random() < 0.3 else [
            (rng.choice(["h", "é", "日本", "", "k" * 300]),
             None if rng.random() < 0.3 else rng.randbytes(rng.choice([0, 1, 5, 300, 70_000])))
            for _ in range(rng.randrange(3))]   # null, empty and non-empty arrays; null and empty values
        key = None if offset % 11 == 0 else rng.randbytes(rng.randrange(5))
        value = None if offset % 7 == 0 else rng.randbytes(rng.randrange(9))
        millis = rng.randrange(0, 10 ** 12)
        partition = offset % 3
        rows.append((key, value, "t", partition, offset, EPOCH + datetime.timedelta(milliseconds=millis), 0, headers))
        want.append((partition, offset, millis, key, value, tuple(headers or ())))
    frame = spark_session.createDataFrame(rows, kafka_source_schema()).repartition(2)
    got = []
    for row in select_kafka_rows(frame).mapInArrow(pack_kafka_rows, PACKED_SCHEMA).collect():
        batch = RecordBatch.from_bytes(row.topic, row.partition, bytes(row.data), bytes(row.ends))
        for i, record in enumerate(zip(*parse_records(batch.data, len(batch)))):
            got.append((row.partition, row.offset + i, *record))
    assert sorted(got, key=lambda r: r[1]) == want
    assert sum(1 for r in want if r[5]) > 150   # the headers were exercised

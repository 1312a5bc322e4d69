"""KafkaConnector against the test broker: topic admin, append, and Spark's Kafka source and sink."""
from __future__ import annotations

import time

import pytest

from streams_on_spark.connectors.kafka import KafkaConnector
from streams_on_spark.record_batch import RecordBatch, parse_records
from streams_on_spark.records import ProducerRecord
from streams_on_spark.runtime.spark.sources import read_topics

pytestmark = pytest.mark.kafka

QUERY_TIMEOUT_S = 180


@pytest.fixture
def connector(kafka_bootstrap):
    with KafkaConnector(kafka_bootstrap, {"client.id": "connector-test"}, timeout_ms=10000) as c:
        yield c


def _records(topic: str, partitions: int, n: int) -> list[ProducerRecord]:
    base = 1_700_000_000_000
    return [ProducerRecord(topic, i % partitions, base + 7 * i, f"k{i}".encode(), f"v{i}-é".encode(),
                           (("trace", f"t{i}".encode()), ("idx", str(i).encode())) if i % 3 == 0 else ())
            for i in range(n)]


def test_topic_admin(connector, topic_name):
    assert topic_name not in connector.topics()
    with pytest.raises(ValueError, match="unknown topic"):
        connector.partitions(topic_name)
    connector.create_topic(topic_name, 4)
    connector.create_topic(topic_name, 4)  # idempotent for the same count
    with pytest.raises(ValueError, match=f"{topic_name} already exists with 4 partitions, cannot create it with 2"):
        connector.create_topic(topic_name, 2)
    with pytest.raises(ValueError, match="int >= 1"):
        connector.create_topic(topic_name + "-x", 0)
    assert connector.partitions(topic_name) == 4
    assert connector.topics()[topic_name] == 4
    assert not any(t.startswith("__") for t in connector.topics())  # internal topics are not listed
    assert connector.end_offsets(topic_name) == [0, 0, 0, 0]


def test_created_topics_get_the_brokers_default_replication_or_the_one_asked_for(kafka_bootstrap, topic_name):
    with KafkaConnector(kafka_bootstrap, {}, timeout_ms=10000) as default:
        default.create_topic(topic_name, 2)   # -1: the broker's default.replication.factor (1 on the test broker)
        [described] = default._admin().describe_topics([topic_name])
        assert [len(p["replica_nodes"]) for p in described["partitions"]] == [1, 1]
    with KafkaConnector(kafka_bootstrap, {}, timeout_ms=10000, replication_factor=2) as replicated:
        with pytest.raises(Exception, match=rf"cannot create topic {topic_name}-2 .*InvalidReplicationFactor"):
            replicated.create_topic(topic_name + "-2", 2)


def test_append_writes_partitions_timestamps_and_headers(connector, read_topic, topic_name):
    connector.create_topic(topic_name, 3)
    records = _records(topic_name, 3, 30)
    connector.append(records)
    connector.append([])
    assert connector.end_offsets(topic_name) == [10, 10, 10]
    got = read_topic(topic_name, 3)
    want = sorted(records, key=lambda r: (r.partition, r.timestamp))
    assert [(r.partition, r.timestamp, r.key, r.value, tuple(r.headers)) for r in got] == \
        [(r.partition, r.timestamp, r.key, r.value, r.headers) for r in want]
    assert [r.offset for r in got if r.partition == 1] == list(range(10))


def test_append_errors_name_the_topic(connector, topic_name):
    connector.create_topic(topic_name, 2)
    with pytest.raises(Exception, match=f"{topic_name}-5"):
        connector.append([ProducerRecord(topic_name, 5, 1, b"k", b"v")])


@pytest.mark.spark
def test_spark_source_reads_what_append_wrote(kafka_bootstrap, kafka_spark, topic_name, tmp_path):
    spark = kafka_spark
    with KafkaConnector(kafka_bootstrap, {"client.id": "spark-source-test"}) as connector:
        connector.create_topic(topic_name, 3)
        records = _records(topic_name, 3, 60)
        connector.append(records)
        # records kafka-python could not encode (null key AND value; a null header value) are fine in a batch
        odd = [ProducerRecord(topic_name, 2, 42, None, None, (("nullable", None), ("x", b""))),
               ProducerRecord(topic_name, 0, 43, b"only-key", None)]
        connector.append(odd)
        assert connector.end_offsets(topic_name) == [21, 20, 21]

        assert connector.reader_options([topic_name])[0] == "kafka"
        frame = read_topics(spark, connector, [topic_name])   # the runtime's read: the source's rows packed
        assert frame.schema.simpleString() == ("struct<topic:string,partition:int,offset:bigint,ends:binary,"
                                               "data:binary>")   # record batches: runs of consecutive offsets
        rows: list = []
        query = (frame.writeStream.foreachBatch(lambda batch, _: rows.extend(batch.collect()))
                 .trigger(availableNow=True).option("checkpointLocation", str(tmp_path / "checkpoint")).start())
        try:
            assert query.awaitTermination(QUERY_TIMEOUT_S), "the availableNow query did not finish"
        finally:
            query.stop()

    got = []
    for row in rows:
        batch = RecordBatch.from_bytes(row.topic, row.partition, bytes(row.data), bytes(row.ends))
        got.extend((row.topic, row.partition, row.offset + i, ts, key, value, headers)
                   for i, (ts, key, value, headers) in enumerate(zip(*parse_records(batch.data, len(batch)))))
    got.sort(key=lambda t: (t[1], t[2]))
    by_partition: dict[int, list[ProducerRecord]] = {}
    for r in records + odd:
        by_partition.setdefault(r.partition, []).append(r)
    want = sorted(((r.topic, r.partition, offset, r.timestamp, r.key, r.value, r.headers)
                   for p, rs in by_partition.items() for offset, r in enumerate(rs)), key=lambda t: (t[1], t[2]))
    assert got == want


@pytest.mark.spark
def test_spark_batch_sink_writes_explicit_partitions_and_headers(kafka_bootstrap, kafka_spark, read_topic,
                                                                topic_name):
    """Spark's own Kafka sink works with the resolved jars; it keeps partitions and headers but not timestamps
    (spark-sql-kafka's KafkaRowWriter sets none), which is why KafkaConnector.append does not use it."""
    spark = kafka_spark
    with KafkaConnector(kafka_bootstrap, {}) as connector:
        connector.create_topic(topic_name, 3)
    rows = [(topic_name, i % 3, f"k{i}".encode(), f"v{i}".encode(), [("h", str(i).encode())]) for i in range(12)]
    before = int(time.time() * 1000)
    (spark.createDataFrame(rows, "topic string, partition int, key binary, value binary, "
                                 "headers array<struct<key:string,value:binary>>")
     .write.format("kafka").option("kafka.bootstrap.servers", kafka_bootstrap).save())
    got = read_topic(topic_name, 3)
    assert sorted((r.partition, r.key, r.value, tuple(r.headers)) for r in got) == \
        sorted((p, k, v, (("h", h[0][1]),)) for _, p, k, v, h in rows)
    assert all(r.timestamp >= before for r in got)  # wall-clock time: the row's own timestamp cannot be passed

"""The "embedded-topics" Spark streaming source: Kafka-source semantics, incremental runs and replay after failure."""
from __future__ import annotations

import pytest

from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.connectors.embedded_connector import EmbeddedTopicsConnector
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.runtime.spark.embedded_source import SMALL_BATCH_RECORDS, register
from streams_on_spark.runtime.spark.sources import read_topics
from streams_on_spark.records import ProducerRecord

pytestmark = pytest.mark.spark

QUERY_TIMEOUT_S = 120


@pytest.fixture(scope="module")
def spark(spark):
    """The suite's session (tests/conftest.py) with the source registered; registering twice is harmless."""
    register(spark)
    register(spark)
    return spark


@pytest.fixture
def topics():
    with EmbeddedTopics() as t:
        t.create_topic("t1", 3)
        t.create_topic("t2", 3)
        yield t


def _produce(topics: EmbeddedTopics, records: list[ProducerRecord]) -> set[tuple]:
    """Append ``records``; return them as the rows the source must produce (with their offsets)."""
    offsets = topics.append(records)
    return {(r.topic, r.partition, o, r.timestamp, r.key, r.value, tuple(r.headers)) for r, o in zip(records, offsets)}


def _records(tag: str, n: int) -> list[ProducerRecord]:
    """``n`` records spread over t1/t2 and their partitions, with null/empty keys and values and headers."""
    out = []
    for i in range(n):
        key = None if i % 7 == 0 else b"" if i % 11 == 0 else f"{tag}-k{i}".encode()
        value = None if i % 13 == 0 else f"{tag}-v{i}".encode()
        headers = (("i", str(i).encode()), ("null", None)) if i % 5 == 0 else ()
        out.append(ProducerRecord("t1" if i % 2 else "t2", i % 3, 1_700_000_000_000 + i, key, value, headers))
    return out


def _row(row) -> tuple:
    """A collected Spark row as the tuple ``_produce`` returns (binary arrives as bytearray)."""
    as_bytes = lambda b: None if b is None else bytes(b)  # noqa: E731
    headers = tuple((h["key"], as_bytes(h["value"])) for h in row["headers"])
    return (row["topic"], row["partition"], row["offset"], row["timestamp"], as_bytes(row["key"]), as_bytes(row["value"]), headers)


def _run(spark, topics: EmbeddedTopics, checkpoint: str, on_batch, **options: str):
    """Run one availableNow query over t1,t2 into ``on_batch(batch_id, rows)``; return the finished query."""
    reader = spark.readStream.format("embedded-topics").option("path", topics.root).option("topics", "t1,t2")
    for name, value in options.items():
        reader = reader.option(name, value)
    query = (
        reader.load()
        .writeStream.foreachBatch(lambda df, batch_id: on_batch(batch_id, [_row(r) for r in df.collect()]))
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(QUERY_TIMEOUT_S), "query did not finish"
    return query


def test_available_now_reads_exactly_the_appended_records_then_only_new_ones(spark, topics, tmp_path):
    checkpoint = str(tmp_path / "checkpoint")
    batches: list[tuple[int, list[tuple]]] = []
    expected = _produce(topics, _records("a", 60))

    _run(spark, topics, checkpoint, lambda batch_id, rows: batches.append((batch_id, rows)))
    assert [b for b, _ in batches] == [0]
    rows = batches[0][1]
    assert len(rows) == 60 and set(rows) == expected
    assert {(r[0], r[1]) for r in rows} == {(t, p) for t in ("t1", "t2") for p in range(3)}
    assert ("t2", 0, 0, 1_700_000_000_000, None, None, (("i", b"0"), ("null", None))) in rows
    for t in ("t1", "t2"):  # offsets of each partition are gap-free from 0
        for p in range(3):
            assert sorted(r[2] for r in rows if r[:2] == (t, p)) == list(range(10))

    more = _produce(topics, _records("b", 9) + [ProducerRecord("t1", 0, 5, b"late", b"x", ())])
    _run(spark, topics, checkpoint, lambda batch_id, rows: batches.append((batch_id, rows)))
    assert [b for b, _ in batches] == [0, 1]
    assert len(batches[1][1]) == 10 and set(batches[1][1]) == more
    assert min(r[2] for r in batches[1][1]) == 10  # resumed from the committed offsets, not from 0

    _run(spark, topics, checkpoint, lambda batch_id, rows: batches.append((batch_id, rows)))
    assert [b for b, _ in batches] == [0, 1]  # nothing new: no batch at all


def test_a_failed_batch_is_replayed_on_the_same_offsets(spark, topics, tmp_path):
    checkpoint = str(tmp_path / "checkpoint")
    expected = _produce(topics, _records("c", 60))
    attempts: list[tuple[int, list[tuple]]] = []

    def fail_batch_1_once(batch_id: int, rows: list[tuple]) -> None:
        attempts.append((batch_id, rows))
        if batch_id == 1 and [b for b, _ in attempts].count(1) == 1:
            raise RuntimeError("simulated sink failure in batch 1")

    # maxOffsetsPerTrigger splits the 60 records into 3 batches of <= 25 rows
    with pytest.raises(Exception, match="simulated sink failure in batch 1"):
        _run(spark, topics, checkpoint, fail_batch_1_once, maxOffsetsPerTrigger="25")
    assert [b for b, _ in attempts] == [0, 1]

    _produce(topics, _records("d", 6))  # arrives while the query is down: the replay must not include it
    _run(spark, topics, checkpoint, fail_batch_1_once, maxOffsetsPerTrigger="25")
    assert [b for b, _ in attempts][:3] == [0, 1, 1]
    failed, replayed = attempts[1][1], attempts[2][1]
    assert sorted(replayed) == sorted(failed) and 0 < len(replayed) <= 25  # same offset range, same rows
    done = [rows for b, rows in attempts[:1] + attempts[2:]]
    assert all(len(rows) <= 25 for rows in done)
    delivered = [r for rows in done for r in rows]
    assert len(delivered) == len(set(delivered)) == 66  # every record exactly once over the successful batches
    assert expected <= set(delivered)


def test_a_batch_past_the_small_batch_size_is_read_in_one_wave_of_tasks_each_taking_whole_partitions(spark, tmp_path):
    """The runtime's read of a 4-partition topic (``read_topics``: ``maxPartitions`` is the session's default
    parallelism) in a batch of more than ``SMALL_BATCH_RECORDS`` records, which is not read by one task: every
    record once, in offset order within its partition, and the topic-partitions grouped into as many tasks as the
    session has cores (told by each row's Spark partition), each topic-partition's range read by one of them."""
    from pyspark.sql.functions import spark_partition_id
    cores = spark.sparkContext.defaultParallelism
    assert 1 < cores < 4, "the suite's session has 2 cores: fewer than the topic's partitions, so they are grouped"
    records = [ProducerRecord("big", i % 4, 1_700_000_000_000 + i, f"k{i}".encode(), f"v{i}".encode(), ())
               for i in range(SMALL_BATCH_RECORDS + 904)]
    batches: list[list] = []
    with EmbeddedTopics() as topics:
        topics.create_topic("big", 4)
        topics.append(records)
        query = (read_topics(spark, EmbeddedTopicsConnector(topics), ["big"])
                 .writeStream.foreachBatch(lambda df, _: batches.append(
                     df.select(spark_partition_id().alias("task"), "*").collect()))
                 .option("checkpointLocation", str(tmp_path / "checkpoint"))
                 .trigger(availableNow=True)
                 .start())
        assert query.awaitTermination(QUERY_TIMEOUT_S), "query did not finish"
    assert len(batches) == 1
    read: dict[int, list[ProducerRecord]] = {}
    tasks: dict[int, set[int]] = {}
    for row in sorted(batches[0], key=lambda r: (r["partition"], r["offset"])):
        assert row["offset"] == len(read.get(row["partition"], []))   # each row's records follow the last row's
        batch = RecordBatch.from_bytes(row["topic"], row["partition"], bytes(row["data"]), bytes(row["ends"]))
        read.setdefault(row["partition"], []).extend(batch.records())
        tasks.setdefault(row["task"], set()).add(row["partition"])
    assert read == {p: [r for r in records if r.partition == p] for p in range(4)}
    assert len(tasks) == cores   # one per topic-partition would be 4 tasks; one for a small batch, 1
    assert sorted(p for partitions in tasks.values() for p in partitions) == [0, 1, 2, 3]   # each read whole, once

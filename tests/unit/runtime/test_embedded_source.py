"""The embedded topics' Spark data source (``embedded-topics``, runtime/spark/embedded_source.py) without a JVM: how
its stream reader plans partitions and offsets, reads record batches and takes its options. Reading through Spark:
tests/integration/spark/test_embedded_source.py."""
from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.connectors.embedded_connector import EmbeddedTopicsConnector
from streams_on_spark.runtime.spark.embedded_source import (
    BATCH_SCHEMA,
    SCHEMA,
    EmbeddedTopicPartition,
    EmbeddedTopicRanges,
    EmbeddedTopicsDataSource,
    EmbeddedTopicsStreamReader,
)
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.runtime.spark import embedded_source
from streams_on_spark.records import ProducerRecord
from pyspark.sql.datasource import CaseInsensitiveDict
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows, SupportsTriggerAvailableNow
from tests.unit.connectors.embedded_records import records as _records


@pytest.fixture
def topics(tmp_path):
    with EmbeddedTopics(tmp_path / "topics") as t:
        yield t


# ---------------------------------------------------------------------------- Spark source planning (no JVM)


def _reader(root: str, **options: str) -> EmbeddedTopicsStreamReader:
    # Spark passes options as a CaseInsensitiveDict, which lower-cases the keys (maxOffsetsPerTrigger -> maxoffsetspertrigger)
    reader = EmbeddedTopicsDataSource(CaseInsensitiveDict({"path": root, **options})).streamReader(SCHEMA)
    assert isinstance(reader, EmbeddedTopicsStreamReader)
    return reader


def _ranges(planned) -> list[tuple[str, int, int, int]]:
    """(topic, partition, start, end) of every range the planned input partitions read, in order."""
    ranges = [r for p in planned for r in (p.ranges if isinstance(p, EmbeddedTopicRanges) else (p,))]
    return [(r.topic, r.partition, r.start, r.end) for r in ranges]


def test_stream_reader_plans_one_partition_per_topic_partition_with_new_records(topics, monkeypatch):
    monkeypatch.setattr(embedded_source, "SMALL_BATCH_RECORDS", 6)   # 7 new records: not a small batch
    topics.create_topic("a", 3)
    topics.create_topic("b", 1)
    topics.append(_records("a", 0, 4) + _records("a", 2, 2) + _records("b", 0, 1))
    reader = _reader(topics.root, topics="a, b")
    assert EmbeddedTopicsDataSource.name() == "embedded-topics"
    assert isinstance(reader, SupportsTriggerAvailableNow)
    start = reader.initialOffset()
    assert start == {"a": {"0": 0, "1": 0, "2": 0}, "b": {"0": 0}}
    end = reader.latestOffset()
    assert end == reader.latestOffset(start, ReadAllAvailable()) == {"a": {"0": 4, "1": 0, "2": 2}, "b": {"0": 1}}
    planned = reader.partitions(start, end)
    assert [(p.topic, p.partition, p.start, p.end) for p in planned] == [("a", 0, 0, 4), ("a", 2, 0, 2), ("b", 0, 0, 1)]
    assert reader.partitions(end, end) == []
    copy = pickle.loads(pickle.dumps(planned[0]))
    assert (copy.root, copy.topic, copy.partition, copy.start, copy.end) == (topics.root, "a", 0, 0, 4)
    with pytest.raises(ValueError, match="a-0: start offset 5 is after end offset 4"):
        reader.partitions({"a": {"0": 5}}, end)


def test_a_small_batch_is_one_input_partition_reading_every_range_in_order(topics, monkeypatch):
    """A micro-batch of a few records spread over topic-partitions is one Spark task, not one per topic-partition
    (each a Python worker call: the fixed cost of a downstream query's batch)."""
    monkeypatch.setattr(embedded_source, "SMALL_BATCH_RECORDS", 7)
    topics.create_topic("a", 3)
    topics.create_topic("b", 1)
    topics.append(_records("a", 0, 4) + _records("a", 2, 2) + _records("b", 0, 1))
    reader = _reader(topics.root, topics="a, b")
    start, end = reader.initialOffset(), reader.latestOffset()
    planned = reader.partitions(start, end)
    assert len(planned) == 1 and isinstance(planned[0], EmbeddedTopicRanges)
    assert _ranges(planned) == [("a", 0, 0, 4), ("a", 2, 0, 2), ("b", 0, 0, 1)]
    copy = pickle.loads(pickle.dumps(planned[0]))   # Spark ships input partitions pickled
    rows = pa.Table.from_batches(list(pickle.loads(pickle.dumps(reader)).read(copy))).to_pylist()
    assert [(r["topic"], r["partition"], r["offset"]) for r in rows] == (
        [("a", 0, o) for o in range(4)] + [("a", 2, o) for o in range(2)] + [("b", 0, 0)])
    # one topic-partition, or more records than a small batch: as before
    assert _ranges(reader.partitions(start, {"a": {"0": 4, "1": 0, "2": 0}, "b": {"0": 0}})) == [("a", 0, 0, 4)]
    topics.append(_records("a", 1, 1))
    assert [type(p) for p in reader.partitions(start, reader.latestOffset())] == [EmbeddedTopicPartition] * 4


def test_max_partitions_groups_the_ranges_into_that_many_tasks_of_about_equal_records(topics, monkeypatch):
    """``maxPartitions`` (the application's cores, from the runtime): a batch over more topic-partitions is read by
    that many input partitions, each reading its ranges whole, in order; the largest range first to the group with
    the fewest records."""
    monkeypatch.setattr(embedded_source, "SMALL_BATCH_RECORDS", 2)
    topics.create_topic("a", 4)
    topics.append(_records("a", 0, 5) + _records("a", 1, 3) + _records("a", 2, 2) + _records("a", 3, 1))
    reader = _reader(topics.root, topics="a", maxPartitions="2")
    start, end = reader.initialOffset(), reader.latestOffset()
    planned = [pickle.loads(pickle.dumps(p)) for p in reader.partitions(start, end)]   # shipped pickled
    assert [_ranges([p]) for p in planned] == [[("a", 0, 0, 5), ("a", 3, 0, 1)], [("a", 1, 0, 3), ("a", 2, 0, 2)]]
    rows = pa.Table.from_batches(list(reader.read(planned[1]))).to_pylist()
    assert [(r["partition"], r["offset"]) for r in rows] == [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1)]
    # as many topic-partitions as tasks, or no limit: one input partition each
    assert [type(p) for p in _reader(topics.root, topics="a", maxPartitions="4").partitions(start, end)] == (
        [EmbeddedTopicPartition] * 4)
    assert len(_reader(topics.root, topics="a").partitions(start, end)) == 4
    with pytest.raises(ValueError, match="maxPartitions must be >= 1, got '0'"):
        _reader(topics.root, topics="a", maxPartitions="0")


def test_stream_reader_read_yields_arrow_batches_in_offset_order(topics):
    topics.create_topic("a", 2)
    topics.append(_records("a", 1, 6) + [ProducerRecord("a", 1, 77, None, None, (("h", b"v"), ("n", None)))])
    reader = pickle.loads(pickle.dumps(_reader(topics.root, topics="a")))  # Spark ships a pickled reader
    batches = list(reader.read(EmbeddedTopicPartition(topics.root, "a", 1, 4, 7)))
    table = pa.Table.from_batches(batches)
    assert table.schema.names == SCHEMA.fieldNames()
    assert table.to_pylist() == [
        {"topic": "a", "partition": 1, "offset": 4, "timestamp": 1004, "key": b"k4", "value": b"r4", "headers": []},
        {"topic": "a", "partition": 1, "offset": 5, "timestamp": 1005, "key": b"k5", "value": b"r5", "headers": []},
        {"topic": "a", "partition": 1, "offset": 6, "timestamp": 77, "key": None, "value": None,
         "headers": [{"key": "h", "value": b"v"}, {"key": "n", "value": None}]},
    ]
    # pyspark's own converter accepts the batches (it checks the Arrow schema exactly)
    from pyspark.sql.worker.plan_data_source_read import records_to_arrow_batches

    source = EmbeddedTopicsDataSource({"path": topics.root, "topics": "a"})
    checked = list(records_to_arrow_batches(reader.read(EmbeddedTopicPartition(topics.root, "a", 1, 0, 7)), 100, SCHEMA, source))
    assert sum(b.num_rows for b in checked) == 7


def test_available_now_freezes_the_target_and_read_limits_cap_batches(topics):
    topics.create_topic("a", 2)
    topics.append(_records("a", 0, 10) + _records("a", 1, 30))
    reader = _reader(topics.root, topics="a", maxOffsetsPerTrigger="8")
    assert reader.getDefaultReadLimit() == ReadMaxRows(8)
    reader.prepareForTriggerAvailableNow()
    topics.append(_records("a", 0, 5))  # arrives after the query started: not part of this run
    start = reader.initialOffset()
    first = reader.latestOffset(start, ReadMaxRows(8))
    assert first == {"a": {"0": 2, "1": 6}}  # proportional to the backlog (10 vs 30)
    assert reader.latestOffset(start, ReadAllAvailable()) == {"a": {"0": 10, "1": 30}}
    offset, batches = start, 0
    while True:
        nxt = reader.latestOffset(offset, ReadMaxRows(8))
        if nxt == offset:
            break
        assert sum(end - start for _, _, start, end in _ranges(reader.partitions(offset, nxt))) <= 8
        offset, batches = nxt, batches + 1
    assert offset == {"a": {"0": 10, "1": 30}} and batches == 5


def test_starting_offsets_and_option_errors(topics):
    topics.create_topic("a", 2)
    topics.append(_records("a", 0, 3) + _records("a", 1, 5))
    assert _reader(topics.root, topics="a", startingOffsets="latest").initialOffset() == {"a": {"0": 3, "1": 5}}
    plain = EmbeddedTopicsStreamReader({"path": topics.root, "topics": "a", "startingOffsets": "latest"})
    assert plain.initialOffset() == {"a": {"0": 3, "1": 5}}
    assert _reader(topics.root, topics="a", startingOffsets='{"a": {"0": 1, "1": -1}}').initialOffset() == {"a": {"0": 1, "1": 5}}
    with pytest.raises(ValueError, match="startingOffsets for a-0 is 9, outside"):
        _reader(topics.root, topics="a", startingOffsets='{"a": {"0": 9}}').initialOffset()
    with pytest.raises(ValueError, match="startingOffsets must be"):
        _reader(topics.root, topics="a", startingOffsets="first").initialOffset()
    with pytest.raises(ValueError, match="unknown topic 'missing'"):
        _reader(topics.root, topics="a,missing")
    with pytest.raises(ValueError, match='needs option "topics"'):
        _reader(topics.root)
    with pytest.raises(ValueError, match='needs option "path"'):
        EmbeddedTopicsDataSource({"topics": "a"}).streamReader(SCHEMA)


def test_batches_layout_yields_one_row_per_chunk_capped_in_bytes(topics, monkeypatch):
    import streams_on_spark.runtime.spark.embedded_source as embedded
    topics.create_topic("a", 1)
    topics.append(_records("a", 0, 10))
    reader = pickle.loads(pickle.dumps(_reader(topics.root, topics="a", layout="batches")))
    source = EmbeddedTopicsDataSource(CaseInsensitiveDict({"path": topics.root, "topics": "a", "layout": "batches"}))
    assert source.schema() == BATCH_SCHEMA
    monkeypatch.setattr(embedded, "_MAX_BATCH_BYTES", 3 * 24)   # records of 24 bytes: 3 per row
    rows = pa.Table.from_batches(list(reader.read(EmbeddedTopicPartition(topics.root, "a", 0, 1, 10)))).to_pylist()
    assert [(r["offset"], len(r["ends"]) // 8) for r in rows] == [(1, 3), (4, 3), (7, 3)]
    decoded = [rec for r in rows for rec in RecordBatch.from_bytes("a", 0, r["data"], r["ends"]).records()]
    assert [(r.timestamp, r.key, r.value) for r in decoded] == [(1000 + i, b"k%d" % i, b"r%d" % i) for i in range(1, 10)]
    with pytest.raises(ValueError, match='"layout" must be one of'):
        _reader(topics.root, topics="a", layout="rows")


def test_batch_records_sizes_the_record_batches_a_task_gets(topics):
    """``batchRecords`` (``embedded.topics.batch.records`` through the connector): rows of at most that many records,
    in offset order; 65,536 unless set."""
    topics.create_topic("a", 1)
    topics.append(_records("a", 0, 10))
    reader = pickle.loads(pickle.dumps(_reader(topics.root, topics="a", layout="batches", batchRecords="4")))
    rows = pa.Table.from_batches(list(reader.read(EmbeddedTopicPartition(topics.root, "a", 0, 1, 10)))).to_pylist()
    assert [(r["offset"], len(r["ends"]) // 8) for r in rows] == [(1, 4), (5, 4), (9, 1)]
    assert _reader(topics.root, topics="a").batch_records == 65536
    with pytest.raises(ValueError, match="batchRecords must be >= 1, got '0'"):
        _reader(topics.root, topics="a", batchRecords="0")
    assert EmbeddedTopicsConnector(topics, 4).reader_options(["a"])[1]["batchRecords"] == "4"
    assert "batchRecords" not in EmbeddedTopicsConnector(topics).reader_options(["a"])[1]


def test_a_topic_read_in_whole_batches_is_read_up_to_its_last_published_batch(tmp_path):
    """``publish_batch`` records a topic's end offsets (its writer committed a batch); the source reads a
    ``wholeBatches`` topic up to them, other topics (and a topic never published) up to their end."""
    from streams_on_spark.runtime.spark.embedded_source import EmbeddedTopicsStreamReader

    with EmbeddedTopics(str(tmp_path / "t")) as topics:
        topics.create_topic("rep", 2)
        topics.create_topic("plain", 1)
        whole = EmbeddedTopicsStreamReader({"path": topics.root, "topics": "rep,plain", "wholeBatches": "rep"})
        assert topics.batch_end_offsets("rep") is None
        topics.append([ProducerRecord("rep", 0, 1, b"k", b"v", ()), ProducerRecord("plain", 0, 1, b"k", b"v", ())])
        assert whole.latestOffset() == {"rep": {"0": 1, "1": 0}, "plain": {"0": 1}}   # never published: its end
        topics.publish_batch("rep")
        topics.append([ProducerRecord("rep", 1, 2, b"k", b"v", ()), ProducerRecord("plain", 0, 2, b"k", b"v", ())])
        assert topics.batch_end_offsets("rep") == [1, 0]
        assert whole.latestOffset() == {"rep": {"0": 1, "1": 0}, "plain": {"0": 2}}
        everything = EmbeddedTopicsStreamReader({"path": topics.root, "topics": "rep"})
        assert everything.latestOffset() == {"rep": {"0": 1, "1": 1}}
        topics.publish_batch("rep")
        assert whole.latestOffset()["rep"] == {"0": 1, "1": 1}
        topics.delete_topic("rep")
        topics.create_topic("rep", 2)
        assert topics.batch_end_offsets("rep") is None

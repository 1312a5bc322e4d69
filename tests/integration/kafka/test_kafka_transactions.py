"""KafkaTransactionalWriter against the test broker: one transaction per task and batch, a replayed batch written
once, producers fenced by newer instances of the task, aborted writes invisible to read_committed consumers."""
from __future__ import annotations

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from streams_on_spark.connectors.kafka import KafkaConnector
from streams_on_spark.connectors.kafka_producer import KafkaWriterSpec
from streams_on_spark.connectors.kafka_transactions import KafkaTransactionalWriter, committed_sequence, marker
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.errors import StreamsException

pytestmark = pytest.mark.kafka


def _batch(topic: str, partition: int, *values: str) -> RecordBatch:
    batch = RecordBatch(topic, partition)
    for i, value in enumerate(values):
        batch.add(1_000 + i, f"k{i}".encode(), value.encode(), ())
    return batch


@pytest.fixture
def topics(kafka_bootstrap, topic_name):
    out, source = f"{topic_name}-out", f"{topic_name}-in"
    with KafkaConnector(kafka_bootstrap, timeout_ms=10_000) as admin:
        admin.create_topic(out, 2)
        admin.create_topic(source, 2)
    return out, source


def _writer(bootstrap: str, group: str, timeout_ms: int = 10_000) -> KafkaTransactionalWriter:
    return KafkaTransactionalWriter(KafkaWriterSpec.of(bootstrap, {"client.id": "tx-test"}, timeout_ms), group)


def _values(read_topic, topic: str) -> list[str]:
    return [r.value.decode() for r in read_topic(topic, 2, committed=True)]


def _committed(bootstrap: str, group: str, topic: str) -> list[tuple[int, int, str]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "isolation.level": "read_committed"})
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(2)], timeout=10)
        return [(tp.partition, tp.offset, tp.metadata) for tp in found]
    finally:
        consumer.close()


def test_marker_round_trip():
    assert committed_sequence(marker("q-1-3", 17), "q-1-3") == 17
    assert committed_sequence(marker("q-1-3", 17), "q-1-4") is None
    assert committed_sequence("something else", "q-1-3") is None
    assert committed_sequence(None, "q-1-3") is None


def test_a_batch_is_committed_once_with_its_positions_and_its_replay_writes_nothing(kafka_bootstrap, topics,
                                                                                     read_topic, topic_name):
    out, source = topics
    group = f"{topic_name}-app"
    writer = _writer(kafka_bootstrap, group)
    positions = {(source, 1): 42}
    bases = writer.write([_batch(out, 0, "a", "b"), _batch(out, 1, "c")], "query-1", 0, positions)
    assert bases == [0, 0]
    assert _committed(kafka_bootstrap, group, source) == [(0, -1001, None), (1, 42, marker("query-1", 0))]
    # the replay of batch 0 (same producer and batch id) writes nothing; batch 1 is written
    assert writer.write([_batch(out, 0, "a", "b"), _batch(out, 1, "c")], "query-1", 0, positions) == [-1, -1]
    writer.write([_batch(out, 0, "d")], "query-1", 1, {(source, 1): -1})   # read nothing: the position stays
    assert sorted(_values(read_topic, out)) == ["a", "b", "c", "d"]
    assert _committed(kafka_bootstrap, group, source)[1] == (1, 42, marker("query-1", 1))


def test_instances_of_a_task_fence_each_other_and_a_replay_after_a_takeover_is_skipped(kafka_bootstrap, topics,
                                                                                       read_topic, topic_name):
    out, source = topics
    group = f"{topic_name}-app"
    first, second = _writer(kafka_bootstrap, group), _writer(kafka_bootstrap, group, timeout_ms=9_000)
    positions = {(source, 0): 1}
    first.write([_batch(out, 0, "b0")], "q-0", 0, positions)
    first.write([_batch(out, 0, "b1")], "q-0", 1, positions)
    second.write([_batch(out, 0, "b2")], "q-0", 2, positions)    # another worker takes the task over: fences first
    first.write([_batch(out, 0, "b3")], "q-0", 3, positions)     # first's producer is stale: initialized again
    # second ran batch 2 itself, so it trusts its producer, finds it fenced, initializes, and sees batch 3 done
    assert second.write([_batch(out, 0, "b3")], "q-0", 3, positions) == [-1]
    assert _values(read_topic, out) == ["b0", "b1", "b2", "b3"]


def test_a_transaction_left_open_by_a_dead_instance_is_aborted_when_the_task_starts_again(kafka_bootstrap, topics,
                                                                                          read_topic, topic_name):
    out, source = topics
    group = f"{topic_name}-app"
    zombie = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": f"{group}-q-0"})
    zombie.init_transactions(10)
    zombie.begin_transaction()
    zombie.produce(out, b"half-written", b"k", partition=1, timestamp=1_000)
    zombie.flush(10)    # written, never committed: the instance "died" here
    _writer(kafka_bootstrap, group).write([_batch(out, 1, "again")], "q-0", 0, {(source, 0): 5})
    assert _values(read_topic, out) == ["again"]
    assert [r.value for r in read_topic(out, 2)] == [b"half-written", b"again"]   # read_uncommitted sees both


def test_exactly_once_writing_needs_the_task_identity(kafka_bootstrap, topics, topic_name):
    with pytest.raises(StreamsException, match="producer id, its micro-batch id and its input partitions"):
        _writer(kafka_bootstrap, f"{topic_name}-app").write([_batch(topics[0], 0, "x")])


def test_the_connector_reads_committed_and_writes_transactionally_under_exactly_once(kafka_bootstrap):
    eos = KafkaConnector(kafka_bootstrap, exactly_once_group="my-app")
    assert isinstance(eos.writer(), KafkaTransactionalWriter)
    assert eos.writer().group_id == "my-app"
    assert eos.reader_options(["t"])[1]["kafka.isolation.level"] == "read_committed"
    assert eos.global_reader().python_config["isolation_level"] == "read_committed"
    plain = KafkaConnector(kafka_bootstrap)
    assert not isinstance(plain.writer(), KafkaTransactionalWriter)
    assert "kafka.isolation.level" not in plain.reader_options(["t"])[1]

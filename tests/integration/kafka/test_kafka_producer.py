"""KafkaBatchProducer (librdkafka) against the test broker: exact round trips, base offsets, failures, caching."""
from __future__ import annotations

import logging
import os
import pickle
import socket
import time

import pytest

from streams_on_spark.connectors import kafka_producer
from streams_on_spark.connectors.kafka import KafkaConnector
from streams_on_spark.connectors.kafka_producer import KafkaBatchProducer, KafkaWriterSpec, producer_for
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.errors import StreamsException

pytestmark = pytest.mark.kafka

PASSWORD = "s3cr3t-Pa55word"
SECRET_CONFIG = {"sasl.jaas.config": ('org.apache.kafka.common.security.plain.PlainLoginModule required '
                                      f'username="alice" password="{PASSWORD}";'),
                 "ssl.key.password": "key-pw-0815"}


@pytest.fixture
def admin(kafka_bootstrap):
    with KafkaConnector(kafka_bootstrap, {"client.id": "producer-test-admin"}, timeout_ms=10000) as c:
        yield c


@pytest.fixture
def producer(kafka_bootstrap):
    with KafkaBatchProducer(kafka_bootstrap, {"client.id": "producer-test"}, timeout_ms=10000) as p:
        yield p


@pytest.fixture
def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _batch(topic: str, partition: int, rows) -> RecordBatch:
    batch = RecordBatch(topic, partition)
    for row in rows:
        batch.add(*row)
    return batch


def _read_back(read_topic, topic: str, partitions: int) -> list[tuple]:
    """Every record of ``topic`` as (partition, offset, timestamp type, timestamp, key, value, headers)."""
    return [(r.partition, r.offset, r.timestamp_type, r.timestamp, r.key, r.value, tuple(r.headers or ()))
            for r in read_topic(topic, partitions)]


def test_records_round_trip_exactly(producer, admin, read_topic, topic_name):
    admin.create_topic(topic_name, 3)
    rows = {
        0: [(1_700_000_000_000, b"k0", b"v0", ()),
            (1_700_000_000_005, None, b"null key", (("trace", b"t1"), ("nil", None))),
            (1_600_000_000_000, b"null value", None, ()),  # timestamps need not increase
            (1, None, None, (("only-null", None),))],
        2: [(42, b"", b"", (("empty", b""),)),
            (43, b"\x00\xff" * 100, "é".encode() * 1000, tuple((f"h{i}", bytes([i])) for i in range(20)))],
    }
    assert producer.send([_batch(topic_name, p, r) for p, r in rows.items()]) == [0, 0]
    got = _read_back(read_topic, topic_name, 3)
    want = sorted((p, offset, 0, ts, k, v, h) for p, r in rows.items() for offset, (ts, k, v, h) in enumerate(r))
    assert got == want  # timestamp type 0: CreateTime, the record's own timestamp
    assert admin.end_offsets(topic_name) == [4, 0, 2]


def test_base_offsets_of_several_batches(producer, admin, read_topic, topic_name):
    admin.create_topic(topic_name, 2)
    sizes = [3, 1, 0, 5, 2]
    batches = [_batch(topic_name, 1 if i == 1 else 0, [(100 + j, f"{i}:{j}".encode(), b"v", ()) for j in range(n)])
               for i, n in enumerate(sizes)]
    assert producer.send(batches) == [0, 0, -1, 3, 8]  # partition 0 gets batches 0, 3, 4; 1 gets batch 1
    assert producer.send([batches[0], batches[1]]) == [10, 1]
    assert producer.send([]) == []
    assert len(producer) == 0
    got = _read_back(read_topic, topic_name, 2)
    assert [r[4] for r in got if r[0] == 0] == [f"{i}:{j}".encode() for i in (0, 3, 4, 0) for j in range(sizes[i])]


def test_full_queue_waits_for_room(kafka_bootstrap, admin, topic_name):
    admin.create_topic(topic_name, 4)
    n = 20_000
    batches = [_batch(topic_name, p, [(1_000 + i, b"%010d" % i, b"%08d" % i, ()) for i in range(n // 4)])
               for p in range(4)]
    with KafkaBatchProducer(kafka_bootstrap, {}, timeout_ms=20000,
                            config_overrides={"queue.buffering.max.messages": 500, "batch.num.messages": 100}) as p:
        assert p.send(batches) == [0, 0, 0, 0]
        assert p.send(batches[:1]) == [n // 4]
    assert admin.end_offsets(topic_name) == [2 * n // 4, n // 4, n // 4, n // 4]


def test_unreachable_cluster_fails_within_the_timeout_naming_it(closed_port, caplog):
    caplog.set_level(logging.DEBUG)
    address = f"127.0.0.1:{closed_port}"
    started = time.monotonic()
    with KafkaBatchProducer(address, {**SECRET_CONFIG, "security.protocol": "SASL_PLAINTEXT",
                                      "sasl.mechanism": "PLAIN"}, timeout_ms=2000) as p:
        with pytest.raises(StreamsException) as info:
            p.send([_batch("some-topic", 3, [(5, b"k", b"v", ())])])
        assert p.closed and len(p) == 0  # closed: nothing written later behind the caller's back, no reconnecting
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert elapsed < 10, f"took {elapsed:.1f}s to fail"
    assert address in message and "some-topic-3" in message and "timed out" in message.lower()
    assert info.value.__cause__ is None and "cimpl" not in message
    for secret in (PASSWORD, "key-pw-0815"):
        assert secret not in message and secret not in caplog.text and secret not in repr(p)


def test_unknown_partition_and_topic_name_them(producer, admin, topic_name):
    admin.create_topic(topic_name, 2)
    with pytest.raises(StreamsException, match=rf"{topic_name}-7 .*Unknown partition"):
        producer.send([_batch(topic_name, 7, [(5, b"k", b"v", ())])])
    missing = f"{topic_name}-missing"
    started = time.monotonic()
    with KafkaBatchProducer(producer.bootstrap_servers, {}, timeout_ms=4000) as p:
        with pytest.raises(StreamsException, match=rf"{missing}-1 .*Unknown topic"):
            p.send([_batch(missing, 1, [(5, b"k", b"v", ())])])
    assert time.monotonic() - started < 12
    assert missing not in admin.topics()  # never auto-created


def test_timestamps_librdkafka_cannot_write_are_refused(producer, admin, topic_name):
    admin.create_topic(topic_name, 1)
    for bad in (0, -1):
        with pytest.raises(StreamsException, match=rf"timestamp {bad} to {topic_name}-0"):
            producer.send([_batch(topic_name, 0, [(5, b"a", b"v", ()), (bad, b"b", b"v", ())])])
    assert admin.end_offsets(topic_name) == [0]
    assert producer.send([_batch(topic_name, 0, [(5, b"a", b"v", ())])]) == [0]  # still usable


def test_producer_is_not_picklable(producer):
    with pytest.raises(TypeError, match="KafkaWriterSpec"):
        pickle.dumps(producer)


def test_producer_for_caches_per_config_and_replaces_a_failed_one(kafka_bootstrap, admin, topic_name):
    admin.create_topic(topic_name, 1)
    first = producer_for(kafka_bootstrap, {"client.id": "cached"}, 10000)
    assert producer_for(kafka_bootstrap, {"client.id": "cached"}, 10000) is first
    assert producer_for(kafka_bootstrap, {"client.id": "other"}, 10000) is not first
    assert producer_for(kafka_bootstrap, {"client.id": "cached"}, 9000) is not first
    spec = pickle.loads(pickle.dumps(KafkaWriterSpec.of(kafka_bootstrap, {"client.id": "cached"}, 10000)))
    assert spec.producer() is first
    assert first.send([_batch(topic_name, 0, [(5, b"k", b"v", ())])]) == [0]
    with pytest.raises(StreamsException):
        first.send([_batch(topic_name, 3, [(5, b"k", b"v", ())])])  # unknown partition: closes it
    again = spec.producer()
    assert again is not first and not again.closed
    assert again.send([_batch(topic_name, 0, [(6, b"k", b"v", ())])]) == [1]


def test_producer_for_is_fresh_after_fork(kafka_bootstrap, admin, topic_name):
    admin.create_topic(topic_name, 1)
    parent = producer_for(kafka_bootstrap, {"client.id": "forked"}, 10000)
    assert parent.send([_batch(topic_name, 0, [(5, b"parent", b"v", ())])]) == [0]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report through the pipe, never return into pytest
        status = 1
        try:
            with pytest.raises(StreamsException, match="forked child"):
                parent.send([_batch(topic_name, 0, [(6, b"x", b"v", ())])])
            child = producer_for(kafka_bootstrap, {"client.id": "forked"}, 10000)
            assert child is not parent
            base = child.send([_batch(topic_name, 0, [(6, b"child", b"v", ())])])
            os.write(write, repr(base).encode())
            child.close(10)
            status = 0
        except BaseException as e:  # noqa: BLE001 - anything the child hits goes to the parent
            os.write(write, f"child failed: {type(e).__name__}: {e}".encode())
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read) as pipe:
        report = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, report
    assert report == "[1]"
    assert producer_for(kafka_bootstrap, {"client.id": "forked"}, 10000) is parent  # the parent's is untouched
    assert parent.send([_batch(topic_name, 0, [(7, b"parent", b"v", ())])]) == [2]


def test_close_producers_closes_this_process_producers(kafka_bootstrap):
    p = producer_for(kafka_bootstrap, {"client.id": "closing"}, 10000)
    kafka_producer.close_producers(5)
    assert p.closed
    assert producer_for(kafka_bootstrap, {"client.id": "closing"}, 10000) is not p


def test_reports_for_failures_only_still_fail_the_send_but_return_no_offsets(admin, read_topic, topic_name):
    """The runtime's writers (``delivery.report.only.error``: no Python callback per delivered record): the records
    land exactly, the bases are unknown (-1), and a record that cannot be delivered still fails the send."""
    admin.create_topic(topic_name, 2)
    spec = KafkaConnector(admin.bootstrap_servers)._writer_spec(4000)
    with KafkaBatchProducer(spec.bootstrap_servers, dict(spec.client_config), timeout_ms=4000,
                            config_overrides=dict(spec.config_overrides)) as p:
        assert not p.reports_offsets
        rows = {0: [(5, b"a", b"1", ()), (6, None, b"2", (("h", None),))], 1: [(7, b"b", None, ())]}
        assert p.send([_batch(topic_name, part, r) for part, r in rows.items()]) == [-1, -1]
        assert _read_back(read_topic, topic_name, 2) == sorted(
            (part, offset, 0, ts, k, v, h) for part, r in rows.items() for offset, (ts, k, v, h) in enumerate(r))
        missing = f"{topic_name}-missing"
        with pytest.raises(StreamsException, match=rf"{missing}-0 .*Unknown topic"):
            p.send([_batch(missing, 0, [(5, b"k", b"v", ())])])

"""Exactly-once writing to Kafka (``processing.guarantee=exactly_once_v2``): one transaction per task and micro-batch.

A task's output for one micro-batch is one Kafka transaction of the task's own transactional producer
(``transactional.id`` = ``<application.id>-<query id>-<partition>``, stable across restarts from one checkpoint).
The same transaction commits, for the consumer group ``application.id``, the positions the task consumed in that
batch (as Kafka Streams commits its consumed offsets in its transaction), each with the metadata
``streams-on-spark:<producer>:<batch id>``: the batch marker.

A replayed batch (a retried Spark task, a restart after a crash) produces the same records again: the task's state
comes back from Spark's checkpoint of the previous batch and its wall clock is the batch's timestamp. Before writing,
the writer reads the marker back (``read_committed``, so Kafka answers only once no transaction of these partitions
is pending); if the batch is already committed, it writes nothing. The check runs after ``init_transactions``,
which fences every older instance of the task and completes or aborts its open transaction, so no other attempt can
commit the batch between the check and this one's commit: the batch's records are committed exactly once, and
consumers with ``isolation.level=read_committed`` (the next subtopology's Spark source among them) see them once.

The producer is kept by the Python worker for the task's next batch. If another worker ran the task in between (Spark
moves tasks between its workers), the kept producer was fenced: the writer notices (it did not write the previous
batch itself), initializes a fresh one and checks again. A producer fenced during a write it initialized for means a
newer attempt of the task owns it: the write fails and Spark's attempt with it.
"""
from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from streams_on_spark.connectors.kafka_producer import KafkaBatchProducer, KafkaWriterSpec, librdkafka_config
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.errors import StreamsException

__all__ = ["KafkaTransactionalWriter", "MARKER_PREFIX", "close_transactional_producers"]

log = logging.getLogger(__name__)

MARKER_PREFIX = "streams-on-spark"
#: Kafka Streams' producer default under exactly-once (StreamsConfig: transaction.timeout.ms = 10000): an
#: instance that died in a transaction blocks read_committed readers of its partitions at most that long.
DEFAULT_TRANSACTION_TIMEOUT_MS = 10_000
_FENCED_CODES = frozenset({-144, 90, 47})   # librdkafka _FENCED, PRODUCER_FENCED, INVALID_PRODUCER_EPOCH
_UNSTABLE_OFFSET_COMMIT = 88
# what a committed-offsets read retries until its deadline: a transaction of these partitions is completing, or the
# group coordinator is moving or loading (a fresh broker, a coordinator failover)
_RETRIED = {_UNSTABLE_OFFSET_COMMIT, 14, 15, 16}   # + COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, NOT_COORDINATOR
# librdkafka settings a consumer shares with a producer (connection, security); the rest are the producer's
_CONSUMER_PREFIXES = ("security.", "sasl.", "ssl.", "client.", "socket.", "reconnect.", "broker.", "enable.ssl",
                      "enable.sasl", "request.timeout.ms", "metadata.", "topic.metadata", "debug", "bootstrap.")


def marker(producer: str, sequence: int) -> str:
    """The offset metadata that says ``producer`` committed batch ``sequence``."""
    return f"{MARKER_PREFIX}:{producer}:{sequence}"


def committed_sequence(metadata: Optional[str], producer: str) -> Optional[int]:
    """The batch id ``producer`` committed, read from an offset's metadata; None if it is not that producer's."""
    if not metadata or not metadata.startswith(MARKER_PREFIX + ":"):
        return None
    owner, _, sequence = metadata[len(MARKER_PREFIX) + 1:].rpartition(":")
    return int(sequence) if owner == producer and sequence.lstrip("-").isdigit() else None


@dataclass(frozen=True)
class KafkaTransactionalWriter:
    """Writes a task's micro-batch output to Kafka in one transaction, at most once per (producer, batch id);
    picklable, each executor process keeps one transactional producer per task it runs."""

    spec: KafkaWriterSpec
    group_id: str   # application.id: the group whose committed offsets carry the batch markers
    transaction_timeout_ms: int = DEFAULT_TRANSACTION_TIMEOUT_MS

    def write(self, batches: list[RecordBatch], producer: Optional[str] = None, sequence: Optional[int] = None,
              positions: Optional[Mapping[tuple[str, int], int]] = None) -> list[int]:
        """Write ``batches`` in one transaction with the task's ``positions`` ((topic, partition) -> next offset,
        -1 where the batch read nothing) and the batch marker; returns each batch's base offset, all -1 when the
        batch was committed before (its replay writes nothing)."""
        if producer is None or sequence is None or not positions:
            raise StreamsException("exactly-once writing needs the task's producer id, its micro-batch id and its "
                                   "input partitions")
        return _task(self, producer).write(batches, producer, sequence, positions)


class _TransactionalProducer(KafkaBatchProducer):
    """A :class:`KafkaBatchProducer` with a ``transactional.id``: knows when it was fenced."""

    fenced = False

    def _on_error(self, err: Any) -> None:
        if err.code() in _FENCED_CODES:
            self.fenced = True
        super()._on_error(err)

    def call(self, what: str, method: str, *args: Any) -> Any:
        """Run a transaction call of the librdkafka producer; its errors as :class:`StreamsException`."""
        try:
            return getattr(self._producer, method)(*args)
        except Exception as e:
            error = e.args[0] if e.args else None
            if getattr(error, "code", None) is not None and error.code() in _FENCED_CODES:
                self.fenced = True
            self._abandon()
            raise self._exception(what, e) from None


class _TaskTransactions:
    """One task's transactional producer in this process, and the consumer that reads its batch markers back."""

    def __init__(self, writer: KafkaTransactionalWriter, transactional_id: str) -> None:
        self.writer, self.transactional_id = writer, transactional_id
        self.producer: Optional[_TransactionalProducer] = None
        self.last_sequence: Optional[int] = None   # the batch this process last committed or found committed
        self._consumer: Any = None

    def write(self, batches: list[RecordBatch], producer: str, sequence: int,
              positions: Mapping[tuple[str, int], int]) -> list[int]:
        # the kept producer is current only if this process wrote the task's previous batch; else re-initialize
        fresh = self.producer is None or self.producer.closed or self.last_sequence != sequence - 1
        for attempt in (0, 1):
            if fresh:
                self._open()
            assert self.producer is not None
            try:
                return self._transaction(batches, producer, sequence, positions)
            except StreamsException as e:
                fenced = self.producer.fenced
                self.close()
                if fenced and not fresh:
                    log.info("%s: fenced since its last batch (another worker ran the task): initializing again",
                             self.transactional_id)
                    fresh = True
                    continue
                if fenced:
                    raise StreamsException(f"transactional producer {self.transactional_id} was fenced while writing "
                                           f"batch {sequence}: a newer instance of the task owns it") from e
                raise
        raise AssertionError("unreachable")   # pragma: no cover

    def _open(self) -> None:
        self.close()
        spec = self.writer.spec
        timeout_ms = self.writer.transaction_timeout_ms
        overrides = {**dict(spec.config_overrides), "transactional.id": self.transactional_id,
                     "transaction.timeout.ms": str(timeout_ms),
                     # librdkafka: a record's delivery must time out within its transaction's timeout
                     "message.timeout.ms": str(min(spec.timeout_ms, timeout_ms))}
        self.producer = _TransactionalProducer(spec.bootstrap_servers, dict(spec.client_config),
                                               timeout_ms=spec.timeout_ms, config_overrides=overrides)
        started = time.monotonic()
        self.producer.call(f"cannot initialize transactions of {self.transactional_id}", "init_transactions",
                           spec.timeout_ms / 1000)
        log.debug("%s: transactions initialized in %.3f s", self.transactional_id, time.monotonic() - started)

    def _transaction(self, batches: list[RecordBatch], producer: str, sequence: int,
                     positions: Mapping[tuple[str, int], int]) -> list[int]:
        assert self.producer is not None
        done, offsets = self._committed(producer, positions)
        if done is not None and done >= sequence:
            log.info("%s: batch %d was committed before (marker at batch %d): its replay writes nothing",
                     self.transactional_id, sequence, done)
            self.last_sequence = sequence
            return [-1] * len(batches)
        from confluent_kafka import TopicPartition
        timeout_s = self.writer.spec.timeout_ms / 1000
        self.producer.call("cannot begin a transaction", "begin_transaction")
        bases = self.producer.send(batches)
        position_list = [TopicPartition(t, p, offset, metadata=marker(producer, sequence))
                         for (t, p), offset in offsets.items()]
        self.producer.call(f"cannot commit the positions of batch {sequence}", "send_offsets_to_transaction",
                           position_list, self._group_consumer().consumer_group_metadata(), timeout_s)
        self.producer.call(f"cannot commit batch {sequence}", "commit_transaction", timeout_s)
        self.last_sequence = sequence
        return bases

    def _committed(self, producer: str, positions: Mapping[tuple[str, int], int]
                   ) -> tuple[Optional[int], dict[tuple[str, int], int]]:
        """The batch id this producer last committed (None if none), and the positions to commit now: this batch's
        where it read something, else those committed before (offset 0 if a partition never had one)."""
        from confluent_kafka import TopicPartition
        consumer = self._group_consumer()
        tps = [TopicPartition(t, p) for t, p in sorted(positions)]
        deadline = time.monotonic() + self.writer.spec.timeout_ms / 1000
        while True:
            try:
                found = consumer.committed(tps, timeout=max(1.0, deadline - time.monotonic()))
            except Exception as e:
                if _code(e) in _RETRIED and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                self._close_consumer()
                raise StreamsException(f"cannot read the committed positions of {self.transactional_id} (group "
                                       f"{self.writer.group_id}): {e}") from None
            if any(tp.error is not None and tp.error.code() in _RETRIED for tp in found) \
                    and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            break
        done: Optional[int] = None
        offsets: dict[tuple[str, int], int] = {}
        for tp in found:
            sequence = committed_sequence(tp.metadata, producer)
            if sequence is not None:
                done = sequence if done is None else max(done, sequence)
            read = positions[(tp.topic, tp.partition)]
            offsets[(tp.topic, tp.partition)] = read if read >= 0 else max(tp.offset, 0)
        return done, offsets

    def _group_consumer(self) -> Any:
        if self._consumer is None:
            from confluent_kafka import Consumer
            spec = self.writer.spec
            settings = librdkafka_config(spec.bootstrap_servers, dict(spec.client_config))
            conf = {k: v for k, v in settings.items() if k.startswith(_CONSUMER_PREFIXES)}
            conf.update({"group.id": self.writer.group_id, "enable.auto.commit": "false",
                         "isolation.level": "read_committed", "client.id": f"{self.transactional_id}-positions"})
            self._consumer = Consumer(conf)
        return self._consumer

    def _close_consumer(self) -> None:
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            try:
                consumer.close()
            except Exception:
                log.debug("closing the positions consumer of %s failed", self.transactional_id, exc_info=True)

    def close(self) -> None:
        """Close the producer (an open transaction is aborted by the broker, or fenced by the next instance)."""
        producer, self.producer = self.producer, None
        self.last_sequence = None
        if producer is not None and not producer.closed:
            producer.close(1.0)


def _code(error: BaseException) -> Optional[int]:
    inner = error.args[0] if error.args else None
    return inner.code() if hasattr(inner, "code") else None


_lock = threading.Lock()
_tasks: dict[tuple, _TaskTransactions] = {}
_owner_pid = os.getpid()


def _task(writer: KafkaTransactionalWriter, producer: str) -> _TaskTransactions:
    """This process's transactions of one task (made on first use; a forked child makes its own)."""
    global _owner_pid
    transactional_id = f"{writer.group_id}-{producer}"
    with _lock:
        if _owner_pid != os.getpid():
            _tasks.clear()   # the parent's librdkafka handles are not ours to use or close
            _owner_pid = os.getpid()
        key = (writer, transactional_id)
        task = _tasks.get(key)
        if task is None:
            task = _tasks[key] = _TaskTransactions(writer, transactional_id)
        return task


def close_transactional_producers() -> None:
    """Close this process's transactional producers and consumers (at interpreter exit)."""
    with _lock:
        if _owner_pid != os.getpid():
            return
        tasks = list(_tasks.values())
        _tasks.clear()
    for task in tasks:
        task.close()
        task._close_consumer()


atexit.register(close_transactional_producers)

"""What the Spark runtime needs of a place that holds topics: the ``Connector`` and ``TopicWriter`` protocols.

Two implementations: embedded topics (:mod:`streams_on_spark.connectors.embedded_connector`) and Kafka
(:mod:`streams_on_spark.connectors.kafka`). The connector lives on the Spark driver (topic admin, the streaming
source's options, quiescence checks); what it hands the executors — a :class:`TopicWriter` and a
:class:`GlobalReader` — is small, picklable, and opens its own files or clients where it runs.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional, Protocol, Sequence, runtime_checkable

from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.records import ConsumerRecord, ProducerRecord

__all__ = ["Connector", "TopicWriter", "GlobalReader"]


@runtime_checkable
class TopicWriter(Protocol):
    """Writes a task's output, from the Spark executor that ran the task."""

    def write(self, batches: list[RecordBatch], producer: Optional[str] = None, sequence: Optional[int] = None,
              positions: Optional[Mapping[tuple[str, int], int]] = None) -> list[int]:
        """Append each batch to its topic-partition (timestamps, headers and partition kept); returns each batch's
        first offset, -1 where unknown. ``producer``/``sequence`` identify a task's write for one micro-batch: a
        writer that can (embedded topics; Kafka under exactly-once) skips a sequence the producer already wrote.
        ``positions`` are the task's input partitions with the offset after the last record it read in the batch
        (-1 where it read none), which Kafka's exactly-once writer commits in the same transaction."""
        ...


@runtime_checkable
class GlobalReader(Protocol):
    """Reads global topics on an executor, from where a task's global stores left off up to the current end."""

    def read(self, topic: str, positions: Mapping[int, int]) -> tuple[list[ConsumerRecord], dict[int, int]]:
        """The records of every partition of ``topic`` from ``positions`` (partition -> next offset, 0 where absent)
        up to the partition's current end, in partition then offset order; and those end offsets."""
        ...


@runtime_checkable
class Connector(Protocol):
    """Topics as the Spark runtime reads, writes and administers them (driver side)."""

    #: whether the source can read topics in their writing query's whole micro-batches (:meth:`publish_batch`)
    whole_batches: bool

    def reader_options(self, topics: list[str], whole_batches: Sequence[str] = ()) -> tuple[str, dict[str, str]]:
        """The Spark source's format and options reading ``topics``; ``whole_batches`` of them read in their
        writing query's whole micro-batches (see :meth:`publish_batch`) where the source can. The Spark runtime
        registers and reads the source (:mod:`streams_on_spark.runtime.spark.sources`)."""
        ...

    def publish_batch(self, topics: Sequence[str]) -> None:
        """The query writing ``topics`` committed a micro-batch (every task of it has written): a source reading
        them in whole batches may now read up to here."""
        ...

    def writer(self) -> TopicWriter:
        """The picklable writer every task uses on its executor."""
        ...

    def global_reader(self) -> GlobalReader:
        """The picklable reader tasks keep their global stores up to date with."""
        ...

    def topics(self) -> dict[str, int]:
        """Every topic with its partition count."""
        ...

    def partitions(self, topic: str) -> int:
        ...

    def create_topic(self, topic: str, partitions: int) -> None:
        """Create ``topic``; nothing to do if it exists with that partition count."""
        ...

    def create_repartition_topic(self, topic: str, partitions: int) -> None:
        """Create a repartition topic with what Kafka Streams configures for one (never deleted by time)."""
        ...

    def end_offsets(self, topic: str) -> list[int]:
        """The end offset of each partition of ``topic``."""
        ...

    def append(self, records: Iterable[ProducerRecord]) -> None:
        """Write records from the driver (test input, wall-clock ticks); never the tasks' output."""
        ...

    def close(self) -> None:
        ...

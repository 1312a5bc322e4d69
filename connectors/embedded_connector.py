"""Embedded topics as the Spark runtime's connector: the ``embedded-topics`` source's options, and writers for
executors (the source itself, a Spark data source, is the runtime's: :mod:`streams_on_spark.runtime.spark.sources`).

Every executor opens the topics' directory itself (it must be on a filesystem they all see: on one machine,
``/dev/shm``; on a cluster, a shared mount). Task output is appended with the writing task's producer id and the
micro-batch id, so a retried task or a replayed batch is not appended twice (see ``EmbeddedTopics.append_batches``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.records import ConsumerRecord, ProducerRecord

__all__ = ["EmbeddedTopicsConnector", "EmbeddedTopicWriter", "EmbeddedGlobalReader"]


@dataclass(frozen=True)
class EmbeddedTopicWriter:
    """Appends task output to the embedded topics under ``root``, idempotently per (producer, sequence)."""

    root: str

    def write(self, batches: list[RecordBatch], producer: Optional[str] = None, sequence: Optional[int] = None,
              positions: Optional[Mapping[tuple[str, int], int]] = None) -> list[int]:
        with EmbeddedTopics(self.root) as topics:
            return topics.append_batches(batches, producer, sequence)


@dataclass(frozen=True)
class EmbeddedGlobalReader:
    """Reads an embedded topic's partitions from given offsets up to their current end."""

    root: str

    def read(self, topic: str, positions: Mapping[int, int]) -> tuple[list[ConsumerRecord], dict[int, int]]:
        with EmbeddedTopics(self.root) as topics:
            ends = dict(enumerate(topics.end_offsets(topic)))
            records = [r for p, end in ends.items() for r in topics.read(topic, p, min(positions.get(p, 0), end), end)]
            return records, ends


class EmbeddedTopicsConnector:
    """The embedded topics as the Spark runtime's connector (the default when no Kafka is configured)."""

    FORMAT = "embedded-topics"   # the Spark runtime's data source over the topics' files
    whole_batches = True   # the source reads a topic up to its writer's last committed batch where asked

    def __init__(self, topics: EmbeddedTopics, batch_records: Optional[int] = None) -> None:
        self.embedded = topics
        self.batch_records = batch_records   # the most records per record batch a task is given (None: the source's)

    def reader_options(self, topics: list[str], whole_batches: Sequence[str] = ()) -> tuple[str, dict[str, str]]:
        options = {"path": self.embedded.root, "topics": ",".join(topics), "layout": "batches"}
        if self.batch_records is not None:
            options["batchRecords"] = str(self.batch_records)
        if whole_batches:
            options["wholeBatches"] = ",".join(whole_batches)
        return self.FORMAT, options

    def publish_batch(self, topics: Sequence[str]) -> None:
        """The query writing ``topics`` committed a micro-batch: readers of their whole batches may read it."""
        for topic in topics:
            self.embedded.publish_batch(topic)

    def writer(self) -> EmbeddedTopicWriter:
        return EmbeddedTopicWriter(self.embedded.root)

    def global_reader(self) -> EmbeddedGlobalReader:
        return EmbeddedGlobalReader(self.embedded.root)

    def topics(self) -> dict[str, int]:
        return self.embedded.topics()

    def partitions(self, topic: str) -> int:
        return self.embedded.partitions(topic)

    def create_topic(self, topic: str, partitions: int) -> None:
        self.embedded.create_topic(topic, partitions)

    def create_repartition_topic(self, topic: str, partitions: int) -> None:
        """Embedded topics keep every record (no retention): a repartition topic is a topic."""
        self.embedded.create_topic(topic, partitions)

    def end_offsets(self, topic: str) -> list[int]:
        return self.embedded.end_offsets(topic)

    def append(self, records: Iterable[ProducerRecord]) -> None:
        self.embedded.append(records)

    def close(self) -> None:
        """Nothing to release: the topics belong to whoever opened them."""

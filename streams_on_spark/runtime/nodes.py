"""The nodes of a task's processor graph: each processor with its children, and the source and sink processors every
task has (what :class:`~streams_on_spark.runtime.task.StreamTask` builds and the batch paths of
:mod:`~streams_on_spark.runtime.fused` compile)."""
from __future__ import annotations

from typing import Any, Iterable

from streams_on_spark.errors import StreamsException
from streams_on_spark.processor.api import Processor, ProcessorContext, Record, RecordContext, topic_name_extractor
from streams_on_spark.topology.builder import SinkNodeSpec


class ProcessorNode:
    """A processor node inside a task."""

    __slots__ = ("name", "processor", "process", "children", "by_name", "stores")

    def __init__(self, name: str, processor: Processor, stores: Iterable[str] = ()) -> None:
        self.name = name
        self.stores = frozenset(stores)
        self.processor = processor
        self.process = processor.process
        self.children: list[ProcessorNode] = []
        self.by_name: dict[str, ProcessorNode] = {}

    def add_child(self, child: "ProcessorNode") -> None:
        self.children.append(child)
        self.by_name[child.name] = child


class SinkProcessor(Processor):
    """Hands each record to the task's record collector with the sink's topic, serdes and partitioner."""

    def __init__(self, spec: SinkNodeSpec, topic: str, collector: Any, key_serde: Any,
                 value_serde: Any) -> None:
        self.name, self.topic, self.partitioner = spec.name, topic, spec.partitioner
        self.key_serde, self.value_serde = key_serde, value_serde
        self._send = collector.send

    def process(self, record: Record) -> None:
        self._send(self.topic, record, self.key_serde, self.value_serde, self.partitioner, self.name)


class TopicNameExtractorSinkProcessor(Processor):
    """A sink writing each record to the topic its ``TopicNameExtractor`` chooses from the record's key, value and
    :class:`RecordContext` (undecorated, as Kafka's); the batch fast paths leave a task with one to this path."""

    def __init__(self, spec: SinkNodeSpec, collector: Any, key_serde: Any, value_serde: Any) -> None:
        self.name, self.partitioner = spec.name, spec.partitioner
        self.extract = topic_name_extractor(spec.topic_extractor)
        self.key_serde, self.value_serde = key_serde, value_serde
        self._send = collector.send

    def init(self, context: ProcessorContext) -> None:
        self._metadata = context.record_metadata

    def process(self, record: Record) -> None:
        meta = self._metadata()
        context = (RecordContext(None, -1, -1, record.timestamp, record.headers) if meta is None else
                   RecordContext(meta.topic, meta.partition, meta.offset, record.timestamp, record.headers))
        topic = self.extract(record.key, record.value, context)
        if not isinstance(topic, str) or not topic:
            raise StreamsException(f"The topic name extractor of sink {self.name} returned {topic!r} for the record "
                                   f"with key {record.key!r}: it must return a topic name (a non-empty str)")
        self._send(topic, record, self.key_serde, self.value_serde, self.partitioner, self.name)


class SourceProcessor(Processor):
    """Forwards each record it is given (a topic's records enter the task here)."""

    def init(self, context: ProcessorContext) -> None:
        self.forward = context.forward

    def process(self, record: Record) -> None:
        self.forward(record)

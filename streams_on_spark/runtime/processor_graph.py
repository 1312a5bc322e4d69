"""A task's processor graph (Kafka's ``ProcessorTopology``): its nodes built from a subtopology's specs.

Sources, the processors their suppliers make and the sinks over the task's record collector, each linked to its
predecessors in the subtopology's order; which source reads which topic; the processing exception handler's guard
around every processor node. The checks of the sources' and sinks' serdes that Kafka makes when its nodes are
initialized are here too (:func:`check_node_serdes`, run once for a whole topology when the driver or application
starts).
"""
from __future__ import annotations

from typing import Any, Callable

from streams_on_spark.config import TaskConfig
from streams_on_spark.errors import ConfigException, StreamsException
from streams_on_spark.processor.api import Processor
from streams_on_spark.runtime.nodes import (
    ProcessorNode,
    SinkProcessor,
    SourceProcessor,
    TopicNameExtractorSinkProcessor,
)
from streams_on_spark.runtime.record_collector import RecordCollector
from streams_on_spark.runtime.record_queue import resolve_serde
from streams_on_spark.topology.builder import (
    InternalTopologyBuilder,
    ProcessorNodeSpec,
    SinkNodeSpec,
    SourceNodeSpec,
    SubtopologySpec,
)


class ProcessorGraph:
    """One task's processor nodes by name (in the subtopology's order) and ``sources``: topic -> the source node
    reading it and that node's spec."""

    def __init__(self, spec: SubtopologySpec, topology: InternalTopologyBuilder, config: TaskConfig,
                 collector: RecordCollector) -> None:
        self.spec = spec
        self.nodes = self._build_nodes(spec, topology, config, collector)
        self.sources = self._sources(spec)

    def guard_processors(self, guard: Callable[[ProcessorNode], None]) -> None:
        """Wrap every processor node (not the sources and sinks) with ``guard``, in the subtopology's order."""
        for node_spec in self.spec.nodes:
            if isinstance(node_spec, ProcessorNodeSpec):
                guard(self.nodes[node_spec.name])

    @staticmethod
    def _build_nodes(spec: SubtopologySpec, topology: InternalTopologyBuilder, config: TaskConfig,
                     collector: RecordCollector) -> dict[str, ProcessorNode]:
        """The subtopology's processor graph: sources, processors (from their suppliers) and sinks (over the
        collector), each linked to its predecessors."""
        nodes: dict[str, ProcessorNode] = {}
        for node_spec in spec.nodes:
            if isinstance(node_spec, SourceNodeSpec):
                node = ProcessorNode(node_spec.name, SourceProcessor())
            elif isinstance(node_spec, SinkNodeSpec):
                key_serde = resolve_serde(node_spec.key_serde, config.default_key_serde)
                value_serde = resolve_serde(node_spec.value_serde, config.default_value_serde)
                if node_spec.topic is None:
                    topic = f"chosen by {node_spec.topic_extractor}"   # for _check_sink_serdes' message
                    sink = TopicNameExtractorSinkProcessor(node_spec, collector, key_serde, value_serde)
                else:
                    topic = topology.decorate_topic(node_spec.topic)
                    sink = SinkProcessor(node_spec, topic, collector, key_serde, value_serde)
                node = ProcessorNode(node_spec.name, sink)
                _check_sink_serdes(node_spec.name, topic, key_serde, value_serde)
            else:
                assert isinstance(node_spec, ProcessorNodeSpec)
                processor = node_spec.supplier()
                if not isinstance(processor, Processor) and not hasattr(processor, "process"):
                    raise StreamsException(f"supplier of processor {node_spec.name} returned {processor!r}, "
                                           "not a Processor")
                node = ProcessorNode(node_spec.name, processor, node_spec.stores)
            for pred in getattr(node_spec, "predecessors", ()):
                nodes[pred].add_child(node)
            nodes[node_spec.name] = node
        return nodes

    def _sources(self, spec: SubtopologySpec) -> dict[str, tuple[ProcessorNode, SourceNodeSpec]]:
        """Topic -> the source node reading it and that node's spec."""
        sources: dict[str, tuple[ProcessorNode, SourceNodeSpec]] = {}
        for topic, source_name in spec.source_topics.items():
            source_spec = next(n for n in spec.nodes if n.name == source_name)
            assert isinstance(source_spec, SourceNodeSpec)
            sources[topic] = (self.nodes[source_name], source_spec)
        return sources


def _check_sink_serdes(node: str, topic: str, key_serde: Any, value_serde: Any) -> None:
    """A sink needs both serdes (its own, else the config's defaults) to build."""
    if key_serde is None or value_serde is None:
        which = "key" if key_serde is None else "value"
        raise StreamsException(f"Sink {node} writing to topic {topic} has no {which} serde: set one with "
                               f"Produced/Grouped/Repartitioned, or set 'default.{which}.serde' in the config")


def check_node_serdes(topology: InternalTopologyBuilder, config: TaskConfig) -> None:
    """Kafka's ``SourceNode``/``SinkNode`` init when the driver starts (global sources first): a source or sink with
    neither its own serde nor the config's default fails with Kafka's text, the cause naming what to set."""
    specs = [s for s in topology.node_factories.values() if isinstance(s, (SourceNodeSpec, SinkNodeSpec))]
    for spec in sorted(specs, key=lambda s: not topology.is_global_source(s.name)):
        if isinstance(spec, SourceNodeSpec):
            kind, node, fix = "source", f"Source {spec.name} reading topic {', '.join(spec.topics)}", "Consumed"
        else:
            topic = spec.topic if spec.topic is not None else f"chosen by {spec.topic_extractor}"
            kind, node, fix = "sink", f"Sink {spec.name} writing to topic {topic}", "Produced/Grouped/Repartitioned"
        for which, own, default in (("key", spec.key_serde, config.default_key_serde),
                                    ("value", spec.value_serde, config.default_value_serde)):
            if resolve_serde(own, default) is None:
                raise StreamsException(f"Failed to initialize {which} serdes for {kind} node {spec.name}") from \
                    ConfigException(f"{node} has no {which} serde: set one with {fix}, or set "
                                    f"'default.{which}.serde' in the config")

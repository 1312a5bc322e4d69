"""The physical topology: node factories, node groups (subtopologies), stores, internal topics.

A faithful port of the parts of Kafka's ``InternalTopologyBuilder`` that shape a topology: the same validation
messages, the same subtopology numbering (union-find over nodes in insertion order) and the same
``describe()`` layout.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from streams_on_spark.errors import TopologyException
from streams_on_spark.timestamp_extractors import timestamp_extractor as resolve_extractor
from streams_on_spark.processor.api import topic_name_extractor
from streams_on_spark.topology import description as descriptions
from streams_on_spark.topology.java_order import hash_set_order
from streams_on_spark.window import OperatorWindows

log = logging.getLogger(__name__)


@dataclass
class SourceNodeSpec:
    name: str
    topics: list[str]
    key_serde: Any = None
    value_serde: Any = None
    timestamp_extractor: Any = None


@dataclass
class ProcessorNodeSpec:
    """A processor: its supplier, the stores it uses and (a windowed DSL operator's) time parameters."""

    name: str
    predecessors: list[str]
    supplier: Callable[[], Any]
    stores: list[str] = field(default_factory=list)
    windows: Optional[OperatorWindows] = None


@dataclass
class SinkNodeSpec:
    """A sink writing to ``topic``, or (``topic`` None) to the topic ``topic_extractor`` chooses per record."""

    name: str
    predecessors: list[str]
    topic: Optional[str]
    key_serde: Any = None
    value_serde: Any = None
    partitioner: Any = None
    topic_extractor: Any = None


NodeSpec = SourceNodeSpec | ProcessorNodeSpec | SinkNodeSpec


@dataclass
class InternalTopicSpec:
    """A repartition topic; ``number_of_partitions`` is fixed by the user or resolved at start."""

    name: str
    number_of_partitions: Optional[int] = None


@dataclass
class SubtopologySpec:
    """Everything a task needs to instantiate one subtopology (topic names decorated)."""

    id: int
    nodes: list[NodeSpec]
    source_topics: dict[str, str]            # decorated topic -> source node name
    sink_topics: list[str]                   # decorated
    store_names: list[str]
    repartition_source_topics: list[str]


@dataclass
class GlobalStoreSpec:
    id: int
    source: SourceNodeSpec
    processor: ProcessorNodeSpec
    store_name: str
    topic: str


class _QuickUnion:
    def __init__(self) -> None:
        self._ids: dict[str, str] = {}

    def add(self, name: str) -> None:
        self._ids.setdefault(name, name)

    def root(self, name: str) -> str:
        current = name
        parent = self._ids[current]
        while parent != current:
            grand = self._ids[parent]
            self._ids[current] = grand
            current, parent = parent, grand
        return current

    def unite(self, name: str, others: Iterable[str]) -> None:
        for other in others:
            r1, r2 = self.root(name), self.root(other)
            if r1 != r2:
                self._ids[r1] = r2


@dataclass(frozen=True, eq=False)
class InternalResourcesNaming:
    """Kafka's ``InternalResourcesNaming`` (KIP-1111): a store, changelog or repartition topic named by the DSL."""

    state_store: Optional[str] = None
    changelog_topic: Optional[str] = None
    repartition_topic: Optional[str] = None


# KIP-1111's kinds of internal resource, in Kafka's order (the changelog topics first: none exist here)
_NAMED_KINDS = (("changelog topic", "changelog_topic"), ("state store", "state_store"),
                ("repartition topic", "repartition_topic"))
_warned_names: set[str] = set()   # the generated-name warnings this process logged
_warned_lock = threading.Lock()


class InternalTopologyBuilder:
    """Collects nodes, stores and internal topics; computes subtopologies and ``describe()``."""

    def __init__(self) -> None:
        self.node_factories: dict[str, NodeSpec] = {}
        self.node_to_source_topics: dict[str, list[str]] = {}
        self.node_to_sink_topic: dict[str, Any] = {}   # a name, or a sink's TopicNameExtractor
        self.raw_source_topics: set[str] = set()
        self.global_topics: list[str] = []
        self.state_factories: dict[str, Any] = {}
        self.store_users: dict[str, list[str]] = {}
        self.global_state_builders: dict[str, Any] = {}
        self.internal_topics: dict[str, InternalTopicSpec] = {}
        self.copartition_source_groups: list[list[str]] = []
        self.application_id: Optional[str] = None
        self._grouper = _QuickUnion()
        self._node_groups: Optional[dict[int, list[str]]] = None
        # KIP-1111: internal resources whose names the DSL generated, in the order it made them (Kafka's
        # implicitInternalNames); one entry per DSL call, as Kafka's set of InternalResourcesNaming by identity
        self.implicit_internal_names: list[InternalResourcesNaming] = []

    # ------------------------------------------------------------------ KIP-1111
    def add_implicit_internal_names(self, naming: InternalResourcesNaming) -> None:
        """Record an internal resource whose name the DSL generated (Kafka's ``addImplicitInternalNames``)."""
        self.implicit_internal_names.append(naming)

    def check_unprovided_names(self, ensure_explicit_naming: bool) -> None:
        """Kafka's ``checkUnprovidedNames``: with ``ensure.explicit.internal.resource.naming`` a generated name fails
        the build with Kafka's ``TopologyException`` listing them all. Without it, Kafka's warning, naming what
        exists here (the stores and repartition topics, not the changelog topics this runtime never creates), once
        per process for the same names (a test suite builds a topology many times)."""
        if not self.implicit_internal_names:
            return
        if ensure_explicit_naming:
            raise TopologyException(self._unprovided_names(_NAMED_KINDS))
        result = self._unprovided_names(_NAMED_KINDS[1:])
        with _warned_lock:
            if not result or result in _warned_names:
                return
            _warned_names.add(result)
        log.warning("Explicit naming for internal resources is currently disabled. If you want to enforce "
                    "user-defined names for all internal resources, set ensure.explicit.internal.resource.naming to "
                    "true. Note: Changing internal resource names may require a full streams application reset for "
                    "an already deployed application. Consult the documentation on naming operators for more "
                    "details. %s", result)

    def _unprovided_names(self, kinds: tuple[tuple[str, str], ...]) -> str:
        """Kafka's list of generated names: a line per kind, in the order the DSL made them."""
        result = ""
        for kind, attribute in kinds:
            names = [getattr(n, attribute) for n in self.implicit_internal_names
                     if getattr(n, attribute) is not None and getattr(n, attribute).strip()]
            if names:
                result += f"Following {kind}(s) has not been named: {', '.join(names)}\n"
        return result

    # ------------------------------------------------------------------ building
    def add_source(self, name: str, topics: list[str], key_serde: Any = None, value_serde: Any = None,
                   timestamp_extractor: Any = None) -> None:
        if not topics:
            raise TopologyException("topics cannot be empty")
        _require(name, "name must not be null")
        if name in self.node_factories:
            raise TopologyException(f"Processor {name} is already added.")
        for topic in topics:
            _require(topic, "topic names cannot be null")
            self._validate_topic_not_registered(topic)
            self.raw_source_topics.add(topic)
        self.node_factories[name] = SourceNodeSpec(name, list(topics), key_serde, value_serde,
                                                   resolve_extractor(timestamp_extractor, "timestamp_extractor"))
        self.node_to_source_topics[name] = list(topics)
        self._grouper.add(name)
        self._node_groups = None

    def add_sink(self, name: str, topic: Any, predecessors: list[str], key_serde: Any = None,
                 value_serde: Any = None, partitioner: Any = None) -> None:
        """A sink writing to ``topic``: a name, or a ``TopicNameExtractor`` (a callable) choosing it per record."""
        _require(name, "name must not be null")
        _require(topic, "topic must not be null")
        extractor = None
        if not isinstance(topic, str):
            topic_name_extractor(topic)
            extractor, topic = topic, None
        if name in self.node_factories:
            raise TopologyException(f"Processor {name} is already added.")
        for pred in self._known_predecessors(name, predecessors):
            if pred in self.node_to_sink_topic:
                raise TopologyException(f"Sink {pred} cannot be used a parent.")
        self.node_factories[name] = SinkNodeSpec(name, list(predecessors), topic, key_serde, value_serde,
                                                 partitioner, extractor)
        self.node_to_sink_topic[name] = topic if extractor is None else extractor
        self._grouper.add(name)
        self._grouper.unite(name, predecessors)
        self._node_groups = None

    def add_processor(self, name: str, supplier: Callable[[], Any], predecessors: list[str],
                      windows: Optional[OperatorWindows] = None) -> None:
        """Add processor ``name`` after ``predecessors``; ``windows``: a windowed DSL operator's time parameters."""
        _require(name, "name must not be null")
        _require(supplier, "supplier must not be null")
        check_supplier(supplier)
        if name in self.node_factories:
            raise TopologyException(f"Processor {name} is already added.")
        self._known_predecessors(name, predecessors)
        if windows is not None and not isinstance(windows, OperatorWindows):
            raise TopologyException(f"Processor {name}: windows must be OperatorWindows, got {type(windows).__name__}")
        self.node_factories[name] = ProcessorNodeSpec(name, list(predecessors), supplier, windows=windows)
        self._grouper.add(name)
        self._grouper.unite(name, predecessors)
        self._node_groups = None

    def _known_predecessors(self, name: str, predecessors: list[str]) -> list[str]:
        """A node's parents, each already added (Kafka's checks and texts)."""
        if not predecessors:
            raise TopologyException("predecessorNames cannot be empty")
        for pred in predecessors:
            _require(pred, "parent name cannot be null")
            if pred == name:
                raise TopologyException(f"Parent node {pred} is unknown (self-reference).")
            if pred not in self.node_factories:
                raise TopologyException(f"Parent node {pred} is unknown.")
        return predecessors

    def add_state_store(self, store_builder: Any, processor_names: Iterable[str] = (),
                        allow_override: bool = False) -> None:
        _require(store_builder, "stateStoreFactory can't be null")
        name = store_builder.name
        existing = self.state_factories.get(name)
        if not allow_override and existing is not None and existing is not store_builder:
            raise TopologyException(f"A different StateStore has already been added with the name {name}")
        if name in self.global_state_builders:
            raise TopologyException(f"A different GlobalStateStore has already been added with the name {name}")
        self.state_factories[name] = store_builder
        self.store_users.setdefault(name, [])
        for processor_name in processor_names:
            _require(processor_name, "processor name must not be null")
            self._connect_processor_and_state_store(processor_name, name)
        self._node_groups = None

    def connect_processor_and_state_stores(self, processor_name: str, store_names: Iterable[str]) -> None:
        _require(processor_name, "processorName can't be null")
        store_names = list(store_names)
        if not store_names:
            raise TopologyException("stateStoreNames cannot be empty")
        if isinstance(self.node_factories.get(processor_name), (SourceNodeSpec, SinkNodeSpec)):
            raise TopologyException("State stores cannot be connect to sources or sinks.")
        for store_name in store_names:
            _require(store_name, "state store name must not be null")
            self._connect_processor_and_state_store(processor_name, store_name)
        self._node_groups = None

    def _connect_processor_and_state_store(self, processor_name: str, store_name: str) -> None:
        if store_name in self.global_state_builders:
            raise TopologyException(f"Global StateStore {store_name} can be used by a Processor without being "
                                    "specified; it should not be explicitly passed.")
        if store_name not in self.state_factories:
            raise TopologyException(f"StateStore {store_name} is not added yet.")
        if processor_name not in self.node_factories:
            raise TopologyException(f"Processor {processor_name} is not added yet.")
        users = self.store_users[store_name]
        if users:
            self._grouper.unite(users[0], [processor_name])
        users.append(processor_name)
        node = self.node_factories[processor_name]
        if not isinstance(node, ProcessorNodeSpec):
            raise TopologyException(f"cannot connect a state store {store_name} to a source node or a sink node.")
        if store_name not in node.stores:
            node.stores.append(store_name)

    def add_global_store(self, store_builder: Any, source_name: str, topic: str, processor_name: str,
                         supplier: Callable[[], Any], key_serde: Any = None, value_serde: Any = None,
                         timestamp_extractor: Any = None) -> None:
        _require(store_builder, "store builder must not be null")
        _require(supplier, "supplier must not be null")
        check_supplier(supplier)
        for value, what in ((source_name, "sourceName"), (topic, "topic"), (processor_name, "processorName")):
            _require(value, f"{what} must not be null")
        if source_name in self.node_factories:
            raise TopologyException(f"Processor {source_name} is already added.")
        if processor_name in self.node_factories:
            raise TopologyException(f"Processor {processor_name} is already added.")
        name = store_builder.name
        if name in self.state_factories:
            raise TopologyException(f"A different StateStore has already been added with the name {name}")
        if name in self.global_state_builders:
            raise TopologyException(f"A different GlobalStateStore has already been added with the name {name}")
        if source_name == processor_name:
            raise TopologyException("sourceName and processorName must be different.")
        self._validate_topic_not_registered(topic)
        self.global_topics.append(topic)
        self.node_factories[source_name] = SourceNodeSpec(source_name, [topic], key_serde, value_serde,
                                                          resolve_extractor(timestamp_extractor,
                                                                            "timestamp_extractor"))
        self.node_to_source_topics[source_name] = [topic]
        self._grouper.add(source_name)
        self.node_factories[processor_name] = ProcessorNodeSpec(processor_name, [source_name], supplier, [name])
        self._grouper.add(processor_name)
        self._grouper.unite(processor_name, [source_name])
        self.global_state_builders[name] = store_builder
        store_builder.with_logging_disabled()   # a global store's topic is its changelog (Kafka 4.3 disables logging)
        self._node_groups = None

    def add_internal_topic(self, topic: str, number_of_partitions: Optional[int] = None) -> None:
        _require(topic, "topicName can't be null")
        self.internal_topics[topic] = InternalTopicSpec(topic, number_of_partitions)

    def copartition_sources(self, source_nodes: Iterable[str]) -> None:
        self.copartition_source_groups.append(list(source_nodes))

    def _validate_topic_not_registered(self, topic: str) -> None:
        if topic in self.raw_source_topics or topic in self.global_topics:
            raise TopologyException(f"Topic {topic} has already been registered by another source.")

    def validate_copartition(self) -> None:
        """Build-time check: copartitioned topics whose user-fixed counts differ (Kafka's message)."""
        for group in self.copartition_topic_groups():
            fixed = {t: self.internal_topics[t].number_of_partitions for t in group
                     if t in self.internal_topics and self.internal_topics[t].number_of_partitions is not None}
            if len(fixed) == len(group) and len(set(fixed.values())) > 1:
                raise TopologyException(
                    f"Following topics do not have the same number of partitions: [{_java_map(fixed)}]")

    # ------------------------------------------------------------------ structure
    def node_groups(self) -> dict[int, list[str]]:
        """Subtopology id -> node names, numbered by first appearance in insertion order."""
        if self._node_groups is None:
            groups: dict[int, list[str]] = {}
            root_to_group: dict[str, int] = {}
            for name in self.node_factories:
                root = self._grouper.root(name)
                if root not in root_to_group:
                    root_to_group[root] = len(groups)
                    groups[len(groups)] = []
                groups[root_to_group[root]].append(name)
            self._node_groups = groups
        return self._node_groups

    def is_global_source(self, name: str) -> bool:
        """Whether ``name`` is the source node of a global store."""
        topics = self.node_to_source_topics.get(name)
        return topics is not None and len(topics) == 1 and topics[0] in self.global_topics

    def _is_global_group(self, nodes: list[str]) -> bool:
        return any(self.is_global_source(n) for n in nodes)

    def decorate_topic(self, topic: str) -> str:
        """Internal topics carry the application id as prefix (``<application.id>-<name>``)."""
        if topic in self.internal_topics:
            if self.application_id is None:
                raise TopologyException("there are internal topics and applicationId hasn't been set. "
                                        "Call setApplicationId first")
            return f"{self.application_id}-{topic}"
        return topic

    def subtopologies(self) -> list[SubtopologySpec]:
        """Every non-global subtopology, ready for a task to instantiate."""
        out = []
        for gid, names in self.node_groups().items():
            if self._is_global_group(names):
                continue
            nodes = [self.node_factories[n] for n in names]
            sources: dict[str, str] = {}
            repartition_sources = []
            sinks: list[str] = []
            stores: list[str] = []
            for node in nodes:
                if isinstance(node, SourceNodeSpec):
                    for topic in node.topics:
                        decorated = self.decorate_topic(topic)
                        sources[decorated] = node.name
                        if topic in self.internal_topics:
                            repartition_sources.append(decorated)
                elif isinstance(node, SinkNodeSpec):
                    if node.topic is not None:   # a TopicNameExtractor's topics are known only as records come
                        sinks.append(self.decorate_topic(node.topic))
                else:
                    stores.extend(s for s in node.stores if s not in stores)
            out.append(SubtopologySpec(gid, nodes, sources, sinks, stores, repartition_sources))
        return out

    def global_stores(self) -> list[GlobalStoreSpec]:
        out = []
        for gid, names in self.node_groups().items():
            if not self._is_global_group(names):
                continue
            source = next(self.node_factories[n] for n in names if self.is_global_source(n))
            processor = next(self.node_factories[n] for n in names if n != source.name)
            assert isinstance(source, SourceNodeSpec) and isinstance(processor, ProcessorNodeSpec)
            out.append(GlobalStoreSpec(gid, source, processor, processor.stores[0], source.topics[0]))
        return out

    def copartition_topic_groups(self) -> list[list[str]]:
        """Copartition groups as (undecorated) topic names."""
        groups = []
        for group in self.copartition_source_groups:
            topics: list[str] = []
            for node in group:
                for topic in self.node_to_source_topics.get(node, []):
                    if topic not in topics:
                        topics.append(topic)
            groups.append(topics)
        return groups

    def source_topics(self) -> list[str]:
        """User (non-internal, non-global) source topics in registration order."""
        out: list[str] = []
        for topics in self.node_to_source_topics.values():
            for t in topics:
                if t not in self.internal_topics and t not in self.global_topics and t not in out:
                    out.append(t)
        return out

    def has_topic_name_extractors(self) -> bool:
        """Whether a sink chooses its topics per record (its topics are not known before records come)."""
        return any(isinstance(node, SinkNodeSpec) and node.topic is None for node in self.node_factories.values())

    def output_topics(self, dead_letter_queue_topic: Optional[str] = None) -> list[str]:
        """Every topic the tasks write (decorated sink topics, in subtopology order), and the dead letter queue
        topic when one is configured."""
        out: list[str] = []
        for sub in self.subtopologies():
            out.extend(t for t in sub.sink_topics if t not in out)
        if dead_letter_queue_topic is not None and dead_letter_queue_topic not in out:
            out.append(dead_letter_queue_topic)
        return out

    # ------------------------------------------------------------------ describe
    def describe(self) -> descriptions.TopologyDescription:
        description = descriptions.TopologyDescription()
        for gid, names in self.node_groups().items():
            if self._is_global_group(names):
                source_name = next(n for n in names if self.is_global_source(n))
                proc_name = next(n for n in names if n != source_name)
                proc = self.node_factories[proc_name]
                assert isinstance(proc, ProcessorNodeSpec)
                source = descriptions.Source(source_name, self.node_to_source_topics[source_name][:1])
                processor = descriptions.Processor(proc_name, proc.stores[:1])
                source.successors.add(processor)
                processor.predecessors.add(source)
                description.global_stores.append(descriptions.GlobalStore(gid, source, processor))
                continue
            ordered = hash_set_order(names)
            described = [self._describe_node(self.node_factories[n]) for n in ordered]
            predecessors = {n: list(getattr(self.node_factories[n], "predecessors", [])) for n in names}
            description.subtopologies.append(descriptions.describe_subtopology(gid, described, predecessors))
        return description

    @staticmethod
    def _describe_node(node: NodeSpec) -> descriptions.Node:
        if isinstance(node, SourceNodeSpec):
            return descriptions.Source(node.name, node.topics)
        if isinstance(node, SinkNodeSpec):
            return descriptions.Sink(node.name, node.topic,
                                     None if node.topic_extractor is None else str(node.topic_extractor))
        return descriptions.Processor(node.name, node.stores)


def check_supplier(supplier: Any) -> None:
    """Kafka's ``ApiUtils.checkSupplier``: a supplier must make a new processor on every call."""
    if not callable(supplier):
        raise ValueError(f"processor supplier must be a zero-argument callable (e.g. the Processor class), "
                         f"got {supplier!r}")
    first, second = supplier(), supplier()
    if first is second:
        name = getattr(supplier, "__qualname__", type(supplier).__name__)
        raise ValueError(f"{name} generates single reference. {name}#get() must return a new object each time it "
                         "is called.")


def _require(value: Any, message: str) -> None:
    if value is None:
        raise ValueError(message)


def _java_map(mapping: dict[str, Any]) -> str:
    """A ``TreeMap.toString()`` of topic -> count: ``{a=1, b=2}``."""
    return "{" + ", ".join(f"{k}={mapping[k]}" for k in sorted(mapping)) + "}"

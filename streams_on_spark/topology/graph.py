"""The logical graph the DSL builds: one node per operation, written into the physical topology at build.

Mirrors Kafka's ``InternalStreamsBuilder``: a shared name counter, build priorities (creation order), the
``merge.repartition.topics`` optimization, and nodes written in priority order once all parents are written.
"""
from __future__ import annotations

import heapq
import itertools
import re
from typing import Any, Callable, Iterable, Optional

from streams_on_spark.config import (
    BOOLEAN,
    ENSURE_EXPLICIT_INTERNAL_RESOURCE_NAMING,
    STREAMS_CONFIG_KEYS,
    TOPOLOGY_OPTIMIZATION,
    parse_type,
)
from streams_on_spark.errors import StreamsException, TopologyException
from streams_on_spark.operators.stateless import PassThrough, RepartitionNullKeyFilter
from streams_on_spark.topology.builder import InternalResourcesNaming, InternalTopologyBuilder
from streams_on_spark.window import OperatorWindows

REPARTITION_SUFFIX = "-repartition"
_GENERATED = re.compile(r"KSTREAM.*-[0-9]{10}")


class DslSupplier:
    """A DSL processor's factory, whose two table settings may still change until the topology is built: whether it
    sends old values (Kafka's ``enableSendingOldValues``) and the store a table source materializes into. A windowed
    operator's ``windows`` reach its processor as the keyword ``windows`` and its node spec as a field."""

    def __init__(self, factory: Callable[..., Any], *args: Any, queryable_name: Optional[str] = None,
                 windows: Optional[OperatorWindows] = None) -> None:
        self.factory, self.args = factory, args
        self.send_old_values = False
        self.queryable_name = queryable_name
        self.windows = windows

    def __call__(self) -> Any:
        processor = self.factory(*self.args, **self.keywords())
        if self.send_old_values:
            processor.send_old_values = True
        if self.queryable_name is not None:
            processor.queryable_name = self.queryable_name
        return processor

    def keywords(self) -> dict[str, Any]:
        """The typed fields the processor is built with, as keywords."""
        return {} if self.windows is None else {"windows": self.windows}


class TableSupplier(DslSupplier):
    """The supplier of a table operator (a source table, a filter, an aggregation, a join's merge, a suppression):
    its store is the typed field ``store_name`` (None: the operator is not materialized), which the processor gets as
    the keyword ``store_name`` and the DSL's value getters and old-value settings read, so neither depends on a
    processor's positional arguments."""

    def __init__(self, factory: Callable[..., Any], *args: Any, store_name: Optional[str],
                 queryable_name: Optional[str] = None, windows: Optional[OperatorWindows] = None) -> None:
        super().__init__(factory, *args, queryable_name=queryable_name, windows=windows)
        self.store_name = store_name

    def keywords(self) -> dict[str, Any]:
        return {**super().keywords(), "store_name": self.store_name}


class GraphNode:
    """A node of the logical graph."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.children: list[GraphNode] = []
        self.parents: list[GraphNode] = []
        self.build_priority = 0
        self.key_changing = False
        self.value_changing = False
        self.merge_node = False
        self.written = False
        # a left/outer join that accepts null keys (KIP-962): a repartition upstream of it keeps them
        self.relaxed_null_keys = False

    def add_child(self, child: "GraphNode") -> None:
        if child not in self.children:
            self.children.append(child)
        if self not in child.parents:
            child.parents.append(self)

    def remove_child(self, child: "GraphNode") -> None:
        if child in self.children:
            self.children.remove(child)
        if self in child.parents:
            child.parents.remove(self)

    def clear_children(self) -> None:
        for child in list(self.children):
            self.remove_child(child)

    def parent_names(self) -> list[str]:
        return [parent.name for parent in self.parents]

    def write(self, builder: InternalTopologyBuilder) -> None:
        """Add this node's physical nodes, stores and topics."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


class RootNode(GraphNode):
    pass


class ProcessorGraphNode(GraphNode):
    """A processor; optionally owning a store and connected to named stores."""

    def __init__(self, name: str, supplier: Callable[[], Any], store_builder: Any = None,
                 store_names: Iterable[str] = ()) -> None:
        super().__init__(name)
        self.supplier = supplier
        self.store_builder = store_builder
        self.store_names = list(store_names)

    @property
    def windows(self) -> Optional[OperatorWindows]:
        """The operator's time parameters: its DSL supplier's (a Processor API processor has none)."""
        return self.supplier.windows if isinstance(self.supplier, DslSupplier) else None

    def write(self, builder: InternalTopologyBuilder) -> None:
        builder.add_processor(self.name, self.supplier, self.parent_names(), self.windows)
        if self.store_names:
            builder.connect_processor_and_state_stores(self.name, self.store_names)
        if self.store_builder is not None:
            builder.add_state_store(self.store_builder, [self.name])


class GracePeriodGraphNode(ProcessorGraphNode):
    """A windowed aggregation's processor: ``suppress(until_window_closes)`` downstream reads its windows' grace
    (Kafka's ``GracePeriodGraphNode``)."""

    def __init__(self, name: str, supplier: DslSupplier, store_builder: Any = None,
                 store_names: Iterable[str] = ()) -> None:
        if supplier.windows is None or supplier.windows.kind != "aggregation":
            raise TopologyException(f"GracePeriodGraphNode {name} needs a windowed aggregation's supplier")
        super().__init__(name, supplier, store_builder, store_names)


class TableSourceMaterializingNode(ProcessorGraphNode):
    """A processor holding a ``KTableSource`` (``to_table``): its store exists only when materialized."""

    def write(self, builder: InternalTopologyBuilder) -> None:
        builder.add_processor(self.name, self.supplier, self.parent_names())
        if self.store_builder is not None and self.supplier.queryable_name:
            builder.add_state_store(self.store_builder, [self.name])


class StreamSourceNode(GraphNode):
    def __init__(self, name: str, topics: list[str], consumed: Any) -> None:
        super().__init__(name)
        self.topics = list(topics)
        self.consumed = consumed

    def write(self, builder: InternalTopologyBuilder) -> None:
        c = self.consumed
        builder.add_source(self.name, self.topics, c.key_serde, c.value_serde, c.timestamp_extractor)


class TableSourceNode(GraphNode):
    """``table()``/``global_table()``: a source plus the ``KTableSource`` processor (node name) and its store."""

    def __init__(self, processor_name: str, source_name: str, topic: str, consumed: Any,
                 supplier: DslSupplier, store_builder: Any, is_global: bool) -> None:
        super().__init__(processor_name)
        self.source_name, self.topic, self.consumed = source_name, topic, consumed
        self.supplier, self.store_builder, self.is_global = supplier, store_builder, is_global

    def write(self, builder: InternalTopologyBuilder) -> None:
        c = self.consumed
        if self.is_global:
            builder.add_global_store(self.store_builder, self.source_name, self.topic, self.name, self.supplier,
                                     c.key_serde, c.value_serde, c.timestamp_extractor)
            return
        builder.add_source(self.source_name, [self.topic], c.key_serde, c.value_serde, c.timestamp_extractor)
        builder.add_processor(self.name, self.supplier, [self.source_name])
        if self.supplier.queryable_name:
            builder.add_state_store(self.store_builder, [self.name])


class RepartitionNode(GraphNode):
    """A repartition: (null-key filter →) sink to the topic ‖ source from the topic. Named after its source."""

    def __init__(self, source_name: str, sink_name: str, filter_name: Optional[str], topic: str,
                 key_serde: Any, value_serde: Any, partitioner: Any = None,
                 number_of_partitions: Optional[int] = None, optimizable: bool = True) -> None:
        super().__init__(source_name)
        self.sink_name, self.filter_name, self.topic = sink_name, filter_name, topic
        self.key_serde, self.value_serde = key_serde, value_serde
        self.partitioner, self.number_of_partitions, self.optimizable = partitioner, number_of_partitions, optimizable
        self.pass_null_keys = False

    def write(self, builder: InternalTopologyBuilder) -> None:
        builder.add_internal_topic(self.topic, self.number_of_partitions)
        if self.filter_name is not None:
            kind = PassThrough if self.pass_null_keys else RepartitionNullKeyFilter
            builder.add_processor(self.filter_name, DslSupplier(kind), self.parent_names())
            builder.add_sink(self.sink_name, self.topic, [self.filter_name], self.key_serde, self.value_serde,
                             self.partitioner)
        else:
            builder.add_sink(self.sink_name, self.topic, self.parent_names(), self.key_serde, self.value_serde,
                             self.partitioner)
        builder.add_source(self.name, [self.topic], self.key_serde, self.value_serde)


class StreamSinkNode(GraphNode):
    def __init__(self, name: str, topic: str, produced: Any) -> None:
        super().__init__(name)
        self.topic, self.produced = topic, produced

    def write(self, builder: InternalTopologyBuilder) -> None:
        pr = self.produced
        builder.add_sink(self.name, self.topic, self.parent_names(), pr.key_serde, pr.value_serde, pr.partitioner)


class StateStoreNode(GraphNode):
    def __init__(self, store_builder: Any) -> None:
        super().__init__(f"STATE-STORE:{store_builder.name}")
        self.store_builder = store_builder

    def write(self, builder: InternalTopologyBuilder) -> None:
        builder.add_state_store(self.store_builder)


class GlobalStoreNode(GraphNode):
    def __init__(self, store_builder: Any, source_name: str, topic: str, consumed: Any, processor_name: str,
                 supplier: Callable[[], Any]) -> None:
        super().__init__(processor_name)
        self.store_builder, self.source_name, self.topic = store_builder, source_name, topic
        self.consumed, self.supplier = consumed, supplier

    def write(self, builder: InternalTopologyBuilder) -> None:
        self.store_builder.with_logging_disabled()
        c = self.consumed
        builder.add_global_store(self.store_builder, self.source_name, self.topic, self.name, self.supplier,
                                 c.key_serde, c.value_serde, c.timestamp_extractor)


class InternalStreamsBuilder:
    """Owns the graph and the shared name counter; writes the graph into an ``InternalTopologyBuilder``."""

    def __init__(self, topology_builder: InternalTopologyBuilder) -> None:
        self.topology_builder = topology_builder
        self.root = RootNode("root")
        self._index = itertools.count()
        self._priority = itertools.count()
        self.key_changing_to_repartitions: dict[GraphNode, list[RepartitionNode]] = {}
        self.merge_nodes: list[GraphNode] = []
        self.copartition_groups: list[list[str]] = []
        self._copartition_written = 0
        # KIP-1111, from the StreamsBuilder's topology config (Kafka's TopologyConfig); build(config) may set it too
        self.ensure_explicit_naming = False
        # what Kafka refuses when it builds, not at the DSL call (a suppress of a table versioned upstream)
        self.build_failures: list[str] = []

    # naming (one counter for processors and stores)
    def new_processor_name(self, prefix: str) -> str:
        return f"{prefix}{next(self._index):010d}"

    def new_store_name(self, prefix: str) -> str:
        return f"{prefix}STATE-STORE-{next(self._index):010d}"

    def materialized_store_name(self, materialized: Any, prefix: str) -> str:
        """Kafka's ``MaterializedInternal(materialized, builder, prefix)``: the user's store name, else a generated
        one, recorded with its changelog (when logging is enabled) as not named for KIP-1111."""
        if materialized.name is not None:
            return materialized.name
        store = self.new_store_name(prefix)
        self.add_implicit_names(store, logging_enabled=materialized.logging_enabled)
        return store

    def add_implicit_names(self, store: Optional[str] = None, logging_enabled: bool = False,
                           repartition_topic: Optional[str] = None, *, changelog_only: bool = False) -> None:
        """Record generated internal resource names (KIP-1111): a store and its ``-changelog`` when logged (only
        the changelog for a suppression buffer, as Kafka), or a repartition topic."""
        changelog = store + "-changelog" if store is not None and logging_enabled else None
        if changelog_only and changelog is None:
            return
        self.topology_builder.add_implicit_internal_names(InternalResourcesNaming(
            None if changelog_only else store, changelog, repartition_topic))

    def name_or_generate(self, name: Optional[str], prefix: str) -> str:
        """Kafka's ``orElseGenerateWithPrefix``: the index is burned even when the user named the node."""
        generated = self.new_processor_name(prefix)
        return name if name is not None else generated

    def suffixed_or_generate(self, name: Optional[str], suffix: str, prefix: str) -> str:
        """Kafka's ``suffixWithOrElseGet``: ``name + suffix``, or a generated name; burns an index either way."""
        generated = self.new_processor_name(prefix)
        return name + suffix if name is not None else generated

    def add_graph_node(self, parents: GraphNode | Iterable[GraphNode], child: GraphNode) -> None:
        for parent in ([parents] if isinstance(parents, GraphNode) else list(parents)):
            parent.add_child(child)
            self._track(child)

    def _track(self, node: GraphNode) -> None:
        node.build_priority = next(self._priority)
        if node.key_changing:
            self.key_changing_to_repartitions.setdefault(node, [])
        elif isinstance(node, RepartitionNode) and node.optimizable:
            parent = self._key_changing_parent(node)
            if parent is not None and node not in self.key_changing_to_repartitions[parent]:
                self.key_changing_to_repartitions[parent].append(node)
        elif node.merge_node:
            if node not in self.merge_nodes:
                self.merge_nodes.append(node)

    def create_repartition(self, prefix: str, key_serde: Any, value_serde: Any, partitioner: Any = None,
                           number_of_partitions: Optional[int] = None, optimizable: bool = True, *,
                           named_by_user: bool = True) -> RepartitionNode:
        """Kafka's ``createRepartitionedSource``: always burns three indices (sink, filter, source); a topic not
        ``named_by_user`` is recorded for KIP-1111."""
        topic = prefix if prefix.endswith(REPARTITION_SUFFIX) else prefix + REPARTITION_SUFFIX
        if not named_by_user:
            self.add_implicit_names(repartition_topic=topic)
        gen_sink = self.new_processor_name("KSTREAM-SINK-")
        gen_filter = self.new_processor_name("KSTREAM-FILTER-")
        gen_source = self.new_processor_name("KSTREAM-SOURCE-")
        if _GENERATED.fullmatch(prefix):
            sink, filt, source = gen_sink, gen_filter, gen_source
        else:
            sink, filt, source = topic + "-sink", topic + "-filter", topic + "-source"
        return RepartitionNode(source, sink, filt, topic, key_serde, value_serde, partitioner,
                               number_of_partitions, optimizable)

    # ----------------------------------------------------------------- build
    def build(self, config: Optional[dict] = None) -> None:
        self._merge_duplicate_sources()
        if self.build_failures:
            raise TopologyException(self.build_failures[0])
        if _optimizations(config) & {"merge.repartition.topics"}:
            self._merge_repartition_topics()
        self._relax_null_key_filters()
        heap: list[tuple[int, int, GraphNode]] = [(0, 0, self.root)]
        seq = itertools.count(1)
        while heap:
            _, _, node = heapq.heappop(heap)
            if all(parent.written for parent in node.parents) and not node.written:
                node.write(self.topology_builder)
                node.written = True
            for child in node.children:
                heapq.heappush(heap, (child.build_priority, next(seq), child))
        for group in self.copartition_groups[self._copartition_written:]:
            self.topology_builder.copartition_sources(group)
        self._copartition_written = len(self.copartition_groups)
        self.topology_builder.validate_copartition()
        self.topology_builder.check_unprovided_names(self.ensure_explicit_naming or ensure_explicit_naming(config))

    def _relax_null_key_filters(self) -> None:
        """Kafka's ``rewriteRepartitionNodes``: repartition filters drop null keys, except before a join that
        accepts them (left/outer joins, KIP-962)."""
        seen: set[int] = set()
        stack = [self.root]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, RepartitionNode) and node.filter_name is not None:
                node.pass_null_keys = _has_relaxed_join_downstream(node)
            stack.extend(node.children)

    def _merge_duplicate_sources(self) -> None:
        by_topic: dict[str, StreamSourceNode] = {}
        for node in list(self.root.children):
            if not isinstance(node, StreamSourceNode):
                continue
            for topic in node.topics:
                main = by_topic.get(topic)
                if main is None:
                    by_topic[topic] = node
                    continue
                if main.topics != node.topics:
                    raise TopologyException("Two source nodes are subscribed to overlapping but not equal input topics")
                for child in list(node.children):
                    node.remove_child(child)
                    main.add_child(child)
                self.root.remove_child(node)
                break

    def _key_changing_parent(self, node: GraphNode) -> Optional[GraphNode]:
        should_be = _find_parent(node, lambda n: n.key_changing or n.value_changing)
        key_changing = _find_parent(node, lambda n: n.key_changing)
        return key_changing if should_be is not None and should_be is key_changing else None

    def _merge_repartition_topics(self) -> None:
        self._fold_merge_nodes()
        for key_changer, repartitions in list(self.key_changing_to_repartitions.items()):
            if not repartitions:
                continue
            key_serde = next((r.key_serde for r in repartitions if r.key_serde is not None), None)
            value_serde = next((r.value_serde for r in repartitions if r.value_serde is not None), None)
            merged = self.create_repartition(repartitions[0].topic, key_serde, value_serde)
            merged.build_priority = key_changer.build_priority
            for old in repartitions:
                child = _find_parent(old, lambda n: key_changer in n.parents)
                if child is None:
                    raise StreamsException(f"Found a null keyChangingChild node for {old}")
                merged.add_child(child)
                key_changer.remove_child(child)
                old_parents = list(old.parents)
                for grandchild in list(old.children):
                    for parent in old_parents:
                        parent.add_child(grandchild)
                for parent in old_parents:
                    parent.remove_child(old)
                old.clear_children()
                for group in self.copartition_groups:
                    if old.name in group:
                        group[group.index(old.name)] = merged.name
            key_changer.add_child(merged)
            del self.key_changing_to_repartitions[key_changer]

    def _fold_merge_nodes(self) -> None:
        folded: dict[GraphNode, list[RepartitionNode]] = {}
        to_remove: set[GraphNode] = set()
        for merge in self.merge_nodes:
            folded[merge] = []
            changers = []
            for changer, repartitions in self.key_changing_to_repartitions.items():
                if all(_find_parent(r, lambda n: merge in n.parents) is not None for r in repartitions):
                    if _find_parent(merge, lambda n: changer in n.parents) is not None:
                        changers.append(changer)
            for changer in changers:
                for r in self.key_changing_to_repartitions[changer]:
                    if r not in folded[merge]:
                        folded[merge].append(r)
                to_remove.add(changer)
        for merge, repartitions in folded.items():
            self.key_changing_to_repartitions[merge] = repartitions
        for changer in to_remove:
            self.key_changing_to_repartitions.pop(changer, None)


def _has_relaxed_join_downstream(node: GraphNode) -> bool:
    seen: set[int] = set()
    stack = list(node.children)
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.relaxed_null_keys:
            return True
        stack.extend(current.children)
    return False


def _find_parent(start: GraphNode, predicate: Callable[[GraphNode], bool]) -> Optional[GraphNode]:
    """Kafka's ``findParentNodeMatching``: the node itself, a parent, or (depth first, last wins) an ancestor."""
    if predicate(start):
        return start
    found = None
    for parent in start.parents:
        if predicate(parent):
            return parent
        found = _find_parent(parent, predicate)
    return found


_ALL = {"reuse.ktable.source.topics", "merge.repartition.topics", "single.store.self.join"}


def ensure_explicit_naming(config: Optional[dict]) -> bool:
    """``ensure.explicit.internal.resource.naming`` (KIP-1111, default false), parsed as Kafka parses a BOOLEAN."""
    key = ENSURE_EXPLICIT_INTERNAL_RESOURCE_NAMING
    return bool(parse_type(key, (config or {}).get(key, False), BOOLEAN))


def _optimizations(config: Optional[dict]) -> set[str]:
    """``topology.optimization``: ``all``, ``none`` or a comma list of rule names, checked as StreamsConfig does."""
    value = (config or {}).get(TOPOLOGY_OPTIMIZATION)
    if value is None:
        return set()
    key = STREAMS_CONFIG_KEYS[TOPOLOGY_OPTIMIZATION]
    value = parse_type(TOPOLOGY_OPTIMIZATION, value, key.type)
    key.validator(TOPOLOGY_OPTIMIZATION, value)  # type: ignore[misc]
    rules = set(re.split(r"\s*,\s*", value))
    return set(_ALL) if "all" in rules else rules - {"none"}

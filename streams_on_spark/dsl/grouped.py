"""Grouped streams and tables: ``KGroupedStream``, ``CogroupedKStream`` (KIP-150), ``KGroupedTable``."""
from __future__ import annotations

from typing import Any, Callable, Optional

from streams_on_spark.dsl.abstract_stream import AbstractStream
from streams_on_spark.errors import require_callable
from streams_on_spark.dsl.ktable import KTable, materialize, split_named_materialized
from streams_on_spark.dsl.params import Grouped, Materialized, Named
from streams_on_spark.operators.aggregations import (
    CogroupMerge,
    KStreamAggregate,
    KStreamCogroupAggregate,
    KStreamReduce,
    KTableAggregate,
    KTableReduce,
    count_adder,
    count_initializer,
    count_subtractor,
)
from streams_on_spark.serde import Serdes
from streams_on_spark.serde.changed import ChangedSerde
from streams_on_spark.topology.graph import (
    DslSupplier,
    GracePeriodGraphNode,
    GraphNode,
    InternalStreamsBuilder,
    ProcessorGraphNode,
    RepartitionNode,
    TableSupplier,
)


# count()'s functions live with the processors (the batch path recognises them); these names stay for task images
# pickled by earlier versions
_count_init, _count_add, _count_sub = count_initializer, count_adder, count_subtractor




class KGroupedStream(AbstractStream):
    """A stream grouped by key, ready for ``count``/``reduce``/``aggregate``/``cogroup``."""

    def __init__(self, builder: InternalStreamsBuilder, name: str, source_nodes: set[str], grouped: Grouped,
                 repartition_required: bool, graph_node: GraphNode) -> None:
        super().__init__(builder, name, grouped.key_serde, grouped.value_serde, source_nodes, graph_node)
        self._repartition_name = grouped.name
        self._repartition_required = repartition_required
        self._repartition_node: Optional[RepartitionNode] = None

    def _repartition_if_required(self, store_name: str, store_named: bool = True) -> tuple[GraphNode, set[str]]:
        """Insert (or, for a named ``Grouped``, reuse) the repartition node; always burns three indices."""
        if not self._repartition_required:
            return self._node, self._source_nodes
        prefix = self._repartition_name if self._repartition_name is not None else store_name
        node = self._builder.create_repartition(prefix, self.key_serde, self.value_serde,
                                                named_by_user=self._repartition_name is not None or store_named)
        if self._repartition_node is None or self._repartition_name is None:
            self._repartition_node = node
        self._builder.add_graph_node(self._node, self._repartition_node)
        return self._repartition_node, {self._repartition_node.name}

    def _aggregate(self, processor_name: str, m: Materialized, store_name: str, key_serde: Any, value_serde: Any,
                   supplier: DslSupplier) -> KTable:
        parent, source_nodes = self._repartition_if_required(store_name, m.name is not None)
        node = ProcessorGraphNode(processor_name, supplier, materialize(m, store_name, key_serde, value_serde))
        self._builder.add_graph_node(parent, node)
        return KTable(self._builder, processor_name, key_serde, value_serde, source_nodes, m.name, supplier, node)

    def _store(self, m: Materialized, prefix: str) -> str:
        return self._builder.materialized_store_name(m, prefix)

    def _name(self, named: Optional[Named], prefix: str) -> str:
        return self._builder.name_or_generate(None if named is None else named.name, prefix)

    def count(self, named: Any = None, materialized: Any = None) -> KTable:
        """Count records per key (null keys and values are skipped) into a ``Long`` table."""
        named, m = split_named_materialized(named, materialized)
        if m is not None and m.name is None:
            self._builder.new_store_name("KSTREAM-AGGREGATE-")  # Kafka burns one index here for compatibility
        m = m or Materialized()
        store = self._store(m, "KSTREAM-AGGREGATE-")
        key_serde = m.key_serde if m.key_serde is not None else self.key_serde
        value_serde = m.value_serde if m.value_serde is not None else Serdes.Long()
        name = self._name(named, "KSTREAM-AGGREGATE-")
        supplier = TableSupplier(KStreamAggregate, count_initializer, count_adder, store_name=store)
        return self._aggregate(name, m, store, key_serde, value_serde, supplier)

    def reduce(self, reducer: Callable[[Any, Any], Any], named: Any = None, materialized: Any = None) -> KTable:
        """Combine values per key with ``reducer(aggregate, value)``."""
        require_callable(reducer, "reducer")
        named, m = split_named_materialized(named, materialized)
        m = m or Materialized()
        store = self._store(m, "KSTREAM-REDUCE-")
        key_serde = m.key_serde if m.key_serde is not None else self.key_serde
        value_serde = m.value_serde if m.value_serde is not None else self.value_serde
        name = self._name(named, "KSTREAM-REDUCE-")
        return self._aggregate(name, m, store, key_serde, value_serde,
                               TableSupplier(KStreamReduce, reducer, store_name=store))

    def aggregate(self, initializer: Callable[[], Any], aggregator: Callable[[Any, Any, Any], Any],
                  named: Any = None, materialized: Any = None) -> KTable:
        """Fold values per key: ``aggregator(key, value, aggregate)`` starting from ``initializer()``."""
        require_callable(initializer, "initializer")
        require_callable(aggregator, "aggregator")
        named, m = split_named_materialized(named, materialized)
        m = m or Materialized()
        store = self._store(m, "KSTREAM-AGGREGATE-")
        key_serde = m.key_serde if m.key_serde is not None else self.key_serde
        name = self._name(named, "KSTREAM-AGGREGATE-")
        supplier = TableSupplier(KStreamAggregate, initializer, aggregator, store_name=store)
        return self._aggregate(name, m, store, key_serde, m.value_serde, supplier)

    def windowed_by(self, windows: Any) -> Any:
        """Aggregate per window: ``TimeWindows`` (tumbling/hopping), ``SlidingWindows`` or ``SessionWindows``."""
        from streams_on_spark.dsl import windowed
        return windowed.windowed_by(self, windows, windowed.TimeWindowedKStream, windowed.SlidingWindowedKStream,
                                    windowed.SessionWindowedKStream)

    def cogroup(self, aggregator: Callable[[Any, Any, Any], Any]) -> "CogroupedKStream":
        """Start a cogroup (KIP-150): several grouped streams folded into one aggregate and one store."""
        require_callable(aggregator, "aggregator")
        return CogroupedKStream(self._builder).cogroup(self, aggregator)


class CogroupedKStream:
    """Several grouped streams, each with its aggregator, sharing one store."""

    def __init__(self, builder: InternalStreamsBuilder) -> None:
        self._builder = builder
        self._inputs: dict[int, tuple[KGroupedStream, Callable[[Any, Any, Any], Any]]] = {}
        self._parents: dict[int, GraphNode] = {}  # repartition nodes survive across aggregate() calls

    def cogroup(self, grouped: KGroupedStream, aggregator: Callable[[Any, Any, Any], Any]) -> "CogroupedKStream":
        if not isinstance(grouped, KGroupedStream):
            raise ValueError(f"cogroup expects a KGroupedStream, got {type(grouped).__name__}")
        require_callable(aggregator, "aggregator")
        self._inputs[id(grouped)] = (grouped, aggregator)
        return self

    def aggregate(self, initializer: Callable[[], Any], named: Any = None, materialized: Any = None) -> KTable:
        """One aggregate per key; each input record updates it and emits the result."""
        require_callable(initializer, "initializer")
        return self._build(initializer, named, materialized,
                           lambda store, aggregator, _name: TableSupplier(KStreamCogroupAggregate, initializer,
                                                                          aggregator, store_name=store),
                           materialize, None, None)

    def windowed_by(self, windows: Any) -> Any:
        """Cogroup per time window, sliding window or session."""
        from streams_on_spark.dsl import windowed
        return windowed.windowed_by(self, windows, windowed.TimeWindowedCogroupedKStream,
                                    windowed.SlidingWindowedCogroupedKStream, windowed.SessionWindowedCogroupedKStream)

    def _build(self, initializer: Callable[[], Any], named: Any, materialized: Any,
               make_processor: Callable[[str, Callable[..., Any], str], DslSupplier],
               make_store: Callable[..., Any], key_serde_wrap: Optional[Callable[[Any], Any]],
               windows: Any) -> KTable:
        """Kafka's ``CogroupedStreamAggregateBuilder``: store name, repartitions, one aggregate per input, merge."""
        named, m = split_named_materialized(named, materialized)
        m = m or Materialized()
        store = self._builder.materialized_store_name(m, "COGROUPKSTREAM-AGGREGATE-")
        first = next(iter(self._inputs.values()))[0]
        key_serde = m.key_serde if m.key_serde is not None else first.key_serde
        parents = self._parents
        for key, (grouped, _) in self._inputs.items():
            if grouped._repartition_required:
                prefix = grouped._repartition_name if grouped._repartition_name is not None else store
                node = self._builder.create_repartition(prefix, grouped.key_serde, grouped.value_serde,
                                                        named_by_user=grouped._repartition_name is not None
                                                        or m.name is not None)
                if key not in parents:
                    self._builder.add_graph_node(grouped._node, node)
                    parents[key] = node
            else:
                parents[key] = grouped._node
        # Kafka copartitions the grouped streams' own source nodes (not the repartition sources)
        copartition: list[str] = []
        for grouped, _ in self._inputs.values():
            copartition.extend(n for n in sorted(grouped._source_nodes) if n not in copartition)
        self._builder.copartition_groups.append(copartition)
        agg_nodes: list[GraphNode] = []
        agg_suppliers: list[DslSupplier] = []
        for i, (key, (grouped, aggregator)) in enumerate(self._inputs.items()):
            name = self._builder.suffixed_or_generate(None if named is None else named.name, f"-cogroup-agg-{i}",
                                                      "COGROUPKSTREAM-AGGREGATE-")
            supplier = make_processor(store, aggregator, name)
            agg_suppliers.append(supplier)
            store_builder = None if agg_nodes else make_store(m, store, key_serde, m.value_serde)
            store_names = [store] if agg_nodes else ()
            node = (ProcessorGraphNode(name, supplier, store_builder, store_names) if windows is None
                    else GracePeriodGraphNode(name, supplier, store_builder, store_names))
            self._builder.add_graph_node(parents[key], node)
            agg_nodes.append(node)
        merge_name = self._builder.suffixed_or_generate(None if named is None else named.name, "-cogroup-merge",
                                                        "COGROUPKSTREAM-MERGE-")
        merge = ProcessorGraphNode(merge_name, DslSupplier(CogroupMerge))
        self._builder.add_graph_node(agg_nodes, merge)
        source_nodes: set[str] = set()
        for key, (grouped, _) in self._inputs.items():
            parent = parents[key]
            source_nodes |= {parent.name} if isinstance(parent, RepartitionNode) else grouped._source_nodes
        table_key_serde = key_serde if key_serde_wrap is None or key_serde is None else key_serde_wrap(key_serde)
        table = KTable(self._builder, merge_name, table_key_serde, m.value_serde, source_nodes, m.name,
                       DslSupplier(CogroupMerge), merge)
        table._join_store = store  # what a join reads this table through (it has no queryable name)
        table._old_value_inputs = ((), tuple(agg_suppliers))  # Kafka's KTablePassThrough: every aggregate sends
        return table


class KGroupedTable(AbstractStream):
    """A re-keyed table; aggregations take an adder and a subtractor."""

    def __init__(self, builder: InternalStreamsBuilder, name: str, source_nodes: set[str], grouped: Grouped,
                 graph_node: GraphNode) -> None:
        super().__init__(builder, name, grouped.key_serde, grouped.value_serde, source_nodes, graph_node)
        self._repartition_name = grouped.name
        self._repartition_node: Optional[RepartitionNode] = None

    def _aggregate(self, named: Optional[Named], prefix: str, m: Materialized, store: str, key_serde: Any,
                   value_serde: Any, supplier: DslSupplier) -> KTable:
        name = None if named is None else named.name
        sink_name = self._builder.suffixed_or_generate(name, "-sink", "KSTREAM-SINK-")
        source_name = self._builder.suffixed_or_generate(name, "-source", "KSTREAM-SOURCE-")
        func_name = self._builder.name_or_generate(name, prefix)
        topic = (self._repartition_name if self._repartition_name is not None else store) + "-repartition"
        if self._repartition_node is None or self._repartition_name is None:
            self._repartition_node = RepartitionNode(source_name, sink_name, None, topic, self.key_serde,
                                                     ChangedSerde(self.value_serde), optimizable=False)
        self._builder.add_graph_node(self._node, self._repartition_node)
        node = ProcessorGraphNode(func_name, supplier, materialize(m, store, key_serde, value_serde))
        self._builder.add_graph_node(self._repartition_node, node)
        return KTable(self._builder, func_name, key_serde, value_serde, {source_name}, m.name, supplier, node)

    def count(self, named: Any = None, materialized: Any = None) -> KTable:
        named, m = split_named_materialized(named, materialized)
        m = m or Materialized()
        store = self._builder.materialized_store_name(m, "KTABLE-AGGREGATE-")
        key_serde = m.key_serde if m.key_serde is not None else self.key_serde
        value_serde = m.value_serde if m.value_serde is not None else Serdes.Long()
        supplier = TableSupplier(KTableAggregate, count_initializer, count_adder, count_subtractor,
                                 store_name=store)
        return self._aggregate(named, "KTABLE-AGGREGATE-", m, store, key_serde, value_serde, supplier)

    def reduce(self, adder: Callable[[Any, Any], Any], subtractor: Callable[[Any, Any], Any], named: Any = None,
               materialized: Any = None) -> KTable:
        require_callable(adder, "adder")
        require_callable(subtractor, "subtractor")
        named, m = split_named_materialized(named, materialized)
        m = m or Materialized()
        store = self._builder.materialized_store_name(m, "KTABLE-AGGREGATE-")
        key_serde = m.key_serde if m.key_serde is not None else self.key_serde
        value_serde = m.value_serde if m.value_serde is not None else self.value_serde
        supplier = TableSupplier(KTableReduce, adder, subtractor, store_name=store)
        return self._aggregate(named, "KTABLE-REDUCE-", m, store, key_serde, value_serde, supplier)

    def aggregate(self, initializer: Callable[[], Any], adder: Callable[[Any, Any, Any], Any],
                  subtractor: Callable[[Any, Any, Any], Any], named: Any = None, materialized: Any = None) -> KTable:
        require_callable(initializer, "initializer")
        require_callable(adder, "adder")
        require_callable(subtractor, "subtractor")
        named, m = split_named_materialized(named, materialized)
        m = m or Materialized()
        store = self._builder.materialized_store_name(m, "KTABLE-AGGREGATE-")
        key_serde = m.key_serde if m.key_serde is not None else self.key_serde
        supplier = TableSupplier(KTableAggregate, initializer, adder, subtractor, store_name=store)
        return self._aggregate(named, "KTABLE-AGGREGATE-", m, store, key_serde, m.value_serde, supplier)

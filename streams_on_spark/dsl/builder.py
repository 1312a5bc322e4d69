"""``StreamsBuilder``: the DSL's entry point."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Callable, Optional, Sequence

from streams_on_spark.dsl.kstream import KStream
from streams_on_spark.dsl.ktable import KTable, materialize
from streams_on_spark.dsl.params import Consumed, Materialized
from streams_on_spark.errors import TopologyException, require, require_callable, require_instance, require_str
from streams_on_spark.operators.tables import KTableSource
from streams_on_spark.state.stores import StoreBuilder
from streams_on_spark.state.versioned import VersionedBytesStoreSupplier
from streams_on_spark.topology.graph import (
    DslSupplier,
    GlobalStoreNode,
    InternalStreamsBuilder,
    StateStoreNode,
    StreamSourceNode,
    TableSourceNode,
    TableSupplier,
    ensure_explicit_naming,
)
from streams_on_spark.topology.topology import Topology


class GlobalKTable:
    """A table replicated in full to every task, fed from all partitions of its topic."""

    def __init__(self, store_name: str, key_serde: Any, value_serde: Any) -> None:
        self.queryable_store_name = store_name
        self.key_serde = key_serde
        self.value_serde = value_serde


class StreamsBuilder:
    """Build a topology with the DSL; ``build()`` returns the physical :class:`Topology`."""

    def __init__(self, topology_config: Optional[Mapping[str, Any]] = None) -> None:
        """``topology_config``: Kafka's ``TopologyConfig``, the application's config as the topology reads it
        (``ensure.explicit.internal.resource.naming``, KIP-1111); ``build(config)`` takes the same keys."""
        self._topology = Topology()
        self._internal = InternalStreamsBuilder(self._topology.internal_builder)
        config = require_instance(topology_config, "topology_config", Mapping, optional=True)
        self._internal.ensure_explicit_naming = ensure_explicit_naming(config)

    def stream(self, topics: str | Sequence[str], consumed: Optional[Consumed] = None) -> KStream:
        """A stream from one topic or several."""
        require(topics, "topics")
        names = [topics] if isinstance(topics, str) else list(topics) if isinstance(topics, Iterable) else []
        if not names or not all(isinstance(t, str) and t for t in names):
            raise ValueError(f"topics must be a non-empty str or a non-empty list of them, got {topics!r}")
        c = require_instance(consumed, "consumed", Consumed, optional=True) or Consumed()
        name = self._internal.name_or_generate(c.name, "KSTREAM-SOURCE-")
        node = StreamSourceNode(name, names, c)
        self._internal.add_graph_node(self._internal.root, node)
        return KStream(self._internal, name, c.key_serde, c.value_serde, {name}, False, node)

    def table(self, topic: str, consumed: Optional[Consumed] = None,
              materialized: Optional[Materialized] = None) -> KTable:
        """A table from a compacted topic; materialized when named or when a downstream operator needs it."""
        supplier, node, key_serde, value_serde, m = self._table_source(topic, consumed, materialized, False)
        return KTable(self._internal, node.name, key_serde, value_serde, {node.source_name}, m.name, supplier, node)

    def global_table(self, topic: str, consumed: Optional[Consumed] = None,
                     materialized: Optional[Materialized] = None) -> GlobalKTable:
        """A table every task can read in full (no copartitioning needed); never logged, never versioned."""
        given = materialized if isinstance(materialized, Materialized) else consumed
        if isinstance(getattr(given, "store_supplier", None), VersionedBytesStoreSupplier):
            raise TopologyException("GlobalTables cannot be versioned.")
        supplier, node, key_serde, value_serde, m = self._table_source(topic, consumed, materialized, True)
        return GlobalKTable(node.store_builder.name, key_serde, value_serde)

    def _table_source(self, topic: str, consumed: Any, materialized: Any,
                      is_global: bool) -> tuple[DslSupplier, TableSourceNode, Any, Any, Materialized]:
        """Kafka's naming order: store index first, then the source (``<Consumed name>-source``), then the table."""
        require_str(topic, "topic")
        if isinstance(consumed, Materialized) and materialized is None:
            consumed, materialized = None, consumed
        c = require_instance(consumed, "consumed", Consumed, optional=True) or Consumed()
        m = require_instance(materialized, "materialized", Materialized, optional=True) or Materialized()
        if is_global:
            m = m.with_logging_disabled()
        store = self._internal.materialized_store_name(m, f"{topic}-")
        key_serde = m.key_serde if m.key_serde is not None else c.key_serde
        value_serde = m.value_serde if m.value_serde is not None else c.value_serde
        source_name = self._internal.suffixed_or_generate(c.name, "-source", "KSTREAM-SOURCE-")
        processor_name = self._internal.name_or_generate(c.name, "KTABLE-SOURCE-")
        queryable = store if is_global else m.name  # global stores are always materialized
        supplier = TableSupplier(KTableSource, store_name=store, queryable_name=queryable)
        node = TableSourceNode(processor_name, source_name, topic,
                               Consumed(key_serde, value_serde, c.name, c.timestamp_extractor), supplier,
                               materialize(m, store, key_serde, value_serde), is_global=is_global)
        self._internal.add_graph_node(self._internal.root, node)
        return supplier, node, key_serde, value_serde, m

    def add_state_store(self, store_builder: Any) -> "StreamsBuilder":
        """A store for ``KStream.process(..., store_name)``."""
        require_instance(store_builder, "builder", StoreBuilder)
        self._internal.add_graph_node(self._internal.root, StateStoreNode(store_builder))
        return self

    def add_global_store(self, store_builder: Any, topic: str, consumed: Optional[Consumed],
                         supplier: Callable[[], Any]) -> "StreamsBuilder":
        """A global store fed by ``supplier``'s processor from every partition of ``topic``."""
        require_instance(store_builder, "storeBuilder", StoreBuilder)
        require_str(topic, "topic")
        c = require_instance(consumed, "consumed", Consumed, optional=True) or Consumed()
        require_callable(supplier, "stateUpdateSupplier")
        source_name = self._internal.suffixed_or_generate(c.name, "-source", "KSTREAM-SOURCE-")
        processor_name = self._internal.name_or_generate(c.name, "KTABLE-SOURCE-")
        node = GlobalStoreNode(store_builder, source_name, topic, c, processor_name, supplier)
        self._internal.add_graph_node(self._internal.root, node)
        return self

    def build(self, config: Optional[dict] = None) -> Topology:
        """Write the graph into a :class:`Topology`; ``{"topology.optimization": "all"}`` merges repartitions.

        As in Kafka, building again after adding operations writes only the new nodes into the same topology. With
        ``ensure.explicit.internal.resource.naming`` (here or in the builder's ``topology_config``) a generated
        repartition topic, changelog or store name fails the build with a ``TopologyException`` listing them all.
        """
        self._internal.build(require_instance(config, "config", Mapping, optional=True))
        return self._topology

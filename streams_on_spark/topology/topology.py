"""``Topology``: the physical graph, built by the DSL or by hand with the Processor API."""
from __future__ import annotations

from typing import Any, Callable, Optional

from streams_on_spark.topology.builder import InternalTopologyBuilder
from streams_on_spark.topology.description import TopologyDescription


class Topology:
    """Sources, processors, sinks and stores; ``describe()`` prints Kafka Streams' exact text."""

    def __init__(self) -> None:
        self.internal_builder = InternalTopologyBuilder()

    def add_source(self, name: str, *topics: str, key_serde: Any = None, value_serde: Any = None,
                   timestamp_extractor: Optional[Callable[..., int]] = None) -> "Topology":
        """A source node reading ``topics`` with the given serdes (config defaults when None)."""
        self.internal_builder.add_source(name, list(topics), key_serde, value_serde, timestamp_extractor)
        return self

    def add_processor(self, name: str, supplier: Callable[[], Any], *parent_names: str) -> "Topology":
        """A processor; ``supplier()`` returns a new ``Processor`` for every task."""
        self.internal_builder.add_processor(name, supplier, list(parent_names))
        for store_builder in getattr(supplier, "stores", lambda: ())() or ():
            self.internal_builder.add_state_store(store_builder, [name])
        return self

    def add_sink(self, name: str, topic: str, *parent_names: str, key_serde: Any = None, value_serde: Any = None,
                 partitioner: Optional[Callable[[str, Any, Any, int], Optional[int]]] = None) -> "Topology":
        """A sink writing to ``topic``; ``partitioner(topic, key, value, n)`` may pick the partition."""
        self.internal_builder.add_sink(name, topic, list(parent_names), key_serde, value_serde, partitioner)
        return self

    def add_state_store(self, store_builder: Any, *processor_names: str) -> "Topology":
        self.internal_builder.add_state_store(store_builder, processor_names)
        return self

    def add_global_store(self, store_builder: Any, source_name: str, topic: str, processor_name: str,
                         supplier: Callable[[], Any], key_serde: Any = None, value_serde: Any = None,
                         timestamp_extractor: Optional[Callable[..., int]] = None) -> "Topology":
        """A store fed from every partition of ``topic`` by ``supplier``'s processor (build it with logging disabled)."""
        self.internal_builder.add_global_store(store_builder, source_name, topic, processor_name, supplier,
                                               key_serde, value_serde, timestamp_extractor)
        return self

    def connect_processor_and_state_stores(self, processor_name: str, *store_names: str) -> "Topology":
        self.internal_builder.connect_processor_and_state_stores(processor_name, store_names)
        return self

    def describe(self) -> TopologyDescription:
        """Subtopologies, nodes and stores; ``str()`` of it is byte-identical to Kafka Streams'."""
        return self.internal_builder.describe()

    def __str__(self) -> str:
        return str(self.describe())

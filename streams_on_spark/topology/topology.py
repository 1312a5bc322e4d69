"""``Topology``: the physical graph, built by the DSL or by hand with the Processor API."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from streams_on_spark.errors import require_callable, require_instance, require_serde, require_str
from streams_on_spark.processor.api import topic_name_extractor
from streams_on_spark.state.stores import StoreBuilder
from streams_on_spark.topology.builder import InternalTopologyBuilder
from streams_on_spark.topology.description import TopologyDescription


class Topology:
    """Sources, processors, sinks and stores; ``describe()`` prints Kafka Streams' exact text."""

    def __init__(self) -> None:
        self.internal_builder = InternalTopologyBuilder()

    def add_source(self, name: str, *topics: str, key_serde: Any = None, value_serde: Any = None,
                   timestamp_extractor: Any = None) -> "Topology":
        """A source node reading ``topics`` with the given serdes (config defaults when None) and timestamp extractor
        (see :mod:`~streams_on_spark.timestamp_extractors`; None: the config's)."""
        _check_names("name", [name])
        _check_names("topic", topics)
        _check_serdes(key_serde, value_serde)
        self.internal_builder.add_source(name, list(topics), key_serde, value_serde, timestamp_extractor)
        return self

    def add_processor(self, name: str, supplier: Callable[[], Any], *parent_names: str) -> "Topology":
        """A processor; ``supplier()`` returns a new ``Processor`` for every task."""
        _check_names("name", [name])
        _check_names("parent name", parent_names)
        self.internal_builder.add_processor(name, supplier, list(parent_names))
        for store_builder in getattr(supplier, "stores", lambda: ())() or ():
            self.internal_builder.add_state_store(store_builder, [name])
        return self

    def add_sink(self, name: str, topic: Any, *parent_names: str, key_serde: Any = None, value_serde: Any = None,
                 partitioner: Optional[Callable[[str, Any, Any, int], Any]] = None) -> "Topology":
        """A sink writing to ``topic`` or to the topic a ``TopicNameExtractor`` chooses per record; a
        ``StreamPartitioner`` (or a callable ``(topic, key, value, n)``) may pick the partitions."""
        _check_names("name", [name])
        if isinstance(topic, str) or topic is None:
            _check_names("topic", [topic])
        else:
            topic_name_extractor(topic)
        _check_names("parent name", parent_names)
        _check_serdes(key_serde, value_serde, partitioner=partitioner)
        self.internal_builder.add_sink(name, topic, list(parent_names), key_serde, value_serde, partitioner)
        return self

    def add_state_store(self, store_builder: Any, *processor_names: str) -> "Topology":
        """A store (``Stores.key_value_store_builder(...)``, ...) connected to ``processor_names``."""
        require_instance(store_builder, "storeBuilder", StoreBuilder, optional=True)
        _check_names("processor name", processor_names)
        self.internal_builder.add_state_store(store_builder, processor_names)
        return self

    def add_global_store(self, store_builder: Any, source_name: str, topic: str, processor_name: str,
                         supplier: Callable[[], Any], key_serde: Any = None, value_serde: Any = None,
                         timestamp_extractor: Any = None) -> "Topology":
        """A store fed from every partition of ``topic`` by ``supplier``'s processor (build it with logging disabled)."""
        require_instance(store_builder, "storeBuilder", StoreBuilder, optional=True)
        _check_names("sourceName", [source_name])
        _check_names("topic", [topic])
        _check_names("processorName", [processor_name])
        _check_serdes(key_serde, value_serde)
        self.internal_builder.add_global_store(store_builder, source_name, topic, processor_name, supplier,
                                               key_serde, value_serde, timestamp_extractor)
        return self

    def connect_processor_and_state_stores(self, processor_name: str, *store_names: str) -> "Topology":
        """Give ``processor_name`` access to stores added with ``add_state_store``."""
        _check_names("processorName", [processor_name])
        _check_names("state store name", store_names)
        self.internal_builder.connect_processor_and_state_stores(processor_name, store_names)
        return self

    def describe(self) -> TopologyDescription:
        """Subtopologies, nodes and stores; ``str()`` of it is byte-identical to Kafka Streams'."""
        return self.internal_builder.describe()

    def __str__(self) -> str:
        return str(self.describe())


def _check_names(what: str, names: Iterable[Any]) -> None:
    """Node, topic and store names are non-empty strs; ``None`` is left to the builder's Kafka null checks."""
    for name in names:
        require_str(name, what, optional=True)


def _check_serdes(key_serde: Any, value_serde: Any, **functions: Any) -> None:
    """Serdes (``None``: the configured default) and optional user functions of a source or sink."""
    require_serde(key_serde, "key_serde")
    require_serde(value_serde, "value_serde")
    for what, function in functions.items():
        require_callable(function, what, optional=True)

"""``AbstractStream``: what every DSL stream, table and grouped stream holds (Kafka's ``AbstractStream``)."""
from __future__ import annotations

from typing import Any

from streams_on_spark.topology.graph import GraphNode, InternalStreamsBuilder


class AbstractStream:
    """The builder, the operator's name and graph node, the key and value serdes known at this point (``None``:
    the defaults) and the source nodes of the subtopology it reads from (what copartitioning checks)."""

    def __init__(self, builder: InternalStreamsBuilder, name: str, key_serde: Any, value_serde: Any,
                 source_nodes: set[str], graph_node: GraphNode) -> None:
        self._builder = builder
        self.name = name
        self.key_serde = key_serde
        self.value_serde = value_serde
        self._source_nodes = source_nodes
        self._node = graph_node

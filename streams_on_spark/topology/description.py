"""``TopologyDescription``: the exact text of Kafka Streams' ``Topology#describe()``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from streams_on_spark.topology.java_order import JavaTreeSet, java_compare_strings, java_set_str


class Node:
    """A described node; ``size`` counts the paths below it (Kafka's ordering key)."""

    kind = "Node"

    def __init__(self, name: str) -> None:
        self.name = name
        self.size = 1
        self.predecessors: JavaTreeSet[Node] = JavaTreeSet(_compare_nodes)
        self.successors: JavaTreeSet[Node] = JavaTreeSet(_compare_nodes)

    def _names(self, nodes: JavaTreeSet["Node"]) -> str:
        names = [n.name for n in nodes]
        return ", ".join(names) if names else "none"


class Source(Node):
    kind = "Source"

    def __init__(self, name: str, topics: list[str]) -> None:
        super().__init__(name)
        self.topics = list(topics)

    @property
    def topic_set(self) -> set[str]:
        return set(self.topics)

    def __str__(self) -> str:
        return (f"Source: {self.name} (topics: {java_set_str(self.topics, from_collection=True)})\n"
                f"      --> {self._names(self.successors)}")


class Processor(Node):
    kind = "Processor"

    def __init__(self, name: str, stores: list[str]) -> None:
        super().__init__(name)
        self.stores = list(stores)

    def __str__(self) -> str:
        return (f"Processor: {self.name} (stores: {java_set_str(self.stores, from_collection=True)})\n"
                f"      --> {self._names(self.successors)}\n"
                f"      <-- {self._names(self.predecessors)}")


class Sink(Node):
    kind = "Sink"

    def __init__(self, name: str, topic: str) -> None:
        super().__init__(name)
        self.topic = topic

    def __str__(self) -> str:
        return f"Sink: {self.name} (topic: {self.topic})\n      <-- {self._names(self.predecessors)}"


def _compare_nodes(a: Node, b: Node) -> int:
    if a is b:
        return 0
    if a.size != b.size:
        return b.size - a.size
    return java_compare_strings(a.name, b.name)


def _update_size(node: Node, delta: int) -> None:
    node.size += delta
    for predecessor in node.predecessors:
        _update_size(predecessor, delta)


@dataclass
class Subtopology:
    """One node group; ``nodes`` in Kafka's print order."""

    id: int
    nodes: list[Node]

    def __str__(self) -> str:
        return f"Sub-topology: {self.id}\n" + "".join(f"    {n}\n" for n in self.nodes) + "\n"


@dataclass
class GlobalStore:
    """A global store's source and processor (they generate no tasks)."""

    id: int
    source: Source
    processor: Processor

    def __str__(self) -> str:
        return (f"Sub-topology: {self.id} for global store (will not generate tasks)\n"
                f"    {self.source}\n    {self.processor}\n")


@dataclass(eq=False)
class TopologyDescription:
    """Subtopologies and global stores; ``str()`` is byte-identical to Kafka Streams' text."""

    subtopologies: list[Subtopology] = field(default_factory=list)
    global_stores: list[GlobalStore] = field(default_factory=list)
    name: Optional[str] = None

    def __str__(self) -> str:
        head = "Topologies:\n " if self.name is None else f"Topology: {self.name}:\n "
        parts = sorted([(s.id, str(s)) for s in self.subtopologies] + [(g.id, str(g)) for g in self.global_stores])
        return head + "".join("  " + text for _, text in parts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return str(self) == other
        return isinstance(other, TopologyDescription) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


def describe_subtopology(subtopology_id: int, nodes_in_hash_order: list[Node],
                         predecessors: dict[str, list[str]]) -> Subtopology:
    """Connect described nodes exactly as ``InternalTopologyBuilder.describeSubtopology`` does."""
    by_name = {n.name: n for n in nodes_in_hash_order}
    for node in nodes_in_hash_order:
        for pred_name in predecessors.get(node.name, ()):
            pred = by_name[pred_name]
            node.predecessors.add(pred)
            pred.successors.add(node)
            _update_size(pred, node.size)
    ordered: JavaTreeSet[Node] = JavaTreeSet(_compare_nodes)
    for node in nodes_in_hash_order:
        ordered.add(node)
    return Subtopology(subtopology_id, list(ordered))

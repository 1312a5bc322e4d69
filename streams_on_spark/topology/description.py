"""``TopologyDescription``: the exact text of Kafka Streams' ``Topology#describe()``, and ``parse`` to read it back."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Optional, Union

from streams_on_spark.topology.java_order import JavaTreeSet, java_compare_strings, java_set_str


class Node:
    """A described node; ``size`` counts the paths below it (Kafka's ordering key)."""

    kind = "Node"

    def __init__(self, name: str) -> None:
        self.name = name
        self.size = 1
        # a TreeSet when built by the topology; a list in printed order when parsed from text
        self.predecessors: Union[JavaTreeSet[Node], list[Node]] = JavaTreeSet(_compare_nodes)
        self.successors: Union[JavaTreeSet[Node], list[Node]] = JavaTreeSet(_compare_nodes)
        # parsed from text: print topics and stores in the order read, not re-hashed
        self.verbatim = False

    def _names(self, nodes: Iterable["Node"]) -> str:
        names = [n.name for n in nodes]
        return ", ".join(names) if names else "none"

    def _set_str(self, items: list[str]) -> str:
        """Kafka's ``HashSet.toString()``; a parsed node keeps the order it was printed in."""
        return "[" + ", ".join(items) + "]" if self.verbatim else java_set_str(items, from_collection=True)


class Source(Node):
    kind = "Source"

    def __init__(self, name: str, topics: list[str], topic_pattern: Optional[str] = None) -> None:
        super().__init__(name)
        self.topics = list(topics)
        self.topic_pattern = topic_pattern

    @property
    def topic_set(self) -> set[str]:
        return set(self.topics)

    def __str__(self) -> str:
        topics = self.topic_pattern if self.topic_pattern is not None else self._set_str(self.topics)
        return f"Source: {self.name} (topics: {topics})\n      --> {self._names(self.successors)}"


class Processor(Node):
    kind = "Processor"

    def __init__(self, name: str, stores: list[str]) -> None:
        super().__init__(name)
        self.stores = list(stores)

    def __str__(self) -> str:
        return (f"Processor: {self.name} (stores: {self._set_str(self.stores)})\n"
                f"      --> {self._names(self.successors)}\n"
                f"      <-- {self._names(self.predecessors)}")


class Sink(Node):
    kind = "Sink"

    def __init__(self, name: str, topic: Optional[str], extractor: Optional[str] = None) -> None:
        super().__init__(name)
        self.topic = topic
        # Kafka prints ``(extractor class: ...)`` for a sink with a TopicNameExtractor
        self.extractor = extractor

    def __str__(self) -> str:
        target = f"topic: {self.topic}" if self.extractor is None else f"extractor class: {self.extractor}"
        return f"Sink: {self.name} ({target})\n      <-- {self._names(self.predecessors)}"


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

    @classmethod
    def parse(cls, text: str) -> "TopologyDescription":
        """Read ``describe()`` text (ours or Kafka Streams'), so a committed description can be compared in CI."""
        if not isinstance(text, str):
            raise ValueError(f"a topology description must be a str, got {type(text).__name__}")
        return _Parser(text).parse()


_NAMED_HEAD = re.compile(r"Topology: (.+):")
_SUBTOPOLOGY = re.compile(r"Sub-topology: (\d+)( for global store \(will not generate tasks\))?")
_SOURCE = re.compile(r"Source: (.+) \(topics: (.*)\)")
_PROCESSOR = re.compile(r"Processor: (.+) \(stores: \[(.*)\]\)")
_SINK = re.compile(r"Sink: (.+) \((topic|extractor class): (.*)\)")


@dataclass
class _ParsedGroup:
    """A subtopology or global store while it is read: nodes in printed order and the names they link to."""

    id: int
    is_global: bool
    line: int
    nodes: list[Node] = field(default_factory=list)
    links: dict[str, tuple[Optional[tuple[int, list[str]]], Optional[tuple[int, list[str]]]]] = \
        field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)


class _Parser:
    """Line-by-line reader of Kafka's description format; errors name the line number."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.groups: list[_ParsedGroup] = []
        self.node: Optional[Node] = None

    def fail(self, number: int, why: str) -> ValueError:
        line = self.lines[number - 1] if 0 < number <= len(self.lines) else ""
        return ValueError(f"not a topology description: line {number}: {why}: {line.strip()!r}")

    def parse(self) -> TopologyDescription:
        head = self.lines[0].strip()
        named = _NAMED_HEAD.fullmatch(head)
        if head != "Topologies:" and named is None:
            raise self.fail(1, "expected 'Topologies:' or 'Topology: <name>:'")
        for number, raw in enumerate(self.lines[1:], start=2):
            line = raw.strip()
            if line:
                self.read_line(number, line)
        description = TopologyDescription(name=named.group(1) if named else None)
        for group in self.groups:
            nodes = self.connect(group)
            if group.is_global:
                if len(nodes) != 2 or not isinstance(nodes[0], Source) or not isinstance(nodes[1], Processor):
                    raise self.fail(group.line, "a global store has one Source and one Processor")
                description.global_stores.append(GlobalStore(group.id, nodes[0], nodes[1]))
            else:
                description.subtopologies.append(Subtopology(group.id, nodes))
        return description

    def read_line(self, number: int, line: str) -> None:
        match = _SUBTOPOLOGY.fullmatch(line)
        if match:
            group_id = int(match.group(1))
            if any(g.id == group_id for g in self.groups):
                raise self.fail(number, f"sub-topology {group_id} appears twice")
            self.groups.append(_ParsedGroup(group_id, match.group(2) is not None, number))
            self.node = None
            return
        if line.startswith(("-->", "<--")):
            self.read_link(number, line)
            return
        node = self.read_node(line)
        if node is None:
            raise self.fail(number, "expected a Sub-topology, Source, Processor or Sink line or a --> / <-- link")
        if not self.groups:
            raise self.fail(number, "a node before any 'Sub-topology:' line")
        group = self.groups[-1]
        if node.name in group.lines:
            raise self.fail(number, f"node {node.name} appears twice in sub-topology {group.id}")
        node.verbatim = True
        group.nodes.append(node)
        group.links[node.name] = (None, None)
        group.lines[node.name] = number
        self.node = node

    @staticmethod
    def read_node(line: str) -> Optional[Node]:
        match = _SOURCE.fullmatch(line)
        if match:
            topics = match.group(2)
            if topics.startswith("[") and topics.endswith("]"):
                return Source(match.group(1), _split_names(topics[1:-1]))
            return Source(match.group(1), [], topic_pattern=topics)
        match = _PROCESSOR.fullmatch(line)
        if match:
            return Processor(match.group(1), _split_names(match.group(2)))
        match = _SINK.fullmatch(line)
        if match:
            if match.group(2) == "topic":
                return Sink(match.group(1), match.group(3))
            return Sink(match.group(1), None, extractor=match.group(3))
        return None

    def read_link(self, number: int, line: str) -> None:
        if self.node is None:
            raise self.fail(number, "a link line before any node")
        successors, predecessors = self.groups[-1].links[self.node.name]
        names = _split_names(line[3:].strip())
        names = [] if names == ["none"] else names
        if line.startswith("-->"):
            if isinstance(self.node, Sink) or successors is not None:
                raise self.fail(number, f"unexpected '-->' for {self.node.kind} {self.node.name}")
            successors = (number, names)
        else:
            if isinstance(self.node, Source) or predecessors is not None:
                raise self.fail(number, f"unexpected '<--' for {self.node.kind} {self.node.name}")
            predecessors = (number, names)
        self.groups[-1].links[self.node.name] = (successors, predecessors)

    def connect(self, group: _ParsedGroup) -> list[Node]:
        """Resolve link names to the group's nodes, keeping the printed order."""
        by_name = {n.name: n for n in group.nodes}
        for node in group.nodes:
            successors, predecessors = group.links[node.name]
            wants_successors, wants_predecessors = not isinstance(node, Sink), not isinstance(node, Source)
            if (successors is None and wants_successors) or (predecessors is None and wants_predecessors):
                raise self.fail(group.lines[node.name], f"{node.kind} {node.name} lacks its "
                                f"{'-->' if successors is None and wants_successors else '<--'} line")
            for link, attribute in ((successors, "successors"), (predecessors, "predecessors")):
                if link is None:
                    continue
                number, names = link
                unknown = [n for n in names if n not in by_name]
                if unknown:
                    raise self.fail(number, f"unknown node(s) {unknown} in sub-topology {group.id}")
                setattr(node, attribute, [by_name[n] for n in names])
        return group.nodes


def _split_names(text: str) -> list[str]:
    """``a, b`` -> ``[a, b]``; empty text -> ``[]``."""
    return [part.strip() for part in text.split(", ")] if text.strip() else []


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

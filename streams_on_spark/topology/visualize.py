"""Topology pictures: a ``TopologyDescription`` as Mermaid or Graphviz DOT, for reviews and upgrade discussions.

Each subtopology (and each global store) is a cluster holding its sources, processors, sinks and state stores;
topics are nodes of their own outside the clusters, so a repartition topic joins the subtopology whose sink writes
it to the one whose source reads it, as in Kafka's external visualizer. Shapes: sources and sinks as (inverted)
houses (parallelograms in Mermaid), processors as boxes, stores as cylinders, topics as ellipses (stadiums in
Mermaid), repartition topics dashed; a store hangs off the processors that use it by a dashed, arrowless edge. A
pattern source reads from a node labelled with its pattern, a sink with a ``TopicNameExtractor`` writes to one
naming its class.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from streams_on_spark.topology.description import Node, Processor, Sink, Source, TopologyDescription

REPARTITION_SUFFIX = "-repartition"


@dataclass
class _Cluster:
    """One subtopology or global store: its title and the nodes and stores drawn inside it."""

    key: str
    title: str
    nodes: list[Node]
    stores: list[str] = field(default_factory=list)


@dataclass
class _Graph:
    """What both renderers draw: clusters, topic nodes and the edges between ids (``topic:``, ``store:``,
    ``node:`` prefixes keep a topic, a store and a processor of the same name apart)."""

    title: str
    clusters: list[_Cluster]
    topics: list[str]
    flows: list[tuple[str, str]]      # record flow: topic -> source -> processor -> sink -> topic
    store_links: list[tuple[str, str]]  # processor -- store


def _graph(description: TopologyDescription) -> _Graph:
    """Collect clusters, topics and edges in the description's print order (deterministic output)."""
    if not isinstance(description, TopologyDescription):
        raise ValueError(f"description must be a TopologyDescription, got {type(description).__name__}")
    groups: list[tuple[int, _Cluster]] = []
    for sub in description.subtopologies:
        groups.append((sub.id, _Cluster(f"sub{sub.id}", f"Sub-topology: {sub.id}", list(sub.nodes))))
    for glob in description.global_stores:
        groups.append((glob.id, _Cluster(f"global{glob.id}", f"Sub-topology: {glob.id} for global store",
                                         [glob.source, glob.processor])))
    clusters = [c for _, c in sorted(groups, key=lambda g: g[0])]
    topics: list[str] = []
    flows: list[tuple[str, str]] = []
    store_links: list[tuple[str, str]] = []
    placed_stores: set[str] = set()

    def topic(name: str) -> str:
        if name not in topics:
            topics.append(name)
        return "topic:" + name

    for cluster in clusters:
        for node in cluster.nodes:
            if isinstance(node, Source):
                read = [node.topic_pattern] if node.topic_pattern is not None else node.topics
                flows.extend((topic(t), "node:" + node.name) for t in read)
            if isinstance(node, Sink):
                written = node.topic if node.extractor is None else f"extractor class: {node.extractor}"
                flows.append(("node:" + node.name, topic(str(written))))
            if isinstance(node, Processor):
                for store in node.stores:
                    if store not in placed_stores:   # drawn once, in the first cluster that uses it
                        placed_stores.add(store)
                        cluster.stores.append(store)
                    store_links.append(("node:" + node.name, "store:" + store))
            flows.extend(("node:" + node.name, "node:" + s.name) for s in node.successors)
    # a global store's source feeds its processor even when the description was parsed without successor links
    for glob in description.global_stores:
        edge = ("node:" + glob.source.name, "node:" + glob.processor.name)
        if edge not in flows:
            flows.append(edge)
    title = "Topologies" if description.name is None else f"Topology: {description.name}"
    return _Graph(title, clusters, topics, flows, store_links)


def _kind(node: Node) -> str:
    return node.kind.lower() if node.kind in ("Source", "Processor", "Sink") else "processor"


def _is_repartition(topic: str) -> bool:
    return topic.endswith(REPARTITION_SUFFIX)


# -- Mermaid -------------------------------------------------------------------------------------------------------

_MERMAID_SHAPES = {"source": ('[/"', '"/]'), "processor": ('["', '"]'), "sink": ('[\\"', '"\\]'),
                   "store": ('[("', '")]'), "topic": ('(["', '"])')}


def _mermaid_text(text: str) -> str:
    """A label inside Mermaid's quotes: quotes and markup characters as entity codes."""
    return "".join(f"#{ord(c)};" if c in '"#<>&' else c for c in text)


def to_mermaid(description: TopologyDescription) -> str:
    """A Mermaid flowchart: one ``subgraph`` per subtopology and global store, topics between them."""
    graph = _graph(description)
    ids: dict[str, str] = {}

    def ident(key: str) -> str:
        return ids.setdefault(key, f"n{len(ids)}")

    def node_line(key: str, label: str, shape: str) -> str:
        opening, closing = _MERMAID_SHAPES[shape]
        return f"{ident(key)}{opening}{_mermaid_text(label)}{closing}"

    lines = ["flowchart TB", f"  %% {graph.title}"]
    classes: dict[str, list[str]] = {"source": [], "processor": [], "sink": [], "store": [], "topic": [],
                                     "repartition": []}
    for cluster in graph.clusters:
        lines.append(f'  subgraph {cluster.key}["{_mermaid_text(cluster.title)}"]')
        for node in cluster.nodes:
            kind = _kind(node)
            lines.append("    " + node_line("node:" + node.name, node.name, kind))
            classes[kind].append(ident("node:" + node.name))
        for store in cluster.stores:
            lines.append("    " + node_line("store:" + store, store, "store"))
            classes["store"].append(ident("store:" + store))
        lines.append("  end")
    for name in graph.topics:
        lines.append("  " + node_line("topic:" + name, name, "topic"))
        classes["repartition" if _is_repartition(name) else "topic"].append(ident("topic:" + name))
    lines.extend(f"  {ident(a)} --> {ident(b)}" for a, b in graph.flows)
    lines.extend(f"  {ident(a)} -.- {ident(b)}" for a, b in graph.store_links)
    styles = {"source": "fill:#e3f2fd,stroke:#1565c0", "processor": "fill:#ffffff,stroke:#424242",
              "sink": "fill:#e8f5e9,stroke:#2e7d32", "store": "fill:#fff8e1,stroke:#f9a825",
              "topic": "fill:#f3e5f5,stroke:#6a1b9a", "repartition": "fill:#fce4ec,stroke:#ad1457,stroke-dasharray:4 3"}
    for kind, members in classes.items():
        lines.append(f"  classDef {kind} {styles[kind]}")
        if members:
            lines.append(f"  class {','.join(members)} {kind}")
    return "\n".join(lines) + "\n"


# -- Graphviz DOT --------------------------------------------------------------------------------------------------

_DOT_ATTRS = {"source": 'shape=invhouse, style=filled, fillcolor="#e3f2fd"',
              "processor": "shape=box",
              "sink": 'shape=house, style=filled, fillcolor="#e8f5e9"',
              "store": 'shape=cylinder, style=filled, fillcolor="#fff8e1"',
              "topic": 'shape=ellipse, style=filled, fillcolor="#f3e5f5"',
              "repartition": 'shape=ellipse, style="filled,dashed", fillcolor="#fce4ec"'}


def _dot_quote(text: str) -> str:
    """A DOT double-quoted string (backslashes and quotes escaped, newlines as ``\\n``)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(description: TopologyDescription) -> str:
    """A Graphviz digraph: one ``cluster_`` subgraph per subtopology and global store, topics between them."""
    graph = _graph(description)
    lines = ["digraph topology {", f"  label={_dot_quote(graph.title)};", "  labelloc=t;", "  fontname=Helvetica;",
             "  node [fontname=Helvetica, fontsize=10];", "  edge [fontname=Helvetica];"]
    for cluster in graph.clusters:
        lines.append(f"  subgraph {_dot_quote('cluster_' + cluster.key)} {{")
        lines.append(f"    label={_dot_quote(cluster.title)};")
        lines.append("    style=rounded;")
        lines.extend(f"    {_dot_quote('node:' + n.name)} [label={_dot_quote(n.name)}, {_DOT_ATTRS[_kind(n)]}];"
                     for n in cluster.nodes)
        lines.extend(f"    {_dot_quote('store:' + s)} [label={_dot_quote(s)}, {_DOT_ATTRS['store']}];"
                     for s in cluster.stores)
        lines.append("  }")
    lines.extend(f"  {_dot_quote('topic:' + t)} [label={_dot_quote(t)}, "
                 f"{_DOT_ATTRS['repartition' if _is_repartition(t) else 'topic']}];" for t in graph.topics)
    lines.extend(f"  {_dot_quote(a)} -> {_dot_quote(b)};" for a, b in graph.flows)
    lines.extend(f"  {_dot_quote(a)} -> {_dot_quote(b)} [style=dashed, arrowhead=none];"
                 for a, b in graph.store_links)
    lines.append("}")
    return "\n".join(lines) + "\n"


__all__ = ["to_dot", "to_mermaid"]

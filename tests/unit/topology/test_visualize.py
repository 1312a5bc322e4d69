"""Topology pictures: subtopologies as clusters, topics and stores as their own nodes, repartition topics joining
the subtopologies; DOT rendered by Graphviz itself (``make test`` installs it; without ``dot`` this fails)."""
from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from streams_on_spark import Grouped, Materialized, Serdes, StreamsBuilder, Stores, Topology, TopologyDescription
from streams_on_spark.processor import Processor
from streams_on_spark.topology.visualize import to_dot, to_mermaid

SVG = "{http://www.w3.org/2000/svg}"


class _Noop(Processor):
    def process(self, record):
        pass


def word_count():
    """Two subtopologies joined by a repartition topic, a named store, and a global store."""
    builder = StreamsBuilder()
    (builder.stream("sentences")
     .flat_map_values(lambda v: v.split())
     .group_by(lambda k, v: v, Grouped.as_("by-word"))
     .count(Materialized.as_("counts"))
     .to_stream().to("word-counts"))
    builder.global_table("countries", Materialized.as_("countries-store"))
    return builder.build().describe()


def processor_api():
    """A store shared by two processors, and a name that needs quoting."""
    topology = Topology()
    topology.add_source("in", "input-a", "input-b")
    topology.add_processor('say "hi"', _Noop, "in")
    topology.add_processor("second", _Noop, 'say "hi"')
    topology.add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("shared"),
                                                            Serdes.String(), Serdes.String()), 'say "hi"', "second")
    topology.add_sink("out", "output", "second")
    return topology.describe()


def mermaid_graph(text):
    """Subgraphs -> their member ids, node id -> label, and the edges (arrow, dashed link) by label."""
    labels, members, edges, current = {}, {}, [], None
    for line in text.splitlines()[1:]:
        line = line.strip()
        if m := re.fullmatch(r'subgraph (\w+)\["(.*)"\]', line):
            current = m.group(2)
            members[current] = []
        elif line == "end":
            current = None
        elif m := re.fullmatch(r'(n\d+)(\[/|\[\\|\[\(|\(\[|\[)"(.*)"(/\]|\\\]|\)\]|\]\)|\])', line):
            labels[m.group(1)] = (m.group(3), m.group(2) + m.group(4))
            if current is not None:
                members[current].append(m.group(1))
        elif m := re.fullmatch(r"(n\d+) (-->|-\.-) (n\d+)", line):
            edges.append((m.group(1), m.group(2), m.group(3)))
    named_edges = {(labels[a][0], arrow, labels[b][0]) for a, arrow, b in edges}
    clusters = {title: {labels[i][0] for i in ids} for title, ids in members.items()}
    shapes = {label: shape for label, shape in labels.values()}
    return clusters, named_edges, shapes


def test_mermaid_has_a_subgraph_per_subtopology_and_the_repartition_topic_between_them():
    text = to_mermaid(word_count())
    assert text.startswith("flowchart TB\n")
    clusters, edges, shapes = mermaid_graph(text)
    assert clusters == {
        "Sub-topology: 0": {"KSTREAM-SOURCE-0000000000", "KSTREAM-FLATMAPVALUES-0000000001", "by-word",
                            "by-word-repartition-filter", "by-word-repartition-sink"},
        "Sub-topology: 1": {"by-word-repartition-source", "KSTREAM-AGGREGATE-0000000003",
                            "KTABLE-TOSTREAM-0000000007", "KSTREAM-SINK-0000000008", "counts"},
        "Sub-topology: 2 for global store": {"KSTREAM-SOURCE-0000000009", "KTABLE-SOURCE-0000000010",
                                             "countries-store"},
    }
    # the repartition topic is outside every cluster and joins subtopology 0's sink to subtopology 1's source
    assert ("by-word-repartition-sink", "-->", "by-word-repartition") in edges
    assert ("by-word-repartition", "-->", "by-word-repartition-source") in edges
    assert ("sentences", "-->", "KSTREAM-SOURCE-0000000000") in edges
    assert ("KSTREAM-SINK-0000000008", "-->", "word-counts") in edges
    assert ("countries", "-->", "KSTREAM-SOURCE-0000000009") in edges
    assert ("KSTREAM-SOURCE-0000000009", "-->", "KTABLE-SOURCE-0000000010") in edges
    assert ("KSTREAM-AGGREGATE-0000000003", "-.-", "counts") in edges
    assert ("KTABLE-SOURCE-0000000010", "-.-", "countries-store") in edges
    assert ("KSTREAM-FLATMAPVALUES-0000000001", "-->", "by-word") in edges
    assert len(edges) == 15
    # shapes: stores are cylinders, topics stadiums, sources/sinks parallelograms, processors boxes
    assert shapes["counts"] == shapes["countries-store"] == "[()]"
    assert shapes["sentences"] == shapes["by-word-repartition"] == "([])"
    assert shapes["KSTREAM-SOURCE-0000000000"] == "[//]" and shapes["KSTREAM-SINK-0000000008"] == "[\\\\]"
    assert shapes["by-word"] == "[]"
    repartition_ids = re.search(r"^  class (\S+) repartition$", text, re.M).group(1).split(",")
    assert len(repartition_ids) == 1


def test_mermaid_escapes_quotes_and_draws_a_shared_store_once():
    text = to_mermaid(processor_api())
    clusters, edges, _ = mermaid_graph(text)
    assert clusters == {"Sub-topology: 0": {"in", "say #34;hi#34;", "second", "out", "shared"}}
    assert {("input-a", "-->", "in"), ("input-b", "-->", "in"), ("say #34;hi#34;", "-.-", "shared"),
            ("second", "-.-", "shared"), ("second", "-->", "out"), ("out", "-->", "output")} <= edges
    assert text.count('"shared"') == 1


def render_svg(dot_text):
    """Graphviz's SVG of ``dot_text`` as an element tree (the test fails when dot is missing or rejects it)."""
    dot = shutil.which("dot")
    assert dot, "Graphviz's `dot` is not installed: `make test` installs it (apt-get install graphviz)"
    run = subprocess.run([dot, "-Tsvg"], input=dot_text, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and not run.stderr.strip(), run.stderr
    return ET.fromstring(run.stdout)


def svg_parts(svg):
    """Cluster titles with their nodes' ids, node ids, and edges, as Graphviz drew them."""
    groups = {g.get("class"): [] for g in svg.iter(f"{SVG}g")}
    for g in svg.iter(f"{SVG}g"):
        groups[g.get("class")].append(g.find(f"{SVG}title").text if g.find(f"{SVG}title") is not None else None)
    return groups


@pytest.mark.parametrize("description", [word_count, processor_api])
def test_dot_renders_with_graphviz(description):
    text = to_dot(description())
    svg = render_svg(text)
    parts = svg_parts(svg)
    if description is word_count:
        assert sorted(parts["cluster"]) == ["cluster_global2", "cluster_sub0", "cluster_sub1"]
        assert {"topic:by-word-repartition", "store:counts", "node:by-word-repartition-sink",
                "node:by-word-repartition-source"} <= set(parts["node"])
        assert {"node:by-word-repartition-sink->topic:by-word-repartition",
                "topic:by-word-repartition->node:by-word-repartition-source",
                "node:KSTREAM-AGGREGATE-0000000003->store:counts"} <= set(parts["edge"])
        assert len(parts["edge"]) == 15 and len(parts["node"]) == 17
        cluster_labels = [t.text for g in svg.iter(f"{SVG}g") if g.get("class") == "cluster"
                          for t in g.iter(f"{SVG}text")]
        assert sorted(cluster_labels) == ["Sub-topology: 0", "Sub-topology: 1", "Sub-topology: 2 for global store"]
    else:
        assert 'node:say "hi"' in parts["node"] and "store:shared" in parts["node"]
        assert 'node:say "hi"->store:shared' in parts["edge"]


def test_dot_shapes_and_clusters():
    text = to_dot(word_count())
    assert text.startswith("digraph topology {\n") and text.rstrip().endswith("}")
    assert re.search(r'"store:counts" \[label="counts", shape=cylinder', text)
    assert re.search(r'"topic:sentences" \[label="sentences", shape=ellipse', text)
    assert re.search(r'"topic:by-word-repartition" \[label="by-word-repartition", shape=ellipse, '
                     r'style="filled,dashed"', text)
    # a store is declared inside its subtopology's cluster, topics outside all of them
    sub1 = text[text.index('subgraph "cluster_sub1"'):text.index('subgraph "cluster_global2"')]
    assert '"store:counts"' in sub1 and '"topic:' not in sub1
    assert '"node:KSTREAM-AGGREGATE-0000000003" -> "store:counts" [style=dashed, arrowhead=none];' in text


PARSED = """Topologies:
   Sub-topology: 0
    Source: src (topics: input-.*)
      --> route
    Processor: route (stores: [])
      --> sink
      <-- src
    Sink: sink (extractor class: com.example.Router@1a2b)
      <-- route

"""


def test_a_pattern_source_and_an_extractor_sink_of_a_parsed_description():
    """Kafka's text for a pattern source and a TopicNameExtractor sink: each gets a node of its own."""
    description = TopologyDescription.parse(PARSED)
    _, edges, shapes = mermaid_graph(to_mermaid(description))
    assert edges == {("input-.*", "-->", "src"), ("src", "-->", "route"), ("route", "-->", "sink"),
                     ("sink", "-->", "extractor class: com.example.Router@1a2b")}
    assert shapes["input-.*"] == "([])"
    parts = svg_parts(render_svg(to_dot(description)))
    assert {"topic:input-.*->node:src", "node:sink->topic:extractor class: com.example.Router@1a2b"} <= set(
        parts["edge"])


def test_only_a_description_is_drawn():
    with pytest.raises(ValueError, match="description must be a TopologyDescription, got str"):
        to_dot("Topologies:\n")
    with pytest.raises(ValueError, match="got Topology"):
        to_mermaid(Topology())

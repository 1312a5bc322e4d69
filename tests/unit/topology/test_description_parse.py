"""``TopologyDescription.parse`` reads Kafka's describe() format, Kafka Streams' own (the reference goldens, written by
Kafka 4.3.1) and ours, back into the description whose ``str()`` is the text it read."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    JoinWindows,
    Materialized,
    Serdes,
    StreamJoined,
    StreamsBuilder,
    TimeWindows,
    Topology,
)
from streams_on_spark.state.factory import Stores
from streams_on_spark.topology.description import Processor, Sink, Source, TopologyDescription

GOLDENS = sorted((Path(__file__).resolve().parents[2] / "data" / "kafka-reference").glob("*.json"))
S = Serdes.String()


def golden(path: Path) -> str:
    return json.loads(path.read_text(encoding="utf-8"))["topology"]


@pytest.mark.parametrize("path", GOLDENS, ids=[p.stem for p in GOLDENS])
def test_every_kafka_golden_description_round_trips(path):
    text = golden(path)
    assert str(TopologyDescription.parse(text)) == text


def test_there_are_goldens_to_read():
    assert len(GOLDENS) >= 50


def word_count() -> Topology:
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(S, S)).flat_map_values(str.split)
     .group_by(lambda _k, w: w, Grouped.as_("by-word")).count(Materialized.as_("word-counts"))
     .to_stream().to("counts"))
    return builder.build()


def windowed_join_and_global_table() -> Topology:
    builder = StreamsBuilder()
    products = builder.global_table("products", Consumed.with_(S, S))
    left = builder.stream("left").select_key(lambda k, v: v)
    right = builder.stream("right")
    joined = left.join(right, lambda a, b: a + b, JoinWindows.of_time_difference_with_no_grace(100),
                       StreamJoined.with_(S, S, S))
    joined.join(products, lambda k, v: k, lambda v, p: p).to("enriched")
    (builder.stream("clicks").group_by_key().windowed_by(TimeWindows.of_size_with_no_grace(10)).count()
     .to_stream().to("click-counts"))
    return builder.build()


def processor_api_with_global_store() -> Topology:
    store = Stores.key_value_store_builder(Stores.in_memory_key_value_store("global-store"), S, S)
    store.with_logging_disabled()
    topology = Topology()
    topology.add_global_store(store, "global-source", "global-topic", "global-processor", lambda: _Noop())
    topology.add_source("a", "in-1", "in-2")
    topology.add_processor("p1", lambda: _Noop(), "a")
    topology.add_processor("p2", lambda: _Noop(), "a")
    topology.add_sink("s", "out", "p1", "p2")
    return topology


class _Noop:
    def init(self, context):
        pass

    def process(self, record):
        pass

    def close(self):
        pass


@pytest.mark.parametrize("build", [word_count, windowed_join_and_global_table, processor_api_with_global_store,
                                   Topology])
def test_our_own_descriptions_round_trip(build):
    text = str(build().describe())
    parsed = TopologyDescription.parse(text)
    assert str(parsed) == text
    assert parsed == build().describe()


def test_parse_gives_the_nodes_their_topics_stores_and_links():
    parsed = TopologyDescription.parse(str(word_count().describe()))
    first, second = parsed.subtopologies
    assert [s.id for s in parsed.subtopologies] == [0, 1] and parsed.global_stores == [] and parsed.name is None
    source = first.nodes[0]
    assert isinstance(source, Source) and source.topics == ["sentences"]
    assert [n.name for n in source.successors] == ["KSTREAM-FLATMAPVALUES-0000000001"]
    aggregate = second.nodes[1]
    assert isinstance(aggregate, Processor) and aggregate.stores == ["word-counts"]
    assert [n.name for n in aggregate.predecessors] == ["by-word-repartition-source"]
    sink = first.nodes[-1]
    assert isinstance(sink, Sink) and sink.topic == "by-word-repartition"


def test_global_stores_parse_into_their_source_and_processor():
    text = str(processor_api_with_global_store().describe())
    parsed = TopologyDescription.parse(text)
    (glob,) = parsed.global_stores
    assert glob.id == 0 and glob.source.topics == ["global-topic"] and glob.processor.stores == ["global-store"]
    assert [n.name for n in glob.source.successors] == ["global-processor"]


NAMED = """Topology: orders-app:
   Sub-topology: 0
    Source: by-pattern (topics: orders-.*)
      --> route
    Processor: route (stores: [])
      --> dynamic
      <-- by-pattern
    Sink: dynamic (extractor class: com.example.Router@1b2c3d)
      <-- route

"""


def test_named_topologies_pattern_sources_and_extractor_sinks_round_trip():
    parsed = TopologyDescription.parse(NAMED)
    assert str(parsed) == NAMED
    assert parsed.name == "orders-app"
    source, _, sink = parsed.subtopologies[0].nodes
    assert source.topic_pattern == "orders-.*" and source.topics == []
    assert sink.topic is None and sink.extractor == "com.example.Router@1b2c3d"


@pytest.mark.parametrize("text, line, why", [
    ("", 1, "expected 'Topologies:'"),
    ("Sub-topology: 0\n", 1, "expected 'Topologies:'"),
    ("Topologies:\n    Source: a (topics: [x])\n      --> none\n", 2, "before any 'Sub-topology:'"),
    ("Topologies:\n   Sub-topology: 0\n    Source: a (topics: [x])\n      --> b\n", 4, r"unknown node\(s\) \['b'\]"),
    ("Topologies:\n   Sub-topology: 0\n    Source: a (topics: [x])\n      --> none\n    hello\n", 5,
     "expected a Sub-topology, Source, Processor or Sink line"),
    ("Topologies:\n   Sub-topology: 0\n    Processor: p (stores: [])\n      --> none\n", 3, "lacks its <-- line"),
    ("Topologies:\n   Sub-topology: 0\n    Sink: k (topic: t)\n      --> none\n", 4, "unexpected '-->'"),
    ("Topologies:\n   Sub-topology: 0\n  Sub-topology: 0\n", 3, "sub-topology 0 appears twice"),
    ("Topologies:\n   Sub-topology: 0 for global store (will not generate tasks)\n"
     "    Source: a (topics: [x])\n      --> none\n", 2, "one Source and one Processor"),
])
def test_text_that_is_not_a_description_is_a_value_error_naming_the_line(text, line, why):
    with pytest.raises(ValueError, match=f"line {line}: .*{why}"):
        TopologyDescription.parse(text)


def test_parse_takes_only_text():
    with pytest.raises(ValueError, match="must be a str, got int"):
        TopologyDescription.parse(42)

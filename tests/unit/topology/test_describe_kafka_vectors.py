"""Kafka Streams ``TopologyDescription.toString()`` test vectors, ported to streams-on-spark.

Every test builds a topology with the Python API and compares ``str(topology.describe())`` with
the WHOLE expected string.  Sources (Apache Kafka trunk, Oct 2024, 4.0.0-SNAPSHOT, commit
1eb7644349cb07139d6a3c1ad1986979647cac99), all under ``streams/src/test/java/org/apache/kafka/streams/``:

* ``TopologyTest.java`` -- string vectors copied verbatim; the Processor-API tests that compare against a
  hand-built ``TopologyDescription`` object (``expectedDescription``) are translated to the string the
  object prints (``InternalTopologyBuilder.TopologyDescription#toString``); those are marked "derived".
* ``kstream/internals/CogroupedKStreamImplTest.java``, ``kstream/internals/KStreamImplTest.java``,
  ``kstream/internals/graph/StreamsGraphTest.java``,
  ``processor/internals/RepartitionWithMergeOptimizingTest.java`` -- verbatim.
* ``processor/internals/InternalTopologyBuilderTest.java#shouldSortProcessorNodesCorrectly`` -- derived.
* ``kstream/RepartitionTopicNamingTest.java`` and ``integration/KStreamRepartitionIntegrationTest.java`` --
  these Kafka tests only assert fragments / regex counts of the description; ported with the same asserts.
* ``docs/streams/developer-guide/dsl-topology-naming.html`` (rendered there with tabs and without the sinks'
  ``<--`` lines) and the Responsive "topology upgrade guide" examples (leading whitespace lost) --
  reconstructed with Kafka's exact whitespace (/work/shared/reference/kafka-streams-semantics.md section 4.1).

Vectors needing out-of-scope features (windows, joins, suppress, processValues, patterns, named
topologies, dynamic routing, store types, ...) are collected in /work/scratch/deferred-describe-vectors.md.
"""
import re

from streams_on_spark import (
    Consumed,
    Grouped,
    KeyValue,
    Materialized,
    Named,
    Produced,
    Repartitioned,
    Serdes,
    Stores,
    StreamsBuilder,
    Topology,
)
from streams_on_spark.processor import Processor

import pytest

OPTIMIZE = {"topology.optimization": "all"}
NO_OPTIMIZATION = {"topology.optimization": "none"}

# Kafka tests count repartition topics with java.util.regex "Sink: .*-repartition" ('.' does not match '\n',
# same as Python's re without DOTALL).
REPARTITION_SINK = re.compile(r"Sink: .*-repartition")


def _describe(topology):
    return str(topology.describe())


def _count(pattern, text):
    return len(re.findall(pattern, text))


class _NoopProcessor(Processor):
    """Stand-in for Kafka's MockApiProcessor / test processors: only the topology shape matters here."""

    def process(self, record):
        pass


def _kv_store(name):
    return Stores.key_value_store_builder(Stores.in_memory_key_value_store(name), Serdes.String(), Serdes.String())


def _string_aggregator(key, value, aggregate):
    return aggregate + value


def _string_initializer():
    return ""


def _string_consumed():
    return Consumed.with_(Serdes.String(), Serdes.String())


# ---------------------------------------------------------------------------------------------------------
# TopologyTest.java -- DSL vectors (verbatim strings)
# ---------------------------------------------------------------------------------------------------------


def test_kgrouped_stream_zero_arg_count_should_preserve_topology_structure():
    """TopologyTest.java#kGroupedStreamZeroArgCountShouldPreserveTopologyStructure"""
    builder = StreamsBuilder()
    builder.stream("input-topic").group_by_key().count()
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_kgrouped_stream_named_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#kGroupedStreamNamedMaterializedCountShouldPreserveTopologyStructure

    Java: ``count(Materialized.as("count-store").withStoreType(IN_MEMORY))``; the store type does not show in
    the description, so it is dropped.  A named Materialized burns no index: the aggregate is ...0000000001.
    """
    builder = StreamsBuilder()
    builder.stream("input-topic").group_by_key().count(Materialized.as_("count-store"))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> KSTREAM-AGGREGATE-0000000001\n"
        "    Processor: KSTREAM-AGGREGATE-0000000001 (stores: [count-store])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_kgrouped_stream_anonymous_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#kGroupedStreamAnonymousMaterializedCountShouldPreserveTopologyStructure

    Java: ``count(Materialized.with(null, Serdes.Long()).withStoreType(ROCKS_DB))``.  An unnamed Materialized
    passed to count() burns one extra index (compat hack): store ...0000000002, aggregate ...0000000003.
    """
    builder = StreamsBuilder()
    builder.stream("input-topic").group_by_key().count(Materialized.with_(None, Serdes.Long()))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> KSTREAM-AGGREGATE-0000000003\n"
        "    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000002])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_table_zero_arg_count_should_preserve_topology_structure():
    """TopologyTest.java#tableZeroArgCountShouldPreserveTopologyStructure

    KTable.groupBy repartition has no filter node; store index 0 is taken first by table().
    """
    builder = StreamsBuilder()
    builder.table("input-topic").group_by(lambda key, value: None).count()
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [input-topic-STATE-STORE-0000000000])\n"
        "      --> KTABLE-SELECT-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-SELECT-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000005\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "    Sink: KSTREAM-SINK-0000000005 (topic: KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition)\n"
        "      <-- KTABLE-SELECT-0000000003\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000006 (topics: [KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition])\n"
        "      --> KTABLE-AGGREGATE-0000000007\n"
        "    Processor: KTABLE-AGGREGATE-0000000007 (stores: [KTABLE-AGGREGATE-STATE-STORE-0000000004])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000006\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_table_named_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#tableNamedMaterializedCountShouldPreserveTopologyStructure (store type dropped)"""
    builder = StreamsBuilder()
    builder.table("input-topic").group_by(lambda key, value: None).count(Materialized.as_("count-store"))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [input-topic-STATE-STORE-0000000000])\n"
        "      --> KTABLE-SELECT-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-SELECT-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000004\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "    Sink: KSTREAM-SINK-0000000004 (topic: count-store-repartition)\n"
        "      <-- KTABLE-SELECT-0000000003\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000005 (topics: [count-store-repartition])\n"
        "      --> KTABLE-AGGREGATE-0000000006\n"
        "    Processor: KTABLE-AGGREGATE-0000000006 (stores: [count-store])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000005\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_table_anonymous_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#tableAnonymousMaterializedCountShouldPreserveTopologyStructure

    Unlike KGroupedStream.count(Materialized), KGroupedTable.count(Materialized) burns no extra index.
    """
    builder = StreamsBuilder()
    builder.table("input-topic").group_by(lambda key, value: None).count(Materialized.with_(None, Serdes.Long()))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [input-topic-STATE-STORE-0000000000])\n"
        "      --> KTABLE-SELECT-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-SELECT-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000005\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "    Sink: KSTREAM-SINK-0000000005 (topic: KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition)\n"
        "      <-- KTABLE-SELECT-0000000003\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000006 (topics: [KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition])\n"
        "      --> KTABLE-AGGREGATE-0000000007\n"
        "    Processor: KTABLE-AGGREGATE-0000000007 (stores: [KTABLE-AGGREGATE-STATE-STORE-0000000004])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000006\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_ktable_non_materialized_map_values_should_preserve_topology_structure():
    """TopologyTest.java#kTableNonMaterializedMapValuesShouldPreserveTopologyStructure

    Java uses a ValueMapperWithKey ``(readOnlyKey, value) -> null``; the description is the same.
    """
    builder = StreamsBuilder()
    table = builder.table("input-topic")
    table.map_values(lambda value: None)
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [])\n"
        "      --> KTABLE-MAPVALUES-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-MAPVALUES-0000000003 (stores: [])\n"
        "      --> none\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_ktable_anonymous_materialized_map_values_should_preserve_topology_structure():
    """TopologyTest.java#kTableAnonymousMaterializedMapValuesShouldPreserveTopologyStructure

    An unnamed Materialized burns store index 3 but the (non-queryable) store is not materialized.
    """
    builder = StreamsBuilder()
    table = builder.table("input-topic")
    table.map_values(lambda value: None, materialized=Materialized.with_(None, None))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [])\n"
        "      --> KTABLE-MAPVALUES-0000000004\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-MAPVALUES-0000000004 (stores: [])\n"
        "      --> none\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_ktable_named_materialized_map_values_should_preserve_topology_structure():
    """TopologyTest.java#kTableNamedMaterializedMapValuesShouldPreserveTopologyStructure"""
    builder = StreamsBuilder()
    table = builder.table("input-topic")
    table.map_values(lambda value: None, materialized=Materialized.as_("store-name"))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [])\n"
        "      --> KTABLE-MAPVALUES-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-MAPVALUES-0000000003 (stores: [store-name])\n"
        "      --> none\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_ktable_non_materialized_filter_should_preserve_topology_structure():
    """TopologyTest.java#kTableNonMaterializedFilterShouldPreserveTopologyStructure"""
    builder = StreamsBuilder()
    table = builder.table("input-topic")
    table.filter(lambda key, value: False)
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [])\n"
        "      --> KTABLE-FILTER-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-FILTER-0000000003 (stores: [])\n"
        "      --> none\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_ktable_anonymous_materialized_filter_should_preserve_topology_structure():
    """TopologyTest.java#kTableAnonymousMaterializedFilterShouldPreserveTopologyStructure"""
    builder = StreamsBuilder()
    table = builder.table("input-topic")
    table.filter(lambda key, value: False, materialized=Materialized.with_(None, None))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [])\n"
        "      --> KTABLE-FILTER-0000000004\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-FILTER-0000000004 (stores: [])\n"
        "      --> none\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_ktable_named_materialized_filter_should_preserve_topology_structure():
    """TopologyTest.java#kTableNamedMaterializedFilterShouldPreserveTopologyStructure"""
    builder = StreamsBuilder()
    table = builder.table("input-topic")
    table.filter(lambda key, value: False, materialized=Materialized.as_("store-name"))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [])\n"
        "      --> KTABLE-FILTER-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-FILTER-0000000003 (stores: [store-name])\n"
        "      --> none\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_topology_with_static_topic_name_extractor_should_respect_equal_hashcode_contract():
    """TopologyTest.java#topologyWithStaticTopicNameExtractorShouldRespectEqualHashcodeContract

    Two independently built identical topologies have equal descriptions with equal hashes.
    """

    def topology_with_static_topic_name():
        builder = StreamsBuilder()
        builder.stream("from-topic-name").to("to-topic-name")
        return builder.build()

    topology_a = topology_with_static_topic_name()
    topology_b = topology_with_static_topic_name()
    assert topology_a.describe() == topology_b.describe()
    assert hash(topology_a.describe()) == hash(topology_b.describe())
    assert _describe(topology_a) == _describe(topology_b)


# ---------------------------------------------------------------------------------------------------------
# TopologyTest.java -- Processor API vectors (derived from the expected TopologyDescription objects)
# ---------------------------------------------------------------------------------------------------------


def test_should_describe_empty_topology():
    """TopologyTest.java#shouldDescribeEmptyTopology (derived: header "Topologies:\\n " with ONE trailing space)"""
    assert _describe(Topology()) == "Topologies:\n "


def test_single_source_should_have_single_subtopology():
    """TopologyTest.java#singleSourceShouldHaveSingleSubtopology (derived)"""
    topology = Topology()
    topology.add_source("source", "topic")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source (topics: [topic])\n"
        "      --> none\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_single_source_with_list_of_topics_should_have_single_subtopology():
    """TopologyTest.java#singleSourceWithListOfTopicsShouldHaveSingleSubtopology (derived; HashSet order)"""
    topology = Topology()
    topology.add_source("source", "topic1", "topic2", "topic3")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source (topics: [topic1, topic2, topic3])\n"
        "      --> none\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_multiple_sources_should_have_distinct_subtopologies():
    """TopologyTest.java#multipleSourcesShouldHaveDistinctSubtopologies (derived)"""
    topology = Topology()
    topology.add_source("source1", "topic1")
    topology.add_source("source2", "topic2")
    topology.add_source("source3", "topic3")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source1 (topics: [topic1])\n"
        "      --> none\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: source2 (topics: [topic2])\n"
        "      --> none\n"
        "\n"
        "  Sub-topology: 2\n"
        "    Source: source3 (topics: [topic3])\n"
        "      --> none\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_source_and_processor_should_have_single_subtopology():
    """TopologyTest.java#sourceAndProcessorShouldHaveSingleSubtopology (derived)"""
    topology = Topology()
    topology.add_source("source", "topic")
    topology.add_processor("processor", _NoopProcessor, "source")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source (topics: [topic])\n"
        "      --> processor\n"
        "    Processor: processor (stores: [])\n"
        "      --> none\n"
        "      <-- source\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_source_and_processor_with_state_should_have_single_subtopology():
    """TopologyTest.java#sourceAndProcessorWithStateShouldHaveSingleSubtopology (derived)"""
    topology = Topology()
    topology.add_source("source", "topic")
    topology.add_processor("processor", _NoopProcessor, "source")
    topology.add_state_store(_kv_store("store"), "processor")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source (topics: [topic])\n"
        "      --> processor\n"
        "    Processor: processor (stores: [store])\n"
        "      --> none\n"
        "      <-- source\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_source_and_processor_with_multiple_states_should_have_single_subtopology():
    """TopologyTest.java#sourceAndProcessorWithMultipleStatesShouldHaveSingleSubtopology (derived; HashSet order)"""
    topology = Topology()
    topology.add_source("source", "topic")
    topology.add_processor("processor", _NoopProcessor, "source")
    topology.add_state_store(_kv_store("store1"), "processor")
    topology.add_state_store(_kv_store("store2"), "processor")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source (topics: [topic])\n"
        "      --> processor\n"
        "    Processor: processor (stores: [store1, store2])\n"
        "      --> none\n"
        "      <-- source\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_source_with_multiple_processors_should_have_single_subtopology():
    """TopologyTest.java#sourceWithMultipleProcessorsShouldHaveSingleSubtopology (derived)"""
    topology = Topology()
    topology.add_source("source", "topic")
    topology.add_processor("processor1", _NoopProcessor, "source")
    topology.add_processor("processor2", _NoopProcessor, "source")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source (topics: [topic])\n"
        "      --> processor1, processor2\n"
        "    Processor: processor1 (stores: [])\n"
        "      --> none\n"
        "      <-- source\n"
        "    Processor: processor2 (stores: [])\n"
        "      --> none\n"
        "      <-- source\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_multiple_sources_with_processors_should_have_distinct_subtopologies():
    """TopologyTest.java#multipleSourcesWithProcessorsShouldHaveDistinctSubtopologies (derived)"""
    topology = Topology()
    topology.add_source("source1", "topic1")
    topology.add_processor("processor1", _NoopProcessor, "source1")
    topology.add_source("source2", "topic2")
    topology.add_processor("processor2", _NoopProcessor, "source2")
    topology.add_source("source3", "topic3")
    topology.add_processor("processor3", _NoopProcessor, "source3")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source1 (topics: [topic1])\n"
        "      --> processor1\n"
        "    Processor: processor1 (stores: [])\n"
        "      --> none\n"
        "      <-- source1\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: source2 (topics: [topic2])\n"
        "      --> processor2\n"
        "    Processor: processor2 (stores: [])\n"
        "      --> none\n"
        "      <-- source2\n"
        "\n"
        "  Sub-topology: 2\n"
        "    Source: source3 (topics: [topic3])\n"
        "      --> processor3\n"
        "    Processor: processor3 (stores: [])\n"
        "      --> none\n"
        "      <-- source3\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_multiple_sources_with_sinks_should_have_distinct_subtopologies():
    """TopologyTest.java#multipleSourcesWithSinksShouldHaveDistinctSubtopologies (derived)"""
    topology = Topology()
    topology.add_source("source1", "topic1")
    topology.add_sink("sink1", "sinkTopic1", "source1")
    topology.add_source("source2", "topic2")
    topology.add_sink("sink2", "sinkTopic2", "source2")
    topology.add_source("source3", "topic3")
    topology.add_sink("sink3", "sinkTopic3", "source3")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source1 (topics: [topic1])\n"
        "      --> sink1\n"
        "    Sink: sink1 (topic: sinkTopic1)\n"
        "      <-- source1\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: source2 (topics: [topic2])\n"
        "      --> sink2\n"
        "    Sink: sink2 (topic: sinkTopic2)\n"
        "      <-- source2\n"
        "\n"
        "  Sub-topology: 2\n"
        "    Source: source3 (topics: [topic3])\n"
        "      --> sink3\n"
        "    Sink: sink3 (topic: sinkTopic3)\n"
        "      <-- source3\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_processors_with_same_sink_should_have_same_subtopology():
    """TopologyTest.java#processorsWithSameSinkShouldHaveSameSubtopology (derived)

    Nodes ordered by sub-tree size (sources 3, processors 2, sink 1), ties by name.
    """
    topology = Topology()
    topology.add_source("source", "topic")
    topology.add_processor("processor1", _NoopProcessor, "source")
    topology.add_source("source2", "topic2")
    topology.add_processor("processor2", _NoopProcessor, "source2")
    topology.add_source("source3", "topic3")
    topology.add_processor("processor3", _NoopProcessor, "source3")
    topology.add_sink("sink", "sinkTopic", "processor1", "processor2", "processor3")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source (topics: [topic])\n"
        "      --> processor1\n"
        "    Source: source2 (topics: [topic2])\n"
        "      --> processor2\n"
        "    Source: source3 (topics: [topic3])\n"
        "      --> processor3\n"
        "    Processor: processor1 (stores: [])\n"
        "      --> sink\n"
        "      <-- source\n"
        "    Processor: processor2 (stores: [])\n"
        "      --> sink\n"
        "      <-- source2\n"
        "    Processor: processor3 (stores: [])\n"
        "      --> sink\n"
        "      <-- source3\n"
        "    Sink: sink (topic: sinkTopic)\n"
        "      <-- processor1, processor2, processor3\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_processors_with_shared_state_should_have_same_subtopology():
    """TopologyTest.java#processorsWithSharedStateShouldHaveSameSubtopology (derived)

    processor3 is connected to both stores, which unites all three source groups into sub-topology 0.
    """
    topology = Topology()
    topology.add_source("source", "topic")
    topology.add_processor("processor1", _NoopProcessor, "source")
    topology.add_state_store(_kv_store("store1"), "processor1")
    topology.add_source("source2", "topic2")
    topology.add_processor("processor2", _NoopProcessor, "source2")
    topology.add_state_store(_kv_store("store2"), "processor2")
    topology.add_source("source3", "topic3")
    topology.add_processor("processor3", _NoopProcessor, "source3")
    topology.connect_processor_and_state_stores("processor3", "store1", "store2")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source (topics: [topic])\n"
        "      --> processor1\n"
        "    Source: source2 (topics: [topic2])\n"
        "      --> processor2\n"
        "    Source: source3 (topics: [topic3])\n"
        "      --> processor3\n"
        "    Processor: processor1 (stores: [store1])\n"
        "      --> none\n"
        "      <-- source\n"
        "    Processor: processor2 (stores: [store2])\n"
        "      --> none\n"
        "      <-- source2\n"
        "    Processor: processor3 (stores: [store1, store2])\n"
        "      --> none\n"
        "      <-- source3\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_should_describe_global_store_topology():
    """TopologyTest.java#shouldDescribeGlobalStoreTopology (derived)

    A global store prints no blank line after it.  Kafka requires global store builders to have logging
    disabled (the Java test's mock builder reports loggingEnabled() == false).
    """
    topology = Topology()
    topology.add_global_store(
        _kv_store("globalStore").with_logging_disabled(), "source", "globalTopic", "processor", _NoopProcessor
    )
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0 for global store (will not generate tasks)\n"
        "    Source: source (topics: [globalTopic])\n"
        "      --> processor\n"
        "    Processor: processor (stores: [globalStore])\n"
        "      --> none\n"
        "      <-- source\n"
    )
    assert _describe(topology) == expected


def test_should_describe_multiple_global_store_topology():
    """TopologyTest.java#shouldDescribeMultipleGlobalStoreTopology (derived)"""
    topology = Topology()
    topology.add_global_store(
        _kv_store("globalStore1").with_logging_disabled(), "source1", "globalTopic1", "processor1", _NoopProcessor
    )
    topology.add_global_store(
        _kv_store("globalStore2").with_logging_disabled(), "source2", "globalTopic2", "processor2", _NoopProcessor
    )
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0 for global store (will not generate tasks)\n"
        "    Source: source1 (topics: [globalTopic1])\n"
        "      --> processor1\n"
        "    Processor: processor1 (stores: [globalStore1])\n"
        "      --> none\n"
        "      <-- source1\n"
        "  Sub-topology: 1 for global store (will not generate tasks)\n"
        "    Source: source2 (topics: [globalTopic2])\n"
        "      --> processor2\n"
        "    Processor: processor2 (stores: [globalStore2])\n"
        "      --> none\n"
        "      <-- source2\n"
    )
    assert _describe(topology) == expected


# ---------------------------------------------------------------------------------------------------------
# InternalTopologyBuilderTest.java
# ---------------------------------------------------------------------------------------------------------


def test_should_sort_processor_nodes_correctly():
    """InternalTopologyBuilderTest.java#shouldSortProcessorNodesCorrectly (derived)

    Kafka asserts node order source1(6), source2(4), processor2(3), processor1(2), processor3(2).  The full
    string below was derived by replaying InternalTopologyBuilder#describeSubtopology: successor/predecessor
    TreeSets are filled while sizes are still growing (HashMap iteration order of node names: processor1,
    source1/processor2, source2/processor3/sink1), so source1 prints "--> processor1, processor2" although
    processor2's final size (3) is larger than processor1's (2).
    """
    topology = Topology()
    topology.add_source("source1", "topic1")
    topology.add_source("source2", "topic2")
    topology.add_processor("processor1", _NoopProcessor, "source1")
    topology.add_processor("processor2", _NoopProcessor, "source1", "source2")
    topology.add_processor("processor3", _NoopProcessor, "processor2")
    topology.add_sink("sink1", "topic2", "processor1", "processor3")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source1 (topics: [topic1])\n"
        "      --> processor1, processor2\n"
        "    Source: source2 (topics: [topic2])\n"
        "      --> processor2\n"
        "    Processor: processor2 (stores: [])\n"
        "      --> processor3\n"
        "      <-- source1, source2\n"
        "    Processor: processor1 (stores: [])\n"
        "      --> sink1\n"
        "      <-- source1\n"
        "    Processor: processor3 (stores: [])\n"
        "      --> sink1\n"
        "      <-- processor2\n"
        "    Sink: sink1 (topic: topic2)\n"
        "      <-- processor1, processor3\n"
        "\n"
    )
    assert _describe(topology) == expected


# ---------------------------------------------------------------------------------------------------------
# CogroupedKStreamImplTest.java (verbatim)
# ---------------------------------------------------------------------------------------------------------


def test_cogroup_should_name_processors_and_store_based_on_named_parameter():
    """CogroupedKStreamImplTest.java#shouldNameProcessorsAndStoreBasedOnNamedParameter"""
    builder = StreamsBuilder()
    stream1 = builder.stream("one", _string_consumed())
    test2 = builder.stream("two", _string_consumed())
    grouped_one = stream1.group_by_key()
    grouped_two = test2.group_by_key()
    customers = (
        grouped_one.cogroup(_string_aggregator)
        .cogroup(grouped_two, _string_aggregator)
        .aggregate(_string_initializer, named=Named.as_("test"), materialized=Materialized.as_("store"))
    )
    customers.to_stream().to("output")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n"
        "      --> test-cogroup-agg-0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n"
        "      --> test-cogroup-agg-1\n"
        "    Processor: test-cogroup-agg-0 (stores: [store])\n"
        "      --> test-cogroup-merge\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: test-cogroup-agg-1 (stores: [store])\n"
        "      --> test-cogroup-merge\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: test-cogroup-merge (stores: [])\n"
        "      --> KTABLE-TOSTREAM-0000000005\n"
        "      <-- test-cogroup-agg-0, test-cogroup-agg-1\n"
        "    Processor: KTABLE-TOSTREAM-0000000005 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000006\n"
        "      <-- test-cogroup-merge\n"
        "    Sink: KSTREAM-SINK-0000000006 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000005\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_cogroup_should_name_repartition_topic():
    """CogroupedKStreamImplTest.java#shouldNameRepartitionTopic

    Also the verbatim reference vector of kafka-streams-semantics.md section 4.1.
    """
    builder = StreamsBuilder()
    stream1 = builder.stream("one", _string_consumed())
    test2 = builder.stream("two", _string_consumed())
    grouped_one = stream1.map(lambda k, v: KeyValue(v, k)).group_by_key(Grouped.as_("repartition-test"))
    grouped_two = test2.group_by_key()
    customers = (
        grouped_one.cogroup(_string_aggregator)
        .cogroup(grouped_two, _string_aggregator)
        .aggregate(_string_initializer)
    )
    customers.to_stream().to("output")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n"
        "      --> KSTREAM-MAP-0000000002\n"
        "    Processor: KSTREAM-MAP-0000000002 (stores: [])\n"
        "      --> repartition-test-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: repartition-test-repartition-filter (stores: [])\n"
        "      --> repartition-test-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000002\n"
        "    Sink: repartition-test-repartition-sink (topic: repartition-test-repartition)\n"
        "      <-- repartition-test-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000008\n"
        "    Source: repartition-test-repartition-source (topics: [repartition-test-repartition])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000007\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000007 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000009\n"
        "      <-- repartition-test-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000008 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000009\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000009 (stores: [])\n"
        "      --> KTABLE-TOSTREAM-0000000010\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000007, COGROUPKSTREAM-AGGREGATE-0000000008\n"
        "    Processor: KTABLE-TOSTREAM-0000000010 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000011\n"
        "      <-- COGROUPKSTREAM-MERGE-0000000009\n"
        "    Sink: KSTREAM-SINK-0000000011 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000010\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_cogroup_should_insert_repartitions_topic_for_upstream_key_modification():
    """CogroupedKStreamImplTest.java#shouldInsertRepartitionsTopicForUpstreamKeyModification"""
    builder = StreamsBuilder()
    stream1 = builder.stream("one", _string_consumed())
    test2 = builder.stream("two", _string_consumed())
    grouped_one = stream1.map(lambda k, v: KeyValue(v, k)).group_by_key()
    grouped_two = test2.group_by_key()
    customers = (
        grouped_one.cogroup(_string_aggregator)
        .cogroup(grouped_two, _string_aggregator)
        .aggregate(_string_initializer, named=Named.as_("test"), materialized=Materialized.as_("store"))
    )
    customers.to_stream().to("output")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n"
        "      --> KSTREAM-MAP-0000000002\n"
        "    Processor: KSTREAM-MAP-0000000002 (stores: [])\n"
        "      --> store-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: store-repartition-filter (stores: [])\n"
        "      --> store-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000002\n"
        "    Sink: store-repartition-sink (topic: store-repartition)\n"
        "      <-- store-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n"
        "      --> test-cogroup-agg-1\n"
        "    Source: store-repartition-source (topics: [store-repartition])\n"
        "      --> test-cogroup-agg-0\n"
        "    Processor: test-cogroup-agg-0 (stores: [store])\n"
        "      --> test-cogroup-merge\n"
        "      <-- store-repartition-source\n"
        "    Processor: test-cogroup-agg-1 (stores: [store])\n"
        "      --> test-cogroup-merge\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: test-cogroup-merge (stores: [])\n"
        "      --> KTABLE-TOSTREAM-0000000009\n"
        "      <-- test-cogroup-agg-0, test-cogroup-agg-1\n"
        "    Processor: KTABLE-TOSTREAM-0000000009 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000010\n"
        "      <-- test-cogroup-merge\n"
        "    Sink: KSTREAM-SINK-0000000010 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000009\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def _cogroup_grouped_reused_in_same_cogroups(config):
    builder = StreamsBuilder()
    stream1 = builder.stream("one", _string_consumed())
    stream2 = builder.stream("two", _string_consumed())
    grouped_one = stream1.map(lambda k, v: KeyValue(v, k)).group_by_key()
    grouped_two = stream2.group_by_key()
    cogrouped_two = (
        grouped_one.cogroup(_string_aggregator)
        .cogroup(grouped_two, _string_aggregator)
        .aggregate(_string_initializer)
    )
    cogrouped_one = (
        grouped_one.cogroup(_string_aggregator)
        .cogroup(grouped_two, _string_aggregator)
        .aggregate(_string_initializer)
    )
    cogrouped_one.to_stream().to("output")
    cogrouped_two.to_stream().to("OUTPUT2")
    return builder.build(config) if config is not None else builder.build()


def test_cogroup_should_insert_repartitions_topic_for_upstream_key_modification_with_grouped_reused_in_same_cogroups():
    """CogroupedKStreamImplTest.java#shouldInsertRepartitionsTopicForUpstreamKeyModificationWithGroupedReusedInSameCogroups

    Successor list of KSTREAM-MAP-0000000002 is "...0000000010-repartition-filter, ...0000000003-repartition-filter"
    (not name order): an insertion-time size artefact of Kafka's describe.
    """
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n"
        "      --> KSTREAM-MAP-0000000002\n"
        "    Processor: KSTREAM-MAP-0000000002 (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-filter, COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000002\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-filter (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000002\n"
        "    Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition)\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter\n"
        "    Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition)\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000008, COGROUPKSTREAM-AGGREGATE-0000000015\n"
        "    Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000007\n"
        "    Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000014\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000007 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000009\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000008 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000009\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000014 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000016\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000015 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000016\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000009 (stores: [])\n"
        "      --> KTABLE-TOSTREAM-0000000019\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000007, COGROUPKSTREAM-AGGREGATE-0000000008\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000016 (stores: [])\n"
        "      --> KTABLE-TOSTREAM-0000000017\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000014, COGROUPKSTREAM-AGGREGATE-0000000015\n"
        "    Processor: KTABLE-TOSTREAM-0000000017 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000018\n"
        "      <-- COGROUPKSTREAM-MERGE-0000000016\n"
        "    Processor: KTABLE-TOSTREAM-0000000019 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000020\n"
        "      <-- COGROUPKSTREAM-MERGE-0000000009\n"
        "    Sink: KSTREAM-SINK-0000000018 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000017\n"
        "    Sink: KSTREAM-SINK-0000000020 (topic: OUTPUT2)\n"
        "      <-- KTABLE-TOSTREAM-0000000019\n"
        "\n"
    )
    assert _describe(_cogroup_grouped_reused_in_same_cogroups(None)) == expected


def test_cogroup_should_insert_repartitions_topic_for_upstream_key_modification_with_grouped_reused_in_same_cogroups_with_optimization():
    """CogroupedKStreamImplTest.java#shouldInsertRepartitionsTopicForUpstreamKeyModificationWithGroupedReusedInSameCogroupsWithOptimization"""
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n"
        "      --> KSTREAM-MAP-0000000002\n"
        "    Processor: KSTREAM-MAP-0000000002 (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000002\n"
        "    Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition)\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000014, COGROUPKSTREAM-AGGREGATE-0000000007\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000015, COGROUPKSTREAM-AGGREGATE-0000000008\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000007 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000009\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000008 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000009\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000014 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000016\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000015 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000016\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000009 (stores: [])\n"
        "      --> KTABLE-TOSTREAM-0000000019\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000007, COGROUPKSTREAM-AGGREGATE-0000000008\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000016 (stores: [])\n"
        "      --> KTABLE-TOSTREAM-0000000017\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000014, COGROUPKSTREAM-AGGREGATE-0000000015\n"
        "    Processor: KTABLE-TOSTREAM-0000000017 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000018\n"
        "      <-- COGROUPKSTREAM-MERGE-0000000016\n"
        "    Processor: KTABLE-TOSTREAM-0000000019 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000020\n"
        "      <-- COGROUPKSTREAM-MERGE-0000000009\n"
        "    Sink: KSTREAM-SINK-0000000018 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000017\n"
        "    Sink: KSTREAM-SINK-0000000020 (topic: OUTPUT2)\n"
        "      <-- KTABLE-TOSTREAM-0000000019\n"
        "\n"
    )
    assert _describe(_cogroup_grouped_reused_in_same_cogroups(OPTIMIZE)) == expected


def _cogroup_grouped_reused_in_different_cogroups(config):
    builder = StreamsBuilder()
    stream1 = builder.stream("one", _string_consumed())
    stream2 = builder.stream("two", _string_consumed())
    stream3 = builder.stream("three", _string_consumed())
    grouped_one = stream1.map(lambda k, v: KeyValue(v, k)).group_by_key()
    grouped_two = stream2.group_by_key()
    grouped_three = stream3.group_by_key()
    grouped_one.cogroup(_string_aggregator).cogroup(grouped_three, _string_aggregator).aggregate(_string_initializer)
    grouped_one.cogroup(_string_aggregator).cogroup(grouped_two, _string_aggregator).aggregate(_string_initializer)
    return builder.build(config) if config is not None else builder.build()


def test_cogroup_should_insert_repartitions_topic_for_upstream_key_modification_with_grouped_reused_in_different_cogroups():
    """CogroupedKStreamImplTest.java#shouldInsertRepartitionsTopicForUpstreamKeyModificationWithGroupedReusedInDifferentCogroups"""
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n"
        "      --> KSTREAM-MAP-0000000003\n"
        "    Processor: KSTREAM-MAP-0000000003 (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-filter, COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-filter (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000003\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011-repartition-filter (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000003\n"
        "    Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition)\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-filter\n"
        "    Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011-repartition)\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011-repartition])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000015\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000016\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000015 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000017\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000016 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000017\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000017 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000015, COGROUPKSTREAM-AGGREGATE-0000000016\n"
        "\n"
        "  Sub-topology: 2\n"
        "    Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000008\n"
        "    Source: KSTREAM-SOURCE-0000000002 (topics: [three])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000009\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000008 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000010\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000009 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000010\n"
        "      <-- KSTREAM-SOURCE-0000000002\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000010 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000008, COGROUPKSTREAM-AGGREGATE-0000000009\n"
        "\n"
    )
    assert _describe(_cogroup_grouped_reused_in_different_cogroups(None)) == expected


def test_cogroup_should_insert_repartitions_topic_for_upstream_key_modification_with_grouped_reused_in_different_cogroups_with_optimization():
    """CogroupedKStreamImplTest.java#shouldInsertRepartitionsTopicForUpstreamKeyModificationWithGroupedReusedInDifferentCogroupsWithOptimization"""
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n"
        "      --> KSTREAM-MAP-0000000003\n"
        "    Processor: KSTREAM-MAP-0000000003 (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-filter (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000003\n"
        "    Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition)\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000008, COGROUPKSTREAM-AGGREGATE-0000000015\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000016\n"
        "    Source: KSTREAM-SOURCE-0000000002 (topics: [three])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000009\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000008 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000010\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000009 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000010\n"
        "      <-- KSTREAM-SOURCE-0000000002\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000015 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000017\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000016 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000011])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000017\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000010 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000008, COGROUPKSTREAM-AGGREGATE-0000000009\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000017 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000015, COGROUPKSTREAM-AGGREGATE-0000000016\n"
        "\n"
    )
    assert _describe(_cogroup_grouped_reused_in_different_cogroups(OPTIMIZE)) == expected


def _cogroup_grouped_reused(config):
    builder = StreamsBuilder()
    stream1 = builder.stream("one", _string_consumed())
    stream2 = builder.stream("two", _string_consumed())
    grouped_one = stream1.map(lambda k, v: KeyValue(v, k)).group_by_key()
    grouped_two = stream2.group_by_key()
    grouped_one.cogroup(_string_aggregator).cogroup(grouped_two, _string_aggregator).aggregate(_string_initializer)
    grouped_one.aggregate(_string_initializer, _string_aggregator)
    return builder.build(config) if config is not None else builder.build()


def test_cogroup_should_insert_repartitions_topic_for_upstream_key_modification_with_grouped_reused():
    """CogroupedKStreamImplTest.java#shouldInsertRepartitionsTopicForUpstreamKeyModificationWithGroupedReused

    The plain aggregate's repartition uses generated KSTREAM-SINK/FILTER/SOURCE names (prefix is a
    KSTREAM-...-STATE-STORE name) while the cogroup's uses the "-repartition-filter" style.
    """
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n"
        "      --> KSTREAM-MAP-0000000002\n"
        "    Processor: KSTREAM-MAP-0000000002 (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter, KSTREAM-FILTER-0000000013\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000002\n"
        "    Processor: KSTREAM-FILTER-0000000013 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000012\n"
        "      <-- KSTREAM-MAP-0000000002\n"
        "    Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition)\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter\n"
        "    Sink: KSTREAM-SINK-0000000012 (topic: KSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition)\n"
        "      <-- KSTREAM-FILTER-0000000013\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000007\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000008\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000007 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000009\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000008 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000009\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000009 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000007, COGROUPKSTREAM-AGGREGATE-0000000008\n"
        "\n"
        "  Sub-topology: 2\n"
        "    Source: KSTREAM-SOURCE-0000000014 (topics: [KSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition])\n"
        "      --> KSTREAM-AGGREGATE-0000000011\n"
        "    Processor: KSTREAM-AGGREGATE-0000000011 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000010])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000014\n"
        "\n"
    )
    assert _describe(_cogroup_grouped_reused(None)) == expected


def test_cogroup_should_insert_repartitions_topic_for_upstream_key_modification_with_grouped_reused_with_optimization():
    """CogroupedKStreamImplTest.java#shouldInsertRepartitionsTopicForUpstreamKeyModificationWithGroupedReusedWithOptimization"""
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n"
        "      --> KSTREAM-MAP-0000000002\n"
        "    Processor: KSTREAM-MAP-0000000002 (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000002\n"
        "    Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition)\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000007, KSTREAM-AGGREGATE-0000000011\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000008\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000007 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000009\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000008 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000009\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000009 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000007, COGROUPKSTREAM-AGGREGATE-0000000008\n"
        "    Processor: KSTREAM-AGGREGATE-0000000011 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000010])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source\n"
        "\n"
    )
    assert _describe(_cogroup_grouped_reused(OPTIMIZE)) == expected


def test_cogroup_should_insert_repartitions_topic_for_upstream_key_modification_with_grouped_remade_with_optimization():
    """CogroupedKStreamImplTest.java#shouldInsertRepartitionsTopicForUpstreamKeyModificationWithGroupedRemadeWithOptimization"""
    builder = StreamsBuilder()
    stream1 = builder.stream("one", _string_consumed())
    stream2 = builder.stream("two", _string_consumed())
    stream3 = builder.stream("three", _string_consumed())
    grouped_one = stream1.map(lambda k, v: KeyValue(v, k)).group_by_key()
    grouped_two = stream2.group_by_key()
    grouped_three = stream3.group_by_key()
    grouped_four = stream1.map(lambda k, v: KeyValue(v, k)).group_by_key()
    grouped_one.cogroup(_string_aggregator).cogroup(grouped_two, _string_aggregator).aggregate(_string_initializer)
    grouped_three.cogroup(_string_aggregator).cogroup(grouped_four, _string_aggregator).aggregate(_string_initializer)
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n"
        "      --> KSTREAM-MAP-0000000003, KSTREAM-MAP-0000000004\n"
        "    Processor: KSTREAM-MAP-0000000003 (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000005-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-MAP-0000000004 (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000012-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000005-repartition-filter (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000005-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000003\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000012-repartition-filter (stores: [])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000012-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000004\n"
        "    Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000005-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000005-repartition)\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000005-repartition-filter\n"
        "    Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000012-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000012-repartition)\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000012-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000005-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000005-repartition])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000009\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000010\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000009 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000005])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000011\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000005-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000010 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000005])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000011\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000011 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000009, COGROUPKSTREAM-AGGREGATE-0000000010\n"
        "\n"
        "  Sub-topology: 2\n"
        "    Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000012-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000012-repartition])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000017\n"
        "    Source: KSTREAM-SOURCE-0000000002 (topics: [three])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000016\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000016 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000012])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000018\n"
        "      <-- KSTREAM-SOURCE-0000000002\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000017 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000012])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000018\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000012-repartition-source\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000018 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000016, COGROUPKSTREAM-AGGREGATE-0000000017\n"
        "\n"
    )
    assert _describe(builder.build(OPTIMIZE)) == expected


def test_cogroup_should_insert_repartitions_topic_for_cogroups_used_twice():
    """CogroupedKStreamImplTest.java#shouldInsertRepartitionsTopicForCogroupsUsedTwice

    Java passes an empty Properties to build(); one named Grouped ("foo") => one shared repartition topic.
    """
    builder = StreamsBuilder()
    stream1 = builder.stream("one", _string_consumed())
    grouped_one = stream1.map(lambda k, v: KeyValue(v, k)).group_by_key(Grouped.as_("foo"))
    one = grouped_one.cogroup(_string_aggregator)
    one.aggregate(_string_initializer)
    one.aggregate(_string_initializer)
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n"
        "      --> KSTREAM-MAP-0000000001\n"
        "    Processor: KSTREAM-MAP-0000000001 (stores: [])\n"
        "      --> foo-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: foo-repartition-filter (stores: [])\n"
        "      --> foo-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000001\n"
        "    Sink: foo-repartition-sink (topic: foo-repartition)\n"
        "      <-- foo-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: foo-repartition-source (topics: [foo-repartition])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000006, COGROUPKSTREAM-AGGREGATE-0000000012\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000006 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000002])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000007\n"
        "      <-- foo-repartition-source\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000012 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000008])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000013\n"
        "      <-- foo-repartition-source\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000007 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000006\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000013 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000012\n"
        "\n"
    )
    assert _describe(builder.build({})) == expected


# ---------------------------------------------------------------------------------------------------------
# KStreamImplTest.java (verbatim)
# ---------------------------------------------------------------------------------------------------------


def test_should_not_materialized_ktable_from_kstream():
    """KStreamImplTest.java#shouldNotMaterializedKTableFromKStream

    toTable() burns store index 2 (KSTREAM-TOTABLE-STATE-STORE) but does not materialize it.
    """
    builder = StreamsBuilder()
    builder.stream("input", _string_consumed()).to_table().to_stream().to("output")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-TOTABLE-0000000001\n"
        "    Processor: KSTREAM-TOTABLE-0000000001 (stores: [])\n"
        "      --> KTABLE-TOSTREAM-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KTABLE-TOSTREAM-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000004\n"
        "      <-- KSTREAM-TOTABLE-0000000001\n"
        "    Sink: KSTREAM-SINK-0000000004 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000003\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_should_process_with_old_processor_and_state__new_papi_variant():
    """KStreamImplTest.java#shouldProcessWithOldProcessorAndState -- variant with the new Processor API.

    The Java test uses the removed old ``org.apache.kafka.streams.processor.Processor``; the description of
    ``process(supplier, Named.as("p"), "sum")`` is the same with the new API.
    """
    builder = StreamsBuilder()
    builder.add_state_store(
        Stores.key_value_store_builder(Stores.in_memory_key_value_store("sum"), Serdes.String(), Serdes.Integer())
    )
    builder.stream("input", _string_consumed()).process(_NoopProcessor, "sum", named=Named.as_("p"))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> p\n"
        "    Processor: p (stores: [sum])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_should_bind_state_with_old_processor():
    """KStreamImplTest.java#shouldBindStateWithOldProcessor (uses the new API's ContextualProcessor)"""
    builder = StreamsBuilder()
    (
        builder.stream("input", _string_consumed())
        .process(_NoopProcessor, named=Named.as_("p"))
        .to("output", Produced(value_serde=Serdes.Integer()))
    )
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> p\n"
        "    Processor: p (stores: [])\n"
        "      --> KSTREAM-SINK-0000000001\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Sink: KSTREAM-SINK-0000000001 (topic: output)\n"
        "      <-- p\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_should_materialize_ktable_from_kstream():
    """KStreamImplTest.java#shouldMaterializeKTableFromKStream

    Java: ``toTable(Materialized.as(Stores.inMemoryKeyValueStore("store")))`` (Materialized from a store supplier).
    """
    builder = StreamsBuilder()
    builder.stream("input", _string_consumed()).to_table(
        materialized=Materialized.as_(Stores.in_memory_key_value_store("store"))
    )
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-TOTABLE-0000000001\n"
        "    Processor: KSTREAM-TOTABLE-0000000001 (stores: [store])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_should_support_key_change_ktable_from_kstream():
    """KStreamImplTest.java#shouldSupportKeyChangeKTableFromKStream

    toTable after a key change: repartition named after the toTable processor (KSTREAM-TOTABLE-0000000002),
    generated sink/filter/source names (indices 4, 5, 6).
    """
    builder = StreamsBuilder()
    (
        builder.stream("input", _string_consumed())
        .map(lambda key, value: KeyValue(ord(key[0]) - ord("A"), value))
        .to_table(materialized=Materialized.with_(Serdes.Integer(), None))
        .to_stream()
        .to("output")
    )
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-MAP-0000000001\n"
        "    Processor: KSTREAM-MAP-0000000001 (stores: [])\n"
        "      --> KSTREAM-FILTER-0000000005\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-FILTER-0000000005 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000004\n"
        "      <-- KSTREAM-MAP-0000000001\n"
        "    Sink: KSTREAM-SINK-0000000004 (topic: KSTREAM-TOTABLE-0000000002-repartition)\n"
        "      <-- KSTREAM-FILTER-0000000005\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000006 (topics: [KSTREAM-TOTABLE-0000000002-repartition])\n"
        "      --> KSTREAM-TOTABLE-0000000002\n"
        "    Processor: KSTREAM-TOTABLE-0000000002 (stores: [])\n"
        "      --> KTABLE-TOSTREAM-0000000007\n"
        "      <-- KSTREAM-SOURCE-0000000006\n"
        "    Processor: KTABLE-TOSTREAM-0000000007 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000008\n"
        "      <-- KSTREAM-TOTABLE-0000000002\n"
        "    Sink: KSTREAM-SINK-0000000008 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000007\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_should_support_group_by_count_with_kstream_to_ktable():
    """KStreamImplTest.java#shouldSupportGroupByCountWithKStreamToKTable

    toTable() feeding a KTable.groupBy materializes the toTable store (KSTREAM-TOTABLE-STATE-STORE-0000000002).
    """
    builder = StreamsBuilder()
    (
        builder.stream("input", _string_consumed())
        .to_table()
        .group_by(lambda key, value: KeyValue(value, value), Grouped.with_(Serdes.String(), Serdes.String()))
        .count()
        .to_stream()
        .to("output")
    )
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-TOTABLE-0000000001\n"
        "    Processor: KSTREAM-TOTABLE-0000000001 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000002])\n"
        "      --> KTABLE-SELECT-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KTABLE-SELECT-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000005\n"
        "      <-- KSTREAM-TOTABLE-0000000001\n"
        "    Sink: KSTREAM-SINK-0000000005 (topic: KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition)\n"
        "      <-- KTABLE-SELECT-0000000003\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000006 (topics: [KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition])\n"
        "      --> KTABLE-AGGREGATE-0000000007\n"
        "    Processor: KTABLE-AGGREGATE-0000000007 (stores: [KTABLE-AGGREGATE-STATE-STORE-0000000004])\n"
        "      --> KTABLE-TOSTREAM-0000000008\n"
        "      <-- KSTREAM-SOURCE-0000000006\n"
        "    Processor: KTABLE-TOSTREAM-0000000008 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000009\n"
        "      <-- KTABLE-AGGREGATE-0000000007\n"
        "    Sink: KSTREAM-SINK-0000000009 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000008\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_should_support_trigger_materialized_with_ktable_from_kstream():
    """KStreamImplTest.java#shouldSupportTriggerMaterializedWithKTableFromKStream

    Java: ``Materialized.as("store").withKeySerde(String).withValueSerde(Integer)``; serdes dropped (not shown).
    """
    builder = StreamsBuilder()
    (
        builder.stream("input", _string_consumed())
        .to_table()
        .map_values(lambda value: ord(value[0]) - ord("a"), materialized=Materialized.as_("store"))
        .to_stream()
        .to("output")
    )
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-TOTABLE-0000000001\n"
        "    Processor: KSTREAM-TOTABLE-0000000001 (stores: [])\n"
        "      --> KTABLE-MAPVALUES-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KTABLE-MAPVALUES-0000000003 (stores: [store])\n"
        "      --> KTABLE-TOSTREAM-0000000004\n"
        "      <-- KSTREAM-TOTABLE-0000000001\n"
        "    Processor: KTABLE-TOSTREAM-0000000004 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000005\n"
        "      <-- KTABLE-MAPVALUES-0000000003\n"
        "    Sink: KSTREAM-SINK-0000000005 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000004\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


# ---------------------------------------------------------------------------------------------------------
# StreamsGraphTest.java
# ---------------------------------------------------------------------------------------------------------


def test_should_optimize_several_merge_nodes_with_common_key_changing_parent():
    """StreamsGraphTest.java#shouldOptimizeSeveralMergeNodesWithCommonKeyChangingParent (expectedMergeOptimizedTopology)

    Note "<-- KSTREAM-MERGE-0000000005, KSTREAM-MAPVALUES-0000000004": equal final sizes (3) but not name
    order -- predecessor sets are ordered by the sizes at insertion time.
    """
    builder = StreamsBuilder()
    parent_stream = builder.stream("input_topic", Consumed.with_(Serdes.Integer(), Serdes.Integer())).select_key(
        lambda key, value: key + value
    )
    child_stream1 = parent_stream.map_values(lambda v: v + 1)
    child_stream2 = parent_stream.map_values(lambda v: v + 2)
    child_stream3 = parent_stream.map_values(lambda v: v + 3)
    child_stream1.merge(child_stream2).merge(child_stream3).to("output_topic")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input_topic])\n"
        "      --> KSTREAM-KEY-SELECT-0000000001\n"
        "    Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])\n"
        "      --> KSTREAM-MAPVALUES-0000000002, KSTREAM-MAPVALUES-0000000003, KSTREAM-MAPVALUES-0000000004\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-MAPVALUES-0000000002 (stores: [])\n"
        "      --> KSTREAM-MERGE-0000000005\n"
        "      <-- KSTREAM-KEY-SELECT-0000000001\n"
        "    Processor: KSTREAM-MAPVALUES-0000000003 (stores: [])\n"
        "      --> KSTREAM-MERGE-0000000005\n"
        "      <-- KSTREAM-KEY-SELECT-0000000001\n"
        "    Processor: KSTREAM-MAPVALUES-0000000004 (stores: [])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-KEY-SELECT-0000000001\n"
        "    Processor: KSTREAM-MERGE-0000000005 (stores: [])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-MAPVALUES-0000000002, KSTREAM-MAPVALUES-0000000003\n"
        "    Processor: KSTREAM-MERGE-0000000006 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000007\n"
        "      <-- KSTREAM-MERGE-0000000005, KSTREAM-MAPVALUES-0000000004\n"
        "    Sink: KSTREAM-SINK-0000000007 (topic: output_topic)\n"
        "      <-- KSTREAM-MERGE-0000000006\n"
        "\n"
    )
    assert _describe(builder.build(OPTIMIZE)) == expected


def _topology_with_changing_values_after_changing_key_non_windowed(config):
    builder = StreamsBuilder()
    mapped_key_stream = builder.stream("input").select_key(lambda k, v: k + v)
    mapped_key_stream.map_values(lambda v: v.upper()).group_by_key().count().to_stream().to("output")
    mapped_key_stream.flat_map_values(lambda v: v.split()).group_by_key().count().to_stream().to("other-output")
    return builder.build(config)


def test_should_not_optimize_with_value_or_key_changing_operators_after_initial_key_change__non_windowed_variant():
    """StreamsGraphTest.java#shouldNotOptimizeWithValueOrKeyChangingOperatorsAfterInitialKeyChange -- variant.

    Java's second branch is windowed (windowedBy(TimeWindows)); here both branches are plain counts.  A
    value-changing operator (mapValues / flatMapValues) between the key changer and the repartition blocks
    merge.repartition.topics, so optimized == unoptimized with 2 repartition topics.
    """
    attempted_optimize = _describe(_topology_with_changing_values_after_changing_key_non_windowed(OPTIMIZE))
    no_optimization = _describe(_topology_with_changing_values_after_changing_key_non_windowed(NO_OPTIMIZATION))
    assert attempted_optimize == no_optimization
    assert _count(REPARTITION_SINK, attempted_optimize) == 2
    assert _count(REPARTITION_SINK, no_optimization) == 2


def _topology_with_repartition_operation_non_windowed(config):
    builder = StreamsBuilder()
    input_stream = builder.stream("input").select_key(lambda k, v: k + v)
    input_stream.repartition().group_by_key().count().to_stream().to("output")
    input_stream.repartition().group_by_key().count().to_stream().to("other-output")
    return builder.build(config)


def test_should_not_optimize_when_repartition_operation_is_done__non_windowed_variant():
    """StreamsGraphTest.java#shouldNotOptimizeWhenRepartitionOperationIsDone -- variant without windowedBy.

    repartition() nodes are not optimizable: optimized == unoptimized, 2 repartition topics.
    """
    attempted_optimize = _describe(_topology_with_repartition_operation_non_windowed(OPTIMIZE))
    no_optimization = _describe(_topology_with_repartition_operation_non_windowed(NO_OPTIMIZATION))
    assert attempted_optimize == no_optimization
    assert _count(REPARTITION_SINK, attempted_optimize) == 2
    assert _count(REPARTITION_SINK, no_optimization) == 2


# ---------------------------------------------------------------------------------------------------------
# RepartitionWithMergeOptimizingTest.java (verbatim)
# ---------------------------------------------------------------------------------------------------------


def _repartition_with_merge_topology(config):
    builder = StreamsBuilder()
    source_a_stream = builder.stream(
        "inputA", Consumed(key_serde=Serdes.String(), value_serde=Serdes.String(), name="sourceAStream")
    )
    source_b_stream = builder.stream(
        "inputB", Consumed(key_serde=Serdes.String(), value_serde=Serdes.String(), name="sourceBStream")
    )
    mapped_a_stream = source_a_stream.map(lambda k, v: KeyValue(v.split(":")[0], v), named=Named.as_("mappedAStream"))
    mapped_b_stream = source_b_stream.map(lambda k, v: KeyValue(v.split(":")[0], v), named=Named.as_("mappedBStream"))
    merged_stream = mapped_a_stream.merge(mapped_b_stream, named=Named.as_("mergedStream"))
    (
        merged_stream.group_by_key(Grouped.as_("long-groupByKey"))
        .count(Named.as_("long-count"), Materialized.as_(Stores.in_memory_key_value_store("long-store")))
        .to_stream(named=Named.as_("long-toStream"))
        .to("outputTopic_0", Produced(key_serde=Serdes.String(), value_serde=Serdes.Long(), name="long-to"))
    )
    (
        merged_stream.group_by_key(Grouped.as_("string-groupByKey"))
        .count(Named.as_("string-count"), Materialized.as_(Stores.in_memory_key_value_store("string-store")))
        .to_stream(named=Named.as_("string-toStream"))
        .map_values(lambda v: str(v), named=Named.as_("string-mapValues"))
        .to("outputTopic_1", Produced(key_serde=Serdes.String(), value_serde=Serdes.String(), name="string-to"))
    )
    return builder.build(config)


def test_repartition_with_merge_should_send_correct_records_optimized():
    """RepartitionWithMergeOptimizingTest.java#shouldSendCorrectRecords_OPTIMIZED (EXPECTED_OPTIMIZED_TOPOLOGY)

    The merge node is the key changer for the merged repartition; "--> long-count, string-count" while
    string-count (size 4) is listed before long-count (size 3) -- insertion-time ordering again.
    """
    topology_string = _describe(_repartition_with_merge_topology(OPTIMIZE))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: sourceAStream (topics: [inputA])\n"
        "      --> mappedAStream\n"
        "    Source: sourceBStream (topics: [inputB])\n"
        "      --> mappedBStream\n"
        "    Processor: mappedAStream (stores: [])\n"
        "      --> mergedStream\n"
        "      <-- sourceAStream\n"
        "    Processor: mappedBStream (stores: [])\n"
        "      --> mergedStream\n"
        "      <-- sourceBStream\n"
        "    Processor: mergedStream (stores: [])\n"
        "      --> long-groupByKey-repartition-filter\n"
        "      <-- mappedAStream, mappedBStream\n"
        "    Processor: long-groupByKey-repartition-filter (stores: [])\n"
        "      --> long-groupByKey-repartition-sink\n"
        "      <-- mergedStream\n"
        "    Sink: long-groupByKey-repartition-sink (topic: long-groupByKey-repartition)\n"
        "      <-- long-groupByKey-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: long-groupByKey-repartition-source (topics: [long-groupByKey-repartition])\n"
        "      --> long-count, string-count\n"
        "    Processor: string-count (stores: [string-store])\n"
        "      --> string-toStream\n"
        "      <-- long-groupByKey-repartition-source\n"
        "    Processor: long-count (stores: [long-store])\n"
        "      --> long-toStream\n"
        "      <-- long-groupByKey-repartition-source\n"
        "    Processor: string-toStream (stores: [])\n"
        "      --> string-mapValues\n"
        "      <-- string-count\n"
        "    Processor: long-toStream (stores: [])\n"
        "      --> long-to\n"
        "      <-- long-count\n"
        "    Processor: string-mapValues (stores: [])\n"
        "      --> string-to\n"
        "      <-- string-toStream\n"
        "    Sink: long-to (topic: outputTopic_0)\n"
        "      <-- long-toStream\n"
        "    Sink: string-to (topic: outputTopic_1)\n"
        "      <-- string-mapValues\n"
        "\n"
    )
    assert topology_string == expected
    assert _count(REPARTITION_SINK, topology_string) == 1


def test_repartition_with_merge_should_send_correct_results_no_optimization():
    """RepartitionWithMergeOptimizingTest.java#shouldSendCorrectResults_NO_OPTIMIZATION (EXPECTED_UNOPTIMIZED_TOPOLOGY)"""
    topology_string = _describe(_repartition_with_merge_topology(NO_OPTIMIZATION))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: sourceAStream (topics: [inputA])\n"
        "      --> mappedAStream\n"
        "    Source: sourceBStream (topics: [inputB])\n"
        "      --> mappedBStream\n"
        "    Processor: mappedAStream (stores: [])\n"
        "      --> mergedStream\n"
        "      <-- sourceAStream\n"
        "    Processor: mappedBStream (stores: [])\n"
        "      --> mergedStream\n"
        "      <-- sourceBStream\n"
        "    Processor: mergedStream (stores: [])\n"
        "      --> long-groupByKey-repartition-filter, string-groupByKey-repartition-filter\n"
        "      <-- mappedAStream, mappedBStream\n"
        "    Processor: long-groupByKey-repartition-filter (stores: [])\n"
        "      --> long-groupByKey-repartition-sink\n"
        "      <-- mergedStream\n"
        "    Processor: string-groupByKey-repartition-filter (stores: [])\n"
        "      --> string-groupByKey-repartition-sink\n"
        "      <-- mergedStream\n"
        "    Sink: long-groupByKey-repartition-sink (topic: long-groupByKey-repartition)\n"
        "      <-- long-groupByKey-repartition-filter\n"
        "    Sink: string-groupByKey-repartition-sink (topic: string-groupByKey-repartition)\n"
        "      <-- string-groupByKey-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: long-groupByKey-repartition-source (topics: [long-groupByKey-repartition])\n"
        "      --> long-count\n"
        "    Processor: long-count (stores: [long-store])\n"
        "      --> long-toStream\n"
        "      <-- long-groupByKey-repartition-source\n"
        "    Processor: long-toStream (stores: [])\n"
        "      --> long-to\n"
        "      <-- long-count\n"
        "    Sink: long-to (topic: outputTopic_0)\n"
        "      <-- long-toStream\n"
        "\n"
        "  Sub-topology: 2\n"
        "    Source: string-groupByKey-repartition-source (topics: [string-groupByKey-repartition])\n"
        "      --> string-count\n"
        "    Processor: string-count (stores: [string-store])\n"
        "      --> string-toStream\n"
        "      <-- string-groupByKey-repartition-source\n"
        "    Processor: string-toStream (stores: [])\n"
        "      --> string-mapValues\n"
        "      <-- string-count\n"
        "    Processor: string-mapValues (stores: [])\n"
        "      --> string-to\n"
        "      <-- string-toStream\n"
        "    Sink: string-to (topic: outputTopic_1)\n"
        "      <-- string-mapValues\n"
        "\n"
    )
    assert topology_string == expected
    assert _count(REPARTITION_SINK, topology_string) == 2


# ---------------------------------------------------------------------------------------------------------
# RepartitionTopicNamingTest.java -- Kafka only asserts fragments / counts here
# ---------------------------------------------------------------------------------------------------------


def test_should_not_fail_with_same_repartition_topic_name_using_same_kgrouped_table():
    """RepartitionTopicNamingTest.java#shouldNotFailWithSameRepartitionTopicNameUsingSameKGroupedTable"""
    builder = StreamsBuilder()
    kgrouped_table = builder.table("topic").group_by(lambda k, v: KeyValue(k, v), Grouped.as_("grouping"))
    kgrouped_table.count().to_stream().to("output-count")
    kgrouped_table.reduce(lambda v, v2: v2, lambda v, v2: v2).to_stream().to("output-reduce")
    topology_string = _describe(builder.build())
    assert _count(REPARTITION_SINK, topology_string) == 1
    assert "grouping-repartition" in topology_string


def test_should_not_reuse_repartition_node_with_unnamed_repartition_topics_kgrouped_table():
    """RepartitionTopicNamingTest.java#shouldNotReuseRepartitionNodeWithUnnamedRepartitionTopicsKGroupedTable"""
    builder = StreamsBuilder()
    kgrouped_table = builder.table("topic").group_by(lambda k, v: KeyValue(k, v))
    kgrouped_table.count().to_stream().to("output-count")
    kgrouped_table.reduce(lambda v, v2: v2, lambda v, v2: v2).to_stream().to("output-reduce")
    topology_string = _describe(builder.build())
    assert _count(REPARTITION_SINK, topology_string) == 2


def _build_stream_group_by_key_no_windows(other_operations, is_group_by_key, repartition_name="kstream-grouping"):
    builder = StreamsBuilder()
    select_key_stream = builder.stream("topic").select_key(lambda k, v: k + v)
    if other_operations:
        select_key_stream = select_key_stream.filter(lambda k, v: True).map_values(lambda v: v)
    if is_group_by_key:
        select_key_stream.group_by_key(Grouped.as_(repartition_name)).count()
    else:
        select_key_stream.group_by(lambda k, v: k + v, Grouped.as_(repartition_name)).count()
    return _describe(builder.build())


def test_should_keep_repartition_topic_name_for_group_by_key_no_windows():
    """RepartitionTopicNamingTest.java#shouldKeepRepartitionTopicNameForGroupByKeyNoWindows"""
    expected_fragment = "(topic: kstream-grouping-repartition)"
    assert expected_fragment in _build_stream_group_by_key_no_windows(False, True)
    assert expected_fragment in _build_stream_group_by_key_no_windows(True, True)


def test_should_keep_repartition_topic_name_for_group_by_no_windows():
    """RepartitionTopicNamingTest.java#shouldKeepRepartitionTopicNameForGroupByNoWindows"""
    expected_fragment = "(topic: kstream-grouping-repartition)"
    assert expected_fragment in _build_stream_group_by_key_no_windows(False, False)
    assert expected_fragment in _build_stream_group_by_key_no_windows(True, False)


def test_should_keep_repartition_topic_name_for_group_by_time_windows():
    """RepartitionTopicNamingTest.java#shouldKeepRepartitionTopicNameForGroupByTimeWindows

    Despite its name, Kafka's groupBy branch of buildStreamGroupByKeyTimeWindows has no windowedBy:
    ``selectKey(..)[.filter(..).mapValues(..)].groupBy(kvMapper, Grouped.as("time-window-grouping")).count()``.
    """
    expected_fragment = "(topic: time-window-grouping-repartition)"
    assert expected_fragment in _build_stream_group_by_key_no_windows(False, False, "time-window-grouping")
    assert expected_fragment in _build_stream_group_by_key_no_windows(True, False, "time-window-grouping")


def test_should_keep_repartition_name_for_group_by_ktable():
    """RepartitionTopicNamingTest.java#shouldKeepRepartitionNameForGroupByKTable"""

    def build_ktable_group_by(other_operations):
        builder = StreamsBuilder()
        ktable = builder.table("topic")
        if other_operations:
            ktable = ktable.filter(lambda k, v: True)
        ktable.group_by(lambda k, v: KeyValue(k, v), Grouped.as_("ktable-group-by")).count()
        return _describe(builder.build())

    expected_fragment = "(topic: ktable-group-by-repartition)"
    assert expected_fragment in build_ktable_group_by(False)
    assert expected_fragment in build_ktable_group_by(True)


# ---------------------------------------------------------------------------------------------------------
# KStreamRepartitionIntegrationTest.java -- only the describe() assertions (Kafka runs these against a broker
# with topology.optimization in {all, none}; the Java code describes builder.build() without properties)
# ---------------------------------------------------------------------------------------------------------

OPTIMIZATIONS = ["all", "none"]


@pytest.mark.parametrize("optimization", OPTIMIZATIONS)
def test_should_perform_select_key_with_repartition_operation(optimization):
    """KStreamRepartitionIntegrationTest.java#shouldPerformSelectKeyWithRepartitionOperation"""
    builder = StreamsBuilder()
    (
        builder.stream("input", Consumed.with_(Serdes.Integer(), Serdes.String()))
        .select_key(lambda key, value: int(value))
        .repartition()
        .to("output")
    )
    topology = _describe(builder.build({"topology.optimization": optimization}))
    assert _count(r"Sink: .*-repartition.*", topology) == 1


@pytest.mark.parametrize("optimization", OPTIMIZATIONS)
def test_should_create_repartition_topic_if_key_changing_operation_was_not_performed(optimization):
    """KStreamRepartitionIntegrationTest.java#shouldCreateRepartitionTopicIfKeyChangingOperationWasNotPerformed"""
    builder = StreamsBuilder()
    (
        builder.stream("input", Consumed.with_(Serdes.Integer(), Serdes.String()))
        .repartition(Repartitioned.as_("dummy"))
        .to("output")
    )
    topology = _describe(builder.build({"topology.optimization": optimization}))
    assert _count(r"Sink: .*dummy-repartition.*", topology) == 1


@pytest.mark.parametrize("optimization", OPTIMIZATIONS)
def test_should_perform_key_select_operation_when_repartition_operation_is_used_with_key_selector(optimization):
    """KStreamRepartitionIntegrationTest.java#shouldPerformKeySelectOperationWhenRepartitionOperationIsUsedWithKeySelector

    ``Repartitioned.as("new-key").withKeySerde(Serdes.String())`` after ``selectKey(.., Named.as("new-key"))``:
    the processor and the repartition share the base name without clashing.
    """
    builder = StreamsBuilder()
    (
        builder.stream("input", Consumed.with_(Serdes.Integer(), Serdes.String()))
        .select_key(lambda key, value: str(key), named=Named.as_("new-key"))
        .repartition(Repartitioned(name="new-key", key_serde=Serdes.String()))
        .group_by_key()
        .count()
        .to_stream()
        .to("output")
    )
    topology = _describe(builder.build({"topology.optimization": optimization}))
    assert _count(r"Sink: .*new-key-repartition.*", topology) == 1
    assert _count("<-- new-key\n", topology) == 1


@pytest.mark.parametrize("optimization", OPTIMIZATIONS)
def test_should_create_only_one_repartition_topic_when_repartition_is_followed_by_group_by_key(optimization):
    """KStreamRepartitionIntegrationTest.java#shouldCreateOnlyOneRepartitionTopicWhenRepartitionIsFollowedByGroupByKey"""
    builder = StreamsBuilder()
    (
        builder.stream("input", Consumed.with_(Serdes.Integer(), Serdes.String()))
        .select_key(lambda key, value: str(key))
        .repartition(
            Repartitioned(
                name="new-partitions",
                key_serde=Serdes.String(),
                value_serde=Serdes.String(),
                number_of_partitions=1,
            )
        )
        .group_by_key()
        .count()
        .to_stream()
        .to("output")
    )
    topology = _describe(builder.build({"topology.optimization": optimization}))
    assert _count(r"Sink: .*-repartition", topology) == 1


@pytest.mark.parametrize("optimization", OPTIMIZATIONS)
def test_should_generate_repartition_topic_when_name_is_not_specified(optimization):
    """KStreamRepartitionIntegrationTest.java#shouldGenerateRepartitionTopicWhenNameIsNotSpecified

    Java: ``repartition(Repartitioned.with(Serdes.String(), Serdes.String()))``.
    """
    builder = StreamsBuilder()
    (
        builder.stream("input", Consumed.with_(Serdes.Integer(), Serdes.String()))
        .select_key(lambda key, value: str(key))
        .repartition(Repartitioned(key_serde=Serdes.String(), value_serde=Serdes.String()))
        .to("output")
    )
    topology = _describe(builder.build({"topology.optimization": optimization}))
    assert _count(r"Sink: .*-repartition", topology) == 1


# ---------------------------------------------------------------------------------------------------------
# docs/streams/developer-guide/dsl-topology-naming.html (reconstructed whitespace; the docs use tabs and
# omit each sink's "<--" line).  The third one is the section 4.2 docs example of kafka-streams-semantics.md.
# ---------------------------------------------------------------------------------------------------------


def test_docs_naming_unnamed_filter_map_values():
    """dsl-topology-naming.html, "Readability Issues", first topology (reconstructed)"""
    builder = StreamsBuilder()
    stream = builder.stream("input")
    stream.filter(lambda k, v: v != "invalid_txn").map_values(lambda v: v[0:5]).to("output")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-FILTER-0000000001\n"
        "    Processor: KSTREAM-FILTER-0000000001 (stores: [])\n"
        "      --> KSTREAM-MAPVALUES-0000000002\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-MAPVALUES-0000000002 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000003\n"
        "      <-- KSTREAM-FILTER-0000000001\n"
        "    Sink: KSTREAM-SINK-0000000003 (topic: output)\n"
        "      <-- KSTREAM-MAPVALUES-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_docs_naming_named_filter_map_values():
    """dsl-topology-naming.html, "Readability Issues", all processors named (reconstructed)"""
    builder = StreamsBuilder()
    stream = builder.stream("input", Consumed.as_("Customer_transactions_input_topic"))
    (
        stream.filter(lambda k, v: v != "invalid_txn", named=Named.as_("filter_out_invalid_txns"))
        .map_values(lambda v: v[0:5], named=Named.as_("Map_values_to_first_6_characters"))
        .to("output", Produced.as_("Mapped_transactions_output_topic"))
    )
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: Customer_transactions_input_topic (topics: [input])\n"
        "      --> filter_out_invalid_txns\n"
        "    Processor: filter_out_invalid_txns (stores: [])\n"
        "      --> Map_values_to_first_6_characters\n"
        "      <-- Customer_transactions_input_topic\n"
        "    Processor: Map_values_to_first_6_characters (stores: [])\n"
        "      --> Mapped_transactions_output_topic\n"
        "      <-- filter_out_invalid_txns\n"
        "    Sink: Mapped_transactions_output_topic (topic: output)\n"
        "      <-- Map_values_to_first_6_characters\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_docs_naming_group_by_key_count():
    """dsl-topology-naming.html, "Changing Names", stateful topology (reconstructed); semantics.md section 4.2.

    (The docs prose wrongly says the store is ...0000000002; the description shows ...0000000001.)
    """
    builder = StreamsBuilder()
    stream = builder.stream("input")
    stream.group_by_key().count().to_stream().to("output")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> KTABLE-TOSTREAM-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KTABLE-TOSTREAM-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000004\n"
        "      <-- KSTREAM-AGGREGATE-0000000002\n"
        "    Sink: KSTREAM-SINK-0000000004 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000003\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_docs_naming_filter_then_group_by_key_count():
    """dsl-topology-naming.html, "Changing Names", filter added before count (reconstructed)"""
    builder = StreamsBuilder()
    stream = builder.stream("input")
    stream.filter(lambda k, v: v is not None and len(v) >= 6).group_by_key().count().to_stream().to("output")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-FILTER-0000000001\n"
        "    Processor: KSTREAM-FILTER-0000000001 (stores: [])\n"
        "      --> KSTREAM-AGGREGATE-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000002])\n"
        "      --> KTABLE-TOSTREAM-0000000004\n"
        "      <-- KSTREAM-FILTER-0000000001\n"
        "    Processor: KTABLE-TOSTREAM-0000000004 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000005\n"
        "      <-- KSTREAM-AGGREGATE-0000000003\n"
        "    Sink: KSTREAM-SINK-0000000005 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000004\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_docs_naming_filter_then_count_with_named_store():
    """dsl-topology-naming.html, "Changing Names", count(Materialized.as("Purchase_count_store")) (reconstructed)

    A named Materialized burns no index, so the aggregate keeps index 2.
    """
    builder = StreamsBuilder()
    stream = builder.stream("input")
    (
        stream.filter(lambda k, v: v is not None and len(v) >= 6)
        .group_by_key()
        .count(Materialized.as_("Purchase_count_store"))
        .to_stream()
        .to("output")
    )
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-FILTER-0000000001\n"
        "    Processor: KSTREAM-FILTER-0000000001 (stores: [])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [Purchase_count_store])\n"
        "      --> KTABLE-TOSTREAM-0000000003\n"
        "      <-- KSTREAM-FILTER-0000000001\n"
        "    Processor: KTABLE-TOSTREAM-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000004\n"
        "      <-- KSTREAM-AGGREGATE-0000000002\n"
        "    Sink: KSTREAM-SINK-0000000004 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000003\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


# ---------------------------------------------------------------------------------------------------------
# /work/shared/reference/topology-upgrade-guide.txt (reconstructed whitespace)
# ---------------------------------------------------------------------------------------------------------


def test_upgrade_guide_clicks_before():
    """topology-upgrade-guide.txt, "Adding or removing DSL operators", original application"""
    builder = StreamsBuilder()
    builder.stream("clicks").group_by_key().count().to_stream().to("total-clicks")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [clicks])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> KTABLE-TOSTREAM-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KTABLE-TOSTREAM-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000004\n"
        "      <-- KSTREAM-AGGREGATE-0000000002\n"
        "    Sink: KSTREAM-SINK-0000000004 (topic: total-clicks)\n"
        "      <-- KTABLE-TOSTREAM-0000000003\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_upgrade_guide_clicks_after_adding_filter():
    """topology-upgrade-guide.txt, "Adding or removing DSL operators", filter inserted before count"""
    builder = StreamsBuilder()
    builder.stream("clicks").filter(lambda k, v: True).group_by_key().count().to_stream().to("total-clicks")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [clicks])\n"
        "      --> KSTREAM-FILTER-0000000001\n"
        "    Processor: KSTREAM-FILTER-0000000001 (stores: [])\n"
        "      --> KSTREAM-AGGREGATE-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000002])\n"
        "      --> KTABLE-TOSTREAM-0000000004\n"
        "      <-- KSTREAM-FILTER-0000000001\n"
        "    Processor: KTABLE-TOSTREAM-0000000004 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000005\n"
        "      <-- KSTREAM-AGGREGATE-0000000003\n"
        "    Sink: KSTREAM-SINK-0000000005 (topic: total-clicks)\n"
        "      <-- KTABLE-TOSTREAM-0000000004\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_upgrade_guide_daily_orders_before__non_windowed_variant():
    """topology-upgrade-guide.txt, "Adding/removing/merging subtopologies", "Before" -- variant without windowedBy.

    The guide's code uses windowedBy(TimeWindows...).reduce(..); a non-windowed reduce with the same Named /
    Materialized names yields the same description (the windowed original is in the deferred file).
    """
    builder = StreamsBuilder()
    (
        builder.stream("orders-by-customer", Consumed.as_("DailyOrders"))
        .group_by_key(Grouped.as_("GroupOrders"))
        .reduce(lambda v1, v2: v1 + v2, named=Named.as_("AggregateDailyOrders"), materialized=Materialized.as_("orders"))
        .to_stream(named=Named.as_("OrdersToStream"))
        .to("order-forms-to-ship", Produced.as_("ShipOrders"))
    )
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: DailyOrders (topics: [orders-by-customer])\n"
        "      --> AggregateDailyOrders\n"
        "    Processor: AggregateDailyOrders (stores: [orders])\n"
        "      --> OrdersToStream\n"
        "      <-- DailyOrders\n"
        "    Processor: OrdersToStream (stores: [])\n"
        "      --> ShipOrders\n"
        "      <-- AggregateDailyOrders\n"
        "    Sink: ShipOrders (topic: order-forms-to-ship)\n"
        "      <-- OrdersToStream\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_upgrade_guide_daily_orders_after__non_windowed_variant():
    """topology-upgrade-guide.txt, "Adding/removing/merging subtopologies", "After" -- variant without windowedBy.

    groupBy(.., Grouped.as("GroupOrders")) names the key-select processor "GroupOrders" AND the repartition
    topic "GroupOrders-repartition"; the "orders" store moves to sub-topology 1.
    """
    builder = StreamsBuilder()
    (
        builder.stream("orders-by-customer", Consumed.as_("DailyOrders"))
        .group_by(lambda k, v: k.replace("!", ""), Grouped.as_("GroupOrders"))
        .reduce(lambda v1, v2: v1 + v2, named=Named.as_("AggregateDailyOrders"), materialized=Materialized.as_("orders"))
        .to_stream(named=Named.as_("OrdersToStream"))
        .to("order-forms-to-ship", Produced.as_("ShipOrders"))
    )
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: DailyOrders (topics: [orders-by-customer])\n"
        "      --> GroupOrders\n"
        "    Processor: GroupOrders (stores: [])\n"
        "      --> GroupOrders-repartition-filter\n"
        "      <-- DailyOrders\n"
        "    Processor: GroupOrders-repartition-filter (stores: [])\n"
        "      --> GroupOrders-repartition-sink\n"
        "      <-- GroupOrders\n"
        "    Sink: GroupOrders-repartition-sink (topic: GroupOrders-repartition)\n"
        "      <-- GroupOrders-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: GroupOrders-repartition-source (topics: [GroupOrders-repartition])\n"
        "      --> AggregateDailyOrders\n"
        "    Processor: AggregateDailyOrders (stores: [orders])\n"
        "      --> OrdersToStream\n"
        "      <-- GroupOrders-repartition-source\n"
        "    Processor: OrdersToStream (stores: [])\n"
        "      --> ShipOrders\n"
        "      <-- AggregateDailyOrders\n"
        "    Sink: ShipOrders (topic: order-forms-to-ship)\n"
        "      <-- OrdersToStream\n"
        "\n"
    )
    assert _describe(builder.build()) == expected

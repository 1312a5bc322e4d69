"""Kafka Streams ``TopologyDescription.toString()`` test vectors for JOINS, ported to streams-on-spark.

Every test builds a topology with the Python API and compares ``str(topology.describe())`` with the WHOLE
expected string, copied verbatim from Apache Kafka trunk (Oct 2024, 4.0.0-SNAPSHOT, commit
1eb7644349cb07139d6a3c1ad1986979647cac99), all under ``streams/src/test/java/org/apache/kafka/streams/``:

* ``TopologyTest.java`` -- stream-stream join / leftJoin / outerJoin with default and custom store names.
* ``kstream/internals/KStreamImplTest.java`` -- table-table and stream-table joins of ``KStream.toTable()``.
* ``kstream/internals/graph/StreamsGraphTest.java`` -- a stream-stream join built incrementally.
* ``kstream/internals/KStreamKStreamJoinTest.java`` / ``KStreamKTableJoinTest.java`` -- repartition-topic
  naming for joins of a re-keyed stream.

The last section holds vectors derived from Kafka's source where its tests have none (each docstring names
the rule).

The vectors (Java code + expected strings) were collected in /work/scratch/deferred-describe-vectors.md
(sections 1-9, 40-44, 57-60).  Not ported from those sections:

* section 3 ``TopologyTest#streamStreamJoinTopologyWithCustomStoresSuppliers``,
  section 6 ``TopologyTest#streamStreamLeftJoinTopologyWithCustomStoresSuppliers``,
  section 9 ``TopologyTest#streamStreamOuterJoinTopologyWithCustomStoresSuppliers`` -- they pass
  ``Stores.inMemoryWindowStore(...)`` suppliers via ``StreamJoined.withThisStoreSupplier`` /
  ``withOtherStoreSupplier``, which streams-on-spark does not support.
"""
from streams_on_spark import (
    Consumed,
    JoinWindows,
    KeyValue,
    Materialized,
    Serdes,
    StreamsBuilder,
)
from streams_on_spark.dsl.params import Joined, StreamJoined

NO_OPTIMIZATION = {"topology.optimization": "none"}


def _describe(topology):
    return str(topology.describe())


def _string_consumed():
    return Consumed.with_(Serdes.String(), Serdes.String())


def _tostring_joiner(value1, value2):
    """Kafka's ``MockValueJoiner.TOSTRING_JOINER`` (``value1 + "+" + value2``)."""
    return f"{value1}+{value2}"


def _concat_joiner(value1, value2):
    return f"{value1}{value2}"


def _two_input_streams():
    builder = StreamsBuilder()
    stream1 = builder.stream("input-topic1")
    stream2 = builder.stream("input-topic2")
    return builder, stream1, stream2


def _int_string_string_joined():
    return StreamJoined.with_(Serdes.Integer(), Serdes.String(), Serdes.String())


# ---------------------------------------------------------------------------------------------------------
# TopologyTest.java -- stream-stream joins
# ---------------------------------------------------------------------------------------------------------


def test_stream_stream_join_topology_with_default_stores_names():
    """TopologyTest.java#streamStreamJoinTopologyWithDefaultStoresNames (deprecated ``JoinWindows.of``)"""
    builder, stream1, stream2 = _two_input_streams()
    stream1.join(stream2, _tostring_joiner, JoinWindows.of(100), _int_string_string_joined())
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic1])\n"
        "      --> KSTREAM-WINDOWED-0000000002\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic2])\n"
        "      --> KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-WINDOWED-0000000002 (stores: [KSTREAM-JOINTHIS-0000000004-store])\n"
        "      --> KSTREAM-JOINTHIS-0000000004\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-WINDOWED-0000000003 (stores: [KSTREAM-JOINOTHER-0000000005-store])\n"
        "      --> KSTREAM-JOINOTHER-0000000005\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KSTREAM-JOINOTHER-0000000005 (stores: [KSTREAM-JOINTHIS-0000000004-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-JOINTHIS-0000000004 (stores: [KSTREAM-JOINOTHER-0000000005-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000002\n"
        "    Processor: KSTREAM-MERGE-0000000006 (stores: [])\n"
        "      --> none\n"
        "      <-- KSTREAM-JOINTHIS-0000000004, KSTREAM-JOINOTHER-0000000005\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_stream_stream_join_topology_with_custom_stores_names():
    """TopologyTest.java#streamStreamJoinTopologyWithCustomStoresNames (deprecated ``JoinWindows.of``)"""
    builder, stream1, stream2 = _two_input_streams()
    stream1.join(stream2, _tostring_joiner, JoinWindows.of(100),
                 _int_string_string_joined().with_store_name("custom-name"))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic1])\n"
        "      --> KSTREAM-WINDOWED-0000000002\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic2])\n"
        "      --> KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-WINDOWED-0000000002 (stores: [custom-name-this-join-store])\n"
        "      --> KSTREAM-JOINTHIS-0000000004\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-WINDOWED-0000000003 (stores: [custom-name-other-join-store])\n"
        "      --> KSTREAM-JOINOTHER-0000000005\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KSTREAM-JOINOTHER-0000000005 (stores: [custom-name-this-join-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-JOINTHIS-0000000004 (stores: [custom-name-other-join-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000002\n"
        "    Processor: KSTREAM-MERGE-0000000006 (stores: [])\n"
        "      --> none\n"
        "      <-- KSTREAM-JOINTHIS-0000000004, KSTREAM-JOINOTHER-0000000005\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


# TopologyTest.java#streamStreamLeftJoinTopologyWithDefaultStoresNames
LEFT_JOIN_DEFAULT_STORES_NAMES = (
    "Topologies:\n"
    "   Sub-topology: 0\n"
    "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic1])\n"
    "      --> KSTREAM-WINDOWED-0000000002\n"
    "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic2])\n"
    "      --> KSTREAM-WINDOWED-0000000003\n"
    "    Processor: KSTREAM-WINDOWED-0000000002 (stores: [KSTREAM-JOINTHIS-0000000004-store])\n"
    "      --> KSTREAM-JOINTHIS-0000000004\n"
    "      <-- KSTREAM-SOURCE-0000000000\n"
    "    Processor: KSTREAM-WINDOWED-0000000003 (stores: [KSTREAM-OUTEROTHER-0000000005-store])\n"
    "      --> KSTREAM-OUTEROTHER-0000000005\n"
    "      <-- KSTREAM-SOURCE-0000000001\n"
    "    Processor: KSTREAM-JOINTHIS-0000000004 (stores: [KSTREAM-OUTEROTHER-0000000005-store, KSTREAM-OUTERSHARED-0000000004-store])\n"
    "      --> KSTREAM-MERGE-0000000006\n"
    "      <-- KSTREAM-WINDOWED-0000000002\n"
    "    Processor: KSTREAM-OUTEROTHER-0000000005 (stores: [KSTREAM-JOINTHIS-0000000004-store, KSTREAM-OUTERSHARED-0000000004-store])\n"
    "      --> KSTREAM-MERGE-0000000006\n"
    "      <-- KSTREAM-WINDOWED-0000000003\n"
    "    Processor: KSTREAM-MERGE-0000000006 (stores: [])\n"
    "      --> none\n"
    "      <-- KSTREAM-JOINTHIS-0000000004, KSTREAM-OUTEROTHER-0000000005\n"
    "\n"
)


def test_stream_stream_left_join_topology_with_default_stores_names():
    """TopologyTest.java#streamStreamLeftJoinTopologyWithDefaultStoresNames"""
    builder, stream1, stream2 = _two_input_streams()
    stream1.left_join(stream2, _tostring_joiner, JoinWindows.of_time_difference_with_no_grace(100),
                      _int_string_string_joined())
    assert _describe(builder.build()) == LEFT_JOIN_DEFAULT_STORES_NAMES


def test_stream_stream_left_join_topology_with_custom_stores_names():
    """TopologyTest.java#streamStreamLeftJoinTopologyWithCustomStoresNames"""
    builder, stream1, stream2 = _two_input_streams()
    stream1.left_join(stream2, _tostring_joiner, JoinWindows.of_time_difference_with_no_grace(100),
                      _int_string_string_joined().with_store_name("custom-name"))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic1])\n"
        "      --> KSTREAM-WINDOWED-0000000002\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic2])\n"
        "      --> KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-WINDOWED-0000000002 (stores: [custom-name-this-join-store])\n"
        "      --> KSTREAM-JOINTHIS-0000000004\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-WINDOWED-0000000003 (stores: [custom-name-outer-other-join-store])\n"
        "      --> KSTREAM-OUTEROTHER-0000000005\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KSTREAM-JOINTHIS-0000000004 (stores: [custom-name-outer-other-join-store, custom-name-left-shared-join-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000002\n"
        "    Processor: KSTREAM-OUTEROTHER-0000000005 (stores: [custom-name-this-join-store, custom-name-left-shared-join-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-MERGE-0000000006 (stores: [])\n"
        "      --> none\n"
        "      <-- KSTREAM-JOINTHIS-0000000004, KSTREAM-OUTEROTHER-0000000005\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_stream_stream_outer_join_topology_with_default_stores_names():
    """TopologyTest.java#streamStreamOuterJoinTopologyWithDefaultStoresNames"""
    builder, stream1, stream2 = _two_input_streams()
    stream1.outer_join(stream2, _tostring_joiner, JoinWindows.of_time_difference_with_no_grace(100),
                       _int_string_string_joined())
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic1])\n"
        "      --> KSTREAM-WINDOWED-0000000002\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic2])\n"
        "      --> KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-WINDOWED-0000000002 (stores: [KSTREAM-OUTERTHIS-0000000004-store])\n"
        "      --> KSTREAM-OUTERTHIS-0000000004\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-WINDOWED-0000000003 (stores: [KSTREAM-OUTEROTHER-0000000005-store])\n"
        "      --> KSTREAM-OUTEROTHER-0000000005\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KSTREAM-OUTEROTHER-0000000005 (stores: [KSTREAM-OUTERTHIS-0000000004-store, KSTREAM-OUTERSHARED-0000000004-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-OUTERTHIS-0000000004 (stores: [KSTREAM-OUTEROTHER-0000000005-store, KSTREAM-OUTERSHARED-0000000004-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000002\n"
        "    Processor: KSTREAM-MERGE-0000000006 (stores: [])\n"
        "      --> none\n"
        "      <-- KSTREAM-OUTERTHIS-0000000004, KSTREAM-OUTEROTHER-0000000005\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_stream_stream_outer_join_topology_with_custom_stores_names():
    """TopologyTest.java#streamStreamOuterJoinTopologyWithCustomStoresNames"""
    builder, stream1, stream2 = _two_input_streams()
    stream1.outer_join(stream2, _tostring_joiner, JoinWindows.of_time_difference_with_no_grace(100),
                       _int_string_string_joined().with_store_name("custom-name"))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic1])\n"
        "      --> KSTREAM-WINDOWED-0000000002\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic2])\n"
        "      --> KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-WINDOWED-0000000002 (stores: [custom-name-outer-this-join-store])\n"
        "      --> KSTREAM-OUTERTHIS-0000000004\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-WINDOWED-0000000003 (stores: [custom-name-outer-other-join-store])\n"
        "      --> KSTREAM-OUTEROTHER-0000000005\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KSTREAM-OUTEROTHER-0000000005 (stores: [custom-name-outer-this-join-store, custom-name-outer-shared-join-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-OUTERTHIS-0000000004 (stores: [custom-name-outer-other-join-store, custom-name-outer-shared-join-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000002\n"
        "    Processor: KSTREAM-MERGE-0000000006 (stores: [])\n"
        "      --> none\n"
        "      <-- KSTREAM-OUTERTHIS-0000000004, KSTREAM-OUTEROTHER-0000000005\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


# ---------------------------------------------------------------------------------------------------------
# KStreamImplTest.java -- joins of KStream.toTable()
# ---------------------------------------------------------------------------------------------------------


def test_should_support_table_table_join_with_kstream_to_ktable():
    """KStreamImplTest.java#shouldSupportTableTableJoinWithKStreamToKTable (description part only)"""
    builder = StreamsBuilder()
    table1 = builder.stream("left", _string_consumed()).to_table()
    table2 = builder.stream("right", _string_consumed()).to_table()
    table1.join(table2, _tostring_joiner).to_stream().to("output")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [left])\n"
        "      --> KSTREAM-TOTABLE-0000000001\n"
        "    Source: KSTREAM-SOURCE-0000000003 (topics: [right])\n"
        "      --> KSTREAM-TOTABLE-0000000004\n"
        "    Processor: KSTREAM-TOTABLE-0000000001 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000002])\n"
        "      --> KTABLE-JOINTHIS-0000000007\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-TOTABLE-0000000004 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000005])\n"
        "      --> KTABLE-JOINOTHER-0000000008\n"
        "      <-- KSTREAM-SOURCE-0000000003\n"
        "    Processor: KTABLE-JOINOTHER-0000000008 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000002])\n"
        "      --> KTABLE-MERGE-0000000006\n"
        "      <-- KSTREAM-TOTABLE-0000000004\n"
        "    Processor: KTABLE-JOINTHIS-0000000007 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000005])\n"
        "      --> KTABLE-MERGE-0000000006\n"
        "      <-- KSTREAM-TOTABLE-0000000001\n"
        "    Processor: KTABLE-MERGE-0000000006 (stores: [])\n"
        "      --> KTABLE-TOSTREAM-0000000009\n"
        "      <-- KTABLE-JOINTHIS-0000000007, KTABLE-JOINOTHER-0000000008\n"
        "    Processor: KTABLE-TOSTREAM-0000000009 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000010\n"
        "      <-- KTABLE-MERGE-0000000006\n"
        "    Sink: KSTREAM-SINK-0000000010 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000009\n"
        "\n"
    )
    assert _describe(builder.build({})) == expected


def test_should_support_stream_table_join_with_kstream_to_ktable():
    """KStreamImplTest.java#shouldSupportStreamTableJoinWithKStreamToKTable (description part only)"""
    builder = StreamsBuilder()
    stream = builder.stream("streamTopic", _string_consumed())
    table = builder.stream("tableTopic", _string_consumed()).to_table()
    stream.join(table, _tostring_joiner).to("output")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [streamTopic])\n"
        "      --> KSTREAM-JOIN-0000000004\n"
        "    Processor: KSTREAM-JOIN-0000000004 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000003])\n"
        "      --> KSTREAM-SINK-0000000005\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [tableTopic])\n"
        "      --> KSTREAM-TOTABLE-0000000002\n"
        "    Sink: KSTREAM-SINK-0000000005 (topic: output)\n"
        "      <-- KSTREAM-JOIN-0000000004\n"
        "    Processor: KSTREAM-TOTABLE-0000000002 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000003])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "\n"
    )
    assert _describe(builder.build({})) == expected


# ---------------------------------------------------------------------------------------------------------
# StreamsGraphTest.java#shouldBeAbleToBuildTopologyIncrementally -- one Java test, three expected strings
# ---------------------------------------------------------------------------------------------------------


def _build_join_topology_incrementally(steps):
    """Replays the Java test up to its ``steps``-th ``builder.build()`` (the same builder is built again after
    each DSL addition, as in Kafka); returns the descriptions printed at each build."""
    builder = StreamsBuilder()
    stream = builder.stream("topic")
    stream_ii = builder.stream("other-topic")
    joined_stream = stream.join(stream_ii, _concat_joiner, JoinWindows.of(5000))
    descriptions = [_describe(builder.build())]  # build step one
    if steps >= 2:
        filtered_join_stream = joined_stream.filter(lambda k, v: v == "foo")
        descriptions.append(_describe(builder.build()))  # build step two
    if steps >= 3:
        filtered_join_stream.map_values(lambda v: v + "some value").to("output-topic")
        descriptions.append(_describe(builder.build()))  # build step three
    return descriptions


def test_should_be_able_to_build_topology_incrementally_joined():
    """StreamsGraphTest.java#shouldBeAbleToBuildTopologyIncrementally, step one (``expectedJoinedTopology``)"""
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n"
        "      --> KSTREAM-WINDOWED-0000000002\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [other-topic])\n"
        "      --> KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-WINDOWED-0000000002 (stores: [KSTREAM-JOINTHIS-0000000004-store])\n"
        "      --> KSTREAM-JOINTHIS-0000000004\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-WINDOWED-0000000003 (stores: [KSTREAM-JOINOTHER-0000000005-store])\n"
        "      --> KSTREAM-JOINOTHER-0000000005\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KSTREAM-JOINOTHER-0000000005 (stores: [KSTREAM-JOINTHIS-0000000004-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-JOINTHIS-0000000004 (stores: [KSTREAM-JOINOTHER-0000000005-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000002\n"
        "    Processor: KSTREAM-MERGE-0000000006 (stores: [])\n"
        "      --> none\n"
        "      <-- KSTREAM-JOINTHIS-0000000004, KSTREAM-JOINOTHER-0000000005\n"
        "\n"
    )
    assert _build_join_topology_incrementally(1)[0] == expected


def test_should_be_able_to_build_topology_incrementally_joined_filtered():
    """StreamsGraphTest.java#shouldBeAbleToBuildTopologyIncrementally, step two
    (``expectedJoinedFilteredTopology``)"""
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n"
        "      --> KSTREAM-WINDOWED-0000000002\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [other-topic])\n"
        "      --> KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-WINDOWED-0000000002 (stores: [KSTREAM-JOINTHIS-0000000004-store])\n"
        "      --> KSTREAM-JOINTHIS-0000000004\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-WINDOWED-0000000003 (stores: [KSTREAM-JOINOTHER-0000000005-store])\n"
        "      --> KSTREAM-JOINOTHER-0000000005\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KSTREAM-JOINOTHER-0000000005 (stores: [KSTREAM-JOINTHIS-0000000004-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-JOINTHIS-0000000004 (stores: [KSTREAM-JOINOTHER-0000000005-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000002\n"
        "    Processor: KSTREAM-MERGE-0000000006 (stores: [])\n"
        "      --> KSTREAM-FILTER-0000000007\n"
        "      <-- KSTREAM-JOINTHIS-0000000004, KSTREAM-JOINOTHER-0000000005\n"
        "    Processor: KSTREAM-FILTER-0000000007 (stores: [])\n"
        "      --> none\n"
        "      <-- KSTREAM-MERGE-0000000006\n"
        "\n"
    )
    assert _build_join_topology_incrementally(2)[1] == expected


def test_should_be_able_to_build_topology_incrementally_full():
    """StreamsGraphTest.java#shouldBeAbleToBuildTopologyIncrementally, step three (``expectedFullTopology``)"""
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n"
        "      --> KSTREAM-WINDOWED-0000000002\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [other-topic])\n"
        "      --> KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-WINDOWED-0000000002 (stores: [KSTREAM-JOINTHIS-0000000004-store])\n"
        "      --> KSTREAM-JOINTHIS-0000000004\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-WINDOWED-0000000003 (stores: [KSTREAM-JOINOTHER-0000000005-store])\n"
        "      --> KSTREAM-JOINOTHER-0000000005\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KSTREAM-JOINOTHER-0000000005 (stores: [KSTREAM-JOINTHIS-0000000004-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000003\n"
        "    Processor: KSTREAM-JOINTHIS-0000000004 (stores: [KSTREAM-JOINOTHER-0000000005-store])\n"
        "      --> KSTREAM-MERGE-0000000006\n"
        "      <-- KSTREAM-WINDOWED-0000000002\n"
        "    Processor: KSTREAM-MERGE-0000000006 (stores: [])\n"
        "      --> KSTREAM-FILTER-0000000007\n"
        "      <-- KSTREAM-JOINTHIS-0000000004, KSTREAM-JOINOTHER-0000000005\n"
        "    Processor: KSTREAM-FILTER-0000000007 (stores: [])\n"
        "      --> KSTREAM-MAPVALUES-0000000008\n"
        "      <-- KSTREAM-MERGE-0000000006\n"
        "    Processor: KSTREAM-MAPVALUES-0000000008 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000009\n"
        "      <-- KSTREAM-FILTER-0000000007\n"
        "    Sink: KSTREAM-SINK-0000000009 (topic: output-topic)\n"
        "      <-- KSTREAM-MAPVALUES-0000000008\n"
        "\n"
    )
    assert _build_join_topology_incrementally(3)[2] == expected


# ---------------------------------------------------------------------------------------------------------
# KStreamKStreamJoinTest.java / KStreamKTableJoinTest.java -- repartition naming of joins (NO_OPTIMIZATION)
# ---------------------------------------------------------------------------------------------------------


def _swap_key_value(key, value):
    return KeyValue(value, key)


def test_stream_stream_join_should_create_repartition_topics_with_user_provided_name():
    """KStreamKStreamJoinTest.java#shouldCreateRepartitionTopicsWithUserProvidedName
    (``expectedTopologyWithUserNamedRepartitionTopics``)"""
    builder = StreamsBuilder()
    stream1 = builder.stream("topic", _string_consumed())
    stream2 = builder.stream("topic2", _string_consumed())
    stream3 = builder.stream("topic3", _string_consumed())
    new_stream = stream1.map(_swap_key_value)
    stream_joined = StreamJoined.with_(Serdes.String(), Serdes.String(), Serdes.String())
    new_stream.join(stream2, _concat_joiner, JoinWindows.of_time_difference_with_no_grace(100),
                    stream_joined.with_name("first-join")).to("out-one")
    new_stream.join(stream3, _concat_joiner, JoinWindows.of_time_difference_with_no_grace(100),
                    stream_joined.with_name("second-join")).to("out-two")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n"
        "      --> KSTREAM-MAP-0000000003\n"
        "    Processor: KSTREAM-MAP-0000000003 (stores: [])\n"
        "      --> second-join-left-repartition-filter, first-join-left-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: first-join-left-repartition-filter (stores: [])\n"
        "      --> first-join-left-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000003\n"
        "    Processor: second-join-left-repartition-filter (stores: [])\n"
        "      --> second-join-left-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000003\n"
        "    Sink: first-join-left-repartition-sink (topic: first-join-left-repartition)\n"
        "      <-- first-join-left-repartition-filter\n"
        "    Sink: second-join-left-repartition-sink (topic: second-join-left-repartition)\n"
        "      <-- second-join-left-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [topic2])\n"
        "      --> first-join-other-windowed\n"
        "    Source: first-join-left-repartition-source (topics: [first-join-left-repartition])\n"
        "      --> first-join-this-windowed\n"
        "    Processor: first-join-other-windowed (stores: [KSTREAM-JOINOTHER-0000000010-store])\n"
        "      --> first-join-other-join\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: first-join-this-windowed (stores: [KSTREAM-JOINTHIS-0000000009-store])\n"
        "      --> first-join-this-join\n"
        "      <-- first-join-left-repartition-source\n"
        "    Processor: first-join-other-join (stores: [KSTREAM-JOINTHIS-0000000009-store])\n"
        "      --> first-join-merge\n"
        "      <-- first-join-other-windowed\n"
        "    Processor: first-join-this-join (stores: [KSTREAM-JOINOTHER-0000000010-store])\n"
        "      --> first-join-merge\n"
        "      <-- first-join-this-windowed\n"
        "    Processor: first-join-merge (stores: [])\n"
        "      --> KSTREAM-SINK-0000000012\n"
        "      <-- first-join-this-join, first-join-other-join\n"
        "    Sink: KSTREAM-SINK-0000000012 (topic: out-one)\n"
        "      <-- first-join-merge\n"
        "\n"
        "  Sub-topology: 2\n"
        "    Source: KSTREAM-SOURCE-0000000002 (topics: [topic3])\n"
        "      --> second-join-other-windowed\n"
        "    Source: second-join-left-repartition-source (topics: [second-join-left-repartition])\n"
        "      --> second-join-this-windowed\n"
        "    Processor: second-join-other-windowed (stores: [KSTREAM-JOINOTHER-0000000019-store])\n"
        "      --> second-join-other-join\n"
        "      <-- KSTREAM-SOURCE-0000000002\n"
        "    Processor: second-join-this-windowed (stores: [KSTREAM-JOINTHIS-0000000018-store])\n"
        "      --> second-join-this-join\n"
        "      <-- second-join-left-repartition-source\n"
        "    Processor: second-join-other-join (stores: [KSTREAM-JOINTHIS-0000000018-store])\n"
        "      --> second-join-merge\n"
        "      <-- second-join-other-windowed\n"
        "    Processor: second-join-this-join (stores: [KSTREAM-JOINOTHER-0000000019-store])\n"
        "      --> second-join-merge\n"
        "      <-- second-join-this-windowed\n"
        "    Processor: second-join-merge (stores: [])\n"
        "      --> KSTREAM-SINK-0000000021\n"
        "      <-- second-join-this-join, second-join-other-join\n"
        "    Sink: KSTREAM-SINK-0000000021 (topic: out-two)\n"
        "      <-- second-join-merge\n"
        "\n"
    )
    assert _describe(builder.build(NO_OPTIMIZATION)) == expected


def test_stream_stream_join_should_reuse_repartition_topic_with_generated_name():
    """KStreamKStreamJoinTest.java#shouldReuseRepartitionTopicWithGeneratedName
    (``expectedTopologyWithGeneratedRepartitionTopic``)"""
    builder = StreamsBuilder()
    stream1 = builder.stream("topic", _string_consumed())
    stream2 = builder.stream("topic2", _string_consumed())
    stream3 = builder.stream("topic3", _string_consumed())
    new_stream = stream1.map(_swap_key_value)
    new_stream.join(stream2, _concat_joiner, JoinWindows.of_time_difference_with_no_grace(100)).to("out-one")
    new_stream.join(stream3, _concat_joiner, JoinWindows.of_time_difference_with_no_grace(100)).to("out-to")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n"
        "      --> KSTREAM-MAP-0000000003\n"
        "    Processor: KSTREAM-MAP-0000000003 (stores: [])\n"
        "      --> KSTREAM-FILTER-0000000005\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-FILTER-0000000005 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000004\n"
        "      <-- KSTREAM-MAP-0000000003\n"
        "    Sink: KSTREAM-SINK-0000000004 (topic: KSTREAM-MAP-0000000003-repartition)\n"
        "      <-- KSTREAM-FILTER-0000000005\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000006 (topics: [KSTREAM-MAP-0000000003-repartition])\n"
        "      --> KSTREAM-WINDOWED-0000000007, KSTREAM-WINDOWED-0000000016\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [topic2])\n"
        "      --> KSTREAM-WINDOWED-0000000008\n"
        "    Source: KSTREAM-SOURCE-0000000002 (topics: [topic3])\n"
        "      --> KSTREAM-WINDOWED-0000000017\n"
        "    Processor: KSTREAM-WINDOWED-0000000007 (stores: [KSTREAM-JOINTHIS-0000000009-store])\n"
        "      --> KSTREAM-JOINTHIS-0000000009\n"
        "      <-- KSTREAM-SOURCE-0000000006\n"
        "    Processor: KSTREAM-WINDOWED-0000000008 (stores: [KSTREAM-JOINOTHER-0000000010-store])\n"
        "      --> KSTREAM-JOINOTHER-0000000010\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KSTREAM-WINDOWED-0000000016 (stores: [KSTREAM-JOINTHIS-0000000018-store])\n"
        "      --> KSTREAM-JOINTHIS-0000000018\n"
        "      <-- KSTREAM-SOURCE-0000000006\n"
        "    Processor: KSTREAM-WINDOWED-0000000017 (stores: [KSTREAM-JOINOTHER-0000000019-store])\n"
        "      --> KSTREAM-JOINOTHER-0000000019\n"
        "      <-- KSTREAM-SOURCE-0000000002\n"
        "    Processor: KSTREAM-JOINOTHER-0000000010 (stores: [KSTREAM-JOINTHIS-0000000009-store])\n"
        "      --> KSTREAM-MERGE-0000000011\n"
        "      <-- KSTREAM-WINDOWED-0000000008\n"
        "    Processor: KSTREAM-JOINOTHER-0000000019 (stores: [KSTREAM-JOINTHIS-0000000018-store])\n"
        "      --> KSTREAM-MERGE-0000000020\n"
        "      <-- KSTREAM-WINDOWED-0000000017\n"
        "    Processor: KSTREAM-JOINTHIS-0000000009 (stores: [KSTREAM-JOINOTHER-0000000010-store])\n"
        "      --> KSTREAM-MERGE-0000000011\n"
        "      <-- KSTREAM-WINDOWED-0000000007\n"
        "    Processor: KSTREAM-JOINTHIS-0000000018 (stores: [KSTREAM-JOINOTHER-0000000019-store])\n"
        "      --> KSTREAM-MERGE-0000000020\n"
        "      <-- KSTREAM-WINDOWED-0000000016\n"
        "    Processor: KSTREAM-MERGE-0000000011 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000012\n"
        "      <-- KSTREAM-JOINTHIS-0000000009, KSTREAM-JOINOTHER-0000000010\n"
        "    Processor: KSTREAM-MERGE-0000000020 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000021\n"
        "      <-- KSTREAM-JOINTHIS-0000000018, KSTREAM-JOINOTHER-0000000019\n"
        "    Sink: KSTREAM-SINK-0000000012 (topic: out-one)\n"
        "      <-- KSTREAM-MERGE-0000000011\n"
        "    Sink: KSTREAM-SINK-0000000021 (topic: out-to)\n"
        "      <-- KSTREAM-MERGE-0000000020\n"
        "\n"
    )
    assert _describe(builder.build(NO_OPTIMIZATION)) == expected


def test_stream_table_join_should_reuse_repartition_topic_with_generated_name():
    """KStreamKTableJoinTest.java#shouldReuseRepartitionTopicWithGeneratedName
    (``expectedTopologyWithGeneratedRepartitionTopicNames``)"""
    builder = StreamsBuilder()
    stream_a = builder.stream("topic", _string_consumed())
    table_b = builder.table("topic2", _string_consumed())
    table_c = builder.table("topic3", _string_consumed())
    rekeyed_stream = stream_a.map(_swap_key_value)
    rekeyed_stream.join(table_b, _concat_joiner).to("out-one")
    rekeyed_stream.join(table_c, _concat_joiner).to("out-two")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n"
        "      --> KSTREAM-MAP-0000000007\n"
        "    Processor: KSTREAM-MAP-0000000007 (stores: [])\n"
        "      --> KSTREAM-FILTER-0000000009\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-FILTER-0000000009 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000008\n"
        "      <-- KSTREAM-MAP-0000000007\n"
        "    Sink: KSTREAM-SINK-0000000008 (topic: KSTREAM-MAP-0000000007-repartition)\n"
        "      <-- KSTREAM-FILTER-0000000009\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000010 (topics: [KSTREAM-MAP-0000000007-repartition])\n"
        "      --> KSTREAM-JOIN-0000000011, KSTREAM-JOIN-0000000016\n"
        "    Processor: KSTREAM-JOIN-0000000011 (stores: [topic2-STATE-STORE-0000000001])\n"
        "      --> KSTREAM-SINK-0000000012\n"
        "      <-- KSTREAM-SOURCE-0000000010\n"
        "    Processor: KSTREAM-JOIN-0000000016 (stores: [topic3-STATE-STORE-0000000004])\n"
        "      --> KSTREAM-SINK-0000000017\n"
        "      <-- KSTREAM-SOURCE-0000000010\n"
        "    Source: KSTREAM-SOURCE-0000000002 (topics: [topic2])\n"
        "      --> KTABLE-SOURCE-0000000003\n"
        "    Source: KSTREAM-SOURCE-0000000005 (topics: [topic3])\n"
        "      --> KTABLE-SOURCE-0000000006\n"
        "    Sink: KSTREAM-SINK-0000000012 (topic: out-one)\n"
        "      <-- KSTREAM-JOIN-0000000011\n"
        "    Sink: KSTREAM-SINK-0000000017 (topic: out-two)\n"
        "      <-- KSTREAM-JOIN-0000000016\n"
        "    Processor: KTABLE-SOURCE-0000000003 (stores: [topic2-STATE-STORE-0000000001])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000006 (stores: [topic3-STATE-STORE-0000000004])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000005\n"
        "\n"
    )
    assert _describe(builder.build(NO_OPTIMIZATION)) == expected


def test_stream_table_join_should_create_repartition_topics_with_user_provided_name():
    """KStreamKTableJoinTest.java#shouldCreateRepartitionTopicsWithUserProvidedName
    (``expectedTopologyWithUserProvidedRepartitionTopicNames``)"""
    builder = StreamsBuilder()
    stream_a = builder.stream("topic", _string_consumed())
    table_b = builder.table("topic2", _string_consumed())
    table_c = builder.table("topic3", _string_consumed())
    rekeyed_stream = stream_a.map(_swap_key_value)
    rekeyed_stream.join(table_b, _concat_joiner,
                        Joined.with_(Serdes.String(), Serdes.String(), Serdes.String(), "first-join")).to("out-one")
    rekeyed_stream.join(table_c, _concat_joiner,
                        Joined.with_(Serdes.String(), Serdes.String(), Serdes.String(), "second-join")).to("out-two")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n"
        "      --> KSTREAM-MAP-0000000007\n"
        "    Processor: KSTREAM-MAP-0000000007 (stores: [])\n"
        "      --> first-join-repartition-filter, second-join-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: first-join-repartition-filter (stores: [])\n"
        "      --> first-join-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000007\n"
        "    Processor: second-join-repartition-filter (stores: [])\n"
        "      --> second-join-repartition-sink\n"
        "      <-- KSTREAM-MAP-0000000007\n"
        "    Sink: first-join-repartition-sink (topic: first-join-repartition)\n"
        "      <-- first-join-repartition-filter\n"
        "    Sink: second-join-repartition-sink (topic: second-join-repartition)\n"
        "      <-- second-join-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: first-join-repartition-source (topics: [first-join-repartition])\n"
        "      --> first-join\n"
        "    Source: KSTREAM-SOURCE-0000000002 (topics: [topic2])\n"
        "      --> KTABLE-SOURCE-0000000003\n"
        "    Processor: first-join (stores: [topic2-STATE-STORE-0000000001])\n"
        "      --> KSTREAM-SINK-0000000012\n"
        "      <-- first-join-repartition-source\n"
        "    Sink: KSTREAM-SINK-0000000012 (topic: out-one)\n"
        "      <-- first-join\n"
        "    Processor: KTABLE-SOURCE-0000000003 (stores: [topic2-STATE-STORE-0000000001])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000002\n"
        "\n"
        "  Sub-topology: 2\n"
        "    Source: second-join-repartition-source (topics: [second-join-repartition])\n"
        "      --> second-join\n"
        "    Source: KSTREAM-SOURCE-0000000005 (topics: [topic3])\n"
        "      --> KTABLE-SOURCE-0000000006\n"
        "    Processor: second-join (stores: [topic3-STATE-STORE-0000000004])\n"
        "      --> KSTREAM-SINK-0000000017\n"
        "      <-- second-join-repartition-source\n"
        "    Sink: KSTREAM-SINK-0000000017 (topic: out-two)\n"
        "      <-- second-join\n"
        "    Processor: KTABLE-SOURCE-0000000006 (stores: [topic3-STATE-STORE-0000000004])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000005\n"
        "\n"
    )
    assert _describe(builder.build(NO_OPTIMIZATION)) == expected


# ---------------------------------------------------------------------------------------------------------
# Derived from Kafka's rules (no verbatim vector in Kafka's tests)
# ---------------------------------------------------------------------------------------------------------


def test_deprecated_join_windows_left_join_has_no_shared_outer_store():
    """StreamStreamJoinNode.writeToTopology adds the outer-join store only if enableSpuriousResultFix (not .of)."""
    builder, stream1, stream2 = _two_input_streams()
    stream1.left_join(stream2, _tostring_joiner, JoinWindows.of(100), _int_string_string_joined())
    expected = LEFT_JOIN_DEFAULT_STORES_NAMES.replace(", KSTREAM-OUTERSHARED-0000000004-store", "")
    assert _describe(builder.build()) == expected


def test_table_table_join_with_unnamed_materialized_gets_a_generated_store():
    """KTableImpl.join: MaterializedInternal(.., builder, MERGE_NAME) burns KTABLE-MERGE-STATE-STORE-n first."""
    builder = StreamsBuilder()
    table1 = builder.table("a", _string_consumed())
    table2 = builder.table("b", _string_consumed())
    table1.join(table2, _tostring_joiner, Materialized.with_(Serdes.String(), Serdes.String())).to_stream().to("o")
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [a])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Source: KSTREAM-SOURCE-0000000004 (topics: [b])\n"
        "      --> KTABLE-SOURCE-0000000005\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [a-STATE-STORE-0000000000])\n"
        "      --> KTABLE-JOINTHIS-0000000008\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-SOURCE-0000000005 (stores: [b-STATE-STORE-0000000003])\n"
        "      --> KTABLE-JOINOTHER-0000000009\n"
        "      <-- KSTREAM-SOURCE-0000000004\n"
        "    Processor: KTABLE-JOINOTHER-0000000009 (stores: [a-STATE-STORE-0000000000])\n"
        "      --> KTABLE-MERGE-0000000007\n"
        "      <-- KTABLE-SOURCE-0000000005\n"
        "    Processor: KTABLE-JOINTHIS-0000000008 (stores: [b-STATE-STORE-0000000003])\n"
        "      --> KTABLE-MERGE-0000000007\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-MERGE-0000000007 (stores: [KTABLE-MERGE-STATE-STORE-0000000006])\n"
        "      --> KTABLE-TOSTREAM-0000000010\n"
        "      <-- KTABLE-JOINTHIS-0000000008, KTABLE-JOINOTHER-0000000009\n"
        "    Processor: KTABLE-TOSTREAM-0000000010 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000011\n"
        "      <-- KTABLE-MERGE-0000000007\n"
        "    Sink: KSTREAM-SINK-0000000011 (topic: o)\n"
        "      <-- KTABLE-TOSTREAM-0000000010\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_stream_join_of_a_suppressed_table_reads_buffer_and_parent_stores():
    """KTableSuppressProcessorSupplier.view().storeNames(): the buffer, then the parent's getter stores."""
    from streams_on_spark.dsl.suppressed import BufferConfig, Suppressed
    builder = StreamsBuilder()
    table = builder.table("t", _string_consumed(), Materialized.as_("tstore")).suppress(
        Suppressed.until_time_limit(10, BufferConfig.unbounded()))
    builder.stream("s", _string_consumed()).join(table, _concat_joiner).to("o")
    description = _describe(builder.build())
    assert ("Processor: KSTREAM-JOIN-0000000005 (stores: [tstore, KTABLE-SUPPRESS-STATE-STORE-0000000003])"
            in description)

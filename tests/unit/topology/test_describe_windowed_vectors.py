"""Kafka Streams ``TopologyDescription.toString()`` vectors for windowed aggregations and suppress.

Every test builds a topology with the Python API and compares ``str(topology.describe())`` with the WHOLE
expected string.  Source: Apache Kafka trunk, Oct 2024, 4.0.0-SNAPSHOT, commit
1eb7644349cb07139d6a3c1ad1986979647cac99, all under ``streams/src/test/java/org/apache/kafka/streams/``
(collected in /work/scratch/deferred-describe-vectors.md; the section number is given in each docstring):

* ``TopologyTest.java`` -- time windows, sliding windows, session windows, time/sliding/session windowed
  cogroup (sections 13-34);
* ``kstream/internals/TimeWindowedCogroupedKStreamImplTest.java``,
  ``kstream/internals/SlidingWindowedCogroupedKStreamImplTest.java`` and
  ``kstream/internals/SessionWindowedCogroupedKStreamImplTest.java`` (sections 50-52);
* ``kstream/internals/SuppressTopologyTest.java`` (sections 53-56).

Adaptations (the expected strings are otherwise verbatim):

* ``Materialized...withStoreType(...)`` / ``Materialized.as(StoreType)`` is not supported here; the store
  type never shows in a description, so those vectors use plain ``Materialized.as_(name)`` /
  ``Materialized.with_(key_serde, value_serde)``.
* The ``...WithTopologyConfig...`` vectors build ``new StreamsBuilder(new TopologyConfig("my-topology", ...))``
  which (besides setting the default DSL store, invisible in the description) NAMES the topology, so Kafka
  prints the header ``Topology: my-topology:``.  ``StreamsBuilder()`` here takes no TopologyConfig and builds
  an unnamed topology, whose header Kafka prints as ``Topologies:``
  (``TopologyDescription#toString``: ``namedTopology == null ? "Topologies:\\n " : "Topology: " + ...``).
  Those tests keep Kafka's literal verbatim and swap only the header line via ``_unnamed``.
* ``TopologyTest#slidingWindowZeroArgCount...`` and ``#slidingWindowNamedMaterializedCount...`` (sections 18,
  19) build ``TimeWindows.ofSizeWithNoGrace(ofMillis(1))`` in Kafka despite their names (only section 20 uses
  ``SlidingWindows``).  They are ported verbatim with ``TimeWindows`` AND additionally run with
  ``SlidingWindows.of_time_difference_with_no_grace(1)``, expecting the same text: Kafka's
  ``SlidingWindowedKStreamImpl#doCount`` names the store first (``MaterializedInternal`` -> ``newStoreName``)
  and then the processor (``orElseGenerateWithPrefix(builder, AGGREGATE_NAME)``), exactly like
  ``TimeWindowedKStreamImpl``.
"""
import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    KeyValue,
    Materialized,
    Named,
    Produced,
    Serdes,
    SlidingWindows,
    StreamsBuilder,
)
from streams_on_spark.dsl.suppressed import BufferConfig, Suppressed
from streams_on_spark.dsl.windows import SessionWindows, TimeWindows

STRING_SERDE = Serdes.String()

# TimeWindowedCogroupedKStreamImplTest.WINDOW_SIZE
WINDOW_SIZE = 500

# SlidingWindowedCogroupedKStreamImplTest.WINDOW_SIZE_MS
WINDOW_SIZE_MS = 500

# Sections 18 and 19: Kafka's own code uses TimeWindows (see the module docstring); also run with SlidingWindows.
_SLIDING_SECTION_WINDOWS = pytest.mark.parametrize(
    "windows",
    [
        pytest.param(TimeWindows.of_size_with_no_grace(1), id="kafka-verbatim-TimeWindows"),
        pytest.param(SlidingWindows.of_time_difference_with_no_grace(1), id="SlidingWindows"),
    ],
)


def _describe(topology):
    return str(topology.describe())


def _unnamed(expected):
    """Kafka's expected text for a builder named "my-topology", as printed for an unnamed topology."""
    named_header = "Topology: my-topology:\n"
    assert expected.startswith(named_header)
    return "Topologies:\n" + expected[len(named_header):]


def _string_initializer():
    """MockInitializer.STRING_INIT"""
    return "0"


def _tostring_adder(key, value, aggregate):
    """MockAggregator.TOSTRING_ADDER"""
    return f"{aggregate}+{value}"


def _session_merger(agg_key, agg_one, agg_two):
    """SessionWindowedCogroupedKStreamImplTest.sessionMerger"""
    return f"{agg_one}+{agg_two}"


# ---------------------------------------------------------------------------------------------------------
# TopologyTest.java -- time windows
# ---------------------------------------------------------------------------------------------------------


def test_time_window_zero_arg_count_should_preserve_topology_structure():
    """TopologyTest.java#timeWindowZeroArgCountShouldPreserveTopologyStructure (section 13)"""
    builder = StreamsBuilder()
    builder.stream("input-topic").group_by_key().windowed_by(TimeWindows.of_size_with_no_grace(1)).count()
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


def test_time_window_named_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#timeWindowNamedMaterializedCountShouldPreserveTopologyStructure (section 14)

    Java: ``count(Materialized.as("count-store").withStoreType(IN_MEMORY))`` -- store type dropped.
    """
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().windowed_by(TimeWindows.of_size_with_no_grace(1))
     .count(Materialized.as_("count-store")))
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


def test_time_window_anonymous_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#timeWindowAnonymousMaterializedCountShouldPreserveTopologyStructure (section 15)

    Java: ``count(Materialized.with(null, Serdes.Long()).withStoreType(ROCKS_DB))`` -- store type dropped.
    An unnamed Materialized burns one index for the store-name prefix (``...-0000000001``), then the store
    takes ``...0000000002`` and the processor ``...0000000003``.
    """
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().windowed_by(TimeWindows.of_size_with_no_grace(1))
     .count(Materialized.with_(None, Serdes.Long())))
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


def test_time_window_anonymous_store_type_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#timeWindowAnonymousStoreTypeMaterializedCountShouldPreserveTopologyStructure (section 16)

    Java: ``count(Materialized.as(Materialized.StoreType.IN_MEMORY))`` -- an anonymous Materialized with only a
    store type; ported as an anonymous ``Materialized.with_(None, None)`` (same naming path).
    """
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().windowed_by(TimeWindows.of_size_with_no_grace(1))
     .count(Materialized.with_(None, None)))
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


def test_time_window_zero_arg_count_with_topology_config_should_preserve_topology_structure():
    """TopologyTest.java#timeWindowZeroArgCountWithTopologyConfigShouldPreserveTopologyStructure (section 17)

    Java: ``new StreamsBuilder(overrideDefaultStore(IN_MEMORY))`` (a TopologyConfig named "my-topology");
    ported with ``StreamsBuilder()`` -- see the module docstring for the header.
    """
    builder = StreamsBuilder()
    builder.stream("input-topic").group_by_key().windowed_by(TimeWindows.of_size_with_no_grace(1)).count()
    expected = _unnamed(
        "Topology: my-topology:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


# ---------------------------------------------------------------------------------------------------------
# TopologyTest.java -- sliding windows
# ---------------------------------------------------------------------------------------------------------


@_SLIDING_SECTION_WINDOWS
def test_sliding_window_zero_arg_count_should_preserve_topology_structure(windows):
    """TopologyTest.java#slidingWindowZeroArgCountShouldPreserveTopologyStructure (section 18)

    Java: ``windowedBy(TimeWindows.ofSizeWithNoGrace(ofMillis(1))).count()`` (sic) -- see the module docstring.
    """
    builder = StreamsBuilder()
    builder.stream("input-topic").group_by_key().windowed_by(windows).count()
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


@_SLIDING_SECTION_WINDOWS
def test_sliding_window_named_materialized_count_should_preserve_topology_structure(windows):
    """TopologyTest.java#slidingWindowNamedMaterializedCountShouldPreserveTopologyStructure (section 19)

    Java: ``windowedBy(TimeWindows.ofSizeWithNoGrace(ofMillis(1)))`` (sic) and
    ``count(Materialized.as("count-store").withStoreType(IN_MEMORY))`` -- store type dropped.
    """
    builder = StreamsBuilder()
    builder.stream("input-topic").group_by_key().windowed_by(windows).count(Materialized.as_("count-store"))
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


def test_sliding_window_zero_arg_count_with_topology_config_should_preserve_topology_structure():
    """TopologyTest.java#slidingWindowZeroArgCountWithTopologyConfigShouldPreserveTopologyStructure (section 20)
    -- TopologyConfig "my-topology" ported with ``StreamsBuilder()`` (see module docstring)."""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key()
     .windowed_by(SlidingWindows.of_time_difference_with_no_grace(1)).count())
    expected = _unnamed(
        "Topology: my-topology:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


# ---------------------------------------------------------------------------------------------------------
# TopologyTest.java -- time-windowed cogroup
# ---------------------------------------------------------------------------------------------------------


def test_time_windowed_cogrouped_zero_arg_count_should_preserve_topology_structure():
    """TopologyTest.java#timeWindowedCogroupedZeroArgCountShouldPreserveTopologyStructure (section 21)"""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().cogroup(lambda key, value, aggregate: value)
     .windowed_by(TimeWindows.of_size_with_no_grace(1)).aggregate(lambda: ""))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000002\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000002 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000003 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_time_windowed_cogrouped_named_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#timeWindowedCogroupedNamedMaterializedCountShouldPreserveTopologyStructure (section 22)

    Java: ``aggregate(() -> "", Materialized.as("aggregate-store").withStoreType(IN_MEMORY))`` -- store type
    dropped.
    """
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().cogroup(lambda key, value, aggregate: value)
     .windowed_by(TimeWindows.of_size_with_no_grace(1))
     .aggregate(lambda: "", materialized=Materialized.as_("aggregate-store")))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000001\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000001 (stores: [aggregate-store])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000002\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000002 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000001\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_time_windowed_cogrouped_zero_arg_count_with_topology_config_should_preserve_topology_structure():
    """TopologyTest.java#timeWindowedCogroupedZeroArgCountWithTopologyConfigShouldPreserveTopologyStructure
    (section 23) -- TopologyConfig "my-topology" ported with ``StreamsBuilder()`` (see module docstring)."""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().cogroup(lambda key, value, aggregate: value)
     .windowed_by(TimeWindows.of_size_with_no_grace(1)).aggregate(lambda: ""))
    expected = _unnamed(
        "Topology: my-topology:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000002\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000002 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000003 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


# ---------------------------------------------------------------------------------------------------------
# TopologyTest.java -- sliding-windowed cogroup
# ---------------------------------------------------------------------------------------------------------


def test_sliding_windowed_cogrouped_zero_arg_count_should_preserve_topology_structure():
    """TopologyTest.java#slidingWindowedCogroupedZeroArgCountShouldPreserveTopologyStructure (section 24)"""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().cogroup(lambda key, value, aggregate: value)
     .windowed_by(SlidingWindows.of_time_difference_with_no_grace(1)).aggregate(lambda: ""))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000002\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000002 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000003 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_sliding_windowed_cogrouped_named_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#slidingWindowedCogroupedNamedMaterializedCountShouldPreserveTopologyStructure
    (section 25) -- ``withStoreType(IN_MEMORY)`` dropped."""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().cogroup(lambda key, value, aggregate: value)
     .windowed_by(SlidingWindows.of_time_difference_with_no_grace(1))
     .aggregate(lambda: "", materialized=Materialized.as_("aggregate-store")))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000001\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000001 (stores: [aggregate-store])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000002\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000002 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000001\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_sliding_windowed_cogrouped_zero_arg_count_with_topology_config_should_preserve_topology_structure():
    """TopologyTest.java#slidingWindowedCogroupedZeroArgCountWithTopologyConfigShouldPreserveTopologyStructure
    (section 26) -- TopologyConfig "my-topology" ported with ``StreamsBuilder()`` (see module docstring)."""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().cogroup(lambda key, value, aggregate: value)
     .windowed_by(SlidingWindows.of_time_difference_with_no_grace(1)).aggregate(lambda: ""))
    expected = _unnamed(
        "Topology: my-topology:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000002\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000002 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000003 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


# ---------------------------------------------------------------------------------------------------------
# TopologyTest.java -- session-windowed cogroup
# ---------------------------------------------------------------------------------------------------------


def test_session_windowed_cogrouped_zero_arg_count_should_preserve_topology_structure():
    """TopologyTest.java#sessionWindowedCogroupedZeroArgCountShouldPreserveTopologyStructure (section 27)"""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().cogroup(lambda key, value, aggregate: value)
     .windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(1))
     .aggregate(lambda: "", lambda agg_key, agg_one, agg_two: ""))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000002\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000002 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000003 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_session_windowed_cogrouped_named_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#sessionWindowedCogroupedNamedMaterializedCountShouldPreserveTopologyStructure
    (section 28) -- ``withStoreType(IN_MEMORY)`` dropped."""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().cogroup(lambda key, value, aggregate: value)
     .windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(1))
     .aggregate(lambda: "", lambda agg_key, agg_one, agg_two: "",
                materialized=Materialized.as_("aggregate-store")))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000001\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000001 (stores: [aggregate-store])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000002\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000002 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000001\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_session_windowed_cogrouped_zero_arg_count_with_topology_config_should_preserve_topology_structure():
    """TopologyTest.java#sessionWindowedCogroupedZeroArgCountWithTopologyConfigShouldPreserveTopologyStructure
    (section 29) -- TopologyConfig "my-topology" ported with ``StreamsBuilder()`` (see module docstring)."""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().cogroup(lambda key, value, aggregate: value)
     .windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(1))
     .aggregate(lambda: "", lambda agg_key, agg_one, agg_two: ""))
    expected = _unnamed(
        "Topology: my-topology:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> COGROUPKSTREAM-AGGREGATE-0000000002\n"
        "    Processor: COGROUPKSTREAM-AGGREGATE-0000000002 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> COGROUPKSTREAM-MERGE-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: COGROUPKSTREAM-MERGE-0000000003 (stores: [])\n"
        "      --> none\n"
        "      <-- COGROUPKSTREAM-AGGREGATE-0000000002\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


# ---------------------------------------------------------------------------------------------------------
# TopologyTest.java -- session windows
# ---------------------------------------------------------------------------------------------------------


def test_session_window_zero_arg_count_should_preserve_topology_structure():
    """TopologyTest.java#sessionWindowZeroArgCountShouldPreserveTopologyStructure (section 30)"""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(1))
     .count())
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


def test_session_window_named_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#sessionWindowNamedMaterializedCountShouldPreserveTopologyStructure (section 31)
    -- ``withStoreType(IN_MEMORY)`` dropped."""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(1))
     .count(Materialized.as_("count-store")))
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


def test_session_window_anonymous_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#sessionWindowAnonymousMaterializedCountShouldPreserveTopologyStructure (section 32)
    -- ``Materialized.with(null, Serdes.Long()).withStoreType(ROCKS_DB)``, store type dropped."""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(1))
     .count(Materialized.with_(None, Serdes.Long())))
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


def test_session_window_anonymous_store_typed_materialized_count_should_preserve_topology_structure():
    """TopologyTest.java#sessionWindowAnonymousStoreTypedMaterializedCountShouldPreserveTopologyStructure
    (section 33) -- ``Materialized.as(StoreType.IN_MEMORY)`` ported as anonymous ``Materialized.with_(None, None)``."""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(1))
     .count(Materialized.with_(None, None)))
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


def test_session_window_zero_arg_count_with_topology_config_should_preserve_topology_structure():
    """TopologyTest.java#sessionWindowZeroArgCountWithTopologyConfigShouldPreserveTopologyStructure (section 34)
    -- TopologyConfig "my-topology" ported with ``StreamsBuilder()`` (see module docstring)."""
    builder = StreamsBuilder()
    (builder.stream("input-topic").group_by_key().windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(1))
     .count())
    expected = _unnamed(
        "Topology: my-topology:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


# ---------------------------------------------------------------------------------------------------------
# TimeWindowedCogroupedKStreamImplTest.java / SlidingWindowedCogroupedKStreamImplTest.java /
# SessionWindowedCogroupedKStreamImplTest.java
# ---------------------------------------------------------------------------------------------------------


def test_time_windowed_cogrouped_named_param_should_set_name():
    """TimeWindowedCogroupedKStreamImplTest.java#namedParamShouldSetName (section 50)"""
    builder = StreamsBuilder()
    stream = builder.stream("topic", Consumed.with_(Serdes.String(), Serdes.String()))
    grouped_stream = stream.group_by_key(Grouped.with_(Serdes.String(), Serdes.String()))
    (grouped_stream.cogroup(_tostring_adder)
     .windowed_by(TimeWindows.of_size_with_no_grace(WINDOW_SIZE))
     .aggregate(_string_initializer, Named.as_("foo")))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n"
        "      --> foo-cogroup-agg-0\n"
        "    Processor: foo-cogroup-agg-0 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> foo-cogroup-merge\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: foo-cogroup-merge (stores: [])\n"
        "      --> none\n"
        "      <-- foo-cogroup-agg-0\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_sliding_windowed_cogrouped_named_param_should_set_name():
    """SlidingWindowedCogroupedKStreamImplTest.java#namedParamShouldSetName (section 51)

    Java: ``SlidingWindows.ofTimeDifferenceAndGrace(ofMillis(WINDOW_SIZE_MS), ofMillis(2000L))``.
    """
    builder = StreamsBuilder()
    stream = builder.stream("topic", Consumed.with_(Serdes.String(), Serdes.String()))
    grouped_stream = stream.group_by_key(Grouped.with_(Serdes.String(), Serdes.String()))
    (grouped_stream.cogroup(_tostring_adder)
     .windowed_by(SlidingWindows.of_time_difference_and_grace(WINDOW_SIZE_MS, 2000))
     .aggregate(_string_initializer, Named.as_("foo")))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n"
        "      --> foo-cogroup-agg-0\n"
        "    Processor: foo-cogroup-agg-0 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> foo-cogroup-merge\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: foo-cogroup-merge (stores: [])\n"
        "      --> none\n"
        "      <-- foo-cogroup-agg-0\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


def test_session_windowed_cogrouped_named_param_should_set_name():
    """SessionWindowedCogroupedKStreamImplTest.java#namedParamShouldSetName (section 52)"""
    builder = StreamsBuilder()
    stream = builder.stream("topic", Consumed.with_(Serdes.String(), Serdes.String()))
    grouped_stream = stream.group_by_key(Grouped.with_(Serdes.String(), Serdes.String()))
    (grouped_stream.cogroup(_tostring_adder)
     .windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(1))
     .aggregate(_string_initializer, _session_merger, Named.as_("foo")))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n"
        "      --> foo-cogroup-agg-0\n"
        "    Processor: foo-cogroup-agg-0 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> foo-cogroup-merge\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: foo-cogroup-merge (stores: [])\n"
        "      --> none\n"
        "      <-- foo-cogroup-agg-0\n"
        "\n"
    )
    assert _describe(builder.build()) == expected


# ---------------------------------------------------------------------------------------------------------
# SuppressTopologyTest.java
# ---------------------------------------------------------------------------------------------------------


def _final_suppression_topology(suppressed):
    """The SuppressTopologyTest "final" (window-close) pipeline, parameterised by the Suppressed config."""
    builder = StreamsBuilder()
    (builder.stream("input", Consumed.with_(STRING_SERDE, STRING_SERDE))
     .group_by(lambda k, v: k, Grouped.with_(STRING_SERDE, STRING_SERDE))
     .windowed_by(SessionWindows.of_inactivity_gap_and_grace(5, 5))
     .count(Materialized.as_("counts").with_caching_disabled())
     .suppress(suppressed)
     .to_stream()
     .map(lambda k, v: KeyValue(str(k), v))
     .to("output-suppressed", Produced.with_(STRING_SERDE, Serdes.Long())))
    return builder.build()


def _intermediate_suppression_topology(suppressed):
    """The SuppressTopologyTest "intermediate" (time-limit) pipeline, parameterised by the Suppressed config."""
    builder = StreamsBuilder()
    (builder.stream("input", Consumed.with_(STRING_SERDE, STRING_SERDE))
     .group_by_key()
     .count()
     .suppress(suppressed)
     .to_stream()
     .to("output", Produced.with_(STRING_SERDE, Serdes.Long())))
    return builder.build()


def test_should_apply_name_to_final_suppression_node():
    """SuppressTopologyTest.java#shouldApplyNameToFinalSuppressionNode (NAMED_FINAL_TOPOLOGY, section 53)"""
    topology = _final_suppression_topology(
        Suppressed.until_window_closes(BufferConfig.unbounded()).with_name("myname"))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-KEY-SELECT-0000000001\n"
        "    Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])\n"
        "      --> counts-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: counts-repartition-filter (stores: [])\n"
        "      --> counts-repartition-sink\n"
        "      <-- KSTREAM-KEY-SELECT-0000000001\n"
        "    Sink: counts-repartition-sink (topic: counts-repartition)\n"
        "      <-- counts-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: counts-repartition-source (topics: [counts-repartition])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [counts])\n"
        "      --> myname\n"
        "      <-- counts-repartition-source\n"
        "    Processor: myname (stores: [myname-store])\n"
        "      --> KTABLE-TOSTREAM-0000000006\n"
        "      <-- KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KTABLE-TOSTREAM-0000000006 (stores: [])\n"
        "      --> KSTREAM-MAP-0000000007\n"
        "      <-- myname\n"
        "    Processor: KSTREAM-MAP-0000000007 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000008\n"
        "      <-- KTABLE-TOSTREAM-0000000006\n"
        "    Sink: KSTREAM-SINK-0000000008 (topic: output-suppressed)\n"
        "      <-- KSTREAM-MAP-0000000007\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_should_use_numbering_for_anonymous_final_suppression_node():
    """SuppressTopologyTest.java#shouldUseNumberingForAnonymousFinalSuppressionNode (ANONYMOUS_FINAL_TOPOLOGY,
    section 54)"""
    topology = _final_suppression_topology(Suppressed.until_window_closes(BufferConfig.unbounded()))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-KEY-SELECT-0000000001\n"
        "    Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])\n"
        "      --> counts-repartition-filter\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: counts-repartition-filter (stores: [])\n"
        "      --> counts-repartition-sink\n"
        "      <-- KSTREAM-KEY-SELECT-0000000001\n"
        "    Sink: counts-repartition-sink (topic: counts-repartition)\n"
        "      <-- counts-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: counts-repartition-source (topics: [counts-repartition])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [counts])\n"
        "      --> KTABLE-SUPPRESS-0000000006\n"
        "      <-- counts-repartition-source\n"
        "    Processor: KTABLE-SUPPRESS-0000000006 (stores: [KTABLE-SUPPRESS-STATE-STORE-0000000007])\n"
        "      --> KTABLE-TOSTREAM-0000000008\n"
        "      <-- KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KTABLE-TOSTREAM-0000000008 (stores: [])\n"
        "      --> KSTREAM-MAP-0000000009\n"
        "      <-- KTABLE-SUPPRESS-0000000006\n"
        "    Processor: KSTREAM-MAP-0000000009 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000010\n"
        "      <-- KTABLE-TOSTREAM-0000000008\n"
        "    Sink: KSTREAM-SINK-0000000010 (topic: output-suppressed)\n"
        "      <-- KSTREAM-MAP-0000000009\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_should_apply_name_to_suppression_node():
    """SuppressTopologyTest.java#shouldApplyNameToSuppressionNode (NAMED_INTERMEDIATE_TOPOLOGY, section 55)

    Java: ``untilTimeLimit(Duration.ofSeconds(1), unbounded())`` -- 1000 ms.
    """
    topology = _intermediate_suppression_topology(
        Suppressed.until_time_limit(1000, BufferConfig.unbounded()).with_name("asdf"))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> asdf\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: asdf (stores: [asdf-store])\n"
        "      --> KTABLE-TOSTREAM-0000000003\n"
        "      <-- KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KTABLE-TOSTREAM-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000004\n"
        "      <-- asdf\n"
        "    Sink: KSTREAM-SINK-0000000004 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000003\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_should_use_numbering_for_anonymous_suppression_node():
    """SuppressTopologyTest.java#shouldUseNumberingForAnonymousSuppressionNode (ANONYMOUS_INTERMEDIATE_TOPOLOGY,
    section 56)"""
    topology = _intermediate_suppression_topology(Suppressed.until_time_limit(1000, BufferConfig.unbounded()))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> KTABLE-SUPPRESS-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KTABLE-SUPPRESS-0000000003 (stores: [KTABLE-SUPPRESS-STATE-STORE-0000000004])\n"
        "      --> KTABLE-TOSTREAM-0000000005\n"
        "      <-- KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KTABLE-TOSTREAM-0000000005 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000006\n"
        "      <-- KTABLE-SUPPRESS-0000000003\n"
        "    Sink: KSTREAM-SINK-0000000006 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000005\n"
        "\n"
    )
    assert _describe(topology) == expected


def test_suppress_of_a_source_table_materializes_it():
    """KTableSuppressProcessorSupplier calls parentKTable.enableSendingOldValues(true): the source gets its store
    (derived from Kafka's source; no verbatim vector)."""
    builder = StreamsBuilder()
    (builder.table("t", Consumed.with_(STRING_SERDE, STRING_SERDE))
     .suppress(Suppressed.until_time_limit(10, BufferConfig.unbounded()))
     .to_stream().to("o"))
    expected = (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [t])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [t-STATE-STORE-0000000000])\n"
        "      --> KTABLE-SUPPRESS-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-SUPPRESS-0000000003 (stores: [KTABLE-SUPPRESS-STATE-STORE-0000000004])\n"
        "      --> KTABLE-TOSTREAM-0000000005\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-TOSTREAM-0000000005 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000006\n"
        "      <-- KTABLE-SUPPRESS-0000000003\n"
        "    Sink: KSTREAM-SINK-0000000006 (topic: o)\n"
        "      <-- KTABLE-TOSTREAM-0000000005\n"
        "\n"
    )
    assert _describe(builder.build()) == expected

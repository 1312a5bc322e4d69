"""Kafka Streams topology-building error cases, ported to streams-on-spark.

Sources (Apache Kafka trunk, Oct 2024; texts as Kafka 4.3.1 raises them, pinned by the golden topology-errors-texts),
under ``streams/src/test/java/org/apache/kafka/streams/``:
``TopologyTest.java``, ``processor/internals/InternalTopologyBuilderTest.java``, ``StreamsBuilderTest.java``,
``kstream/RepartitionTopicNamingTest.java``, ``kstream/internals/KStreamImplTest.java``,
``kstream/internals/KGroupedStreamImplTest.java``, ``kstream/internals/KGroupedTableImplTest.java``,
``kstream/internals/CogroupedKStreamImplTest.java``.

Mapping: Kafka's ``TopologyException`` -> ``streams_on_spark.TopologyException`` (message prefixed
"Invalid topology: "); ``NullPointerException`` / ``IllegalArgumentException`` -> ``ValueError``.
Where the Kafka test asserts a message it is asserted here in Kafka's wording; otherwise the Kafka
source's message (``InternalTopologyBuilder``, ``Named``, ``ApiUtils``, ``KStreamImpl``) is used only for
the key fragment (the offending node / topic / store name).
"""
import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    KeyValue,
    Materialized,
    Named,
    Serdes,
    Stores,
    StreamsBuilder,
    Topology,
    TopologyException,
)
from streams_on_spark.processor import Processor


class _NoopProcessor(Processor):
    def process(self, record):
        pass


def _kv_store(name):
    return Stores.key_value_store_builder(Stores.in_memory_key_value_store(name), Serdes.String(), Serdes.String())


def _global_kv_store(name):
    return _kv_store(name).with_logging_disabled()


def _assert_topology_error(excinfo, *fragments):
    message = str(excinfo.value)
    assert message.startswith("Invalid topology"), message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


# ---------------------------------------------------------------------------------------------------------
# Topology.add_source
# ---------------------------------------------------------------------------------------------------------


def test_should_not_allow_null_name_when_adding_source_with_topic():
    """TopologyTest.java#shouldNotAllowNullNameWhenAddingSourceWithTopic (NPE)"""
    with pytest.raises(ValueError):
        Topology().add_source(None, "topic")


def test_should_not_allow_null_topics_when_adding_source_with_topic():
    """TopologyTest.java#shouldNotAllowNullTopicsWhenAddingSourceWithTopic (NPE; Kafka: "topic names cannot be null")"""
    with pytest.raises(ValueError):
        Topology().add_source("source", None)


def test_should_not_allow_zero_topics_when_adding_source():
    """TopologyTest.java#shouldNotAllowZeroTopicsWhenAddingSource"""
    with pytest.raises(TopologyException) as excinfo:
        Topology().add_source("source")
    _assert_topology_error(excinfo, "topics cannot be empty")


def test_should_not_allow_to_add_sources_with_same_name():
    """TopologyTest.java#shouldNotAllowToAddSourcesWithSameName / InternalTopologyBuilderTest#testAddSourceWithSameName"""
    topology = Topology()
    topology.add_source("source", "topic-1")
    with pytest.raises(TopologyException) as excinfo:
        topology.add_source("source", "topic-2")
    _assert_topology_error(excinfo, "Processor source is already added.")


def test_should_not_allow_to_add_topic_twice():
    """TopologyTest.java#shouldNotAllowToAddTopicTwice / InternalTopologyBuilderTest#testAddSourceWithSameTopic"""
    topology = Topology()
    topology.add_source("source", "topic-1")
    with pytest.raises(TopologyException) as excinfo:
        topology.add_source("source-2", "topic-1")
    _assert_topology_error(excinfo, "Topic topic-1 has already been registered by another source.")


# ---------------------------------------------------------------------------------------------------------
# Topology.add_processor
# ---------------------------------------------------------------------------------------------------------


def test_should_not_allow_null_name_when_adding_processor():
    """TopologyTest.java#shouldNotAllowNullNameWhenAddingProcessor (NPE)"""
    with pytest.raises(ValueError):
        Topology().add_processor(None, _NoopProcessor)


def test_should_not_allow_null_processor_supplier_when_adding_processor():
    """TopologyTest.java#shouldNotAllowNullProcessorSupplierWhenAddingProcessor (NPE)"""
    with pytest.raises(ValueError):
        Topology().add_processor("name", None)


def test_should_not_allow_to_add_processor_with_same_name():
    """TopologyTest.java#shouldNotAllowToAddProcessorWithSameName / InternalTopologyBuilderTest#testAddProcessorWithSameName"""
    topology = Topology()
    topology.add_source("source", "topic-1")
    topology.add_processor("processor", _NoopProcessor, "source")
    with pytest.raises(TopologyException) as excinfo:
        topology.add_processor("processor", _NoopProcessor, "source")
    _assert_topology_error(excinfo, "Processor processor is already added.")


def test_should_not_allow_to_add_processor_with_empty_parents():
    """TopologyTest.java#shouldNotAllowToAddProcessorWithEmptyParents / InternalTopologyBuilderTest#testAddProcessorWithEmptyParents"""
    topology = Topology()
    topology.add_source("source", "topic-1")
    with pytest.raises(TopologyException) as excinfo:
        topology.add_processor("processor", _NoopProcessor)
    _assert_topology_error(excinfo, "predecessorNames cannot be empty")


def test_should_not_allow_to_add_processor_with_null_parents():
    """TopologyTest.java#shouldNotAllowToAddProcessorWithNullParents (NPE)"""
    topology = Topology()
    topology.add_source("source", "topic-1")
    with pytest.raises(ValueError):
        topology.add_processor("processor", _NoopProcessor, None)


def test_should_fail_on_unknown_source():
    """TopologyTest.java#shouldFailOnUnknownSource / InternalTopologyBuilderTest#testAddProcessorWithWrongParent"""
    with pytest.raises(TopologyException) as excinfo:
        Topology().add_processor("processor", _NoopProcessor, "source")
    _assert_topology_error(excinfo, "Parent node source is unknown.")


def test_should_fail_if_node_is_its_own_parent():
    """TopologyTest.java#shouldFailIfNodeIsItsOwnParent / InternalTopologyBuilderTest#testAddProcessorWithSelfParent"""
    with pytest.raises(TopologyException) as excinfo:
        Topology().add_processor("processor", _NoopProcessor, "processor")
    _assert_topology_error(excinfo, "Parent node processor is unknown (self-reference).")


def test_add_processor_with_bad_supplier():
    """InternalTopologyBuilderTest.java#testAddProcessorWithBadSupplier (IllegalArgumentException)

    A supplier returning the same Processor instance twice is rejected before the parents are looked at
    (the Java test passes a null parent and still expects the supplier error).
    """
    processor = _NoopProcessor()
    with pytest.raises(ValueError) as excinfo:
        Topology().add_processor("processor", lambda: processor, None)
    assert "#get() must return a new object each time it is called." in str(excinfo.value)


# ---------------------------------------------------------------------------------------------------------
# Topology.add_sink
# ---------------------------------------------------------------------------------------------------------


def test_should_not_allow_null_name_when_adding_sink():
    """TopologyTest.java#shouldNotAllowNullNameWhenAddingSink (NPE)"""
    with pytest.raises(ValueError):
        Topology().add_sink(None, "topic")


def test_should_not_allow_null_topic_when_adding_sink():
    """TopologyTest.java#shouldNotAllowNullTopicWhenAddingSink (NPE)"""
    with pytest.raises(ValueError):
        Topology().add_sink("name", None)


def test_should_not_allow_to_add_sink_with_same_name():
    """TopologyTest.java#shouldNotAllowToAddSinkWithSameName / InternalTopologyBuilderTest#testAddSinkWithSameName"""
    topology = Topology()
    topology.add_source("source", "topic-1")
    topology.add_sink("sink", "topic-2", "source")
    with pytest.raises(TopologyException) as excinfo:
        topology.add_sink("sink", "topic-3", "source")
    _assert_topology_error(excinfo, "Processor sink is already added.")


def test_should_not_allow_to_add_sink_with_empty_parents():
    """TopologyTest.java#shouldNotAllowToAddSinkWithEmptyParents / InternalTopologyBuilderTest#testAddSinkWithEmptyParents"""
    topology = Topology()
    topology.add_source("source", "topic-1")
    topology.add_processor("processor", _NoopProcessor, "source")
    with pytest.raises(TopologyException) as excinfo:
        topology.add_sink("sink", "topic-2")
    _assert_topology_error(excinfo, "predecessorNames cannot be empty")


def test_should_not_allow_to_add_sink_with_null_parents():
    """TopologyTest.java#shouldNotAllowToAddSinkWithNullParents (NPE)"""
    topology = Topology()
    topology.add_source("source", "topic-1")
    topology.add_processor("processor", _NoopProcessor, "source")
    with pytest.raises(ValueError):
        topology.add_sink("sink", "topic-2", None)


def test_should_fail_with_unknown_parent():
    """TopologyTest.java#shouldFailWithUnknownParent / InternalTopologyBuilderTest#testAddSinkWithWrongParent"""
    with pytest.raises(TopologyException) as excinfo:
        Topology().add_sink("sink", "topic-2", "source")
    _assert_topology_error(excinfo, "Parent node source is unknown.")


def test_should_fail_if_sink_is_its_own_parent():
    """TopologyTest.java#shouldFailIfSinkIsItsOwnParent / InternalTopologyBuilderTest#testAddSinkWithSelfParent"""
    with pytest.raises(TopologyException) as excinfo:
        Topology().add_sink("sink", "topic-2", "sink")
    _assert_topology_error(excinfo, "Parent node sink is unknown (self-reference).")


def test_should_fail_if_sink_is_parent():
    """TopologyTest.java#shouldFailIfSinkIsParent (Kafka's wording: "cannot be used a parent")"""
    topology = Topology()
    topology.add_source("source", "topic-1")
    topology.add_sink("sink-1", "topic-2", "source")
    with pytest.raises(TopologyException) as excinfo:
        topology.add_sink("sink-2", "topic-3", "sink-1")
    _assert_topology_error(excinfo, "Sink sink-1 cannot be used a parent.")


# ---------------------------------------------------------------------------------------------------------
# Topology.add_state_store / connect_processor_and_state_stores
# ---------------------------------------------------------------------------------------------------------


def test_should_not_add_null_state_store_supplier():
    """TopologyTest.java#shouldNotAddNullStateStoreSupplier (NPE)"""
    with pytest.raises(ValueError):
        Topology().add_state_store(None)


def test_should_not_allow_to_add_state_store_to_non_existing_processor():
    """TopologyTest.java#shouldNotAllowToAddStateStoreToNonExistingProcessor / InternalTopologyBuilderTest#testAddStateStoreWithNonExistingProcessor"""
    with pytest.raises(TopologyException) as excinfo:
        Topology().add_state_store(_kv_store("store"), "no-such-processor")
    _assert_topology_error(excinfo, "Processor no-such-processor is not added yet.")


def test_should_not_allow_to_add_state_store_to_source():
    """TopologyTest.java#shouldNotAllowToAddStateStoreToSource / InternalTopologyBuilderTest#testAddStateStoreWithSource"""
    topology = Topology()
    topology.add_source("source-1", "topic-1")
    with pytest.raises(TopologyException) as excinfo:
        topology.add_state_store(_kv_store("store"), "source-1")
    _assert_topology_error(excinfo, "cannot connect a state store store to a source node or a sink node.")


def test_should_not_allow_to_add_state_store_to_sink():
    """TopologyTest.java#shouldNotAllowToAddStateStoreToSink / InternalTopologyBuilderTest#testAddStateStoreWithSink"""
    topology = Topology()
    topology.add_source("source-1", "topic-1")
    topology.add_sink("sink-1", "topic-1", "source-1")
    with pytest.raises(TopologyException) as excinfo:
        topology.add_state_store(_kv_store("store"), "sink-1")
    _assert_topology_error(excinfo, "cannot connect a state store store to a source node or a sink node.")


def test_should_not_allow_to_add_store_with_same_name_and_different_instance():
    """TopologyTest.java#shouldNotAllowToAddStoreWithSameNameAndDifferentInstance / InternalTopologyBuilderTest#shouldNotAllowToAddStoresWithSameName

    Kafka compares store builders by identity; two separately built builders with the same name conflict.
    """
    topology = Topology()
    topology.add_state_store(_kv_store("testStore"))
    with pytest.raises(TopologyException) as excinfo:
        topology.add_state_store(_kv_store("testStore"))
    assert str(excinfo.value) == "Invalid topology: A different StateStore has already been added with the name testStore"


def test_should_allow_adding_same_store_builder_multiple_times():
    """InternalTopologyBuilderTest.java#shouldAllowAddingSameStoreBuilderMultipleTimes (no error)

    Re-adding the SAME builder instance is fine; both processors share the one store (Kafka additionally
    asserts ``buildTopology().stateStores().size() == 1``, checked here through the description).
    """
    topology = Topology()
    store_builder = _kv_store("testStore")
    topology.add_source("source-1", "topic-1")
    topology.add_state_store(store_builder)
    topology.add_processor("processor-1", _NoopProcessor, "source-1")
    topology.connect_processor_and_state_stores("processor-1", "testStore")
    topology.add_state_store(store_builder)
    topology.add_processor("processor-2", _NoopProcessor, "source-1")
    topology.connect_processor_and_state_stores("processor-2", "testStore")
    description = str(topology.describe())
    assert "Processor: processor-1 (stores: [testStore])" in description
    assert "Processor: processor-2 (stores: [testStore])" in description


def test_should_not_allow_null_processor_name_when_connecting_processor_and_state_stores():
    """TopologyTest.java#shouldNotAllowNullProcessorNameWhenConnectingProcessorAndStateStores (NPE)"""
    with pytest.raises(ValueError):
        Topology().connect_processor_and_state_stores(None, "store")


def test_should_not_allow_null_store_name_when_connecting_processor_and_state_stores():
    """TopologyTest.java#shouldNotAllowNullStoreNameWhenConnectingProcessorAndStateStores (NPE)"""
    with pytest.raises(ValueError):
        Topology().connect_processor_and_state_stores("processor", None)


def test_should_not_allow_zero_store_name_when_connecting_processor_and_state_stores():
    """TopologyTest.java#shouldNotAllowZeroStoreNameWhenConnectingProcessorAndStateStores"""
    with pytest.raises(TopologyException) as excinfo:
        Topology().connect_processor_and_state_stores("processor")
    _assert_topology_error(excinfo, "stateStoreNames cannot be empty")


def test_connect_processor_to_unknown_store():
    """InternalTopologyBuilder#connectProcessorAndStateStore (source message; no dedicated Kafka test)"""
    topology = Topology()
    topology.add_source("source", "topic")
    topology.add_processor("processor", _NoopProcessor, "source")
    with pytest.raises(TopologyException) as excinfo:
        topology.connect_processor_and_state_stores("processor", "no-such-store")
    _assert_topology_error(excinfo, "StateStore no-such-store is not added yet.")


# ---------------------------------------------------------------------------------------------------------
# Topology.add_global_store
# ---------------------------------------------------------------------------------------------------------


def test_should_not_allow_to_add_global_store_with_source_name_equals_processor_name():
    """TopologyTest.java / InternalTopologyBuilderTest.java#shouldNotAllowToAddGlobalStoreWithSourceNameEqualsProcessorName"""
    with pytest.raises(TopologyException) as excinfo:
        Topology().add_global_store(_global_kv_store("anyName"), "sameName", "anyTopicName", "sameName", _NoopProcessor)
    _assert_topology_error(excinfo, "sourceName and processorName must be different.")


def test_add_global_store_with_bad_supplier():
    """InternalTopologyBuilderTest.java#testAddGlobalStoreWithBadSupplier (IllegalArgumentException)"""
    processor = _NoopProcessor()
    with pytest.raises(ValueError) as excinfo:
        Topology().add_global_store(
            _global_kv_store("global-store"), "globalSource", "globalTopic", "global-processor", lambda: processor
        )
    assert "#get() must return a new object each time it is called." in str(excinfo.value)


def test_should_not_allow_to_add_stores_with_same_name_when_first_store_is_global():
    """InternalTopologyBuilderTest.java#shouldNotAllowToAddStoresWithSameNameWhenFirstStoreIsGlobal"""
    topology = Topology()
    topology.add_global_store(_global_kv_store("testStore"), "global-store", "global-topic", "global-processor", _NoopProcessor)
    with pytest.raises(TopologyException) as excinfo:
        topology.add_state_store(_kv_store("testStore"))
    assert str(excinfo.value) == (
        "Invalid topology: A different GlobalStateStore has already been added with the name testStore"
    )


def test_should_not_allow_to_add_stores_with_same_name_when_second_store_is_global():
    """InternalTopologyBuilderTest.java#shouldNotAllowToAddStoresWithSameNameWhenSecondStoreIsGlobal"""
    topology = Topology()
    topology.add_state_store(_kv_store("testStore"))
    with pytest.raises(TopologyException) as excinfo:
        topology.add_global_store(
            _global_kv_store("testStore"), "global-store", "global-topic", "global-processor", _NoopProcessor
        )
    assert str(excinfo.value) == "Invalid topology: A different StateStore has already been added with the name testStore"


def test_should_not_allow_to_add_global_stores_with_same_name():
    """InternalTopologyBuilderTest.java#shouldNotAllowToAddGlobalStoresWithSameName

    The second global store even reuses "global-topic": the store-name check comes first.
    """
    topology = Topology()
    topology.add_global_store(_global_kv_store("testStore"), "global-store", "global-topic", "global-processor", _NoopProcessor)
    with pytest.raises(TopologyException) as excinfo:
        topology.add_global_store(
            _global_kv_store("testStore"), "global-store-2", "global-topic", "global-processor-2", _NoopProcessor
        )
    assert str(excinfo.value) == (
        "Invalid topology: A different GlobalStateStore has already been added with the name testStore"
    )


def test_a_global_stores_logging_is_disabled():
    """Kafka 4.3.1's Topology#addGlobalStore disables a global store builder's logging (its topic is its changelog);
    the golden processor-context-global-metadata runs one built with logging enabled."""
    store = _kv_store("global-store")
    assert store.logging_enabled
    Topology().add_global_store(store, "globalSource", "globalTopic", "global-processor", _NoopProcessor)
    assert not store.logging_enabled


def test_global_store_connected_explicitly_to_processor():
    """InternalTopologyBuilder#connectProcessorAndStateStore (source message; no dedicated Kafka test)"""
    topology = Topology()
    topology.add_global_store(_global_kv_store("global-store"), "globalSource", "globalTopic", "global-processor", _NoopProcessor)
    topology.add_source("source", "topic")
    topology.add_processor("processor", _NoopProcessor, "source")
    with pytest.raises(TopologyException) as excinfo:
        topology.connect_processor_and_state_stores("processor", "global-store")
    _assert_topology_error(excinfo, "Global StateStore global-store can be used by a Processor without being specified")


# ---------------------------------------------------------------------------------------------------------
# DSL: errors raised by StreamsBuilder.build()
# ---------------------------------------------------------------------------------------------------------


def test_should_fail_with_same_repartition_topic_name():
    """RepartitionTopicNamingTest.java#shouldFailWithSameRepartitionTopicName

    Two different operators with the same user-named repartition topic fail at build() (Kafka asserts the
    type only; the clash surfaces as a duplicate "grouping-repartition-..." node / topic).
    """
    builder = StreamsBuilder()
    builder.stream("topic").select_key(lambda k, v: k).group_by_key(Grouped.as_("grouping")).count().to_stream()
    builder.stream("topicII").select_key(lambda k, v: k).group_by_key(Grouped.as_("grouping")).count().to_stream()
    with pytest.raises(TopologyException) as excinfo:
        builder.build()
    _assert_topology_error(excinfo, "grouping-repartition")


def test_should_throw_exception_when_no_topic_present():
    """StreamsBuilderTest.java#shouldThrowExceptionWhenNoTopicPresent.

    Kafka fails at build(); we fail at the call that is wrong, with a ValueError naming the argument.
    """
    builder = StreamsBuilder()
    with pytest.raises(ValueError, match="topics must be a non-empty str"):
        builder.stream([])


def test_topology_add_source_without_topics():
    """InternalTopologyBuilder#addSource: Kafka 4.3.1's "topics cannot be empty" for the Processor API."""
    with pytest.raises(TopologyException) as excinfo:
        Topology().add_source("source")
    _assert_topology_error(excinfo, "topics cannot be empty")


def test_should_throw_exception_when_topic_names_are_null():
    """StreamsBuilderTest.java#shouldThrowExceptionWhenTopicNamesAreNull (Kafka: NPE at build(); here at the call)"""
    builder = StreamsBuilder()
    with pytest.raises(ValueError, match="topics must be"):
        builder.stream([None, None])


# ---------------------------------------------------------------------------------------------------------
# DSL: invalid store names (Named.validate, via Materialized.as) -- KGroupedStreamImplTest / KGroupedTableImplTest
# ---------------------------------------------------------------------------------------------------------

INVALID_STORE_NAME = "~foo bar~"
INVALID_NAME_MESSAGE = (
    "Name \"~foo bar~\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'"
)


def _grouped_stream():
    builder = StreamsBuilder()
    return builder.stream("topic", Consumed.with_(Serdes.String(), Serdes.String())).group_by_key(
        Grouped.with_(Serdes.String(), Serdes.String())
    )


def _grouped_table():
    builder = StreamsBuilder()
    return builder.table("blah", Consumed.with_(Serdes.String(), Serdes.String())).group_by(
        lambda k, v: KeyValue(v, v)
    )


def test_should_not_have_invalid_store_name_on_reduce():
    """KGroupedStreamImplTest.java#shouldNotHaveInvalidStoreNameOnReduce"""
    grouped = _grouped_stream()
    with pytest.raises(TopologyException) as excinfo:
        grouped.reduce(lambda v1, v2: v1 + v2, materialized=Materialized.as_(INVALID_STORE_NAME))
    _assert_topology_error(excinfo, INVALID_NAME_MESSAGE)


def test_should_not_have_invalid_store_name_on_aggregate():
    """KGroupedStreamImplTest.java#shouldNotHaveInvalidStoreNameOnAggregate"""
    grouped = _grouped_stream()
    with pytest.raises(TopologyException) as excinfo:
        grouped.aggregate(lambda: "", lambda k, v, agg: agg + v, materialized=Materialized.as_(INVALID_STORE_NAME))
    _assert_topology_error(excinfo, INVALID_NAME_MESSAGE)


def test_should_not_allow_invalid_store_name_on_ktable_aggregate():
    """KGroupedTableImplTest.java#shouldNotAllowInvalidStoreNameOnAggregate"""
    grouped = _grouped_table()
    with pytest.raises(TopologyException) as excinfo:
        grouped.aggregate(
            lambda: "",
            lambda k, v, agg: agg + v,
            lambda k, v, agg: agg,
            materialized=Materialized.as_(INVALID_STORE_NAME),
        )
    _assert_topology_error(excinfo, INVALID_NAME_MESSAGE)


def test_should_not_allow_invalid_store_name_on_ktable_reduce():
    """KGroupedTableImplTest.java#shouldNotAllowInvalidStoreNameOnReduce"""
    grouped = _grouped_table()
    with pytest.raises(TopologyException) as excinfo:
        grouped.reduce(lambda v1, v2: v1 + v2, lambda v1, v2: v1, materialized=Materialized.as_(INVALID_STORE_NAME))
    _assert_topology_error(excinfo, INVALID_NAME_MESSAGE)


def test_named_rejects_invalid_name():
    """Named.validate (source) -- Named.as_ with an illegal processor name"""
    with pytest.raises(TopologyException) as excinfo:
        Named.as_(INVALID_STORE_NAME)
    _assert_topology_error(excinfo, INVALID_NAME_MESSAGE)


# ---------------------------------------------------------------------------------------------------------
# DSL: null function arguments (NPE in Kafka -> ValueError), messages asserted by KStreamImplTest
# ---------------------------------------------------------------------------------------------------------


def _test_stream():
    builder = StreamsBuilder()
    return builder.stream("topic", Consumed.with_(Serdes.String(), Serdes.String()))


@pytest.mark.parametrize(
    "java_test, call, message",
    [
        ("shouldNotAllowNullPredicateOnFilter", lambda s: s.filter(None), "predicate can't be null"),
        ("shouldNotAllowNullPredicateOnFilterWithNamed", lambda s: s.filter(None, named=Named.as_("filter")), "predicate can't be null"),
        ("shouldNotAllowNullPredicateOnFilterNot", lambda s: s.filter_not(None), "predicate can't be null"),
        ("shouldNotAllowNullMapperOnSelectKey", lambda s: s.select_key(None), "mapper can't be null"),
        ("shouldNotAllowNullMapperOnMap", lambda s: s.map(None), "mapper can't be null"),
        ("shouldNotAllowNullMapperOnMapWithNamed", lambda s: s.map(None, named=Named.as_("map")), "mapper can't be null"),
        ("shouldNotAllowNullMapperOnMapValues", lambda s: s.map_values(None), "valueMapper can't be null"),
        ("shouldNotAllowNullMapperOnFlatMap", lambda s: s.flat_map(None), "mapper can't be null"),
        ("shouldNotAllowNullMapperOnFlatMapValues", lambda s: s.flat_map_values(None), "valueMapper can't be null"),
        ("shouldNotAllowNullActionOnForEach", lambda s: s.foreach(None), "action can't be null"),
        ("shouldNotAllowNullActionOnPeek", lambda s: s.peek(None), "action can't be null"),
        ("shouldNotAllowNullKStreamOnMerge", lambda s: s.merge(None), "stream can't be null"),
        ("shouldNotAllowNullTopicOnTo", lambda s: s.to(None), "topic can't be null"),
        ("shouldNotAllowNullSelectorOnGroupBy", lambda s: s.group_by(None), "keySelector can't be null"),
        ("shouldNotAllowNullSelectorOnGroupByWithGrouped", lambda s: s.group_by(None, Grouped.as_("name")), "keySelector can't be null"),
    ],
    ids=lambda p: p if isinstance(p, str) and p.startswith("should") else None,
)
def test_kstream_null_arguments(java_test, call, message):
    """KStreamImplTest.java#<java_test>: null function argument -> ValueError with Kafka's message"""
    stream = _test_stream()
    with pytest.raises(ValueError) as excinfo:
        call(stream)
    assert str(excinfo.value) == message


@pytest.mark.parametrize(
    "java_test, call",
    [
        ("KGroupedStreamImplTest#shouldNotHaveNullAggregatorOnCogroup", lambda g: g.cogroup(None)),
        ("KGroupedStreamImplTest#shouldNotHaveNullReducerOnReduce", lambda g: g.reduce(None)),
        ("KGroupedStreamImplTest#shouldNotHaveNullInitializerOnAggregate",
         lambda g: g.aggregate(None, lambda k, v, a: a, materialized=Materialized.as_("store"))),
        ("KGroupedStreamImplTest#shouldNotHaveNullAdderOnAggregate",
         lambda g: g.aggregate(lambda: "", None, materialized=Materialized.as_("store"))),
        ("CogroupedKStreamImplTest#shouldNotHaveNullAggregatorOnCogroup",
         lambda g: g.cogroup(lambda k, v, a: a).cogroup(g, None)),
        ("CogroupedKStreamImplTest#shouldThrowNPEInCogroupIfKGroupedStreamIsNull",
         lambda g: g.cogroup(lambda k, v, a: a).cogroup(None, lambda k, v, a: a)),
        ("CogroupedKStreamImplTest#shouldNotHaveNullInitializerOnAggregate",
         lambda g: g.cogroup(lambda k, v, a: a).aggregate(None)),
        ("CogroupedKStreamImplTest#shouldNotHaveNullInitializerOnAggregateWitNamedAndMaterialized",
         lambda g: g.cogroup(lambda k, v, a: a).aggregate(None, named=Named.as_("name"), materialized=Materialized.as_("store"))),
    ],
    ids=lambda p: p.split("#")[-1] if isinstance(p, str) else None,
)
def test_kgrouped_stream_null_arguments(java_test, call):
    """KGroupedStreamImplTest.java / CogroupedKStreamImplTest.java: null function argument -> ValueError (NPE)"""
    grouped = _grouped_stream()
    with pytest.raises(ValueError):
        call(grouped)


@pytest.mark.parametrize(
    "java_test, call",
    [
        ("shouldNotAllowNullInitializerOnAggregate",
         lambda g: g.aggregate(None, lambda k, v, a: a, lambda k, v, a: a, materialized=Materialized.as_("store"))),
        ("shouldNotAllowNullAdderOnAggregate",
         lambda g: g.aggregate(lambda: "", None, lambda k, v, a: a, materialized=Materialized.as_("store"))),
        ("shouldNotAllowNullSubtractorOnAggregate",
         lambda g: g.aggregate(lambda: "", lambda k, v, a: a, None, materialized=Materialized.as_("store"))),
        ("shouldNotAllowNullAdderOnReduce",
         lambda g: g.reduce(None, lambda v1, v2: v1, materialized=Materialized.as_("store"))),
        ("shouldNotAllowNullSubtractorOnReduce",
         lambda g: g.reduce(lambda v1, v2: v1, None, materialized=Materialized.as_("store"))),
    ],
    ids=lambda p: p if isinstance(p, str) else None,
)
def test_kgrouped_table_null_arguments(java_test, call):
    """KGroupedTableImplTest.java#<java_test>: null function argument -> ValueError (NPE)"""
    grouped = _grouped_table()
    with pytest.raises(ValueError):
        call(grouped)

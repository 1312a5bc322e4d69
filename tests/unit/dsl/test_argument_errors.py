"""Bad DSL and Processor API arguments: a ValueError at the call, naming the argument and what was expected.

Null messages follow Kafka's ``Objects.requireNonNull`` wording (``StreamsBuilder``, ``KStreamImpl``, ``Named``,
``Materialized``, ``Branched``); wrong types, which Java's compiler rejects, read ``<what> must be <expected>``.
"""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Branched,
    Consumed,
    Grouped,
    JoinWindows,
    Materialized,
    Named,
    Processor,
    Produced,
    Repartitioned,
    Serdes,
    Stores,
    StreamsBuilder,
    Topology,
    TopologyException,
)
from streams_on_spark.dsl.params import Joined, StreamJoined
from streams_on_spark.errors import require_callable, require_instance, require_int, require_serde, require_str

S = Serdes.String()


class _Noop(Processor):
    def process(self, record):
        pass


def _kv_store(name="store"):
    return Stores.key_value_store_builder(Stores.in_memory_key_value_store(name), S, S)


def _topology_with_processor():
    return Topology().add_source("source", "topic").add_processor("processor", _Noop, "source")


def _call(target, method, *args):
    """``method(*args)`` on a fresh builder, stream or ``split()`` of it, so no case sees another's nodes."""
    def run():
        builder = StreamsBuilder()
        stream = builder.stream("in", Consumed.with_(S, S))
        return getattr(builder if target == "builder" else stream.split() if target == "split" else stream,
                       method)(*args)
    return run


OTHER_STREAM = StreamsBuilder().stream("other")
TABLE = StreamsBuilder().table("table")
GLOBAL_TABLE = StreamsBuilder().global_table("global")


CASES = [
    # StreamsBuilder
    (_call("builder", "stream", None), "topics can't be null"),
    (_call("builder", "stream", 5), "topics must be a non-empty str or a non-empty list"),
    (_call("builder", "stream", "t", "s"), "consumed must be a Consumed, got 's'"),
    (_call("builder", "table", None), "topic can't be null"),
    (_call("builder", "table", 5), "topic must be a non-empty str, got 5"),
    (_call("builder", "table", "t", "x"), "consumed must be a Consumed, got 'x'"),
    (_call("builder", "table", "t", Consumed.with_(S, S), "m"), "materialized must be a Materialized, got 'm'"),
    (_call("builder", "global_table", None), "topic can't be null"),
    (_call("builder", "global_table", "t", Named.as_("n")), "consumed must be a Consumed, got Named"),
    (_call("builder", "add_state_store", None), "builder can't be null"),
    (_call("builder", "add_state_store", "store"), "builder must be a StoreBuilder, got 'store'"),
    (_call("builder", "add_global_store", None, "t", None, _Noop), "storeBuilder can't be null"),
    (_call("builder", "add_global_store", _kv_store(), None, None, _Noop), "topic can't be null"),
    (_call("builder", "add_global_store", _kv_store(), "t", "c", _Noop), "consumed must be a Consumed"),
    (_call("builder", "add_global_store", _kv_store(), "t", None, None), "stateUpdateSupplier can't be null"),
    (_call("builder", "build", "all"), "config must be a Mapping, got 'all'"),
    # KStream: functions
    (_call("stream", "filter", None), "predicate can't be null"),
    (_call("stream", "filter_not", 5), "predicate must be callable, got 5"),
    (_call("stream", "map", None), "mapper can't be null"),
    (_call("stream", "map_values", "upper"), "valueMapper must be callable, got 'upper'"),
    (_call("stream", "flat_map", None), "mapper can't be null"),
    (_call("stream", "flat_map_values", None), "valueMapper can't be null"),
    (_call("stream", "select_key", None), "mapper can't be null"),
    (_call("stream", "peek", None), "action can't be null"),
    (_call("stream", "foreach", None), "action can't be null"),
    (_call("stream", "group_by", None), "keySelector can't be null"),
    (_call("stream", "process", None), "processorSupplier can't be null"),
    (_call("stream", "process", _Noop()), "processorSupplier must be a zero-argument callable"),
    (_call("stream", "process", _Noop, None), "stateStoreNames can't be null"),
    (_call("stream", "process", _Noop, 5), "stateStoreNames must be a non-empty str, got 5"),
    # KStream: parameter objects
    (_call("stream", "filter", lambda k, v: True, "name"), "named must be a Named, got 'name'"),
    (_call("stream", "split", "name"), "named must be a Named, got 'name'"),
    (_call("stream", "to", None), "topic can't be null"),
    (_call("stream", "to", 5), "topic must be a non-empty str, or a TopicNameExtractor (a callable (key, value, "
                               "record_context) -> str), got 5"),
    (_call("stream", "to", "out", "x"), "produced must be a Produced, got 'x'"),
    (_call("stream", "group_by_key", "x"), "grouped must be a Grouped, got 'x'"),
    (_call("stream", "group_by", lambda k, v: k, "x"), "grouped must be a Grouped, got 'x'"),
    (_call("stream", "repartition", "x"), "repartitioned must be a Repartitioned, got 'x'"),
    (_call("stream", "to_table", Named.as_("n"), "m"), "materialized must be a Materialized, got 'm'"),
    (_call("stream", "merge", None), "stream can't be null"),
    (_call("stream", "merge", "s"), "stream must be a KStream, got 's'"),
    # KStream: joins
    (_call("stream", "join", None, lambda a, b: a), "otherStream can't be null"),
    (_call("stream", "join", "t", lambda a, b: a), "otherStream must be a KStream or a KTable or a GlobalKTable"),
    (_call("stream", "outer_join", "t", lambda a, b: a, None), "otherStream must be a KStream, got 't'"),
    (_call("stream", "join", OTHER_STREAM, None), "joiner can't be null"),
    (_call("stream", "join", OTHER_STREAM, lambda a, b: a), "windows can't be null"),
    (_call("stream", "join", OTHER_STREAM, lambda a, b: a, JoinWindows.of_time_difference_with_no_grace(5), "sj"),
     "streamJoined must be a StreamJoined, got 'sj'"),
    (_call("stream", "join", TABLE, lambda a, b: a, "joined"),
     "joined must be a Joined, got 'joined'"),
    (_call("stream", "left_join", TABLE, lambda a, b: a, None, "extra"),
     "stream-table join's fourth argument must be absent"),
    (_call("stream", "join", GLOBAL_TABLE, None, lambda a, b: a), "keySelector can't be null"),
    (_call("stream", "join", GLOBAL_TABLE, lambda k, v: k, None), "joiner can't be null"),
    (_call("stream", "join", GLOBAL_TABLE, lambda k, v: k, lambda a, b: a, "n"),
     "named must be a Named, got 'n'"),
    # KTable
    (lambda: StreamsBuilder().table("t").to_stream("x"),
     "to_stream's first argument must be a mapper(key, value) -> new key or a Named, got 'x'"),
    # BranchedKStream
    (_call("split", "branch", None), "predicate can't be null"),
    (_call("split", "branch", lambda k, v: True, "b"), "branched must be a Branched, got 'b'"),
    (_call("split", "default_branch", "b"), "branched must be a Branched, got 'b'"),
]


PARAMS = [
    (lambda: Named.as_(None), "name can't be null"),
    (lambda: Named.as_(5), "Name must be a str, got 5"),
    (lambda: Grouped.as_(5), "Name must be a str, got 5"),
    (lambda: Materialized.as_(None), "storeName or supplier can't be null"),
    (lambda: Materialized.as_(5), "storeName or supplier must be a str or a store supplier"),
    (lambda: Materialized.as_(_kv_store()), "or a store supplier"),  # a builder is not a supplier
    (lambda: Materialized.with_(S, "long"), "value_serde must be a Serde (e.g. Serdes.String()), got 'long'"),
    (lambda: Materialized.as_("s").with_key_serde(Serdes.String), "key_serde must be a Serde"),  # not called
    (lambda: Consumed.with_("str", S), "key_serde must be a Serde"),
    (lambda: Consumed.with_(S, S).with_timestamp_extractor(5), "timestamp_extractor must be a TimestampExtractor"),
    (lambda: Produced.with_(S, 5), "value_serde must be a Serde"),
    (lambda: Produced.stream_partitioner("p"), "partitioner must be callable, got 'p'"),
    (lambda: Grouped.with_(S, S).with_value_serde(1.5), "value_serde must be a Serde"),
    (lambda: Repartitioned.with_number_of_partitions(0), "number_of_partitions must be an int >= 1, got 0"),
    (lambda: Repartitioned.with_number_of_partitions("2"), "number_of_partitions must be an int, got '2'"),
    (lambda: Repartitioned.stream_partitioner(3), "partitioner must be callable, got 3"),
    (lambda: Repartitioned.with_(S, "x"), "value_serde must be a Serde"),
    (lambda: Branched.as_(None), "name can't be null"),
    (lambda: Branched.with_function(None), "chain function can't be null"),
    (lambda: Branched.with_consumer(None), "chain consumer can't be null"),
    (lambda: Branched.with_function("f"), "chain must be callable, got 'f'"),
    (lambda: StreamJoined.with_(S, S, "x"), "other_value_serde must be a Serde"),
    (lambda: Joined.with_(S, "x", S), "value_serde must be a Serde"),
]


TOPOLOGY = [
    (lambda: Topology().add_source(5, "topic"), "name must be a non-empty str, got 5"),
    (lambda: Topology().add_source("s", "topic", 7), "topic must be a non-empty str, got 7"),
    (lambda: Topology().add_source("s", "topic", key_serde="String"), "key_serde must be a Serde"),
    (lambda: Topology().add_source("s", "topic", timestamp_extractor=0),
     "timestamp_extractor must be a TimestampExtractor, a Kafka extractor's class name or a function"),
    (lambda: Topology().add_source("s", "t").add_processor("p", _Noop, 5), "parent name must be a non-empty str"),
    (lambda: Topology().add_processor("p", _Noop(), "s"), "processor supplier must be a zero-argument callable"),
    (lambda: Topology().add_source("s", "t").add_sink("k", 5, "s"),
     "topic must be a non-empty str, or a TopicNameExtractor (a callable (key, value, record_context) -> str), got 5"),
    (lambda: Topology().add_source("s", "t").add_sink("k", "o", "s", value_serde=1), "value_serde must be a Serde"),
    (lambda: Topology().add_source("s", "t").add_sink("k", "o", "s", partitioner="p"), "partitioner must be callable"),
    (lambda: Topology().add_state_store("store"), "storeBuilder must be a StoreBuilder, got 'store'"),
    (lambda: _topology_with_processor().add_state_store(_kv_store(), 5), "processor name must be a non-empty str"),
    (lambda: Topology().add_global_store("s", "src", "t", "p", _Noop), "storeBuilder must be a StoreBuilder"),
    (lambda: Topology().add_global_store(_kv_store().with_logging_disabled(), "src", 5, "p", _Noop),
     "topic must be a non-empty str, got 5"),
    (lambda: Topology().add_global_store(_kv_store().with_logging_disabled(), "src", "t", "p", _Noop,
                                         key_serde="k"), "key_serde must be a Serde"),
    (lambda: _topology_with_processor().connect_processor_and_state_stores("processor", 5),
     "state store name must be a non-empty str, got 5"),
]


HELPERS = [
    (lambda: require_instance(None, "consumed", Consumed), "consumed can't be null"),
    (lambda: require_instance(1, "x", (str, bytes)), "x must be a str or a bytes, got 1"),
    (lambda: require_instance(1, "x", Exception), "x must be an Exception, got 1"),
    (lambda: require_callable(None, "mapper"), "mapper can't be null"),
    (lambda: require_str("", "topic"), "topic must be a non-empty str, got ''"),
    (lambda: require_int(True, "n"), "n must be an int, got True"),
    (lambda: require_int(-1, "n", minimum=0), "n must be an int >= 0, got -1"),
    (lambda: require_serde(None, "key_serde", optional=False), "key_serde can't be null"),
    (lambda: require_serde(object(), "key_serde"), "key_serde must be a Serde (e.g. Serdes.String()), got object"),
    (lambda: require_int("y" * 500, "n"), "n must be an int, got 'yyyy"),  # long values are shortened
]

ALL = CASES + PARAMS + TOPOLOGY + HELPERS


@pytest.mark.parametrize("call, fragment", ALL, ids=[fragment for _, fragment in ALL])
def test_bad_argument_is_a_short_value_error_naming_it(call, fragment):
    with pytest.raises(ValueError) as excinfo:
        call()
    assert fragment in str(excinfo.value)
    assert len(str(excinfo.value)) < 200


@pytest.mark.parametrize("name", [".", ".."])
def test_dot_names_are_illegal_as_in_kafka(name):
    with pytest.raises(TopologyException, match='Name cannot be "." or ".."'):
        Named.as_(name)


def test_a_rejected_call_adds_nothing_to_the_topology():
    builder = StreamsBuilder()
    stream = builder.stream("in", Consumed.with_(S, S))
    with pytest.raises(ValueError):
        stream.to("out", "not produced")
    with pytest.raises(ValueError):
        builder.table(None)
    assert "KSTREAM-SINK" not in str(builder.build().describe())


def test_shared_helpers_return_the_value_and_let_none_through_when_optional():
    assert require_instance(None, "consumed", Consumed, optional=True) is None
    assert require_callable(None, "f", optional=True) is None
    assert require_serde(None, "key_serde") is None
    assert require_int(3, "n", minimum=1) == 3
    assert require_str("t", "topic") == "t"

"""KIP-1111 ``ensure.explicit.internal.resource.naming``: building fails listing every generated internal name.

Every expected message below was recorded from Kafka Streams 4.3.1 itself: the same topologies built with
``new StreamsBuilder(new TopologyConfig(new StreamsConfig(props)))`` and ``ensure.explicit.internal.resource.naming
=true`` (a throwaway Java program against kafka-streams-4.3.1.jar; the reference harness in deps/kafka-reference
records runs, not build failures). Kafka's text comes from ``InternalTopologyBuilder.checkUnprovidedNames``:
one line per kind (changelogs, stores, repartition topics), each ending in a newline, names in the order the DSL
generated them.
"""
from __future__ import annotations

import datetime
import logging
from typing import Callable

import pytest

from streams_on_spark.topology import builder as builder_module

from streams_on_spark import (
    BufferConfig,
    Grouped,
    JoinWindows,
    Joined,
    KeyValue,
    Materialized,
    Named,
    Serdes,
    SessionWindows,
    StreamJoined,
    StreamsBuilder,
    Suppressed,
    TimeWindows,
)
from streams_on_spark.errors import TopologyException

S = Serdes.String()
ENSURE = {"ensure.explicit.internal.resource.naming": "true"}
SECOND = datetime.timedelta(seconds=1)


def _aggregate_after_key_change(b: StreamsBuilder) -> None:
    b.stream("in").select_key(lambda k, v: v).group_by_key().count()


def _named_store_names_its_repartition(b: StreamsBuilder) -> None:
    # Kafka: a repartition topic takes a queryable store's name, so it counts as named
    b.stream("in").select_key(lambda k, v: v).group_by_key().count(Materialized.as_("counts"))


def _grouped_names_repartition_only(b: StreamsBuilder) -> None:
    b.stream("in").select_key(lambda k, v: v).group_by_key(Grouped.as_("by-value")).count()


def _join_after_named_rekey(b: StreamsBuilder) -> None:
    # the repartition topic is named after the Named key selector, yet Kafka counts it as generated: only
    # Joined.as_ names a join's repartition topic
    table = b.table("tab")
    b.stream("in").select_key(lambda k, v: v, Named.as_("rekey")).join(table, lambda x, y: x)


def _stream_stream_left_join(b: StreamsBuilder) -> None:
    b.stream("left").left_join(b.stream("right"), lambda x, y: x, JoinWindows.of_time_difference_with_no_grace(SECOND))


def _stream_stream_join_store_named(b: StreamsBuilder) -> None:
    b.stream("left").outer_join(b.stream("right"), lambda x, y: x, JoinWindows.of_time_difference_with_no_grace(SECOND),
                                StreamJoined.as_("j").with_store_name("js"))


def _windowed_count_suppressed(b: StreamsBuilder) -> None:
    (b.stream("in").group_by_key().windowed_by(TimeWindows.of_size_with_no_grace(10 * SECOND))
     .count(Materialized.as_("win")).suppress(Suppressed.until_window_closes(BufferConfig.unbounded())))


def _suppress_without_logging(b: StreamsBuilder) -> None:
    (b.stream("in").group_by_key().windowed_by(TimeWindows.of_size_with_no_grace(10 * SECOND))
     .count(Materialized.as_("win"))
     .suppress(Suppressed.until_window_closes(BufferConfig.unbounded().with_logging_disabled())))


def _repartition_and_to_table(b: StreamsBuilder) -> None:
    b.stream("in").repartition().select_key(lambda k, v: v).to_table()


def _global_and_unlogged(b: StreamsBuilder) -> None:
    b.global_table("g")
    b.stream("in").group_by_key().reduce(lambda x, y: y, Materialized.with_(S, S).with_logging_disabled())


def _table_group_by(b: StreamsBuilder) -> None:
    # Kafka does not record a KGroupedTable's repartition topic, only the store
    b.table("tab", Materialized.as_("t")).group_by(lambda k, v: KeyValue(v, k)).count()


def _cogroup(b: StreamsBuilder) -> None:
    g1 = b.stream("a").select_key(lambda k, v: v).group_by_key()
    g2 = b.stream("b").group_by_key()
    g1.cogroup(lambda k, v, agg: agg + 1).cogroup(g2, lambda k, v, agg: agg + 1).aggregate(lambda: 0)


def _session_windowed_after_key_change(b: StreamsBuilder) -> None:
    (b.stream("in").select_key(lambda k, v: v).group_by_key()
     .windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(5 * SECOND)).count())


def _all_named(b: StreamsBuilder) -> None:
    table = b.table("tab", Materialized.as_("tab-store"))
    (b.stream("in").select_key(lambda k, v: v).join(table, lambda x, y: x, Joined.as_("j"))
     .group_by_key(Grouped.as_("g")).count(Materialized.as_("counts")))


def _filter_unnamed_materialized(b: StreamsBuilder) -> None:
    # an unnamed Materialized on a KTable filter burns an index and materializes nothing: not recorded
    b.table("tab", Materialized.as_("t")).filter(lambda k, v: True, Materialized.with_(S, S))


CHANGELOGS = "Following changelog topic(s) has not been named: "
STORES = "Following state store(s) has not been named: "
REPARTITIONS = "Following repartition topic(s) has not been named: "

# (topology, Kafka 4.3.1's message, or None when Kafka builds it)
KAFKA_4_3_1 = [
    (_aggregate_after_key_change,
     f"{CHANGELOGS}KSTREAM-AGGREGATE-STATE-STORE-0000000002-changelog\n"
     f"{STORES}KSTREAM-AGGREGATE-STATE-STORE-0000000002\n"
     f"{REPARTITIONS}KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition\n"),
    (_named_store_names_its_repartition, None),
    (_grouped_names_repartition_only,
     f"{CHANGELOGS}KSTREAM-AGGREGATE-STATE-STORE-0000000002-changelog\n"
     f"{STORES}KSTREAM-AGGREGATE-STATE-STORE-0000000002\n"),
    (_join_after_named_rekey,
     f"{CHANGELOGS}tab-STATE-STORE-0000000000-changelog\n"
     f"{STORES}tab-STATE-STORE-0000000000\n"
     f"{REPARTITIONS}rekey-repartition\n"),
    (_stream_stream_left_join,
     f"{CHANGELOGS}KSTREAM-JOINTHIS-0000000004-store-changelog, KSTREAM-OUTEROTHER-0000000005-store-changelog, "
     "KSTREAM-OUTERSHARED-0000000004-store-changelog\n"
     f"{STORES}KSTREAM-JOINTHIS-0000000004-store, KSTREAM-OUTEROTHER-0000000005-store, "
     "KSTREAM-OUTERSHARED-0000000004-store\n"),
    (_stream_stream_join_store_named, None),
    (_windowed_count_suppressed, f"{CHANGELOGS}KTABLE-SUPPRESS-STATE-STORE-0000000003-changelog\n"),
    (_suppress_without_logging, None),
    (_repartition_and_to_table,
     f"{CHANGELOGS}KSTREAM-TOTABLE-STATE-STORE-0000000007-changelog\n"
     f"{STORES}KSTREAM-TOTABLE-STATE-STORE-0000000007\n"
     f"{REPARTITIONS}KSTREAM-REPARTITION-0000000001-repartition, KSTREAM-TOTABLE-0000000006-repartition\n"),
    (_global_and_unlogged, f"{STORES}g-STATE-STORE-0000000000, KSTREAM-REDUCE-STATE-STORE-0000000004\n"),
    (_table_group_by,
     f"{CHANGELOGS}KTABLE-AGGREGATE-STATE-STORE-0000000003-changelog\n"
     f"{STORES}KTABLE-AGGREGATE-STATE-STORE-0000000003\n"),
    (_cogroup,
     f"{CHANGELOGS}COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog\n"
     f"{STORES}COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003\n"
     f"{REPARTITIONS}COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition\n"),
    (_session_windowed_after_key_change,
     f"{CHANGELOGS}KSTREAM-AGGREGATE-STATE-STORE-0000000002-changelog\n"
     f"{STORES}KSTREAM-AGGREGATE-STATE-STORE-0000000002\n"
     f"{REPARTITIONS}KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition\n"),
    (_all_named, None),
    (_filter_unnamed_materialized, None),
]


@pytest.mark.parametrize("topology, message", KAFKA_4_3_1, ids=[t.__name__.strip("_") for t, _ in KAFKA_4_3_1])
def test_building_with_explicit_naming_ensured_matches_kafka(topology: Callable[[StreamsBuilder], None], message):
    builder = StreamsBuilder(ENSURE)     # Kafka's StreamsBuilder(TopologyConfig)
    topology(builder)
    if message is None:
        builder.build()
        return
    with pytest.raises(TopologyException) as info:
        builder.build()
    assert str(info.value) == "Invalid topology: " + message


def test_build_config_turns_it_on_too():
    builder = StreamsBuilder()
    _aggregate_after_key_change(builder)
    with pytest.raises(TopologyException, match="KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition"):
        builder.build(ENSURE)


@pytest.mark.parametrize("config", [None, {}, {"ensure.explicit.internal.resource.naming": False},
                                    {"ensure.explicit.internal.resource.naming": "false"}])
def test_by_default_generated_names_build_with_kafkas_warning(caplog, config):
    builder_module._warned_names.clear()
    builder = StreamsBuilder(config)
    _aggregate_after_key_change(builder)
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.topology.builder"):
        topology = builder.build(config)
    assert "KSTREAM-AGGREGATE-STATE-STORE-0000000002" in topology.describe().__str__()
    (record,) = [r for r in caplog.records if "Explicit naming" in r.getMessage()]
    assert record.getMessage().startswith(
        "Explicit naming for internal resources is currently disabled. If you want to enforce user-defined names "
        "for all internal resources, set ensure.explicit.internal.resource.naming to true.")
    assert "Following repartition topic(s) has not been named: KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition" \
        in record.getMessage()
    # what exists here only: a store and a repartition topic, not the changelog topic this runtime never creates
    assert "changelog" not in record.getMessage()


def test_the_warning_is_logged_once_per_process_and_not_for_changelogs_alone(caplog):
    """A suite builds the same topology many times: its warning comes once. A topology whose only generated name is
    a changelog topic (a suppress buffer's) has nothing to warn about here."""
    builder_module._warned_names.clear()
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.topology.builder"):
        for _ in range(3):
            builder = StreamsBuilder()
            _aggregate_after_key_change(builder)
            builder.build()
        suppressed = StreamsBuilder()
        _windowed_count_suppressed(suppressed)
        suppressed.build()
    assert [r.getMessage().count("has not been named") for r in caplog.records] == [2]
    with pytest.raises(TopologyException, match="KTABLE-SUPPRESS-STATE-STORE-0000000003-changelog"):
        _windowed_count_suppressed(ensured := StreamsBuilder(ENSURE))
        ensured.build()   # ensured naming still lists it, as Kafka does


def test_a_fully_named_topology_logs_nothing(caplog):
    builder = StreamsBuilder()
    _all_named(builder)
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.topology.builder"):
        builder.build()
    assert "Explicit naming" not in caplog.text


def test_a_bad_flag_value_is_kafkas_config_error():
    with pytest.raises(ValueError) as info:
        StreamsBuilder({"ensure.explicit.internal.resource.naming": "yes"})
    assert str(info.value) == ("Invalid value yes for configuration ensure.explicit.internal.resource.naming: "
                               "Expected value to be either true or false")

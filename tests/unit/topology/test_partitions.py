"""Repartition topic partition counts and copartition enforcement, as Kafka resolves them at start-up."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    Materialized,
    Repartitioned,
    Serdes,
    StreamsBuilder,
    TopologyException,
    TopologyTestDriverBuilder,
)
from streams_on_spark.topology.partitions import feeds_back, resolve_partition_counts

S = Serdes.String()


def counts_for(topology, app="app", **known):
    topology.internal_builder.application_id = app
    return resolve_partition_counts(topology.internal_builder, known)


def test_repartition_topic_takes_the_max_of_its_writers_sources():
    builder = StreamsBuilder()
    merged = builder.stream("small", Consumed.with_(S, S)).merge(builder.stream("big", Consumed.with_(S, S)))
    merged.select_key(lambda k, v: v).group_by_key(Grouped.as_("g")).count()
    counts = counts_for(builder.build(), small=2, big=6)
    assert counts["app-g-repartition"] == 6


def test_explicit_number_of_partitions_wins():
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).repartition(Repartitioned.as_("r").with_number_of_partitions(3)).to("out")
    counts = counts_for(builder.build(), **{"in": 8})
    assert counts["app-r-repartition"] == 3


def test_chained_repartitions_resolve_iteratively():
    builder = StreamsBuilder()
    (builder.stream("in", Consumed.with_(S, S))
     .repartition(Repartitioned.as_("first"))
     .select_key(lambda k, v: v)
     .group_by_key(Grouped.as_("second")).count())
    counts = counts_for(builder.build(), **{"in": 5})
    assert counts["app-first-repartition"] == 5
    assert counts["app-second-repartition"] == 5


def test_missing_source_topic_is_named():
    builder = StreamsBuilder()
    builder.stream("present", Consumed.with_(S, S)).to("out")
    builder.stream("absent", Consumed.with_(S, S)).to("out2")
    with pytest.raises(TopologyException, match="absent"):
        counts_for(builder.build(), present=1)


def cogroup_topology():
    builder = StreamsBuilder()
    one = builder.stream("one", Consumed.with_(S, S)).group_by_key()
    two = builder.stream("two", Consumed.with_(S, S)).group_by_key()
    one.cogroup(lambda k, v, a: a + v).cogroup(two, lambda k, v, a: a + v).aggregate(
        lambda: "", materialized=Materialized.as_("agg").with_value_serde(S))
    return builder.build()


def test_copartition_mismatch_names_topics_and_counts():
    with pytest.raises(TopologyException) as err:
        counts_for(cogroup_topology(), one=2, two=3)
    assert str(err.value) == "Invalid topology: Topics not co-partitioned: [{one=2, two=3}]"


def test_copartition_mismatch_fails_when_the_driver_is_built():
    builder = TopologyTestDriverBuilder(cogroup_topology()).declare_topic("one", 2).declare_topic("two", 4)
    with pytest.raises(TopologyException, match=r"Topics not co-partitioned: \[\{one=2, two=4\}\]"):
        builder.build()


def test_copartitioned_topics_with_equal_counts_pass():
    assert counts_for(cogroup_topology(), one=3, two=3) == {"one": 3, "two": 3}


def subtopologies_of(topology, app="app"):
    topology.internal_builder.application_id = app
    return topology.internal_builder.subtopologies()


def test_a_foreign_key_join_feeds_back_a_repartition_does_not():
    """The subscription and response topics make a cycle between two subtopologies; repartitions go one way."""
    builder = StreamsBuilder()
    orders = builder.table("orders", Consumed.with_(S, S))
    orders.left_join(builder.table("customers", Consumed.with_(S, S)), lambda v: v, lambda o, c: o).to_stream().to("o")
    assert feeds_back(subtopologies_of(builder.build()))
    builder = StreamsBuilder()
    grouped = builder.stream("in", Consumed.with_(S, S)).select_key(lambda k, v: v).group_by_key(Grouped.as_("g"))
    grouped.count().to_stream().to("counts")
    chained = builder.build()
    assert len(subtopologies_of(chained)) == 2 and not feeds_back(subtopologies_of(chained))


def test_a_subtopology_writing_the_topic_it_reads_feeds_back():
    builder = StreamsBuilder()
    builder.stream("loop", Consumed.with_(S, S)).filter(lambda k, v: v != "stop").to("loop")
    assert feeds_back(subtopologies_of(builder.build()))

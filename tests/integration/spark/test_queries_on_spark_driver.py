"""Interactive queries on the driver's Spark engine (2 partitions): ``store()`` and ``query()`` answer as on the
in-process engine, after each batch of input, and as the driver's store accessors."""
from __future__ import annotations

import pytest

from streams_on_spark import Consumed, Grouped, Materialized, Serdes, StreamsBuilder, TopologyTestDriverBuilder
from streams_on_spark.query import (
    FailureReason,
    HostInfo,
    KeyQuery,
    Position,
    PositionBound,
    QueryableStoreTypes,
    RangeQuery,
    StateQueryRequest,
    StoreQueryParameters,
    StreamsMetadata,
    TopicPartition,
    UnknownStateStoreException,
)

pytestmark = pytest.mark.spark
S, L = Serdes.String(), Serdes.Long()


def counts_driver(engine: str, spark=None):
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .count(Materialized.as_("counts").with_key_serde(S).with_value_serde(L)))
    driver_builder = (TopologyTestDriverBuilder(builder.build()).with_config({"application.id": "iq-spark",
                                                                             "application.server": "h:1"})
                      .declare_topic("events", 2))
    if engine == "spark":
        driver_builder = driver_builder.with_engine("spark", spark)
    return driver_builder.build()


def answers(driver) -> tuple:
    """What the queries answer: every key's count through store(), and each partition's RangeQuery through query()."""
    store = driver.store(StoreQueryParameters.from_name_and_type("counts", QueryableStoreTypes.key_value_store()))
    everything = sorted((kv.key, kv.value) for kv in store.all())
    point = {key: store.get(key) for key, _ in everything}
    per_partition = {p: sorted((kv.key, kv.value) for kv in r.get_result())
                     for p, r in driver.query(StateQueryRequest.in_store("counts")
                                              .with_query(RangeQuery.with_no_bounds())).get_partition_results().items()}
    accessors = {p: sorted((kv.key, kv.value) for kv in driver.get_key_value_store("counts", p).all())
                 for p in driver.store_partitions("counts")}
    assert per_partition == accessors
    return everything, point, per_partition


def test_queries_on_the_spark_engine_answer_as_in_process(spark):
    batches = [["a", "b", "a"], ["c", "a", "d", "b"], ["e"]]
    with counts_driver("local") as local, counts_driver("spark", spark) as on_spark:
        inputs = [d.create_input_topic("events", S, S, start_timestamp=0) for d in (local, on_spark)]
        for batch in batches:
            for topic in inputs:
                topic.pipe_key_value_list([(key, "x") for key in batch])   # one Spark batch
            assert answers(on_spark) == answers(local)
        result = on_spark.query(StateQueryRequest.in_store("counts").with_query(KeyQuery.with_key("a")))
        assert result.get_only_partition_result().get_result() == 3
        assert result.get_position() == local.query(StateQueryRequest.in_store("counts").with_query(
            KeyQuery.with_key("a"))).get_position()   # the input offsets each task processed
        assert on_spark.query_metadata_for_key("counts", "a", S) == local.query_metadata_for_key("counts", "a", S)
        assert on_spark.metadata_for_all_streams_clients() == local.metadata_for_all_streams_clients() == [
            StreamsMetadata(HostInfo("h", 1), frozenset({"counts"}),
                            frozenset({TopicPartition("events", 0), TopicPartition("events", 1)}))]
        # a bound at the answered position is met; one record further, each partition is NOT_UP_TO_BOUND
        answered = result.get_position()
        ahead = Position.from_map({"events": {p: o + 1 for p, o in answered.get_partition_positions("events").items()}})
        request = StateQueryRequest.in_store("counts").with_query(KeyQuery.with_key("a"))
        for bound, expected in ((answered, None), (ahead, FailureReason.NOT_UP_TO_BOUND)):
            answers_ = on_spark.query(request.with_position_bound(PositionBound.at(bound))).get_partition_results()
            assert {None if r.is_success() else r.get_failure_reason() for r in answers_.values()} == {expected}
        with pytest.raises(UnknownStateStoreException):
            on_spark.store(StoreQueryParameters.from_name_and_type("nope", QueryableStoreTypes.key_value_store()))

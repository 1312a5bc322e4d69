"""Interactive queries on the TopologyTestDriver (local engine, 1 and 4 partitions): ``store()`` answers as the
driver's store accessors over every partition; IQv2 ``query()`` answers per partition with Kafka's failure reasons."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    KeyValue,
    Materialized,
    Serdes,
    SessionWindows,
    Stores,
    StreamsBuilder,
    TimeWindows,
    TopologyTestDriverBuilder,
    ValueAndTimestamp,
    VersionedRecord,
)
from streams_on_spark.errors import IllegalStateError, UnsupportedOperationError
from streams_on_spark.query import (
    FailureReason,
    HostInfo,
    InvalidStateStoreException,
    InvalidStateStorePartitionException,
    KeyQuery,
    Position,
    PositionBound,
    QueryableStoreTypes,
    RangeQuery,
    StateQueryRequest,
    StoreQueryParameters,
    StreamsStoppedException,
    TimestampedKeyQuery,
    TimestampedRangeQuery,
    TopicPartition,
    UnknownStateStoreException,
    VersionedKeyQuery,
    WindowKeyQuery,
    WindowRangeQuery,
)

S, L = Serdes.String(), Serdes.Long()
KEYS = ["a", "b", "c", "d", "e", "f", "g", "h", "ab", "ba"]


def topology():
    builder = StreamsBuilder()
    grouped = builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
    grouped.count(Materialized.as_("counts").with_key_serde(S).with_value_serde(L))
    grouped.windowed_by(TimeWindows.of_size_and_grace(10, 100)).count(
        Materialized.as_("window-counts").with_key_serde(S).with_value_serde(L))
    grouped.windowed_by(SessionWindows.of_inactivity_gap_and_grace(5, 100)).count(
        Materialized.as_("session-counts").with_key_serde(S).with_value_serde(L))
    builder.table("prices", Consumed.with_(S, S),
                  Materialized.as_(Stores.persistent_versioned_key_value_store("prices", 100))
                  .with_key_serde(S).with_value_serde(S))
    builder.global_table("globals", Consumed.with_(S, S), Materialized.as_("global-store"))
    return builder.build()


def driver(partitions: int, config=None):
    builder = TopologyTestDriverBuilder(topology()).with_config(config or {})
    if partitions > 1:
        for topic in ("events", "prices", "globals"):
            builder.declare_topic(topic, partitions)
    d = builder.build()
    events = d.create_input_topic("events", S, S)
    for i, key in enumerate(KEYS * 2 + KEYS[:4]):
        events.pipe_input(key, "x", i * 3)
    prices = d.create_input_topic("prices", S, S)
    for key, value, ts in (("a", "p10", 10), ("a", "p20", 20), ("b", "q15", 15), ("a", "p40", 40)):
        prices.pipe_input(key, value, ts)
    d.create_input_topic("globals", S, S).pipe_input("g", "global", 5)
    return d


@pytest.fixture(params=[1, 4], ids=["1-partition", "4-partitions"])
def drv(request):
    d = driver(request.param)
    yield d
    d.close()


def params(name, store_type):
    return StoreQueryParameters.from_name_and_type(name, store_type)


def over_partitions(d, accessor, name, read):
    """A read on every partition's store through the driver's accessor, entries of all partitions together."""
    out = []
    for p in d.store_partitions(name):
        out.extend(read(getattr(d, accessor)(name, p)))
    return out


def first(d, accessor, name, read):
    found = [r for p in d.store_partitions(name) if (r := read(getattr(d, accessor)(name, p))) is not None]
    assert len(found) <= 1
    return found[0] if found else None


def test_key_value_store_spans_every_task(drv):
    store = drv.store(params("counts", QueryableStoreTypes.key_value_store()))
    for key in KEYS + ["zz"]:
        assert store.get(key) == first(drv, "get_key_value_store", "counts", lambda s: s.get(key))
    assert store.get("a") == 3
    assert list(store.all()) == over_partitions(drv, "get_key_value_store", "counts", lambda s: list(s.all()))
    assert sorted(kv.key for kv in store.all()) == sorted(KEYS)
    assert list(store.range("b", "d")) == over_partitions(drv, "get_key_value_store", "counts",
                                                          lambda s: list(s.range("b", "d")))
    assert list(store.reverse_all()) == over_partitions(drv, "get_key_value_store", "counts",
                                                        lambda s: list(s.reverse_all()))
    assert sorted(kv.key for kv in store.prefix_scan("a", S)) == ["a", "ab"]
    assert store.approximate_num_entries() == len(KEYS)


def test_timestamped_store_type_keeps_the_timestamps(drv):
    store = drv.store(params("counts", QueryableStoreTypes.timestamped_key_value_store()))
    assert store.get("a") == ValueAndTimestamp(3, 60)
    assert list(store.all()) == over_partitions(drv, "get_timestamped_key_value_store", "counts",
                                                lambda s: list(s.all()))


def test_window_stores(drv):
    plain = drv.store(params("window-counts", QueryableStoreTypes.window_store()))
    stamped = drv.store(params("window-counts", QueryableStoreTypes.timestamped_window_store()))
    assert plain.fetch("a", 0) == 1
    assert list(plain.fetch("a", 0, 100)) == first(drv, "get_window_store", "window-counts",
                                                   lambda s: list(s.fetch("a", 0, 100)) or None)
    assert list(plain.all()) == over_partitions(drv, "get_window_store", "window-counts", lambda s: list(s.all()))
    assert list(stamped.fetch_all(0, 30)) == over_partitions(drv, "get_timestamped_window_store", "window-counts",
                                                             lambda s: list(s.fetch_all(0, 30)))
    assert list(plain.backward_fetch("zz", 0, 100)) == []


def test_session_store(drv):
    store = drv.store(params("session-counts", QueryableStoreTypes.session_store()))
    assert list(store.fetch("a")) == first(drv, "get_session_store", "session-counts",
                                           lambda s: list(s.fetch("a")) or None)
    assert list(store.fetch(None, None)) == over_partitions(drv, "get_session_store", "session-counts",
                                                            lambda s: list(s.fetch(None, None)))
    assert store.fetch_session("a", 0, 0) == 1
    assert list(store.find_sessions("zz", 0, 100)) == []


def test_global_store_is_read_whole(drv):
    store = drv.store(params("global-store", QueryableStoreTypes.key_value_store()))
    assert store.get("g") == "global"
    assert list(store.all()) == [KeyValue("g", "global")]


def test_with_partition_reads_one_task():
    with driver(4) as d:
        for p in d.store_partitions("counts"):
            one = d.store(params("counts", QueryableStoreTypes.key_value_store()).with_partition(p))
            assert list(one.all()) == list(d.get_key_value_store("counts", p).all())
        bad = d.store(params("counts", QueryableStoreTypes.key_value_store()).with_partition(7))
        with pytest.raises(InvalidStateStorePartitionException,
                           match="The specified partition 7 for store counts does not exist."):
            bad.get("a")


def test_store_errors_are_kafkas(drv):
    with pytest.raises(UnknownStateStoreException, match="Cannot get state store nope because no such store is "
                                                         "registered in the topology."):
        drv.store(params("nope", QueryableStoreTypes.key_value_store()))
    wrong = drv.store(params("counts", QueryableStoreTypes.session_store()))   # checked at the read, as Kafka's
    with pytest.raises(InvalidStateStoreException, match="does not accept the actual store type"):
        wrong.fetch("a")
    with pytest.raises(InvalidStateStoreException, match="does not accept"):
        drv.store(params("prices", QueryableStoreTypes.key_value_store())).get("a")   # versioned: IQv2 only


def test_after_close_the_driver_is_not_running():
    d = driver(1)
    store = d.store(params("counts", QueryableStoreTypes.key_value_store()))
    d.close()
    with pytest.raises(InvalidStateStoreException, match="The state store, counts, may have migrated"):
        store.get("a")
    with pytest.raises(IllegalStateError, match="KafkaStreams is not running. State is NOT_RUNNING."):
        d.store(params("counts", QueryableStoreTypes.key_value_store()))
    with pytest.raises(StreamsStoppedException, match=r"KafkaStreams has been stopped \(NOT_RUNNING\)"):
        d.query(StateQueryRequest.in_store("counts").with_query(KeyQuery.with_key("a")))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="storeName can't be null"):
        StoreQueryParameters.from_name_and_type(None, QueryableStoreTypes.key_value_store())
    with pytest.raises(ValueError, match="queryableStoreType"):
        StoreQueryParameters.from_name_and_type("counts", "kv")
    with pytest.raises(ValueError, match="partition"):
        params("counts", QueryableStoreTypes.key_value_store()).with_partition(-1)
    with pytest.raises(ValueError, match="key can't be null"):
        KeyQuery.with_key(None)
    with pytest.raises(ValueError, match="name"):
        StateQueryRequest.in_store("")
    with pytest.raises(ValueError, match="query"):
        StateQueryRequest.in_store("counts").with_query("get a")
    with pytest.raises(ValueError, match="timeFrom"):
        WindowKeyQuery.with_key_and_window_start_range("a", "0", 10)


# ---------------------------------------------------------------- IQv2

def run(d, name, query, **kw):
    request = StateQueryRequest.in_store(name).with_query(query)
    if "partitions" in kw:
        request = request.with_partitions(kw["partitions"])
    if "bound" in kw:
        request = request.with_position_bound(kw["bound"])
    return d.query(request)


def successes(result):
    return {p: r.get_result() for p, r in result.get_partition_results().items()}


def test_key_queries(drv):
    result = run(drv, "counts", KeyQuery.with_key("a"))
    assert sorted(result.get_partition_results()) == drv.store_partitions("counts")
    assert result.get_only_partition_result().get_result() == 3
    assert run(drv, "counts", TimestampedKeyQuery.with_key("a")).get_only_partition_result().get_result() == \
        ValueAndTimestamp(3, 60)
    assert run(drv, "counts", KeyQuery.with_key("zz")).get_only_partition_result() is None


def test_range_queries(drv):
    per_partition = successes(run(drv, "counts", RangeQuery.with_range("b", "d")))
    for p, rows in per_partition.items():
        assert list(rows) == list(drv.get_key_value_store("counts", p).range("b", "d"))
    descending = successes(run(drv, "counts", TimestampedRangeQuery.with_no_bounds().with_descending_keys()))
    for p, rows in descending.items():
        assert list(rows) == list(drv.get_timestamped_key_value_store("counts", p).reverse_all())


def test_window_and_session_queries(drv):
    rows = [kv for r in successes(run(drv, "window-counts", WindowKeyQuery.with_key_and_window_start_range(
        "a", 0, 100))).values() for kv in r]
    assert [kv.key for kv in rows] == [0, 30, 60]
    all_windows = [kv for r in successes(run(drv, "window-counts", WindowRangeQuery.with_window_start_range(
        0, 20))).values() for kv in r]
    assert len(all_windows) == sum(len(list(drv.get_window_store("window-counts", p).fetch_all(0, 20)))
                                   for p in drv.store_partitions("window-counts"))
    sessions = [kv for r in successes(run(drv, "session-counts", WindowRangeQuery.with_key("a"))).values()
                for kv in r]
    assert [kv.value for kv in sessions] == [1, 1, 1]


def test_versioned_key_query(drv):
    result = run(drv, "prices", VersionedKeyQuery.with_key("a").as_of(25)).get_only_partition_result()
    assert result.get_result() == VersionedRecord("p20", 20, 40)   # with valid_to, as Kafka's IQv2 answers
    assert first(drv, "get_versioned_key_value_store", "prices", lambda s: s.get("a", 25)) == \
        VersionedRecord("p20", 20)   # the store's own get leaves it out, as Kafka's metered store
    with pytest.raises(UnsupportedOperationError, match="Versioned stores do not support KeyQuery queries"):
        run(drv, "prices", KeyQuery.with_key("a"))
    assert run(drv, "prices", VersionedKeyQuery.with_key("a")).get_only_partition_result().get_result() == \
        VersionedRecord("p40", 40)


def test_unknown_query_types_fail_per_partition(drv):
    for name, query in (("counts", WindowKeyQuery.with_key_and_window_start_range("a", 0, 1)),
                        ("window-counts", WindowRangeQuery.with_key("a")),
                        ("session-counts", WindowRangeQuery.with_window_start_range(0, 1)),
                        ("prices", TimestampedKeyQuery.with_key("a"))):
        for r in run(drv, name, query).get_partition_results().values():
            assert r.get_failure_reason() is FailureReason.UNKNOWN_QUERY_TYPE
            assert "doesn't know how to execute the given query" in r.get_failure_message()
            with pytest.raises(ValueError, match="Cannot get result for failed query. Failure is UNKNOWN_QUERY_TYPE"):
                r.get_result()


def test_partitions_and_positions():
    with driver(4) as d:
        result = run(d, "counts", KeyQuery.with_key("a"), partitions=[1, 9])
        assert sorted(result.get_partition_results()) == [1, 9]
        assert result.get_partition_results()[9].get_failure_reason() is FailureReason.NOT_PRESENT
        position = result.get_partition_results()[1].get_position()
        assert position.get_topics() <= {"events"}
        # the bound is met by the position an answer reported, and not by one record further
        answered = run(d, "counts", KeyQuery.with_key("a")).get_position()
        met = run(d, "counts", KeyQuery.with_key("a"), bound=PositionBound.at(answered)).get_partition_results()
        assert all(r.is_success() for r in met.values())
        ahead = Position.from_map({t: {p: o + 1 for p, o in answered.get_partition_positions(t).items()}
                                   for t in answered.get_topics()})
        failures = run(d, "counts", KeyQuery.with_key("a"), bound=PositionBound.at(ahead)).get_partition_results()
        assert {p: r.get_failure_reason() for p, r in failures.items()} == {
            p: FailureReason.NOT_UP_TO_BOUND for p in answered.get_partition_positions("events")}
        assert "is not yet up to the bound" in failures[0].get_failure_message()


def test_position_is_the_last_offset_processed():
    with driver(1) as d:
        position = run(d, "counts", KeyQuery.with_key("a")).get_position()
        assert position.get_partition_positions("events") == {0: len(KEYS) * 2 + 4 - 1}


def test_global_stores_answer_with_a_global_failure(drv):
    result = run(drv, "global-store", KeyQuery.with_key("g"))
    assert result.get_partition_results() == {}
    assert result.get_global_result().get_failure_reason() is FailureReason.UNKNOWN_QUERY_TYPE
    with pytest.raises(UnknownStateStoreException):
        run(drv, "nope", KeyQuery.with_key("g"))


def test_query_metadata_for_key_names_the_partition_holding_it():
    with driver(4, {"application.server": "localhost:8080"}) as d:
        for key in KEYS:
            meta = d.query_metadata_for_key("counts", key, S)
            assert meta.active_host == HostInfo("localhost", 8080)
            assert d.get_key_value_store("counts", meta.partition).get(key) is not None
        assert d.query_metadata_for_key("global-store", "g", S).partition == -1
        assert d.query_metadata_for_key("nope", "a", S) is None
        with pytest.raises(ValueError, match="keySerializer"):
            d.query_metadata_for_key("counts", "a", None)
    with driver(1) as d:
        assert d.query_metadata_for_key("counts", "a", S).active_host == HostInfo.unavailable()


def test_streams_metadata_names_this_instance_its_stores_and_partitions():
    with driver(4, {"application.id": "meta", "application.server": "app-1:8080"}) as d:
        [meta] = d.metadata_for_all_streams_clients()
        assert (meta.host(), meta.port(), meta.host_info) == ("app-1", 8080, HostInfo("app-1", 8080))
        assert meta.state_store_names == {"counts", "window-counts", "session-counts", "prices", "global-store"}
        assert meta.topic_partitions == {TopicPartition(t, p) for t in ("events", "prices") for p in range(4)}
        assert meta.standby_state_store_names == frozenset() == meta.standby_topic_partitions
        assert d.streams_metadata_for_store("counts") == [meta]
        assert d.streams_metadata_for_store("global-store") == [meta]   # every instance holds a global store
        assert d.streams_metadata_for_store("nope") == []
        with pytest.raises(ValueError, match="storeName"):
            d.streams_metadata_for_store(None)
    with driver(1) as d:   # Kafka shares an instance's metadata only when application.server is set
        assert d.metadata_for_all_streams_clients() == [] == d.streams_metadata_for_store("counts")
    d.close()
    with pytest.raises(IllegalStateError, match="KafkaStreams is not running. State is NOT_RUNNING."):
        d.metadata_for_all_streams_clients()


def test_streams_metadata_of_a_repartitioning_topology_has_its_repartition_topic():
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by(lambda k, v: v, Grouped.with_(S, S).with_name("by-value"))
     .count(Materialized.as_("by-value-counts").with_key_serde(S).with_value_serde(L)))
    with (TopologyTestDriverBuilder(builder.build()).with_config({"application.id": "rp",
                                                                  "application.server": "h:1"})
          .declare_topic("events", 2).build()) as d:
        [meta] = d.streams_metadata_for_store("by-value-counts")
        assert meta.topic_partitions == {TopicPartition(t, p) for t in ("events", "rp-by-value-repartition")
                                         for p in range(2)}


def test_execution_info_says_what_an_answer_reflects(drv):
    result = drv.query(StateQueryRequest.in_store("counts").with_query(KeyQuery.with_key("a"))
                       .enable_execution_info())
    for partition, r in result.get_partition_results().items():
        assert r.get_execution_info()[-1] == f"Partition {partition} of counts as of every record piped"


def test_require_active_answers_from_the_drivers_running_tasks_without_the_bound(drv):
    answered = run(drv, "counts", KeyQuery.with_key("a")).get_position()
    ahead = Position.from_map({t: {p: o + 1 for p, o in answered.get_partition_positions(t).items()}
                               for t in answered.get_topics()})
    request = StateQueryRequest.in_store("counts").with_query(KeyQuery.with_key("a"))
    bounded = drv.query(request.with_position_bound(PositionBound.at(ahead)))
    assert {r.get_failure_reason() for r in bounded.get_partition_results().values()} == {
        FailureReason.NOT_UP_TO_BOUND}
    # Kafka's query(): a request requiring an active task is answered without its position bound
    active = drv.query(request.with_position_bound(PositionBound.at(ahead)).require_active())
    assert active.get_only_partition_result().get_result() == 3


def test_stale_stores_read_the_same_on_the_driver(drv):
    stale = drv.store(params("counts", QueryableStoreTypes.key_value_store()).enable_stale_stores())
    assert stale.get("a") == 3

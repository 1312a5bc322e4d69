"""dsl.store.format=HEADERS (Kafka 4.3): the DSL's stores built headers-aware (empty headers; a stream-stream join's
windows each record's), and what stays as it is (the dsl-headers-* goldens compare the rest with Kafka's driver; the
local RocksDB's bytes: test_headers_stores.py)."""
from __future__ import annotations

from streams_on_spark import (
    Consumed,
    JoinWindows,
    Materialized,
    Produced,
    Serdes,
    SessionWindows,
    Stores,
    StreamsBuilder,
    TestRecord,
    TopologyTestDriver,
    ValueAndTimestamp,
    ValueTimestampHeaders,
    WindowedSerdes,
)
from streams_on_spark.state.headers_stores import (
    DslJoinWindowStoreWithHeaders,
    DslTimestampedKeyValueStoreWithHeaders,
)
from streams_on_spark.state.stores import TimestampedKeyValueStore

S, L = Serdes.String(), Serdes.Long()
HEADERS_FORMAT = {"application.id": "dsl-headers", "dsl.store.format": "Headers"}


def counts(materialized: Materialized) -> StreamsBuilder:
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key().count(materialized)
     .to_stream().to("counts-out", Produced.with_(S, L)))
    return builder


def test_a_count_keeps_kafkas_headers_aware_bytes_with_empty_headers_and_forwards_as_before():
    for cached in (True, False):
        m = Materialized.as_("counts").with_key_serde(S).with_value_serde(L)
        with TopologyTestDriver(counts(m if cached else m.with_caching_disabled()).build(), HEADERS_FORMAT) as driver:
            events = driver.create_input_topic("events", S, S)
            events.pipe_input(TestRecord("a", "x", 5, [("trace", b"t1")]))
            events.pipe_input(TestRecord("a", "y", 3))
            store = driver.get_timestamped_key_value_store_with_headers("counts")
            assert type(store) is DslTimestampedKeyValueStoreWithHeaders
            assert store.get("a") == ValueTimestampHeaders(2, 5, ())   # the record's headers are not kept
            # Kafka's ValueTimestampHeadersSerializer: size varint 0 (no headers), timestamp, LongSerializer
            stored = store.inner.get(b"a") if not cached else store.inner.wrapped.get(b"a")
            assert stored.hex() == "00" + "0000000000000005" + "0000000000000002"
            assert driver.get_timestamped_key_value_store("counts").get("a") == ValueAndTimestamp(2, 5)
            assert driver.get_key_value_store("counts").get("a") == 2
            out = driver.create_output_topic("counts-out", S, L).read_records_to_list()
            assert [(r.value, r.timestamp, r.headers) for r in out] == [(1, 5, (("trace", b"t1"),)), (2, 5, ())]


def test_the_default_format_and_a_suppliers_store_stay_as_they_are():
    with TopologyTestDriver(counts(Materialized.as_("counts").with_value_serde(L)).build(),
                            {"application.id": "d", "dsl.store.format": "default"}) as driver:
        assert type(driver.get_timestamped_key_value_store("counts")) is TimestampedKeyValueStore
        assert driver.get_timestamped_key_value_store_with_headers("counts") is None
    supplied = Materialized.as_(Stores.in_memory_key_value_store("counts")).with_value_serde(L)
    with TopologyTestDriver(counts(supplied).build(), HEADERS_FORMAT) as driver:   # Kafka's: the supplier decides
        assert type(driver.get_timestamped_key_value_store("counts")) is TimestampedKeyValueStore
        assert driver.get_timestamped_key_value_store_with_headers("counts") is None


def test_a_stream_stream_joins_windows_keep_each_records_headers():   # dsl-headers-join-windows: Kafka's reads
    builder = StreamsBuilder()
    left, right = builder.stream("left", Consumed.with_(S, S)), builder.stream("right", Consumed.with_(S, S))
    left.join(right, lambda a, b: a + b, JoinWindows.of_time_difference_with_no_grace(10)).to("joined")
    joined = {}
    for fmt in ("HEADERS", "DEFAULT"):
        with TopologyTestDriver(builder.build(), {"application.id": "j", "dsl.store.format": fmt,
                                                  "default.key.serde": S, "default.value.serde": S}) as driver:
            driver.create_input_topic("left", S, S).pipe_input(TestRecord("k", "a", 5, [("h", b"1")]))
            driver.create_input_topic("right", S, S).pipe_input(TestRecord("k", "x", 7))
            joined[fmt] = driver.create_output_topic("joined", S, S).read_records_to_list()
            kept = driver.get_all_state_stores()["KSTREAM-JOINTHIS-0000000004-store"]
            if fmt == "HEADERS":
                assert type(kept) is DslJoinWindowStoreWithHeaders
                assert [kv.value for kv in kept.all()] == [ValueTimestampHeaders("a", 5, [("h", b"1")])]
            else:
                assert [kv.value for kv in kept.all()] == ["a"]   # a plain window store
    assert joined["HEADERS"] == joined["DEFAULT"] != []


def test_a_foreign_key_joins_subscription_store_is_headers_aware_too():   # its outputs: the dsl-headers-fk-join golden
    builder = StreamsBuilder()
    orders, products = builder.table("orders", Consumed.with_(S, S)), builder.table("products", Consumed.with_(S, S))
    orders.join(products, lambda v: v, lambda a, b: a + b).to_stream().to("joined")
    with TopologyTestDriver(builder.build(), {**HEADERS_FORMAT, "default.key.serde": S,
                                              "default.value.serde": S}) as driver:
        driver.create_input_topic("orders", S, S).pipe_input(TestRecord("o1", "p1", 4, [("h", b"1")]))
        subscriptions = driver.get_all_state_stores()["KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010"]
        assert type(subscriptions) is DslTimestampedKeyValueStoreWithHeaders
        [(_, stored)] = list(subscriptions.all())
        assert (stored.timestamp, stored.headers) == (4, ())


def test_a_cached_session_aggregation_forwards_the_headers_kept_with_it_as_kafkas_does():
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key()
     .windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(10)).count(Materialized.as_("sessions"))
     .to_stream().to("out", Produced.with_(WindowedSerdes.session_windowed(S), L)))
    for fmt, headers in (("HEADERS", ()), ("DEFAULT", (("h", b"1"),))):   # the session-cached goldens
        with TopologyTestDriver(builder.build(), {"application.id": "s", "dsl.store.format": fmt}) as driver:
            driver.create_input_topic("events", S, S).pipe_input(TestRecord("a", "x", 5, [("h", b"1")]))
            [out] = driver.create_output_topic("out", WindowedSerdes.session_windowed(S), L).read_records_to_list()
            assert (out.value, out.headers) == (1, headers)

"""dsl.store.format=HEADERS (Kafka 4.3): the DSL's key-value stores built headers-aware (empty headers), what stays as
it is, and what is refused at start (the dsl-headers-kv goldens compare the rest with Kafka's driver)."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    JoinWindows,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    SessionWindows,
    Stores,
    StreamsBuilder,
    TestRecord,
    TimeWindows,
    TopologyTestDriver,
    ValueAndTimestamp,
    ValueTimestampHeaders,
)
from streams_on_spark.config import TaskConfig
from streams_on_spark.dsl.ktable import materialize
from streams_on_spark.errors import ConfigException
from streams_on_spark.runtime.state_manager import in_dsl_store_format
from streams_on_spark.state.headers_stores import (
    DslTimestampedKeyValueStoreWithHeaders,
    TimestampedKeyValueStoreWithHeaders,
)
from streams_on_spark.state.stores import InMemoryKeyValueBytesStore, TimestampedKeyValueStore

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


def windowed_count(builder: StreamsBuilder) -> None:
    (builder.stream("events", Consumed.with_(S, S)).group_by_key()
     .windowed_by(TimeWindows.of_size_with_no_grace(10)).count(Materialized.as_("windowed")))


def session_count(builder: StreamsBuilder) -> None:
    (builder.stream("events", Consumed.with_(S, S)).group_by_key()
     .windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(10)).count(Materialized.as_("sessions")))


def stream_stream_join(builder: StreamsBuilder) -> None:
    left, right = builder.stream("left", Consumed.with_(S, S)), builder.stream("right", Consumed.with_(S, S))
    left.join(right, lambda a, b: a + b, JoinWindows.of_time_difference_with_no_grace(10)).to("joined")


@pytest.mark.parametrize("build, store, what", [
    (windowed_count, "windowed", "a windowed aggregation's store"),
    (session_count, "sessions", "a windowed aggregation's store"),
    (stream_stream_join, "KSTREAM-JOINTHIS-0000000004-store", "a stream-stream join's window store"),
])
def test_a_dsl_store_not_built_headers_aware_here_is_refused_at_start_naming_it(build, store, what):
    builder = StreamsBuilder()
    build(builder)
    message = (f"Invalid value Headers for configuration dsl.store.format: not supported by streams-on-spark for this "
               f"topology: its store {store} ({what}) is not built in Kafka 4.3's headers-aware format here; only "
               "the key-value stores of aggregations and tables are (see docs/state-and-checkpoints.md). Use the "
               "default format (DEFAULT)")
    with pytest.raises(ConfigException) as info:
        TopologyTestDriver(builder.build(), {**HEADERS_FORMAT, "default.key.serde": S, "default.value.serde": S})
    assert str(info.value) == message
    with pytest.raises(ConfigException) as info:   # an application, before any of Spark
        KafkaStreams(builder.build(), {**HEADERS_FORMAT, "default.key.serde": S, "default.value.serde": S}).start()
    assert str(info.value) == message
    with TopologyTestDriver(builder.build(), {"application.id": "d", "default.key.serde": S,
                                              "default.value.serde": S}):
        pass   # the default format builds it


def test_the_local_rocksdb_and_its_changelog_carry_the_dsl_stores_headers_format(tmp_path):   # Spark's task state
    from streams_on_spark.state.local import LocalTaskStore, apply_changes

    dsl = materialize(Materialized.as_("counts"), "counts", S, L)
    builder = in_dsl_store_format(dsl, TaskConfig.from_config(HEADERS_FORMAT).dsl_headers_stores)
    assert in_dsl_store_format(dsl, False) is dsl
    task_store = LocalTaskStore(str(tmp_path / "task"), {"counts": builder})

    def store():
        built = builder.build(builder.bytes_store_over(task_store.stores["counts"]))
        built.init(None)
        return built

    written = store()
    written.put_with_timestamp("a", 7, 90)   # what an aggregation writes
    written.put("b", ValueAndTimestamp(3, 80))   # what a table writes
    changes = task_store.commit("1")
    expected = {b"a": "00" + "000000000000005a" + "0000000000000007", b"b": "00" + "0000000000000050" + "0000000000000003"}
    assert {k: v.hex() for k, v in changes["counts"].items()} == expected   # the changelog: Kafka's bytes
    task_store.close()
    task_store.open()   # the task's RocksDB read back
    read = store()
    assert isinstance(read, TimestampedKeyValueStoreWithHeaders)
    assert read.get("a") == ValueTimestampHeaders(7, 90, ()) and read.get_with_timestamp("b") == (3, 80)
    task_store.close()
    rebuilt = {"counts": InMemoryKeyValueBytesStore("counts")}   # rebuilt from the changelog
    apply_changes([changes], rebuilt)
    assert {k: v.hex() for k, v in rebuilt["counts"].entries().items()} == expected


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

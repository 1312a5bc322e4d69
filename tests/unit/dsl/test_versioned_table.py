"""Versioned tables (KIP-889) and stream-table joins against them (KIP-914): out-of-order updates kept as history and
forwarded, updates older than history retention dropped; joins read the table as of the stream record's time; with a
grace period stream records wait in the ``<name>-Buffer`` store."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    Joined,
    KeyValue,
    Materialized,
    Produced,
    Serdes,
    Stores,
    StreamsBuilder,
    TopologyTestDriver,
    VersionedKeyValueStore,
    VersionedRecord,
)
from streams_on_spark.dsl.suppressed import BufferConfig, Suppressed
from streams_on_spark.errors import TopologyException

S = Serdes.String()
CONFIG = {"application.id": "versioned", "default.key.serde": S, "default.value.serde": S}


def prices(builder: StreamsBuilder, history_ms: int = 10):
    return builder.table("prices", Consumed.with_(S, S),
                         Materialized.as_(Stores.persistent_versioned_key_value_store("prices-store", history_ms)))


def test_versioned_table_keeps_history_and_forwards_out_of_order_updates():
    builder = StreamsBuilder()
    prices(builder).to_stream().to("updates", Produced.with_(S, S))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        inp = driver.create_input_topic("prices", S, S)
        for value, ts in [("p10", 10), ("p20", 20), ("p15", 15), ("p5", 5)]:
            inp.pipe_input("a", value, ts)
        out = driver.create_output_topic("updates", S, S)
        assert [(r.value, r.timestamp) for r in out.read_records_to_list()] == [
            ("p10", 10), ("p20", 20), ("p15", 15)]          # p5 is older than 20 - 10: neither stored nor forwarded
        store = driver.get_versioned_key_value_store("prices-store")
        assert isinstance(store, VersionedKeyValueStore)
        assert store.get("a") == VersionedRecord("p20", 20)  # the out-of-order update did not overwrite the latest
        assert store.get("a", 16) == VersionedRecord("p15", 15)
        assert driver.metrics()["dropped-records-total"] == 1


def test_a_versioned_table_is_never_cached():
    builder = StreamsBuilder()
    builder.table("prices", Consumed.with_(S, S),
                  Materialized.as_(Stores.persistent_versioned_key_value_store("prices-store", 10))
                  .with_caching_enabled()).to_stream().to("updates")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("prices", S, S).pipe_input("a", "v", 1)
        assert driver.create_output_topic("updates", S, S).read_key_values_to_list() == [("a", "v")]


def test_stream_table_join_reads_the_table_as_of_the_record_time():
    builder = StreamsBuilder()
    table = prices(builder)
    builder.stream("orders", Consumed.with_(S, S)).left_join(table, lambda o, p: f"{o}@{p}").to("out")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        p = driver.create_input_topic("prices", S, S)
        o = driver.create_input_topic("orders", S, S)
        p.pipe_input("a", "p10", 10)
        p.pipe_input("a", "p20", 20)
        for value, ts in [("o1", 12), ("o2", 25), ("o3", 5)]:
            o.pipe_input("a", value, ts)
        assert driver.create_output_topic("out", S, S).read_values_to_list() == ["o1@p10", "o2@p20", "o3@None"]


def test_grace_period_buffers_stream_records_until_stream_time_passes_them():
    builder = StreamsBuilder()
    table = prices(builder)
    builder.stream("orders", Consumed.with_(S, S)).join(
        table, lambda o, p: f"{o}@{p}", Joined.with_(S, S, S).with_grace_period(5)).to("out")
    topology = builder.build(CONFIG)
    assert "stores: [prices-store, KSTREAM-JOIN-0000000003-Buffer]" in str(topology.describe())
    with TopologyTestDriver(topology, CONFIG) as driver:
        p = driver.create_input_topic("prices", S, S)
        o = driver.create_input_topic("orders", S, S)
        out = driver.create_output_topic("out", S, S)
        p.pipe_input("a", "p10", 10)
        o.pipe_input("a", "o1", 12)
        assert out.read_values_to_list() == []              # waits: stream time 12 - grace 5 < 12
        p.pipe_input("a", "p11", 11)                        # arrives late, within the buffer's grace
        o.pipe_input("b", "o2", 18)                         # stream time 18: o1 (12 <= 13) leaves
        assert [(r.value, r.timestamp) for r in out.read_records_to_list()] == [("o1@p11", 12)]
        o.pipe_input("a", "o3", 10)                         # older than grace: joins at once
        assert out.read_values_to_list() == ["o3@p10"]
        buffer = driver.get_state_store("KSTREAM-JOIN-0000000003-Buffer")
        assert buffer.num_records() == 1                    # o2 still waits


def test_grace_period_needs_a_versioned_table():
    builder = StreamsBuilder()
    table = builder.table("prices", Consumed.with_(S, S))
    with pytest.raises(ValueError, match="KTable must be versioned to use a grace period"):
        builder.stream("orders").join(table, lambda o, p: o, Joined.with_(S, S, S).with_grace_period(5))


def test_grace_period_is_checked():
    with pytest.raises(ValueError, match="gracePeriod cannot be negative"):
        Joined.with_(S, S, S).with_grace_period(-1)


def test_table_join_and_group_by_skip_out_of_order_updates_that_to_stream_forwards():
    builder = StreamsBuilder()
    table = prices(builder)
    discounts = builder.table("discounts", Consumed.with_(S, S))
    table.map_values(lambda v: v + "!").to_stream().to("marked")
    table.join(discounts, lambda p, d: f"{p}-{d}").to_stream().to("joined")
    table.map_values(lambda v: v + "!").group_by(lambda k, v: KeyValue("all", v)).count().to_stream() \
        .to("counts", Produced.with_(S, Serdes.Long()))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("discounts", S, S).pipe_input("a", "d", 1)
        p = driver.create_input_topic("prices", S, S)
        for value, ts in [("p10", 10), ("p20", 20), ("p15", 15)]:
            p.pipe_input("a", value, ts)
        assert driver.create_output_topic("marked", S, S).read_values_to_list() == ["p10!", "p20!", "p15!"]
        assert driver.create_output_topic("joined", S, S).read_values_to_list() == ["p10-d", "p20-d"]
        counts = driver.create_output_topic("counts", S, Serdes.Long()).read_key_values_to_list()
        assert counts[-1] == ("all", 1)                    # p15 neither added nor subtracting p20
        assert driver.metrics()["dropped-records-total"] == 1   # the join counts the skipped update


def test_a_filter_can_be_materialized_in_a_versioned_store():
    builder = StreamsBuilder()
    kept = prices(builder).filter(
        lambda k, v: v.startswith("p"),
        materialized=Materialized.as_(Stores.persistent_versioned_key_value_store("kept", 100)))
    kept.to_stream().to("kept")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        p = driver.create_input_topic("prices", S, S)
        for value, ts in [("p10", 10), ("q20", 20), ("p15", 15)]:
            p.pipe_input("a", value, ts)
        store = driver.get_versioned_key_value_store("kept")
        assert store.get("a") is None                      # q20 filtered out: a tombstone at 20
        assert store.get("a", 16) == VersionedRecord("p15", 15)


def test_suppress_is_refused_on_versioned_tables():
    builder = StreamsBuilder()
    table = prices(builder)
    limit = Suppressed.until_time_limit(10, BufferConfig.unbounded())
    with pytest.raises(TopologyException, match=r"suppress\(\) is only supported for non-versioned KTables$"):
        table.suppress(limit)
    table.map_values(lambda v: v).suppress(limit)   # versioned upstream: refused when the builder builds, as Kafka's
    with pytest.raises(TopologyException, match="might be inherited from upstream"):
        builder.build()


def test_a_global_table_cannot_be_versioned_as_kafka_says():
    from streams_on_spark import Materialized, Stores, StreamsBuilder, TopologyException
    supplier = Stores.persistent_versioned_key_value_store("customers-store", 60_000)
    with pytest.raises(TopologyException, match="^Invalid topology: GlobalTables cannot be versioned.$"):
        StreamsBuilder().global_table("customers", Materialized.as_(supplier))


def test_joins_read_unmaterialized_views_of_a_versioned_table_as_of_the_record_time():
    """KIP-914 through value getters: a filter/map_values view delegates the as-of read to the versioned store."""
    builder = StreamsBuilder()
    view = prices(builder).filter(lambda k, v: v.startswith("p")).map_values(lambda v: v.upper())
    builder.stream("orders", Consumed.with_(S, S)).left_join(view, lambda o, p: f"{o}@{p}").to("out")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        p = driver.create_input_topic("prices", S, S)
        for value, ts in [("p10", 10), ("x20", 20), ("p15", 15)]:
            p.pipe_input("a", value, ts)
        o = driver.create_input_topic("orders", S, S)
        for value, ts in [("o1", 12), ("o2", 17), ("o3", 25), ("o4", 3)]:
            o.pipe_input("a", value, ts)
        # latest ("x20", filtered out) would give None for every order
        assert driver.create_output_topic("out", S, S).read_values_to_list() == [
            "o1@P10", "o2@P15", "o3@None", "o4@None"]


def test_a_view_materialized_in_a_plain_store_is_read_latest():
    """Materialized in a timestamped (not versioned) store, a view's getter is that store's: no as-of reads."""
    builder = StreamsBuilder()
    view = prices(builder).map_values(lambda v: v + "!", materialized=Materialized.as_("marked"))
    builder.stream("orders", Consumed.with_(S, S)).left_join(view, lambda o, p: f"{o}@{p}").to("out")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        p = driver.create_input_topic("prices", S, S)
        p.pipe_input("a", "p10", 10)
        p.pipe_input("a", "p20", 20)
        driver.create_input_topic("orders", S, S).pipe_input("a", "o1", 12)
        assert driver.create_output_topic("out", S, S).read_values_to_list() == ["o1@p20!"]


def test_grace_period_against_an_unmaterialized_view_of_a_versioned_table():
    builder = StreamsBuilder()
    view = prices(builder).map_values(lambda v: v + "!")
    builder.stream("orders", Consumed.with_(S, S)).join(
        view, lambda o, p: f"{o}@{p}", Joined.with_(S, S, S).with_grace_period(5)).to("out")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        p = driver.create_input_topic("prices", S, S)
        o = driver.create_input_topic("orders", S, S)
        out = driver.create_output_topic("out", S, S)
        p.pipe_input("a", "p10", 10)
        o.pipe_input("a", "o1", 12)
        p.pipe_input("a", "p11", 11)                        # late, within grace: o1 waits and sees it
        p.pipe_input("a", "p16", 16)                        # newer than o1: not seen as of 12
        o.pipe_input("b", "o2", 18)
        assert [(r.value, r.timestamp) for r in out.read_records_to_list()] == [("o1@p11!", 12)]


def test_grace_period_needs_a_view_of_a_versioned_table():
    builder = StreamsBuilder()
    view = builder.table("prices", Consumed.with_(S, S)).filter(lambda k, v: True)
    with pytest.raises(ValueError, match="KTable must be versioned to use a grace period"):
        builder.stream("orders").join(view, lambda o, p: o, Joined.with_(S, S, S).with_grace_period(5))


def test_an_as_of_read_of_a_latest_only_getter_is_an_error():
    from streams_on_spark.errors import StreamsException
    from streams_on_spark.operators.tables import TableValueGetter
    latest = TableValueGetter(lambda key: key)
    assert latest("a") == "a" and not latest.versioned
    with pytest.raises(StreamsException, match=r"get\(key, as_of=5\) is only supported for versioned stores"):
        latest("a", 5)
    versioned = TableValueGetter(lambda key, as_of=None: (key, as_of), versioned=True)
    assert versioned("a", as_of=5) == ("a", 5) and versioned("a") == ("a", None)

"""Cogroup (KIP-150) and a KTable aggregation with a subtractor, on every engine and partition count."""
from __future__ import annotations

from streams_on_spark import (
    Consumed,
    Grouped,
    KeyValue,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TestRecord,
)
from streams_on_spark.partitioner import partition_for_key

S, L, J = Serdes.String(), Serdes.Long(), Serdes.JSON()


def customer_topology():
    """Carts, purchases and wish lists of a customer folded into one JSON document (KIP-150's example)."""
    builder = StreamsBuilder()

    def grouped(topic: str):
        return builder.stream(topic, Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))

    def adder(field: str):
        def add(_key, item, customer):
            return {**customer, field: customer[field] + [item]}
        return add

    (grouped("cart").cogroup(adder("cart"))
     .cogroup(grouped("purchases"), adder("purchases"))
     .cogroup(grouped("wish-list"), adder("wish_list"))
     .aggregate(lambda: {"cart": [], "purchases": [], "wish_list": []},
                materialized=Materialized.as_("customers").with_key_serde(S).with_value_serde(J))
     .to_stream()
     .to("customers-out", Produced.with_(S, J)))
    return builder.build()


def test_cogroup_folds_three_streams_into_one_store(make_driver, partitions):
    topics = ("cart", "purchases", "wish-list", "customers-out")
    driver = make_driver(customer_topology(), *topics)
    cart, purchases, wish = (driver.create_input_topic(t, S, S, start_timestamp=0, auto_advance=1) for t in topics[:3])
    cart.pipe_key_value_list([("1", "01"), ("2", "02"), ("1", "03"), ("1", "04"), ("2", "05")])
    purchases.pipe_key_value_list([("2", "06"), ("1", "07"), ("1", "08"), ("2", "09"), ("2", "10")])
    wish.pipe_key_value_list([("1", "11"), ("2", "12"), ("2", "13"), ("2", "14"), ("2", "15")])
    expected = {
        "1": {"cart": ["01", "03", "04"], "purchases": ["07", "08"], "wish_list": ["11"]},
        "2": {"cart": ["02", "05"], "purchases": ["06", "09", "10"], "wish_list": ["12", "13", "14", "15"]},
    }
    for key, customer in expected.items():
        home = partition_for_key(key.encode(), partitions)
        for p in range(partitions):
            assert driver.get_key_value_store("customers", p).get(key) == (customer if p == home else None)
    records = driver.create_output_topic("customers-out", S, J).read_records_to_list()
    assert len(records) == 15  # each input record emits the updated aggregate
    assert {r.key: r.value for r in records} == expected
    assert all(r.partition == partition_for_key(r.key.encode(), partitions) for r in records)


def region_counts():
    builder = StreamsBuilder()
    (builder.table("users", Consumed.with_(S, S))
     .group_by(lambda user, region: KeyValue(region, user), Grouped.with_(S, S, name="by-region"))
     .count(Materialized.as_("users-per-region"))
     .to_stream()
     .to("region-counts", Produced.with_(S, L)))
    return builder.build()


def test_ktable_aggregation_subtracts_the_old_value(make_driver, partitions):
    driver = make_driver(region_counts(), "users", "region-counts")
    users = driver.create_input_topic("users", S, S, start_timestamp=0, auto_advance=1)
    users.pipe_key_value_list([("alice", "eu"), ("bob", "eu"), ("carol", "us")])
    users.pipe_key_value_list([("alice", "us"),   # moves: eu 2 -> 1, us 1 -> 2
                               ("bob", None)])    # tombstone: eu 1 -> 0
    final = {"eu": 0, "us": 2}
    for region, count in final.items():
        home = partition_for_key(region.encode(), partitions)
        for p in range(partitions):
            assert driver.get_key_value_store("users-per-region", p).get(region) == (count if p == home else None)
    records = driver.create_output_topic("region-counts", S, L).read_records_to_list()
    per_region: dict[str, list[int]] = {}
    for r in records:
        assert r.partition == partition_for_key(r.key.encode(), partitions)
        per_region.setdefault(r.key, []).append(r.value)
    assert per_region == {"eu": [1, 2, 1, 0], "us": [1, 2]}


def test_ktable_source_is_materialized_for_old_values(make_driver, partitions):
    driver = make_driver(region_counts(), "users", "region-counts")
    store = next(name for name in driver.get_all_state_stores(0) if name.startswith("users-STATE-STORE-"))
    users = driver.create_input_topic("users", S, S, start_timestamp=0)
    users.pipe_input("alice", "eu")
    home = partition_for_key(b"alice", partitions)
    assert driver.get_key_value_store(store, home).get("alice") == "eu"


def test_suppressed_table_forwards_old_values_to_an_aggregation(make_driver, partitions):
    """KTableSuppressProcessorSupplier enables old values on its parent and evicts Change(new, old)."""
    from streams_on_spark.dsl.suppressed import BufferConfig, Suppressed
    builder = StreamsBuilder()
    (builder.table("t", Consumed.with_(S, S))
     .suppress(Suppressed.until_time_limit(0, BufferConfig.unbounded()))
     .group_by(lambda k, v: KeyValue(v, v), Grouped.with_(S, S)).count()
     .to_stream().to("counts", Produced.with_(S, L)))
    driver = make_driver(builder.build(), "t", "counts")
    driver.create_input_topic("t", S, S).pipe_record_list(
        [TestRecord("k", "x", 1), TestRecord("k", "y", 2), TestRecord("j", "z", 3)])
    per_value: dict[str, list[int]] = {}
    for r in driver.create_output_topic("counts", S, L).read_records_to_list():
        per_value.setdefault(r.key, []).append(r.value)
    assert per_value == {"x": [1, 0], "y": [1], "z": [1]}


def test_cogrouped_table_sends_old_values_of_every_aggregate(make_driver, partitions):
    """KTablePassThrough.enableSendingOldValues enables old values on every cogrouped aggregate."""
    builder = StreamsBuilder()
    (builder.stream("a", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .cogroup(lambda k, v, agg: v)
     .cogroup(builder.stream("b", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S)), lambda k, v, agg: v)
     .aggregate(lambda: "", materialized=Materialized.with_(S, S))
     .group_by(lambda k, v: KeyValue(v, v), Grouped.with_(S, S)).count()
     .to_stream().to("counts", Produced.with_(S, L)))
    driver = make_driver(builder.build(), "a", "b", "counts")
    driver.create_input_topic("a", S, S).pipe_input("k", "x", 1)
    driver.create_input_topic("b", S, S).pipe_input("k", "y", 2)
    per_value: dict[str, list[int]] = {}
    for r in driver.create_output_topic("counts", S, L).read_records_to_list():
        per_value.setdefault(r.key, []).append(r.value)
    assert per_value == {"x": [1, 0], "y": [1]}

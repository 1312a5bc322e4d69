"""Headers-aware key-value stores (KIP-1271): Kafka's value layout, the store, the driver's and queries' views."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Materialized,
    Processor,
    Serdes,
    Stores,
    TestRecord,
    Topology,
    TopologyTestDriver,
    ValueAndTimestamp,
    ValueTimestampHeaders,
)
from streams_on_spark.errors import UnsupportedOperationError
from streams_on_spark.query import (
    KeyQuery,
    QueryableStoreTypes,
    RangeQuery,
    StateQueryRequest,
    StoreQueryParameters,
    TimestampedKeyQuery,
)
from streams_on_spark.state.headers_stores import ValueTimestampHeadersSerde, deserialize_headers, serialize_headers

S = Serdes.String()

# Kafka 4.3.1's ValueTimestampHeadersSerializer (String values) on these two values, printed by its own class
KAFKA_BYTES = [
    (ValueTimestampHeaders("2", 90, [("trace", b"t2"), ("empty", None), ("ünï", "çödé".encode())]),
     "3e060a74726163650474320a656d707479010ac3bc6ec3af0ec3a7c3b664c3a9000000000000005a32"),
    (ValueTimestampHeaders("x", 1700000000000), "000000018bcfe5680078"),
]


@pytest.mark.parametrize("value, hex_bytes", KAFKA_BYTES)
def test_values_are_kept_in_kafkas_layout_and_read_back(value, hex_bytes):
    serde = ValueTimestampHeadersSerde(S)
    assert serde.serialize("t", value).hex() == hex_bytes
    assert serde.deserialize("t", bytes.fromhex(hex_bytes)) == value


def test_headers_round_trip_and_no_headers_take_no_bytes():
    headers = (("a", b""), ("a", None), ("b", b"x" * 300))   # a repeated key, an empty and a null value, a long one
    assert deserialize_headers(serialize_headers(headers)) == headers
    assert serialize_headers(()) == b"" and deserialize_headers(b"") == ()


def test_value_timestamp_headers_normalizes_headers_and_make_keeps_null_values_out():
    assert ValueTimestampHeaders("v", 1, {"k": "s"}).headers == (("k", b"s"),)
    assert ValueTimestampHeaders("v", 1, None) == ValueTimestampHeaders("v", 1, ())
    assert ValueTimestampHeaders.make(None, 1, [("k", b"v")]) is None
    assert ValueTimestampHeaders.make_allow_nullable(None, 1).value is None
    assert ValueTimestampHeaders.get_value_or_null(ValueTimestampHeaders("v", 1)) == "v"
    with pytest.raises(ValueError, match="header keys must be str"):
        ValueTimestampHeaders("v", 1, [(1, b"x")])


class Keep(Processor):
    """Keeps each record's value with its timestamp and headers in "kept"."""

    def init(self, context) -> None:
        super().init(context)
        self.kept = context.get_state_store("kept")

    def process(self, record) -> None:
        self.kept.put(record.key, ValueTimestampHeaders.make(record.value, record.timestamp, record.headers))


def keeping(builder=None) -> Topology:
    topology = Topology()
    topology.add_source("source", "in", key_serde=S, value_serde=S)
    topology.add_processor("keep", Keep, "source")
    topology.add_state_store(builder or Stores.timestamped_key_value_store_with_headers_builder(
        Stores.in_memory_key_value_store("kept"), S, S), "keep")
    return topology


@pytest.fixture
def driver():
    with TopologyTestDriver(keeping(), {"application.id": "headers"}) as driver:
        topic = driver.create_input_topic("in", S, S)
        topic.pipe_input(TestRecord("a", "1", 5, [("h", b"x")]))
        topic.pipe_input(TestRecord("b", "2", 7))
        yield driver


def test_the_store_refuses_a_value_without_headers(driver):
    store = driver.get_timestamped_key_value_store_with_headers("kept")
    with pytest.raises(ValueError, match="store kept holds ValueTimestampHeaders values, got ValueAndTimestamp"):
        store.put("a", ValueAndTimestamp("v", 1))


def test_the_driver_shows_a_headers_store_with_and_without_headers(driver):
    assert driver.get_timestamped_key_value_store_with_headers("kept").get("a") == ValueTimestampHeaders(
        "1", 5, [("h", b"x")])
    timestamped = driver.get_timestamped_key_value_store("kept")
    assert timestamped.get("a") == ValueAndTimestamp("1", 5)
    timestamped.put("c", ValueAndTimestamp("3", 9))   # written through the view: no headers, as Kafka's facade
    assert driver.get_timestamped_key_value_store_with_headers("kept").get("c") == ValueTimestampHeaders("3", 9)
    plain = driver.get_key_value_store("kept")
    plain.put("d", "4")
    assert driver.get_timestamped_key_value_store_with_headers("kept").get("d") == ValueTimestampHeaders("4", -1)
    assert [(e.key, e.value) for e in plain.all()] == [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")]
    with pytest.raises(ValueError, match="Store kept is a headers-aware key-value store and should be accessed via "
                                         "`get_timestamped_key_value_store_with_headers\\(\\)`"):
        driver.get_state_store("kept")


def test_the_dsl_refuses_a_headers_aware_supplier_kafka_would_build_a_headers_aware_store_with():
    with pytest.raises(UnsupportedOperationError, match=r"Materialized.as_\(PersistentKeyValueHeadersBytesStoreSupplier"
                                                      r"\('t'\)\): the DSL's headers-aware stores \(KIP-1285\)"):
        Materialized.as_(Stores.persistent_timestamped_key_value_store_with_headers("t"))


def test_an_engine_keeps_a_headers_aware_store_where_it_keeps_the_others():   # a local RocksDB on Spark
    for supplier in (Stores.in_memory_key_value_store("t"),
                     Stores.persistent_timestamped_key_value_store_with_headers("t")):
        assert Stores.timestamped_key_value_store_with_headers_builder(supplier, S, S).engine_kept()


def test_a_store_without_headers_is_not_a_headers_store():
    builder = Stores.timestamped_key_value_store_builder(Stores.in_memory_key_value_store("kept"), S, S)
    with TopologyTestDriver(keeping(builder), {"application.id": "plain"}) as driver:
        assert driver.get_timestamped_key_value_store_with_headers("kept") is None


def test_interactive_queries_read_a_headers_store_as_kafkas_do(driver):
    def store(store_type):
        return driver.store(StoreQueryParameters.from_name_and_type("kept", store_type))

    assert store(QueryableStoreTypes.timestamped_key_value_store_with_headers()).get("a") == ValueTimestampHeaders(
        "1", 5, [("h", b"x")])
    assert store(QueryableStoreTypes.timestamped_key_value_store()).get("a") == ValueAndTimestamp("1", 5)
    assert store(QueryableStoreTypes.key_value_store()).get("a") == "1"

    def query(q):
        return driver.query(StateQueryRequest.in_store("kept").with_query(q)).get_only_partition_result().get_result()

    assert query(KeyQuery.with_key("a")) == "1"
    assert query(TimestampedKeyQuery.with_key("a")) == ValueAndTimestamp("1", 5)
    assert [(e.key, e.value) for e in query(RangeQuery.with_range("a", "b"))] == [("a", "1"), ("b", "2")]

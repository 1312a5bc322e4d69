"""Headers-aware key-value stores (KIP-1271): Kafka's value layout, the store, the driver's and queries' views."""
from __future__ import annotations

from typing import Any

import pytest

from streams_on_spark import (
    AggregationWithHeaders,
    Consumed,
    Materialized,
    Processor,
    Serdes,
    SessionWindows,
    Stores,
    StreamsBuilder,
    TestRecord,
    TimeWindows,
    Topology,
    TopologyTestDriver,
    ValueAndTimestamp,
    ValueTimestampHeaders,
    Windowed,
)
from streams_on_spark.dsl.ktable import materialize
from streams_on_spark.query import (
    FailureReason,
    KeyQuery,
    QueryableStoreTypes,
    RangeQuery,
    StateQueryRequest,
    StoreQueryParameters,
    TimestampedKeyQuery,
    WindowKeyQuery,
    WindowRangeQuery,
)
from streams_on_spark.runtime.state_manager import in_dsl_store_format
from streams_on_spark.state.headers_stores import (
    AggregationWithHeadersSerde,
    DslSessionStoreWithHeaders,
    DslTimestampedWindowStoreWithHeaders,
    TimestampedKeyValueStoreWithHeaders,
    ValueTimestampHeadersSerde,
    deserialize_headers,
    serialize_headers,
)
from streams_on_spark.state.stores import InMemoryKeyValueBytesStore
from streams_on_spark.window import SessionWindow

S, L = Serdes.String(), Serdes.Long()

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
    with pytest.raises(ValueError, match="Store kept is a key-value store and should be accessed via "
                                         "`get_key_value_store\\(\\)`"):   # Kafka 4.3.1's text
        driver.get_state_store("kept")


def test_the_dsl_builds_a_headers_aware_store_over_a_headers_aware_supplier_whatever_the_format():
    """Kafka 4.3's KeyValueStoreMaterializer: a headers-aware supplier gives a headers-aware DSL store (empty headers,
    whatever the records carry), also in the default dsl.store.format (the dsl-headers-supplier-* goldens)."""
    builder = StreamsBuilder()
    (builder.stream("in", Consumed.with_(S, S)).group_by_key()
     .count(Materialized.as_(Stores.persistent_timestamped_key_value_store_with_headers("t")).with_value_serde(L)))
    with TopologyTestDriver(builder.build(), {"application.id": "supplied"}) as driver:
        driver.create_input_topic("in", S, S).pipe_input(TestRecord("a", "1", 5, [("h", b"x")]))
        assert driver.get_timestamped_key_value_store_with_headers("t").get("a") == ValueTimestampHeaders(1, 5)


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


# ----------------------------------------------------------------------------- window and session stores

HEADERS = [("trace", b"t2"), ("empty", None), ("ünï", "çödé".encode())]
_KAFKA_HEADERS_HEX = "3e060a74726163650474320a656d707479010ac3bc6ec3af0ec3a7c3b664c3a9"
# Kafka 4.3.1's AggregationWithHeadersSerializer on these aggregations, printed by its own class
KAFKA_AGGREGATION_BYTES = [
    (AggregationWithHeaders(3, HEADERS), Serdes.Long(), _KAFKA_HEADERS_HEX + "0000000000000003"),
    (AggregationWithHeaders(7), Serdes.Long(), "00" + "0000000000000007"),
    (AggregationWithHeaders("x", HEADERS), S, _KAFKA_HEADERS_HEX + "78"),
]


@pytest.mark.parametrize("aggregation, inner, hex_bytes", KAFKA_AGGREGATION_BYTES)
def test_session_aggregations_are_kept_in_kafkas_layout_and_read_back(aggregation, inner, hex_bytes):
    serde = AggregationWithHeadersSerde(inner)
    assert serde.serialize("t", aggregation).hex() == hex_bytes
    assert serde.deserialize("t", bytes.fromhex(hex_bytes)) == aggregation


def test_aggregation_with_headers_as_kafkas():
    serde = AggregationWithHeadersSerde(S)
    assert serde.serialize("t", None) is None   # Kafka's serializer: null for null, and for a null aggregation
    assert serde.serialize("t", AggregationWithHeaders.make_allow_nullable(None, HEADERS)) is None
    assert serde.deserialize("t", b"\x00") == AggregationWithHeaders("")
    assert AggregationWithHeaders.make(None, HEADERS) is None
    assert AggregationWithHeaders.get_aggregation_or_null(AggregationWithHeaders("a", {"k": "v"})) == "a"
    assert AggregationWithHeaders("a", {"k": "v"}).headers == (("k", b"v"),)


class KeepBoth(Processor):
    """Keeps each record in the window (size 10) and the session [ts, ts] of its timestamp, with its headers."""

    def init(self, context) -> None:
        super().init(context)
        self.windows = context.get_state_store("windows")
        self.sessions = context.get_state_store("sessions")

    def process(self, record) -> None:
        self.windows.put(record.key, ValueTimestampHeaders.make(record.value, record.timestamp, record.headers),
                         record.timestamp // 10 * 10)
        self.sessions.put(Windowed(record.key, SessionWindow(record.timestamp, record.timestamp)),
                          AggregationWithHeaders.make(record.value, record.headers))


def keeping_both(persistent: bool, cached: bool = False) -> Topology:
    window_supplier = (Stores.persistent_timestamped_window_store_with_headers("windows", 1000, 10, False)
                       if persistent else Stores.in_memory_window_store("windows", 1000, 10, False))
    session_supplier = (Stores.persistent_session_store_with_headers("sessions", 1000) if persistent
                        else Stores.in_memory_session_store("sessions", 1000))
    windows = Stores.timestamped_window_store_with_headers_builder(window_supplier, S, S)
    sessions = Stores.session_store_with_headers_builder(session_supplier, S, S)
    topology = Topology()
    topology.add_source("source", "in", key_serde=S, value_serde=S)
    topology.add_processor("keep", KeepBoth, "source")
    topology.add_state_store(windows.with_caching_enabled() if cached else windows, "keep")
    topology.add_state_store(sessions.with_caching_enabled() if cached else sessions, "keep")
    return topology


@pytest.fixture(params=[(False, False), (True, False), (True, True)], ids=["in-memory", "persistent", "cached"])
def both(request):
    with TopologyTestDriver(keeping_both(*request.param), {"application.id": "headers"}) as driver:
        topic = driver.create_input_topic("in", S, S)
        topic.pipe_input(TestRecord("a", "2", 90, HEADERS))
        topic.pipe_input(TestRecord("b", "x", 95))
        yield driver


def test_window_and_session_stores_keep_kafkas_bytes(both):
    windows = both.get_timestamped_window_store_with_headers("windows")
    sessions = both.get_session_store_with_headers("sessions")
    for store in (windows, sessions):
        flush = getattr(store.inner, "flush", None)
        if flush is not None:   # the record cache writes through to the bytes store on flush
            flush()
    window_bytes = getattr(windows.inner, "wrapped", windows.inner).fetch(b"a", 90)
    assert window_bytes.hex() == KAFKA_BYTES[0][1]   # the ValueTimestampHeadersSerializer layout
    session_bytes = getattr(sessions.inner, "wrapped", sessions.inner).fetch_session(b"a", 90, 90)
    assert session_bytes.hex() == _KAFKA_HEADERS_HEX + "32"   # AggregationWithHeadersSerializer of "2"


def test_the_driver_shows_a_headers_window_store_with_and_without_headers(both, caplog):
    assert both.get_timestamped_window_store_with_headers("windows").fetch("a", 90) == ValueTimestampHeaders(
        "2", 90, HEADERS)
    timestamped = both.get_timestamped_window_store("windows")
    assert [(e.key.key, e.value) for e in timestamped.all()] == [("a", ValueAndTimestamp("2", 90)),
                                                                 ("b", ValueAndTimestamp("x", 95))]
    timestamped.put("c", ValueAndTimestamp("3", 91), 90)   # written through the view: no headers, as Kafka's facade
    assert both.get_timestamped_window_store_with_headers("windows").fetch("c", 90) == ValueTimestampHeaders("3", 91)
    with caplog.at_level("WARNING"):
        plain = both.get_window_store("windows")
    assert "Method #get_timestamped_window_store_with_headers() should be used" in caplog.text
    plain.put("d", "4", 90)
    assert both.get_timestamped_window_store_with_headers("windows").fetch("d", 90) == ValueTimestampHeaders("4", -1)
    assert [kv.value for kv in plain.fetch("a", 0, 100)] == ["2"]
    assert plain.fetch("a", 90) == "2" and plain.fetch("zz", 90) is None
    with pytest.raises(ValueError, match="Store windows is a window store and should be accessed via "
                                         "`get_window_store\\(\\)`"):   # Kafka's text: it is a WindowStore
        both.get_state_store("windows")
    with pytest.raises(ValueError, match="store windows holds ValueTimestampHeaders values, got ValueAndTimestamp"):
        both.get_timestamped_window_store_with_headers("windows").put("a", ValueAndTimestamp("v", 1), 90)


def test_the_driver_shows_a_headers_session_store_with_and_without_headers(both):
    assert both.get_session_store_with_headers("sessions").fetch_session("a", 90, 90) == AggregationWithHeaders(
        "2", HEADERS)
    plain = both.get_session_store("sessions")
    assert [(e.key.key, e.value) for e in plain.fetch("a", "b")] == [("a", "2"), ("b", "x")]
    plain.put(Windowed("c", SessionWindow(92, 93)), "3")   # written through the view: no headers
    assert both.get_session_store_with_headers("sessions").fetch_session("c", 92, 93) == AggregationWithHeaders("3")
    assert plain.fetch_session("c", 92, 93) == "3"
    plain.remove(Windowed("c", SessionWindow(92, 93)))
    assert plain.fetch_session("c", 92, 93) is None
    with pytest.raises(ValueError, match="Store sessions is a session store and should be accessed via "
                                         "`get_session_store\\(\\)`"):
        both.get_state_store("sessions")


def test_stores_without_headers_are_not_headers_stores():
    topology = Topology()
    topology.add_source("source", "in", key_serde=S, value_serde=S)
    topology.add_processor("keep", KeepBoth, "source")
    topology.add_state_store(Stores.timestamped_window_store_builder(
        Stores.in_memory_window_store("windows", 1000, 10, False), S, S), "keep")
    topology.add_state_store(Stores.session_store_builder(Stores.in_memory_session_store("sessions", 1000), S, S),
                             "keep")
    with TopologyTestDriver(topology, {"application.id": "plain"}) as driver:
        assert driver.get_timestamped_window_store_with_headers("windows") is None
        assert driver.get_session_store_with_headers("sessions") is None


def test_headers_window_and_session_suppliers_check_as_kafkas():
    with pytest.raises(ValueError, match="The retention period of the window store w must be no smaller than its "
                                         "window size"):
        Stores.persistent_timestamped_window_store_with_headers("w", 5, 10, False)
    with pytest.raises(ValueError, match="retentionPeriod cannot be negative"):
        Stores.persistent_session_store_with_headers("s", -1)


def test_an_engine_keeps_headers_window_and_session_stores_where_it_keeps_the_others():   # a local RocksDB on Spark
    for builder in (
            Stores.timestamped_window_store_with_headers_builder(
                Stores.in_memory_window_store("w", 100, 10, False), S, S),
            Stores.timestamped_window_store_with_headers_builder(
                Stores.persistent_timestamped_window_store_with_headers("w", 100, 10, False), S, S),
            Stores.session_store_with_headers_builder(Stores.in_memory_session_store("s", 100), S, S),
            Stores.session_store_with_headers_builder(Stores.persistent_session_store_with_headers("s", 100), S, S)):
        assert builder.engine_kept()
        table = InMemoryKeyValueBytesStore(builder.name)   # what an engine gives: its entries hold Kafka's bytes
        store = builder.build(builder.bytes_store_over(table))
        store.init(None)
        if builder.name == "w":
            store.put("a", ValueTimestampHeaders("2", 90, HEADERS), 90)
            expected = KAFKA_BYTES[0][1]
        else:
            store.put(Windowed("a", SessionWindow(90, 90)), AggregationWithHeaders("2", HEADERS))
            expected = _KAFKA_HEADERS_HEX + "32"
        assert [value.hex() for value in table.entries().values()] == [expected]


def test_the_dsl_builds_headers_aware_window_and_session_stores_over_headers_aware_suppliers():
    """Kafka 4.3's Window/SessionStoreMaterializer; an engine keeps them where it keeps the others (a local RocksDB on
    Spark); over a supplier without headers the store stays without headers, also under dsl.store.format=HEADERS."""
    from streams_on_spark.dsl.windowed import session_store_builder, window_store_builder

    def built(window_supplier: Any, session_supplier: Any) -> list:
        return [window_store_builder(Materialized.as_(window_supplier), "w", TimeWindows.of_size_with_no_grace(10), S,
                                     L),
                session_store_builder(Materialized.as_(session_supplier), "s",
                                      SessionWindows.of_inactivity_gap_with_no_grace(10), S, L)]

    headers = built(Stores.persistent_timestamped_window_store_with_headers("w", 100, 10, False),
                    Stores.persistent_session_store_with_headers("s", 100))
    assert [b.store_type for b in headers] == [DslTimestampedWindowStoreWithHeaders, DslSessionStoreWithHeaders]
    assert all(b.engine_kept() and in_dsl_store_format(b, False) is b for b in headers)
    plain = built(Stores.in_memory_window_store("w", 100, 10, False), Stores.in_memory_session_store("s", 100))
    assert all(in_dsl_store_format(b, True) is b and "WithHeaders" not in b.store_type.__name__ for b in plain)


def test_interactive_queries_read_headers_window_and_session_stores_as_kafkas_do(both, request):
    def store(name, store_type):
        return both.store(StoreQueryParameters.from_name_and_type(name, store_type))

    def only(rows):
        return [(kv.key.key, kv.value) for kv in rows]

    windows_with_headers = store("windows", QueryableStoreTypes.timestamped_window_store_with_headers())
    assert windows_with_headers.fetch("a", 90) == ValueTimestampHeaders("2", 90, HEADERS)
    assert only(store("windows", QueryableStoreTypes.timestamped_window_store()).all()) == [
        ("a", ValueAndTimestamp("2", 90)), ("b", ValueAndTimestamp("x", 95))]
    assert only(store("windows", QueryableStoreTypes.window_store()).all()) == [("a", "2"), ("b", "x")]
    sessions_with_headers = store("sessions", QueryableStoreTypes.session_store_with_headers())
    assert only(sessions_with_headers.fetch("a")) == [("a", AggregationWithHeaders("2", HEADERS))]
    assert only(store("sessions", QueryableStoreTypes.session_store()).fetch("a")) == [("a", "2")]

    def query(name, q):
        return both.query(StateQueryRequest.in_store(name).with_query(q)).get_partition_results()[0]

    window_query = query("windows", WindowKeyQuery.with_key_and_window_start_range("a", 0, 100))
    session_query = query("sessions", WindowRangeQuery.with_key("a"))
    persistent, _cached = request.node.callspec.params["both"]
    if persistent:
        # Kafka 4.3.1's RocksDB headers-aware stores know no IQv2 query (the headers-*-store-persistent-cached goldens)
        assert [r.get_failure_reason() for r in (window_query, session_query)] == [
            FailureReason.UNKNOWN_QUERY_TYPE] * 2
        return
    assert [(kv.key, kv.value) for kv in window_query.get_result()] == [(90, ValueAndTimestamp("2", 90))]
    assert only(session_query.get_result()) == [("a", "2")]


def built_over(task_store, builders: dict) -> dict:
    """Each builder's store over its table in the task's local RocksDB ``task_store``, initialized."""
    built = {name: b.build(b.bytes_store_over(task_store.stores[name])) for name, b in builders.items()}
    for store in built.values():
        store.init(None)
    return built


def test_the_local_rocksdb_and_its_changelog_carry_kafkas_headers_format(tmp_path):   # Spark's task state
    from streams_on_spark.state.local import open_local_task_store, apply_changes

    builders = {
        "w": Stores.timestamped_window_store_with_headers_builder(
            Stores.persistent_timestamped_window_store_with_headers("w", 1000, 10, False), S, S),
        "s": Stores.session_store_with_headers_builder(Stores.persistent_session_store_with_headers("s", 1000), S, S),
        "k": Stores.timestamped_key_value_store_with_headers_builder(
            Stores.persistent_timestamped_key_value_store_with_headers("k"), S, S)}
    task_store = open_local_task_store(str(tmp_path / "task"), builders)
    written = built_over(task_store, builders)
    written["w"].put("a", ValueTimestampHeaders("2", 90, HEADERS), 90)
    written["s"].put(Windowed("a", SessionWindow(90, 90)), AggregationWithHeaders("2", HEADERS))
    written["k"].put("a", ValueTimestampHeaders("2", 90, HEADERS))
    changes = task_store.commit("1")
    expected = {"w": KAFKA_BYTES[0][1], "s": _KAFKA_HEADERS_HEX + "32", "k": KAFKA_BYTES[0][1]}
    values = {name: [v.hex() for k, v in entries.items() if k is not None]   # (None: a segmented store's floor)
              for name, entries in changes.items()}
    assert values == {name: [hex_bytes] for name, hex_bytes in expected.items()}   # the changelog: Kafka's bytes
    task_store.close()
    task_store.open()   # the task's RocksDB read back
    read = built_over(task_store, builders)
    assert read["w"].fetch("a", 90) == ValueTimestampHeaders("2", 90, HEADERS)
    assert read["s"].fetch_session("a", 90, 90) == AggregationWithHeaders("2", HEADERS)
    assert read["k"].get("a") == ValueTimestampHeaders("2", 90, HEADERS)
    task_store.close()
    rebuilt = {name: InMemoryKeyValueBytesStore(name) for name in builders}   # rebuilt from the changelog
    apply_changes([changes], rebuilt)
    assert [v.hex() for v in rebuilt["k"].entries().values()] == [expected["k"]]


# ------------------------------------------- the DSL's stores under dsl.store.format=HEADERS (test_dsl_headers_stores)

def test_the_local_rocksdb_and_its_changelog_carry_the_dsl_stores_headers_format(tmp_path):   # Spark's task state
    from streams_on_spark.state.local import open_local_task_store, apply_changes

    dsl = materialize(Materialized.as_("counts"), "counts", S, L)
    builder = in_dsl_store_format(dsl, True)   # dsl.store.format=HEADERS
    assert in_dsl_store_format(dsl, False) is dsl
    task_store = open_local_task_store(str(tmp_path / "task"), {"counts": builder})

    written = built_over(task_store, {"counts": builder})["counts"]
    written.put_with_timestamp("a", 7, 90)   # what an aggregation writes
    written.put("b", ValueAndTimestamp(3, 80))   # what a table writes
    changes = task_store.commit("1")
    expected = {b"a": "00" + "000000000000005a" + "0000000000000007",   # empty headers, timestamp, value
                b"b": "00" + "0000000000000050" + "0000000000000003"}
    assert {k: v.hex() for k, v in changes["counts"].items()} == expected   # the changelog: Kafka's bytes
    task_store.close()
    task_store.open()   # the task's RocksDB read back
    read = built_over(task_store, {"counts": builder})["counts"]
    assert isinstance(read, TimestampedKeyValueStoreWithHeaders)
    assert read.get("a") == ValueTimestampHeaders(7, 90, ()) and read.get_with_timestamp("b") == (3, 80)
    task_store.close()
    rebuilt = {"counts": InMemoryKeyValueBytesStore("counts")}   # rebuilt from the changelog
    apply_changes([changes], rebuilt)
    assert {k: v.hex() for k, v in rebuilt["counts"].entries().items()} == expected


def test_the_local_rocksdb_and_its_changelog_carry_the_dsl_window_and_session_stores_format(tmp_path):
    from streams_on_spark.dsl.windowed import session_store_builder, window_store_builder
    from streams_on_spark.state.local import open_local_task_store

    builders = {   # dsl.store.format=HEADERS
        "w": in_dsl_store_format(window_store_builder(Materialized.as_("w"), "w", TimeWindows.of_size_with_no_grace(
            10), S, L), True),
        "s": in_dsl_store_format(session_store_builder(Materialized.as_("s"), "s",
                                                       SessionWindows.of_inactivity_gap_with_no_grace(10), S, L), True)}
    task_store = open_local_task_store(str(tmp_path / "task"), builders)

    written = built_over(task_store, builders)
    written["w"].put("a", ValueAndTimestamp(7, 95), 90)   # what a windowed aggregation writes
    written["s"].aggregations().put(Windowed("a", SessionWindow(90, 95)), 3)   # what a session aggregation writes
    changes = task_store.commit("1")
    values = {name: [v.hex() for k, v in entries.items() if k is not None] for name, entries in changes.items()}
    assert values == {"w": ["00" + "000000000000005f" + "0000000000000007"],   # empty headers, timestamp, value
                      "s": ["00" + "0000000000000003"]}                        # empty headers, aggregation
    task_store.close()
    task_store.open()
    read = built_over(task_store, builders)
    assert type(read["w"]) is DslTimestampedWindowStoreWithHeaders and type(read["s"]) is DslSessionStoreWithHeaders
    assert read["w"].fetch("a", 90) == ValueTimestampHeaders(7, 95, ())
    assert read["s"].fetch_session("a", 90, 95) == AggregationWithHeaders(3, ())
    assert read["s"].aggregations().fetch_session("a", 90, 95) == 3
    task_store.close()


def test_the_driver_warns_of_a_store_read_without_its_timestamps_as_kafkas_does(caplog):
    """Kafka 4.3.1's TopologyTestDriver logs these warnings (its getKeyValueStore names the timestamped accessor for a
    headers-aware store too); its other accessors log nothing."""
    builder = StreamsBuilder()
    grouped = builder.stream("in", Consumed.with_(S, S)).group_by_key()
    grouped.count(Materialized.as_("plain").with_value_serde(L))
    grouped.count(Materialized.as_(Stores.persistent_timestamped_key_value_store_with_headers("headers"))
                  .with_value_serde(L))
    grouped.windowed_by(TimeWindows.of_size_with_no_grace(10)).count(Materialized.as_("w").with_value_serde(L))
    with TopologyTestDriver(builder.build(), {"application.id": "warnings"}) as driver:
        def warned(read: Any) -> list[str]:
            caplog.clear()
            read()
            return [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert warned(lambda: driver.get_key_value_store("plain")) == [
            "Method #get_timestamped_key_value_store() should be used to access a TimestampedKeyValueStore."]
        assert warned(lambda: driver.get_key_value_store("headers")) == [
            "Method #get_timestamped_key_value_store() should be used to access a TimestampedKeyValueStoreWithHeaders."]
        assert warned(lambda: driver.get_window_store("w")) == [
            "Method #get_timestamped_window_store() should be used to access a TimestampedWindowStore."]
        assert warned(lambda: driver.get_timestamped_key_value_store("headers")) == []

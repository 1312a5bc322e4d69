"""Interactive queries on a running ``KafkaStreams`` on Spark (``interactive.queries=true``): answered from the
driver's copy of the tasks' stores while input keeps arriving, equal to the test driver's answers after each batch;
Kafka's errors for an unknown store, a wrong store type, an application not started or stopped."""
from __future__ import annotations

import threading
import time

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    StreamsException,
    TimeWindows,
    TopologyTestDriverBuilder,
)
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.partitioner import partition_for_key
from streams_on_spark.records import ProducerRecord
from streams_on_spark.runtime.spark.runtime import SparkRuntime
from streams_on_spark.errors import IllegalStateError
from streams_on_spark.kafka_streams import State
from streams_on_spark.query import (
    FailureReason,
    HostInfo,
    InvalidStateStoreException,
    KeyQuery,
    Position,
    PositionBound,
    QueryableStoreTypes,
    RangeQuery,
    StateQueryRequest,
    StoreQueryParameters,
    StreamsNotStartedException,
    StreamsStoppedException,
    TopicPartition,
    UnknownStateStoreException,
    WindowKeyQuery,
)

pytestmark = pytest.mark.spark
S, L = Serdes.String(), Serdes.Long()
PARTITIONS = 2
BATCHES = [["a", "b", "a"], ["c", "a", "d", "b"], ["e", "a"]]


def topology():
    builder = StreamsBuilder()
    grouped = builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
    grouped.count(Materialized.as_("counts").with_key_serde(S).with_value_serde(L))
    grouped.windowed_by(TimeWindows.of_size_and_grace(10, 10_000)).count(
        Materialized.as_("window-counts").with_key_serde(S).with_value_serde(L))
    return builder.build()


def kv(store) -> list:
    return sorted((e.key, e.value) for e in store.all())


def answers(app) -> tuple:
    """The counts through store() and per partition through query(), and a key's windows."""
    store = app.store(StoreQueryParameters.from_name_and_type("counts", QueryableStoreTypes.key_value_store()))
    ranges = {p: sorted((e.key, e.value) for e in r.get_result())
              for p, r in app.query(StateQueryRequest.in_store("counts").with_query(RangeQuery.with_no_bounds()))
              .get_partition_results().items()}
    windows = [[(e.key, e.value) for e in r.get_result()] for r in app.query(
        StateQueryRequest.in_store("window-counts").with_query(
            WindowKeyQuery.with_key_and_window_start_range("a", 0, 1_000))).get_partition_results().values()]
    return kv(store), {k: store.get(k) for k in "abcdez"}, ranges, sorted(w for part in windows for w in part)


def records(batch: list[str], start: int) -> list[ProducerRecord]:
    return [ProducerRecord("events", partition_for_key(k.encode(), PARTITIONS), start + i, k.encode(), b"x", ())
            for i, k in enumerate(batch)]


def test_queries_on_a_running_application_equal_the_drivers_after_each_batch(spark, tmp_path):
    topics = EmbeddedTopics(str(tmp_path / "topics"))
    topics.create_topic("events", PARTITIONS)
    config = {"application.id": "iq-app", "embedded.topics.dir": topics.root, "interactive.queries": True,
              "checkpoint.location": str(tmp_path / "ck"), "application.server": "app-1:7070"}
    app = KafkaStreams(topology(), config, spark)
    params = StoreQueryParameters.from_name_and_type("counts", QueryableStoreTypes.key_value_store())
    with pytest.raises(StreamsNotStartedException):
        app.store(params)
    with pytest.raises(UnknownStateStoreException, match="Cannot get state store nope"):
        app.query(StateQueryRequest.in_store("nope").with_query(KeyQuery.with_key("a")))
    with (TopologyTestDriverBuilder(topology()).declare_topic("events", PARTITIONS).build() as driver, app):
        piped = driver.create_input_topic("events", S, S)
        app.start()
        start = 0
        for batch in BATCHES:
            topics.append(records(batch, start))
            for i, key in enumerate(batch):
                piped.pipe_input(key, "x", start + i)
            start += 100
            app.process_all_available()
            assert answers(app) == answers(driver)
        # the position is each task's input offsets as of the micro-batch its answer reflects (execution info)
        result = app.query(StateQueryRequest.in_store("counts").with_query(KeyQuery.with_key("a"))
                           .enable_execution_info())
        assert result.get_only_partition_result().get_result() == 4
        position = result.get_position()   # each task's input offsets, as Kafka's Position
        assert position == driver.query(StateQueryRequest.in_store("counts").with_query(
            KeyQuery.with_key("a"))).get_position()
        assert sum(offset + 1 for offset in position.get_partition_positions("events").values()) == \
            sum(len(batch) for batch in BATCHES)
        for partition, answer in result.get_partition_results().items():
            assert answer.get_execution_info()[-1].startswith(
                f"Partition {partition} of counts as of micro-batch "), answer.get_execution_info()
        # a bound past what a task has processed: NOT_UP_TO_BOUND until the records up to it are processed
        ends = position.get_partition_positions("events")
        ahead = Position.from_map({"events": {0: ends.get(0, -1) + 2}})
        bounded = StateQueryRequest.in_store("counts").with_query(RangeQuery.with_no_bounds()).with_position_bound(
            PositionBound.at(ahead))
        behind = app.query(bounded).get_partition_results()
        assert behind[0].get_failure_reason() is FailureReason.NOT_UP_TO_BOUND
        assert all(r.is_success() for p, r in behind.items() if p != 0)   # held only to their own partition's bound
        key0 = next(k for k in "fghijklmnopq" if partition_for_key(k.encode(), PARTITIONS) == 0)
        topics.append(records([key0] * 2, start))
        for i in range(2):
            piped.pipe_input(key0, "x", start + i)
        start += 100
        app.process_all_available()
        caught_up = app.query(bounded).get_partition_results()
        assert all(r.is_success() for r in caught_up.values())
        assert (key0, 2) in [(e.key, e.value) for e in caught_up[0].get_result()]
        # this instance holds every store and source topic partition (Kafka's StreamsMetadata)
        [instance] = app.metadata_for_all_streams_clients()
        assert instance.host_info == HostInfo("app-1", 7070)
        assert instance.state_store_names == {"counts", "window-counts"}
        assert instance.topic_partitions == {TopicPartition("events", p) for p in range(PARTITIONS)}
        assert app.streams_metadata_for_store("counts") == [instance]
        assert app.streams_metadata_for_store("nope") == []
        meta = app.query_metadata_for_key("counts", "a", S)
        assert meta.partition == driver.query_metadata_for_key("counts", "a", S).partition
        assert (meta.active_host.host, meta.active_host.port) == ("app-1", 7070)
        with pytest.raises(InvalidStateStoreException, match="does not accept the actual store type"):
            app.store(StoreQueryParameters.from_name_and_type("counts", QueryableStoreTypes.window_store())).fetch(
                "a", 0)

        # input still arriving: every answer is a count some batch committed, never going back, and the last one all
        stop = threading.Event()

        def produce() -> None:
            n = 0
            while not stop.is_set() and n < 200:
                topics.append(records(["a"], 10_000 + n))
                n += 1
                time.sleep(0.01)

        writer = threading.Thread(target=produce)
        writer.start()
        seen = []
        # a Spark job started from this thread lands in this group: a query must start none (it reads the copy)
        spark.sparkContext.setJobGroup("interactive-queries", "queries while input arrives")
        store = app.store(params)
        while writer.is_alive():
            seen.append(store.get("a"))
            time.sleep(0.02)   # pacing: queries spread over the batches, not a wait for a condition
        stop.set()
        writer.join()
        assert spark.sparkContext.statusTracker().getJobIdsForGroup("interactive-queries") == []
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        app.process_all_available()
        assert seen == sorted(seen) and seen[0] >= 4
        assert store.get("a") == 4 + 200
    with pytest.raises(IllegalStateError, match="KafkaStreams is not running. State is NOT_RUNNING."):
        app.store(params)
    with pytest.raises(StreamsStoppedException):
        app.query(StateQueryRequest.in_store("counts").with_query(KeyQuery.with_key("a")))


def test_without_interactive_queries_the_application_says_what_to_set(spark, tmp_path):
    topics = EmbeddedTopics(str(tmp_path / "topics"))
    topics.create_topic("events", 1)
    config = {"application.id": "iq-off", "embedded.topics.dir": topics.root,
              "checkpoint.location": str(tmp_path / "ck")}
    with KafkaStreams(topology(), config, spark) as app:
        app.start()
        with pytest.raises(StreamsException, match="'interactive.queries': true"):
            app.query(StateQueryRequest.in_store("counts").with_query(KeyQuery.with_key("a")))


def test_a_restarted_application_answers_from_its_checkpoint_before_new_input(spark, tmp_path, monkeypatch):
    topics = EmbeddedTopics(str(tmp_path / "topics"))
    topics.create_topic("events", PARTITIONS)
    config = {"application.id": "iq-restart", "embedded.topics.dir": topics.root, "interactive.queries": True,
              "checkpoint.location": str(tmp_path / "ck")}
    params = StoreQueryParameters.from_name_and_type("counts", QueryableStoreTypes.key_value_store())
    topics.append(records(BATCHES[0] + BATCHES[1], 0))
    with KafkaStreams(topology(), config, spark) as first:
        first.start()
        first.process_all_available()
        assert kv(first.store(params)) == [("a", 3), ("b", 2), ("c", 1), ("d", 1)]
    second = KafkaStreams(topology(), config, spark)
    during_start = {}
    real_start_query = SparkRuntime._start_query

    def start_query(runtime, sid, fn):
        """The first query starting: the application is REBALANCING, its copy loaded from the checkpoint."""
        if not during_start:
            during_start["state"] = second.state
            stale = second.store(params.enable_stale_stores())
            during_start["stale"] = kv(stale)
            with pytest.raises(InvalidStateStoreException, match="stream thread is PARTITIONS_ASSIGNED, not RUNNING$"):
                second.store(params).get("a")
            during_start["active"] = {p: r.get_failure_reason() for p, r in second.query(
                StateQueryRequest.in_store("counts").with_query(KeyQuery.with_key("a")).require_active())
                .get_partition_results().items()}
            during_start["iqv2"] = second.query(StateQueryRequest.in_store("counts").with_query(
                KeyQuery.with_key("a"))).get_only_partition_result().get_result()
        return real_start_query(runtime, sid, fn)

    monkeypatch.setattr(SparkRuntime, "_start_query", start_query)
    with second:
        second.start()   # the copy is loaded from the checkpoint before any batch runs
        # enable_stale_stores(): answered while the application starts (REBALANCING), from the checkpoint's state
        assert during_start == {"state": State.REBALANCING, "stale": [("a", 3), ("b", 2), ("c", 1), ("d", 1)],
                                "active": {p: FailureReason.NOT_ACTIVE for p in range(PARTITIONS)}, "iqv2": 3}
        assert kv(second.store(params)) == [("a", 3), ("b", 2), ("c", 1), ("d", 1)]
        topics.append(records(["a"], 1_000))
        second.process_all_available()
        assert second.store(params).get("a") == 4


def priced_orders():
    """One subtopology reading two topics: a table of "rates" joined by "orders", and a count of "orders"."""
    builder = StreamsBuilder()
    rates = builder.table("rates", Consumed.with_(S, S),
                          Materialized.as_("rates-table").with_key_serde(S).with_value_serde(S))
    orders = builder.stream("orders", Consumed.with_(S, S))
    orders.join(rates, lambda o, r: f"{o}@{r}").to("priced", Produced.with_(S, S))
    orders.group_by_key().count(Materialized.as_("order-counts").with_key_serde(S).with_value_serde(L))
    return builder.build()


def positions(app, store: str) -> dict:
    """Per partition, the position of the store's answer: {topic: {partition: offset}}."""
    result = app.query(StateQueryRequest.in_store(store).with_query(KeyQuery.with_key("a")))
    return {p: {t: r.get_position().get_partition_positions(t) for t in r.get_position().get_topics()}
            for p, r in result.get_partition_results().items()}


def test_each_store_has_its_own_position_on_a_running_application_and_after_a_restart(spark, tmp_path):
    """Kafka's positions per store: a store's position holds the topic partitions of the records that wrote it (the
    table's only "rates", the count's only "orders", though their task reads both), as the driver's; a restarted
    application's copy has them from the checkpoint before any new input."""
    topics = EmbeddedTopics(str(tmp_path / "topics"))
    for topic in ("rates", "orders", "priced"):
        topics.create_topic(topic, PARTITIONS)
    config = {"application.id": "iq-positions", "embedded.topics.dir": topics.root, "interactive.queries": True,
              "checkpoint.location": str(tmp_path / "ck")}
    rates = [("a", "r1"), ("b", "r2"), ("c", "r3"), ("a", "r4")]
    orders = [("a", "o1"), ("b", "o2"), ("d", "o3"), ("a", "o4"), ("e", "o5")]

    def produce(topic: str, entries: list) -> list[ProducerRecord]:
        return [ProducerRecord(topic, partition_for_key(k.encode(), PARTITIONS), i, k.encode(), v.encode(), ())
                for i, (k, v) in enumerate(entries)]

    with TopologyTestDriverBuilder(priced_orders()).declare_topic("rates", PARTITIONS).declare_topic(
            "orders", PARTITIONS).build() as driver:
        for topic, entries in (("rates", rates), ("orders", orders)):
            piped = driver.create_input_topic(topic, S, S)
            for i, (k, v) in enumerate(entries):
                piped.pipe_input(k, v, i)
        expected = {store: positions(driver, store) for store in ("rates-table", "order-counts")}
    assert {t for p in expected["rates-table"].values() for t in p} == {"rates"}
    assert {t for p in expected["order-counts"].values() for t in p} == {"orders"}
    # the rates, then the orders: each task's records in the driver's order
    topics.append(produce("rates", rates))
    with KafkaStreams(priced_orders(), config, spark) as first:
        first.start()
        first.process_all_available()
        topics.append(produce("orders", orders))
        first.process_all_available()
        assert {store: positions(first, store) for store in expected} == expected
        # a bound on the other topic is never met by a store its records did not write
        bound = PositionBound.at(Position.from_map({"orders": {p: 0 for p in range(PARTITIONS)}}))
        answers = first.query(StateQueryRequest.in_store("rates-table").with_query(KeyQuery.with_key("a"))
                              .with_position_bound(bound)).get_partition_results()
        assert {r.get_failure_reason() for r in answers.values()} == {FailureReason.NOT_UP_TO_BOUND}
    with KafkaStreams(priced_orders(), config, spark) as second:
        second.start()   # the copy is loaded from the checkpoint (snapshot version 4 holds the stores' positions)
        assert {store: positions(second, store) for store in expected} == expected

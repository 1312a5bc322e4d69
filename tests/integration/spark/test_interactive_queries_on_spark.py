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
    Serdes,
    StreamsBuilder,
    StreamsException,
    TimeWindows,
    TopologyTestDriverBuilder,
)
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.connectors.partitioner import partition_for_key
from streams_on_spark.connectors.records import ProducerRecord
from streams_on_spark.errors import IllegalStateError
from streams_on_spark.query import (
    InvalidStateStoreException,
    KeyQuery,
    QueryableStoreTypes,
    RangeQuery,
    StateQueryRequest,
    StoreQueryParameters,
    StreamsNotStartedException,
    StreamsStoppedException,
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
        # the position names the micro-batch each partition's answer reflects
        result = app.query(StateQueryRequest.in_store("counts").with_query(KeyQuery.with_key("a")))
        assert result.get_only_partition_result().get_result() == 4
        position = result.get_position()   # each task's input offsets and micro-batch
        assert position.get_topics() == {"events", "iq-app-subtopology-0"}
        assert all(batch >= 0 for batch in position.get_partition_positions("iq-app-subtopology-0").values())
        assert sum(offset + 1 for offset in position.get_partition_positions("events").values()) == \
            sum(len(batch) for batch in BATCHES)
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


def test_a_restarted_application_answers_from_its_checkpoint_before_new_input(spark, tmp_path):
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
    with KafkaStreams(topology(), config, spark) as second:
        second.start()   # the copy is loaded from the checkpoint before any batch runs
        assert kv(second.store(params)) == [("a", 3), ("b", 2), ("c", 1), ("d", 1)]
        topics.append(records(["a"], 1_000))
        second.process_all_available()
        assert second.store(params).get("a") == 4

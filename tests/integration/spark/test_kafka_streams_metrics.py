"""Metrics on Spark after a known workload: ``KafkaStreams.metrics()`` over embedded topics (per task from the
commit rows, per query from Spark's progress events, lag from the source offsets), the state listener's
transitions, and the test driver's ``metrics()`` with the Spark engine equal to the in-process engine's."""
from __future__ import annotations

import math

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TopologyTestDriverBuilder,
)
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.records import ProducerRecord
from streams_on_spark.errors import IllegalStateError
from streams_on_spark.kafka_streams import State
from streams_on_spark.metrics import CONSUMER_FETCH_GROUP, TASK_GROUP, THREAD_GROUP

pytestmark = pytest.mark.spark
S, L = Serdes.String(), Serdes.Long()
LINES = ["the cat sat", "the dog ran", "a cat and a dog"]   # keyed line-0..2, on partitions 0..2
DROPPED = "drop me"                                          # null key, partition 3: the per-line count drops it


def counts():
    """Subtopology 0 counts lines per key (dropping null keys) and splits them into words; subtopology 1 counts
    words."""
    builder = StreamsBuilder()
    lines = builder.stream("sentences", Consumed.with_(S, S))
    lines.group_by_key().count(Materialized.as_("per-line"))
    (lines.flat_map_values(str.split)
     .select_key(lambda _k, w: w)
     .group_by_key(Grouped.with_(S, S, name="by-word"))
     .count(Materialized.as_("word-counts"))
     .to_stream().to("word-counts-out", Produced.with_(S, L)))
    return builder.build()


def workload() -> list[ProducerRecord]:
    records = [ProducerRecord("sentences", i, 1_000 + i, f"line-{i}".encode(), line.encode(), ())
               for i, line in enumerate(LINES)]
    return records + [ProducerRecord("sentences", 3, 1_010, None, DROPPED.encode(), ())]


WORDS = sum(len(line.split()) for line in [*LINES, DROPPED])   # 13 records through subtopology 1


def test_kafka_streams_metrics_after_a_known_workload(spark, tmp_path):
    topics = EmbeddedTopics(str(tmp_path / "topics"))
    topics.create_topic("sentences", 4)
    topics.create_topic("word-counts-out", 4)
    topics.append(workload())
    config = {"application.id": "metrics-app", "client.id": "metrics-client", "embedded.topics.dir": topics.root,
              "checkpoint.location": str(tmp_path / "ck")}
    listeners_before = len(spark.streams._jsqm.listListeners())   # no listener: no JVM callbacks into Python
    transitions: list[tuple[State, State]] = []
    streams = KafkaStreams(counts(), config, spark)
    assert len(streams.metrics()) == 0   # nothing runs yet
    streams.set_state_listener(lambda new, old: transitions.append((new, old)))
    with streams:
        streams.start()
        with pytest.raises(IllegalStateError, match="before calling start"):
            streams.set_state_listener(print)
        assert len(spark.streams._jsqm.listListeners()) == listeners_before
        streams.process_all_available()
        metrics = streams.metrics()
        thread = {sid: f"metrics-client-StreamThread-{sid + 1}" for sid in (0, 1)}

        per_task = metrics.find("process-total", TASK_GROUP)
        assert {m.tags["task-id"]: v for m, v in per_task.items() if m.tags["task-id"].startswith("0_")} == {
            "0_0": 1, "0_1": 1, "0_2": 1, "0_3": 1}
        assert all(m.tags["thread-id"] == thread[int(m.tags["task-id"][0])] for m in per_task)
        assert sum(v for m, v in per_task.items() if m.tags["task-id"].startswith("1_")) == WORDS
        assert metrics.value("dropped-records-total", TASK_GROUP, {"task-id": "0_3"}) == 1
        assert metrics["dropped-records-total"] == 1 and metrics["process-total"] == len(LINES) + 1 + WORDS
        assert metrics.value("process-total", THREAD_GROUP, {"thread-id": thread[0]}) == len(LINES) + 1
        assert metrics.value("process-total", THREAD_GROUP, {"thread-id": thread[1]}) == WORDS
        for sid in (0, 1):
            tags = {"thread-id": thread[sid]}
            assert metrics.value("commit-total", THREAD_GROUP, tags) > 0
            assert metrics.value("commit-rate", THREAD_GROUP, tags) > 0
            average = metrics.value("commit-latency-avg", THREAD_GROUP, tags)
            assert 0 < average <= metrics.value("commit-latency-max", THREAD_GROUP, tags)
            assert metrics.value("process-rate", THREAD_GROUP, tags) > 0
            consumer = {"client-id": f"{thread[sid]}-consumer"}
            assert metrics.value("records-lag-max", CONSUMER_FETCH_GROUP, consumer) == 0

        # read from each query's progress when metrics() is called
        consumed = {sid: metrics.find("records-consumed-total", CONSUMER_FETCH_GROUP,
                                      {"client-id": f"{thread[sid]}-consumer"}) for sid in (0, 1)}
        assert [sum(found.values()) for found in consumed.values()] == [len(LINES) + 1, WORDS], consumed
        assert metrics.value("poll-total", THREAD_GROUP, {"thread-id": thread[0]}) >= 1
        assert metrics.value("poll-records-max", THREAD_GROUP, {"thread-id": thread[0]}) <= len(LINES) + 1
        assert not math.isnan(metrics.value("poll-records-avg", THREAD_GROUP, {"thread-id": thread[1]}))

    assert transitions == [(State.REBALANCING, State.CREATED), (State.RUNNING, State.REBALANCING),
                           (State.PENDING_SHUTDOWN, State.RUNNING),
                           (State.NOT_RUNNING, State.PENDING_SHUTDOWN)]
    assert len(spark.streams._jsqm.listListeners()) == listeners_before
    assert streams.metrics()["process-total"] == len(LINES) + 1 + WORDS       # the last values stay readable


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_driver_metrics_are_the_same_on_both_engines(spark, engine):
    builder = (TopologyTestDriverBuilder(counts()).with_config({"application.id": f"metrics-driver-{engine}"})
               .declare_topic("sentences", 4).with_engine(engine, spark if engine == "spark" else None))
    with builder.build() as driver:
        inp = driver.create_input_topic("sentences", S, S, start_timestamp=1_000)
        for i, line in enumerate(LINES):
            inp.pipe_input(f"line-{i}", line, partition=i)
        inp.pipe_input(None, DROPPED, partition=3)
        metrics = driver.metrics()
    totals = {m.tags["task-id"]: v for m, v in metrics.find("process-total", TASK_GROUP).items()}
    assert {t: v for t, v in totals.items() if t.startswith("0_")} == {"0_0": 1, "0_1": 1, "0_2": 1, "0_3": 1}
    assert sum(v for t, v in totals.items() if t.startswith("1_")) == WORDS
    assert sorted(totals) == [f"{s}_{p}" for s in (0, 1) for p in range(4)]
    assert metrics.value("dropped-records-total", TASK_GROUP, {"task-id": "0_3"}) == 1
    assert metrics["dropped-records-total"] == 1 and metrics["process-rate"] > 0
    assert metrics.names() == {"process-total", "process-rate", "dropped-records-total", "dropped-records-rate"}

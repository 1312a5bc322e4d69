"""``TopologyTestDriver.metrics()``: Kafka's task-level metric names, groups and tags, and their values after a
known workload; ``MetricName`` and ``Metrics`` look-ups; the sampled rates."""
from __future__ import annotations

import math
import threading

import pytest

from streams_on_spark import Consumed, Materialized, Produced, Serdes, StreamsBuilder, TopologyTestDriverBuilder
from streams_on_spark.metrics import TASK_GROUP, MetricName, Metrics, Sensor

S, L = Serdes.String(), Serdes.Long()
TASK_METRICS = {"process-total", "process-rate", "dropped-records-total", "dropped-records-rate"}


def counting():
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).group_by_key().count(Materialized.as_("c")).to_stream().to("out", Produced.with_(S, L))
    return builder.build()


def test_multi_partition_driver_reports_each_tasks_processed_and_dropped_records():
    driver = (TopologyTestDriverBuilder(counting()).with_config({"application.id": "metrics"})
              .declare_topic("in", 2).build())
    with driver:
        inp = driver.create_input_topic("in", S, S, start_timestamp=0)
        for key, value, partition in [("a", "1", 0), ("b", "2", 0), ("c", "3", 1), (None, "x", 1), ("d", None, 0)]:
            inp.pipe_input(key, value, partition=partition)
        metrics = driver.metrics()

    assert isinstance(metrics, Metrics)
    assert metrics.names() == TASK_METRICS
    thread = threading.current_thread().name
    assert {m.group for m in metrics} == {TASK_GROUP}
    assert {tuple(sorted(m.tags.items())) for m in metrics} == {
        (("task-id", "0_0"), ("thread-id", thread)), (("task-id", "0_1"), ("thread-id", thread))}
    assert metrics[MetricName("process-total", TASK_GROUP, {"thread-id": thread, "task-id": "0_0"})] == 3
    assert metrics.value("process-total", TASK_GROUP, {"task-id": "0_1"}) == 2
    assert metrics.value("dropped-records-total", tags={"task-id": "0_0"}) == 1   # null value
    assert metrics.value("dropped-records-total", tags={"task-id": "0_1"}) == 1   # null key
    assert metrics["process-total"] == 5                                          # by name: summed over tasks
    assert metrics["dropped-records-total"] == 2
    assert metrics["process-rate"] > 0 and metrics.value("dropped-records-rate", tags={"task-id": "0_1"}) > 0


def test_single_partition_driver_has_one_task_0_0_and_counts_from_zero():
    with TopologyTestDriverBuilder(counting()).with_config({"application.id": "metrics-1"}).build() as driver:
        assert driver.metrics()["process-total"] == 0
        assert driver.metrics()["process-rate"] == 0.0
        driver.create_input_topic("in", S, S).pipe_key_value_list([("a", "1"), ("a", "2")])
        metrics = driver.metrics()
    assert {m.tags["task-id"] for m in metrics} == {"0_0"}
    assert metrics["process-total"] == 2 and metrics["dropped-records-total"] == 0


def test_metric_name_is_a_hashable_value_with_read_only_tags():
    a = MetricName("process-total", TASK_GROUP, {"task-id": "0_1", "thread-id": "t"})
    b = MetricName("process-total", TASK_GROUP, {"thread-id": "t", "task-id": "0_1"})
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    with pytest.raises(TypeError):
        a.tags["task-id"] = "0_2"   # type: ignore[index]
    with pytest.raises(ValueError, match="metric name"):
        MetricName("", TASK_GROUP)
    with pytest.raises(ValueError, match="tags must be a mapping"):
        MetricName("process-total", TASK_GROUP, ["task-id"])   # type: ignore[arg-type]


def test_look_ups_by_name_name_what_is_missing_or_ambiguous():
    t0 = {"thread-id": "t", "task-id": "0_0"}
    t1 = {"thread-id": "t", "task-id": "0_1"}
    metrics = Metrics({MetricName("process-total", TASK_GROUP, t0): 2, MetricName("process-total", TASK_GROUP, t1): 3,
                       MetricName("commit-latency-avg", "stream-thread-metrics", {"thread-id": "a"}): 1.0,
                       MetricName("commit-latency-avg", "stream-thread-metrics", {"thread-id": "b"}): 2.0})
    assert metrics["process-total"] == 5 and "process-total" in metrics and "process-rate" not in metrics
    with pytest.raises(KeyError, match=r"no metric named .+process-rate"):
        metrics["process-rate"]
    with pytest.raises(KeyError, match=r"2 metrics named .+commit-latency-avg"):
        metrics["commit-latency-avg"]
    with pytest.raises(KeyError, match=r"2 metrics named .+process-total"):
        metrics.value("process-total")
    assert metrics.value("commit-latency-avg", tags={"thread-id": "b"}) == 2.0


def test_sensor_samples_rates_averages_and_maxima_as_kafka():
    now = [0.0]
    sensor = Sensor(window_s=30.0, samples=2, clock=lambda: now[0])
    assert sensor.rate() == 0.0 and math.isnan(sensor.avg()) and math.isnan(sensor.max())
    sensor.record(30)
    now[0] = 10.0
    sensor.record(10)
    assert sensor.rate() == pytest.approx(40 / (10 + 30))   # 10 s elapsed, plus the missing full window (Kafka)
    assert sensor.events_rate() == pytest.approx(2 / 40)
    assert sensor.avg() == 20 and sensor.max() == 30 and sensor.count == 2 and sensor.sum == 40
    now[0] = 100.0                                       # both samples expired; totals stay
    assert sensor.rate() == 0.0 and math.isnan(sensor.max()) and sensor.sum == 40
    with pytest.raises(ValueError, match="sample window"):
        Sensor(window_s=0)

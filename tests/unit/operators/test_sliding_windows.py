"""Sliding windows reproduce Kafka's ``KStreamSlidingWindowAggregateTest#testAggregateSmallInput`` exactly."""
from __future__ import annotations

from streams_on_spark import (
    Consumed,
    Processor,
    Grouped,
    Materialized,
    Serdes,
    SlidingWindows,
    StreamsBuilder,
    TopologyTestDriver,
)

S = Serdes.String()


def test_aggregate_small_input_matches_kafka():
    seen: dict[int, set[tuple[str, int]]] = {}

    builder = StreamsBuilder()
    (builder.stream("topic", Consumed.with_(S, S))
     .group_by_key(Grouped.with_(S, S))
     .windowed_by(SlidingWindows.of_time_difference_and_grace(10, 5))
     .aggregate(lambda: "0", lambda k, v, agg: agg + "+" + v, materialized=Materialized.with_(S, S))
     .to_stream()
     .process(lambda: _Gather(seen)))
    with TopologyTestDriver(builder.build(), {"application.id": "sliding"}) as driver:
        topic = driver.create_input_topic("topic", S, S)
        for value, ts in [("1", 10), ("2", 10), ("3", 14), ("4", 15), ("5", 20), ("6", 22), ("7", 30)]:
            topic.pipe_input("A", value, ts)
    assert seen == {
        0: {("0+1", 10), ("0+1+2", 10)},
        4: {("0+1+2+3", 14)},
        5: {("0+1+2+3+4", 15)},
        10: {("0+1+2+3+4+5", 20)},
        11: {("0+3", 14), ("0+3+4", 15), ("0+3+4+5", 20)},
        12: {("0+3+4+5+6", 22)},
        15: {("0+4", 15), ("0+4+5", 20), ("0+4+5+6", 22)},
        16: {("0+5", 20), ("0+5+6", 22)},
        20: {("0+5+6+7", 30)},
        21: {("0+6", 22), ("0+6+7", 30)},
        23: {("0+7", 30)},
    }


class _Gather(Processor):
    def __init__(self, seen):
        self.seen = seen

    def process(self, record):
        self.seen.setdefault(record.key.window.start, set()).add((record.value, record.timestamp))

"""Inside a task, the partition whose head record has the smallest timestamp goes next (Kafka's PartitionGroup)."""
from __future__ import annotations

import pytest

from streams_on_spark import Processor, Record, Serdes, Topology, TopologyTestDriverBuilder

S = Serdes.String()


class FanOut(Processor):
    """One input record becomes x@30, x@10 (to topic x) and y@20, y@5 (to topic y), in that order."""

    def process(self, record: Record) -> None:
        for child, ts in (("to-x", 30), ("to-x", 10), ("to-y", 20), ("to-y", 5)):
            self.context.forward(Record(record.key, f"{child[-1]}@{ts}", ts), child)


class Log(Processor):
    seen: list = []

    def process(self, record: Record) -> None:
        Log.seen.append((record.value, self.context.current_stream_time_ms()))


def topology() -> Topology:
    return (Topology()
            .add_source("in", "in", key_serde=S, value_serde=S)
            .add_processor("fan-out", FanOut, "in")
            .add_sink("to-x", "x", "fan-out", key_serde=S, value_serde=S)
            .add_sink("to-y", "y", "fan-out", key_serde=S, value_serde=S)
            .add_source("from-x-y", "x", "y", key_serde=S, value_serde=S)
            .add_processor("log", Log, "from-x-y"))


@pytest.mark.parametrize("partitions", [1, 3])
def test_smallest_head_timestamp_first_and_offset_order_within_a_partition(partitions):
    Log.seen = []
    builder = TopologyTestDriverBuilder(topology()).with_config({"application.id": "order"})
    for topic in ("in", "x", "y"):
        builder.declare_topic(topic, partitions)
    with builder.build() as driver:
        driver.create_input_topic("in", S, S).pipe_input("k", "go", 1)
    # heads x@30 / y@20 -> y@20; heads x@30 / y@5 -> y@5; then x in offset order even though x@10 < x@30
    assert Log.seen == [("y@20", 20), ("y@5", 20), ("x@30", 30), ("x@10", 30)]

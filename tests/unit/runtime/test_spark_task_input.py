"""What the Spark task function reads: Spark's Kafka source rows (one per record, in no order) become the task's
input per topic-partition in offset order, with their offsets, timestamps and headers; no Spark needed."""
from __future__ import annotations

import numpy as np
import pandas as pd

from streams_on_spark import Processor, Record, Serdes, Topology
from streams_on_spark.config import TaskConfig
from streams_on_spark.runtime.spark.output import ReturnedOutput
from streams_on_spark.runtime.spark.task_function import SubtopologyTaskFunction
from streams_on_spark.topology.partitions import TopicLayout

SEEN: list[tuple] = []


class Remember(Processor):
    def init(self, context) -> None:
        self.context = context

    def process(self, record: Record) -> None:
        meta = self.context.record_metadata()
        SEEN.append((meta.topic, meta.partition, meta.offset, record.timestamp, record.key, record.headers))


def test_kafka_rows_are_queued_per_partition_in_offset_order_with_their_metadata():
    topology = (Topology().add_source("src", "in", key_serde=Serdes.ByteArray(), value_serde=Serdes.ByteArray())
                .add_processor("remember", Remember, "src"))
    builder = topology.internal_builder
    layout = TopicLayout.of(builder, "app", {"in": 2})
    fn = SubtopologyTaskFunction(builder, 0, TaskConfig.from_config({"application.id": "app"}), layout,
                                 ReturnedOutput())
    rows = [  # (partition, offset, timestamp, key, headers): shuffled, a gap in partition 0's offsets
        (0, 7, 30, b"c", None), (1, 0, 5, b"x", np.array([{"key": "h", "value": b"1"}], dtype=object)),
        (0, 3, 10, b"a", np.array([], dtype=object)), (0, 4, 20, b"b", None)]
    frame = pd.DataFrame({"topic": ["in"] * 4, "partition": np.array([r[0] for r in rows], np.int32),
                          "offset": [r[1] for r in rows], "timestamp": [r[2] for r in rows],
                          "key": [r[3] for r in rows], "value": [b"v"] * 4, "headers": [r[4] for r in rows]})
    SEEN.clear()
    task = fn.new_task(0, None)
    positions: dict = {}
    assert fn._add_batch(task, [frame], positions) == []
    assert positions == {("in", 0): 8, ("in", 1): 1}   # the offset after the last record read per partition
    while task.process_one():
        pass
    assert SEEN == [("in", 1, 0, 5, b"x", (("h", b"1"),)), ("in", 0, 3, 10, b"a", ()), ("in", 0, 4, 20, b"b", ()),
                    ("in", 0, 7, 30, b"c", ())]

"""Records for the embedded topics' tests (the log's and its Spark data source's)."""
from __future__ import annotations

from streams_on_spark.records import ProducerRecord


def records(topic: str, partition: int, n: int, tag: str = "r") -> list[ProducerRecord]:
    """``n`` records to one topic-partition: key ``k<i>``, value ``<tag><i>``, timestamp ``1000 + i``."""
    return [ProducerRecord(topic, partition, 1000 + i, f"k{i}".encode(), f"{tag}{i}".encode(), ()) for i in range(n)]

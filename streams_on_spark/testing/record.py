"""``TestRecord``: what tests pipe in and read out."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from streams_on_spark.processor.api import Headers, to_headers


@dataclass(eq=True)
class TestRecord:
    """Key, value, timestamp (ms), headers and partition.

    On input, ``timestamp=None`` takes the topic's clock and ``partition=None`` lets the driver route the record
    (murmur2 of the key, round-robin for null keys). Output records always carry their real partition.
    """

    __test__ = False  # not a pytest test class

    key: Any = None
    value: Any = None
    timestamp: Optional[int] = None
    headers: Headers = field(default=())
    partition: Optional[int] = None

    def __post_init__(self) -> None:
        if self.timestamp is not None:
            if not isinstance(self.timestamp, int) or isinstance(self.timestamp, bool):
                raise ValueError(f"timestamp must be an int (ms), got {self.timestamp!r}")
            if self.timestamp < 0:
                raise ValueError(f"Invalid timestamp {self.timestamp}: timestamps must be >= 0")
        if self.partition is not None and (not isinstance(self.partition, int) or self.partition < 0):
            raise ValueError(f"partition must be a non-negative int, got {self.partition!r}")
        self.headers = to_headers(self.headers)

    def equals_ignore_partition(self, other: object) -> bool:
        """Equal in key, value, timestamp and headers, whatever the partitions."""
        return (isinstance(other, TestRecord) and self.key == other.key and self.value == other.value
                and self.timestamp == other.timestamp and self.headers == other.headers)

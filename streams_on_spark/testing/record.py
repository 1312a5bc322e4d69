"""``TestRecord``: what tests pipe in and read out."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from streams_on_spark.errors import require_int
from streams_on_spark.headers import Headers, to_headers


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
        if require_int(self.timestamp, "timestamp (ms)", optional=True) is not None and self.timestamp < 0:
            raise ValueError(f"Invalid timestamp {self.timestamp}: timestamps must be >= 0")
        require_int(self.partition, "partition", minimum=0, optional=True)
        self.headers = to_headers(self.headers)

    def equals_ignore_partition(self, other: object) -> bool:
        """Equal in key, value, timestamp and headers, whatever the partitions."""
        return (isinstance(other, TestRecord) and self.key == other.key and self.value == other.value
                and self.timestamp == other.timestamp and self.headers == other.headers)

"""Records as they sit in a topic partition: bytes plus coordinates."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, Optional

Headers = tuple[tuple[str, Optional[bytes]], ...]


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """A topic and its partition count."""

    name: str
    partitions: int

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("topic name must be a non-empty str")
        if not isinstance(self.partitions, int) or isinstance(self.partitions, bool) or self.partitions < 1:
            raise ValueError(f"partitions of topic {self.name} must be an int >= 1, got {self.partitions!r}")


class ProducerRecord(NamedTuple):
    """A serialized record bound for ``topic``/``partition`` (the partition is always resolved)."""

    topic: str
    partition: int
    timestamp: int
    key: Optional[bytes]
    value: Optional[bytes]
    headers: Headers = ()


class ConsumerRecord(NamedTuple):
    """A record read from a topic partition; ``key``/``value`` are bytes or, after a source, objects."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: Any
    value: Any
    headers: Headers = ()

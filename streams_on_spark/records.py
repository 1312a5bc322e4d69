"""Records as they sit in a topic partition: bytes plus coordinates."""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

Headers = tuple[tuple[str, Optional[bytes]], ...]


class ProducerRecord(NamedTuple):
    """A serialized record bound for ``topic``/``partition`` (Kafka's ``ProducerRecord``); the one a production
    exception handler gets holds the unserialized key and value, and a partition only where a partitioner picked one."""

    topic: str
    partition: Optional[int]
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

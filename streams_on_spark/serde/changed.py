"""``ChangedSerde``: table updates on a repartition topic in the bytes of Kafka's ``ChangedSerializer``."""
from __future__ import annotations

from typing import Any, Optional

from streams_on_spark.change import Change
from streams_on_spark.errors import StreamsException


class ChangedSerde:
    """Kafka's ``ChangedSerializer`` layout for table updates on a repartition topic.

    old only: ``old|0x00``; new only: ``new|0x01``; both: ``zigzag-varint(len(new))|new|old|0x02``.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def serialize(self, topic: Optional[str], change: Optional[Change]) -> Optional[bytes]:
        if change is None:
            return None
        new = None if change.new_value is None else self.inner.serialize(topic, change.new_value)
        old = None if change.old_value is None else self.inner.serialize(topic, change.old_value)
        if new is not None and old is not None:
            return zigzag_varint(len(new)) + new + old + b"\x02"
        if new is not None:
            return new + b"\x01"
        if old is not None:
            return old + b"\x00"
        raise StreamsException("Both old and new values are null in ChangeSerializer, which is not allowed.")

    def deserialize(self, topic: Optional[str], data: Optional[bytes]) -> Optional[Change]:
        if data is None:
            return None
        flag = data[-1]
        if flag == 0:
            return Change(None, self.inner.deserialize(topic, data[:-1]))
        if flag == 1:
            return Change(self.inner.deserialize(topic, data[:-1]), None)
        if flag == 2:
            length, pos = read_zigzag_varint(data)
            new = data[pos:pos + length]
            old = data[pos + length:-1]
            return Change(self.inner.deserialize(topic, new), self.inner.deserialize(topic, old))
        raise StreamsException(f"Encoding flag {flag} of a Change on topic {topic} is not supported")

    def __repr__(self) -> str:
        return f"ChangedSerde({self.inner!r})"


def zigzag_varint(value: int) -> bytes:
    """Kafka's ``ByteUtils.writeVarint``: a zigzag-encoded signed 32-bit varint."""
    v = ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF
    out = bytearray()
    while v & ~0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def read_zigzag_varint(data: bytes, pos: int = 0) -> tuple[int, int]:
    """Kafka's ``ByteUtils.readVarint`` at ``pos``: the value and the position after it."""
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    return (value >> 1) ^ -(value & 1), pos

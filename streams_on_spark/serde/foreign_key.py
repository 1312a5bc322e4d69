"""Foreign-key join (KIP-213) wire formats: the subscription and response wrappers on the join's internal topics,
the combined key of the subscription store, and Kafka's 128-bit murmur3 value hash — all in Kafka's bytes.

Layouts (Kafka 4.3.1's ``SubscriptionWrapperSerde``, ``SubscriptionResponseWrapperSerde``, ``CombinedKeySchema``):

- subscription: ``{7-bit version | 1-bit hash-is-null}{instruction}{16-byte hash?}{primary key}{int32 partition}``
  (the partition from version 1 on);
- response: ``{7-bit version | 1-bit hash-is-null}{16-byte hash?}{foreign value?}``;
- combined key: ``{int32 len(foreign key)}{foreign key}{primary key}``, so a prefix scan finds a foreign key's
  subscribers.

A wrapper serde whose inner serde is ``None`` takes the application's default once a join processor calls
:meth:`set_if_unset` (Kafka's ``WrappingNullableSerde.setIfUnset``).
"""
from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import Any, Optional

import mmh3

from streams_on_spark.errors import SerializationException

MURMUR3_SEED = 104729          # Kafka's Murmur3.DEFAULT_SEED
SUBSCRIPTION_VERSION = 1       # SubscriptionWrapper.CURRENT_VERSION
RESPONSE_VERSION = 0           # SubscriptionResponseWrapper.CURRENT_VERSION
_HASH = struct.Struct(">qq")
_INT = struct.Struct(">i")


def murmur3_hash128(data: bytes) -> tuple[int, int]:
    """Kafka's ``Murmur3.hash128``: MurmurHash3 x64 128-bit with seed 104729, as two signed 64-bit longs."""
    h1, h2 = mmh3.hash64(data, MURMUR3_SEED, True, True)
    return h1, h2


class Instruction(enum.IntEnum):
    """What the foreign side does with a subscription (Kafka's ``SubscriptionWrapper.Instruction``)."""

    DELETE_KEY_NO_PROPAGATE = 0                  # unsubscribe; send nothing
    DELETE_KEY_AND_PROPAGATE = 1                 # unsubscribe; send (key, null)
    PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE = 2    # subscribe; send the foreign value or null
    PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE = 3       # subscribe; send the foreign value only if there is one


@dataclass(frozen=True)
class SubscriptionWrapper:
    """A left-table row's subscription to a foreign key: its value hash, instruction, key and source partition."""

    hash: Optional[tuple[int, int]]
    instruction: Instruction
    primary_key: Any
    primary_partition: Optional[int]
    version: int = SUBSCRIPTION_VERSION

    def __post_init__(self) -> None:
        if self.primary_key is None:
            raise ValueError("primaryKey cannot be null. Required by downstream processor.")
        if not 0 <= self.version <= SUBSCRIPTION_VERSION:
            raise SerializationException(f"SubscriptionWrapper does not support version {self.version}")


@dataclass(frozen=True)
class SubscriptionResponseWrapper:
    """The foreign side's answer: the subscription's value hash, the foreign value (or None) and the partition of
    the left row (where the response goes; not serialized)."""

    original_value_hash: Optional[tuple[int, int]]
    foreign_value: Any
    primary_partition: Optional[int] = None
    version: int = RESPONSE_VERSION

    def __post_init__(self) -> None:
        if not 0 <= self.version <= RESPONSE_VERSION:
            raise SerializationException(f"SubscriptionResponseWrapper does not support version {self.version}")


@dataclass(frozen=True)
class CombinedKey:
    """The subscription store's key: the foreign key and the subscribing row's primary key."""

    foreign_key: Any
    primary_key: Any


def _version_byte(version: int, hash_: Optional[tuple[int, int]]) -> bytes:
    return bytes([version if hash_ is not None else version | 0x80])


def _read_hash(data: bytes, pos: int, hash_is_null: bool, what: str, topic: Optional[str]
               ) -> tuple[Optional[tuple[int, int]], int]:
    if hash_is_null:
        return None, pos
    if len(data) < pos + _HASH.size:
        raise SerializationException(f"{what} on topic {topic!r} is truncated: {len(data)} bytes, no room for its "
                                     "16-byte hash")
    return _HASH.unpack_from(data, pos), pos + _HASH.size


class SubscriptionWrapperSerde:
    """Kafka's ``SubscriptionWrapperSerde`` (version 1: with the primary partition); ``pk_topic`` is the pseudo topic
    the primary key is serialized for."""

    def __init__(self, primary_key_serde: Any, pk_topic: Optional[str] = None) -> None:
        self.primary_key_serde = primary_key_serde
        self.pk_topic = pk_topic

    def set_if_unset(self, key_serde: Any, value_serde: Any) -> None:
        if self.primary_key_serde is None:
            self.primary_key_serde = key_serde

    def _pk_serde(self) -> Any:
        if self.primary_key_serde is None:
            raise SerializationException("the foreign-key join's subscription serde has no primary key serde: give "
                                         "the left table's key serde, or set 'default.key.serde'")
        return self.primary_key_serde

    def serialize(self, topic: Optional[str], data: Optional[SubscriptionWrapper]) -> Optional[bytes]:
        if data is None:
            return None
        pk = self._pk_serde().serialize(self.pk_topic, data.primary_key)
        out = _version_byte(data.version, data.hash) + bytes([int(data.instruction)])
        if data.hash is not None:
            out += _HASH.pack(*data.hash)
        out += pk
        if data.version >= 1:
            if data.primary_partition is None:
                raise SerializationException("SubscriptionWrapper version 1 needs a primary partition")
            out += _INT.pack(data.primary_partition)
        return out

    def deserialize(self, topic: Optional[str], data: Optional[bytes]) -> Optional[SubscriptionWrapper]:
        if data is None:
            return None
        if len(data) < 2:
            raise SerializationException(f"a subscription on topic {topic!r} needs at least 2 bytes, got {len(data)}")
        version, hash_is_null = data[0] & 0x7F, bool(data[0] & 0x80)
        try:
            instruction = Instruction(data[1])
        except ValueError:
            raise SerializationException(f"Unknown instruction byte value = {data[1]} (topic {topic!r})") from None
        hash_, pos = _read_hash(data, 2, hash_is_null, "a subscription", topic)
        end = len(data) - (_INT.size if version > 0 else 0)
        if end < pos:
            raise SerializationException(f"a subscription on topic {topic!r} is truncated ({len(data)} bytes)")
        pk = self._pk_serde().deserialize(self.pk_topic, data[pos:end])
        partition = _INT.unpack_from(data, end)[0] if version > 0 else None
        return SubscriptionWrapper(hash_, instruction, pk, partition, version)

    def __repr__(self) -> str:
        return f"SubscriptionWrapperSerde({self.primary_key_serde!r})"


class SubscriptionResponseWrapperSerde:
    """Kafka's ``SubscriptionResponseWrapperSerde``: the foreign value in the foreign table's value serde."""

    def __init__(self, foreign_value_serde: Any) -> None:
        self.foreign_value_serde = foreign_value_serde

    def set_if_unset(self, key_serde: Any, value_serde: Any) -> None:
        if self.foreign_value_serde is None:
            self.foreign_value_serde = value_serde

    def _serde(self) -> Any:
        if self.foreign_value_serde is None:
            raise SerializationException("the foreign-key join's response serde has no foreign value serde: give "
                                         "the foreign table's value serde, or set 'default.value.serde'")
        return self.foreign_value_serde

    def serialize(self, topic: Optional[str], data: Optional[SubscriptionResponseWrapper]) -> Optional[bytes]:
        if data is None:
            return None
        value = None if data.foreign_value is None else self._serde().serialize(topic, data.foreign_value)
        out = _version_byte(data.version, data.original_value_hash)
        if data.original_value_hash is not None:
            out += _HASH.pack(*data.original_value_hash)
        return out + (value or b"")

    def deserialize(self, topic: Optional[str], data: Optional[bytes]) -> Optional[SubscriptionResponseWrapper]:
        if data is None:
            return None
        if not data:
            raise SerializationException(f"a subscription response on topic {topic!r} is empty")
        version, hash_is_null = data[0] & 0x7F, bool(data[0] & 0x80)
        hash_, pos = _read_hash(data, 1, hash_is_null, "a subscription response", topic)
        value = self._serde().deserialize(topic, data[pos:]) if len(data) > pos else None
        return SubscriptionResponseWrapper(hash_, value, None, version)

    def __repr__(self) -> str:
        return f"SubscriptionResponseWrapperSerde({self.foreign_value_serde!r})"


class CombinedKeySchema:
    """Kafka's ``CombinedKeySchema``: combined-key bytes ``{int32 len(fk)}{fk}{pk}`` and the prefix of a foreign key."""

    def __init__(self, foreign_key_serde: Any, primary_key_serde: Any, fk_topic: Optional[str] = None,
                 pk_topic: Optional[str] = None) -> None:
        self.foreign_key_serde, self.primary_key_serde = foreign_key_serde, primary_key_serde
        self.fk_topic, self.pk_topic = fk_topic, pk_topic

    def set_if_unset(self, key_serde: Any, value_serde: Any) -> None:
        if self.foreign_key_serde is None:
            self.foreign_key_serde = key_serde
        if self.primary_key_serde is None:
            self.primary_key_serde = key_serde

    def to_bytes(self, foreign_key: Any, primary_key: Any) -> bytes:
        return self.prefix_bytes(foreign_key) + self.primary_key_serde.serialize(self.pk_topic, primary_key)

    def prefix_bytes(self, foreign_key: Any) -> bytes:
        fk = self.foreign_key_serde.serialize(self.fk_topic, foreign_key)
        return _INT.pack(len(fk)) + fk

    def from_bytes(self, data: bytes) -> CombinedKey:
        (length,) = _INT.unpack_from(data)
        if length < 0 or 4 + length > len(data):
            raise SerializationException(f"a combined key's foreign key length {length} exceeds its {len(data)} bytes")
        fk = self.foreign_key_serde.deserialize(self.fk_topic, data[4:4 + length])
        return CombinedKey(fk, self.primary_key_serde.deserialize(self.pk_topic, data[4 + length:]))


__all__ = ["murmur3_hash128", "Instruction", "SubscriptionWrapper", "SubscriptionResponseWrapper", "CombinedKey",
           "SubscriptionWrapperSerde", "SubscriptionResponseWrapperSerde", "CombinedKeySchema"]

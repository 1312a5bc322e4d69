"""The outer-join store of a left/outer stream-stream join: records still waiting for a partner, in (time, side,
key) order, in a key-value bytes store (Kafka's ``KeyValueStore<TimestampedKeyAndJoinSide, LeftOrRightValue>``)."""
from __future__ import annotations

import struct
from typing import Any, Iterator

from streams_on_spark.state.stores import InMemoryKeyValueBytesStore, SerdeStore, StoreBuilder

_OUTER_KEY = struct.Struct(">q?")


class OuterJoinStore(SerdeStore):
    """Records of a left/outer stream-stream join still waiting for a partner, in (time, side, key) order, in a
    key-value bytes store (in memory, or where the engine keeps it)."""

    def __init__(self, name: str, key_serde: Any, left_value_serde: Any, right_value_serde: Any,
                 inner: Any = None) -> None:
        self._init_serdes(inner if inner is not None else InMemoryKeyValueBytesStore(name), key_serde, None)
        self.left_value_serde, self.right_value_serde = left_value_serde, right_value_serde

    def init(self, context: Any) -> None:
        super().init(context)
        if self.left_value_serde is None:
            self.left_value_serde = self.value_serde
        if self.right_value_serde is None:
            self.right_value_serde = self.value_serde

    def _store_key(self, ts: int, left_side: bool, key: Any) -> bytes:
        return _OUTER_KEY.pack(ts, left_side) + self._kser(key)

    def add_pending(self, ts: int, left_side: bool, key: Any, value: Any) -> None:
        serde = self.left_value_serde if left_side else self.right_value_serde
        store_key = self._store_key(ts, left_side, key)
        existing = self.inner.get(store_key)
        values = [] if existing is None else _unpack_list(existing)
        values.append(serde.serialize(self.name, value))
        self.inner.put(store_key, _pack_list(values))

    def remove_pending(self, ts: int, left_side: bool, key: Any) -> None:
        self.inner.delete(self._store_key(ts, left_side, key))

    def pending(self) -> Iterator[tuple[int, bool, Any, list[Any]]]:
        """``(time, left side, key, values)`` of every waiting record in (time, side, key) order, read lazily (the
        join stops at the first records whose windows are still open): do not write the store while iterating."""
        left_serde, right_serde = self.left_value_serde, self.right_value_serde
        for store_key, packed in self.inner.scan(None, None):
            ts, left_side = _OUTER_KEY.unpack_from(store_key)
            serde = left_serde if left_side else right_serde
            yield (ts, left_side, self._kde(store_key[_OUTER_KEY.size:]),
                   [serde.deserialize(self.name, v) for v in _unpack_list(packed)])


def _pack_list(values: list[bytes]) -> bytes:
    return b"".join(struct.pack(">i", len(v)) + v for v in values)


def _unpack_list(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        (n,) = struct.unpack_from(">i", data, pos)
        out.append(data[pos + 4:pos + 4 + n])
        pos += 4 + n
    return out


class OuterJoinStoreBuilder(StoreBuilder):
    def __init__(self, name: str, key_serde: Any, left_value_serde: Any, right_value_serde: Any) -> None:
        self.name, self.key_serde = name, key_serde
        self.left_value_serde, self.right_value_serde = left_value_serde, right_value_serde
        self.logging_enabled = True

    def engine_kept(self) -> bool:
        return True

    def build(self, bytes_store: Any = None) -> OuterJoinStore:
        """The store over ``bytes_store`` (where the engine keeps it), or in memory."""
        return OuterJoinStore(self.name, self.key_serde, self.left_value_serde, self.right_value_serde, bytes_store)

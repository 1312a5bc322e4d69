"""Kafka's default key partitioner: ``Utils.murmur2`` and ``partitionForKey``, bit-exact in pure Python.

A record with a non-null serialized key goes to partition
``(murmur2(key_bytes) & 0x7fffffff) % num_partitions`` — the formula of Kafka's
``BuiltInPartitioner.partitionForKey`` (and of Kafka Streams' ``DefaultStreamPartitioner``).
Matching it byte for byte is what makes our partition assignment agree with a real cluster.
"""
from __future__ import annotations

import operator
import struct
from typing import Any, Final

__all__ = ["murmur2", "to_positive", "partition_for_key", "clear_partition_memo", "memoised_hash",
           "memoised_utf8_key", "remember_utf8_key", "positive_hashes"]

_SEED: Final = 0x9747B28C
_M: Final = 0x5BD1E995  # mixing constant of MurmurHash2
_MASK32: Final = 0xFFFFFFFF

# One precompiled little-endian reader per block count, so a key's 4-byte blocks come out in a single C call.
_MAX_PRECOMPILED_BLOCKS: Final = 64
_BLOCK_READERS: Final = tuple(
    struct.Struct(f"<{count}I").unpack_from for count in range(_MAX_PRECOMPILED_BLOCKS + 1)
)

# Bounded memo of key bytes -> non-negative hash used by partition_for_key; cleared when full.
_MEMO_MAX_ENTRIES: Final = 65536
_MEMO_MAX_KEY_LENGTH: Final = 256
_memo: dict[bytes, int] = {}
#: the memo's lookup: key bytes -> the non-negative hash :func:`partition_for_key` takes modulo the partition count,
#: or None if not memoised (generated code inlines the hit: one dict lookup instead of a Python call)
memoised_hash: Final = _memo.get
# Bounded memo of a str key -> (its UTF-8 bytes, their non-negative hash): a fused sink with Kafka's String key
# serializer takes both with one lookup of the str (whose hash Python keeps) instead of encoding and hashing new bytes
_utf8_memo: dict[str, tuple[bytes, int]] = {}
#: the memo's lookup (None if not memoised); :func:`remember_utf8_key` fills it
memoised_utf8_key: Final = _utf8_memo.get


def _as_bytes(data: object) -> bytes:
    """Return ``data`` as ``bytes`` if it is bytes-like; murmur2 is defined over bytes only."""
    if isinstance(data, bytes):
        return bytes(data)
    if isinstance(data, bytearray):
        return bytes(data)
    if isinstance(data, memoryview):
        return data.tobytes()
    raise TypeError(f"murmur2 needs bytes, got {type(data).__name__}")


def _murmur2_unsigned(data: bytes) -> int:
    """Kafka's murmur2 of ``data`` as an unsigned 32-bit value (0 .. 2**32-1)."""
    if data.__class__ is not bytes:
        data = _as_bytes(data)
    n = len(data)
    h = _SEED ^ n
    blocks = n >> 2
    if blocks:
        read = _BLOCK_READERS[blocks] if blocks <= 64 else struct.Struct(f"<{blocks}I").unpack_from
        for k in read(data):
            k = (k * 0x5BD1E995) & 0xFFFFFFFF
            # h = h*m ^ (k ^ k>>>24)*m, with a single mask: the low 32 bits of an xor are the xor of the low 32 bits.
            h = (h * 0x5BD1E995 ^ (k ^ k >> 24) * 0x5BD1E995) & 0xFFFFFFFF
    if n & 3:
        # Java's fall-through tail switch xors in the 1-3 trailing bytes as one little-endian value, then multiplies.
        h = ((h ^ int.from_bytes(data[n & ~3 :], "little")) * 0x5BD1E995) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0x5BD1E995) & 0xFFFFFFFF
    return h ^ (h >> 15)


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2``: the 32-bit MurmurHash2 of ``data``, returned as a signed int like Java's."""
    h = _murmur2_unsigned(data)
    return (h ^ 0x80000000) - 0x80000000


def to_positive(n: int) -> int:
    """Kafka's ``Utils.toPositive``: clear the sign bit (``n & 0x7fffffff``) — not ``abs()``, which differs."""
    return n & 0x7FFFFFFF


def _checked_partition_count(num_partitions: object) -> int:
    """Validate a partition count that is not a plain positive ``int`` (slow path of partition_for_key)."""
    if isinstance(num_partitions, bool):
        raise ValueError(f"num_partitions must be an int >= 1, got {num_partitions!r}")
    try:
        count = operator.index(num_partitions)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(
            f"num_partitions must be an int >= 1, got {type(num_partitions).__name__} {num_partitions!r}"
        ) from None
    if count < 1:
        raise ValueError(f"num_partitions must be >= 1, got {count}")
    return count


def partition_for_key(key_bytes: bytes, num_partitions: int) -> int:
    """Partition of a record with serialized key ``key_bytes`` among ``num_partitions`` (Kafka's ``partitionForKey``).

    Hashes of keys up to 256 bytes are memoised (bounded, cleared when full) because keys repeat a lot
    in stream processing and a pure-Python murmur2 costs about ten times a dict lookup.
    """
    if num_partitions.__class__ is not int or num_partitions < 1:
        num_partitions = _checked_partition_count(num_partitions)
    if key_bytes.__class__ is bytes:
        positive = _memo.get(key_bytes)
        if positive is None:
            positive = _murmur2_unsigned(key_bytes) & 0x7FFFFFFF
            if len(key_bytes) <= _MEMO_MAX_KEY_LENGTH:
                if len(_memo) >= _MEMO_MAX_ENTRIES:
                    _memo.clear()
                _memo[key_bytes] = positive
        return positive % num_partitions
    if key_bytes is None:
        raise TypeError("partition_for_key needs key bytes; records with a null key are not hash-partitioned")
    return (_murmur2_unsigned(key_bytes) & 0x7FFFFFFF) % num_partitions


#: keys longer than this are hashed by :func:`_murmur2_unsigned` one by one in :func:`positive_hashes` (a batch's
#: numpy passes are one per 4-byte block of its longest key)
_VECTOR_MAX_KEY_LENGTH: Final = 64


def positive_hashes(offsets: Any, data: Any) -> Any:
    """``murmur2(key) & 0x7fffffff`` of many keys at once, as a numpy ``uint32`` array: key ``i`` is
    ``data[offsets[i]:offsets[i + 1]]`` (``offsets`` integers, ``data`` a bytes-like buffer, as an Arrow binary
    column's buffers). Bit-exact with :func:`partition_for_key`'s hash: the same blocks, tail and mixing, in numpy's
    wrapping 32-bit arithmetic, one pass over the keys per block index; a key longer than 64 bytes is hashed on its
    own. Written with few temporaries, operating in place: a large array freed and allocated again costs its pages'
    faults each time."""
    import numpy as np
    offsets = np.asarray(offsets, dtype=np.int64)
    n = len(offsets) - 1
    if n <= 0:
        return np.zeros(0, np.uint32)
    starts = offsets[:-1]
    lengths = np.diff(offsets)
    size = len(data)
    # the little-endian 32-bit word starting at byte b is words[(b & 3) * row + (b >> 2)]: the data read as words
    # from each of the 4 alignments (a gather from one contiguous array), rows padded so that a key's blocks and
    # tail read past its end stay inside (what they read there is not mixed in)
    row = size // 4 + _VECTOR_MAX_KEY_LENGTH // 4 + 2
    padded = np.zeros(4 * row + 4, np.uint8)
    if size:
        padded[:size] = np.frombuffer(data, np.uint8)
    words = np.empty((4, row), np.uint32)
    for a in range(4):
        words[a] = padded[a:a + 4 * row].view("<u4")
    words = words.ravel()
    at = starts & 3   # the index of each key's first block in words
    at *= row
    at += starts >> 2
    m = np.uint32(_M)
    h = lengths.astype(np.uint32)
    h ^= np.uint32(_SEED)   # Java's seed ^ length (a length < 2**31)
    long = lengths > _VECTOR_MAX_KEY_LENGTH
    blocks = lengths >> 2
    if long.any():
        blocks[long] = 0
    k, mixed = np.empty(n, np.uint32), np.empty(n, np.uint32)
    for j in range(int(blocks.max())):
        np.take(words, at, out=k)
        k *= m
        np.right_shift(k, 24, out=mixed)
        k ^= mixed
        k *= m
        np.multiply(h, m, out=mixed)
        mixed ^= k
        np.copyto(h, mixed, where=blocks > j)
        at += 1
    # at is each key's tail now (its last block's next word), except where a key has fewer blocks than the longest
    at -= int(blocks.max())
    at += blocks
    tail = lengths & 3
    tail[long] = 0
    np.take(words, at, out=k)
    k &= np.array([0, 0xFF, 0xFFFF, 0xFFFFFF], np.uint32)[tail]
    k ^= h
    k *= m
    np.copyto(h, k, where=tail > 0)
    np.right_shift(h, 13, out=k)
    h ^= k
    h *= m
    np.right_shift(h, 15, out=k)
    h ^= k
    h &= np.uint32(0x7FFFFFFF)
    for i in np.flatnonzero(long).tolist():
        h[i] = _murmur2_unsigned(bytes(memoryview(data)[int(starts[i]):int(offsets[i + 1])])) & 0x7FFFFFFF
    return h


def remember_utf8_key(key: str, key_bytes: bytes) -> None:
    """Memoise ``key_bytes`` (``key`` in UTF-8) with their non-negative hash for :data:`memoised_utf8_key`."""
    if len(key_bytes) <= _MEMO_MAX_KEY_LENGTH:
        if len(_utf8_memo) >= _MEMO_MAX_ENTRIES:
            _utf8_memo.clear()
        _utf8_memo[key] = (key_bytes, _murmur2_unsigned(key_bytes) & 0x7FFFFFFF)


def clear_partition_memo() -> None:
    """Forget all memoised key hashes (frees memory; results do not change)."""
    _memo.clear()
    _utf8_memo.clear()


class DefaultPartitioner:
    """Where a record without an explicit partition goes: murmur2 of its key bytes, round-robin per topic when
    the key is null (the test driver's and the record collector's rule, so every engine places alike)."""

    __slots__ = ("_counters",)

    def __init__(self, counters: dict[str, int] | None = None) -> None:
        self._counters: dict[str, int] = dict(counters or {})

    def partition(self, topic: str, key_bytes: bytes | None, num_partitions: int) -> int:
        if key_bytes is not None:
            return partition_for_key(key_bytes, num_partitions) if num_partitions > 1 else 0
        counter = self._counters.get(topic, 0)
        self._counters[topic] = counter + 1
        return counter % num_partitions

    def counters(self) -> dict[str, int]:
        """The round-robin positions, for engines that persist task state."""
        return dict(self._counters)

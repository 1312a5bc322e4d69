"""Kafka's murmur2 / partitionForKey: every published vector, plus a brute-force check against a literal port."""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from streams_on_spark import partitioner
from streams_on_spark.partitioner import (
    clear_partition_memo,
    murmur2,
    partition_for_key,
    to_positive,
)

VECTORS_FILE = Path(__file__).resolve().parents[1] / "data" / "murmur2-vectors.json"
VECTORS: dict[str, Any] = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))
SECTIONS = [name for name, value in VECTORS.items() if isinstance(value, list)]


def _key_bytes(entry: dict[str, Any]) -> bytes:
    """The key bytes of a vector, from whichever field the source recorded."""
    if "key_hex" in entry:
        return bytes.fromhex(entry["key_hex"])
    if "bytes_hex" in entry:
        return bytes.fromhex(entry["bytes_hex"])
    return entry["key_ascii"].encode("ascii")


ALL_VECTORS = [
    pytest.param(entry, id=f"{section}[{index}]")
    for section in SECTIONS
    for index, entry in enumerate(VECTORS[section])
]
PARTITION_CASES = [
    pytest.param(_key_bytes(entry), int(n), expected, id=f"{section}[{index}]-n{n}")
    for section in SECTIONS
    for index, entry in enumerate(VECTORS[section])
    for n, expected in entry.get("partitions", {}).items()
]


def _java_port(data: bytes) -> int:
    """Line-by-line port of Java's Utils.murmur2 with explicit 32-bit wrapping (slow, obviously right)."""

    def wrap(x: int) -> int:
        x &= 0xFFFFFFFF
        return x - (1 << 32) if x & 0x80000000 else x

    def urshift(x: int, s: int) -> int:
        return (x & 0xFFFFFFFF) >> s

    length = len(data)
    m = wrap(0x5BD1E995)
    h = wrap(wrap(0x9747B28C) ^ length)
    for i in range(length // 4):
        i4 = i * 4
        k = wrap(data[i4] + (data[i4 + 1] << 8) + (data[i4 + 2] << 16) + (data[i4 + 3] << 24))
        k = wrap(k * m)
        k = wrap(k ^ urshift(k, 24))
        k = wrap(k * m)
        h = wrap(h * m)
        h = wrap(h ^ k)
    rest = length % 4
    if rest >= 3:
        h = wrap(h ^ (data[(length & ~3) + 2] << 16))
    if rest >= 2:
        h = wrap(h ^ (data[(length & ~3) + 1] << 8))
    if rest >= 1:
        h = wrap(h ^ data[length & ~3])
        h = wrap(h * m)
    h = wrap(h ^ urshift(h, 13))
    h = wrap(h * m)
    h = wrap(h ^ urshift(h, 15))
    return h


def test_vector_file_has_every_section() -> None:
    assert VECTORS["formula"] == "partition = (murmur2(key_bytes) & 0x7fffffff) % num_partitions"
    assert SECTIONS == [
        "kafka_UtilsTest_testMurmur2",
        "kafka_python_test_partitioner_n1000",
        "librdkafka_unittest_toPositive",
        "derived_string_keys_utf8",
        "derived_int32_keys_bigendian",
        "derived_int64_keys_bigendian",
    ]
    assert len(ALL_VECTORS) == 42


@pytest.mark.parametrize("entry", ALL_VECTORS)
def test_murmur2_matches_vector(entry: dict[str, Any]) -> None:
    key = _key_bytes(entry)
    if "key_ascii" in entry and "key_hex" in entry:
        assert key == entry["key_ascii"].encode("ascii")
    assert murmur2(key) == entry["murmur2"]
    assert _java_port(key) == entry["murmur2"]


@pytest.mark.parametrize("entry", VECTORS["librdkafka_unittest_toPositive"])
def test_to_positive_matches_librdkafka(entry: dict[str, Any]) -> None:
    key = entry["key_ascii"].encode("ascii")
    assert to_positive(murmur2(key)) == entry["toPositive"]


@pytest.mark.parametrize("entry", VECTORS["kafka_python_test_partitioner_n1000"])
def test_partition_matches_kafka_python_n1000(entry: dict[str, Any]) -> None:
    assert partition_for_key(bytes.fromhex(entry["key_hex"]), 1000) == entry["partition_n1000"]


@pytest.mark.parametrize(("key", "num_partitions", "expected"), PARTITION_CASES)
def test_partition_for_key_matches_vector(key: bytes, num_partitions: int, expected: int) -> None:
    clear_partition_memo()
    assert partition_for_key(key, num_partitions) == expected  # computed
    assert partition_for_key(key, num_partitions) == expected  # memoised
    assert partition_for_key(bytearray(key), num_partitions) == expected  # not memoisable


def test_partition_case_count() -> None:
    assert len(PARTITION_CASES) == 27 * 8


@pytest.mark.parametrize(
    ("key", "num_partitions", "expected"),
    [
        (b"21", 2, 0),
        (b"21", 3, 0),
        (b"21", 4, 0),
        (b"21", 8, 4),
        (b"21", 16, 12),
        (b"foobar", 4, 2),
        (b"foobar", 16, 14),
        (b"a-little-bit-long-string", 3, 2),
        (b"a-little-bit-longer-string", 16, 3),
        (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", 8, 5),
        (b"abc", 16, 11),
    ],
)
def test_partition_table_from_kafka_utils_test(key: bytes, num_partitions: int, expected: int) -> None:
    assert partition_for_key(key, num_partitions) == expected


def test_to_positive_is_not_abs() -> None:
    h = murmur2(b"21")
    assert h == -973932308
    assert to_positive(h) == 1173551340
    assert abs(h) == 973932308
    assert partition_for_key(b"21", 3) == 0
    assert abs(h) % 3 == 2  # what an abs()-based partitioner would wrongly pick


@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, 0), (1, 1), (-1, 0x7FFFFFFF), (-(2**31), 0), (2**31 - 1, 2**31 - 1), (-973932308, 1173551340)],
)
def test_to_positive(n: int, expected: int) -> None:
    assert to_positive(n) == expected


@pytest.mark.parametrize("length", list(range(0, 40)) + [255, 256, 257, 259, 260, 261, 1000, 4099])
def test_murmur2_agrees_with_java_port_on_random_data(length: int) -> None:
    rng = random.Random(length)
    for _ in range(20):
        data = bytes(rng.getrandbits(8) for _ in range(length))
        expected = _java_port(data)
        assert murmur2(data) == expected
        assert -(2**31) <= murmur2(data) < 2**31
        assert partition_for_key(data, 7) == (expected & 0x7FFFFFFF) % 7


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview])
def test_murmur2_accepts_bytes_like(wrap: Any) -> None:
    assert murmur2(wrap(b"foobar")) == -790332482
    assert partition_for_key(wrap(b"foobar"), 16) == 14


@pytest.mark.parametrize("bad", ["", "abc", None, 42, ["a"]])
def test_murmur2_rejects_non_bytes(bad: Any) -> None:
    with pytest.raises(TypeError):
        murmur2(bad)


@pytest.mark.parametrize("bad", [None, "abc", ""])
def test_partition_for_key_rejects_non_bytes_key(bad: Any) -> None:
    with pytest.raises(TypeError):
        partition_for_key(bad, 3)


@pytest.mark.parametrize("bad", [0, -1, -100, True, False, 2.0, "3", None])
def test_partition_for_key_rejects_bad_partition_count(bad: Any) -> None:
    with pytest.raises(ValueError, match="num_partitions"):
        partition_for_key(b"key", bad)


def test_partition_count_one_is_always_zero() -> None:
    assert {partition_for_key(bytes([i]), 1) for i in range(256)} == {0}


def test_memo_stays_bounded_and_correct(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partitioner, "_MEMO_MAX_ENTRIES", 10)
    clear_partition_memo()
    keys = [f"user-{i}".encode() for i in range(35)]
    for key in keys * 2:
        assert partition_for_key(key, 12) == (_java_port(key) & 0x7FFFFFFF) % 12
        assert len(partitioner._memo) <= 10
    clear_partition_memo()
    assert len(partitioner._memo) == 0


def test_long_keys_are_not_memoised() -> None:
    clear_partition_memo()
    long_key = b"x" * 257
    assert partition_for_key(long_key, 5) == (_java_port(long_key) & 0x7FFFFFFF) % 5
    assert long_key not in partitioner._memo
    partition_for_key(b"x" * 256, 5)
    assert b"x" * 256 in partitioner._memo


def _columns(keys: list[bytes], lead: bytes = b"") -> tuple[list[int], bytes]:
    """``keys`` as a binary column's offsets and data (``lead`` bytes before the first key, as in a sliced column)."""
    offsets, data = [len(lead)], bytearray(lead)
    for key in keys:
        data += key
        offsets.append(len(data))
    return offsets, bytes(data)


def test_positive_hashes_of_a_column_match_partition_for_key_on_every_vector() -> None:
    keys = [_key_bytes(entry) for section in SECTIONS for entry in VECTORS[section]]
    hashes = partitioner.positive_hashes(*_columns(keys))
    assert hashes.dtype.name == "uint32"
    assert hashes.tolist() == [murmur2(key) & 0x7FFFFFFF for key in keys]
    for key, h in zip(keys, hashes.tolist()):
        for n in (1, 2, 3, 4, 16, 1000):
            assert h % n == partition_for_key(key, n)


@pytest.mark.parametrize("lead", [b"", b"x", b"yz", b"abc"])
def test_positive_hashes_agree_with_the_java_port_at_every_length_and_alignment(lead: bytes) -> None:
    """Keys of 0 to 70 bytes and some past 64 (hashed one by one), mixed, each starting at any byte alignment,
    the last key ending at the data's end."""
    rng = random.Random(len(lead))
    keys = [bytes(rng.getrandbits(8) for _ in range(length))
            for length in [*range(71), 100, 255, 256, 257, 1000, 3, 0, 65, 64, 63]]
    rng.shuffle(keys)
    hashes = partitioner.positive_hashes(*_columns(keys, lead)).tolist()
    assert hashes == [_java_port(key) & 0x7FFFFFFF for key in keys]


def test_positive_hashes_of_no_keys_and_of_empty_keys() -> None:
    assert partitioner.positive_hashes([0], b"").tolist() == []
    assert partitioner.positive_hashes([0, 0, 0], b"").tolist() == [murmur2(b"") & 0x7FFFFFFF] * 2

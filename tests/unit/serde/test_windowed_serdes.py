"""Windowed serdes: Kafka's exact byte layouts (hand-computed vectors), round trips and the base key."""
from __future__ import annotations

import pickle

import pytest

from streams_on_spark.dsl.windows import SessionWindow, TimeWindow, Windowed
from streams_on_spark.errors import SerializationException
from streams_on_spark.serde import Serdes
from streams_on_spark.serde.windowed import SessionWindowedSerde, TimeWindowedSerde, WindowedSerdes

LONG_MAX = (1 << 63) - 1


def test_time_windowed_layout_is_key_then_start():
    serde = WindowedSerdes.time_windowed(Serdes.String(), 10)
    assert serde.serialize("t", Windowed("a", TimeWindow(0, 10))) == bytes.fromhex("61" "0000000000000000")
    assert serde.serialize("t", Windowed("ab", TimeWindow(0x0102030405060708, 0x0102030405060708 + 10))) == \
        bytes.fromhex("6162" "0102030405060708")
    ints = WindowedSerdes.time_windowed(Serdes.Integer(), 100)
    assert ints.serialize("t", Windowed(1, TimeWindow(5, 105))) == bytes.fromhex("00000001" "0000000000000005")


def test_time_windowed_deserialize_uses_window_size():
    serde = WindowedSerdes.time_windowed(Serdes.String(), 10)
    out = serde.deserialize("t", bytes.fromhex("61" "0000000000000005"))
    assert out == Windowed("a", TimeWindow(5, 15))
    assert type(out.window) is TimeWindow
    original = Windowed("héllo", TimeWindow(1_700_000_000_000, 1_700_000_000_010))
    assert serde.deserialize("t", serde.serialize("t", original)) == original


def test_time_windowed_end_overflow_clamps_to_long_max():
    serde = WindowedSerdes.time_windowed(Serdes.String(), 10)
    out = serde.deserialize("t", b"a" + (LONG_MAX - 5).to_bytes(8, "big"))
    assert out.window == TimeWindow(LONG_MAX - 5, LONG_MAX)


def test_time_windowed_changelog_layout_skips_sequence_number():
    serde = WindowedSerdes.time_windowed(Serdes.String(), 10).for_changelog(True)
    data = bytes.fromhex("61" "0000000000000014" "00000007")
    assert serde.deserialize("t", data) == Windowed("a", TimeWindow(20, 30))


def test_session_windowed_layout_is_key_end_start():
    serde = WindowedSerdes.session_windowed(Serdes.String())
    data = serde.serialize("t", Windowed("a", SessionWindow(3, 7)))
    assert data == bytes.fromhex("61" "0000000000000007" "0000000000000003")
    out = serde.deserialize("t", data)
    assert out == Windowed("a", SessionWindow(3, 7)) and type(out.window) is SessionWindow
    single = Windowed("k", SessionWindow(9, 9))
    assert serde.deserialize("t", serde.serialize("t", single)) == single


def test_base_key_is_inner_key_bytes_only():
    assert WindowedSerdes.time_windowed(Serdes.String(), 10).serialize_base_key(
        "t", Windowed("a", TimeWindow(0, 10))) == b"a"
    assert WindowedSerdes.session_windowed(Serdes.Integer()).serialize_base_key(
        "t", Windowed(1, SessionWindow(0, 10))) == bytes.fromhex("00000001")


def test_nulls_and_bad_input():
    time_serde = TimeWindowedSerde(Serdes.String(), 10)
    session_serde = SessionWindowedSerde(Serdes.String())
    for serde in (time_serde, session_serde):
        assert serde.serialize("t", None) is None
        assert serde.deserialize("t", None) is None
        assert serde.deserialize("t", b"") is None
        with pytest.raises(SerializationException):
            serde.serialize("t", "not windowed")
        with pytest.raises(SerializationException):
            serde.serialize("t", Windowed(None, SessionWindow(0, 1)))
    with pytest.raises(SerializationException):
        time_serde.deserialize("t", b"\x00\x01")
    with pytest.raises(SerializationException):
        session_serde.deserialize("t", b"a" + bytes(8))
    with pytest.raises(ValueError):
        TimeWindowedSerde(None, 10)


def test_equality_and_pickling():
    serde = WindowedSerdes.time_windowed(Serdes.String(), 10)
    assert serde == TimeWindowedSerde(Serdes.String(), 10)
    assert serde != TimeWindowedSerde(Serdes.String(), 11)
    assert serde != WindowedSerdes.session_windowed(Serdes.String())
    again = pickle.loads(pickle.dumps(serde))
    assert again == serde
    assert again.deserialize("t", b"a" + bytes(8)) == Windowed("a", TimeWindow(0, 10))
    session = pickle.loads(pickle.dumps(WindowedSerdes.session_windowed(Serdes.Long())))
    assert session == SessionWindowedSerde(Serdes.Long())

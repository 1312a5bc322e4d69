"""Built-in serdes: exact bytes of Kafka's Java serializers, round trips, null handling and error messages."""
from __future__ import annotations

import json
import math
import pickle
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest

from streams_on_spark.errors import SerializationException, StreamsException
from streams_on_spark.serde import Serde, Serdes, StringSerde, WrapperSerde

TOPIC = "orders-topic"

ALL_BUILTINS: list[Serde[Any]] = [
    Serdes.String(),
    Serdes.String("latin-1"),
    Serdes.Integer(),
    Serdes.Long(),
    Serdes.Short(),
    Serdes.Float(),
    Serdes.Double(),
    Serdes.Boolean(),
    Serdes.ByteArray(),
    Serdes.Bytes(),
    Serdes.UUID(),
    Serdes.Void(),
    Serdes.JSON(),
]
BUILTIN_IDS = [repr(serde) for serde in ALL_BUILTINS]

# (serde, value, expected bytes as hex) — from the Java serializers' definitions.
EXACT_BYTES = [
    (Serdes.Integer(), 0, "00000000"),
    (Serdes.Integer(), 1, "00000001"),
    (Serdes.Integer(), 42, "0000002a"),
    (Serdes.Integer(), -1, "ffffffff"),
    (Serdes.Integer(), 256, "00000100"),
    (Serdes.Integer(), 2**31 - 1, "7fffffff"),
    (Serdes.Integer(), -(2**31), "80000000"),
    (Serdes.Long(), 0, "0000000000000000"),
    (Serdes.Long(), 42, "000000000000002a"),
    (Serdes.Long(), -1, "ffffffffffffffff"),
    (Serdes.Long(), 1_700_000_000_000, "0000018bcfe56800"),
    (Serdes.Long(), 2**63 - 1, "7fffffffffffffff"),
    (Serdes.Long(), -(2**63), "8000000000000000"),
    (Serdes.Short(), 0, "0000"),
    (Serdes.Short(), 42, "002a"),
    (Serdes.Short(), -1, "ffff"),
    (Serdes.Short(), 32767, "7fff"),
    (Serdes.Short(), -32768, "8000"),
    (Serdes.Float(), 1.5, "3fc00000"),
    (Serdes.Float(), 0.0, "00000000"),
    (Serdes.Float(), -0.0, "80000000"),
    (Serdes.Float(), 1, "3f800000"),
    (Serdes.Float(), -2.0, "c0000000"),
    (Serdes.Float(), math.inf, "7f800000"),
    (Serdes.Float(), -math.inf, "ff800000"),
    (Serdes.Float(), math.nan, "7fc00000"),  # Java's canonical Float.NaN
    (Serdes.Float(), 0.1, "3dcccccd"),  # rounded to single precision
    (Serdes.Double(), 1.5, "3ff8000000000000"),
    (Serdes.Double(), 0.1, "3fb999999999999a"),
    (Serdes.Double(), -0.0, "8000000000000000"),
    (Serdes.Double(), 42, "4045000000000000"),
    (Serdes.Double(), math.inf, "7ff0000000000000"),
    (Serdes.Double(), math.nan, "7ff8000000000000"),  # Java's canonical Double.NaN
    (Serdes.Boolean(), True, "01"),
    (Serdes.Boolean(), False, "00"),
    (Serdes.String(), "", ""),
    (Serdes.String(), "key", "6b6579"),
    (Serdes.String(), "héllo", "68c3a96c6c6f"),
    (Serdes.String(), "€", "e282ac"),
    (Serdes.String(), "😀", "f09f9880"),
    (Serdes.String("latin-1"), "héllo", "68e96c6c6f"),
    (Serdes.String("ISO-8859-1"), "é", "e9"),
    (Serdes.String("utf-16-be"), "hé", "006800e9"),
    (Serdes.ByteArray(), b"\x00\xffab", "00ff6162"),
    (Serdes.Bytes(), b"", ""),
    (
        Serdes.UUID(),
        uuid.UUID("123e4567-e89b-12d3-a456-426614174000"),
        b"123e4567-e89b-12d3-a456-426614174000".hex(),
    ),
    (Serdes.JSON(), {"b": 1, "a": [1, 2.5, None, True]}, b'{"b":1,"a":[1,2.5,null,true]}'.hex()),
    (Serdes.JSON(), "héllo", '"héllo"'.encode("utf-8").hex()),
    (Serdes.JSON(), 0, "30"),
    (Serdes.JSON(), [], "5b5d"),
]


@pytest.mark.parametrize(("serde", "value", "expected_hex"), EXACT_BYTES, ids=lambda x: repr(x)[:40])
def test_serialize_exact_bytes(serde: Serde[Any], value: Any, expected_hex: str) -> None:
    data = serde.serialize(TOPIC, value)
    assert type(data) is bytes
    assert data.hex() == expected_hex


@pytest.mark.parametrize(("serde", "value", "expected_hex"), EXACT_BYTES, ids=lambda x: repr(x)[:40])
def test_deserialize_exact_bytes(serde: Serde[Any], value: Any, expected_hex: str) -> None:
    result = serde.deserialize(TOPIC, bytes.fromhex(expected_hex))
    if serde == Serdes.Float() and isinstance(value, float) and not math.isnan(value):
        assert result == struct.unpack(">f", struct.pack(">f", value))[0]
    elif isinstance(value, float) and math.isnan(value):
        assert math.isnan(result)
    else:
        assert result == value
        assert type(result) is type(value) or (isinstance(value, int) and type(result) is float)
    if isinstance(value, float) and value == 0.0:
        assert math.copysign(1.0, result) == math.copysign(1.0, value)  # -0.0 keeps its sign


@pytest.mark.parametrize(
    ("serde", "value"),
    [
        (Serdes.Integer(), 123456789),
        (Serdes.Integer(), -123456789),
        (Serdes.Long(), -(2**62) - 7),
        (Serdes.Short(), -12345),
        (Serdes.Double(), math.pi),
        (Serdes.Double(), -1e308),
        (Serdes.Double(), 5e-324),
        (Serdes.Float(), 0.25),
        (Serdes.Float(), 3.4028234663852886e38),
        (Serdes.Boolean(), True),
        (Serdes.Boolean(), False),
        (Serdes.String(), "naïve ☃ 😀 \x00"),
        (Serdes.String("latin-1"), "ÿÀ"),
        (Serdes.ByteArray(), bytes(range(256))),
        (Serdes.Bytes(), b"\x00"),
        (Serdes.UUID(), uuid.UUID("6f1c2d3e-4a5b-4c6d-8e7f-90a1b2c3d4e5")),
        (Serdes.JSON(), {"z": {"nested": ["x", 1, -2.5e-3, False, None]}, "a": "ü"}),
        (Serdes.JSON(), 1.0),
    ],
    ids=lambda x: repr(x)[:40],
)
def test_round_trip(serde: Serde[Any], value: Any) -> None:
    result = serde.deserialize(TOPIC, serde.serialize(TOPIC, value))
    assert result == value
    assert type(result) is type(value)


@pytest.mark.parametrize(
    "bits_hex",
    ["7fc00001", "ffc00000", "7fc12345", "7f800000", "00000001", "80000001", "7f7fffff"],
)
def test_float_raw_bits_survive_round_trip(bits_hex: str) -> None:
    """floatToRawIntBits semantics: quiet-NaN payloads, signs and subnormals are kept bit for bit."""
    serde = Serdes.Float()
    value = serde.deserialize(TOPIC, bytes.fromhex(bits_hex))
    assert serde.serialize(TOPIC, value).hex() == bits_hex


@pytest.mark.parametrize("bits_hex", ["7ff8000000000001", "fff8000000000000", "7ff0000000000001", "000fffffffffffff"])
def test_double_raw_bits_survive_round_trip(bits_hex: str) -> None:
    serde = Serdes.Double()
    assert serde.serialize(TOPIC, serde.deserialize(TOPIC, bytes.fromhex(bits_hex))).hex() == bits_hex


@pytest.mark.parametrize("serde", [s for s in ALL_BUILTINS if s != Serdes.Void()], ids=lambda s: repr(s))
def test_none_maps_to_none(serde: Serde[Any]) -> None:
    assert serde.serialize(TOPIC, None) is None
    assert serde.deserialize(TOPIC, None) is None
    assert serde.serialize(None, None) is None
    assert serde.deserialize(None, None) is None


def test_void_serde() -> None:
    void = Serdes.Void()
    assert void.serialize(TOPIC, None) is None
    assert void.serialize(TOPIC, "anything") is None
    assert void.deserialize(TOPIC, None) is None


@pytest.mark.parametrize("data", [b"", b"\x00", b"abc"])
def test_void_rejects_non_null_data(data: bytes) -> None:
    with pytest.raises(SerializationException, match=f"Data should be null for a VoidDeserializer.*'{TOPIC}'"):
        Serdes.Void().deserialize(TOPIC, data)


def test_json_null_text_deserializes_to_none() -> None:
    assert Serdes.JSON().deserialize(TOPIC, b"null") is None
    assert Serdes.JSON().serialize(TOPIC, None) is None


def test_json_is_compact_and_keeps_key_order() -> None:
    value = {"zeta": 1, "alpha": {"y": [1, 2], "x": "é"}}
    data = Serdes.JSON().serialize(TOPIC, value)
    assert data == json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert data == '{"zeta":1,"alpha":{"y":[1,2],"x":"é"}}'.encode("utf-8")


# ---------------------------------------------------------------------------------------------------------
# Strings and encodings


def test_string_default_is_utf8() -> None:
    assert Serdes.String().encoding == "utf-8"
    assert Serdes.String().serialize(TOPIC, "héllo") == b"h\xc3\xa9llo"
    assert Serdes.String().deserialize(TOPIC, b"h\xc3\xa9llo") == "héllo"


def test_string_latin1_override() -> None:
    latin1 = Serdes.String(encoding="latin-1")
    assert latin1.serialize(TOPIC, "héllo") == bytes.fromhex("68e96c6c6f")
    assert latin1.deserialize(TOPIC, bytes.fromhex("68e96c6c6f")) == "héllo"
    # the same bytes read as UTF-8 are malformed and decode to U+FFFD, as Java's new String(bytes, UTF_8) does
    assert Serdes.String().deserialize(TOPIC, bytes.fromhex("68e96c6c6f")) == "h\ufffdllo"


def test_string_replaces_unencodable_characters_like_java() -> None:
    assert Serdes.String("latin-1").serialize(TOPIC, "€5") == b"?5"
    assert Serdes.String("ascii").serialize(TOPIC, "héllo") == b"h?llo"
    assert Serdes.String().serialize(TOPIC, "a\ud800b") == b"a?b"  # lone surrogate


def test_string_accepts_str_subclass_and_bytes_like_input() -> None:
    class Name(str):
        pass

    assert Serdes.String().serialize(TOPIC, Name("bob")) == b"bob"
    assert Serdes.String().deserialize(TOPIC, bytearray(b"bob")) == "bob"
    assert Serdes.String().deserialize(TOPIC, memoryview(b"bob")) == "bob"


@pytest.mark.parametrize("encoding", ["no-such-charset", "base64", "rot13", "", 8, None])
def test_string_rejects_unknown_encoding(encoding: Any) -> None:
    with pytest.raises(ValueError):
        Serdes.String(encoding)
    with pytest.raises(ValueError):
        StringSerde(encoding)


def test_string_encoding_aliases_share_one_instance() -> None:
    assert Serdes.String("latin-1") is Serdes.String("ISO-8859-1")
    assert Serdes.String("UTF8") is Serdes.String()
    assert Serdes.String("latin-1") != Serdes.String()


# ---------------------------------------------------------------------------------------------------------
# Integer ranges and types


@pytest.mark.parametrize(
    ("serde", "value", "kind"),
    [
        (Serdes.Integer(), 2**31, "int"),
        (Serdes.Integer(), -(2**31) - 1, "int"),
        (Serdes.Long(), 2**63, "long"),
        (Serdes.Long(), -(2**63) - 1, "long"),
        (Serdes.Short(), 32768, "short"),
        (Serdes.Short(), -32769, "short"),
        (Serdes.Integer(), 10**30, "int"),
    ],
)
def test_integer_out_of_java_range_rejected(serde: Serde[int], value: int, kind: str) -> None:
    with pytest.raises(SerializationException) as raised:
        serde.serialize(TOPIC, value)
    message = str(raised.value)
    assert TOPIC in message
    assert str(value) in message
    assert f"Java {kind} range" in message


@pytest.mark.parametrize("serde", [Serdes.Integer(), Serdes.Long(), Serdes.Short()], ids=repr)
@pytest.mark.parametrize(
    ("value", "type_name"),
    [(1.0, "float"), ("42", "str"), (True, "bool"), (False, "bool"), (b"\x00", "bytes"), ([1], "list")],
)
def test_integer_serdes_reject_non_int(serde: Serde[int], value: Any, type_name: str) -> None:
    with pytest.raises(SerializationException) as raised:
        serde.serialize(TOPIC, value)
    message = str(raised.value)
    assert f"of type {type_name}" in message
    assert repr(TOPIC) in message


@pytest.mark.parametrize(
    ("serde", "name", "size", "data"),
    [
        (Serdes.Integer(), "IntegerDeserializer", 4, b"abc"),
        (Serdes.Integer(), "IntegerDeserializer", 4, b"abcde"),
        (Serdes.Integer(), "IntegerDeserializer", 4, b""),
        (Serdes.Long(), "LongDeserializer", 8, b"\x00" * 4),
        (Serdes.Short(), "ShortDeserializer", 2, b"\x00"),
        (Serdes.Float(), "FloatDeserializer", 4, b"\x00" * 8),
        (Serdes.Double(), "DoubleDeserializer", 8, b"\x00" * 4),
        (Serdes.Boolean(), "BooleanDeserializer", 1, b"\x00\x01"),
        (Serdes.Boolean(), "BooleanDeserializer", 1, b""),
    ],
)
def test_wrong_size_rejected(serde: Serde[Any], name: str, size: int, data: bytes) -> None:
    with pytest.raises(SerializationException) as raised:
        serde.deserialize(TOPIC, data)
    message = str(raised.value)
    assert message.startswith(f"Size of data received by {name} is not {size}")
    assert repr(TOPIC) in message
    assert f"bytes of length {len(data)}" in message


@pytest.mark.parametrize("data", [b"\x02", b"\xff", b"1"])
def test_boolean_rejects_unexpected_byte(data: bytes) -> None:
    with pytest.raises(SerializationException, match=f"Unexpected byte 0x{data[0]:02x} received by BooleanDeserializer"):
        Serdes.Boolean().deserialize(TOPIC, data)


@pytest.mark.parametrize("value", [1, 0, "true", 1.0])
def test_boolean_serializer_only_accepts_bool(value: Any) -> None:
    with pytest.raises(SerializationException, match=f"BooleanSerializer .* type {type(value).__name__} .*'{TOPIC}'"):
        Serdes.Boolean().serialize(TOPIC, value)


@pytest.mark.parametrize("serde", [Serdes.Float(), Serdes.Double()], ids=repr)
@pytest.mark.parametrize(("value", "type_name"), [("1.5", "str"), (True, "bool"), (None.__class__, "type"), ([1.0], "list")])
def test_float_serdes_reject_non_numbers(serde: Serde[float], value: Any, type_name: str) -> None:
    with pytest.raises(SerializationException, match=f"of type {type_name} for topic '{TOPIC}'"):
        serde.serialize(TOPIC, value)


def test_float_out_of_single_precision_range_rejected() -> None:
    with pytest.raises(SerializationException, match=f"FloatSerializer .*1e\\+39.*'{TOPIC}'"):
        Serdes.Float().serialize(TOPIC, 1e39)
    with pytest.raises(SerializationException, match=f"DoubleSerializer .*'{TOPIC}'"):
        Serdes.Double().serialize(TOPIC, 10**400)


@pytest.mark.parametrize(
    "serde",
    [Serdes.Integer(), Serdes.Long(), Serdes.Short(), Serdes.Float(), Serdes.Double(), Serdes.Boolean(),
     Serdes.String(), Serdes.ByteArray(), Serdes.UUID(), Serdes.JSON()],
    ids=repr,
)
@pytest.mark.parametrize(("data", "type_name"), [("text", "str"), (42, "int")])
def test_deserializers_reject_non_bytes(serde: Serde[Any], data: Any, type_name: str) -> None:
    with pytest.raises(SerializationException) as raised:
        serde.deserialize(TOPIC, data)
    assert f"type {type_name}" in str(raised.value)
    assert repr(TOPIC) in str(raised.value)


@pytest.mark.parametrize("serde", [Serdes.Integer(), Serdes.Long(), Serdes.Double()], ids=repr)
def test_deserializers_accept_bytes_like(serde: Serde[Any]) -> None:
    data = serde.serialize(TOPIC, 7)
    assert serde.deserialize(TOPIC, bytearray(data)) == 7
    assert serde.deserialize(TOPIC, memoryview(data)) == 7


def test_topic_none_is_named_in_errors() -> None:
    with pytest.raises(SerializationException, match="topic None"):
        Serdes.Integer().serialize(None, "x")


def test_serialization_exception_is_a_streams_exception() -> None:
    with pytest.raises(StreamsException):
        Serdes.Long().serialize(TOPIC, 2**64)


# ---------------------------------------------------------------------------------------------------------
# Bytes, UUID, JSON specifics


@pytest.mark.parametrize("serde", [Serdes.ByteArray(), Serdes.Bytes()], ids=repr)
def test_bytes_pass_through(serde: Serde[bytes]) -> None:
    payload = b"\x00\x01payload"
    assert serde.serialize(TOPIC, payload) is payload
    assert serde.deserialize(TOPIC, payload) is payload
    assert serde.serialize(TOPIC, bytearray(payload)) == payload
    assert type(serde.serialize(TOPIC, memoryview(payload))) is bytes
    with pytest.raises(SerializationException, match=f"type str for topic '{TOPIC}'"):
        serde.serialize(TOPIC, "text")


def test_uuid_is_canonical_lowercase_string() -> None:
    value = uuid.UUID("{ABCDEF01-2345-6789-ABCD-EF0123456789}")
    assert Serdes.UUID().serialize(TOPIC, value) == b"abcdef01-2345-6789-abcd-ef0123456789"
    assert Serdes.UUID().deserialize(TOPIC, b"ABCDEF01-2345-6789-ABCD-EF0123456789") == value


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not-a-uuid",
        b"abcdef0123456789abcdef0123456789",  # Python would accept it; Java's UUID.fromString does not
        b"{abcdef01-2345-6789-abcd-ef0123456789}",
        b"urn:uuid:abcdef01-2345-6789-abcd-ef0123456789",
        b"abcdef01-2345-6789-abcd-ef012345678g",
        b"abcdef01-2345-6789-abcd-ef0123456789 ",
    ],
)
def test_uuid_rejects_malformed(data: bytes) -> None:
    with pytest.raises(SerializationException, match=f"Error parsing data into UUID for topic '{TOPIC}'"):
        Serdes.UUID().deserialize(TOPIC, data)


@pytest.mark.parametrize("value", ["abcdef01-2345-6789-abcd-ef0123456789", 5, b"x"])
def test_uuid_serializer_requires_uuid(value: Any) -> None:
    with pytest.raises(SerializationException, match=f"UUIDSerializer .* type {type(value).__name__} .*'{TOPIC}'"):
        Serdes.UUID().serialize(TOPIC, value)


@pytest.mark.parametrize(("value", "type_name"), [({1, 2}, "set"), (object(), "object"), ("\ud800", "str")])
def test_json_serialize_errors(value: Any, type_name: str) -> None:
    with pytest.raises(SerializationException, match=f"JSONSerializer .* type {type_name} for topic '{TOPIC}'"):
        Serdes.JSON().serialize(TOPIC, value)


@pytest.mark.parametrize("data", [b"", b"{", b"\xff", b"{'a': 1}", b"\xef\xbb\xbf{}"])
def test_json_deserialize_errors(data: bytes) -> None:
    with pytest.raises(SerializationException, match=f"JSONDeserializer .*'{TOPIC}'.*bytes of length {len(data)}"):
        Serdes.JSON().deserialize(TOPIC, data)


# ---------------------------------------------------------------------------------------------------------
# serde_from


def test_serde_from_wraps_functions_and_passes_none_through() -> None:
    calls: list[tuple[Any, Any]] = []

    def ser(topic: str | None, value: Any) -> bytes | None:
        calls.append((topic, value))
        return None if value is None else str(value).upper().encode()

    def de(topic: str | None, data: bytes | None) -> Any:
        calls.append((topic, data))
        return None if data is None else data.decode().lower()

    serde = Serdes.serde_from(ser, de)
    assert isinstance(serde, Serde)
    assert serde.serialize(TOPIC, "abc") == b"ABC"
    assert serde.deserialize(TOPIC, b"ABC") == "abc"
    assert serde.serialize(TOPIC, None) is None
    assert calls == [(TOPIC, "abc"), (TOPIC, b"ABC"), (TOPIC, None)]
    assert serde == Serdes.serde_from(ser, de)
    assert hash(serde) == hash(Serdes.serde_from(ser, de))
    assert serde != Serdes.serde_from(ser, lambda t, d: d)
    assert repr(serde) == (
        "Serdes.serde_from(test_serde_from_wraps_functions_and_passes_none_through.<locals>.ser, "
        "test_serde_from_wraps_functions_and_passes_none_through.<locals>.de)"
    )


@pytest.mark.parametrize(("ser", "de"), [(None, lambda t, d: d), (lambda t, v: v, None), ("f", "g")])
def test_serde_from_rejects_non_callables(ser: Any, de: Any) -> None:
    with pytest.raises(ValueError, match="must be callable"):
        Serdes.serde_from(ser, de)


def test_base_serde_is_abstract() -> None:
    with pytest.raises(NotImplementedError):
        Serde().serialize(TOPIC, 1)
    with pytest.raises(NotImplementedError):
        Serde().deserialize(TOPIC, b"")


def test_user_serde_subclass_uses_identity_equality() -> None:
    class Upper(Serde[str]):
        def serialize(self, topic: str | None, value: str | None) -> bytes | None:
            return None if value is None else value.upper().encode()

        def deserialize(self, topic: str | None, data: bytes | None) -> str | None:
            return None if data is None else data.decode()

    a, b = Upper(), Upper()
    assert a == a
    assert a != b
    assert a.serialize(TOPIC, "x") == b"X"


# ---------------------------------------------------------------------------------------------------------
# Identity, equality, repr, pickling


@pytest.mark.parametrize(
    ("factory", "text"),
    [
        (Serdes.String, "Serdes.String()"),
        (Serdes.Integer, "Serdes.Integer()"),
        (Serdes.Long, "Serdes.Long()"),
        (Serdes.Short, "Serdes.Short()"),
        (Serdes.Float, "Serdes.Float()"),
        (Serdes.Double, "Serdes.Double()"),
        (Serdes.Boolean, "Serdes.Boolean()"),
        (Serdes.ByteArray, "Serdes.ByteArray()"),
        (Serdes.Bytes, "Serdes.Bytes()"),
        (Serdes.UUID, "Serdes.UUID()"),
        (Serdes.Void, "Serdes.Void()"),
        (Serdes.JSON, "Serdes.JSON()"),
    ],
)
def test_factories_repr_and_singletons(factory: Any, text: str) -> None:
    first, second = factory(), factory()
    assert repr(first) == text
    assert first is second
    assert first == second
    assert hash(first) == hash(second)


def test_string_repr_names_non_default_encoding() -> None:
    assert repr(Serdes.String("latin-1")) == "Serdes.String(encoding='iso8859-1')"


def test_fresh_instances_compare_equal_to_singletons() -> None:
    assert StringSerde() == Serdes.String()
    assert hash(StringSerde()) == hash(Serdes.String())
    assert type(Serdes.Long())() == Serdes.Long()


def test_distinct_serdes_are_not_equal() -> None:
    assert len(set(ALL_BUILTINS)) == len(ALL_BUILTINS)
    assert Serdes.Bytes() != Serdes.ByteArray()
    assert Serdes.Integer() != Serdes.Long()
    assert Serdes.Integer() != 42


@pytest.mark.parametrize("serde", ALL_BUILTINS, ids=BUILTIN_IDS)
def test_pickle_round_trip_keeps_singletons(serde: Serde[Any]) -> None:
    copy = pickle.loads(pickle.dumps(serde))
    assert copy == serde
    assert copy is serde


def test_serdes_is_not_instantiable() -> None:
    with pytest.raises(TypeError):
        Serdes()


def test_wrapper_serde_exported() -> None:
    assert isinstance(Serdes.serde_from(lambda t, v: v, lambda t, d: d), WrapperSerde)


# ---------------------------------------------------------------------------------------------------------
# Key bytes feed the partitioner: serdes must reproduce the reference vectors' key bytes.

_VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "data" / "murmur2-vectors.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize(
    ("serde", "entry"),
    [(Serdes.String(), e) for e in _VECTORS["derived_string_keys_utf8"]]
    + [(Serdes.Integer(), e) for e in _VECTORS["derived_int32_keys_bigendian"]]
    + [(Serdes.Long(), e) for e in _VECTORS["derived_int64_keys_bigendian"]],
    ids=lambda x: repr(x)[:40],
)
def test_serdes_produce_reference_key_bytes(serde: Serde[Any], entry: dict[str, Any]) -> None:
    assert serde.serialize(TOPIC, entry["key"]).hex() == entry["bytes_hex"]
    assert serde.deserialize(TOPIC, bytes.fromhex(entry["bytes_hex"])) == entry["key"]

"""Serdes: turn keys and values into bytes and back, byte-for-byte like Kafka's built-in Java serdes.

``Serdes.Integer()``, ``Serdes.String()`` … mirror ``org.apache.kafka.common.serialization.Serdes`` so that
key bytes — and therefore murmur2 partitions — match what a Java Kafka Streams application produces.
All built-ins map ``None`` to ``None`` in both directions (Kafka's null handling); failures raise
:class:`~streams_on_spark.errors.SerializationException` naming the serde, the topic and the value's type.

``Serdes.JSON()`` is our own addition (Kafka has no JSON serde): compact UTF-8 JSON.
"""
from __future__ import annotations

import codecs
import json
import re
import struct
import uuid
from typing import Any, Callable, Final, Generic, TypeVar

from streams_on_spark.errors import SerializationException

__all__ = [
    "Serde",
    "Serdes",
    "StringSerde",
    "IntegerSerde",
    "LongSerde",
    "ShortSerde",
    "FloatSerde",
    "DoubleSerde",
    "BooleanSerde",
    "ByteArraySerde",
    "BytesSerde",
    "UUIDSerde",
    "VoidSerde",
    "JSONSerde",
    "WrapperSerde",
]

T = TypeVar("T")


class Serde(Generic[T]):
    """A serializer and deserializer pair for one type (Kafka's ``Serde<T>``); subclass and override both methods."""

    __slots__ = ()

    def serialize(self, topic: str | None, value: T | None) -> bytes | None:
        """Turn ``value`` (destined for ``topic``) into bytes; ``None`` stays ``None`` for the built-ins."""
        raise NotImplementedError(f"{type(self).__name__} does not implement serialize")

    def deserialize(self, topic: str | None, data: bytes | None) -> T | None:
        """Turn ``data`` (read from ``topic``) back into a value; ``None`` stays ``None`` for the built-ins."""
        raise NotImplementedError(f"{type(self).__name__} does not implement deserialize")


# ----------------------------------------------------------------------------------------------------------
# Error messages (built lazily, only on failure, so the happy path stays tight)


def _describe(data: object) -> str:
    """Short description of an offending input: its type, plus its length when it has one."""
    try:
        return f"{type(data).__name__} of length {len(data)}"  # type: ignore[arg-type]
    except TypeError:
        return type(data).__name__


def _wrong_type(serializer: str, topic: str | None, value: object, expected: str) -> SerializationException:
    """Error for a value whose Python type the serializer does not accept."""
    return SerializationException(
        f"{serializer} cannot serialize a value of type {type(value).__name__} for topic {topic!r}: "
        f"expected {expected}"
    )


def _not_bytes(deserializer: str, topic: str | None, data: object) -> SerializationException:
    """Error for deserializer input that is not bytes-like."""
    return SerializationException(
        f"{deserializer} cannot deserialize data of type {type(data).__name__} for topic {topic!r}: "
        "expected bytes"
    )


def _is_bytes_like(data: object) -> bool:
    """True for the inputs deserializers accept: ``bytes``, ``bytearray`` and ``memoryview``."""
    return isinstance(data, (bytes, bytearray, memoryview))


# ----------------------------------------------------------------------------------------------------------
# Shared base of the built-ins: value equality, readable repr, pickling back to the factory.


class _BuiltinSerde(Serde[T]):
    """Base of the built-in serdes: equal when same class and parameters; repr and pickle via the factory."""

    __slots__ = ()
    _FACTORY: str = ""

    def _params(self) -> tuple[Any, ...]:
        """The factory arguments that distinguish instances of this serde (none for stateless ones)."""
        return ()

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return self._params() == other._params()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self._params()))

    def __repr__(self) -> str:
        return f"Serdes.{self._FACTORY}()"

    def __reduce__(self) -> tuple[Any, ...]:
        # Unpickling (e.g. on a Spark executor) goes through the factory, so singletons stay singletons.
        return (getattr(Serdes, self._FACTORY), self._params())


# ----------------------------------------------------------------------------------------------------------
# Fixed-width integers: big-endian two's complement, like Kafka's Short/Integer/LongSerializer.


def _fixed_width_methods(
    fmt: str, kind: str, failure: Callable[[str, str | None, object], SerializationException]
) -> tuple[Callable[..., bytes | None], Callable[..., Any]]:
    """Build tight serialize/deserialize functions for one fixed-width Java number (``struct`` format ``fmt``);
    ``failure(serializer, topic, value)`` is the error for a value the format cannot hold."""
    codec = struct.Struct(fmt)
    pack = codec.pack
    unpack = codec.unpack
    size = codec.size
    serializer, deserializer = f"{kind}Serializer", f"{kind}Deserializer"

    def serialize(self: Serde[Any], topic: str | None, value: Any) -> bytes | None:
        """Big-endian bytes of ``value``; rejects bools, values of other types and values out of range."""
        if value is None:
            return None
        if value is True or value is False:
            raise failure(serializer, topic, value)
        try:
            return pack(value)
        except (struct.error, TypeError, OverflowError):
            raise failure(serializer, topic, value) from None

    def deserialize(self: Serde[Any], topic: str | None, data: bytes | None) -> Any:
        """The number encoded big-endian in exactly ``size`` bytes."""
        if data is None:
            return None
        try:
            return unpack(data)[0]
        except (struct.error, TypeError):
            if not _is_bytes_like(data):
                raise _not_bytes(deserializer, topic, data) from None
            raise SerializationException(
                f"Size of data received by {deserializer} is not {size} for topic {topic!r}: "
                f"got {_describe(data)}"
            ) from None

    return serialize, deserialize


def _fixed_int_methods(fmt: str, kind: str, java_type: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Serialize/deserialize for one fixed-width Java integer type (``short``, ``int``, ``long``)."""
    bits = struct.calcsize(fmt) * 8
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def failure(serializer: str, topic: str | None, value: object) -> SerializationException:
        if isinstance(value, int) and not isinstance(value, bool):
            return SerializationException(
                f"{serializer} cannot serialize int value {value} for topic {topic!r}: "
                f"outside the Java {java_type} range [{low}, {high}]"
            )
        return _wrong_type(serializer, topic, value, f"int (Java {java_type})")

    return _fixed_width_methods(fmt, kind, failure)


class ShortSerde(_BuiltinSerde[int]):
    """Java ``short``: 2 bytes big-endian, range [-32768, 32767] (Kafka's ``Serdes.Short()``)."""

    __slots__ = ()
    _FACTORY = "Short"
    serialize, deserialize = _fixed_int_methods(">h", "Short", "short")  # type: ignore[assignment]


class IntegerSerde(_BuiltinSerde[int]):
    """Java ``int``: 4 bytes big-endian, range [-2**31, 2**31-1] (Kafka's ``Serdes.Integer()``)."""

    __slots__ = ()
    _FACTORY = "Integer"
    serialize, deserialize = _fixed_int_methods(">i", "Integer", "int")  # type: ignore[assignment]


class LongSerde(_BuiltinSerde[int]):
    """Java ``long``: 8 bytes big-endian, range [-2**63, 2**63-1] (Kafka's ``Serdes.Long()``)."""

    __slots__ = ()
    _FACTORY = "Long"
    serialize, deserialize = _fixed_int_methods(">q", "Long", "long")  # type: ignore[assignment]


# ----------------------------------------------------------------------------------------------------------
# IEEE floats: Kafka writes floatToRawIntBits / doubleToLongBits big-endian; struct '>f' / '>d' is the same.


def _float_methods(fmt: str, kind: str, java_type: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Serialize/deserialize for one IEEE-754 width (Java ``float``, ``double``)."""

    def failure(serializer: str, topic: str | None, value: object) -> SerializationException:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return SerializationException(
                f"{serializer} cannot serialize {type(value).__name__} value {value!r} for topic {topic!r}: "
                f"too large for a Java {java_type}"
            )
        return _wrong_type(serializer, topic, value, "float or int")

    return _fixed_width_methods(fmt, kind, failure)


class FloatSerde(_BuiltinSerde[float]):
    """Java ``float``: 4 bytes big-endian IEEE-754 single (Kafka's ``Serdes.Float()``).

    Python floats are doubles, so values are rounded to single precision; -0.0, infinities and quiet-NaN
    payloads survive; magnitudes beyond the float range are rejected rather than turned into infinity.
    """

    __slots__ = ()
    _FACTORY = "Float"
    serialize, deserialize = _float_methods(">f", "Float", "float")  # type: ignore[assignment]


class DoubleSerde(_BuiltinSerde[float]):
    """Java ``double``: 8 bytes big-endian IEEE-754 double, bit-exact (Kafka's ``Serdes.Double()``)."""

    __slots__ = ()
    _FACTORY = "Double"
    serialize, deserialize = _float_methods(">d", "Double", "double")  # type: ignore[assignment]


# ----------------------------------------------------------------------------------------------------------
# Boolean: one byte, 0x01 / 0x00, strictly checked on the way back like Kafka's BooleanDeserializer.


class BooleanSerde(_BuiltinSerde[bool]):
    """Java ``boolean``: one byte, 0x01 for True and 0x00 for False (Kafka's ``Serdes.Boolean()``)."""

    __slots__ = ()
    _FACTORY = "Boolean"

    def serialize(self, topic: str | None, value: bool | None) -> bytes | None:
        """``b"\\x01"`` or ``b"\\x00"``; only real ``bool`` values are accepted (not 0/1 ints)."""
        if value is True:
            return b"\x01"
        if value is False:
            return b"\x00"
        if value is None:
            return None
        raise _wrong_type("BooleanSerializer", topic, value, "bool")

    def deserialize(self, topic: str | None, data: bytes | None) -> bool | None:
        """True for exactly ``b"\\x01"``, False for exactly ``b"\\x00"``; anything else is an error."""
        if data == b"\x01":
            return True
        if data == b"\x00":
            return False
        if data is None:
            return None
        if not _is_bytes_like(data):
            raise _not_bytes("BooleanDeserializer", topic, data)
        if len(data) != 1:
            raise SerializationException(
                f"Size of data received by BooleanDeserializer is not 1 for topic {topic!r}: "
                f"got {_describe(data)}"
            )
        raise SerializationException(
            f"Unexpected byte 0x{bytes(data)[0]:02x} received by BooleanDeserializer for topic {topic!r}: "
            "expected 0x01 or 0x00"
        )


# ----------------------------------------------------------------------------------------------------------
# String: str.encode / bytes.decode in the configured charset.


class StringSerde(_BuiltinSerde[str]):
    """Java ``String`` in a charset, UTF-8 by default (Kafka's ``Serdes.String()`` + ``serializer.encoding``).

    Like Java's ``String.getBytes`` / ``new String(bytes, charset)``, characters the charset cannot encode
    become ``?`` and malformed input decodes to U+FFFD instead of failing.
    """

    __slots__ = ("_encoding",)
    _FACTORY = "String"

    def __init__(self, encoding: str = "utf-8") -> None:
        """Use ``encoding`` (any Python text codec name); ValueError if Python does not know it as text codec."""
        if not isinstance(encoding, str):
            raise ValueError(f"encoding must be a str, got {type(encoding).__name__}")
        try:
            name = codecs.lookup(encoding).name
            "".encode(name)  # rejects bytes-to-bytes codecs such as 'base64' or 'rot13'
            b"".decode(name)
        except LookupError:
            raise ValueError(f"Unsupported encoding {encoding!r} for Serdes.String") from None
        self._encoding: str = name

    @property
    def encoding(self) -> str:
        """The normalised Python codec name in use (e.g. ``'utf-8'``, ``'iso8859-1'``)."""
        return self._encoding

    def _params(self) -> tuple[Any, ...]:
        return (self._encoding,)

    def __repr__(self) -> str:
        if self._encoding == "utf-8":
            return "Serdes.String()"
        return f"Serdes.String(encoding={self._encoding!r})"

    def serialize(self, topic: str | None, value: str | None) -> bytes | None:
        """``value`` encoded in the serde's charset; unencodable characters become ``?`` as in Java."""
        if value.__class__ is str:
            return value.encode(self._encoding, "replace")  # type: ignore[union-attr]
        if value is None:
            return None
        if isinstance(value, str):
            return str(value).encode(self._encoding, "replace")
        raise _wrong_type("StringSerializer", topic, value, "str")

    def deserialize(self, topic: str | None, data: bytes | None) -> str | None:
        """``data`` decoded from the serde's charset; malformed sequences become U+FFFD as in Java."""
        if data is None:
            return None
        try:
            return str(data, self._encoding, "replace")
        except TypeError:
            raise _not_bytes("StringDeserializer", topic, data) from None


# ----------------------------------------------------------------------------------------------------------
# Raw bytes


class ByteArraySerde(_BuiltinSerde[bytes]):
    """Bytes passed through unchanged (Kafka's ``Serdes.ByteArray()``); bytearray/memoryview become ``bytes``."""

    __slots__ = ()
    _FACTORY = "ByteArray"

    def serialize(self, topic: str | None, value: bytes | None) -> bytes | None:
        """``value`` itself when it is ``bytes``; a ``bytes`` copy of a bytearray or memoryview."""
        if value.__class__ is bytes or value is None:
            return value
        if _is_bytes_like(value):
            return bytes(value)  # type: ignore[arg-type]
        raise _wrong_type(f"{self._FACTORY}Serializer", topic, value, "bytes")

    def deserialize(self, topic: str | None, data: bytes | None) -> bytes | None:
        """``data`` itself when it is ``bytes``; a ``bytes`` copy of a bytearray or memoryview."""
        if data.__class__ is bytes or data is None:
            return data
        if _is_bytes_like(data):
            return bytes(data)  # type: ignore[arg-type]
        raise _not_bytes(f"{self._FACTORY}Deserializer", topic, data)


class BytesSerde(ByteArraySerde):
    """Kafka's ``Serdes.Bytes()`` (Java ``Bytes`` wrapper); in Python it is plain ``bytes``, like ByteArray."""

    __slots__ = ()
    _FACTORY = "Bytes"


# ----------------------------------------------------------------------------------------------------------
# UUID: the canonical 36-character string, UTF-8 encoded (Kafka's UUIDSerializer).

_CANONICAL_UUID: Final = re.compile(
    rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
).fullmatch


class UUIDSerde(_BuiltinSerde[uuid.UUID]):
    """``uuid.UUID`` as its canonical lower-case 8-4-4-4-12 string in UTF-8 (Kafka's ``Serdes.UUID()``).

    Deserializing accepts the canonical form in either case; Python's other spellings (braces, ``urn:``,
    no hyphens) are rejected because Java's ``UUID.fromString`` rejects them too.
    """

    __slots__ = ()
    _FACTORY = "UUID"

    def serialize(self, topic: str | None, value: uuid.UUID | None) -> bytes | None:
        """The 36 ASCII bytes of ``str(value)``."""
        if value is None:
            return None
        if isinstance(value, uuid.UUID):
            return str(value).encode("ascii")
        raise _wrong_type("UUIDSerializer", topic, value, "uuid.UUID")

    def deserialize(self, topic: str | None, data: bytes | None) -> uuid.UUID | None:
        """The UUID spelled by ``data``; SerializationException unless it is a canonical UUID string."""
        if data is None:
            return None
        if not _is_bytes_like(data):
            raise _not_bytes("UUIDDeserializer", topic, data)
        if _CANONICAL_UUID(data) is None:
            raise SerializationException(
                f"Error parsing data into UUID for topic {topic!r}: {bytes(data)[:64]!r} ({_describe(data)}) "
                "is not a canonical 8-4-4-4-12 hex UUID string"
            )
        return uuid.UUID(str(data, "ascii"))


# ----------------------------------------------------------------------------------------------------------
# Void: the only value is null.


class VoidSerde(_BuiltinSerde[None]):
    """Kafka's ``Serdes.Void()``: always serializes to ``None`` and only deserializes ``None``."""

    __slots__ = ()
    _FACTORY = "Void"

    def serialize(self, topic: str | None, value: object) -> None:
        """Always ``None``, whatever the value (Java's ``Void`` has no other value)."""
        return None

    def deserialize(self, topic: str | None, data: bytes | None) -> None:
        """``None``; non-null data is an error, as in Kafka's ``VoidDeserializer``."""
        if data is not None:
            raise SerializationException(
                f"Data should be null for a VoidDeserializer, but topic {topic!r} delivered {_describe(data)}"
            )
        return None


# ----------------------------------------------------------------------------------------------------------
# JSON (ours, not Kafka's)

_JSON_ENCODE: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, sort_keys=False).encode
_JSON_DECODE: Final = json.JSONDecoder().decode


class JSONSerde(_BuiltinSerde[Any]):
    """Compact UTF-8 JSON (not a Kafka built-in): ``json.dumps(v, separators=(",", ":"), ensure_ascii=False)``.

    Keys keep insertion order (no sorting). ``None`` maps to a null record, not to the text ``null``;
    the bytes ``b"null"`` do deserialize to ``None``.
    """

    __slots__ = ()
    _FACTORY = "JSON"

    def serialize(self, topic: str | None, value: Any) -> bytes | None:
        """UTF-8 bytes of the compact JSON text of ``value``."""
        if value is None:
            return None
        try:
            return _JSON_ENCODE(value).encode("utf-8")
        except (TypeError, ValueError) as error:
            raise SerializationException(
                f"JSONSerializer cannot serialize a value of type {type(value).__name__} for topic {topic!r}: {error}"
            ) from error

    def deserialize(self, topic: str | None, data: bytes | None) -> Any:
        """The value parsed from UTF-8 JSON ``data`` with ``json.loads`` semantics."""
        if data is None:
            return None
        try:
            return _JSON_DECODE(str(data, "utf-8"))
        except TypeError:
            raise _not_bytes("JSONDeserializer", topic, data) from None
        except ValueError as error:  # UnicodeDecodeError and JSONDecodeError
            raise SerializationException(
                f"JSONDeserializer cannot deserialize data for topic {topic!r} ({_describe(data)}): {error}"
            ) from error


# ----------------------------------------------------------------------------------------------------------
# User-supplied functions (Kafka's Serdes.serdeFrom)


def _callable_name(function: Callable[..., Any]) -> str:
    """A readable name for a callable, for repr."""
    return getattr(function, "__qualname__", None) or repr(function)


class WrapperSerde(Serde[T]):
    """A serde made of two functions, ``serialize(topic, value)`` and ``deserialize(topic, data)``.

    Like Kafka's ``WrapperSerde``, the functions also receive ``None`` and decide what it means.
    """

    __slots__ = ("_serializer", "_deserializer")

    def __init__(
        self,
        serialize: Callable[[str | None, T | None], bytes | None],
        deserialize: Callable[[str | None, bytes | None], T | None],
    ) -> None:
        """Wrap the two callables; ValueError if either is missing or not callable."""
        if not callable(serialize):
            raise ValueError(f"serialize must be callable, got {type(serialize).__name__}")
        if not callable(deserialize):
            raise ValueError(f"deserialize must be callable, got {type(deserialize).__name__}")
        self._serializer = serialize
        self._deserializer = deserialize

    def serialize(self, topic: str | None, value: T | None) -> bytes | None:
        """Delegate to the wrapped serialize function."""
        return self._serializer(topic, value)

    def deserialize(self, topic: str | None, data: bytes | None) -> T | None:
        """Delegate to the wrapped deserialize function."""
        return self._deserializer(topic, data)

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return bool(
            self._serializer == other._serializer  # type: ignore[attr-defined]
            and self._deserializer == other._deserializer  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash((self._serializer, self._deserializer))

    def __repr__(self) -> str:
        return f"Serdes.serde_from({_callable_name(self._serializer)}, {_callable_name(self._deserializer)})"


# ----------------------------------------------------------------------------------------------------------
# Factories


_SHORT: Final = ShortSerde()
_INTEGER: Final = IntegerSerde()
_LONG: Final = LongSerde()
_FLOAT: Final = FloatSerde()
_DOUBLE: Final = DoubleSerde()
_BOOLEAN: Final = BooleanSerde()
_BYTE_ARRAY: Final = ByteArraySerde()
_BYTES: Final = BytesSerde()
_UUID: Final = UUIDSerde()
_VOID: Final = VoidSerde()
_JSON: Final = JSONSerde()
_STRINGS: dict[str, StringSerde] = {"utf-8": StringSerde()}


class Serdes:
    """Factories for the built-in serdes, named like Kafka's ``Serdes``; stateless ones are shared singletons."""

    def __init__(self) -> None:
        raise TypeError("Serdes is a namespace of factories; call e.g. Serdes.String()")

    @staticmethod
    def String(encoding: str = "utf-8") -> StringSerde:
        """Text in ``encoding`` (UTF-8 by default, as in Kafka); one shared instance per charset."""
        if not isinstance(encoding, str):
            raise ValueError(f"encoding must be a str, got {type(encoding).__name__}")
        serde = _STRINGS.get(encoding)
        if serde is None:
            candidate = StringSerde(encoding)
            serde = _STRINGS.setdefault(candidate.encoding, candidate)
            _STRINGS.setdefault(encoding, serde)
        return serde

    @staticmethod
    def Short() -> ShortSerde:
        """Java short, 2 bytes big-endian."""
        return _SHORT

    @staticmethod
    def Integer() -> IntegerSerde:
        """Java int, 4 bytes big-endian."""
        return _INTEGER

    @staticmethod
    def Long() -> LongSerde:
        """Java long, 8 bytes big-endian."""
        return _LONG

    @staticmethod
    def Float() -> FloatSerde:
        """Java float, 4 bytes big-endian IEEE-754."""
        return _FLOAT

    @staticmethod
    def Double() -> DoubleSerde:
        """Java double, 8 bytes big-endian IEEE-754."""
        return _DOUBLE

    @staticmethod
    def Boolean() -> BooleanSerde:
        """Java boolean, one byte 0x01/0x00."""
        return _BOOLEAN

    @staticmethod
    def ByteArray() -> ByteArraySerde:
        """Raw bytes, unchanged."""
        return _BYTE_ARRAY

    @staticmethod
    def Bytes() -> BytesSerde:
        """Raw bytes, unchanged (Kafka's ``Bytes`` wrapper is plain ``bytes`` here)."""
        return _BYTES

    @staticmethod
    def UUID() -> UUIDSerde:
        """``uuid.UUID`` as its canonical string in UTF-8."""
        return _UUID

    @staticmethod
    def Void() -> VoidSerde:
        """Always null."""
        return _VOID

    @staticmethod
    def JSON() -> JSONSerde:
        """Compact UTF-8 JSON (our addition; not in Kafka)."""
        return _JSON

    @staticmethod
    def serde_from(
        serialize: Callable[[str | None, Any], bytes | None],
        deserialize: Callable[[str | None, bytes | None], Any],
    ) -> WrapperSerde[Any]:
        """A serde from two functions ``(topic, value) -> bytes`` and ``(topic, data) -> value`` (``serdeFrom``)."""
        return WrapperSerde(serialize, deserialize)

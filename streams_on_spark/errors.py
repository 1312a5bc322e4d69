"""Typed errors, mirroring Kafka Streams' exception hierarchy.

Bad arguments raise the built-in ``ValueError`` (Java's ``IllegalArgumentException`` and the
``NullPointerException`` of ``Objects.requireNonNull``); the ``require*`` helpers below are the one place that
raises them for a ``None`` or wrong-typed argument.
"""
from __future__ import annotations

from typing import Any, Optional, TypeVar

_T = TypeVar("_T")


class StreamsException(Exception):
    """A failure while running a topology (Kafka's ``StreamsException``)."""


class TopologyException(StreamsException):
    """An invalid topology; the message starts with ``Invalid topology:`` as in Kafka."""

    def __init__(self, message: str) -> None:
        super().__init__(message if message.startswith("Invalid topology") else f"Invalid topology: {message}")


class IllegalStateError(StreamsException):
    """An operation called in a state that does not allow it (Java's ``IllegalStateException``)."""


class UnsupportedOperationError(Exception):
    """An operation the object does not offer, e.g. writing to a global store from a processor (Java's
    ``UnsupportedOperationException``; not a ``StreamsException``, so the processing handler sees it as Kafka's)."""


class UnknownTopicException(StreamsException):
    """A record sent to a topic that does not exist (where Kafka's producer finds no metadata for it); names it."""


class SerializationException(StreamsException):
    """A serde could not turn a value into bytes or back; names the topic and the value's type."""


class ConfigException(ValueError):
    """Kafka's ``ConfigException``: a configuration value that is missing, of the wrong type or out of range."""

    @staticmethod
    def invalid(name: str, value: Any, message: Optional[str] = None) -> "ConfigException":
        """Kafka's ``ConfigException(name, value, message)``: "Invalid value <v> for configuration <name>: <m>"."""
        return ConfigException(f"Invalid value {value} for configuration {name}" + ("" if message is None
                                                                                     else f": {message}"))


# ---------------------------------------------------------------------------------------------------------
# Argument checks shared by the DSL, the Processor API and the test driver: a bad argument is a ValueError
# at the call, naming the argument (in Kafka's wording where Kafka has one) and what was expected.
# ---------------------------------------------------------------------------------------------------------


def _given(value: Any, what: str, optional: bool) -> bool:
    """False for an allowed ``None``; Kafka's ``"<what> can't be null"`` for a required one."""
    if value is None:
        if optional:
            return False
        raise ValueError(f"{what} can't be null")
    return True


def _shown(value: Any) -> str:
    """Plain values by (shortened) repr, anything else by type, so the message shows what was passed."""
    if value is not None and not isinstance(value, (str, int, float, bytes, tuple, list)):
        return type(value).__name__
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def bad_argument(what: str, expected: str, value: Any) -> ValueError:
    """``"<what> must be <expected>, got <value>"``."""
    return ValueError(f"{what} must be {expected}, got {_shown(value)}")


def require(value: _T | None, what: str) -> _T:
    """Kafka's ``Objects.requireNonNull(value, "<what> can't be null")``."""
    _given(value, what, False)
    return value  # type: ignore[return-value]


def require_instance(value: Any, what: str, expected: type | tuple[type, ...], *, optional: bool = False) -> Any:
    """``value`` must be an instance of ``expected`` (a parameter object, a stream, a mapping, ...)."""
    if _given(value, what, optional) and not isinstance(value, expected):
        types = expected if isinstance(expected, tuple) else (expected,)
        raise bad_argument(what, " or ".join(("an " if t.__name__[0] in "AEIOU" else "a ") + t.__name__
                                             for t in types), value)
    return value


def require_callable(value: Any, what: str, *, optional: bool = False) -> Any:
    """A user function (predicate, mapper, supplier, partitioner, timestamp extractor, ...)."""
    if _given(value, what, optional) and not callable(value):
        raise bad_argument(what, "callable", value)
    return value


def require_str(value: Any, what: str, *, optional: bool = False) -> Any:
    """A name: a non-empty ``str``."""
    if _given(value, what, optional) and (not isinstance(value, str) or not value):
        raise bad_argument(what, "a non-empty str", value)
    return value


def require_int(value: Any, what: str, *, minimum: int | None = None, optional: bool = False) -> Any:
    """An ``int`` (not a bool), at least ``minimum`` when given."""
    if _given(value, what, optional):
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad_argument(what, "an int", value)
        if minimum is not None and value < minimum:
            raise bad_argument(what, f"an int >= {minimum}", value)
    return value


def require_serde(value: Any, what: str, *, optional: bool = True) -> Any:
    """A serde instance (``serialize``/``deserialize``); ``None`` means the configured default unless required."""
    if _given(value, what, optional) and (isinstance(value, type) or not hasattr(value, "serialize")
                                          or not hasattr(value, "deserialize")):
        raise bad_argument(what, "a Serde (e.g. Serdes.String())", value)
    return value

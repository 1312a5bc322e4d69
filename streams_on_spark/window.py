"""Windows and windowed keys, the leaf types every layer shares: Kafka's ``Window`` (``TimeWindow``,
``SessionWindow``, ``UnlimitedWindow``), ``Windowed`` and the duration validation of its window specifications.

Serdes, stores and processors use these; the DSL's window specifications (``dsl/windows.py``) build on them and
re-export them. Bounds, validation messages and ``toString`` follow ``org.apache.kafka.streams.kstream``.
"""
from __future__ import annotations

import datetime
import logging
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, Generic, Optional, TypeVar

log = logging.getLogger(__name__)

__all__ = [
    "Window",
    "TimeWindow",
    "SessionWindow",
    "UnlimitedWindow",
    "Windowed",
    "validate_millis",
    "java_duration_string",
    "LONG_MAX",
    "LONG_MIN",
    "NO_GRACE_PERIOD",
    "DEPRECATED_DEFAULT_24_HR_GRACE_PERIOD",
    "OperatorWindows",
]
K = TypeVar("K")

LONG_MAX = (1 << 63) - 1
LONG_MIN = -(1 << 63)
NO_GRACE_PERIOD = 0
DEPRECATED_DEFAULT_24_HR_GRACE_PERIOD = 24 * 60 * 60 * 1000

_MS_VALIDATION_PREFIX = 'Invalid value for parameter "{name}" (value was: {value}). '


# ----------------------------------------------------------------------------------------------------------
# Durations


def java_duration_string(ms: int) -> str:
    """``java.time.Duration.ofMillis(ms).toString()`` (``PT0.1S``, ``PT1H``…), for Kafka-identical messages."""
    seconds, millis = divmod(ms, 1000)          # floor, like Duration's (seconds, non-negative nanos)
    nanos = millis * 1_000_000
    if seconds == 0 and nanos == 0:
        return "PT0S"
    total = seconds + 1 if seconds < 0 and nanos > 0 else seconds
    hours = int(total / 3600)                   # Java's / and % truncate toward zero
    rem = total - hours * 3600
    minutes = int(rem / 60)
    secs = rem - minutes * 60
    out = "PT"
    if hours:
        out += f"{hours}H"
    if minutes:
        out += f"{minutes}M"
    if secs == 0 and nanos == 0 and len(out) > 2:
        return out
    if seconds < 0 and nanos > 0:
        out += "-0" if secs == 0 else str(secs)
    else:
        out += str(secs)
    if nanos > 0:
        frac = str(2 * 1_000_000_000 - nanos if seconds < 0 else nanos + 1_000_000_000).rstrip("0")
        out += "." + frac[1:]
    return out + "S"


def _show(value: Any) -> str:
    """How a duration argument appears in Kafka's messages (``null`` for None)."""
    return "null" if value is None else str(value)


def validate_millis(value: int | datetime.timedelta | None, name: str) -> int:
    """Milliseconds of ``value`` (Kafka's ``ApiUtils.validateMillisecondDuration``); sign is checked by callers.

    A ``timedelta`` truncates toward zero to whole milliseconds, like ``Duration.toMillis()``.
    """
    prefix = _MS_VALIDATION_PREFIX.format(name=name, value=_show(value))
    if value is None:
        raise ValueError(prefix + "It shouldn't be null.")
    if isinstance(value, datetime.timedelta):
        micros = value // datetime.timedelta(microseconds=1)
        ms = abs(micros) // 1000
        ms = -ms if micros < 0 else ms
    elif isinstance(value, int) and not isinstance(value, bool):
        ms = value
    else:
        raise TypeError(prefix + "It must be an int number of milliseconds or a datetime.timedelta.")
    if not LONG_MIN <= ms <= LONG_MAX:
        raise ValueError(prefix + "It can't be converted to milliseconds.")
    return int(ms)


# ----------------------------------------------------------------------------------------------------------
# Windows


@dataclass(frozen=True, slots=True)
class Window:
    """A time interval in epoch milliseconds (Kafka's abstract ``Window``); subclasses define the bounds' meaning.

    Equal only to a window of the same class with the same bounds, as in Kafka.
    """

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0:
            raise ValueError("Window startMs time cannot be negative.")
        if self.end < self.start:
            raise ValueError("Window endMs time cannot be smaller than window startMs time.")

    @property
    def start_time(self) -> datetime.datetime:
        """``start`` as an aware UTC datetime (Kafka's ``startTime()`` Instant)."""
        return _EPOCH + datetime.timedelta(milliseconds=self.start)

    @property
    def end_time(self) -> datetime.datetime:
        """``end`` as an aware UTC datetime (Kafka's ``endTime()``); clamps at ``datetime.max``."""
        try:
            return _EPOCH + datetime.timedelta(milliseconds=self.end)
        except OverflowError:
            return datetime.datetime.max.replace(tzinfo=datetime.timezone.utc)

    @abstractmethod
    def overlap(self, other: "Window") -> bool:
        """Whether the two windows share a point in time; only windows of the same type compare."""

    def _check_same_type(self, other: "Window") -> None:
        if type(other) is not type(self):
            raise ValueError(f"Cannot compare windows of different type. Other window has type "
                             f"{type(other).__name__}.")

    def __str__(self) -> str:
        return f"Window{{startMs={self.start}, endMs={self.end}}}"


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@dataclass(frozen=True, slots=True)
class TimeWindow(Window):
    """A tumbling/hopping/sliding window ``[start, end)``: start inclusive, end exclusive; ``end > start``."""

    def __post_init__(self) -> None:
        Window.__post_init__(self)
        if self.start == self.end:
            raise ValueError("Window endMs must be greater than window startMs.")

    def overlap(self, other: Window) -> bool:
        self._check_same_type(other)
        return self.start < other.end and other.start < self.end



@dataclass(frozen=True, slots=True)
class SessionWindow(Window):
    """A session ``[start, end]``: both bounds inclusive (a single-record session has ``start == end``)."""

    def overlap(self, other: Window) -> bool:
        self._check_same_type(other)
        return not (other.end < self.start or self.end < other.start)



@dataclass(frozen=True, slots=True, init=False)
class UnlimitedWindow(Window):
    """``[start, Long.MAX_VALUE]``; overlaps every other unlimited window (Kafka's ``UnlimitedWindow``)."""

    def __init__(self, start: int) -> None:
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", LONG_MAX)
        self.__post_init__()

    def __reduce__(self) -> tuple[Any, ...]:
        return (UnlimitedWindow, (self.start,))

    def overlap(self, other: Window) -> bool:
        self._check_same_type(other)
        return True



@dataclass(frozen=True, slots=True)
class Windowed(Generic[K]):
    """A key and the window it was aggregated in (Kafka's ``Windowed<K>``); prints as ``[key@start/end]``."""

    key: K
    window: Window

    def __str__(self) -> str:
        return f"[{self.key}@{self.window.start}/{self.window.end}]"


# ----------------------------------------------------------------------------------------------------------
# A stateful operator's time parameters

OPERATOR_WINDOW_KINDS = ("aggregation", "join", "suppression")


@dataclass(frozen=True)
class OperatorWindows:
    """A stateful DSL operator's time parameters, carried by its supplier and its topology node: its processor is
    built from them and the upgrade check compares them. ``spec`` is the user's ``TimeWindows``/``SlidingWindows``/
    ``SessionWindows`` (an aggregation), ``JoinWindows`` (a join) or ``Suppressed`` (a suppression); ``grace_ms`` the
    window's grace, for a suppression the close delay of the windows upstream (None unless it waits for them)."""

    kind: str
    spec: Any
    grace_ms: Optional[int]

    def __post_init__(self) -> None:
        if self.kind not in OPERATOR_WINDOW_KINDS:
            raise ValueError(f"OperatorWindows kind must be one of {list(OPERATOR_WINDOW_KINDS)}, got {self.kind!r}")
        if self.spec is None:
            raise ValueError(f"OperatorWindows of a {self.kind} needs its window specification, got None")

    @classmethod
    def aggregation(cls, windows: Any) -> "OperatorWindows":
        """A windowed aggregation's windows (time, sliding or session)."""
        return cls("aggregation", windows, windows.grace_ms)

    @classmethod
    def join(cls, windows: Any) -> "OperatorWindows":
        """A stream-stream join's ``JoinWindows`` (both sides carry the same; each reads its own bounds)."""
        return cls("join", windows, windows.grace_ms)

    @classmethod
    def suppression(cls, suppressed: Any, grace_ms: Optional[int]) -> "OperatorWindows":
        """A suppression's ``Suppressed`` and the close delay of the windows upstream (None unless it waits for
        them to close)."""
        return cls("suppression", suppressed, grace_ms)

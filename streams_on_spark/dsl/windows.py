"""Windows and window specifications: Kafka's ``Window``/``Windowed`` and ``TimeWindows``, ``SlidingWindows``,
``SessionWindows``, ``JoinWindows``.

Bounds, validation messages, ``windowsFor`` and ``toString`` follow the Java classes in
``org.apache.kafka.streams.kstream`` (and ``kstream.internals.{TimeWindow,SessionWindow,UnlimitedWindow}``), so
windowed aggregations produce the same windows — and therefore the same keys and partitions — as Kafka Streams.
All times are epoch milliseconds; durations accept an ``int`` of milliseconds or a ``datetime.timedelta``.
"""
from __future__ import annotations

import datetime
import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)

__all__ = [
    "Window",
    "TimeWindow",
    "SessionWindow",
    "UnlimitedWindow",
    "Windowed",
    "Windows",
    "TimeWindows",
    "SlidingWindows",
    "SessionWindows",
    "JoinWindows",
    "validate_millis",
    "java_duration_string",
    "LONG_MAX",
    "NO_GRACE_PERIOD",
    "DEPRECATED_DEFAULT_24_HR_GRACE_PERIOD",
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
# Window specifications


class Windows(ABC):
    """Base of window specs that enumerate windows for a timestamp (Kafka's ``Windows<W>``)."""

    __slots__ = ()

    @abstractmethod
    def windows_for(self, timestamp: int) -> dict[int, Window]:
        """Start -> window, for every window containing ``timestamp``."""

    @abstractmethod
    def size(self) -> int:
        """The window size in ms."""

    def grace_period_ms(self) -> int:
        return self.grace_ms  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class TimeWindows(Windows):
    """Fixed-size windows: tumbling (``advance == size``) or hopping (``advance < size``), ``[start, start+size)``.

    Windows are aligned to the epoch: starts are multiples of ``advance_ms``.
    """

    size_ms: int
    advance_ms: int
    grace_ms: int

    def __post_init__(self) -> None:
        if self.size_ms <= 0:
            raise ValueError("Window size (sizeMs) must be larger than zero.")
        if self.advance_ms <= 0 or self.advance_ms > self.size_ms:
            raise ValueError(f"Window advancement interval should be more than zero and less than window duration "
                             f"which is {self.size_ms} ms, but given advancement interval is: {self.advance_ms} ms")
        if self.grace_ms < 0:
            raise ValueError("Grace period must not be negative.")

    @staticmethod
    def of_size_with_no_grace(size: int | datetime.timedelta) -> "TimeWindows":
        """Tumbling windows of ``size`` that close as soon as stream time passes their end."""
        return TimeWindows.of_size_and_grace(size, NO_GRACE_PERIOD)

    @staticmethod
    def of_size_and_grace(size: int | datetime.timedelta,
                          after_window_end: int | datetime.timedelta) -> "TimeWindows":
        """Tumbling windows of ``size`` accepting out-of-order records up to ``after_window_end`` late."""
        size_ms = validate_millis(size, "size")
        grace_ms = validate_millis(after_window_end, "afterWindowEnd")
        return TimeWindows(size_ms, size_ms, grace_ms)

    def advance_by(self, advance: int | datetime.timedelta) -> "TimeWindows":
        """Hopping windows: a copy whose windows start every ``advance`` (0 < advance <= size)."""
        return TimeWindows(self.size_ms, validate_millis(advance, "advance"), self.grace_ms)

    def windows_for(self, timestamp: int) -> dict[int, TimeWindow]:
        """Every window containing ``timestamp``, ``start -> window`` by ascending start (Kafka's ``windowsFor``)."""
        size, advance = self.size_ms, self.advance_ms
        start = (max(0, timestamp - size + advance) // advance) * advance
        windows: dict[int, TimeWindow] = {}
        while start <= timestamp:
            windows[start] = TimeWindow(start, start + size)
            start += advance
        return windows

    def size(self) -> int:
        return self.size_ms

    def __str__(self) -> str:
        return f"TimeWindows{{, sizeMs={self.size_ms}, advanceMs={self.advance_ms}, graceMs={self.grace_ms}}}"


@dataclass(frozen=True, slots=True)
class SlidingWindows:
    """Windows of ``time_difference_ms`` defined by the records themselves (Kafka's ``SlidingWindows``).

    Two records are in a common window when their timestamps differ by at most ``time_difference_ms``.
    """

    time_difference_ms: int
    grace_ms: int

    def __post_init__(self) -> None:
        if self.time_difference_ms < 0:
            raise ValueError("Window time difference must not be negative.")
        if self.grace_ms < 0:
            raise ValueError("Window grace period must not be negative.")

    @staticmethod
    def of_time_difference_with_no_grace(time_difference: int | datetime.timedelta) -> "SlidingWindows":
        return SlidingWindows.of_time_difference_and_grace(time_difference, NO_GRACE_PERIOD)

    @staticmethod
    def of_time_difference_and_grace(time_difference: int | datetime.timedelta,
                                     after_window_end: int | datetime.timedelta) -> "SlidingWindows":
        return SlidingWindows(validate_millis(time_difference, "timeDifference"),
                              validate_millis(after_window_end, "afterWindowEnd"))

    def grace_period_ms(self) -> int:
        return self.grace_ms

    def __str__(self) -> str:
        return f"SlidingWindows{{, sizeMs={self.time_difference_ms}, graceMs={self.grace_ms}}}"


@dataclass(frozen=True, slots=True)
class SessionWindows:
    """Sessions separated by at least ``inactivity_gap_ms`` of inactivity (Kafka's ``SessionWindows``)."""

    inactivity_gap_ms: int
    grace_ms: int

    def __post_init__(self) -> None:
        if self.inactivity_gap_ms <= 0:
            raise ValueError("Gap time cannot be zero or negative.")
        if self.grace_ms < 0:
            raise ValueError("Grace period must not be negative.")

    @staticmethod
    def of_inactivity_gap_with_no_grace(inactivity_gap: int | datetime.timedelta) -> "SessionWindows":
        return SessionWindows.of_inactivity_gap_and_grace(inactivity_gap, NO_GRACE_PERIOD)

    @staticmethod
    def of_inactivity_gap_and_grace(inactivity_gap: int | datetime.timedelta,
                                    after_window_end: int | datetime.timedelta) -> "SessionWindows":
        return SessionWindows(validate_millis(inactivity_gap, "inactivityGap"),
                              validate_millis(after_window_end, "afterWindowEnd"))

    def inactivity_gap(self) -> int:
        return self.inactivity_gap_ms

    def grace_period_ms(self) -> int:
        return self.grace_ms

    def __str__(self) -> str:
        return f"SessionWindows{{gapMs={self.inactivity_gap_ms}, graceMs={self.grace_ms}}}"


@dataclass(frozen=True, slots=True)
class JoinWindows(Windows):
    """Stream-stream join windows: a left record at ``t`` joins right records in ``[t - before, t + after]``.

    ``before_ms`` or ``after_ms`` may be negative as long as ``before_ms + after_ms >= 0`` (Kafka's rule).
    ``enable_spurious_result_fix`` is False only for the deprecated :meth:`of` (Kafka's eager left/outer-join
    results); it does not take part in equality, as in Kafka.
    """

    before_ms: int
    after_ms: int
    grace_ms: int
    enable_spurious_result_fix: bool = field(default=True, compare=False)

    def __post_init__(self) -> None:
        if self.before_ms + self.after_ms < 0:
            raise ValueError("Window interval (ie, beforeMs+afterMs) must not be negative.")
        if self.grace_ms < 0:
            raise ValueError("Grace period must not be negative.")

    @staticmethod
    def of_time_difference_and_grace(time_difference: int | datetime.timedelta,
                                     after_window_end: int | datetime.timedelta) -> "JoinWindows":
        diff = validate_millis(time_difference, "timeDifference")
        grace = validate_millis(after_window_end, "afterWindowEnd")
        return JoinWindows(diff, diff, grace, True)

    @staticmethod
    def of_time_difference_with_no_grace(time_difference: int | datetime.timedelta) -> "JoinWindows":
        return JoinWindows.of_time_difference_and_grace(time_difference, NO_GRACE_PERIOD)

    @staticmethod
    def of(time_difference: int | datetime.timedelta) -> "JoinWindows":
        """Deprecated in Kafka: grace ``max(24h - 2*diff, 0)`` and no spurious-result fix."""
        diff = validate_millis(time_difference, "timeDifference")
        return JoinWindows(diff, diff, max(DEPRECATED_DEFAULT_24_HR_GRACE_PERIOD - diff * 2, 0), False)

    def before(self, time_difference: int | datetime.timedelta) -> "JoinWindows":
        """A copy joining records up to ``time_difference`` earlier than the left record."""
        return JoinWindows(validate_millis(time_difference, "timeDifference"), self.after_ms, self.grace_ms,
                           self.enable_spurious_result_fix)

    def after(self, time_difference: int | datetime.timedelta) -> "JoinWindows":
        """A copy joining records up to ``time_difference`` later than the left record."""
        return JoinWindows(self.before_ms, validate_millis(time_difference, "timeDifference"), self.grace_ms,
                           self.enable_spurious_result_fix)

    def grace(self, after_window_end: int | datetime.timedelta) -> "JoinWindows":
        """Deprecated in Kafka; only allowed after :meth:`of`."""
        from streams_on_spark.errors import IllegalStateError
        if self.enable_spurious_result_fix:
            raise IllegalStateError("Cannot call grace() after setting grace value via ofTimeDifferenceAndGrace "
                                    "or ofTimeDifferenceWithNoGrace.")
        return JoinWindows(self.before_ms, self.after_ms, validate_millis(after_window_end, "afterWindowEnd"), False)

    def windows_for(self, timestamp: int) -> dict[int, Window]:
        raise NotImplementedError("windowsFor() is not supported by JoinWindows.")

    def size(self) -> int:
        return self.before_ms + self.after_ms

    def __str__(self) -> str:
        return f"JoinWindows{{beforeMs={self.before_ms}, afterMs={self.after_ms}, graceMs={self.grace_ms}}}"

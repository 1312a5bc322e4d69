"""Window specifications: Kafka's ``TimeWindows``, ``SlidingWindows``, ``SessionWindows``, ``JoinWindows`` (the
windows and windowed keys they make live in ``streams_on_spark.window``, re-exported here).

Bounds, validation messages, ``windowsFor`` and ``toString`` follow the Java classes in
``org.apache.kafka.streams.kstream`` (and ``kstream.internals.{TimeWindow,SessionWindow,UnlimitedWindow}``), so
windowed aggregations produce the same windows — and therefore the same keys and partitions — as Kafka Streams.
All times are epoch milliseconds; durations accept an ``int`` of milliseconds or a ``datetime.timedelta``.
"""
from __future__ import annotations

import datetime
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from streams_on_spark.window import (  # noqa: F401 - re-exported: the DSL's window types
    DEPRECATED_DEFAULT_24_HR_GRACE_PERIOD,
    LONG_MAX,
    NO_GRACE_PERIOD,
    SessionWindow,
    TimeWindow,
    UnlimitedWindow,
    Window,
    Windowed,
    java_duration_string,
    validate_millis,
)

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

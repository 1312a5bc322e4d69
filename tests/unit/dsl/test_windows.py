"""Window specs and windows: Kafka's bounds, ``windowsFor``, validation messages and value semantics."""
from __future__ import annotations

import datetime
import pickle

import pytest

from streams_on_spark.dsl.windows import (
    JoinWindows,
    SessionWindow,
    SessionWindows,
    SlidingWindows,
    TimeWindow,
    TimeWindows,
    UnlimitedWindow,
    Windowed,
    java_duration_string,
    validate_millis,
)
from streams_on_spark.errors import IllegalStateError


def starts(spec: TimeWindows, ts: int) -> list[tuple[int, int, int]]:
    return [(k, w.start, w.end) for k, w in spec.windows_for(ts).items()]


# ---------------------------------------------------------------- TimeWindows.windowsFor


@pytest.mark.parametrize("ts, expected", [
    (0, [(0, 0, 10)]),
    (9, [(0, 0, 10)]),
    (10, [(10, 10, 20)]),
    (25, [(20, 20, 30)]),
])
def test_tumbling_windows_for(ts, expected):
    assert starts(TimeWindows.of_size_with_no_grace(10), ts) == expected


@pytest.mark.parametrize("ts, expected", [
    (0, [(0, 0, 10)]),                      # near 0: no window may start before the epoch
    (3, [(0, 0, 10)]),
    (5, [(0, 0, 10), (5, 5, 15)]),
    (7, [(0, 0, 10), (5, 5, 15)]),
    (12, [(5, 5, 15), (10, 10, 20)]),
])
def test_hopping_windows_for(ts, expected):
    assert starts(TimeWindows.of_size_with_no_grace(10).advance_by(5), ts) == expected


def test_hopping_windows_for_non_dividing_advance():
    spec = TimeWindows.of_size_with_no_grace(10).advance_by(3)
    assert starts(spec, 10) == [(3, 3, 13), (6, 6, 16), (9, 9, 19)]
    assert starts(spec, 1) == [(0, 0, 10)]
    assert list(spec.windows_for(10)) == [3, 6, 9]          # ascending start order
    assert all(type(w) is TimeWindow for w in spec.windows_for(10).values())


def test_windows_for_negative_timestamp_is_empty():
    assert TimeWindows.of_size_with_no_grace(10).windows_for(-1) == {}


def test_time_windows_attributes_and_advance_keeps_grace():
    spec = TimeWindows.of_size_and_grace(datetime.timedelta(seconds=1), datetime.timedelta(milliseconds=250))
    assert (spec.size_ms, spec.advance_ms, spec.grace_ms, spec.size()) == (1000, 1000, 250, 1000)
    hopping = spec.advance_by(100)
    assert (hopping.size_ms, hopping.advance_ms, hopping.grace_ms) == (1000, 100, 250)
    assert spec.advance_ms == 1000                           # advance_by returned a copy
    assert hopping.grace_period_ms() == 250
    assert str(hopping) == "TimeWindows{, sizeMs=1000, advanceMs=100, graceMs=250}"
    assert TimeWindows.of_size_with_no_grace(10) == TimeWindows.of_size_and_grace(10, 0)
    assert TimeWindows.of_size_with_no_grace(10) != TimeWindows.of_size_and_grace(10, 1)
    assert pickle.loads(pickle.dumps(hopping)) == hopping


@pytest.mark.parametrize("make, message", [
    (lambda: TimeWindows.of_size_with_no_grace(0), "Window size (sizeMs) must be larger than zero."),
    (lambda: TimeWindows.of_size_with_no_grace(-5), "Window size (sizeMs) must be larger than zero."),
    (lambda: TimeWindows.of_size_and_grace(10, -1), "Grace period must not be negative."),
    (lambda: TimeWindows.of_size_with_no_grace(10).advance_by(0),
     "Window advancement interval should be more than zero and less than window duration which is 10 ms, "
     "but given advancement interval is: 0 ms"),
    (lambda: TimeWindows.of_size_with_no_grace(10).advance_by(11),
     "Window advancement interval should be more than zero and less than window duration which is 10 ms, "
     "but given advancement interval is: 11 ms"),
])
def test_time_windows_validation(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message


def test_duration_validation():
    with pytest.raises(ValueError) as info:
        TimeWindows.of_size_with_no_grace(None)
    assert str(info.value) == 'Invalid value for parameter "size" (value was: null). It shouldn\'t be null.'
    with pytest.raises(ValueError, match="It can't be converted to milliseconds"):
        validate_millis(1 << 63, "size")
    with pytest.raises(TypeError):
        TimeWindows.of_size_with_no_grace(True)
    with pytest.raises(TypeError):
        TimeWindows.of_size_with_no_grace(1.5)
    # timedelta truncates toward zero, like Duration.toMillis()
    assert validate_millis(datetime.timedelta(microseconds=1999), "x") == 1
    assert validate_millis(datetime.timedelta(microseconds=-1999), "x") == -1
    with pytest.raises(ValueError, match="Grace period must not be negative"):
        TimeWindows.of_size_and_grace(10, datetime.timedelta(microseconds=-1000))


def test_java_duration_string():
    assert java_duration_string(0) == "PT0S"
    assert java_duration_string(100) == "PT0.1S"
    assert java_duration_string(61_500) == "PT1M1.5S"
    assert java_duration_string(3_600_000) == "PT1H"
    assert java_duration_string(-1) == "PT-0.001S"


# ---------------------------------------------------------------- Window / Windowed


def test_window_bounds_validation():
    with pytest.raises(ValueError, match="^Window startMs time cannot be negative.$"):
        TimeWindow(-1, 5)
    with pytest.raises(ValueError, match="^Window endMs time cannot be smaller than window startMs time.$"):
        SessionWindow(5, 4)
    with pytest.raises(ValueError, match="^Window endMs must be greater than window startMs.$"):
        TimeWindow(5, 5)
    assert SessionWindow(5, 5).end == 5                      # a one-record session
    assert UnlimitedWindow(7).end == (1 << 63) - 1


def test_overlap_time_is_half_open_session_is_closed():
    assert not TimeWindow(0, 10).overlap(TimeWindow(10, 20))
    assert TimeWindow(0, 10).overlap(TimeWindow(9, 20))
    assert SessionWindow(0, 10).overlap(SessionWindow(10, 20))
    assert not SessionWindow(0, 9).overlap(SessionWindow(10, 20))
    assert UnlimitedWindow(0).overlap(UnlimitedWindow(100))
    with pytest.raises(ValueError, match="Cannot compare windows of different type"):
        TimeWindow(0, 10).overlap(SessionWindow(0, 10))


def test_window_equality_needs_same_type_and_windowed_str():
    assert TimeWindow(0, 10) == TimeWindow(0, 10)
    assert TimeWindow(0, 10) != SessionWindow(0, 10)
    assert str(TimeWindow(0, 10)) == "Window{startMs=0, endMs=10}"
    w = Windowed("a", TimeWindow(0, 10))
    assert str(w) == "[a@0/10]"
    assert w == Windowed("a", TimeWindow(0, 10)) and w != Windowed("a", SessionWindow(0, 10))
    assert {w: 1}[Windowed("a", TimeWindow(0, 10))] == 1
    assert pickle.loads(pickle.dumps(w)) == w
    assert pickle.loads(pickle.dumps(UnlimitedWindow(3))) == UnlimitedWindow(3)
    assert TimeWindow(0, 1000).end_time == datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=datetime.timezone.utc)


# ---------------------------------------------------------------- Sliding / Session


def test_sliding_windows():
    spec = SlidingWindows.of_time_difference_and_grace(10, 5)
    assert (spec.time_difference_ms, spec.grace_ms) == (10, 5)
    assert SlidingWindows.of_time_difference_with_no_grace(0).grace_ms == 0
    assert str(spec) == "SlidingWindows{, sizeMs=10, graceMs=5}"
    with pytest.raises(ValueError, match="^Window time difference must not be negative.$"):
        SlidingWindows.of_time_difference_with_no_grace(-1)
    with pytest.raises(ValueError, match="^Window grace period must not be negative.$"):
        SlidingWindows.of_time_difference_and_grace(1, -1)


def test_session_windows():
    spec = SessionWindows.of_inactivity_gap_and_grace(datetime.timedelta(minutes=5), 30)
    assert (spec.inactivity_gap_ms, spec.grace_ms, spec.inactivity_gap()) == (300_000, 30, 300_000)
    assert SessionWindows.of_inactivity_gap_with_no_grace(1).grace_ms == 0
    assert str(spec) == "SessionWindows{gapMs=300000, graceMs=30}"
    with pytest.raises(ValueError, match="^Gap time cannot be zero or negative.$"):
        SessionWindows.of_inactivity_gap_with_no_grace(0)
    with pytest.raises(ValueError, match="^Grace period must not be negative.$"):
        SessionWindows.of_inactivity_gap_and_grace(1, -1)


# ---------------------------------------------------------------- JoinWindows


def test_join_windows_before_after():
    spec = JoinWindows.of_time_difference_and_grace(10, 5)
    assert (spec.before_ms, spec.after_ms, spec.grace_ms, spec.size()) == (10, 10, 5, 20)
    shifted = spec.before(-5)                                  # negative is fine while before + after >= 0
    assert (shifted.before_ms, shifted.after_ms, shifted.grace_ms, shifted.size()) == (-5, 10, 5, 5)
    assert (spec.before_ms, spec.after_ms) == (10, 10)         # before() returned a copy
    assert spec.after(0).size() == 10
    assert spec.before(-10).size() == 0
    with pytest.raises(ValueError, match=r"^Window interval \(ie, beforeMs\+afterMs\) must not be negative.$"):
        spec.before(-11)
    with pytest.raises(ValueError, match=r"^Window interval \(ie, beforeMs\+afterMs\) must not be negative.$"):
        spec.after(-11)
    with pytest.raises(ValueError, match=r"^Window interval"):
        JoinWindows.of_time_difference_with_no_grace(-1)
    with pytest.raises(ValueError, match="^Grace period must not be negative.$"):
        JoinWindows.of_time_difference_and_grace(1, -1)
    assert str(spec) == "JoinWindows{beforeMs=10, afterMs=10, graceMs=5}"


def test_join_windows_deprecated_of_and_grace():
    old = JoinWindows.of(10)
    assert old.grace_ms == 24 * 3600 * 1000 - 20 and not old.enable_spurious_result_fix
    assert JoinWindows.of(13 * 3600 * 1000).grace_ms == 0
    assert old.grace(7).grace_ms == 7
    with pytest.raises(IllegalStateError, match="Cannot call grace"):
        JoinWindows.of_time_difference_with_no_grace(10).grace(7)
    assert JoinWindows.of_time_difference_and_grace(10, 7).before(3).enable_spurious_result_fix
    # equality ignores the spurious-result flag, as Kafka's equals does
    assert JoinWindows.of(10).grace(0) == JoinWindows.of_time_difference_with_no_grace(10)
    with pytest.raises(NotImplementedError, match="not supported by JoinWindows"):
        old.windows_for(5)

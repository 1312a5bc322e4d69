"""KIP-825 emit strategies of windowed aggregations: ``emit_strategy(EmitStrategy.on_window_close())``.

Vectors are Kafka's own where one exists (``KStreamWindowAggregateTest``, ``KStreamSlidingWindowAggregateTest``,
``KStreamSessionWindowAggregateProcessorTest``), run through the driver with ``TopologyTestDriver``'s emit interval
of 0 unless a test sets ``__emit.interval.ms.kstreams.windowed.aggregation__``.
"""
from __future__ import annotations

import logging

import pytest

from streams_on_spark import (
    Consumed,
    EmitStrategy,
    Grouped,
    Materialized,
    Produced,
    Serdes,
    SessionWindowedKStream,
    SessionWindows,
    SlidingWindows,
    StreamsBuilder,
    TestRecord,
    TimeWindowedKStream,
    TimeWindows,
    TopologyTestDriverBuilder,
    WindowedSerdes,
)
from streams_on_spark.config import EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION, TaskConfig
from streams_on_spark.dsl.emit import StrategyType
from streams_on_spark.state.factory import Stores

S = Serdes.String()
CLOSE = EmitStrategy.on_window_close()
INTERVAL = EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION
GAP_MS = 5 * 60 * 1000  # KStreamSessionWindowAggregateProcessorTest's GAP_MS


def _grouped(builder: StreamsBuilder):
    return builder.stream("in", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))


def _key_serde(windows):
    if isinstance(windows, SessionWindows):
        return WindowedSerdes.session_windowed(S)
    return WindowedSerdes.time_windowed(S, getattr(windows, "size_ms", getattr(windows, "time_difference_ms", 0)))


def _topology(windows, strategy=CLOSE, store="store"):
    """``aggregate`` with Kafka's test functions (MockInitializer.STRING_INIT, MockAggregator.TOSTRING_ADDER);
    ``store`` is a name or a store supplier; ``strategy=None`` leaves the default."""
    builder = StreamsBuilder()
    windowed = _grouped(builder).windowed_by(windows)
    if strategy is not None:
        windowed = windowed.emit_strategy(strategy)
    m = Materialized.as_(store).with_value_serde(S)
    if isinstance(windows, SessionWindows):
        table = windowed.aggregate(lambda: "0", lambda k, v, agg: f"{agg}+{v}", lambda k, a, b: f"{a}|{b}", m)
    else:
        table = windowed.aggregate(lambda: "0", lambda k, v, agg: f"{agg}+{v}", m)
    table.to_stream().to("out", Produced.with_(_key_serde(windows), S))
    return builder.build()


class _Run:
    """A driver over ``_topology(windows)``: ``pipe(key, value, ts[, headers])`` returns what came out."""

    def __init__(self, windows, config=None, wall_clock_ms=0, strategy=CLOSE, store="store"):
        self.driver = (TopologyTestDriverBuilder(_topology(windows, strategy, store))
                       .with_config({"application.id": "emit", **(config or {})})
                       .with_initial_wall_clock_time(wall_clock_ms).build())
        self.input = self.driver.create_input_topic("in", S, S)
        self.output = self.driver.create_output_topic("out", _key_serde(windows), S)

    def pipe(self, key, value, ts, headers=()):
        self.input.pipe_input(TestRecord(key, value, ts, headers=headers))
        return self.read()

    def read(self):
        return [(r.key.key, r.key.window.start, r.key.window.end, r.value, r.timestamp)
                for r in self.output.read_records_to_list()]

    def pipe_all(self, records):
        out = []
        for record in records:
            out += self.pipe(*record)
        return out


@pytest.fixture
def run():
    runs: list[_Run] = []

    def make(*args, **kwargs):
        runs.append(_Run(*args, **kwargs))
        return runs[-1]
    yield make
    for r in runs:
        r.driver.close()


# ---------------------------------------------------------------------------------------------------------- API


def test_strategies_and_their_types():
    """EmitStrategy.onWindowClose()/onWindowUpdate() and StrategyType (codes 0 and 1), exported from the root."""
    import streams_on_spark
    assert "EmitStrategy" in streams_on_spark.__all__
    assert EmitStrategy.on_window_close().type() is StrategyType.ON_WINDOW_CLOSE
    assert EmitStrategy.on_window_update().type() is EmitStrategy.StrategyType.ON_WINDOW_UPDATE
    assert EmitStrategy.on_window_close() == CLOSE and EmitStrategy.on_window_update() != CLOSE
    assert [t.value for t in StrategyType] == [0, 1]


@pytest.mark.parametrize("windows, kind", [
    (TimeWindows.of_size_with_no_grace(10), TimeWindowedKStream),
    (SlidingWindows.of_time_difference_with_no_grace(10), TimeWindowedKStream),
    (SessionWindows.of_inactivity_gap_with_no_grace(10), SessionWindowedKStream),
], ids=["time", "sliding", "session"])
def test_emit_strategy_returns_the_same_windowed_stream(windows, kind):
    """Time/Sliding/SessionWindowedKStreamImpl.emitStrategy: set the strategy and return this."""
    windowed = _grouped(StreamsBuilder()).windowed_by(windows)
    assert isinstance(windowed, kind)
    assert windowed.emit_strategy(CLOSE) is windowed


def test_cogrouped_windowed_streams_have_no_emit_strategy():
    """Kafka's Time/Sliding/SessionWindowedCogroupedKStream have no emitStrategy (always onWindowUpdate)."""
    builder = StreamsBuilder()
    cogrouped = _grouped(builder).cogroup(lambda k, v, agg: agg + v)
    for windows in (TimeWindows.of_size_with_no_grace(10), SlidingWindows.of_time_difference_with_no_grace(10),
                    SessionWindows.of_inactivity_gap_with_no_grace(10)):
        assert not hasattr(cogrouped.windowed_by(windows), "emit_strategy")


@pytest.mark.parametrize("bad, message", [
    (None, "emit_strategy can't be null"),
    ("close", "emit_strategy must be an EmitStrategy, got 'close'"),
    (StrategyType.ON_WINDOW_CLOSE, "emit_strategy must be an EmitStrategy, got StrategyType"),
])
def test_bad_emit_strategy_is_a_value_error(bad, message):
    """Bad DSL arguments fail at the call with a typed ValueError (Kafka: NullPointerException/compile error)."""
    with pytest.raises(ValueError, match=message):
        _grouped(StreamsBuilder()).windowed_by(TimeWindows.of_size_with_no_grace(10)).emit_strategy(bad)
    with pytest.raises(ValueError, match="strategy_type must be a StrategyType"):
        EmitStrategy("close")  # type: ignore[arg-type]


@pytest.mark.parametrize("windows", [TimeWindows.of_size_and_grace(10, 5), SlidingWindows.of_time_difference_and_grace(
    10, 5), SessionWindows.of_inactivity_gap_and_grace(10, 5)], ids=["time", "sliding", "session"])
def test_describe_does_not_change_with_the_emit_strategy(windows):
    """Kafka names nodes and stores the same for both strategies (only the store supplier differs)."""
    def described(strategy, store=None):
        builder = StreamsBuilder()
        windowed = _grouped(builder).windowed_by(windows).emit_strategy(strategy)
        (windowed.count() if store is None else windowed.count(Materialized.as_(store))).to_stream().to("out")
        return str(builder.build().describe())
    update = EmitStrategy.on_window_update()
    assert described(CLOSE) == described(update)
    assert described(CLOSE, "counts") == described(update, "counts")


def test_emit_interval_config():
    """InternalConfig.getLong(EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION, 1000): numbers, numeric strings."""
    from streams_on_spark.config import internal_long

    def interval(config: dict) -> int:
        return internal_long(TaskConfig.from_config({"application.id": "a", **config}).app_configs, INTERVAL, 1000)
    assert interval({}) == 1000
    assert interval({INTERVAL: "250"}) == 250
    assert interval({INTERVAL: 5.0}) == 5
    assert interval({INTERVAL: [1]}) == 1000  # warned
    with pytest.raises(ValueError, match="expected a long"):
        interval({INTERVAL: "soon"})


def test_the_driver_does_not_throttle(run):
    """TopologyTestDriver: configCopy.putIfAbsent(EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION, 0L)."""
    r = run(TimeWindows.of_size_with_no_grace(10))      # the mock wall clock never moves
    assert r.pipe_all([("a", "1", 0), ("a", "2", 10), ("a", "3", 20)]) == [("a", 0, 10, "0+1", 0),
                                                                         ("a", 10, 20, "0+2", 10)]


# ---------------------------------------------------------------------------------------------------------- time


def test_time_windows_emit_each_closed_window_once_in_fetch_all_order(run):
    """KStreamWindowAggregateTest#testJoin (emit final): closed windows by start, key, stored timestamp."""
    r = run(TimeWindows.of_size_and_grace(10, 5).advance_by(5))
    assert r.pipe_all([("A", "1", 0), ("B", "2", 1), ("C", "3", 2), ("D", "4", 3), ("A", "1", 9)]) == []
    assert r.pipe("A", "1", 15) == [("A", 0, 10, "0+1+1", 9), ("B", 0, 10, "0+2", 1), ("C", 0, 10, "0+3", 2),
                                    ("D", 0, 10, "0+4", 3)]
    assert r.pipe_all([("A", "1", 10), ("B", "2", 11), ("D", "4", 12), ("B", "2", 13), ("C", "3", 14)]) == []
    assert r.pipe("A", "1", 20) == [("A", 5, 15, "0+1+1", 10), ("B", 5, 15, "0+2+2", 13), ("C", 5, 15, "0+3", 14),
                                    ("D", 5, 15, "0+4", 12)]


def test_time_windows_need_the_close_time_to_cover_a_new_window(run):
    """KStreamWindowAggregateTest#shouldNotEmitFinalIfNotProgressEnough: shouldRangeFetch skips same windows."""
    r = run(TimeWindows.of_size_and_grace(10, 5).advance_by(5))
    assert r.pipe_all([("A", "1", 0), ("B", "2", 5), ("C", "3", 15)]) == [("A", 0, 10, "0+1", 0),
                                                                       ("B", 0, 10, "0+2", 5)]
    assert r.pipe("D", "4", 15) == []
    assert r.pipe("E", "5", 19) == []
    assert r.pipe("F", "6", 20) == [("B", 5, 15, "0+2", 5)]


def test_out_of_order_records_count_until_close_and_late_ones_are_dropped(run):
    """KStreamWindowAggregate: windows with end > close time take records; later ones drop; one result each."""
    r = run(TimeWindows.of_size_and_grace(10, 5))
    out = r.pipe_all([("a", "1", 1), ("a", "2", 12), ("a", "3", 8), ("a", "4", 14)])
    assert out == []                                   # [0,10) closes at stream time 15
    assert r.pipe("a", "5", 15) == [("a", 0, 10, "0+1+3", 8)]
    assert r.pipe("a", "6", 9) == []                   # late for [0,10): dropped, nothing emitted again
    assert r.driver.metrics()["dropped-records-total"] == 1
    out = r.pipe_all([("a", "7", 26), ("a", "8", 30), ("a", "9", 36), ("a", "10", 46)])
    assert out == [("a", 10, 20, "0+2+4+5", 15), ("a", 20, 30, "0+7", 26), ("a", 30, 40, "0+8+9", 36)]


@pytest.mark.parametrize("cached", [False, True], ids=["uncached", "cached"])
def test_a_window_past_retention_before_any_record_closes_it_is_emitted_only_from_the_cache(run, cached):
    """Time-ordered store getActualFrom: fetchAll sees starts >= stream time - retention, nothing older. Kafka's
    WindowStoreMaterializer keeps the record cache of an emit-final time-window store, and the cache merges the
    windows it still holds into reads without that check, so with the cache on (the default) the window is still
    emitted (Kafka's driver does the same: tests/data/kafka-reference/emit-on-window-close-tumbling.json)."""
    r = run(TimeWindows.of_size_with_no_grace(10), config=None if cached else {"statestore.cache.max.bytes": 0})
    assert r.pipe_all([("a", "1", 5), ("a", "2", 10)]) == [("a", 0, 10, "0+1", 5)]   # start 0 >= 10 - 10
    # [10,20) closed, but its start is before 40 - 10: gone from the store
    assert r.pipe("a", "3", 40) == ([("a", 10, 20, "0+2", 10)] if cached else [])


def test_emitted_records_carry_the_headers_of_the_record_that_closed_them(run):
    """fetchAndEmit: record.withKey(window).withValue(Change(agg, null)).withTimestamp(stored).withHeaders(record's)."""
    r = run(TimeWindows.of_size_with_no_grace(10))
    r.input.pipe_input(TestRecord("a", "1", 3, headers={"h": b"first"}))
    r.input.pipe_input(TestRecord("a", "2", 10, headers={"h": b"closing"}))
    [record] = r.output.read_records_to_list()
    assert (record.key.window.start, record.value, record.timestamp) == (0, "0+1", 3)
    assert record.headers == (("h", b"closing"),)


def test_the_wall_clock_throttles_emission(run):
    """KStreamWindowAggregateTest#shouldEmitWithLargeInterval: shouldEmitFinal throttles on the wall clock."""
    one_day = Stores.in_memory_window_store("store", 86_400_000, 10, False)   # the test's store (1 day retention)
    r = run(TimeWindows.of_size_and_grace(10, 5).advance_by(5), config={INTERVAL: 1000}, store=one_day)
    assert r.pipe_all([("A", "1", 0), ("A", "1", 5), ("B", "2", 10), ("C", "3", 15)]) == []
    r.driver.advance_wall_clock_time(10_000)
    assert r.read() == []                              # emission happens on a record, not on the clock
    assert r.pipe("D", "4", 20) == [("A", 0, 10, "0+1+1", 5), ("A", 5, 15, "0+1", 5), ("B", 5, 15, "0+2", 10)]
    r.driver.advance_wall_clock_time(100)
    assert r.pipe("E", "5", 40) == []                  # 10_100 < next emit time 11_000
    r.driver.advance_wall_clock_time(900)
    assert [w[:3] for w in r.pipe("F", "6", 40)] == [("B", 10, 20), ("C", 10, 20), ("C", 15, 25), ("D", 15, 25),
                                                      ("D", 20, 30)]


@pytest.mark.parametrize("windows, emits", [
    (TimeWindows.of_size_with_no_grace(10), True),
    (SlidingWindows.of_time_difference_with_no_grace(10), False),
    (SessionWindows.of_inactivity_gap_with_no_grace(10), True),
], ids=["time", "sliding", "session"])
def test_a_late_record_triggers_emission_except_for_sliding_windows(run, windows, emits):
    """maybeForwardFinalResult runs after a dropped late record, except in KStreamSlidingWindowAggregate."""
    r = run(windows, config={INTERVAL: 1000})
    assert r.pipe_all([("a", "1", 10), ("b", "2", 25)]) == []   # the first record set the next emit time to 1000
    r.driver.advance_wall_clock_time(1000)
    out = r.pipe("c", "3", 1)                                   # late: dropped
    assert r.driver.metrics()["dropped-records-total"] == 1
    assert [k for k, *_ in out] == (["a"] if emits else [])


# ---------------------------------------------------------------------------------------------------------- sliding


def test_sliding_windows_emit_final_results(run):
    """KStreamSlidingWindowAggregateTest#testAggregateSmallInput (emit final): upper bound close - diff - 1."""
    r = run(SlidingWindows.of_time_difference_and_grace(10, 5))
    assert r.pipe_all([("A", str(n), ts) for n, ts in enumerate((10, 10, 14, 15), start=1)]) == []
    assert r.pipe("A", "5", 20) == [("A", 0, 10, "0+1+2", 10), ("A", 4, 14, "0+1+2+3", 14)]
    assert r.pipe("A", "6", 22) == [("A", 5, 15, "0+1+2+3+4", 15)]
    assert r.pipe("A", "7", 30) == [("A", 10, 20, "0+1+2+3+4+5", 20), ("A", 11, 21, "0+3+4+5", 20),
                                    ("A", 12, 22, "0+3+4+5+6", 22)]
    assert r.pipe("A", "8", 31) == [("A", 15, 25, "0+4+5+6", 22)]


# ---------------------------------------------------------------------------------------------------------- session


def test_session_windows_emit_each_closed_session(run):
    """KStreamSessionWindowAggregateProcessorTest#shouldHandleMultipleSessionsAndMerging (emit final)."""
    r = run(SessionWindows.of_inactivity_gap_with_no_grace(GAP_MS))
    out = r.pipe_all([("a", "1", 0), ("b", "1", 0), ("c", "1", 0), ("d", "1", 0), ("d", "2", GAP_MS // 2),
                      ("a", "2", GAP_MS + 1), ("b", "2", GAP_MS + 1)])
    assert out == [("a", 0, 0, "0+1", 0), ("b", 0, 0, "0+1", 0), ("c", 0, 0, "0+1", 0)]
    assert r.pipe("a", "3", GAP_MS + 1 + GAP_MS // 2) == [("d", 0, GAP_MS // 2, "0|0+1+2", GAP_MS // 2)]
    assert r.pipe("c", "3", GAP_MS + 1 + GAP_MS // 2) == []


def test_sessions_come_out_in_the_time_ordered_stores_order(run):
    """TimeFirstSessionKeySchema order (end, start, key): b[0,5] before a[5,5]."""
    r = run(SessionWindows.of_inactivity_gap_with_no_grace(10))
    out = r.pipe_all([("b", "1", 0), ("b", "2", 5), ("a", "1", 5), ("z", "z", 100)])
    assert out == [("b", 0, 5, "0|0+1+2", 5), ("a", 5, 5, "0+1", 5)]


def test_merged_sessions_are_emitted_merged_and_once(run):
    """KStreamSessionWindowAggregate: merges are updates (not forwarded); the merged session comes out once."""
    r = run(SessionWindows.of_inactivity_gap_and_grace(10, 5))
    assert r.pipe_all([("k", "1", 0), ("k", "2", 5), ("k", "3", 12), ("k", "4", 27)]) == []
    assert r.pipe("k", "5", 28) == [("k", 0, 12, "0|0|0+1+2+3", 12)]
    assert r.pipe("k", "6", 60) == [("k", 27, 28, "0|0+4+5", 28)]


def test_on_window_update_is_the_default(run):
    """EmitStrategy.onWindowUpdate() (the default) forwards every update."""
    r = run(TimeWindows.of_size_with_no_grace(10), strategy=None)
    assert r.pipe_all([("a", "1", 1), ("a", "2", 2)]) == [("a", 0, 10, "0+1", 1), ("a", 0, 10, "0+1+2", 2)]


def test_unknown_interval_type_is_warned(caplog):
    """InternalConfig.getLong: a non-numeric, non-string value logs a warning and falls back to the default."""
    from streams_on_spark.config import internal_long
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.config"):
        assert internal_long({INTERVAL: object()}, INTERVAL, 1000) == 1000
    assert "Please specify a numeric value" in caplog.text

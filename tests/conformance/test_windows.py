"""Windowed aggregations and suppression with out-of-order and late records, on every engine and partition count.

Rules checked (Kafka's ``KStreamWindowAggregate`` / ``KStreamSessionWindowAggregate`` / ``KTableSuppressProcessor``):
- time windows: a record updates window [start, end) only if ``end > observed stream time - grace``; otherwise it
  is dropped and counted in ``dropped-records-total``. Stream time is per task.
- session windows: sessions within the inactivity gap merge; a merged session is dropped if
  ``end < stream time - grace - gap``; merged-away sessions are forwarded as tombstones; timestamp = session end.
- suppress(until_window_closes): one final result per window, once stream time reaches ``end + grace``
  (``end + gap + grace`` for sessions: Kafka's ``GraphGraceSearchUtil``).
- emit_strategy(on_window_close()) (KIP-825, ``AbstractKStreamTimeWindowAggregateProcessor``): no updates; each
  window once, when the close time passes its end, kept across batches in processor metadata.
- record cache (``CachingWindowStore``/``CachingSessionStore``, on by default): the driver commits after every
  record, so the updates one record makes to a window leave as one.
"""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    EmitStrategy,
    Grouped,
    KeyValue,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TestRecord,
)
from streams_on_spark.partitioner import partition_for_key
from streams_on_spark.dsl.suppressed import BufferConfig, Suppressed
from streams_on_spark.dsl.windows import SessionWindows, SlidingWindows, TimeWindows
from streams_on_spark.processor.api import Processor, ProcessorContext, Record
from streams_on_spark.serde.windowed import WindowedSerdes

S, L = Serdes.String(), Serdes.Long()
TIME_KEYS = WindowedSerdes.time_windowed(S, 10)
SESSION_KEYS = WindowedSerdes.session_windowed(S)


def windowed_count(suppress: bool = False):
    builder = StreamsBuilder()
    table = (builder.stream("events", Consumed.with_(S, S))
             .group_by_key(Grouped.with_(S, S))
             .windowed_by(TimeWindows.of_size_and_grace(10, 5))
             .count(Materialized.as_("per-window")))
    if suppress:
        table = table.suppress(Suppressed.until_window_closes(BufferConfig.unbounded()).with_name("final"))
    table.to_stream().to("counts", Produced.with_(TIME_KEYS, L))
    return builder.build()


def results(driver, serde=TIME_KEYS):
    return [((r.key.key, r.key.window.start, r.key.window.end), r.value, r.timestamp, r.partition)
            for r in driver.create_output_topic("counts", serde, L).read_records_to_list()]


def test_tumbling_windows_accept_within_grace_and_drop_after(make_driver, partitions, engine):
    driver = make_driver(windowed_count(), "events", "counts")
    events = driver.create_input_topic("events", S, S)
    events.pipe_record_list([TestRecord("a", "x", ts) for ts in (1, 5, 12, 3, 20, 8, 18)])
    home = partition_for_key(b"a", partitions)
    assert results(driver) == [
        (("a", 0, 10), 1, 1, home),
        (("a", 0, 10), 2, 5, home),
        (("a", 10, 20), 1, 12, home),
        (("a", 0, 10), 3, 5, home),      # ts 3 is out of order but [0,10) closes only at stream time 15
        (("a", 20, 30), 1, 20, home),
        # ts 8: stream time 20, close time 15 >= end 10 -> dropped
        (("a", 10, 20), 2, 18, home),    # [10,20) still open: 20 > 15
    ]
    assert driver.metrics()["dropped-records-total"] == 1
    store = driver.get_window_store("per-window", home)
    # retention = size + grace = 15: at stream time 20 windows starting before 20 - 15 + 1 = 6 are gone from the
    # store; Kafka's caching store merges its (clean) cache entries into reads without that check
    # (TimeWindowedKStreamImplTest: "with cache returns all records (expired from underneath as well)"), and a
    # Spark task's cache lives one batch
    assert list(store.fetch("a", 0, 20)) == ([(0, 3)] if engine == "local" else []) + [(10, 2), (20, 1)]


def test_hopping_windows_update_every_window_containing_the_record(make_driver, partitions):
    """Size 10, advance 5, no grace: a record updates both windows containing it unless the window's end is at or
    before stream time (each expired window drops the record once, and counts once)."""
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .windowed_by(TimeWindows.of_size_with_no_grace(10).advance_by(5))
     .count().to_stream().to("counts", Produced.with_(TIME_KEYS, L)))
    driver = make_driver(builder.build(), "events", "counts")
    driver.create_input_topic("events", S, S).pipe_record_list(
        [TestRecord("k", "v", ts) for ts in (7, 12, 30, 27, 22)])
    assert [(w, v, ts) for w, v, ts, _ in results(driver)] == [
        (("k", 0, 10), 1, 7), (("k", 5, 15), 1, 7),
        (("k", 5, 15), 2, 12), (("k", 10, 20), 1, 12),
        (("k", 25, 35), 1, 30), (("k", 30, 40), 1, 30),
        (("k", 25, 35), 2, 30),          # 27: [20,30) has closed (30 <= 30), [25,35) is open
        # 22: [15,25) and [20,30) have both closed
    ]
    assert driver.metrics()["dropped-records-total"] == 3


def test_windows_close_per_task_stream_time(make_driver, partitions):
    """Partition of "x" advances to 100; the partition of "y" has not: its window is still open there.

    With one partition both keys share one task, so the same record is late and dropped.
    """
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .windowed_by(TimeWindows.of_size_with_no_grace(10)).count(Materialized.as_("w"))
     .to_stream().to("counts", Produced.with_(TIME_KEYS, L)))
    driver = make_driver(builder.build(), "events", "counts")
    x_home, y_home = (partition_for_key(k, partitions) for k in (b"x", b"y"))
    assert partitions == 1 or x_home != y_home
    driver.create_input_topic("events", S, S).pipe_record_list(
        [TestRecord("y", "v", 1), TestRecord("x", "v", 100), TestRecord("y", "v", 5)])
    y_windows = [(v, p) for (key, *_), v, _, p in results(driver) if key == "y"]
    if partitions == 1:
        assert y_windows == [(1, 0)]
        assert driver.metrics()["dropped-records-total"] == 1
    else:
        assert y_windows == [(1, y_home), (2, y_home)]
        assert driver.metrics()["dropped-records-total"] == 0


def test_suppress_emits_one_final_result_per_window(make_driver, partitions):
    driver = make_driver(windowed_count(suppress=True), "events", "counts")
    events = driver.create_input_topic("events", S, S)
    events.pipe_record_list([TestRecord("a", "x", ts) for ts in (1, 5, 12, 3, 14)])
    assert results(driver) == []                     # stream time 14 < 10 + 5: nothing closed yet
    events.pipe_record_list([TestRecord("a", "x", 15)])
    home = partition_for_key(b"a", partitions)
    assert results(driver) == [(("a", 0, 10), 3, 5, home)]   # once, with the final count
    events.pipe_record_list([TestRecord("a", "x", 24), TestRecord("a", "x", 40)])
    assert results(driver) == [(("a", 10, 20), 3, 15, home), (("a", 20, 30), 1, 24, home)]


def test_suppress_until_time_limit_rate_limits_each_key(make_driver, partitions):
    """until_time_limit(10): a key's latest update is emitted once stream time is 10 past its buffering."""
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .count(Materialized.as_("plain"))
     .suppress(Suppressed.until_time_limit(10, BufferConfig.unbounded()))
     .to_stream().to("limited", Produced.with_(S, L)))
    driver = make_driver(builder.build(), "events", "limited")
    driver.create_input_topic("events", S, S).pipe_record_list(
        [TestRecord("a", "v", ts) for ts in (0, 3, 5, 12, 30)])
    records = driver.create_output_topic("limited", S, L).read_records_to_list()
    # "a" is buffered at 0 and keeps that buffer time while 3, 5 and 12 replace its value (Kafka's change
    # buffer); at stream time 12 >= 0 + 10 the latest update (count 4, ts 12) is emitted; 30 starts a new wait
    assert [(r.key, r.value, r.timestamp) for r in records] == [("a", 4, 12)]


def test_session_windows_merge_and_expire(make_driver, partitions, engine):
    """Gap 10, grace 30, so the store keeps sessions ending at or after stream time - 40 + 1 (Kafka's default
    retention gap + grace); a record too late for every session it could join is dropped."""
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .windowed_by(SessionWindows.of_inactivity_gap_and_grace(10, 30))
     .count(Materialized.as_("sessions"))
     .to_stream().to("counts", Produced.with_(SESSION_KEYS, L)))
    driver = make_driver(builder.build(), "events", "counts")
    driver.create_input_topic("events", S, S).pipe_record_list(
        [TestRecord("a", "v", ts) for ts in (0, 5, 30, 12, 50, 70, 14)])
    home = partition_for_key(b"a", partitions)
    assert results(driver, SESSION_KEYS) == [
        (("a", 0, 0), 1, 0, home),
        (("a", 0, 0), None, 0, home),       # merged away: a tombstone at the old session's end
        (("a", 0, 5), 2, 5, home),
        (("a", 30, 30), 1, 30, home),
        (("a", 0, 5), None, 5, home),       # ts 12 is within the gap of [0,5] and 12 >= 30 - 30 - 10
        (("a", 0, 12), 3, 12, home),
        (("a", 50, 50), 1, 50, home),
        (("a", 70, 70), 1, 70, home),
        # ts 14: [0,12] has expired from the store (12 < 70 - 40 + 1) and [14,14] closes at 70 - 30 - 10 = 30
    ]
    assert driver.metrics()["dropped-records-total"] == 1
    sessions = driver.get_session_store("sessions", home)
    # [0,12] and [30,30] expired from the store; the in-process task's cache still holds them (see the
    # tumbling-window test)
    assert [(kv.key.window.start, kv.key.window.end, kv.value) for kv in sessions.fetch("a")] == (
        [(0, 12, 3), (30, 30, 1)] if engine == "local" else []) + [(50, 50, 1), (70, 70, 1)]


def test_sliding_windows_with_out_of_order_and_late_records(make_driver, partitions):
    """Sliding windows [t - 10, t] exist where records are (Kafka's KStreamSlidingWindowAggregate): a record
    creates its left window, the previous record's right window and its own right window; ts 12 arrives when
    stream time is 30 and even its own window [12,22] ends before 30 - 5, so it is dropped."""
    from streams_on_spark import SlidingWindows
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .windowed_by(SlidingWindows.of_time_difference_and_grace(10, 5)).count(Materialized.as_("sliding"))
     .to_stream().to("counts", Produced.with_(TIME_KEYS, L)))
    driver = make_driver(builder.build(), "events", "counts")
    driver.create_input_topic("events", S, S).pipe_record_list([TestRecord("a", "v", ts) for ts in (10, 14, 30, 12, 26)])
    home = partition_for_key(b"a", partitions)
    assert [(w[1], w[2], v, ts) for w, v, ts, p in results(driver) if p == home] == [
        (0, 10, 1, 10),
        (11, 21, 1, 14),   # the right window of 10, created by 14
        (4, 14, 2, 14),
        (20, 30, 1, 30),
        (20, 30, 2, 30),   # 26 falls into [20,30]
        (16, 26, 1, 26),
        (27, 37, 1, 30),   # 26's right window holds 30
    ]
    assert driver.metrics()["dropped-records-total"] == 1


def test_suppress_on_session_windows_waits_for_grace_plus_gap(make_driver, partitions):
    """GraphGraceSearchUtil.extractGracePeriod: a session window closes at end + inactivity gap + grace."""
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .windowed_by(SessionWindows.of_inactivity_gap_and_grace(10, 5)).count()
     .suppress(Suppressed.until_window_closes(BufferConfig.unbounded()))
     .to_stream().to("counts", Produced.with_(SESSION_KEYS, L)))
    driver = make_driver(builder.build(), "events", "counts")
    events = driver.create_input_topic("events", S, S)
    events.pipe_record_list([TestRecord("a", "v", ts) for ts in (0, 9, 20)])
    assert results(driver, SESSION_KEYS) == []       # [0,9] closes at 9 + 10 + 5 = 24, not at 9 + 5
    events.pipe_record_list([TestRecord("a", "v", 24)])
    assert results(driver, SESSION_KEYS) == [(("a", 0, 9), 2, 9, partition_for_key(b"a", partitions))]


@pytest.mark.parametrize("windows, expected", [
    (TimeWindows.of_size_with_no_grace(10), ["+1", "+1-0+1"]),
    (SlidingWindows.of_time_difference_with_no_grace(5), ["+1", "+1-0+1"]),
    (SessionWindows.of_inactivity_gap_with_no_grace(5), ["+1", "+1+1"]),
], ids=["time", "sliding", "session"])
@pytest.mark.parametrize("cached", [False, True], ids=["uncached", "cached"])
def test_new_window_sends_the_initializer_as_old_value(make_driver, partitions, windows, expected, cached):
    """Uncached, KStreamWindowAggregate/KStreamSlidingWindowAggregate send initializer() as a new window's old
    value and KStreamSessionWindowAggregate sends null for a new session; cached (the default), the old value is
    what the store held at the last flush (CachingWindowStore.putAndMaybeForward): null for every new window."""
    if cached:
        expected = ["+1", "+1+1"]
    materialized = Materialized.with_(S, L) if cached else Materialized.with_(S, L).with_caching_disabled()
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .windowed_by(windows).count(materialized)
     .group_by(lambda windowed, n: KeyValue(windowed.key, str(n)), Grouped.with_(S, S))
     .aggregate(lambda: "", lambda k, v, agg: f"{agg}+{v}", lambda k, v, agg: f"{agg}-{v}", Materialized.with_(S, S))
     .to_stream().to("trace", Produced.with_(S, S)))
    driver = make_driver(builder.build(), "events", "trace")
    driver.create_input_topic("events", S, S).pipe_record_list([TestRecord("a", "v", ts) for ts in (1, 12)])
    assert [r.value for r in driver.create_output_topic("trace", S, S).read_records_to_list()] == expected


def test_emit_on_window_close_forwards_each_window_once(make_driver, partitions):
    """KIP-825 ON_WINDOW_CLOSE: each window once, stored timestamp, closing record's headers, across batches."""
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
     .windowed_by(TimeWindows.of_size_and_grace(10, 5)).emit_strategy(EmitStrategy.on_window_close())
     .count(Materialized.as_("final-counts")).to_stream().to("counts", Produced.with_(TIME_KEYS, L)))
    driver = make_driver(builder.build(), "events", "counts")
    events = driver.create_input_topic("events", S, S)
    home = partition_for_key(b"a", partitions)
    events.pipe_record_list([TestRecord("a", "x", ts) for ts in (1, 5, 12, 3, 14)])
    assert results(driver) == []                     # stream time 14: [0,10) closes at 10 + 5
    events.pipe_record_list([TestRecord("a", "x", 15, headers={"closer": b"15"}), TestRecord("a", "x", 8)])
    [final] = driver.create_output_topic("counts", TIME_KEYS, L).read_records_to_list()
    assert ((final.key.key, final.key.window.start), final.value, final.timestamp, final.partition) == (
        ("a", 0), 3, 5, home)
    assert final.headers == (("closer", b"15"),)
    events.pipe_record_list([TestRecord("a", "x", ts) for ts in (26, 36)])
    assert results(driver) == [(("a", 10, 20), 3, 15, home), (("a", 20, 30), 1, 26, home)]
    assert driver.metrics()["dropped-records-total"] == 1   # ts 8, after [0,10) closed


CACHING = {"default": ({}, True), "disabled": ({}, False), "zero-bytes": ({"statestore.cache.max.bytes": 0}, True)}


def _materialized(caching: str) -> Materialized:
    return Materialized.with_(S, L) if CACHING[caching][1] else Materialized.with_(S, L).with_caching_disabled()


def _updates(driver, serde) -> list[tuple]:
    return [((r.key.window.start, r.key.window.end), r.value, r.timestamp, r.headers)
            for r in driver.create_output_topic("counts", serde, L).read_records_to_list()]


T = (("trace", b"t"),)


@pytest.mark.parametrize("caching", list(CACHING))
@pytest.mark.parametrize("windows, serde, cached, uncached", [
    (TimeWindows.of_size_with_no_grace(10), TIME_KEYS,
     [((20, 30), 3, 20, T), ((20, 30), 4, 21, ())],
     [((20, 30), 1, 20, T), ((20, 30), 2, 20, T), ((20, 30), 3, 20, T), ((20, 30), 4, 21, ())]),
    (SlidingWindows.of_time_difference_with_no_grace(10), TIME_KEYS,
     [((10, 20), 3, 20, T), ((21, 31), 1, 21, ()), ((11, 21), 4, 21, ())],
     [((10, 20), 1, 20, T), ((10, 20), 2, 20, T), ((10, 20), 3, 20, T), ((21, 31), 1, 21, ()),
      ((11, 21), 4, 21, ())]),
    (SessionWindows.of_inactivity_gap_with_no_grace(10), SESSION_KEYS,
     [((20, 20), 3, 20, T), ((20, 20), None, 20, ()), ((20, 21), 4, 21, ())],
     [((20, 20), 1, 20, ()), ((20, 20), 2, 20, ()), ((20, 20), 3, 20, ()), ((20, 20), None, 20, ()),
      ((20, 21), 4, 21, ())]),
], ids=["time", "sliding", "session"])
def test_one_record_updating_a_window_several_times_leaves_as_one_update_when_cached(
        make_driver, partitions, caching, windows, serde, cached, uncached):
    """Kafka's driver commits after every record, so a cached window or session store (the default) forwards the
    last of the updates one input record makes to a window, stamped and with headers as its flush listener says
    (TimestampedCacheFlushListener, SessionCacheFlushListener); with_caching_disabled() or
    statestore.cache.max.bytes=0 forward every update (uncached sessions without headers)."""
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).flat_map_values(str.split).group_by_key(Grouped.with_(S, S))
     .windowed_by(windows).count(_materialized(caching)).to_stream().to("counts", Produced.with_(serde, L)))
    driver = make_driver(builder.build(), "events", "counts", config=CACHING[caching][0])
    events = driver.create_input_topic("events", S, S)
    events.pipe_input(TestRecord("a", "x y z", 20, headers={"trace": b"t"}))   # no repartition: one task, one commit
    events.pipe_input(TestRecord("a", "w", 21))
    expected = cached if caching == "default" else uncached
    assert _updates(driver, serde) == expected


class SpreadTimestamps(Processor):
    """Forwards one record per word of the value, stamped with the word (a number), keeping the headers."""

    def init(self, context: ProcessorContext) -> None:
        self.context = context

    def process(self, record: Record) -> None:
        for word in record.value.split():
            self.context.forward(Record(record.key, word, int(word), record.headers))


@pytest.mark.parametrize("caching", list(CACHING))
def test_sessions_merged_within_one_record_leave_as_the_merged_session_when_cached(make_driver, partitions, caching):
    """CachingSessionStore: the sessions one record creates and merges away never reach the store (new and old
    null: not forwarded), so one record bridging [10,10] and [14,14] forwards only [10,14]; uncached, every session
    and tombstone (KStreamSessionWindowAggregate's maybeForwardUpdate)."""
    builder = StreamsBuilder()
    (builder.stream("events", Consumed.with_(S, S)).process(SpreadTimestamps).mark_as_partitioned()
     .group_by_key(Grouped.with_(S, S)).windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(5))
     .count(_materialized(caching)).to_stream().to("counts", Produced.with_(SESSION_KEYS, L)))
    driver = make_driver(builder.build(), "events", "counts", config=CACHING[caching][0])
    driver.create_input_topic("events", S, S).pipe_input(TestRecord("a", "10 14 12", 14, headers={"trace": b"t"}))
    if caching == "default":
        assert _updates(driver, SESSION_KEYS) == [((10, 14), 3, 14, T)]
    else:
        assert _updates(driver, SESSION_KEYS) == [((10, 10), 1, 10, ()), ((10, 10), None, 10, ()),
                                                  ((10, 14), 2, 14, ()), ((10, 14), None, 14, ()),
                                                  ((10, 14), 3, 14, ())]

"""When left/outer stream-stream joins emit their non-joined records (Kafka's ``emitNonJoinedOuterRecords``).

The outer-join store is scanned at most once per ``__emit.interval.ms.kstreams.outer.join.spurious.results.fix__`` of
wall-clock time (``TopologyTestDriver``'s default 0 unless a test sets it; ``KafkaStreams``' 1000), and after a scan
the join's earliest time is the last record the scan visited, even one it emitted. The goldens
``outer-join-emit-throttle-*`` and ``outer-join-min-time-*`` pin the same against Kafka's own driver.
"""
from __future__ import annotations

import re
from typing import Any

import pytest

from streams_on_spark import Consumed, JoinWindows, Produced, Serdes, StreamsBuilder, TopologyTestDriver
from streams_on_spark.config import EMIT_INTERVAL_MS_KSTREAMS_OUTER_JOIN_SPURIOUS_RESULTS_FIX as INTERVAL
from streams_on_spark.dsl.params import StreamJoined
from streams_on_spark.errors import StreamsException

S = Serdes.String()
WALL = 10_000


def _builder(windows: JoinWindows, kind: str = "left") -> StreamsBuilder:
    """``left`` left/outer-joined with ``right`` into ``joined``, a missing side rendered as "null"."""
    builder = StreamsBuilder()
    left = builder.stream("left", Consumed.with_(S, S))
    right = builder.stream("right", Consumed.with_(S, S))
    join = left.left_join if kind == "left" else left.outer_join
    join(right, lambda l, r: f"{l}+{r}" if r is not None else f"{l}+null", windows,
         StreamJoined.with_(S, S, S)).to("joined", Produced.with_(S, S))
    return builder


class _Join:
    """A driver over :func:`_builder`'s topology: ``left``/``right`` pipe one record, returning what was joined."""

    def __init__(self, windows: JoinWindows, interval: Any = None, kind: str = "left") -> None:
        config = {} if interval is None else {INTERVAL: interval}
        self.driver = TopologyTestDriver(_builder(windows, kind).build(), config, WALL)
        self._left = self.driver.create_input_topic("left", S, S)
        self._right = self.driver.create_input_topic("right", S, S)
        self._out = self.driver.create_output_topic("joined", S, S)

    def left(self, key: str, ts: int) -> list[str]:
        self._left.pipe_input(key, f"{key}{ts}", ts)
        return self._out.read_values_to_list()

    def right(self, key: str, ts: int) -> list[str]:
        self._right.pipe_input(key, f"{key}{ts}", ts)
        return self._out.read_values_to_list()


TEN = JoinWindows.of_time_difference_with_no_grace(10)


def test_the_first_scan_takes_the_first_interval_and_due_records_wait_for_the_clock_and_a_record():
    """Emit interval 1000: the first record's scan of the empty store (earliest time Long.MAX_VALUE, whose sum with
    the window overflows in Kafka) sets the next scan to a second later; advancing the clock alone emits nothing."""
    join = _Join(TEN, 1000)
    assert join.left("a", 0) == []
    assert join.left("b", 20) == []                          # a0 is due, but the wall clock is still at 10000
    join.driver.advance_wall_clock_time(999)
    assert join.left("c", 21) == []
    join.driver.advance_wall_clock_time(1)                  # exactly a second after the first scan
    assert join._out.read_values_to_list() == []
    assert join.left("d", 22) == ["a0+null"]
    assert join.left("e", 40) == []                          # b20, c21, d22 due: the next scan is at 12000
    join.driver.advance_wall_clock_time(1000)
    assert join.left("f", 41) == ["b20+null", "c21+null", "d22+null"]


def test_a_window_without_after_or_grace_does_not_scan_before_the_first_record_waits():
    """With nothing to add to Long.MAX_VALUE there is no overflow: the first record does not scan, so the first
    interval's scan is the one that finds records due."""
    join = _Join(JoinWindows.of_time_difference_with_no_grace(0), 1000)
    assert join.left("a", 0) == []
    assert join.left("b", 1) == ["a0+null"]
    assert join.left("c", 2) == []                           # b1 due, the next scan at 11000
    join.driver.advance_wall_clock_time(1000)
    assert join.left("d", 3) == ["b1+null", "c2+null"]


@pytest.mark.parametrize("interval", [None, 0, "0"])
def test_the_drivers_interval_is_zero_every_due_record_is_emitted_at_once(interval):
    """TopologyTestDriver puts the interval 0 unless configured (putIfAbsent): no throttle."""
    join = _Join(TEN, interval)
    assert join.left("a", 0) == []
    assert join.left("b", 20) == ["a0+null"]
    assert join.left("c", 40) == ["b20+null"]
    assert join.left("d", 60) == ["c40+null"]


def test_the_interval_is_read_as_kafkas_internal_config():
    """InternalConfig.getLong: a numeric string works as a number; another string fails the processor's init
    (wrapped, as Kafka's task wraps it) with an error naming the key."""
    join = _Join(TEN, "1000")
    assert join.left("a", 0) == []
    assert join.left("b", 20) == []
    with pytest.raises(StreamsException, match="^failed to initialize processor ") as raised:   # Kafka's text
        _Join(TEN, "often")
    assert re.search(f"{INTERVAL}.*expected a long", str(raised.value.__cause__))


def test_after_a_scan_the_earliest_time_is_the_last_record_visited_even_when_emitted():
    """a0 is emitted and the store empties, b20 waits: the earliest time stays 0 (not b20's 20, nor Long.MAX_VALUE),
    so r21 starts a scan (a no-op) that takes the second, and b18 and b20, due at d31, wait for the clock."""
    join = _Join(TEN, 1000)
    assert join.left("a", 0) == []
    join.driver.advance_wall_clock_time(1000)
    assert join.left("b", 20) == ["a0+null"]
    join.driver.advance_wall_clock_time(1000)
    assert join.right("r", 21) == []
    assert join.left("b", 18) == []
    assert join.left("d", 31) == []
    join.driver.advance_wall_clock_time(1000)
    assert join.left("e", 33) == ["b18+null", "b20+null"]


@pytest.mark.parametrize("kind", ["left", "outer"])
def test_the_right_side_scans_counting_its_after_bound_from_the_last_visited_time(kind):
    """Windows 20 before, 5 after: the right side's processor scans once stream time passes the earliest time + 20;
    with the earliest time 0 (a0 visited) it emits b10 at r25, where b10's own time would wait until r31."""
    join = _Join(JoinWindows.of_time_difference_with_no_grace(5).before(20), kind=kind)
    assert join.left("a", 0) == []
    assert join.left("b", 10) == ["a0+null"]
    assert join.right("r", 25) == ["b10+null"]
    assert join.right("s", 31) == []


def test_the_next_time_to_emit_survives_a_restored_task():
    """Kafka's TimeTracker.nextTimeToEmit lives in the task's processor metadata, so each Spark batch (a task rebuilt
    from its snapshot) throttles as one long-lived task does."""
    from streams_on_spark.config import TaskConfig
    from streams_on_spark.records import ConsumerRecord
    from streams_on_spark.processor.api import TaskId
    from streams_on_spark.runtime.task import StreamTask
    internal = _builder(TEN).build().internal_builder
    internal.application_id = "restore"
    config = TaskConfig.from_config({"application.id": "restore", INTERVAL: 1000})
    offsets = iter(range(100))

    def new_task(snapshot: bytes | None = None) -> StreamTask:
        return StreamTask(TaskId(0, 0), internal.subtopologies()[0], internal, config, lambda topic: 1,
                          lambda: WALL, snapshot=snapshot)

    def feed(task: StreamTask, key: str, ts: int) -> list[str]:
        task.add_records("left", 0, [ConsumerRecord("left", 0, next(offsets), ts, key.encode(), key.encode(), ())])
        while task.process_one():
            pass
        task.commit()
        return [S.deserialize("joined", r.value) for r in task.collector.drain()]

    first = new_task()
    assert feed(first, "a", 0) == []
    next_emit = [k for k in first.processor_metadata if "next-time-to-emit" in k]
    assert [first.processor_metadata[k] for k in next_emit] == [WALL + 1000]
    restored = new_task(first.snapshot())
    assert feed(restored, "b", 20) == []                     # a is due, but the restored task is still throttled
    assert [restored.processor_metadata[k] for k in next_emit] == [WALL + 1000]

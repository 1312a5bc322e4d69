"""The suppression buffer behind ``KTable.suppress`` (Kafka's ``InMemoryTimeOrderedKeyValueChangeBuffer``)."""
from __future__ import annotations

from typing import Any

import pytest

from streams_on_spark import Serdes
from streams_on_spark.change import Change
from streams_on_spark.state.suppression_buffer import SuppressionBuffer
from streams_on_spark.state.local import open_local_task_store
from streams_on_spark.state.stores import ValueAndTimestamp

S = Serdes.String()


def _put(buffer: SuppressionBuffer, buffer_time: int, key: str, new: str, old: str | None, ts: int) -> None:
    buffer.put(buffer_time, key, ts, (), Change(new, old))


@pytest.fixture(params=["in-memory", "rocksdb"])
def table(request, tmp_path):
    """The bytes store a suppression buffer keeps its entries in: in memory, or a task's local RocksDB (Spark)."""
    if request.param == "in-memory":
        yield None
        return
    local = open_local_task_store(str(tmp_path / "task"), ["buf"])
    yield local.stores["buf"]
    local.close()


def test_eviction_emits_the_latest_update_at_the_first_buffer_time(table):
    """A re-buffered key keeps its first buffer time (cleanPut) and is evicted as Change(new, old of the latest put)."""
    buffer = SuppressionBuffer("buf", S, S, table)
    _put(buffer, 0, "k", "x", None, 0)
    _put(buffer, 5, "k", "y", "x", 5)
    _put(buffer, 3, "j", "z", None, 3)
    emitted: list[tuple[str, Change, int]] = []
    buffer.evict(0, lambda key, change, ts, headers: emitted.append((key, change, ts)))
    assert emitted == [("k", Change("y", "x"), 5)]
    assert buffer.size() == 1


def test_prior_value_for_buffered_is_the_old_value_at_first_buffering(table):
    """priorValueForBuffered: defined (possibly null) for a buffered key, with an unknown timestamp; else undefined."""
    buffer = SuppressionBuffer("buf", S, S, table)
    _put(buffer, 0, "k", "x", None, 0)
    _put(buffer, 1, "k", "y", "x", 1)
    _put(buffer, 2, "j", "w", "v", 2)
    _put(buffer, 3, "j", "u", "w", 3)
    assert buffer.prior_value_for_buffered("k") == (True, None)
    assert buffer.prior_value_for_buffered("j") == (True, ValueAndTimestamp("v", -1))
    assert buffer.prior_value_for_buffered("absent") == (False, None)


def test_eviction_order_forced_eviction_and_sizes_survive_a_new_instance(table):
    """Oldest buffer time first, then key bytes (negative times first); ``force`` evicts that many more; entry count
    and bytes are kept as it goes and counted again by a new instance over the same entries (a rebuilt task)."""
    buffer = SuppressionBuffer("buf", S, S, table)
    for buffer_time, key in ((7, "b"), (-3, "z"), (7, "a"), (2, "c"), (9, "d")):
        _put(buffer, buffer_time, key, f"{key}-new", None, abs(buffer_time))
    _put(buffer, 100, "c", "c-newer", "c-new", 100)   # keeps buffer time 2
    again = SuppressionBuffer("buf", S, S, buffer.inner)
    assert (again.size(), again.size_bytes()) == (buffer.size(), buffer.size_bytes()) and buffer.size() == 5
    emitted: list[str] = []
    buffer.evict(2, lambda key, change, ts, headers: emitted.append(key))
    assert emitted == ["z", "c"]
    buffer.evict(None, lambda key, change, ts, headers: emitted.append(key), force=2)
    assert emitted == ["z", "c", "a", "b"] and buffer.size() == 1
    again = SuppressionBuffer("buf", S, S, buffer.inner)
    assert (again.size(), again.size_bytes()) == (buffer.size(), buffer.size_bytes())
    assert buffer.prior_value_for_buffered("a") == (False, None)


@pytest.mark.parametrize("cached", [False, True], ids=["uncached", "cached"])
def test_time_windows_keep_the_input_headers_session_windows_only_when_cached(cached):
    """Kafka: time/sliding window updates are ``record.withKey(...)`` (headers kept), uncached session updates are
    ``new Record<>(windowedKey, change, end)`` (no headers); a caching store's flush forwards every update with the
    headers of the record that wrote it (``CachingSessionStore.putAndMaybeForward``)."""
    from streams_on_spark import (Consumed, KeyValue, Materialized, Produced, SessionWindows, SlidingWindows,
                                  StreamsBuilder, TestRecord, TimeWindows, TopologyTestDriver)
    materialized = Materialized.with_(S, Serdes.Long())
    for windows, keeps in ((TimeWindows.of_size_with_no_grace(10), True),
                           (SlidingWindows.of_time_difference_with_no_grace(10), True),
                           (SessionWindows.of_inactivity_gap_with_no_grace(10), cached)):
        builder = StreamsBuilder()
        (builder.stream("in", Consumed.with_(S, S)).group_by_key().windowed_by(windows)
         .count(materialized if cached else materialized.with_caching_disabled())
         .to_stream().map(lambda windowed, count: KeyValue(windowed.key, count))
         .to("out", Produced.with_(S, Serdes.Long())))
        with TopologyTestDriver(builder.build(), {"application.id": "headers"}) as driver:
            driver.create_input_topic("in", S, S).pipe_input(TestRecord("k", "v", 5, headers={"trace": b"t1"}))
            out = driver.create_output_topic("out", S, Serdes.Long()).read_records_to_list()
        assert out and all(r.headers == ((("trace", b"t1"),) if keeps else ()) for r in out), (windows, out)


# ------------------------------------------------------------------------------------------------------------------
# Time kept in processor metadata: a task rebuilt from its snapshot (each Spark batch) continues where it stopped


def _task_runner(builder, app_configs: dict | None = None):
    """A way to build a task of ``builder``'s one subtopology, and a function feeding it ``(key, timestamp[,
    headers])`` records: it processes them, commits as an engine does (unless told not to) and returns the output."""
    from streams_on_spark.config import TaskConfig
    from streams_on_spark.records import ConsumerRecord
    from streams_on_spark.processor.api import TaskId
    from streams_on_spark.runtime.task import StreamTask
    internal = builder.build().internal_builder
    internal.application_id = "restore"
    config = TaskConfig.from_config({"application.id": "restore", **(app_configs or {})})
    offsets = iter(range(1000))

    def new_task(snapshot: bytes | None = None) -> StreamTask:
        return StreamTask(TaskId(0, 0), internal.subtopologies()[0], internal, config, lambda topic: 1, lambda: 0,
                          snapshot=snapshot)

    def feed(task: StreamTask, *records: tuple, commit: bool = True) -> list:
        task.add_records("in", 0, [ConsumerRecord("in", 0, next(offsets), ts, k.encode(), b"v", tuple(headers))
                                   for k, ts, *headers in records])
        while task.process_one():
            pass
        if commit:
            task.commit()   # a cached store forwards its updates on commit
        return task.collector.drain()
    return new_task, feed


def _emit_final_task(emit_strategy, interval_ms: int = 0):
    """A task of ``count`` over hopping windows 10/5 with grace 5 into Kafka's test store (1 day retention), and a
    function feeding it records."""
    from streams_on_spark import Consumed, Materialized, Produced, StreamsBuilder, TimeWindows, WindowedSerdes
    from streams_on_spark.state.factory import Stores
    keys = WindowedSerdes.time_windowed(S, 10)
    builder = StreamsBuilder()
    (builder.stream("in", Consumed.with_(S, S)).group_by_key()
     .windowed_by(TimeWindows.of_size_and_grace(10, 5).advance_by(5)).emit_strategy(emit_strategy)
     .count(Materialized.as_(Stores.in_memory_window_store("counts", 86_400_000, 10, False)))
     .to_stream().to("out", Produced.with_(keys, Serdes.Long())))
    new_task, feed_task = _task_runner(builder, {"__emit.interval.ms.kstreams.windowed.aggregation__": interval_ms})

    def feed(task: Any, *records: tuple[str, int]) -> list[tuple[str, int, int]]:
        return [(w.key, w.window.start, n) for w, n in
                ((keys.deserialize("out", r.key), Serdes.Long().deserialize("out", r.value))
                 for r in feed_task(task, *records))]
    return new_task, feed


def test_a_restored_task_emits_from_the_last_emit_close_time():
    """KStreamWindowAggregateTest#shouldEmitFromLastEmitTime: processorMetadataForKey(storeName) survives."""
    from streams_on_spark import EmitStrategy
    new_task, feed = _emit_final_task(EmitStrategy.on_window_close())
    first = new_task()
    assert feed(first, ("A", 0), ("B", 5), ("C", 15)) == [("A", 0, 1), ("B", 0, 1)]
    assert first.processor_metadata["counts"] == 10
    restored = new_task(first.snapshot())
    assert feed(restored, ("D", 25)) == [("B", 5, 1), ("C", 10, 1)]


def test_the_emit_throttle_survives_a_restore():
    """Kafka's TimeTracker.nextTimeToEmit, kept in processor metadata so every Spark batch throttles alike."""
    from streams_on_spark import EmitStrategy
    new_task, feed = _emit_final_task(EmitStrategy.on_window_close(), interval_ms=1000)
    first = new_task()
    assert feed(first, ("A", 0)) == []                   # the wall clock (0) passed: next emit time is 1000
    restored = new_task(first.snapshot())
    assert feed(restored, ("C", 15)) == []                # [0,10) closed, but the wall clock is still at 0
    assert restored.processor_metadata["next-time-to-emit:counts"] == 1000


def test_a_restored_task_still_drops_late_records():
    """Observed stream time is read from processor metadata per record (Spark restores after init())."""
    from streams_on_spark import EmitStrategy
    new_task, feed = _emit_final_task(EmitStrategy.on_window_update())
    first = new_task()
    assert feed(first, ("A", 100)) == [("A", 95, 1), ("A", 100, 1)]
    restored = new_task(first.snapshot())
    assert feed(restored, ("A", 5)) == []
    assert restored.metrics.dropped == 2                 # once per expired window, as Kafka counts


# ------------------------------------------------------------------------------------------------------------------
# The record cache with a commit per batch (Spark's micro-batch): the last update per window, as Kafka flushes it


@pytest.mark.parametrize("kind", ["time", "session"])
def test_a_batch_commit_forwards_the_last_update_per_window_with_its_writers_headers(kind):
    """CachingWindowStore/CachingSessionStore flush: stamped with the new value's timestamp (time windows,
    TimestampedCacheFlushListener) or the session end (SessionCacheFlushListener), with the headers of the record
    that last wrote the entry; a session merged away before the commit is not forwarded. Until the commit the task
    cannot be snapshotted, and after it a restored task goes on from the flushed store."""
    from streams_on_spark import (Consumed, Materialized, Produced, SessionWindows, StreamsBuilder, TimeWindows,
                                  WindowedSerdes)
    from streams_on_spark.errors import IllegalStateError
    if kind == "time":
        windows, keys = TimeWindows.of_size_with_no_grace(10), WindowedSerdes.time_windowed(S, 10)
    else:
        windows, keys = SessionWindows.of_inactivity_gap_with_no_grace(5), WindowedSerdes.session_windowed(S)
    builder = StreamsBuilder()
    (builder.stream("in", Consumed.with_(S, S)).group_by_key().windowed_by(windows)
     .count(Materialized.as_("counts")).to_stream().to("out", Produced.with_(keys, Serdes.Long())))
    new_task, feed = _task_runner(builder)
    task = new_task()
    first, last = ("h", b"first"), ("h", b"last")
    assert feed(task, ("k", 3, first), ("k", 1 if kind == "time" else 7, last), commit=False) == []
    with pytest.raises(IllegalStateError, match="unflushed cached writes"):
        task.snapshot()
    task.commit()
    out = [(keys.deserialize("out", r.key), Serdes.Long().deserialize("out", r.value), r.timestamp, r.headers)
           for r in task.collector.drain()]
    if kind == "time":   # the window's timestamp is its newest record's (3), not the last writer's (1)
        assert [(w.window.start, n, ts, h) for w, n, ts, h in out] == [(0, 2, 3, (last,))]
    else:                # [3,3] was created and merged away within the batch: only [3,7] leaves
        assert [(w.window.start, w.window.end, n, ts, h) for w, n, ts, h in out] == [(3, 7, 2, 7, (last,))]
    restored = new_task(task.snapshot())
    assert [Serdes.Long().deserialize("out", r.value) for r in feed(restored, ("k", 5))][-1] == 3

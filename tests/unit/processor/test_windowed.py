"""The suppression buffer behind ``KTable.suppress`` (Kafka's ``InMemoryTimeOrderedKeyValueChangeBuffer``)."""
from __future__ import annotations

from streams_on_spark import Serdes
from streams_on_spark.processor.api import Record
from streams_on_spark.processor.dsl import Change
from streams_on_spark.processor.windowed import SuppressionBuffer
from streams_on_spark.state.stores import ValueAndTimestamp

S = Serdes.String()


def _put(buffer: SuppressionBuffer, buffer_time: int, key: str, new: str, old: str | None, ts: int) -> None:
    change = Change(new, old)
    buffer.put(buffer_time, Record(key, change, ts), change)


def test_eviction_emits_the_latest_update_at_the_first_buffer_time():
    """A re-buffered key keeps its first buffer time (cleanPut) and is evicted as Change(new, old of the latest put)."""
    buffer = SuppressionBuffer("buf", S, S)
    _put(buffer, 0, "k", "x", None, 0)
    _put(buffer, 5, "k", "y", "x", 5)
    _put(buffer, 3, "j", "z", None, 3)
    emitted: list[tuple[str, Change, int]] = []
    buffer.evict_while(lambda t: t <= 0, lambda record, change: emitted.append((record.key, change, record.timestamp)))
    assert emitted == [("k", Change("y", "x"), 5)]
    assert buffer.size() == 1


def test_prior_value_for_buffered_is_the_old_value_at_first_buffering():
    """priorValueForBuffered: defined (possibly null) for a buffered key, with an unknown timestamp; else undefined."""
    buffer = SuppressionBuffer("buf", S, S)
    _put(buffer, 0, "k", "x", None, 0)
    _put(buffer, 1, "k", "y", "x", 1)
    _put(buffer, 2, "j", "w", "v", 2)
    _put(buffer, 3, "j", "u", "w", 3)
    assert buffer.prior_value_for_buffered("k") == (True, None)
    assert buffer.prior_value_for_buffered("j") == (True, ValueAndTimestamp("v", -1))
    assert buffer.prior_value_for_buffered("absent") == (False, None)


def test_time_windows_keep_the_input_headers_session_windows_do_not():
    """Kafka: time/sliding window updates are ``record.withKey(...)`` (headers kept), session updates are
    ``new Record<>(windowedKey, change, end)`` (no headers)."""
    from streams_on_spark import (Consumed, KeyValue, Produced, SessionWindows, SlidingWindows, StreamsBuilder,
                                  TestRecord, TimeWindows, TopologyTestDriver)
    for windows, keeps in ((TimeWindows.of_size_with_no_grace(10), True),
                           (SlidingWindows.of_time_difference_with_no_grace(10), True),
                           (SessionWindows.of_inactivity_gap_with_no_grace(10), False)):
        builder = StreamsBuilder()
        (builder.stream("in", Consumed.with_(S, S)).group_by_key().windowed_by(windows).count()
         .to_stream().map(lambda windowed, count: KeyValue(windowed.key, count))
         .to("out", Produced.with_(S, Serdes.Long())))
        with TopologyTestDriver(builder.build(), {"application.id": "headers"}) as driver:
            driver.create_input_topic("in", S, S).pipe_input(TestRecord("k", "v", 5, headers={"trace": b"t1"}))
            out = driver.create_output_topic("out", S, Serdes.Long()).read_records_to_list()
        assert out and all(r.headers == ((("trace", b"t1"),) if keeps else ()) for r in out), (windows, out)

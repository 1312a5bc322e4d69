"""Windowed aggregations and suppression: the processors behind ``windowed_by(...)`` and ``KTable.suppress``.

Ports of Kafka's ``KStreamWindowAggregate``, ``KStreamSlidingWindowAggregate``, ``KStreamSessionWindowAggregate``
(with their ``AbstractKStreamTimeWindowAggregateProcessor`` emit strategies) and ``KTableSuppressProcessor``.
Each processor's observed stream time (max timestamp it has seen) decides which windows are closed; it is kept
in the task's processor metadata so it survives restarts and Spark batches, as Kafka keeps its own. So are the
emit-final times (last emitted window close time, next wall-clock time to emit).
"""
from __future__ import annotations

import logging
from abc import abstractmethod
from typing import Any, Callable, Iterable, Optional

from streams_on_spark.change import Change
from streams_on_spark.config import (
    DEFAULT_EMIT_INTERVAL_MS,
    EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION,
    internal_long,
)
from streams_on_spark.emit import EmitStrategy, StrategyType
from streams_on_spark.errors import StreamsException
from streams_on_spark.operators.shared import drop_record, forward_on_flush
from streams_on_spark.processor.api import Processor, ProcessorContext, Record
from streams_on_spark.state.stores import ValueAndTimestamp
from streams_on_spark.window import OperatorWindows, SessionWindow, TimeWindow, Windowed

log = logging.getLogger(__name__)
UNKNOWN = -1


class _MetadataTime:
    """A time a processor keeps in the task's processor metadata (part of the task snapshot, restored before the
    processors' ``init()``), read and written through, so the snapshot always holds the current value."""

    def __init__(self, context: Any, key: str, default: int = UNKNOWN) -> None:
        self._context, self._key, self._default = context, key, default

    @property
    def value(self) -> int:
        value = self._context.get_processor_metadata(self._key)
        return self._default if value is None else value

    @value.setter
    def value(self, value: int) -> None:
        self._context.put_processor_metadata(self._key, value)


class _ObservedStreamTime(_MetadataTime):
    """A processor's observed stream time, persisted in the task's processor metadata under its store name."""

    def __init__(self, context: Any, store_name: str) -> None:
        super().__init__(context, f"observed-stream-time:{store_name}")

    def advance(self, timestamp: int) -> int:
        value = self.value
        if timestamp > value:
            self.value = value = timestamp
        return value


def _emit_interval_ms(context: Any) -> int:
    """``__emit.interval.ms.kstreams.windowed.aggregation__`` of the application's config, as Kafka reads it."""
    return internal_long(context.app_configs(), EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION,
                         DEFAULT_EMIT_INTERVAL_MS)


def _skip_expired(context: ProcessorContext, timestamp: int, window: str, close_time: int, stream_time: int) -> None:
    meta = context.record_metadata()
    where = f"topic=[{meta.topic}] partition=[{meta.partition}] offset=[{meta.offset}] " if meta else ""
    log.warning("Skipping record for expired window. %stimestamp=[%d] window=%s expiration=[%d] streamTime=[%d]",
                where, timestamp, window, close_time, stream_time)
    metrics = getattr(context, "metrics", None)
    if metrics is not None:
        metrics.record_dropped()


class _WindowedAggregate(Processor):
    """Windows, store, initializer and aggregator, the observed stream time, and the emit strategy.

    ``ON_WINDOW_UPDATE``: every update goes downstream; when the store has a record cache (the default) the cache
    forwards them on commit (``forward_on_flush``) and the processor forwards nothing itself.

    ``ON_WINDOW_CLOSE`` (Kafka's ``AbstractKStreamTimeWindowAggregateProcessor``): updates are not forwarded; after a
    record, when the wall-clock throttle allows and the window close time passed the last emitted one, the windows
    closed since then (each kind's emit range) are forwarded as ``Change(value, None)`` with the record's headers.
    The last emit close time is the processor metadata under the store name (Kafka's ``processorMetadataForKey``).
    """

    def __init__(self, store_name: str, emit_strategy: EmitStrategy, initializer: Callable[[], Any],
                 aggregator: Callable[[Any, Any, Any], Any], stream_time_of: Optional[str] = None, *,
                 windows: OperatorWindows) -> None:
        self.windows, self.store_name = windows.spec, store_name
        # a cogroup's inputs share the store but each observes its own stream time, as each of Kafka's processors
        self.stream_time_key = store_name if stream_time_of is None else f"{store_name}:{stream_time_of}"
        self.emit_final = emit_strategy.type() is StrategyType.ON_WINDOW_CLOSE
        self.initializer, self.aggregator = initializer, aggregator
        self.send_old_values = False

    def init(self, context: ProcessorContext) -> None:
        self.context, self.forward = context, context.forward
        self.store = context.get_state_store(self.store_name)
        # Kafka's TimestampedTupleForwarder: a cached store forwards the updates when it flushes, with
        # TimestampedCacheFlushListener's (time windows) or SessionCacheFlushListener's (sessions) timestamp
        self.forward_updates = not self.emit_final and not forward_on_flush(self, self.store)
        self.stream_time = _ObservedStreamTime(context, self.stream_time_key)
        if self.emit_final:
            self.last_emit_close_time = _MetadataTime(context, self.store_name)
            # Kafka's TimeTracker.nextTimeToEmit (starts at 0); kept with the task so Spark batches share it
            self.next_time_to_emit = _MetadataTime(context, f"next-time-to-emit:{self.store_name}", 0)
            self.emit_interval_ms = _emit_interval_ms(context)

    def _maybe_forward_update(self, record: Record, window: Any, old_agg: Any, new_agg: Any, new_ts: int) -> None:
        """Kafka's ``maybeForwardUpdate``: a window update with the input's headers, unless emitting final results
        or the store's cache forwards it."""
        if self.forward_updates:
            self.forward(Record(Windowed(record.key, window),
                                Change(new_agg, old_agg if self.send_old_values else None), new_ts, record.headers))

    def _maybe_forward_final_result(self, record: Record, window_close_time: int) -> None:
        """Kafka's ``maybeForwardFinalResult``: emit the windows closed since the last emission, if any."""
        if not self.emit_final or not self._should_emit_final(window_close_time):
            return
        upper = self._emit_range_upper_bound(window_close_time)
        if upper < 0:  # no window has ever closed
            return
        lower = self._emit_range_lower_bound()
        if self._should_range_fetch(lower, upper):
            for windowed, value, timestamp in self._closed_windows(lower, upper):
                self.forward(Record(windowed, Change(value, None), timestamp, record.headers))
            self.last_emit_close_time.value = window_close_time

    def _should_emit_final(self, window_close_time: int) -> bool:
        """Kafka's ``shouldEmitFinal``: at most once per emit interval of wall-clock time (the next time is set from
        now even when nothing is emitted), and only when the close time progressed."""
        now = self.context.current_system_time_ms()
        if now < self.next_time_to_emit.value:
            return False
        self.next_time_to_emit.value = now + self.emit_interval_ms
        last = self.last_emit_close_time.value
        return last == UNKNOWN or last < window_close_time

    @abstractmethod
    def _emit_range_lower_bound(self) -> int:
        """The smallest (inclusive) window start, or session end, not emitted yet."""

    @abstractmethod
    def _emit_range_upper_bound(self, window_close_time: int) -> int:
        """The largest (inclusive) window start, or session end, closed at ``window_close_time``."""

    def _should_range_fetch(self, lower: int, upper: int) -> bool:
        """Whether ``[lower, upper]`` may hold a window to emit (sliding windows always fetch)."""
        return True

    def _closed_windows(self, lower: int, upper: int) -> Iterable[tuple[Any, Any, int]]:
        """``(windowed key, aggregate, timestamp)`` of the windows starting in ``[lower, upper]``, in Kafka's
        ``fetchAll`` order (start, then key bytes — also the order of its time-ordered store), with the stored
        timestamp."""
        return ((kv.key, kv.value.value, kv.value.timestamp) for kv in self.store.fetch_all(lower, upper))


class KStreamWindowAggregate(_WindowedAggregate):
    """Tumbling/hopping windows: a record updates each window containing it unless the window has closed
    (window end <= observed stream time - grace); the update is forwarded with the window's max timestamp."""

    def process(self, record: Record) -> None:
        key = record.key
        if key is None:
            drop_record(self.context, "null key", record)
            return
        ts = record.timestamp
        observed = self.stream_time.advance(ts)
        close_time = observed - self.windows.grace_ms
        for start, window in sorted(self.windows.windows_for(ts).items()):
            if window.end > close_time:
                old = self.store.fetch_window(key, start)
                if old is None:  # Kafka replaces the missing old aggregate by the initializer's, and sends it
                    old_agg = agg = self.initializer()
                    new_ts = ts
                else:
                    old_agg = agg = old.value
                    new_ts = max(ts, old.timestamp)
                new_agg = self.aggregator(key, record.value, agg)
                self.store.put(key, ValueAndTimestamp.make(new_agg, new_ts), start)
                self._maybe_forward_update(record, window, old_agg, new_agg, new_ts)
            else:
                _skip_expired(self.context, ts, f"[{start},{window.end})", close_time, observed)
        self._maybe_forward_final_result(record, close_time)

    def _emit_range_lower_bound(self) -> int:
        """Window ends are exclusive, so one past the last emitted close time's start (0 the first time)."""
        last = self.last_emit_close_time.value
        return 0 if last == UNKNOWN else max(0, last - self.windows.size_ms) + 1

    def _emit_range_upper_bound(self, window_close_time: int) -> int:
        return window_close_time - self.windows.size_ms

    def _should_range_fetch(self, lower: int, upper: int) -> bool:
        """Skip the fetch when the close time did not progress enough to close another window."""
        if self.last_emit_close_time.value == UNKNOWN:
            return True
        return self.windows.windows_for(upper) != self.windows.windows_for(lower - 1)


class KStreamSessionWindowAggregate(_WindowedAggregate):
    """Session windows: merge every session within the inactivity gap of the record into one; merged sessions
    are deleted (forwarded as tombstones) and the new session is forwarded with its end as timestamp."""

    def __init__(self, store_name: str, emit_strategy: EmitStrategy, initializer: Callable[[], Any],
                 aggregator: Callable[[Any, Any, Any], Any], merger: Callable[[Any, Any, Any], Any],
                 stream_time_of: Optional[str] = None, *, windows: OperatorWindows) -> None:
        super().__init__(store_name, emit_strategy, initializer, aggregator, stream_time_of, windows=windows)
        self.merger = merger

    def _emit(self, windowed: Any, old: Any, new: Any) -> None:
        """A session update: a new record stamped with the session end, without the input's headers (Kafka
        forwards ``new Record<>(windowedKey, change, end)`` here, where time windows keep the headers). With a
        cached store the flush forwards it instead, with the headers of the record that wrote it."""
        if self.forward_updates:
            self.forward(Record(windowed, Change(new, old if self.send_old_values else None), windowed.window.end))

    def process(self, record: Record) -> None:
        key = record.key
        if key is None:
            drop_record(self.context, "null key", record)
            return
        ts = record.timestamp
        observed = self.stream_time.advance(ts)
        close_time = observed - self.windows.grace_ms - self.windows.inactivity_gap_ms
        self._aggregate(record, close_time, observed)
        self._maybe_forward_final_result(record, close_time)

    def _aggregate(self, record: Record, close_time: int, observed: int) -> None:
        key, ts, gap = record.key, record.timestamp, self.windows.inactivity_gap_ms
        new_window = SessionWindow(ts, ts)
        merged_window = new_window
        agg = self.initializer()
        merged = list(self.store.find_sessions(key, ts - gap, ts + gap))
        for session_key, session_agg in merged:
            agg = self.merger(key, agg, session_agg)
            merged_window = SessionWindow(min(merged_window.start, session_key.window.start),
                                          max(merged_window.end, session_key.window.end))
        if merged_window.end < close_time:
            _skip_expired(self.context, ts, f"[{merged_window.start},{merged_window.end}]", close_time, observed)
            return
        if merged_window != new_window:
            for session_key, session_agg in merged:
                self.store.remove(session_key)
                self._emit(session_key, session_agg, None)
        agg = self.aggregator(key, record.value, agg)
        session = Windowed(key, merged_window)
        self.store.put(session, agg)
        self._emit(session, None, agg)

    def _emit_range_lower_bound(self) -> int:
        return max(0, self.last_emit_close_time.value)

    def _emit_range_upper_bound(self, window_close_time: int) -> int:
        """Session ends are inclusive: a session ending at the close time is still open."""
        return window_close_time - 1

    def _should_range_fetch(self, lower: int, upper: int) -> bool:
        """A session may be a single point, so the range is fetched even when ``lower == upper``."""
        return upper >= lower

    def _closed_windows(self, lower: int, upper: int) -> Iterable[tuple[Any, Any, int]]:
        """Sessions ending in ``[lower, upper]`` in the store's order, stamped with their end."""
        return ((kv.key, kv.value, kv.key.window.end) for kv in self.store.find_sessions_by_end_time(lower, upper))


class KTableSuppress(Processor):
    """Buffer table updates; emit each key's latest update once its time passes stream time minus the wait.

    Final results: the buffer time is the window end and the wait is the upstream windows' close delay (grace,
    plus the inactivity gap for sessions), so each window emits once after it closes; tombstones are dropped.
    Time limit: the buffer time is the record timestamp.
    """

    def __init__(self, store_name: str, *, windows: OperatorWindows) -> None:
        suppressed = windows.spec
        self.suppressed, self.store_name = suppressed, store_name
        self.wait_ms = windows.grace_ms if suppressed.final_results else suppressed.time_to_wait_ms

    def init(self, context: ProcessorContext) -> None:
        self.context, self.forward = context, context.forward
        self.buffer = context.get_state_store(self.store_name)
        self.stream_time = _ObservedStreamTime(context, self.store_name)

    def process(self, record: Record) -> None:
        observed = self.stream_time.advance(record.timestamp)
        buffer_time = record.key.window.end if self.suppressed.final_results else record.timestamp
        self.buffer.put(buffer_time, record.key, record.timestamp, record.headers, record.value)
        expiry = observed - self.wait_ms
        self.buffer.evict(expiry, self._emit)
        self._enforce_size()

    def _enforce_size(self) -> None:
        config = self.suppressed.buffer_config
        over = 0
        if config.max_records is not None:
            over = max(over, self.buffer.size() - config.max_records)
        if config.max_bytes is not None and self.buffer.size_bytes() > config.max_bytes:
            over = max(over, 1)
        if over <= 0:
            return
        if not config.emit_early:
            raise StreamsException(f"{self.store_name}: the suppression buffer is full "
                                   f"({self.buffer.size()} records) and is configured to shut down when full")
        self.buffer.evict(None, self._emit, force=over)
        self._enforce_size()

    def _emit(self, key: Any, change: Change, timestamp: int, headers: Any) -> None:
        """Forward the evicted update as buffered, old value included (the parent always sends old values)."""
        if change.new_value is None and self.suppressed.final_results:
            return  # final results: a window deleted before it closed has nothing to report
        self.forward(Record(key, change, timestamp, headers))


class KStreamSlidingWindowAggregate(_WindowedAggregate):
    """Sliding windows (Kafka's ``KStreamSlidingWindowAggregate``, reverse-iteration path).

    Windows are [start, start + difference], both ends inclusive, and exist only where records are: each record
    creates its left window [ts - difference, ts], the right window of the previous record and its own right
    window when records follow within the difference; a window whose end is before stream time minus grace is
    closed (the record is dropped for it and counted).
    """

    def process(self, record: Record) -> None:
        if record.key is None or record.value is None:
            drop_record(self.context, "null key or value", record)
            return
        ts, diff = record.timestamp, self.windows.time_difference_ms
        observed = self.stream_time.advance(ts)
        close_time = observed - self.windows.grace_ms
        if ts + diff < close_time:
            _skip_expired(self.context, ts, f"[{ts},{ts + diff}]", close_time, observed)
            return
        if ts < diff:
            self._process_early(record, close_time)
            return  # as in Kafka, an early record does not emit final results
        self._process_reverse(record, close_time)
        self._maybe_forward_final_result(record, close_time)

    def _process_reverse(self, record: Record, close_time: int) -> None:
        """Kafka's ``processReverse``: walk the key's windows from the newest, updating those holding the record."""
        ts, diff = record.timestamp, self.windows.time_difference_ms
        starts: set[int] = set()
        left_agg = right_agg = None
        left_created = right_created = False
        previous_ts: Optional[int] = None
        for windowed, vat in self.store.backward_fetch(record.key, record.key, max(0, ts - 2 * diff), ts + 1):
            start = windowed.window.start
            starts.add(start)
            end = start + diff
            window_max = vat.timestamp
            if start == ts + 1:
                right_created = True
            elif end > ts:
                if right_agg is None:
                    right_agg = vat
                self._update(TimeWindow(start, end), vat, record, close_time)
            elif end == ts:
                left_created = True
                self._update(TimeWindow(start, end), vat, record, close_time)
                if window_max < ts:
                    previous_ts = window_max
                else:
                    return
            else:  # end < ts
                left_agg = vat
                previous_ts = window_max
                break
        self._create_windows(record, close_time, starts, right_agg, left_agg, left_created, right_created,
                             previous_ts)

    def _process_early(self, record: Record, close_time: int) -> None:
        ts, diff = record.timestamp, self.windows.time_difference_ms
        combined = None
        right_agg = None
        right_created = False
        starts: set[int] = set()
        previous_ts: Optional[int] = None
        for windowed, vat in self.store.fetch(record.key, record.key, 0, ts + 1):
            start = windowed.window.start
            starts.add(start)
            if start == 0:
                combined = (windowed, vat)
                if vat.timestamp < ts:
                    previous_ts = vat.timestamp
            elif start <= ts:
                right_agg = vat
                self._update(TimeWindow(start, start + diff), vat, record, close_time)
            elif start == ts + 1:
                right_created = True
        if right_agg is None and combined is not None and combined[1].timestamp > ts:
            right_agg = combined[1]
        if not right_created and right_agg is not None and right_agg.timestamp > ts:
            self._create_current_right(ts, right_agg, record)
        if previous_ts is not None and previous_ts + 1 not in starts:
            self._create_previous_right(previous_ts + 1, record, close_time)
        if combined is None:
            self._update(TimeWindow(0, diff), ValueAndTimestamp.make(self.initializer(), ts), record, close_time)
        else:
            self._update(TimeWindow(0, diff), combined[1], record, close_time)

    def _create_windows(self, record: Record, close_time: int, starts: set[int], right_agg: Any, left_agg: Any,
                        left_created: bool, right_created: bool, previous_ts: Optional[int]) -> None:
        ts, diff = record.timestamp, self.windows.time_difference_ms
        if previous_ts is not None:
            previous_right_start = previous_ts + 1
            if previous_right_start not in starts and previous_right_start + diff >= ts:
                self._create_previous_right(previous_right_start, record, close_time)
        if not left_created:
            if previous_ts is not None and ts - diff <= previous_ts:
                vat = ValueAndTimestamp.make(left_agg.value, ts)
            else:
                vat = ValueAndTimestamp.make(self.initializer(), ts)
            self._update(TimeWindow(ts - diff, ts), vat, record, close_time)
        if not right_created and right_agg is not None and right_agg.timestamp > ts:
            self._create_current_right(ts, right_agg, record)

    def _create_current_right(self, ts: int, right_agg: ValueAndTimestamp, record: Record) -> None:
        window = TimeWindow(ts + 1, ts + 1 + self.windows.time_difference_ms)
        self.store.put(record.key, right_agg, window.start)
        self._maybe_forward_update(record, window, None, right_agg.value, right_agg.timestamp)

    def _create_previous_right(self, start: int, record: Record, close_time: int) -> None:
        window = TimeWindow(start, start + self.windows.time_difference_ms)
        self._update(window, ValueAndTimestamp.make(self.initializer(), record.timestamp), record, close_time)

    def _update(self, window: Any, vat: Optional[ValueAndTimestamp], record: Record, close_time: int) -> None:
        if window.end < close_time:
            _skip_expired(self.context, record.timestamp, f"[{window.start},{window.end}]", close_time,
                          self.stream_time.value)
            return
        old_agg = None if vat is None else vat.value
        new_agg = self.aggregator(record.key, record.value, old_agg)
        new_ts = record.timestamp if old_agg is None else max(record.timestamp, vat.timestamp)  # type: ignore[union-attr]
        self.store.put(record.key, ValueAndTimestamp.make(new_agg, new_ts), window.start)
        self._maybe_forward_update(record, window, old_agg, new_agg, new_ts)

    def _emit_range_lower_bound(self) -> int:
        last = self.last_emit_close_time.value
        return 0 if last == UNKNOWN else max(0, last - self.windows.time_difference_ms)

    def _emit_range_upper_bound(self, window_close_time: int) -> int:
        """Sliding window ends are inclusive: a window ending at the close time is still open."""
        return window_close_time - self.windows.time_difference_ms - 1

"""Join processors: stream-stream (windowed), stream-table, stream-global-table and table-table.

Ports of Kafka's ``KStreamJoinWindow``, ``KStreamKStreamJoin`` (with the outer-join store that emits
non-joined records once their window closed), ``KStreamKTableJoin``, ``KStreamGlobalKTableJoin`` and
``KTableKTableJoin``. Time a join tracks (Kafka's ``TimeTracker``: the shared stream time of both sides, the earliest
pending outer record, the next wall-clock time a scan of the outer-join store may run) lives in the task's processor
metadata so it survives restarts and Spark batches.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from streams_on_spark.change import Change, make_change
from streams_on_spark.config import (
    DEFAULT_EMIT_INTERVAL_MS,
    EMIT_INTERVAL_MS_KSTREAMS_OUTER_JOIN_SPURIOUS_RESULTS_FIX,
    internal_long,
)
from streams_on_spark.operators.shared import drop_record, forward_on_flush, skip_out_of_order_join_update
from streams_on_spark.processor.api import Processor, ProcessorContext, Record
from streams_on_spark.state.stores import ValueAndTimestamp
from streams_on_spark.window import OperatorWindows

log = logging.getLogger(__name__)
MAX_TIME = 2**63 - 1


def _java_long(value: int) -> int:
    """``value`` wrapped to a Java ``long``, as Kafka's arithmetic on times overflows (``Long.MAX_VALUE + 10``)."""
    return (value + 2**63) % 2**64 - 2**63


class KStreamJoinWindow(Processor):
    """Keeps each record of one join side in that side's window store (the other side looks it up)."""

    def __init__(self, store_name: str) -> None:
        self.store_name = store_name

    def init(self, context: ProcessorContext) -> None:
        self.forward = context.forward
        self.window = context.get_state_store(self.store_name)

    def process(self, record: Record) -> None:
        self.forward(record)
        if record.key is not None:
            self.window.put(record.key, record.value, record.timestamp)


class _SharedJoinTime:
    """Stream time across both sides of one join, the earliest time of the outer-join store's last scan and puts,
    and the next wall-clock time a scan may run (Kafka's ``TimeTracker``, shared by both sides of a task)."""

    def __init__(self, context: Any, join_name: str) -> None:
        self._context = context
        self._stream_key, self._min_key = f"join-stream-time:{join_name}", f"join-min-time:{join_name}"
        self._next_emit_key = f"join-next-time-to-emit:{join_name}"

    @property
    def stream_time(self) -> int:
        value = self._context.get_processor_metadata(self._stream_key)
        return -1 if value is None else value

    def advance(self, timestamp: int) -> None:
        if timestamp > self.stream_time:
            self._context.put_processor_metadata(self._stream_key, timestamp)

    @property
    def min_time(self) -> int:
        value = self._context.get_processor_metadata(self._min_key)
        return MAX_TIME if value is None else value

    @min_time.setter
    def min_time(self, value: int) -> None:
        self._context.put_processor_metadata(self._min_key, value)

    @property
    def next_time_to_emit(self) -> int:
        value = self._context.get_processor_metadata(self._next_emit_key)
        return 0 if value is None else value

    @next_time_to_emit.setter
    def next_time_to_emit(self, value: int) -> None:
        self._context.put_processor_metadata(self._next_emit_key, value)


class KStreamKStreamJoin(Processor):
    """One side of a windowed stream-stream join.

    A record joins every record of the other side whose timestamp is within [ts - before, ts + after]
    (the other side's store), emitted with the larger timestamp. Left/outer: a record with no partner waits in
    the shared outer-join store and is emitted with ``None`` for the other side once stream time has passed
    its window end plus grace (records already too late for that are emitted at once).
    """

    def __init__(self, join_name: str, other_store: str, joiner: Callable[[Any, Any, Any], Any], outer: bool,
                 is_left_side: bool, outer_store: Optional[str], *, windows: OperatorWindows) -> None:
        join_windows = windows.spec   # the user's JoinWindows: the right side looks the other way
        self.join_name, self.other_store_name = join_name, other_store
        self.window_before_ms, self.window_after_ms = join_windows.before_ms, join_windows.after_ms
        self.before_ms, self.after_ms = ((join_windows.before_ms, join_windows.after_ms) if is_left_side
                                         else (join_windows.after_ms, join_windows.before_ms))
        self.grace_ms = windows.grace_ms
        self.joiner, self.outer, self.is_left_side, self.outer_store_name = joiner, outer, is_left_side, outer_store

    def init(self, context: ProcessorContext) -> None:
        self.context, self.forward = context, context.forward
        self.other = context.get_state_store(self.other_store_name)
        self.outer_store = context.get_state_store(self.outer_store_name) if self.outer_store_name else None
        self.time = _SharedJoinTime(context, self.join_name)
        if self.outer_store is not None:
            # Kafka's private throttle of the outer-join store's scans, in wall-clock time (TopologyTestDriver: 0)
            self.emit_interval_ms = internal_long(context.app_configs(),
                                                  EMIT_INTERVAL_MS_KSTREAMS_OUTER_JOIN_SPURIOUS_RESULTS_FIX,
                                                  DEFAULT_EMIT_INTERVAL_MS)

    def _join(self, key: Any, this: Any, other: Any) -> Any:
        return self.joiner(key, this, other) if self.is_left_side else self.joiner(key, other, this)

    def process(self, record: Record) -> None:
        ts = record.timestamp
        self.time.advance(ts)
        if self.outer and record.key is None and record.value is not None:
            self.forward(record.with_value(self._join(None, record.value, None)))
            return
        if record.key is None or record.value is None:
            drop_record(self.context, "null key or value", record)
            return
        if ts == self.time.stream_time and self.outer_store is not None:
            self._emit_non_joined(record)
        time_from, time_to = max(0, ts - self.before_ms), max(0, ts + self.after_ms)
        matches = list(self.other.fetch(record.key, time_from, time_to))
        for other_ts, other_value in matches:
            if self.outer_store is not None:
                self.outer_store.remove_pending(other_ts, not self.is_left_side, record.key)
            self.forward(Record(record.key, self._join(record.key, record.value, other_value), max(ts, other_ts),
                                record.headers))
        if self.outer and not matches:
            if self.outer_store is None or time_to < self.time.stream_time:
                self.forward(record.with_value(self._join(record.key, record.value, None)))
            else:
                self.time.min_time = min(self.time.min_time, ts)
                self.outer_store.add_pending(ts, self.is_left_side, record.key, record.value)

    def _window_open(self, ts: int, left_side: bool, stream_time: int) -> bool:
        look_back = self.window_after_ms if left_side else self.window_before_ms
        return ts + look_back + self.grace_ms >= stream_time

    def _emit_non_joined(self, record: Record) -> None:
        """Kafka's ``emitNonJoinedOuterRecords``: emit (and remove) the waiting records whose window closed.

        Gated by this side's own after bound (Kafka's ``joinAfterMs``: the right side has before/after swapped)
        counted from the earliest time, in Java's overflowing arithmetic (an earliest time of ``Long.MAX_VALUE``
        passes), and throttled to one scan per emit interval of wall-clock time. The earliest time becomes the last
        record the scan visited, even one it emitted.
        """
        if _java_long(self.time.min_time + self.after_ms + self.grace_ms) >= self.time.stream_time:
            return
        now = self.context.current_system_time_ms()
        if now < self.time.next_time_to_emit:
            return
        self.time.next_time_to_emit = now + self.emit_interval_ms
        stream_time, min_time = self.time.stream_time, MAX_TIME
        left_open = right_open = False
        emitted = []   # removed after the scan: the store's scan is lazy, not a snapshot
        for ts, left_side, key, values in self.outer_store.pending():
            min_time = ts
            if left_open and right_open:
                break
            if self._window_open(ts, left_side, stream_time):
                if left_side:
                    left_open = True
                else:
                    right_open = True
                continue
            for value in values:
                joined = self.joiner(key, value, None) if left_side else self.joiner(key, None, value)
                self.forward(Record(key, joined, ts, record.headers))
            emitted.append((ts, left_side, key))
        self.time.min_time = min_time
        for ts, left_side, key in emitted:
            self.outer_store.remove_pending(ts, left_side, key)


class KStreamKTableJoin(Processor):
    """Each stream record looks up the table's current value for its key (left join: ``None`` if absent).

    Also the stream-global-table join, where ``key_mapper(key, value)`` picks the table key. Against a versioned
    table, or an unmaterialized ``filter``/``map_values`` of one (KIP-914), a record reads the table as of its
    timestamp; with a grace period (``buffer_name``, the ``<name>-Buffer`` store) records wait in the buffer until its
    stream time passes their timestamp plus grace.
    """

    def __init__(self, getter: Any, joiner: Callable[[Any, Any, Any], Any], left: bool,
                 key_mapper: Optional[Callable[[Any, Any], Any]] = None, buffer_name: Optional[str] = None) -> None:
        self.getter_supplier, self.joiner, self.left, self.key_mapper = getter, joiner, left, key_mapper
        self.buffer_name = buffer_name

    def init(self, context: ProcessorContext) -> None:
        self.context, self.forward = context, context.forward
        self.getter = self.getter_supplier(context)
        # a versioned table, or an unmaterialized filter/map_values of one (Kafka's valueGetter.isVersioned())
        self.versioned = self.getter.versioned
        self.buffer = None
        if self.buffer_name is not None:
            if not self.versioned:
                raise ValueError("KTable must be versioned to use a grace period in a stream table join.")
            self.buffer = context.get_state_store(self.buffer_name)

    def process(self, record: Record) -> None:
        table_key = record.key if self.key_mapper is None else self.key_mapper(record.key, record.value)
        # A null value is dropped; a null join key only by the inner join: a left join calls the joiner with no
        # table value (KIP-962, Kafka 3.7+), also when a global table's key mapper returns null.
        if record.value is None or (table_key is None and not self.left):
            drop_record(self.context, "null join key or value", record)
            return
        buffer = self.buffer
        if buffer is None or not buffer.put(record.key, record.value, record.timestamp, record.headers):
            self._join(record, table_key)
            return
        buffer.evict(self._emit)

    def _emit(self, key: Any, value: Any, timestamp: int, headers: Any) -> None:
        """Join a record the grace buffer let go."""
        record = Record(key, value, timestamp, headers)
        self._join(record, record.key if self.key_mapper is None else self.key_mapper(key, value))

    def _join(self, record: Record, table_key: Any) -> None:
        other = None
        if table_key is not None:
            vat = self.getter(table_key, as_of=record.timestamp) if self.versioned else self.getter(table_key)
            other = None if vat is None else vat.value
        if self.left or other is not None:
            self.forward(record.with_value(self.joiner(record.key, record.value, other)))


class KTableKTableJoin(Processor):
    """One side of a table-table join: each update of this side joins the other side's current value.

    ``mode`` is Kafka's processor for the side: ``inner``, ``left`` (left side of a left join), ``right``
    (right side of a left join) or ``outer``; ``joiner(this, other)`` is already reversed for the right side.
    """

    def __init__(self, other_getter: Any, joiner: Callable[[Any, Any], Any], mode: str,
                 versioned: bool = False) -> None:
        self.other_getter_supplier, self.joiner, self.mode = other_getter, joiner, mode
        self.versioned = versioned   # this side reads a versioned table: skip its out-of-order updates (KIP-914)
        self.send_old_values = False

    def init(self, context: ProcessorContext) -> None:
        self.context, self.forward = context, context.forward
        self.other_getter = self.other_getter_supplier(context)

    def process(self, record: Record) -> None:
        if record.key is None:
            drop_record(self.context, "null key", record)
            return
        change: Change = record.value
        if self.versioned and not change.is_latest:
            skip_out_of_order_join_update(self.context)
            return
        vat = self.other_getter(record.key)
        other = None if vat is None else vat.value
        mode, joiner, old_wanted = self.mode, self.joiner, self.send_old_values
        if other is None and (mode in ("inner", "right") or (change.new_value is None and change.old_value is None)):
            return
        ts = record.timestamp if vat is None else max(record.timestamp, vat.timestamp)
        if mode == "right":
            new = joiner(change.new_value, other)
            old = joiner(change.old_value, other) if old_wanted else None
        elif mode == "outer":
            new = joiner(change.new_value, other) if (other is not None or change.new_value is not None) else None
            old = (joiner(change.old_value, other) if old_wanted and (other is not None or change.old_value is not None)
                   else None)
        else:  # inner, left
            new = None if change.new_value is None else joiner(change.new_value, other)
            old = joiner(change.old_value, other) if old_wanted and change.old_value is not None else None
        self.forward(Record(record.key, make_change(new, old, change.is_latest), ts, record.headers))


class KTableJoinMerge(Processor):
    """Merges both join sides' results into one table; stores them when the join is materialized.

    The old value forwarded is the one the join side computed (Kafka's ``KTableKTableJoinMerger``), not the
    store's previous value.
    """

    def __init__(self, store_name: Optional[str]) -> None:
        self.store_name = store_name
        self.send_old_values = False

    def init(self, context: ProcessorContext) -> None:
        self.forward = context.forward
        self.store = context.get_state_store(self.store_name) if self.store_name else None
        self.cached = forward_on_flush(self, self.store)

    def process(self, record: Record) -> None:
        change: Change = record.value
        if self.store is not None:
            self.store.put(record.key, ValueAndTimestamp.make(change.new_value, record.timestamp))
            if self.cached:
                return
        self.forward(record.with_value(make_change(change.new_value, change.old_value if self.send_old_values else None,
                                                   change.is_latest)))



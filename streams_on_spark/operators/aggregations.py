"""The aggregations: ``count``/``reduce``/``aggregate`` of a grouped stream or table and a cogroup's inputs (Kafka's
``KStreamAggregate``, ``KStreamReduce``, ``KTableAggregate``, ``KTableReduce``, ``CogroupedStreamAggregateBuilder``),
forwarding their updates themselves or, behind a record cache, when it flushes."""
from __future__ import annotations

from typing import Any, Callable

from streams_on_spark.change import Change
from streams_on_spark.errors import StreamsException
from streams_on_spark.operators.shared import drop_record, forward_on_flush
from streams_on_spark.operators.stateless import StatelessProcessor
from streams_on_spark.processor.api import Processor, ProcessorContext, Record
from streams_on_spark.state.stores import ValueAndTimestamp


class _Stateful(Processor):
    def __init__(self, store_name: str) -> None:
        self.store_name = store_name
        self.send_old_values = False

    def init(self, context: ProcessorContext) -> None:
        self.context = context
        self.forward = context.forward
        self.store = context.get_state_store(self.store_name)
        self.cached = forward_on_flush(self, self.store)

    def _forward_change(self, key: Any, new: Any, old: Any, timestamp: int, headers: Any) -> None:
        if not self.cached:
            self.forward(Record(key, Change(new, old if self.send_old_values else None), timestamp, headers))


def count_initializer() -> int:
    """``count()``'s initializer."""
    return 0


def count_adder(_key: Any, _value: Any, agg: int) -> int:
    """``count()``'s aggregator (the batch path adds one without calling it: ``fused.BatchAggregation``)."""
    return agg + 1


def count_subtractor(_key: Any, _value: Any, agg: int) -> int:
    """``KGroupedTable.count()``'s subtractor."""
    return agg - 1


class KStreamAggregate(_Stateful):
    """``aggregate``/``count``: fold each record into the key's aggregate; emits the new (and old) value."""

    def __init__(self, initializer: Callable[[], Any], aggregator: Callable[[Any, Any, Any], Any], *,
                 store_name: str) -> None:
        super().__init__(store_name)
        self.initializer, self.aggregator = initializer, aggregator

    def process(self, record: Record) -> None:
        key, value = record.key, record.value
        if key is None or value is None:
            drop_record(self.context, "null key or value", record)
            return
        old = self.store.get_with_timestamp(key)
        if old is None:
            agg, ts = self.initializer(), record.timestamp
            old_agg = None
        else:
            agg = old_agg = old[0]
            ts = record.timestamp if record.timestamp > old[1] else old[1]
        new_agg = self.aggregator(key, value, agg)
        self.store.put_with_timestamp(key, new_agg, ts)
        if not self.cached:
            self.forward(Record(key, Change(new_agg, old_agg if self.send_old_values else None), ts, record.headers))


class KStreamReduce(_Stateful):
    def __init__(self, reducer: Callable[[Any, Any], Any], *, store_name: str) -> None:
        super().__init__(store_name)
        self.reducer = reducer

    def process(self, record: Record) -> None:
        key, value = record.key, record.value
        if key is None or value is None:
            drop_record(self.context, "null key or value", record)
            return
        old = self.store.get(key)
        if old is None:
            new_agg, ts, old_agg = value, record.timestamp, None
        else:
            old_agg = old.value
            new_agg = self.reducer(old_agg, value)
            ts = record.timestamp if record.timestamp > old.timestamp else old.timestamp
        self.store.put(key, ValueAndTimestamp(new_agg, ts))
        self._forward_change(key, new_agg, old_agg, ts, record.headers)


class KTableAggregate(_Stateful):
    """``KGroupedTable.aggregate``/``count``: subtract the old value, add the new one."""

    operator = "aggregate"
    first_value_starts = False   # reduce: a key's first value is its aggregate (Kafka's KTableReduce)

    def __init__(self, initializer: Callable[[], Any], adder: Callable[[Any, Any, Any], Any],
                 subtractor: Callable[[Any, Any, Any], Any], *, store_name: str) -> None:
        super().__init__(store_name)
        self.initializer, self.adder, self.subtractor = initializer, adder, subtractor

    def process(self, record: Record) -> None:
        key, change = record.key, record.value
        if key is None:
            raise StreamsException(f"Record key for KTable {self.operator} operator with state {self.store_name} "
                                   "should not be null.")
        old = self.store.get(key)
        old_agg = None if old is None else old.value
        ts = record.timestamp
        if change.old_value is not None and old_agg is not None:
            agg = self.subtractor(key, change.old_value, old_agg)
            ts = max(record.timestamp, old.timestamp)  # type: ignore[union-attr]
        else:
            agg = old_agg
        if change.new_value is not None:
            if agg is None and self.first_value_starts:
                new_agg = change.new_value
            else:
                new_agg = self.adder(key, change.new_value, self.initializer() if agg is None else agg)
                if old is not None:
                    ts = max(record.timestamp, old.timestamp)
        else:
            new_agg = agg
        self.store.put(key, ValueAndTimestamp.make(new_agg, ts))
        self._forward_change(key, new_agg, old_agg, ts, record.headers)


class KTableReduce(KTableAggregate):
    """``KGroupedTable.reduce``: ``adder(agg, value)``/``subtractor(agg, value)``, the first value starting it."""

    operator = "reduce"
    first_value_starts = True

    def __init__(self, adder: Callable[[Any, Any], Any], subtractor: Callable[[Any, Any], Any], *,
                 store_name: str) -> None:
        super().__init__(_no_initial_value, lambda _key, value, agg: adder(agg, value),
                         lambda _key, value, agg: subtractor(agg, value), store_name=store_name)


def _no_initial_value() -> None:
    return None


class KStreamCogroupAggregate(KStreamAggregate):
    """One input of a cogroup: the aggregate shares its store with the other inputs."""


class CogroupMerge(StatelessProcessor):
    def process(self, record: Record) -> None:
        self.forward(record)

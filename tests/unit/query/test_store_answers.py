"""An IQv2 query is answered by the store it goes down to, as Kafka's ``StateStore.query`` passes a query down a
store's layers: the adapter beneath a timestamped window store over a supplier without timestamps answers itself, with
plain values, however the typed store above it was made."""
from __future__ import annotations

from streams_on_spark import Serdes, Stores
from streams_on_spark.query.execute import execute
from streams_on_spark.query.iqv2 import Position, PositionBound, WindowKeyQuery, WindowRangeQuery
from streams_on_spark.state.stores import ValueAndTimestamp
from streams_on_spark.state.window_stores import TimestampedWindowStore, WindowToTimestampedBytesStore

S, L = Serdes.String(), Serdes.Long()


def answer(store, query):
    result = execute(store, query, PositionBound.unbounded(), Position.empty_position(), 0)
    assert result.is_success(), result
    return [(kv.key, kv.value) for kv in result.get_result()]


def test_a_timestamped_window_store_over_the_adapter_answers_with_the_adapters_plain_values():
    plain = Stores.persistent_window_store("windows", 1000, 10, False).get()
    store = TimestampedWindowStore(WindowToTimestampedBytesStore(plain), S, L)   # by hand: no builder marks it
    store.put("a", ValueAndTimestamp.make(3, 5), 0)
    store.put("a", ValueAndTimestamp.make(4, 15), 10)
    assert list(store.fetch("a", 0, 10)) == [(0, ValueAndTimestamp(3, -1)), (10, ValueAndTimestamp(4, -1))]
    assert answer(store, WindowKeyQuery.with_key_and_window_start_range("a", 0, 10)) == [(0, 3), (10, 4)]
    assert [value for _, value in answer(store, WindowRangeQuery.with_window_start_range(0, 10))] == [3, 4]


def test_one_over_a_store_keeping_timestamps_answers_with_them():
    store = TimestampedWindowStore(Stores.persistent_timestamped_window_store("windows", 1000, 10, False).get(), S, L)
    store.put("a", ValueAndTimestamp.make(3, 5), 0)
    assert answer(store, WindowKeyQuery.with_key_and_window_start_range("a", 0, 10)) == [(0, ValueAndTimestamp(3, 5))]

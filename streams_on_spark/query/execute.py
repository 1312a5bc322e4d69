"""Run one IQv2 query on one task's instance of a store, as Kafka's metered stores do (``StateStore.query``).

Which query a store answers, and in what shape, is Kafka's: key-value stores ``KeyQuery`` and ``RangeQuery``
(timestamped ones plain values, and ``TimestampedKeyQuery``/``TimestampedRangeQuery`` with ``ValueAndTimestamp``);
window stores ``WindowKeyQuery`` and ``WindowRangeQuery.with_window_start_range`` (answered as the store's bytes store
answers: a timestamped one built over a store without timestamps with plain values, as Kafka's adapter answers); session stores
``WindowRangeQuery.with_key``; versioned stores ``VersionedKeyQuery`` (a ``KeyQuery`` or ``RangeQuery`` on one
raises ``UnsupportedOperationError``, as Kafka's throws). Anything else fails with ``UNKNOWN_QUERY_TYPE``. Answers are read after a commit, when the record caches are flushed, so ``skip_cache``
reads what a cached read would.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from streams_on_spark.errors import UnsupportedOperationError
from streams_on_spark.query.iqv2 import (
    FailureReason,
    KeyQuery,
    Position,
    PositionBound,
    Query,
    QueryResult,
    RangeQuery,
    ResultOrder,
    TimestampedKeyQuery,
    TimestampedRangeQuery,
    VersionedKeyQuery,
    WindowKeyQuery,
    WindowRangeQuery,
)
from streams_on_spark.state.headers_stores import (
    HeadersAwareValues,
    SessionStoreFacadeForHeaders,
    SessionStoreWithHeaders,
    TimestampedKeyValueStoreFacadeForHeaders,
    TimestampedKeyValueStoreWithHeaders,
    TimestampedWindowStoreFacadeForHeaders,
    TimestampedWindowStoreWithHeaders,
)
from streams_on_spark.state.session_stores import SessionStore
from streams_on_spark.state.stores import KeyValueStore, TimestampedKeyValueStore, ValueAndTimestamp, plain_values
from streams_on_spark.state.versioned import VersionedKeyValueStore
from streams_on_spark.state.window_stores import WindowStore


def execute(store: Any, query: Query, bound: PositionBound, position: Position, partition: Optional[int],
            collect_execution_info: bool = False) -> QueryResult:
    """``query`` on ``store`` (one task's instance, at ``position``), or why it cannot answer."""
    if bound.position is not None and not position.reaches(bound.position, partition):
        result = QueryResult.not_up_to_bound(position, bound, partition)
    else:
        run = _handler(store, query)
        if run is None:
            result = QueryResult.for_unknown_query_type(query, store)
        else:
            try:
                result = QueryResult.for_result(run(store, query))
            except ValueError as e:   # a store's own refusal of an argument (e.g. a null key)
                result = QueryResult.for_failure(FailureReason.STORE_EXCEPTION, str(e))
    result.set_position(position.copy())
    if collect_execution_info:
        result.add_execution_info(f"Handled in {type(store).__name__} {store.name} of partition {partition}")
    return result


_ANSWERED_AS = ((TimestampedKeyValueStoreWithHeaders, TimestampedKeyValueStoreFacadeForHeaders),
                (TimestampedWindowStoreWithHeaders, TimestampedWindowStoreFacadeForHeaders),
                (SessionStoreWithHeaders, SessionStoreFacadeForHeaders))


def _handler(store: Any, query: Query) -> Optional[Callable[[Any, Any], Any]]:
    """How ``store`` answers ``query`` (None: it does not know that query type)."""
    kind = type(query)
    if isinstance(store, VersionedKeyValueStore):
        if kind in (KeyQuery, RangeQuery):   # Kafka's versioned store throws these (through KafkaStreams.query)
            raise UnsupportedOperationError(f"Versioned stores do not support {kind.__name__} queries at this time.")
        return _versioned_key if kind is VersionedKeyQuery else None
    if isinstance(store, HeadersAwareValues) and not store.answers_queries:   # Kafka 4.3.1's RocksDB ones
        return None
    # Kafka's headers-aware stores answer as a timestamped store (a session store: as a plain one)
    for headers_store, facade in _ANSWERED_AS:
        if isinstance(store, headers_store):
            handler = _handler(facade(store), query)
            return None if handler is None else lambda s, q: handler(facade(s), q)
    if isinstance(store, (TimestampedKeyValueStore, TimestampedKeyValueStoreFacadeForHeaders)):
        return {KeyQuery: _plain_key, TimestampedKeyQuery: _key, RangeQuery: _plain_range,
                TimestampedRangeQuery: _range}.get(kind)
    if isinstance(store, KeyValueStore):
        return {KeyQuery: _key, RangeQuery: _range}.get(kind)
    if isinstance(store, (WindowStore, TimestampedWindowStoreFacadeForHeaders)):
        if kind is WindowKeyQuery:
            return _window_key
        return _window_range if kind is WindowRangeQuery and query.time_from is not None else None
    if isinstance(store, (SessionStore, SessionStoreFacadeForHeaders)):
        return _session_key if kind is WindowRangeQuery and query.key is not None else None
    return None


def _key(store: Any, query: Any) -> Any:
    return store.get(query.key)


def _plain_key(store: Any, query: Any) -> Any:
    return ValueAndTimestamp.get_value_or_null(store.get(query.key))


def _range(store: Any, query: Any) -> Any:
    if query.order is ResultOrder.DESCENDING:
        return store.reverse_range(query.lower, query.upper)
    return store.range(query.lower, query.upper)


def _plain_range(store: Any, query: Any) -> Any:
    return plain_values(_range(store, query))


def _window_key(store: Any, query: Any) -> Any:
    return store.query_answer(store.fetch(query.key, query.time_from, query.time_to))


def _window_range(store: Any, query: Any) -> Any:
    return store.query_answer(store.fetch_all(query.time_from, query.time_to))


def _session_key(store: Any, query: Any) -> Any:
    return store.fetch(query.key)


def _versioned_key(store: Any, query: Any) -> Any:
    if query.as_of_timestamp is None:
        return store.get(query.key)
    return store.get_version(query.key, query.as_of_timestamp)

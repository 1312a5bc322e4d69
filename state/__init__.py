"""State stores (installed as ``streams_on_spark.state``)."""
from streams_on_spark.state.factory import Stores
from streams_on_spark.state.headers_stores import (
    AggregationWithHeaders,
    SessionStoreWithHeaders,
    SessionStoreWithHeadersBuilder,
    TimestampedKeyValueStoreWithHeaders,
    TimestampedKeyValueStoreWithHeadersBuilder,
    TimestampedWindowStoreWithHeaders,
    TimestampedWindowStoreWithHeadersBuilder,
    ValueTimestampHeaders,
)
from streams_on_spark.state.stores import (
    InMemoryKeyValueBytesStore,
    KeyValueBytesStoreSupplier,
    KeyValueIterator,
    KeyValueStore,
    KeyValueStoreBuilder,
    KeyValueStoreFacade,
    StateStore,
    StoreBuilder,
    TimestampedKeyValueStore,
    TimestampedKeyValueStoreBuilder,
    ValueAndTimestamp,
    ValueAndTimestampSerde,
)

__all__ = ["InMemoryKeyValueBytesStore", "KeyValueBytesStoreSupplier", "KeyValueIterator", "KeyValueStore",
           "KeyValueStoreBuilder", "KeyValueStoreFacade", "StateStore", "StoreBuilder", "Stores",
           "TimestampedKeyValueStore", "TimestampedKeyValueStoreBuilder", "ValueAndTimestamp", "ValueAndTimestampSerde",
           "TimestampedKeyValueStoreWithHeaders", "TimestampedKeyValueStoreWithHeadersBuilder", "ValueTimestampHeaders",
           "TimestampedWindowStoreWithHeaders", "TimestampedWindowStoreWithHeadersBuilder", "SessionStoreWithHeaders",
           "SessionStoreWithHeadersBuilder", "AggregationWithHeaders"]

"""Interactive queries (Kafka's IQv1 ``store()`` and IQv2 ``query()``) over every task of an application."""
from streams_on_spark.query.errors import (
    InvalidStateStoreException,
    InvalidStateStorePartitionException,
    StreamsNotStartedException,
    StreamsStoppedException,
    UnknownStateStoreException,
)
from streams_on_spark.query.iqv2 import (
    FailureReason,
    KeyQuery,
    Position,
    PositionBound,
    QueryResult,
    RangeQuery,
    ResultOrder,
    StateQueryRequest,
    StateQueryResult,
    TimestampedKeyQuery,
    TimestampedRangeQuery,
    VersionedKeyQuery,
    WindowKeyQuery,
    WindowRangeQuery,
)
from streams_on_spark.query.params import (
    HostInfo,
    KeyQueryMetadata,
    QueryableStoreTypes,
    StoreQueryParameters,
    StreamsMetadata,
    TopicPartition,
)

__all__ = ["FailureReason", "HostInfo", "InvalidStateStoreException", "InvalidStateStorePartitionException",
           "KeyQuery", "KeyQueryMetadata", "Position", "PositionBound", "QueryResult", "QueryableStoreTypes",
           "RangeQuery", "ResultOrder", "StateQueryRequest", "StateQueryResult", "StoreQueryParameters",
           "StreamsMetadata", "StreamsNotStartedException", "StreamsStoppedException", "TimestampedKeyQuery",
           "TimestampedRangeQuery", "TopicPartition", "UnknownStateStoreException", "VersionedKeyQuery",
           "WindowKeyQuery", "WindowRangeQuery"]

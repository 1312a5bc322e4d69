"""Kafka's interactive-query exceptions (``org.apache.kafka.streams.errors``): all are ``InvalidStateStoreException``s."""
from __future__ import annotations

from streams_on_spark.errors import StreamsException


class InvalidStateStoreException(StreamsException):
    """A store cannot be queried now: not running, migrated, closed, or not of the type asked for."""


class UnknownStateStoreException(InvalidStateStoreException):
    """No store of that name is registered in the topology."""


class InvalidStateStorePartitionException(InvalidStateStoreException):
    """The partition asked for does not exist for the store."""


class StreamsNotStartedException(InvalidStateStoreException):
    """The application has not been started yet (state CREATED)."""


class StreamsStoppedException(InvalidStateStoreException):
    """The application is shutting down or stopped and can no longer serve queries."""

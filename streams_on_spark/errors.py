"""Typed errors, mirroring Kafka Streams' exception hierarchy.

Bad arguments raise the built-in ``ValueError`` (Java's ``IllegalArgumentException``).
"""
from __future__ import annotations


class StreamsException(Exception):
    """A failure while running a topology (Kafka's ``StreamsException``)."""


class TopologyException(StreamsException):
    """An invalid topology; the message starts with ``Invalid topology:`` as in Kafka."""

    def __init__(self, message: str) -> None:
        super().__init__(message if message.startswith("Invalid topology") else f"Invalid topology: {message}")


class IllegalStateError(StreamsException):
    """An operation called in a state that does not allow it (Java's ``IllegalStateException``)."""


class SerializationException(StreamsException):
    """A serde could not turn a value into bytes or back; names the topic and the value's type."""

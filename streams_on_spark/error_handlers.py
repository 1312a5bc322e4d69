"""Kafka Streams' error handlers and the dead letter queue: what a task does with a record it cannot handle.

Three handlers, configured as Kafka's (``deserialization.exception.handler``, ``processing.exception.handler``
(KIP-1033), ``production.exception.handler``), each answer a failure with a :class:`Response`: resume (the record
is dropped and counted in ``dropped-records-total``), fail (the task fails), or, for production, retry. A response
may carry dead letter queue records (KIP-1034): Kafka's built-in handlers build one per failure when
``errors.dead.letter.queue.topic.name`` is set, holding the source record's raw key, value and headers plus
Kafka's ``__streams.errors.*`` headers; the task writes them with its output.

A handler is given in the config as one of Kafka's class names (``org.apache.kafka.streams.errors.
LogAndContinueExceptionHandler`` and friends), a handler class or instance, or a plain function
``(context, record, exception) -> Response | Result``.
"""
from __future__ import annotations

import enum
import logging
import traceback
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from streams_on_spark.records import ConsumerRecord, ProducerRecord

log = logging.getLogger(__name__)

DESERIALIZATION_EXCEPTION_HANDLER = "deserialization.exception.handler"
PROCESSING_EXCEPTION_HANDLER = "processing.exception.handler"
PRODUCTION_EXCEPTION_HANDLER = "production.exception.handler"
ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME = "errors.dead.letter.queue.topic.name"
# Kafka's deprecated names, still read when the new one is absent
_DEPRECATED_KEYS = {DESERIALIZATION_EXCEPTION_HANDLER: "default.deserialization.exception.handler",
                    PRODUCTION_EXCEPTION_HANDLER: "default.production.exception.handler"}

# Kafka's ExceptionHandlerUtils header names
HEADER_ERRORS_EXCEPTION_NAME = "__streams.errors.exception"
HEADER_ERRORS_STACKTRACE_NAME = "__streams.errors.stacktrace"
HEADER_ERRORS_EXCEPTION_MESSAGE_NAME = "__streams.errors.message"
HEADER_ERRORS_TOPIC_NAME = "__streams.errors.topic"
HEADER_ERRORS_PARTITION_NAME = "__streams.errors.partition"
HEADER_ERRORS_OFFSET_NAME = "__streams.errors.offset"


class Result(enum.Enum):
    """What a handler decided. ``CONTINUE`` is Kafka's older name of ``RESUME``; ``RETRY`` is for production only."""

    RESUME = "RESUME"
    FAIL = "FAIL"
    RETRY = "RETRY"
    CONTINUE = "RESUME"


@dataclass(frozen=True)
class Response:
    """A handler's answer: the result and the dead letter queue records to write (Kafka's ``Response``)."""

    result: Result
    dead_letter_queue_records: tuple[ProducerRecord, ...] = ()

    @staticmethod
    def resume(dead_letter_queue_records: Any = ()) -> "Response":
        return Response(Result.RESUME, tuple(dead_letter_queue_records))

    @staticmethod
    def fail(dead_letter_queue_records: Any = ()) -> "Response":
        return Response(Result.FAIL, tuple(dead_letter_queue_records))

    @staticmethod
    def retry() -> "Response":
        return Response(Result.RETRY)


class SerializationExceptionOrigin(enum.Enum):
    KEY = "KEY"
    VALUE = "VALUE"


@dataclass(frozen=True)
class ErrorHandlerContext:
    """Where a failure happened (Kafka's ``ErrorHandlerContext``): the source record's position, headers, time and
    raw bytes, the processor node and the task. Punctuations have no source record (topic ``None``, -1)."""

    topic: Optional[str]
    partition: int
    offset: int
    headers: tuple
    processor_node_id: str
    task_id: Any
    timestamp: int
    source_raw_key: Optional[bytes]
    source_raw_value: Optional[bytes]


class _Handler(ABC):
    """Kafka's handlers are ``Configurable``: they get the application's config once, before the first failure."""

    dead_letter_queue_topic: Optional[str] = None

    def configure(self, configs: Mapping[str, Any]) -> None:
        topic = configs.get(ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME)
        self.dead_letter_queue_topic = None if topic is None else str(topic)

    def _dead_letters(self, context: ErrorHandlerContext, exception: BaseException) -> tuple[ProducerRecord, ...]:
        """Kafka's ``maybeBuildDeadLetterQueueRecords``: one record when a dead letter queue topic is configured."""
        if self.dead_letter_queue_topic is None:
            return ()
        return (build_dead_letter_queue_record(self.dead_letter_queue_topic, context.source_raw_key,
                                               context.source_raw_value, context, exception),)


class DeserializationExceptionHandler(_Handler):
    """Decides about a record whose key or value could not be deserialized (``record`` holds the raw bytes)."""

    @abstractmethod
    def handle_error(self, context: ErrorHandlerContext, record: ConsumerRecord,
                     exception: BaseException) -> Response: ...


class ProcessingExceptionHandler(_Handler):
    """Decides about a record a processor raised on (KIP-1033); ``record`` is ``None`` for a punctuation."""

    @abstractmethod
    def handle_error(self, context: ErrorHandlerContext, record: Any, exception: BaseException) -> Response: ...


class ProductionExceptionHandler(_Handler):
    """Decides about a record that could not be serialized for, or written to, its topic."""

    def handle_error(self, context: ErrorHandlerContext, record: Any, exception: BaseException) -> Response:
        return Response.fail(self._dead_letters(context, exception))

    def handle_serialization_error(self, context: ErrorHandlerContext, record: Any, exception: BaseException,
                                   origin: SerializationExceptionOrigin) -> Response:
        return Response.fail(self._dead_letters(context, exception))


class LogAndFailExceptionHandler(DeserializationExceptionHandler):
    """Kafka's default: log the error and fail the task."""

    def handle_error(self, context: ErrorHandlerContext, record: ConsumerRecord,
                     exception: BaseException) -> Response:
        # at debug, not Kafka's error: the task fails with this text, which the application reports once
        log.debug("Exception caught during Deserialization, taskId: %s, topic: %s, partition: %s, offset: %s: %s",
                  context.task_id, record.topic, record.partition, record.offset, exception)
        return Response.fail(self._dead_letters(context, exception))


class LogAndContinueExceptionHandler(DeserializationExceptionHandler):
    """Log the error, drop the record and go on."""

    def handle_error(self, context: ErrorHandlerContext, record: ConsumerRecord,
                     exception: BaseException) -> Response:
        log.warning("Exception caught during Deserialization, taskId: %s, topic: %s, partition: %s, offset: %s",
                    context.task_id, record.topic, record.partition, record.offset, exc_info=exception)
        return Response.resume(self._dead_letters(context, exception))


_PROCESSING_LOG = ("Exception caught during message processing, processor node: %s, taskId: %s, source topic: %s, "
                   "source partition: %s, source offset: %s")


class LogAndFailProcessingExceptionHandler(ProcessingExceptionHandler):
    """Kafka's default: log the error and fail the task."""

    def handle_error(self, context: ErrorHandlerContext, record: Any, exception: BaseException) -> Response:
        # at debug, not Kafka's error: the task fails with this text, which the application reports once
        log.debug(_PROCESSING_LOG + ": %s", context.processor_node_id, context.task_id, context.topic,
                  context.partition, context.offset, exception)
        return Response.fail(self._dead_letters(context, exception))


class LogAndContinueProcessingExceptionHandler(ProcessingExceptionHandler):
    """Log the error, drop the record at the processor that raised and go on."""

    def handle_error(self, context: ErrorHandlerContext, record: Any, exception: BaseException) -> Response:
        log.warning(_PROCESSING_LOG, context.processor_node_id, context.task_id, context.topic, context.partition,
                    context.offset, exc_info=exception)
        return Response.resume(self._dead_letters(context, exception))


class DefaultProductionExceptionHandler(ProductionExceptionHandler):
    """Kafka's default: fail (a retriable write error is retried by the producer itself)."""


class _FunctionHandler(DeserializationExceptionHandler, ProcessingExceptionHandler, ProductionExceptionHandler):
    """A plain function ``(context, record, exception) -> Response | Result`` used as any handler."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def handle_error(self, context: ErrorHandlerContext, record: Any, exception: BaseException) -> Any:
        return self.function(context, record, exception)

    def handle_serialization_error(self, context: ErrorHandlerContext, record: Any, exception: BaseException,
                                   origin: SerializationExceptionOrigin) -> Any:
        return self.function(context, record, exception)


_PACKAGE = "org.apache.kafka.streams.errors."
_KAFKA_CLASSES: dict[str, dict[str, type]] = {
    DESERIALIZATION_EXCEPTION_HANDLER: {c.__name__: c for c in (LogAndFailExceptionHandler,
                                                                LogAndContinueExceptionHandler)},
    PROCESSING_EXCEPTION_HANDLER: {c.__name__: c for c in (LogAndFailProcessingExceptionHandler,
                                                           LogAndContinueProcessingExceptionHandler)},
    PRODUCTION_EXCEPTION_HANDLER: {c.__name__: c for c in (DefaultProductionExceptionHandler,)},
}
_DEFAULTS: dict[str, type] = {DESERIALIZATION_EXCEPTION_HANDLER: LogAndFailExceptionHandler,
                              PROCESSING_EXCEPTION_HANDLER: LogAndFailProcessingExceptionHandler,
                              PRODUCTION_EXCEPTION_HANDLER: DefaultProductionExceptionHandler}
# this library's names before it took Kafka's classes (still accepted)
_SHORT_NAMES = {"log-and-fail": "LogAndFail", "log-and-continue": "LogAndContinue"}


def configured_handler(config: Mapping[str, Any], key: str) -> _Handler:
    """The handler ``config`` names under ``key`` (one of the three handler keys), configured with ``config``."""
    value = config.get(key)
    deprecated = _DEPRECATED_KEYS.get(key)
    if value is None and deprecated is not None and config.get(deprecated) is not None:
        log.warning("Configuration '%s' is deprecated; use '%s'", deprecated, key)
        key, value = deprecated, config.get(deprecated)
    handler = _instantiate(key, value, _DEFAULTS[_base_key(key)])
    handler.configure(dict(config))
    return handler


def _base_key(key: str) -> str:
    """The current name of a handler key (itself, or the one a deprecated key became)."""
    return next((k for k, old in _DEPRECATED_KEYS.items() if old == key), key)


def _instantiate(key: str, value: Any, default: type) -> _Handler:
    base = _base_key(key)
    if value is None:
        return default()
    if isinstance(value, str):
        name = value[len(_PACKAGE):] if value.startswith(_PACKAGE) else value
        if name in _SHORT_NAMES:
            name = _SHORT_NAMES[name] + ("ProcessingExceptionHandler" if base == PROCESSING_EXCEPTION_HANDLER
                                         else "ExceptionHandler")
        cls = _KAFKA_CLASSES[base].get(name)
        if cls is None:
            known = ", ".join(_PACKAGE + n for n in _KAFKA_CLASSES[base])
            raise ValueError(f"Invalid value {value} for configuration {key}: Class {value} could not be found "
                             f"(known: {known}; or give a handler class, instance or function)")
        return cls()
    if isinstance(value, type):
        if not hasattr(value, "handle_error"):
            raise ValueError(f"Invalid value {value.__name__} for configuration {key}: a handler class must define "
                             "handle_error(context, record, exception)")
        return value()
    if hasattr(value, "handle_error"):
        if not hasattr(value, "configure"):
            value.configure = lambda configs: None  # a duck-typed handler need not be configurable
        return value
    if callable(value):
        return _FunctionHandler(value)
    raise ValueError(f"Invalid value {value!r} for configuration {key}: expected one of Kafka's handler class "
                     "names, a handler class or instance, or a function (context, record, exception) -> Response")


def response_of(answer: Any, key: str, allow_retry: bool = False) -> Response:
    """A handler's answer as a ``Response`` (a bare ``Result`` is accepted), or the error Kafka gives a bad one."""
    if isinstance(answer, Result):
        answer = Response(answer)
    if not isinstance(answer, Response) or (answer.result is Result.RETRY and not allow_retry):
        allowed = "RESUME, FAIL or RETRY" if allow_retry else "RESUME or FAIL"
        raise TypeError(f"Invalid {key} response: expected a Response or Result ({allowed}), got {answer!r}")
    return answer


def exception_name(exception: BaseException) -> str:
    """The exception's class as a dotted name (Kafka writes Java's ``getClass().getName()``)."""
    cls = type(exception)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def build_dead_letter_queue_record(topic: str, key: Optional[bytes], value: Optional[bytes],
                                   context: ErrorHandlerContext, exception: BaseException) -> ProducerRecord:
    """Kafka's ``buildDeadLetterQueueRecord``: the raw record with its headers, then the ``__streams.errors.*``
    headers; no partition (the record collector picks it from the key, as a producer would)."""
    def utf8(text: Optional[str]) -> Optional[bytes]:
        return None if text is None else text.encode("utf-8")

    message = str(exception)
    headers = tuple(context.headers or ()) + (
        (HEADER_ERRORS_EXCEPTION_NAME, utf8(exception_name(exception))),
        (HEADER_ERRORS_EXCEPTION_MESSAGE_NAME, utf8(message) if message else None),
        (HEADER_ERRORS_STACKTRACE_NAME, utf8("".join(traceback.format_exception(exception)))),
        (HEADER_ERRORS_TOPIC_NAME, utf8(context.topic)),
        (HEADER_ERRORS_PARTITION_NAME, utf8(str(context.partition))),
        (HEADER_ERRORS_OFFSET_NAME, utf8(str(context.offset))),
    )
    return ProducerRecord(topic, None, context.timestamp, key, value, headers)  # type: ignore[arg-type]


__all__ = [
    "DefaultProductionExceptionHandler", "DeserializationExceptionHandler", "ErrorHandlerContext",
    "LogAndContinueExceptionHandler", "LogAndContinueProcessingExceptionHandler", "LogAndFailExceptionHandler",
    "LogAndFailProcessingExceptionHandler", "ProcessingExceptionHandler", "ProductionExceptionHandler", "Response",
    "Result", "SerializationExceptionOrigin", "build_dead_letter_queue_record", "configured_handler",
]

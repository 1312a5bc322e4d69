"""A task's error handling (KIP-1033, KIP-1034): what its exception handlers are asked, and how a failure fails it.

Kafka spreads this over its ``RecordDeserializer`` (a record that cannot be deserialized), ``RecordCollectorImpl`` (a
sink's record that cannot be serialized), ``ProcessorNode`` (a processor's failure, handled at that node) and
``StreamTask`` (the failure that reaches the task, and the error a failing task raises). Here it is one part of the
task, :class:`TaskErrors`, which reads where the record in process came from in the task's context; the task, its
record collector and its processor nodes call it.
"""
from __future__ import annotations

import logging
import traceback
from typing import Any, Callable, Optional

from streams_on_spark.config import TaskConfig
from streams_on_spark.error_handlers import (
    DESERIALIZATION_EXCEPTION_HANDLER,
    PROCESSING_EXCEPTION_HANDLER,
    PRODUCTION_EXCEPTION_HANDLER,
    ErrorHandlerContext,
    Response,
    Result,
    SerializationExceptionOrigin,
    response_of,
)
from streams_on_spark.errors import IllegalStateError, StreamsException
from streams_on_spark.processor.api import ProcessorContext, Record, TaskId
from streams_on_spark.records import ConsumerRecord, ProducerRecord
from streams_on_spark.runtime.nodes import ProcessorNode
from streams_on_spark.runtime.record_collector import RecordCollector
from streams_on_spark.runtime.record_queue import RecordQueue

log = logging.getLogger(__name__)


class _FailedProcessing(Exception):
    """Kafka's ``FailedProcessingException``: a processing failure already handled (FAIL) at a node, passed up
    through the other nodes untouched."""

    def __init__(self, failure: StreamsException) -> None:
        super().__init__(str(failure))
        self.failure = failure


class TaskErrors:
    """One task's exception handlers at work: each failure handed to the handler Kafka asks for it, with Kafka's
    ``ErrorHandlerContext`` read from the task's ``context`` (the record in process, its node, queue, offset and raw
    bytes); a resumed record is dropped and counted in ``metrics``, a handler's dead letter queue records go out
    through ``collector``."""

    def __init__(self, task_id: TaskId, config: TaskConfig, context: ProcessorContext, metrics: Any,
                 collector: RecordCollector) -> None:
        self.task_id = task_id
        self.config = config
        self.context: Any = context   # the task's TaskContext: current node, queue, offset, record, source_raw
        self.metrics = metrics
        self.collector = collector

    def _error_context(self, node: str, record: Optional[Record | ProducerRecord],
                       timestamp: int) -> ErrorHandlerContext:
        """Kafka's ``ErrorHandlerContext`` for a failure at ``node`` while it handled ``record``."""
        queue, ctx = self.context.queue, self.context
        raw_key, raw_value = self.context.source_raw
        return ErrorHandlerContext(None if queue is None else queue.topic, -1 if queue is None else queue.partition,
                                   -1 if queue is None else ctx.offset, () if record is None else record.headers,
                                   node, self.task_id, timestamp if record is None else record.timestamp, raw_key,
                                   raw_value)

    def _respond(self, key: str, ask: Callable[[], Any], allow_retry: bool = False) -> Response:
        """Ask a handler; its dead letter queue records go out with the task's output."""
        try:
            response = response_of(ask(), key, allow_retry)
        except Exception as fatal:
            raise StreamsException(f"Fatal user code error in {key} callback of task {self.task_id}: "
                                   f"{type(fatal).__name__}: {fatal}") from fatal
        for dead_letter in response.dead_letter_queue_records:
            self.collector.send_raw(dead_letter)
        return response

    def deserialization_error(self, queue: RecordQueue, offset: int, timestamp: int, raw_key: Optional[bytes],
                              raw_value: Optional[bytes], headers: Any, e: Exception) -> None:
        """Kafka's ``handleDeserializationFailure``: resume (drop and count the record) or fail the task."""
        topic, partition = queue.topic, queue.partition
        context = ErrorHandlerContext(topic, partition, offset, headers, queue.source.name, self.task_id, timestamp,
                                      raw_key, raw_value)
        raw = ConsumerRecord(topic, partition, offset, timestamp, raw_key, raw_value, headers)
        response = self._respond(DESERIALIZATION_EXCEPTION_HANDLER,
                                 lambda: self.config.deserialization_handler.handle_error(context, raw, e))
        if response.result is Result.FAIL:
            raise StreamsException(f"Deserialization exception handler is set to fail upon a deserialization "
                                   f"error. If you would rather have the streaming pipeline continue after a "
                                   f"deserialization error, please set the {DESERIALIZATION_EXCEPTION_HANDLER} "
                                   f"appropriately. Failed record: taskId={self.task_id}, topic={topic}, "
                                   f"partition={partition}, offset={offset}: {type(e).__name__}: {e}") from e
        log.warning("Skipping record due to deserialization error. topic=[%s] partition=[%d] offset=[%d]: %s",
                    topic, partition, offset, e)
        self.metrics.record_dropped()

    def serialization_error(self, node: str, record: ProducerRecord, e: Exception,
                            origin: SerializationExceptionOrigin) -> Response:
        """A sink's record that its serdes could not serialize (Kafka's ``ProducerRecord``, its key and value not
        serialized): the production handler decides."""
        context = self._error_context(node, record, record.timestamp)
        response = self._respond(PRODUCTION_EXCEPTION_HANDLER,
                                 lambda: self.config.production_handler.handle_serialization_error(
                                     context, record, e, origin))
        if response.result is Result.RESUME:
            log.warning("Skipping record due to serialization error at sink %s in task %s: %s", node, self.task_id, e)
            self.metrics.record_dropped()
        return response

    def guard(self, node: ProcessorNode) -> None:
        """Hand what ``node``'s processor raises to the processing exception handler at that node, as Kafka's
        ``ProcessorNode`` does: a resumed record stops there and its siblings still get it."""
        process = node.process

        def guarded(record: Record) -> None:
            try:
                process(record)
            except (_FailedProcessing, IllegalStateError):
                raise
            except Exception as e:
                self._processing_error(node.name, record, e)
        node.process = guarded

    def handle_processing_error(self, e: Exception, topic: Optional[str], partition: Optional[int],
                                offset: Optional[int], record: Optional[Record], timestamp: int = -1) -> None:
        """An error that reached the task (a record's or a punctuation's): handled at the node that raised."""
        if isinstance(e, _FailedProcessing):
            raise e.failure
        node = self.context.current.name if self.context.current else "?"
        if isinstance(e, IllegalStateError):
            raise self._failure(e, node)
        try:
            self._processing_error(node, record, e, timestamp)
        except _FailedProcessing as failed:
            raise failed.failure from e

    def _processing_error(self, node: str, record: Optional[Record], e: Exception, timestamp: int = -1) -> None:
        """Kafka's processing exception handling (KIP-1033): resume (drop and count) or fail."""
        context = self._error_context(node, record, timestamp)
        response = self._respond(PROCESSING_EXCEPTION_HANDLER,
                                 lambda: self.config.processing_handler.handle_error(context, record, e))
        if response.result is Result.FAIL:
            raise _FailedProcessing(self._failure(e, node))
        self.metrics.record_dropped()

    def _failure(self, e: Exception, node: str) -> StreamsException:
        """The error a failing task raises: where (task, processor, topic, partition, offset) and the user's error."""
        if isinstance(e, StreamsException):
            return e
        queue = self.context.queue
        topic, partition, offset = ((None, None, None) if queue is None
                                    else (queue.topic, queue.partition, self.context.offset))
        failure = StreamsException(f"Exception caught in process. taskId={self.task_id}, processor={node}, "
                                   f"topic={topic}, partition={partition}, offset={offset}, stacktrace="
                                   f"{''.join(traceback.format_exception(e)).strip()}")
        failure.__cause__ = e
        return failure

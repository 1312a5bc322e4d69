"""Processor API: ``Processor``, ``Record``, ``ProcessorContext``, punctuation."""
from streams_on_spark.processor.api import (
    Cancellable,
    Processor,
    ProcessorContext,
    ProcessorSupplier,
    PunctuationType,
    Record,
    RecordMetadata,
    TaskId,
)

__all__ = ["Cancellable", "Processor", "ProcessorContext", "ProcessorSupplier", "PunctuationType", "Record",
           "RecordMetadata", "TaskId"]

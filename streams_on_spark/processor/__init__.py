"""Processor API: ``Processor``, ``Record``, ``ProcessorContext``, punctuation."""
from streams_on_spark.processor.api import (
    Cancellable,
    FixedKeyProcessor,
    FixedKeyProcessorContext,
    FixedKeyRecord,
    Processor,
    ProcessorContext,
    ProcessorSupplier,
    PunctuationType,
    Record,
    RecordMetadata,
    TaskId,
)

__all__ = ["Cancellable", "FixedKeyProcessor", "FixedKeyProcessorContext", "FixedKeyRecord", "Processor", "ProcessorContext", "ProcessorSupplier", "PunctuationType", "Record",
           "RecordMetadata", "TaskId"]

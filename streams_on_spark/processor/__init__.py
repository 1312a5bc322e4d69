"""Processor API: ``Processor``, ``Record``, ``ProcessorContext``, punctuation."""
from streams_on_spark.processor.api import (
    Cancellable,
    FixedKeyProcessor,
    FixedKeyProcessorContext,
    FixedKeyRecord,
    ForwardingDisabledProcessorContext,
    Processor,
    ProcessorContext,
    ProcessorSupplier,
    PunctuationType,
    Record,
    RecordMetadata,
    TaskId,
    ValueTransformerWithKey,
    ValueTransformerWithKeySupplier,
)

__all__ = ["Cancellable", "FixedKeyProcessor", "FixedKeyProcessorContext", "FixedKeyRecord",
           "ForwardingDisabledProcessorContext", "Processor", "ProcessorContext", "ProcessorSupplier",
           "PunctuationType", "Record", "RecordMetadata", "TaskId", "ValueTransformerWithKey",
           "ValueTransformerWithKeySupplier"]

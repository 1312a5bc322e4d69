"""streams-on-spark: the Kafka Streams programming model in Python, on Apache Spark Structured Streaming.

Build topologies with :class:`StreamsBuilder` (DSL) or :class:`Topology` (Processor API), test them with the
multi-partition :class:`TopologyTestDriver`, run them with :class:`KafkaStreams`.
"""
# The public names load on first use (PEP 562), so a process that needs one module (Spark's Python workers on the
# driver: the embedded-topics source runner, a stateful query's initialisation) does not import the whole library.
from __future__ import annotations

from typing import TYPE_CHECKING

from streams_on_spark.lazy import lazy_exports

_EXPORTS = {
    "GlobalKTable": "streams_on_spark.dsl.builder",
    "StreamsBuilder": "streams_on_spark.dsl.builder",
    "EmitStrategy": "streams_on_spark.dsl.emit",
    "CogroupedKStream": "streams_on_spark.dsl.grouped",
    "KGroupedStream": "streams_on_spark.dsl.grouped",
    "KGroupedTable": "streams_on_spark.dsl.grouped",
    "BranchedKStream": "streams_on_spark.dsl.kstream",
    "KStream": "streams_on_spark.dsl.kstream",
    "KTable": "streams_on_spark.dsl.ktable",
    "Branched": "streams_on_spark.dsl.params",
    "Consumed": "streams_on_spark.dsl.params",
    "Grouped": "streams_on_spark.dsl.params",
    "Joined": "streams_on_spark.dsl.params",
    "Materialized": "streams_on_spark.dsl.params",
    "Named": "streams_on_spark.dsl.params",
    "Produced": "streams_on_spark.dsl.params",
    "Repartitioned": "streams_on_spark.dsl.params",
    "StreamJoined": "streams_on_spark.dsl.params",
    "TableJoined": "streams_on_spark.dsl.params",
    "BufferConfig": "streams_on_spark.dsl.suppressed",
    "Suppressed": "streams_on_spark.dsl.suppressed",
    "SessionWindowedKStream": "streams_on_spark.dsl.windowed",
    "TimeWindowedKStream": "streams_on_spark.dsl.windowed",
    "JoinWindows": "streams_on_spark.dsl.windows",
    "SessionWindows": "streams_on_spark.dsl.windows",
    "SlidingWindows": "streams_on_spark.dsl.windows",
    "TimeWindows": "streams_on_spark.dsl.windows",
    "Windowed": "streams_on_spark.dsl.windows",
    "IllegalStateError": "streams_on_spark.errors",
    "SerializationException": "streams_on_spark.errors",
    "StreamsException": "streams_on_spark.errors",
    "TopologyException": "streams_on_spark.errors",
    "KafkaStreams": "streams_on_spark.kafka_streams",
    "KeyValue": "streams_on_spark.keyvalue",
    "FixedKeyProcessor": "streams_on_spark.processor.api",
    "FixedKeyProcessorContext": "streams_on_spark.processor.api",
    "FixedKeyRecord": "streams_on_spark.processor.api",
    "Processor": "streams_on_spark.processor.api",
    "ProcessorContext": "streams_on_spark.processor.api",
    "PunctuationType": "streams_on_spark.processor.api",
    "Record": "streams_on_spark.processor.api",
    "RecordContext": "streams_on_spark.processor.api",
    "RecordMetadata": "streams_on_spark.processor.api",
    "StreamPartitioner": "streams_on_spark.processor.api",
    "TopicNameExtractor": "streams_on_spark.processor.api",
    "ValueTransformerWithKey": "streams_on_spark.processor.api",
    "StreamsConfig": "streams_on_spark.config",
    "FailOnInvalidTimestamp": "streams_on_spark.timestamp_extractors",
    "LogAndSkipOnInvalidTimestamp": "streams_on_spark.timestamp_extractors",
    "TimestampExtractor": "streams_on_spark.timestamp_extractors",
    "UsePartitionTimeOnInvalidTimestamp": "streams_on_spark.timestamp_extractors",
    "WallclockTimestampExtractor": "streams_on_spark.timestamp_extractors",
    "Serde": "streams_on_spark.serde",
    "Serdes": "streams_on_spark.serde",
    "WindowedSerdes": "streams_on_spark.serde.windowed",
    "Stores": "streams_on_spark.state.factory",
    "ValueAndTimestamp": "streams_on_spark.state.stores",
    "ValueTimestampHeaders": "streams_on_spark.state.headers_stores",
    "AggregationWithHeaders": "streams_on_spark.state.headers_stores",
    "VersionedKeyValueStore": "streams_on_spark.state.versioned",
    "VersionedRecord": "streams_on_spark.state.versioned",
    "TestRecord": "streams_on_spark.testing",
    "TopologyTestDriver": "streams_on_spark.testing",
    "TopologyTestDriverBuilder": "streams_on_spark.testing",
    "TopologyDescription": "streams_on_spark.topology.description",
    "Topology": "streams_on_spark.topology.topology",
    "Finding": "streams_on_spark.upgrade",
    "UpgradeReport": "streams_on_spark.upgrade",
    "check_upgrade": "streams_on_spark.upgrade",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


if TYPE_CHECKING:   # what type checkers and IDEs read
    from streams_on_spark.dsl.builder import GlobalKTable, StreamsBuilder
    from streams_on_spark.dsl.emit import EmitStrategy
    from streams_on_spark.dsl.grouped import CogroupedKStream, KGroupedStream, KGroupedTable
    from streams_on_spark.dsl.kstream import BranchedKStream, KStream
    from streams_on_spark.dsl.ktable import KTable
    from streams_on_spark.dsl.params import (
        Branched,
        Consumed,
        Grouped,
        Joined,
        Materialized,
        Named,
        Produced,
        Repartitioned,
        StreamJoined,
        TableJoined,
    )
    from streams_on_spark.dsl.suppressed import BufferConfig, Suppressed
    from streams_on_spark.dsl.windowed import SessionWindowedKStream, TimeWindowedKStream
    from streams_on_spark.dsl.windows import JoinWindows, SessionWindows, SlidingWindows, TimeWindows, Windowed
    from streams_on_spark.errors import (
        IllegalStateError,
        SerializationException,
        StreamsException,
        TopologyException,
    )
    from streams_on_spark.kafka_streams import KafkaStreams
    from streams_on_spark.keyvalue import KeyValue
    from streams_on_spark.processor.api import (
        FixedKeyProcessor,
        FixedKeyProcessorContext,
        FixedKeyRecord,
        Processor,
        ProcessorContext,
        PunctuationType,
        Record,
        RecordContext,
        RecordMetadata,
        StreamPartitioner,
        TopicNameExtractor,
        ValueTransformerWithKey,
    )
    from streams_on_spark.config import StreamsConfig
    from streams_on_spark.serde import Serde, Serdes
    from streams_on_spark.serde.windowed import WindowedSerdes
    from streams_on_spark.state.factory import Stores
    from streams_on_spark.state.headers_stores import AggregationWithHeaders, ValueTimestampHeaders
    from streams_on_spark.state.stores import ValueAndTimestamp
    from streams_on_spark.state.versioned import VersionedKeyValueStore, VersionedRecord
    from streams_on_spark.testing import TestRecord, TopologyTestDriver, TopologyTestDriverBuilder
    from streams_on_spark.timestamp_extractors import (
        FailOnInvalidTimestamp,
        LogAndSkipOnInvalidTimestamp,
        TimestampExtractor,
        UsePartitionTimeOnInvalidTimestamp,
        WallclockTimestampExtractor,
    )
    from streams_on_spark.topology.description import TopologyDescription
    from streams_on_spark.topology.topology import Topology
    from streams_on_spark.upgrade import Finding, UpgradeReport, check_upgrade

__version__ = "0.1.0"

__all__ = [
    "Branched", "CogroupedKStream", "Consumed", "GlobalKTable", "Grouped", "IllegalStateError", "KGroupedStream",
    "KGroupedTable", "KStream", "KTable", "KafkaStreams", "KeyValue", "BranchedKStream", "Materialized", "Named", "Processor",
    "ProcessorContext", "Produced", "PunctuationType", "Record", "RecordMetadata", "Repartitioned",
    "SerializationException", "Serde", "Serdes", "Stores", "StreamsBuilder", "StreamsException", "TestRecord",
    "Topology", "TopologyDescription", "TopologyException", "TopologyTestDriver", "TopologyTestDriverBuilder",
    "ValueAndTimestamp", "ValueTimestampHeaders", "AggregationWithHeaders", "BufferConfig", "Suppressed", "TimeWindows", "SessionWindows",
    "SlidingWindows",
    "JoinWindows", "Windowed", "WindowedSerdes", "TimeWindowedKStream", "SessionWindowedKStream",
    "EmitStrategy", "Joined", "StreamJoined", "FixedKeyProcessor", "FixedKeyProcessorContext", "FixedKeyRecord",
    "check_upgrade", "Finding", "UpgradeReport", "TableJoined", "StreamsConfig",
    "VersionedKeyValueStore", "VersionedRecord", "ValueTransformerWithKey", "TimestampExtractor",
    "FailOnInvalidTimestamp", "LogAndSkipOnInvalidTimestamp", "UsePartitionTimeOnInvalidTimestamp",
    "WallclockTimestampExtractor",
    "RecordContext", "StreamPartitioner", "TopicNameExtractor",
]

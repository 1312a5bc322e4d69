"""streams-on-spark: the Kafka Streams programming model in Python, on Apache Spark Structured Streaming.

Build topologies with :class:`StreamsBuilder` (DSL) or :class:`Topology` (Processor API), test them with the
multi-partition :class:`TopologyTestDriver`, run them with :class:`KafkaStreams`.
"""
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
    RecordMetadata,
)
from streams_on_spark.config import StreamsConfig
from streams_on_spark.serde import Serde, Serdes
from streams_on_spark.serde.windowed import WindowedSerdes
from streams_on_spark.state.factory import Stores
from streams_on_spark.state.stores import ValueAndTimestamp
from streams_on_spark.state.versioned import VersionedKeyValueStore, VersionedRecord
from streams_on_spark.testing import TestRecord, TopologyTestDriver, TopologyTestDriverBuilder
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
    "ValueAndTimestamp", "BufferConfig", "Suppressed", "TimeWindows", "SessionWindows", "SlidingWindows",
    "JoinWindows", "Windowed", "WindowedSerdes", "TimeWindowedKStream", "SessionWindowedKStream",
    "EmitStrategy", "Joined", "StreamJoined", "FixedKeyProcessor", "FixedKeyProcessorContext", "FixedKeyRecord",
    "check_upgrade", "Finding", "UpgradeReport", "TableJoined", "StreamsConfig",
    "VersionedKeyValueStore", "VersionedRecord",
]

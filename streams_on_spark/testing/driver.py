"""``TopologyTestDriver``: run a topology in-process over multi-partition topics (KIP-1238).

Single-partition use works like Kafka's driver. Declaring any topic with more than one partition turns on
multi-partition mode: one task per (subtopology, partition), one store instance per task, records routed by
murmur2 of the serialized key — so a key changed without a repartition splits its state, as in production.
"""
from __future__ import annotations

import logging
import time
from collections import deque
from typing import Any, Mapping, Optional

from streams_on_spark.config import (
    EMIT_INTERVAL_MS_KSTREAMS_OUTER_JOIN_SPURIOUS_RESULTS_FIX,
    EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION,
    TaskConfig,
    dummy_application_id,
)
from streams_on_spark.partitioner import DefaultPartitioner
from streams_on_spark.records import ProducerRecord
from streams_on_spark.errors import IllegalStateError, bad_argument, require_instance, require_int, require_str
from streams_on_spark.metrics import Metrics
from streams_on_spark.processor.api import TaskId
from streams_on_spark.query.iqv2 import StateQueryRequest, StateQueryResult
from streams_on_spark.query.params import KeyQueryMetadata, StoreQueryParameters, StreamsMetadata
from streams_on_spark.query.service import InteractiveQueries
from streams_on_spark.runtime.engine import Engine, check_engine, make_engine
from streams_on_spark.state.headers_stores import (
    SessionStoreFacadeForHeaders,
    SessionStoreWithHeaders,
    TimestampedKeyValueStoreFacadeForHeaders,
    TimestampedKeyValueStoreWithHeaders,
    TimestampedWindowStoreFacadeForHeaders,
    TimestampedWindowStoreWithHeaders,
)
from streams_on_spark.runtime.processor_graph import check_node_serdes
from streams_on_spark.state.stores import KeyValueStore, KeyValueStoreFacade, TimestampedKeyValueStore
from streams_on_spark.state.versioned import VersionedKeyValueStore
from streams_on_spark.testing.queries import DriverQueryableState
from streams_on_spark.testing.topics import TestInputTopic, TestOutputTopic
from streams_on_spark.topology.topology import Topology

log = logging.getLogger(__name__)


class TopologyTestDriver:
    """Pipe records in, read records out, inspect stores — per partition in multi-partition mode."""

    __test__ = False

    def __init__(self, topology: Topology, config: Optional[Mapping[str, Any]] = None,
                 initial_wall_clock_time_ms: Optional[int] = None, *,
                 declared_topics: Optional[Mapping[str, int]] = None, engine: str = "local",
                 spark: Any = None) -> None:
        _check_topology(topology)
        check_engine(engine)
        require_instance(config, "config", Mapping, optional=True)
        require_int(initial_wall_clock_time_ms, "initial_wall_clock_time_ms", optional=True)
        # Kafka's driver disables the emit-final and outer-join throttles unless configured (putIfAbsent(..., 0L))
        # and commits after every record: caches flush per record, on either engine
        config = {EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION: 0,
                  EMIT_INTERVAL_MS_KSTREAMS_OUTER_JOIN_SPURIOUS_RESULTS_FIX: 0, **(config or {})}
        self._config = TaskConfig.from_config(config, default_app_id=dummy_application_id(), commit_every_record=True)
        self._declared = dict(require_instance(declared_topics, "declared_topics", Mapping, optional=True) or {})
        for topic, partitions in self._declared.items():
            _check_declared(topic, partitions)
        self.multi_partition = any(n > 1 for n in self._declared.values())
        wall = int(time.time() * 1000) if initial_wall_clock_time_ms is None else int(initial_wall_clock_time_ms)
        self._topology = topology
        self.engine_name = engine
        check_node_serdes(topology.internal_builder, self._config)   # at start, as Kafka's driver, on either engine
        self._engine: Engine = make_engine(engine, topology.internal_builder, self._config, self._declared,
                                           self.multi_partition, wall, spark)
        self._placement = DefaultPartitioner()
        self._facades: dict[int, KeyValueStoreFacade] = {}
        self._header_facades: dict[int, KeyValueStoreFacade] = {}   # headers-aware stores seen as timestamped
        self._closed = False
        self._queries = InteractiveQueries(DriverQueryableState(self))

    # ------------------------------------------------------------------ context manager
    def __enter__(self) -> "TopologyTestDriver":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def application_id(self) -> str:
        return self._config.application_id

    # ------------------------------------------------------------------ topics
    def create_input_topic(self, name: str, key_serde: Any, value_serde: Any, start_timestamp: Optional[int] = None,
                           auto_advance: Optional[int] = None) -> TestInputTopic:
        """A handle to pipe records into ``name``; ``auto_advance`` moves the topic clock after each record."""
        require_str(name, "topic name")
        return TestInputTopic(self, name, key_serde, value_serde, start_timestamp, auto_advance)

    def create_output_topic(self, name: str, key_serde: Any, value_serde: Any) -> TestOutputTopic:
        """A handle to read what the topology wrote to ``name`` (internal topics by their decorated name)."""
        require_str(name, "topic name")
        return TestOutputTopic(self, name, key_serde, value_serde)

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateError("TopologyTestDriver is closed")

    def _pipe(self, records: list[ProducerRecord]) -> None:
        """Hand routed records to the engine, which processes them to quiescence."""
        self._check_open()
        if len(records) == 1:
            self._engine.pipe(records[0])
        elif records:
            self._engine.pipe_many(records)

    def _route(self, topic: str, key: Optional[bytes], value: Optional[bytes], timestamp: int, headers: Any,
               partition: Optional[int]) -> ProducerRecord:
        """Pick the partition of a piped record: explicit, else murmur2 of the key, else round-robin."""
        self._check_open()
        engine = self._engine
        if topic not in engine.source_topics():
            raise ValueError(f"Unknown topic: {topic}")
        if self.multi_partition and topic not in self._declared:
            raise ValueError(f"Topic {topic} was not declared: in multi-partition mode every input topic must be "
                             "declared with TopologyTestDriverBuilder.declare_topic(name, partitions)")
        n = engine.partitions(topic)
        if partition is not None:
            if not 0 <= partition < n:
                raise ValueError(f"Partition {partition} is out of range for topic {topic}: it has {n} "
                                 f"partition(s), valid partitions are [0, {n})")
        else:
            partition = self._placement.partition(topic, key, n)
        return ProducerRecord(topic, partition, timestamp, key, value, headers)

    def _output(self, topic: str) -> Optional[deque]:
        return self._engine.captured.get(topic)

    def advance_wall_clock_time(self, ms: int) -> None:
        """Move the mock wall clock, fire due WALL_CLOCK_TIME punctuators, process what they emit."""
        self._check_open()
        self._engine.advance_wall_clock(require_int(ms, "advance", minimum=0))

    def produced_topic_names(self) -> set[str]:
        """Every topic written so far, internal (decorated) ones included."""
        return set(self._engine.produced_topics)

    # ------------------------------------------------------------------ stores
    def _store(self, name: str, partition: Optional[int], accessor: str) -> Any:
        """The instance of store ``name`` on ``partition``; ``accessor`` is the public method called, for errors."""
        require_str(name, "store name")
        require_int(partition, "partition", optional=True)
        engine = self._engine
        if name in engine.global_stores:
            return engine.global_stores[name]
        instances = engine.stores(name)
        if not instances:
            return None
        if partition is None:
            if self.multi_partition:
                raise IllegalStateError(f"Store {name} is partitioned in multi-partition mode: pass the partition, "
                                        f"e.g. {accessor}({name!r}, partition=0)")
            partition = 0
        if partition in instances:
            return instances[partition]
        raise ValueError(f"Store {name} has no partition {partition}: its subtopology runs {len(instances)} "
                         f"task(s), partitions [0, {len(instances)})")

    def get_state_store(self, name: str, partition: Optional[int] = None) -> Any:
        """A custom store; built-in stores must be read with their own accessor (as in Kafka, whose text names a
        headers-aware store by the interface it extends: a key-value, window or session store)."""
        store = self._store(name, partition, "get_state_store")
        from streams_on_spark.state.session_stores import SessionStore
        from streams_on_spark.state.window_stores import TimestampedWindowStore, WindowStore
        for kind, what, accessor in (
                (VersionedKeyValueStore, "versioned key-value store", "get_versioned_key_value_store"),
                (TimestampedKeyValueStore, "timestamped key-value store", "get_timestamped_key_value_store"),
                (KeyValueStore, "key-value store", "get_key_value_store"),
                (TimestampedWindowStore, "timestamped window store", "get_timestamped_window_store"),
                (WindowStore, "window store", "get_window_store"),
                (SessionStore, "session store", "get_session_store")):
            if isinstance(store, kind):   # Kafka's texts, with the Python accessor
                raise ValueError(f"Store {name} is a {what} and should be accessed via `{accessor}()`")
        return store

    def get_key_value_store(self, name: str, partition: Optional[int] = None) -> Any:
        """The key-value store ``name`` (of ``partition``'s task); DSL (and headers-aware) stores are shown without
        timestamps (and headers)."""
        store = self._store(name, partition, "get_key_value_store")
        if isinstance(store, (TimestampedKeyValueStore, TimestampedKeyValueStoreWithHeaders)):
            # Kafka 4.3.1's driver's warnings, as it words them (it names the timestamped accessor for both)
            log.warning("Method #get_timestamped_key_value_store() should be used to access a %s.",
                        "TimestampedKeyValueStoreWithHeaders" if isinstance(store, TimestampedKeyValueStoreWithHeaders)
                        else "TimestampedKeyValueStore")
            return _view(self._facades, store, KeyValueStoreFacade)
        return store if isinstance(store, KeyValueStore) else None

    def get_timestamped_key_value_store(self, name: str, partition: Optional[int] = None) -> Any:
        """The timestamped key-value store ``name``; a headers-aware one is shown without its headers."""
        store = self._store(name, partition, "get_timestamped_key_value_store")
        if isinstance(store, TimestampedKeyValueStoreWithHeaders):
            return _view(self._header_facades, store, TimestampedKeyValueStoreFacadeForHeaders)
        return store if isinstance(store, TimestampedKeyValueStore) else None

    def get_timestamped_key_value_store_with_headers(self, name: str, partition: Optional[int] = None) -> Any:
        """The headers-aware key-value store ``name`` (KIP-1271): values are ``ValueTimestampHeaders``."""
        store = self._store(name, partition, "get_timestamped_key_value_store_with_headers")
        return store if isinstance(store, TimestampedKeyValueStoreWithHeaders) else None

    def get_versioned_key_value_store(self, name: str, partition: Optional[int] = None) -> Any:
        """The versioned key-value store ``name`` (KIP-889): ``get(key)``, ``get(key, as_of_timestamp)``."""
        store = self._store(name, partition, "get_versioned_key_value_store")
        return store if isinstance(store, VersionedKeyValueStore) else None

    def get_window_store(self, name: str, partition: Optional[int] = None) -> Any:
        """The window store ``name``; DSL (timestamped) and headers-aware window stores are shown without timestamps
        (and headers)."""
        from streams_on_spark.state.window_stores import TimestampedWindowStore, WindowStore, WindowStoreFacade
        store = self._store(name, partition, "get_window_store")
        if isinstance(store, TimestampedWindowStoreWithHeaders):   # Kafka 4.3.1's driver's warnings
            log.warning("Method #get_timestamped_window_store_with_headers() should be used to access a "
                        "TimestampedWindowStoreWithHeaders.")
        elif isinstance(store, TimestampedWindowStore):
            log.warning("Method #get_timestamped_window_store() should be used to access a TimestampedWindowStore.")
        if isinstance(store, (TimestampedWindowStore, TimestampedWindowStoreWithHeaders)):
            return _view(self._facades, store, WindowStoreFacade)
        return store if isinstance(store, WindowStore) else None

    def get_timestamped_window_store(self, name: str, partition: Optional[int] = None) -> Any:
        """The timestamped window store ``name``; a headers-aware one is shown without its headers."""
        from streams_on_spark.state.window_stores import TimestampedWindowStore
        store = self._store(name, partition, "get_timestamped_window_store")
        if isinstance(store, TimestampedWindowStoreWithHeaders):
            return _view(self._header_facades, store, TimestampedWindowStoreFacadeForHeaders)
        return store if isinstance(store, TimestampedWindowStore) else None

    def get_timestamped_window_store_with_headers(self, name: str, partition: Optional[int] = None) -> Any:
        """The headers-aware window store ``name`` (KIP-1271): values are ``ValueTimestampHeaders``."""
        store = self._store(name, partition, "get_timestamped_window_store_with_headers")
        return store if isinstance(store, TimestampedWindowStoreWithHeaders) else None

    def get_session_store(self, name: str, partition: Optional[int] = None) -> Any:
        """The session store ``name``; a headers-aware one is shown without its headers."""
        from streams_on_spark.state.session_stores import SessionStore
        store = self._store(name, partition, "get_session_store")
        if isinstance(store, SessionStoreWithHeaders):
            return _view(self._facades, store, SessionStoreFacadeForHeaders)
        return store if isinstance(store, SessionStore) else None

    def get_session_store_with_headers(self, name: str, partition: Optional[int] = None) -> Any:
        """The headers-aware session store ``name`` (KIP-1271): aggregations are ``AggregationWithHeaders``."""
        store = self._store(name, partition, "get_session_store_with_headers")
        return store if isinstance(store, SessionStoreWithHeaders) else None

    def get_all_state_stores(self, partition: Optional[int] = None) -> dict[str, Any]:
        """Every store by name: the given partition's instances plus the global stores."""
        names = self._topology.internal_builder.state_factories
        if partition is None and self.multi_partition and names:
            raise IllegalStateError("Stores are partitioned in multi-partition mode: pass the partition, "
                                    "e.g. get_all_state_stores(partition=0)")
        out = {name: self._store(name, partition, "get_all_state_stores") for name in sorted(names)}
        out.update(self._engine.global_stores)
        return out

    def store_partitions(self, name: str) -> list[int]:
        """The partitions that hold an instance of ``name``."""
        return sorted(self._engine.stores(require_str(name, "store name")))

    # ------------------------------------------------------------------ interactive queries
    def store(self, parameters: StoreQueryParameters) -> Any:
        """Kafka's ``KafkaStreams.store()``: a read-only store over every task's instance (see "Querying state")."""
        return self._queries.store(parameters)

    def query(self, request: StateQueryRequest) -> StateQueryResult:
        """Kafka's IQv2 ``KafkaStreams.query()``: one result per partition, each with the position it reflects."""
        return self._queries.query(request)

    def query_metadata_for_key(self, store_name: str, key: Any, key_serializer: Any) -> Optional[KeyQueryMetadata]:
        """Kafka's ``KafkaStreams.queryMetadataForKey()``: the partition (and host) of ``key``'s task."""
        return self._queries.query_metadata_for_key(store_name, key, key_serializer)

    def metadata_for_all_streams_clients(self) -> list[StreamsMetadata]:
        """Kafka's ``KafkaStreams.metadataForAllStreamsClients()``: this instance (its ``application.server``), every
        store and source topic partition of its tasks; empty without ``application.server``."""
        return self._queries.metadata_for_all_streams_clients()

    def streams_metadata_for_store(self, store_name: str) -> list[StreamsMetadata]:
        """Kafka's ``KafkaStreams.streamsMetadataForStore()``: the instances holding ``store_name``."""
        return self._queries.streams_metadata_for_store(store_name)

    def metrics(self) -> Metrics:
        """Kafka's task-level metrics (``stream-task-metrics``, tags ``thread-id`` and ``task-id``) of every task, as
        Kafka's driver's ``metrics()``: a map of :class:`~streams_on_spark.metrics.MetricName` to value, where
        ``metrics()["dropped-records-total"]`` sums a name over the tasks. Provided: ``process-total``,
        ``process-rate``, ``dropped-records-total``, ``dropped-records-rate``; Kafka's other task metrics (latencies,
        ``record-lateness-*``, ``enforced-processing-*``, ``punctuate-*``) and store metrics are not."""
        return self._engine.metrics()

    def task_ids(self) -> list[TaskId]:
        return self._engine.task_ids()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._engine.close()


def _check_topology(topology: Any) -> Topology:
    """What the driver runs: a built ``Topology`` (not the ``StreamsBuilder``)."""
    if not isinstance(topology, Topology):
        raise bad_argument("topology", "a Topology (StreamsBuilder.build())", topology)
    return topology


def _check_declared(name: Any, partitions: Any) -> None:
    """A declared topic: a non-empty name and at least one partition."""
    require_str(name, "topic name")
    require_int(partitions, f"partitions of topic {name}", minimum=1)


def _view(cache: dict[int, Any], store: Any, facade: Any) -> Any:
    """One facade object per store, so repeated accessor calls return the same view."""
    view = cache.get(id(store))
    if view is None:
        view = cache[id(store)] = facade(store)
    return view


class TopologyTestDriverBuilder:
    """Set up a driver: config, initial wall clock and the partition count of every topic."""

    __test__ = False

    def __init__(self, topology: Topology) -> None:
        self._topology = _check_topology(topology)
        self._config: dict[str, Any] = {}
        self._wall: Optional[int] = None
        self._declared: dict[str, int] = {}
        self._engine = "local"
        self._spark: Any = None

    def with_config(self, config: Mapping[str, Any]) -> "TopologyTestDriverBuilder":
        """Add ``config`` (Kafka Streams' keys, e.g. ``application.id``) to the driver's configuration."""
        self._config.update(require_instance(config, "config", Mapping))
        return self

    def with_initial_wall_clock_time(self, ms: int) -> "TopologyTestDriverBuilder":
        """The mock wall clock's start, in epoch ms."""
        self._wall = require_int(ms, "initial wall clock time (ms)")
        return self

    def declare_topic(self, name: str, partitions: int) -> "TopologyTestDriverBuilder":
        """Declare ``name`` with ``partitions`` partitions; any count > 1 turns on multi-partition mode."""
        _check_declared(name, partitions)
        previous = self._declared.get(name)
        if previous is not None and previous != partitions:
            raise ValueError(f"Topic {name} was already declared with {previous} partitions, not {partitions}")
        self._declared[name] = partitions
        return self

    def with_engine(self, engine: str, spark: Any = None) -> "TopologyTestDriverBuilder":
        """``"local"`` (default, in-process) or ``"spark"``: Spark runs the tasks over embedded topics.

        With ``"spark"``, ``spark`` is the SparkSession to use (a local one is made when None).
        """
        self._engine, self._spark = check_engine(engine), spark
        return self

    def build(self) -> TopologyTestDriver:
        return TopologyTestDriver(self._topology, self._config, self._wall, declared_topics=self._declared,
                                  engine=self._engine, spark=self._spark)

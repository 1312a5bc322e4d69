"""Interactive queries over an application's tasks: ``store()``, IQv2 ``query()`` and ``query_metadata_for_key()``.

The one implementation behind ``KafkaStreams`` and ``TopologyTestDriver``: each hands it a :class:`QueryableState`
(its lifecycle state, the topology's store names, the instances of a store per partition with the position each
reflects); the checks, failure reasons and messages are Kafka's (``KafkaStreams.store``/``query``,
``WrappingStoreProvider``, ``StreamThreadStateStoreProvider``, ``StreamsMetadataState``).
"""
from __future__ import annotations

import logging
from contextlib import nullcontext
from typing import Any, ContextManager, Mapping, Optional, Protocol

from streams_on_spark.partitioner import partition_for_key
from streams_on_spark.errors import IllegalStateError, bad_argument, require, require_instance, require_str
from streams_on_spark.query.errors import (
    InvalidStateStoreException,
    InvalidStateStorePartitionException,
    StreamsNotStartedException,
    StreamsStoppedException,
    UnknownStateStoreException,
)
from streams_on_spark.query.execute import execute
from streams_on_spark.query.iqv2 import (
    FailureReason,
    Position,
    PositionBound,
    QueryResult,
    StateQueryRequest,
    StateQueryResult,
)
from streams_on_spark.query.params import (
    HostInfo,
    KeyQueryMetadata,
    QueryableStoreType,
    StoreQueryParameters,
    StreamsMetadata,
    TopicPartition,
)

log = logging.getLogger(__name__)

CREATED, REBALANCING, RUNNING = "CREATED", "REBALANCING", "RUNNING"
# Kafka's stream thread state while the application is REBALANCING here: its tasks' state is being restored
RESTORING_THREAD = "PARTITIONS_ASSIGNED"
STOPPED = frozenset({"PENDING_SHUTDOWN", "NOT_RUNNING", "PENDING_ERROR", "ERROR"})


class QueryableState(Protocol):
    """What an application shows of its tasks to interactive queries."""

    def lifecycle(self) -> str:
        """Kafka's ``KafkaStreams.State`` name: CREATED, RUNNING, PENDING_SHUTDOWN, NOT_RUNNING or ERROR."""

    def store_names(self) -> frozenset:
        """Every store registered in the topology, global ones included."""

    def global_stores(self) -> Mapping[str, Any]:
        """The global stores, by name."""

    def global_store_names(self) -> frozenset:
        """The global stores' names (known without reading them)."""

    def instances(self, store_name: str) -> dict[int, Any]:
        """Partition -> the instance of the store in that partition's task (partition order)."""

    def position(self, store_name: str, partition: int) -> Position:
        """The offsets the instance of ``partition`` reflects (its store's position)."""

    def reflects(self, store_name: str, partition: int) -> str:
        """What the instance of ``partition`` reflects, in words (e.g. its micro-batch), for execution info."""

    def reading(self) -> ContextManager[Any]:
        """Held while a query reads the instances (they stay still meanwhile)."""

    def subtopologies(self) -> list[tuple[frozenset, dict[str, int]]]:
        """Per subtopology run as tasks: its store names and its source topics with their partition counts."""

    def application_server(self) -> Optional[str]:
        """This instance's ``application.server`` (``host:port``), if configured."""


class InteractiveQueries:
    """Kafka's interactive queries over one application's :class:`QueryableState`."""

    def __init__(self, state: QueryableState) -> None:
        self._state = state

    # ------------------------------------------------------------------ IQv1
    def store(self, parameters: StoreQueryParameters) -> Any:
        """A read-only store spanning every task's instance (or the one of ``parameters.partition``)."""
        require_instance(parameters, "storeQueryParameters", StoreQueryParameters)
        self._check_running_or_rebalancing()
        name = parameters.store_name
        if name not in self._state.store_names():
            raise UnknownStateStoreException(f"Cannot get state store {name} because no such store is registered "
                                             "in the topology.")
        store_type = parameters.queryable_store_type
        global_store = self._state.global_stores().get(name)
        if global_store is not None:
            return store_type.create(_GlobalProvider(global_store), name)
        return store_type.create(_TaskProvider(self._state, parameters), name)

    def _check_running_or_rebalancing(self) -> None:
        state = self._state.lifecycle()
        if state == CREATED:
            raise StreamsNotStartedException("KafkaStreams has not been started, you can retry after calling start()")
        if state not in (RUNNING, REBALANCING):
            raise IllegalStateError(f"KafkaStreams is not running. State is {state}.")

    # ------------------------------------------------------------------ IQv2
    def query(self, request: StateQueryRequest) -> StateQueryResult:
        """Run ``request``'s query on every partition it names (all by default), one result per partition."""
        require_instance(request, "request", StateQueryRequest)
        name = request.store_name
        if name not in self._state.store_names():
            raise UnknownStateStoreException(f"Cannot get state store {name} because no such store is registered "
                                             "in the topology.")
        state = self._state.lifecycle()
        if state == CREATED:
            raise StreamsNotStartedException("KafkaStreams has not been started, you can retry after calling "
                                             "start().")
        if state in STOPPED:
            raise StreamsStoppedException(f"KafkaStreams has been stopped ({state}). This instance can no longer "
                                          "serve queries.")
        result = StateQueryResult()
        if name in self._state.global_store_names():
            result.set_global_result(QueryResult.for_failure(
                FailureReason.UNKNOWN_QUERY_TYPE,
                "Global stores do not yet support the KafkaStreams#query API. Use KafkaStreams#store instead."))
            return result
        # Kafka's: a request for active tasks fails each partition whose task is not running, and is answered
        # without its position bound otherwise
        not_active = request.require_active_ and state != RUNNING
        bound = PositionBound.unbounded() if request.require_active_ else request.position_bound
        with self._state.reading():
            for partition, store in self._state.instances(name).items():
                if request.partitions is None or partition in request.partitions:
                    result.add_result(partition, QueryResult.for_failure(
                        FailureReason.NOT_ACTIVE, f"Query requires a running active task, but partition was in state "
                                                  f"{RESTORING_THREAD} and was active.") if not_active else
                        self._execute(store, request, bound, partition))
        if request.partitions is not None:
            for partition in sorted(request.partitions):
                if partition not in result.get_partition_results():
                    result.add_result(partition, QueryResult.for_failure(
                        FailureReason.NOT_PRESENT, "The requested partition was not present at the time of the query."))
        return result

    def _execute(self, store: Any, request: StateQueryRequest, bound: PositionBound, partition: int) -> QueryResult:
        name = request.store_name
        result = execute(store, request.query, bound, self._state.position(name, partition), partition,
                         request.execution_info)
        if request.execution_info:
            result.add_execution_info(f"Partition {partition} of {name} {self._state.reflects(name, partition)}")
        return result

    # ------------------------------------------------------------------ metadata
    def query_metadata_for_key(self, store_name: str, key: Any, key_serializer: Any) -> Optional[KeyQueryMetadata]:
        """Where ``key`` of ``store_name`` lives: the host (``application.server``) and partition of its task;
        ``NOT_AVAILABLE`` before start, None for a store the topology does not have (as Kafka's)."""
        if key_serializer is None or not hasattr(key_serializer, "serialize"):
            raise bad_argument("keySerializer", "a Serializer or Serde (serialize(topic, key))", key_serializer)
        require_str(store_name, "storeName")
        require(key, "key")
        if self._state.lifecycle() == CREATED:
            return KeyQueryMetadata.NOT_AVAILABLE  # type: ignore[attr-defined]
        host = HostInfo.build_from_endpoint(self._state.application_server()) or HostInfo.unavailable()
        if store_name in self._state.global_store_names():
            return KeyQueryMetadata(host, frozenset(), -1)
        if store_name not in self._state.store_names():
            return None
        topic, partitions = self._key_topic(store_name)
        partition = partition_for_key(key_serializer.serialize(topic, key), partitions) if partitions > 1 else 0
        return KeyQueryMetadata(host, frozenset(), partition)

    def _key_topic(self, store_name: str) -> tuple[str, int]:
        """The source topic with the most partitions (the first of those) of the subtopology holding the store."""
        sources = next(topics for stores, topics in self._state.subtopologies() if store_name in stores)
        _, _, topic = max((n, -i, t) for i, (t, n) in enumerate(sources.items()))
        return topic, sources[topic]

    def metadata_for_all_streams_clients(self) -> list[StreamsMetadata]:
        """Every instance of the application with the stores and topic partitions it holds (Kafka's
        ``metadataForAllStreamsClients``): this one, which runs every task; none without ``application.server``
        (Kafka shares instances' metadata only between instances that set it)."""
        self._check_running_or_rebalancing()
        host = HostInfo.build_from_endpoint(self._state.application_server())
        if host is None:
            return []
        stores = {s for names, _ in self._state.subtopologies() for s in names} | self._state.global_store_names()
        partitions = {TopicPartition(t, p) for _, topics in self._state.subtopologies()
                      for t, n in topics.items() for p in range(n)}
        return [StreamsMetadata(host, frozenset(stores), frozenset(partitions))]

    def streams_metadata_for_store(self, store_name: str) -> list[StreamsMetadata]:
        """The instances holding ``store_name`` (Kafka's ``streamsMetadataForStore``): every instance for a global
        store, none for a store the topology does not have."""
        require_str(store_name, "storeName")
        return [m for m in self.metadata_for_all_streams_clients()
                if store_name in m.state_store_names or store_name in m.standby_state_store_names]


def store_position(task: Any, store_name: str) -> Position:
    """A task's store's position (Kafka's ``Position`` of a store): per topic partition of the records that wrote
    it, the offset of the last one; a store written only from one of the task's topics has no component of another."""
    position = Position()
    for (topic, partition), offset in getattr(task.stores[store_name], "position_offsets", {}).items():
        position.with_component(topic, partition, offset)
    return position


def _wrong_type(store_name: str, store_type: QueryableStoreType, store: Any) -> InvalidStateStoreException:
    return InvalidStateStoreException(f"Cannot get state store {store_name} because the queryable store type "
                                      f"[{store_type!r}] does not accept the actual store type "
                                      f"[{type(store).__name__}].")


class _GlobalProvider:
    """The one instance of a global store (Kafka's ``GlobalStateStoreProvider``)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def reading(self) -> ContextManager[Any]:
        return nullcontext()

    def stores(self, store_name: str, store_type: QueryableStoreType) -> list[Any]:
        if not store_type.accepts(self._store):
            raise _wrong_type(store_name, store_type, self._store)
        return [store_type.view(self._store)]


class _TaskProvider:
    """The tasks' instances of a store, found again at every read (Kafka's ``WrappingStoreProvider``)."""

    def __init__(self, state: QueryableState, parameters: StoreQueryParameters) -> None:
        self._state = state
        self._parameters = parameters

    def reading(self) -> ContextManager[Any]:
        return self._state.reading()

    def stores(self, store_name: str, store_type: QueryableStoreType) -> list[Any]:
        partition = self._parameters.partition
        state = self._state.lifecycle()
        # Kafka's stream threads: RUNNING answers; with stale stores, also a thread restoring its tasks (here the
        # application is REBALANCING while it starts: the copies loaded so far answer)
        answering = state == RUNNING or (state == REBALANCING and self._parameters.stale_stores)
        instances = self._state.instances(store_name) if answering else {}
        if not answering and state not in ("NOT_RUNNING", "ERROR"):   # not RUNNING, not yet DEAD
            thread = RESTORING_THREAD if state == REBALANCING else state
            raise InvalidStateStoreException(f"Cannot get state store {store_name} because the stream thread is "
                                             f"{thread}, not RUNNING"
                                             + (" or REBALANCING" if self._parameters.stale_stores else ""))
        if partition is not None:
            instances = {partition: instances[partition]} if partition in instances else {}
        found = []
        for _, store in sorted(instances.items()):
            if not store_type.accepts(store):
                raise _wrong_type(store_name, store_type, store)
            found.append(store_type.view(store))
        if not found:
            if partition is not None:
                raise InvalidStateStorePartitionException(f"The specified partition {partition} for store "
                                                          f"{store_name} does not exist.")
            raise InvalidStateStoreException(f"The state store, {store_name}, may have migrated to another "
                                             "instance.")
        return found

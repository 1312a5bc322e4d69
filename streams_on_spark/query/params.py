"""What an interactive query asks for: ``StoreQueryParameters``, ``QueryableStoreTypes``, ``KeyQueryMetadata``.

Mirrors Kafka's ``org.apache.kafka.streams.StoreQueryParameters`` and ``state.QueryableStoreTypes``: a store type says
which stores it accepts (a key-value type accepts timestamped key-value stores and shows them without timestamps, as
Kafka's ``ReadOnlyKeyValueStoreFacade``) and builds the composite read-only store spanning every task.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional

from streams_on_spark.errors import ConfigException, require_instance, require_int, require_str
from streams_on_spark.query.composite import (
    CompositeReadOnlyKeyValueStore,
    CompositeReadOnlySessionStore,
    CompositeReadOnlyWindowStore,
    StoreProvider,
)
from streams_on_spark.state.headers_stores import (
    SessionStoreFacadeForHeaders,
    SessionStoreWithHeaders,
    TimestampedKeyValueStoreFacadeForHeaders,
    TimestampedKeyValueStoreWithHeaders,
    TimestampedWindowStoreFacadeForHeaders,
    TimestampedWindowStoreWithHeaders,
)
from streams_on_spark.state.session_stores import SessionStore
from streams_on_spark.state.stores import KeyValueStore, KeyValueStoreFacade, TimestampedKeyValueStore
from streams_on_spark.state.window_stores import TimestampedWindowStore, WindowStore, WindowStoreFacade


class QueryableStoreType:
    """Which stores a query accepts, how it shows one task's instance, and the composite store it builds."""

    accepted: tuple[type, ...] = ()
    composite: Any = None

    def accepts(self, store: Any) -> bool:
        return isinstance(store, self.accepted)

    def view(self, store: Any) -> Any:
        """One task's instance as this type reads it."""
        return store

    def create(self, provider: StoreProvider, store_name: str) -> Any:
        """The read-only store over every instance ``provider`` finds, looked up again at each read (as Kafka's)."""
        return self.composite(provider, self, store_name)

    def __repr__(self) -> str:
        return f"QueryableStoreTypes.{type(self).__name__}"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


class KeyValueStoreType(QueryableStoreType):
    accepted = (KeyValueStore,)
    composite = CompositeReadOnlyKeyValueStore

    def view(self, store: Any) -> Any:
        timestamped = isinstance(store, (TimestampedKeyValueStore, TimestampedKeyValueStoreWithHeaders))
        return KeyValueStoreFacade(store) if timestamped else store


class HeadersShownWithout(QueryableStoreType):
    """A type that reads a headers-aware store (``headers_store``) through a ``facade`` without its headers."""

    headers_store: Any = ()
    facade: Any = None

    def view(self, store: Any) -> Any:
        return self.facade(store) if isinstance(store, self.headers_store) else store


class TimestampedKeyValueStoreType(HeadersShownWithout):
    accepted = (TimestampedKeyValueStore, TimestampedKeyValueStoreWithHeaders)
    composite = CompositeReadOnlyKeyValueStore
    headers_store, facade = TimestampedKeyValueStoreWithHeaders, TimestampedKeyValueStoreFacadeForHeaders


class TimestampedKeyValueStoreWithHeadersType(QueryableStoreType):
    accepted = (TimestampedKeyValueStoreWithHeaders,)
    composite = CompositeReadOnlyKeyValueStore


class WindowStoreType(QueryableStoreType):
    accepted = (WindowStore,)
    composite = CompositeReadOnlyWindowStore

    def view(self, store: Any) -> Any:
        timestamped = isinstance(store, (TimestampedWindowStore, TimestampedWindowStoreWithHeaders))
        return WindowStoreFacade(store) if timestamped else store


class TimestampedWindowStoreType(HeadersShownWithout):
    accepted = (TimestampedWindowStore, TimestampedWindowStoreWithHeaders)
    composite = CompositeReadOnlyWindowStore
    headers_store, facade = TimestampedWindowStoreWithHeaders, TimestampedWindowStoreFacadeForHeaders


class TimestampedWindowStoreWithHeadersType(QueryableStoreType):
    accepted = (TimestampedWindowStoreWithHeaders,)
    composite = CompositeReadOnlyWindowStore


class SessionStoreType(HeadersShownWithout):
    accepted = (SessionStore,)
    composite = CompositeReadOnlySessionStore
    headers_store, facade = SessionStoreWithHeaders, SessionStoreFacadeForHeaders


class SessionStoreWithHeadersType(QueryableStoreType):
    accepted = (SessionStoreWithHeaders,)
    composite = CompositeReadOnlySessionStore


class QueryableStoreTypes:
    """Kafka's ``QueryableStoreTypes``: the store types ``KafkaStreams.store()`` can return. Versioned stores are
    queried with IQv2's ``VersionedKeyQuery`` (Kafka has no IQv1 type for them)."""

    @staticmethod
    def key_value_store() -> QueryableStoreType:
        """Key-value stores, timestamped ones shown without their timestamps."""
        return KeyValueStoreType()

    @staticmethod
    def timestamped_key_value_store() -> QueryableStoreType:
        """Timestamped key-value stores: values are ``ValueAndTimestamp``."""
        return TimestampedKeyValueStoreType()

    @staticmethod
    def timestamped_key_value_store_with_headers() -> QueryableStoreType:
        """Headers-aware key-value stores (KIP-1271): values are ``ValueTimestampHeaders``."""
        return TimestampedKeyValueStoreWithHeadersType()

    @staticmethod
    def window_store() -> QueryableStoreType:
        """Window stores, timestamped ones shown without their timestamps."""
        return WindowStoreType()

    @staticmethod
    def timestamped_window_store() -> QueryableStoreType:
        """Timestamped window stores: values are ``ValueAndTimestamp``."""
        return TimestampedWindowStoreType()

    @staticmethod
    def timestamped_window_store_with_headers() -> QueryableStoreType:
        """Headers-aware window stores (KIP-1271): values are ``ValueTimestampHeaders``."""
        return TimestampedWindowStoreWithHeadersType()

    @staticmethod
    def session_store() -> QueryableStoreType:
        """Session stores, headers-aware ones shown without their headers."""
        return SessionStoreType()

    @staticmethod
    def session_store_with_headers() -> QueryableStoreType:
        """Headers-aware session stores (KIP-1271): aggregations are ``AggregationWithHeaders``."""
        return SessionStoreWithHeadersType()


@dataclass(frozen=True)
class StoreQueryParameters:
    """Kafka's ``StoreQueryParameters``: a store name and type, optionally one partition, optionally stale stores."""

    store_name: str
    queryable_store_type: QueryableStoreType
    partition: Optional[int] = None
    stale_stores: bool = False

    @staticmethod
    def from_name_and_type(store_name: str, queryable_store_type: QueryableStoreType) -> "StoreQueryParameters":
        require_str(store_name, "storeName")
        require_instance(queryable_store_type, "queryableStoreType", QueryableStoreType)
        return StoreQueryParameters(store_name, queryable_store_type)

    def with_partition(self, partition: Optional[int]) -> "StoreQueryParameters":
        """Query only the task of ``partition`` (None: every task)."""
        return replace(self, partition=require_int(partition, "partition", minimum=0, optional=True))

    def enable_stale_stores(self) -> "StoreQueryParameters":
        """Also answer while the tasks' state is being restored: here while the application starts (REBALANCING),
        from the copies loaded so far (see "Querying state")."""
        return replace(self, stale_stores=True)

    def stale_stores_enabled(self) -> bool:
        return self.stale_stores


@dataclass(frozen=True)
class HostInfo:
    """Kafka's ``HostInfo``: the ``application.server`` of an instance; ``unavailable()`` when none is set."""

    host: str
    port: int

    @staticmethod
    def unavailable() -> "HostInfo":
        return HostInfo("unavailable", -1)

    @staticmethod
    def build_from_endpoint(endpoint: Optional[str]) -> Optional["HostInfo"]:
        """``host:port`` (Kafka's ``application.server``) as a HostInfo; None for an empty endpoint."""
        if not endpoint:
            return None
        host, sep, port = str(endpoint).rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ConfigException(f"Error parsing host address {endpoint}. Expected format host:port.")
        return HostInfo(host, int(port))


@dataclass(frozen=True)
class KeyQueryMetadata:
    """Kafka's ``KeyQueryMetadata``: the instance whose active task holds a key, its standbys, and the partition."""

    active_host: HostInfo
    standby_hosts: frozenset = field(default_factory=frozenset)
    partition: int = -1


@dataclass(frozen=True, order=True)
class TopicPartition:
    """Kafka's ``TopicPartition``: a topic's name and one of its partitions."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class StreamsMetadata:
    """Kafka's ``StreamsMetadata``: an instance of the application (its ``application.server``), the stores and the
    topic partitions of its tasks (active, and standby: none here)."""

    host_info: HostInfo
    state_store_names: frozenset = field(default_factory=frozenset)
    topic_partitions: frozenset = field(default_factory=frozenset)
    standby_state_store_names: frozenset = field(default_factory=frozenset)
    standby_topic_partitions: frozenset = field(default_factory=frozenset)

    def host(self) -> str:
        return self.host_info.host

    def port(self) -> int:
        return self.host_info.port


#: Kafka's ``KeyQueryMetadata.NOT_AVAILABLE``: the application is not running (yet)
KeyQueryMetadata.NOT_AVAILABLE = KeyQueryMetadata(HostInfo.unavailable(), frozenset(), -1)  # type: ignore[attr-defined]

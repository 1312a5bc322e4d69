"""``Stores``: Kafka's factories for store suppliers and builders, key-value, window and session alike."""
from __future__ import annotations

from typing import Any

from streams_on_spark.state.headers_stores import (
    PersistentSessionHeadersBytesStoreSupplier,
    PersistentWindowHeadersBytesStoreSupplier,
    SessionStoreWithHeadersBuilder,
    TimestampedKeyValueStoreWithHeadersBuilder,
    TimestampedWindowStoreWithHeadersBuilder,
)
from streams_on_spark.state.lru_store import LruMapBytesStoreSupplier
from streams_on_spark.state.stores import (
    KeyValueBytesStoreSupplier,
    KeyValueStoreBuilder,
    PersistentKeyValueBytesStoreSupplier,
    PersistentKeyValueHeadersBytesStoreSupplier,
    TimestampedKeyValueStoreBuilder,
)
from streams_on_spark.state.session_stores import (
    PersistentSessionBytesStoreSupplier,
    SessionBytesStoreSupplier,
    SessionStoreBuilder,
)
from streams_on_spark.state.window_stores import (
    PersistentWindowBytesStoreSupplier,
    TimestampedWindowStoreBuilder,
    WindowBytesStoreSupplier,
    WindowStoreBuilder,
)
from streams_on_spark.state.versioned import (
    VersionedBytesStoreSupplier,
    VersionedKeyValueStoreBuilder,
    default_segment_interval,
)
from streams_on_spark.window import java_duration_string, validate_millis


class Stores:
    """Factories for store suppliers and builders, named like Kafka's ``Stores``."""

    @staticmethod
    def in_memory_key_value_store(name: str) -> KeyValueBytesStoreSupplier:
        return KeyValueBytesStoreSupplier(_require_name(name))

    @staticmethod
    def lru_map(name: str, max_cache_size: int) -> LruMapBytesStoreSupplier:
        """Kafka's ``Stores.lruMap``: an in-memory key-value store keeping the ``max_cache_size`` most recently used
        entries (``state/lru_store.py``); ranges read it in key-bytes order."""
        _require_name(name)
        if isinstance(max_cache_size, bool) or not isinstance(max_cache_size, int):
            raise TypeError(f"max_cache_size must be an int, got {type(max_cache_size).__name__}")
        if max_cache_size < 0:
            raise ValueError("maxCacheSize cannot be negative")
        return LruMapBytesStoreSupplier(name, max_cache_size)

    @staticmethod
    def persistent_key_value_store(name: str) -> PersistentKeyValueBytesStoreSupplier:
        """Kafka's ``Stores.persistentKeyValueStore``: RocksDB's rules, in memory in the in-process engine, in the
        task's local RocksDB on Spark. It keeps no timestamps: a timestamped store (a DSL one) built over it reads
        every value with the timestamp -1 where the record cache does not answer, as Kafka's adapter does."""
        return PersistentKeyValueBytesStoreSupplier(_require_name(name), timestamped=False)

    @staticmethod
    def persistent_timestamped_key_value_store(name: str) -> PersistentKeyValueBytesStoreSupplier:
        """Kafka's ``Stores.persistentTimestampedKeyValueStore``: the RocksDB supplier keeping values with their
        timestamps (what the DSL's stores are)."""
        return PersistentKeyValueBytesStoreSupplier(_require_name(name), timestamped=True)

    @staticmethod
    def persistent_timestamped_key_value_store_with_headers(name: str) -> PersistentKeyValueHeadersBytesStoreSupplier:
        """Kafka 4.3's RocksDB supplier of a headers-aware key-value store (KIP-1271): for
        ``timestamped_key_value_store_with_headers_builder``; the DSL's ``Materialized`` refuses it (the DSL builds its
        stores headers-aware under ``dsl.store.format=HEADERS``, over its own suppliers)."""
        return PersistentKeyValueHeadersBytesStoreSupplier(_require_name(name))

    @staticmethod
    def key_value_store_builder(supplier: KeyValueBytesStoreSupplier, key_serde: Any = None,
                                value_serde: Any = None) -> KeyValueStoreBuilder:
        return KeyValueStoreBuilder(supplier, key_serde, value_serde)

    @staticmethod
    def timestamped_key_value_store_builder(supplier: KeyValueBytesStoreSupplier, key_serde: Any = None,
                                            value_serde: Any = None) -> TimestampedKeyValueStoreBuilder:
        return TimestampedKeyValueStoreBuilder(supplier, key_serde, value_serde)

    @staticmethod
    def timestamped_key_value_store_with_headers_builder(
            supplier: KeyValueBytesStoreSupplier, key_serde: Any = None,
            value_serde: Any = None) -> TimestampedKeyValueStoreWithHeadersBuilder:
        """Kafka 4.3's headers-aware key-value store (KIP-1271): values are ``ValueTimestampHeaders``."""
        return TimestampedKeyValueStoreWithHeadersBuilder(supplier, key_serde, value_serde)

    @staticmethod
    def in_memory_window_store(name: str, retention_period: Any, window_size: Any,
                               retain_duplicates: bool) -> WindowBytesStoreSupplier:
        """An in-memory window store keeping windows for ``retention_period`` (``>= window_size``)."""
        retention_ms, size_ms = _window_params(name, retention_period, window_size)
        return WindowBytesStoreSupplier(name, retention_ms, size_ms, retain_duplicates)

    @staticmethod
    def persistent_window_store(name: str, retention_period: Any, window_size: Any,
                                retain_duplicates: bool) -> PersistentWindowBytesStoreSupplier:
        """A window store that reads, orders and expires as Kafka's RocksDB one: in memory in the in-process engine,
        in the task's local RocksDB on Spark. It keeps no timestamps: a timestamped store (a DSL one) built over it
        reads every value with the timestamp -1 where the record cache does not answer, as Kafka's adapter does."""
        retention_ms, size_ms = _window_params(name, retention_period, window_size)
        return PersistentWindowBytesStoreSupplier(name, retention_ms, size_ms, retain_duplicates, timestamped=False)

    @staticmethod
    def persistent_timestamped_window_store(name: str, retention_period: Any, window_size: Any,
                                            retain_duplicates: bool) -> PersistentWindowBytesStoreSupplier:
        """Kafka's ``Stores.persistentTimestampedWindowStore``: the RocksDB window supplier keeping values with their
        timestamps (what the DSL's windowed stores are), with the checks of ``persistent_window_store``."""
        retention_ms, size_ms = _window_params(name, retention_period, window_size)
        return PersistentWindowBytesStoreSupplier(name, retention_ms, size_ms, retain_duplicates)

    @staticmethod
    def persistent_timestamped_window_store_with_headers(
            name: str, retention_period: Any, window_size: Any,
            retain_duplicates: bool) -> PersistentWindowHeadersBytesStoreSupplier:
        """Kafka 4.3's RocksDB supplier of a headers-aware window store (KIP-1271), with the checks of
        ``persistent_window_store``: for ``timestamped_window_store_with_headers_builder``."""
        retention_ms, size_ms = _window_params(name, retention_period, window_size)
        return PersistentWindowHeadersBytesStoreSupplier(name, retention_ms, size_ms, retain_duplicates)

    @staticmethod
    def in_memory_session_store(name: str, retention_period: Any) -> SessionBytesStoreSupplier:
        """An in-memory session store keeping sessions whose end is within ``retention_period`` of stream time."""
        return SessionBytesStoreSupplier(name, _session_retention(name, retention_period))

    @staticmethod
    def persistent_session_store(name: str, retention_period: Any) -> PersistentSessionBytesStoreSupplier:
        """A session store that reads, orders and expires as Kafka's RocksDB one (the DSL default): in memory in the
        in-process engine, in the task's local RocksDB on Spark."""
        return PersistentSessionBytesStoreSupplier(name, _session_retention(name, retention_period))

    @staticmethod
    def persistent_session_store_with_headers(name: str,
                                              retention_period: Any) -> PersistentSessionHeadersBytesStoreSupplier:
        """Kafka 4.3's RocksDB supplier of a headers-aware session store (KIP-1271): for
        ``session_store_with_headers_builder``."""
        return PersistentSessionHeadersBytesStoreSupplier(name, _session_retention(name, retention_period))

    @staticmethod
    def window_store_builder(supplier: WindowBytesStoreSupplier, key_serde: Any = None,
                             value_serde: Any = None) -> WindowStoreBuilder:
        return WindowStoreBuilder(supplier, key_serde, value_serde)

    @staticmethod
    def timestamped_window_store_builder(supplier: WindowBytesStoreSupplier, key_serde: Any = None,
                                         value_serde: Any = None) -> TimestampedWindowStoreBuilder:
        return TimestampedWindowStoreBuilder(supplier, key_serde, value_serde)

    @staticmethod
    def timestamped_window_store_with_headers_builder(
            supplier: WindowBytesStoreSupplier, key_serde: Any = None,
            value_serde: Any = None) -> TimestampedWindowStoreWithHeadersBuilder:
        """Kafka 4.3's headers-aware window store (KIP-1271): values are ``ValueTimestampHeaders``."""
        return TimestampedWindowStoreWithHeadersBuilder(supplier, key_serde, value_serde)

    @staticmethod
    def session_store_builder(supplier: SessionBytesStoreSupplier, key_serde: Any = None,
                              value_serde: Any = None) -> SessionStoreBuilder:
        return SessionStoreBuilder(supplier, key_serde, value_serde)

    @staticmethod
    def session_store_with_headers_builder(supplier: SessionBytesStoreSupplier, key_serde: Any = None,
                                           value_serde: Any = None) -> SessionStoreWithHeadersBuilder:
        """Kafka 4.3's headers-aware session store (KIP-1271): aggregations are ``AggregationWithHeaders``."""
        return SessionStoreWithHeadersBuilder(supplier, key_serde, value_serde)


    @staticmethod
    def persistent_versioned_key_value_store(name: str, history_retention: Any,
                                             segment_interval: Any = None) -> VersionedBytesStoreSupplier:
        """A versioned key-value store (KIP-889) keeping each key's versions for ``history_retention`` behind stream
        time: in memory in the in-process engine, in the task's local RocksDB on Spark. ``segment_interval`` is
        checked as Kafka's and kept (versions are kept per key here, not in segments)."""
        _require_name(name)
        retention_ms = validate_millis(history_retention, "historyRetention")
        if retention_ms < 0:
            raise ValueError("historyRetention cannot be negative")
        if segment_interval is None:
            return VersionedBytesStoreSupplier(name, retention_ms, default_segment_interval(retention_ms))
        interval_ms = validate_millis(segment_interval, "segmentInterval")
        if interval_ms < 1:
            raise ValueError("segmentInterval cannot be zero or negative")
        return VersionedBytesStoreSupplier(name, retention_ms, interval_ms)

    @staticmethod
    def versioned_key_value_store_builder(supplier: VersionedBytesStoreSupplier, key_serde: Any = None,
                                          value_serde: Any = None) -> VersionedKeyValueStoreBuilder:
        """A builder of :class:`~streams_on_spark.state.versioned.VersionedKeyValueStore` (for ``add_state_store``)."""
        return VersionedKeyValueStoreBuilder(supplier, key_serde, value_serde)

def _require_name(name: str) -> str:
    """Kafka's ``Objects.requireNonNull(name, "name cannot be null")`` of every ``Stores`` factory."""
    if name is None:
        raise ValueError("name cannot be null")
    return name


def _window_params(name: str, retention_period: Any, window_size: Any) -> tuple[int, int]:
    """Kafka's checks of a window store's name, retention and size; the two in milliseconds."""
    _require_name(name)
    retention_ms = validate_millis(retention_period, "retentionPeriod")
    if retention_ms < 0:
        raise ValueError("retentionPeriod cannot be negative")
    size_ms = validate_millis(window_size, "windowSize")
    if size_ms < 0:
        raise ValueError("windowSize cannot be negative")
    if size_ms > retention_ms:
        raise ValueError(f"The retention period of the window store {name} must be no smaller than its window "
                         f"size. Got size=[{java_duration_string(size_ms)}], "
                         f"retention=[{java_duration_string(retention_ms)}]")
    return retention_ms, size_ms


def _session_retention(name: str, retention_period: Any) -> int:
    _require_name(name)
    retention_ms = validate_millis(retention_period, "retentionPeriod")
    if retention_ms < 0:
        raise ValueError("retentionPeriod cannot be negative")
    return retention_ms


__all__ = ["Stores"]

"""Versioned key-value stores (KIP-889): every key's record versions within a history retention, read as of a time.

Kafka's ``RocksDBVersionedStore`` keeps the latest version per key and older ones in time segments; this store keeps
the same versions, per key, in one entry of a key-value bytes store (in memory, or the task's local RocksDB on Spark),
so its reads, return codes and expiry are Kafka's: a put older than ``observed stream time - history retention`` is not
put (and counted as a dropped record), a read as of a time older than that finds only the latest version, and the
latest version of a key never expires.
"""
from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from typing import Any, Generic, Optional, TypeVar

from streams_on_spark.state.stores import InMemoryKeyValueBytesStore, SerdeStore, StoreBuilder

log = logging.getLogger(__name__)

V = TypeVar("V")

#: ``put``'s return code when the record put is its key's latest version (its validity has no end yet)
PUT_RETURN_CODE_VALID_TO_UNDEFINED = -1
#: ``put``'s return code when the record was older than the history retention and was not put
PUT_RETURN_CODE_NOT_PUT = -(1 << 63)
NO_TIMESTAMP = -1

_VERSION = struct.Struct(">qi")      # a version's timestamp and value length (-1: a tombstone)
_TIME = struct.Struct(">q")
_META = b"\x00"                      # the store's observed stream time
_DATA = b"\x01"                      # prefix of every key's versions

#: one key's versions, oldest first: ``(valid_from, value bytes or None for a tombstone)``
Versions = list[tuple[int, Optional[bytes]]]


@dataclass(frozen=True, slots=True)
class VersionedRecord(Generic[V]):
    """A value with the time it became valid and, unless it is its key's latest version, the time it stopped being
    valid (exclusive): Kafka's ``VersionedRecord``."""

    value: V
    timestamp: int
    valid_to: Optional[int] = None

    def __post_init__(self) -> None:
        if self.value is None:
            raise ValueError("value cannot be null.")


def pack_versions(versions: Versions) -> bytes:
    """One key's versions as bytes: per version its timestamp, value length (-1: tombstone) and value."""
    out = []
    for ts, value in versions:
        out.append(_VERSION.pack(ts, -1 if value is None else len(value)))
        if value is not None:
            out.append(value)
    return b"".join(out)


def unpack_versions(data: Optional[bytes]) -> Versions:
    """What :func:`pack_versions` wrote (nothing for None)."""
    versions: Versions = []
    if data is None:
        return versions
    pos, end = 0, len(data)
    while pos < end:
        ts, n = _VERSION.unpack_from(data, pos)
        pos += _VERSION.size
        if n < 0:
            versions.append((ts, None))
        else:
            versions.append((ts, data[pos:pos + n]))
            pos += n
    return versions


class VersionedKeyValueStore(SerdeStore, Generic[V]):
    """Kafka's ``VersionedKeyValueStore``: ``put(key, value, timestamp)``, ``get(key)``, ``get(key, as_of)`` and
    ``delete(key, timestamp)`` over a key-value bytes store (keys prefixed, one entry per key with its versions)."""

    def __init__(self, inner: Any, key_serde: Any = None, value_serde: Any = None,
                 history_retention_ms: int = 0) -> None:
        self._init_serdes(inner, key_serde, value_serde)
        self.history_retention_ms = history_retention_ms
        self.metrics: Any = None

    def init(self, context: Any) -> None:
        super().init(context)
        self.metrics = getattr(context, "metrics", None)

    @property
    def persistent(self) -> bool:
        return True

    # ------------------------------------------------------------------ stream time (kept in the bytes store)
    def observed_stream_time(self) -> int:
        """The largest timestamp put or deleted so far (-1: none): what history retention counts back from."""
        data = self.inner.get(_META)
        return NO_TIMESTAMP if data is None else _TIME.unpack(data)[0]

    def _expired(self, timestamp: int, stream_time: int) -> bool:
        return stream_time != NO_TIMESTAMP and timestamp < stream_time - self.history_retention_ms

    # ------------------------------------------------------------------ writes
    def put(self, key: Any, value: Optional[V], timestamp: int) -> int:
        """Add a version of ``key`` valid from ``timestamp`` (None: a tombstone); its valid-to time, or
        :data:`PUT_RETURN_CODE_VALID_TO_UNDEFINED` if it is the latest, or :data:`PUT_RETURN_CODE_NOT_PUT` if it is
        older than the history retention."""
        kb = self._kser(key)
        if not isinstance(timestamp, int):
            raise ValueError(f"timestamp must be an int (milliseconds), got {type(timestamp).__name__} "
                             f"(store {self.name})")
        valid_to = self._put(kb, self._vser(value), timestamp)
        self._written()   # Kafka's: an expired put too
        return valid_to

    def _put(self, kb: bytes, raw: Optional[bytes], timestamp: int) -> int:
        stream_time = self.observed_stream_time()
        if self._expired(timestamp, stream_time):
            self._record_expired("put")
            return PUT_RETURN_CODE_NOT_PUT
        if timestamp > stream_time:
            stream_time = timestamp
            self.inner.put(_META, _TIME.pack(stream_time))
        versions = unpack_versions(self.inner.get(_DATA + kb))
        i = _index_at_or_before(versions, timestamp)
        if i >= 0 and versions[i][0] == timestamp:
            versions[i] = (timestamp, raw)           # same timestamp: the new value replaces the version
        else:
            i += 1
            versions.insert(i, (timestamp, raw))
        valid_to = versions[i + 1][0] if i + 1 < len(versions) else PUT_RETURN_CODE_VALID_TO_UNDEFINED
        self._prune(versions, stream_time)
        self.inner.put(_DATA + kb, pack_versions(versions))
        return valid_to

    def _prune(self, versions: Versions, stream_time: int) -> None:
        """Drop the versions no read can reach any more: those that stopped being valid before the retention (the
        latest one always stays)."""
        horizon = stream_time - self.history_retention_ms
        drop = 0
        while drop + 1 < len(versions) and versions[drop + 1][0] <= horizon:
            drop += 1
        if drop:
            del versions[:drop]

    def _record_expired(self, operation: str) -> None:
        if self.metrics is not None:
            self.metrics.record_dropped()
        log.warning("Skipping record for expired %s.", operation)

    def delete(self, key: Any, timestamp: int) -> Optional[VersionedRecord[V]]:
        """A tombstone at ``timestamp``; the version valid at that time before the delete, without ``valid_to`` as
        Kafka's (None: none, or the time is older than the history retention, when nothing is deleted)."""
        kb = self._kser(key)
        if self._expired(timestamp, self.observed_stream_time()):
            self._record_expired("delete")
            return None
        before = self._get_as_of(kb, timestamp)
        self._put(kb, None, timestamp)
        self._written()
        return before

    # ------------------------------------------------------------------ reads
    def get(self, key: Any, as_of_timestamp: Optional[int] = None) -> Optional[VersionedRecord[V]]:
        """The latest version of ``key``, or with ``as_of_timestamp`` the version valid then; None if there is none, or
        it is a tombstone. Without ``valid_to``, as Kafka's store answers (its metered layer keeps value and
        timestamp only)."""
        kb = self._kser(key)
        if as_of_timestamp is None:
            versions = unpack_versions(self.inner.get(_DATA + kb))
            if not versions or versions[-1][1] is None:
                return None
            ts, raw = versions[-1]
            return VersionedRecord(self._vde(raw), ts)
        return self._get_as_of(kb, as_of_timestamp)

    def get_version(self, key: Any, as_of_timestamp: int) -> Optional[VersionedRecord[V]]:
        """The version of ``key`` valid at ``as_of_timestamp`` with its ``valid_to`` (the next version's timestamp),
        as IQv2's ``VersionedKeyQuery`` answers (``get`` leaves ``valid_to`` out, as Kafka's metered store does)."""
        return self._get_as_of(self._kser(key), as_of_timestamp, with_valid_to=True)

    def _get_as_of(self, kb: bytes, as_of: int, with_valid_to: bool = False) -> Optional[VersionedRecord[V]]:
        versions = unpack_versions(self.inner.get(_DATA + kb))
        if not versions:
            return None
        latest_ts, latest = versions[-1]
        if latest_ts <= as_of:   # the latest version never expires
            return None if latest is None else VersionedRecord(self._vde(latest), latest_ts)
        if self._expired(as_of, self.observed_stream_time()):
            log.warning("Returning null for expired get.")
            return None
        i = _index_at_or_before(versions, as_of)
        if i < 0 or versions[i][1] is None:
            return None
        ts, raw = versions[i]
        return VersionedRecord(self._vde(raw), ts, versions[i + 1][0] if with_valid_to else None)

    def approximate_num_entries(self) -> int:
        """Keys with a version (the stream-time entry left out)."""
        return max(0, self.inner.approximate_num_entries() - (self.inner.get(_META) is not None))


def _index_at_or_before(versions: Versions, timestamp: int) -> int:
    """The index of the last version valid from ``timestamp`` or earlier (-1: none)."""
    lo, hi = 0, len(versions)
    while lo < hi:
        mid = (lo + hi) // 2
        if versions[mid][0] <= timestamp:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


class VersionedBytesStoreSupplier:
    """``Stores.persistent_versioned_key_value_store``: a versioned store's name, history retention and segment
    interval (kept for Kafka's API; versions here are kept per key, not in segments)."""

    def __init__(self, name: str, history_retention_ms: int, segment_interval_ms: int) -> None:
        if not name:
            raise ValueError("store name cannot be null or empty")
        self.name = name
        self.history_retention_ms = history_retention_ms
        self.segment_interval_ms = segment_interval_ms

    def get(self) -> InMemoryKeyValueBytesStore:
        """The bytes store the versions are kept in (in memory; on Spark the engine gives the task's RocksDB)."""
        return InMemoryKeyValueBytesStore(self.name)

    def metrics_scope(self) -> str:
        return "rocksdb"

    def __repr__(self) -> str:
        return (f"VersionedBytesStoreSupplier({self.name!r}, history_retention_ms={self.history_retention_ms}, "
                f"segment_interval_ms={self.segment_interval_ms})")


def default_segment_interval(history_retention_ms: int) -> int:
    """Kafka's segment interval for a history retention (``RocksDbVersionedKeyValueBytesStoreSupplier``)."""
    if history_retention_ms <= 60_000:
        return max(history_retention_ms // 3, 2_000)
    if history_retention_ms <= 300_000:
        return max(history_retention_ms // 5, 20_000)
    if history_retention_ms <= 3_600_000:
        return max(history_retention_ms // 12, 60_000)
    return max(history_retention_ms // 24, 300_000)


class VersionedKeyValueStoreBuilder(StoreBuilder):
    """Builds a :class:`VersionedKeyValueStore` (never cached, as Kafka's); the engine may keep its bytes."""

    own_suppliers = (VersionedBytesStoreSupplier,)

    def __init__(self, supplier: VersionedBytesStoreSupplier, key_serde: Any = None, value_serde: Any = None) -> None:
        if supplier is None:
            raise ValueError("supplier cannot be null")
        if not isinstance(supplier, VersionedBytesStoreSupplier):
            raise ValueError(f"supplier must be a versioned store supplier (Stores.persistent_versioned_key_value_"
                             f"store), got {type(supplier).__name__}")
        self.supplier = supplier
        self.name = supplier.name
        self.key_serde = key_serde
        self.value_serde = value_serde
        self.logging_enabled = True

    def with_caching_enabled(self) -> "StoreBuilder":
        """Versioned stores have no record cache (Kafka logs this and leaves caching off)."""
        log.info("Not enabling caching for store '%s' as versioned stores do not support caching.", self.name)
        return self

    def build(self, bytes_store: Any = None) -> VersionedKeyValueStore:
        """The store over ``bytes_store`` (where the engine keeps it), or over a new in-memory one."""
        inner = self.supplier.get() if bytes_store is None else bytes_store
        return VersionedKeyValueStore(inner, self.key_serde, self.value_serde, self.supplier.history_retention_ms)


__all__ = ["VersionedRecord", "VersionedKeyValueStore", "VersionedBytesStoreSupplier", "VersionedKeyValueStoreBuilder",
           "PUT_RETURN_CODE_VALID_TO_UNDEFINED", "PUT_RETURN_CODE_NOT_PUT", "default_segment_interval"]

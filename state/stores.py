"""Key-value stores: an in-memory bytes store, typed and timestamped views, builders and ``Stores``.

Stores keep serialized bytes, as Kafka's do, so keys order by their bytes (``range``/``all``) and a value read
back is always a fresh copy, never an alias of an object a processor may still mutate.
"""
from __future__ import annotations

import bisect
import logging
import struct
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterator, Optional, TypeVar

from streams_on_spark.errors import IllegalStateError, StreamsException, UnsupportedOperationError
from streams_on_spark.keyvalue import KeyValue
from streams_on_spark.state.caching import (
    CachingBytesStore,
    CachingKeyValueBytesStore,
    FlushListener,
    NoRecordInProcess,
    record_context,
)

log = logging.getLogger(__name__)

K = TypeVar("K")
V = TypeVar("V")
_TS = struct.Struct(">q")
_IMMUTABLE = frozenset({str, int, float, bytes, bool})


INVALID_RANGE_WARNING = ("Returning empty iterator for fetch with invalid key range: from > to. This may be due to "
                         "range arguments set in the wrong order, or serdes that don't preserve ordering when "
                         "lexicographically comparing the serialized bytes. Note that the built-in numerical serdes "
                         "do not follow this for negative numbers")


def invalid_range(key_from: Optional[bytes], key_to: Optional[bytes]) -> bool:
    """Whether ``key_from > key_to`` (then Kafka's stores warn, as this does, and return nothing)."""
    if key_from is not None and key_to is not None and key_from > key_to:
        log.warning(INVALID_RANGE_WARNING)
        return True
    return False


_ORDERED_TIME = struct.Struct(">Q")


def ordered_time(t: int) -> bytes:
    """A time (or segment id) as 8 bytes whose byte order is the numeric order, negative ones first: the time part
    of keys that local window, session and buffer stores read in time order."""
    return _ORDERED_TIME.pack(t + (1 << 63))


def time_of(data: bytes) -> int:
    """The time :func:`ordered_time` encoded."""
    return _ORDERED_TIME.unpack(data)[0] - (1 << 63)


def prefix_upper_bound(prefix: bytes) -> Optional[bytes]:
    """The smallest key above every key starting with ``prefix`` (None: no such key), so a prefix scan is a range
    read of ``[prefix, bound]`` minus the bound itself."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])


class KeyValueIterator(Iterator[KeyValue]):
    """What a store read returns (Kafka's ``KeyValueIterator``, and ``WindowStoreIterator`` whose keys are window
    starts): a Python iterator over a snapshot of the entries, so the store may be written while it is read; with
    Kafka's ``peek_next_key`` and ``close``, and a context manager as Java's try-with-resources."""

    def __init__(self, entries: list[KeyValue]) -> None:
        self._entries = entries
        self._position = 0

    def __iter__(self) -> "KeyValueIterator":
        return self

    def __next__(self) -> KeyValue:
        if self._position >= len(self._entries):
            raise StopIteration
        self._position += 1
        return self._entries[self._position - 1]

    def peek_next_key(self) -> Any:
        """The key of the next entry without moving past it; ``StopIteration`` when there is none (Kafka's
        ``NoSuchElementException``)."""
        if self._position >= len(self._entries):
            raise StopIteration("no more entries")
        return self._entries[self._position].key

    def close(self) -> None:
        """End the iteration (a snapshot holds nothing of the store's to release)."""
        self._position = len(self._entries)

    def __enter__(self) -> "KeyValueIterator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class StateStore(ABC):
    """A named store owned by one task (or by the global task)."""

    name: str

    def init(self, context: Any) -> None:
        """Bind the store to its task; resolves default serdes from the task config."""

    def close(self) -> None:
        pass

    @property
    def persistent(self) -> bool:
        return False


class InMemoryKeyValueBytesStore(StateStore):
    """``bytes -> bytes`` map ordered by key bytes on iteration, like Kafka's ``InMemoryKeyValueStore``."""

    _writes = 0   # keys added or removed so far: an open scan fails clearly if they change under it

    def __init__(self, name: str) -> None:
        self.name = name
        self._map: dict[bytes, bytes] = {}
        self._sorted: Optional[list[bytes]] = None

    def get(self, key: bytes) -> Optional[bytes]:
        return self._map.get(key)

    def get_many(self, keys: list[bytes]) -> list[Optional[bytes]]:
        """The values of ``keys``, in order (None where absent)."""
        return list(map(self._map.get, keys))

    def put(self, key: bytes, value: Optional[bytes]) -> None:
        if value is None:
            self.delete(key)
            return
        if key not in self._map:
            self._writes += 1
            if self._sorted is not None:
                bisect.insort(self._sorted, key)   # kept sorted once a range read needed it: later reads stay cheap
        self._map[key] = value

    def delete(self, key: bytes) -> Optional[bytes]:
        old = self._map.pop(key, None)
        if old is not None:
            self._writes += 1
            if self._sorted is not None:
                del self._sorted[bisect.bisect_left(self._sorted, key)]
        return old

    def _keys(self) -> list[bytes]:
        if self._sorted is None:
            self._sorted = sorted(self._map)
        return self._sorted

    def range(self, key_from: Optional[bytes], key_to: Optional[bytes], reverse: bool = False) -> list[tuple[bytes, bytes]]:
        if invalid_range(key_from, key_to):
            return []
        keys = self._keys()
        lo = 0 if key_from is None else bisect.bisect_left(keys, key_from)
        hi = len(keys) if key_to is None else bisect.bisect_right(keys, key_to)
        selected = keys[lo:hi]
        if reverse:
            selected = selected[::-1]
        m = self._map
        return [(k, m[k]) for k in selected]

    def scan(self, key_from: Optional[bytes], key_to: Optional[bytes],
             reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        """The entries of :meth:`range`, read lazily: a caller that stops early pays for what it read. Not a
        snapshot: do not write the store while iterating (use :meth:`range` for that)."""
        if invalid_range(key_from, key_to):
            return iter(())
        keys = self._keys()
        lo = 0 if key_from is None else bisect.bisect_left(keys, key_from)
        hi = len(keys) if key_to is None else bisect.bisect_right(keys, key_to)
        return _scan_sorted(self, keys, lo, hi, reverse)

    def delete_below(self, bound: bytes) -> None:
        """Delete every key below ``bound`` (what a window or session store does with expired segments)."""
        keys = self._keys()
        cut = bisect.bisect_left(keys, bound)
        if cut:
            for key in keys[:cut]:
                del self._map[key]
            del keys[:cut]   # still sorted: the next range read needs no sort
        self._writes += 1

    def approximate_num_entries(self) -> int:
        return len(self._map)

    # Snapshot support for engines that keep task state outside the process (Spark's group state).
    def entries(self) -> dict[bytes, bytes]:
        return self._map

    def restore(self, entries: dict[bytes, bytes]) -> None:
        self._map = dict(entries)
        self._sorted = None
        self._writes += 1


def _scan_sorted(store: InMemoryKeyValueBytesStore, keys: list[bytes], lo: int, hi: int,
                 reverse: bool) -> Iterator[tuple[bytes, bytes]]:
    """``(key, value)`` for ``keys[lo:hi]`` (reversed if asked), one at a time and without copying the keys."""
    writes, values = store._writes, store._map
    for i in (range(hi - 1, lo - 1, -1) if reverse else range(lo, hi)):
        if store._writes != writes:
            raise_written_while_scanning(store.name)
        key = keys[i]
        yield key, values[key]


def raise_written_while_scanning(store: str) -> None:
    """A store's keys changed under an open :meth:`scan` (which is not a snapshot): fail instead of skipping keys."""
    raise IllegalStateError(f"store {store}: keys were added or removed while a scan of it was open; a scan is not a "
                            "snapshot: finish it first, or read a snapshot with range()")


class SerdeStore(StateStore):
    """Serde handling shared by every typed store: default serdes from the task, key-bytes cache, clear errors; and
    the store's position (Kafka's ``Position`` of a store: what its writes reflect)."""

    inner: Any
    # where a write reads the record in process, which it adds to the position (caching.record_context)
    _record_context: Any = NoRecordInProcess

    def _init_serdes(self, inner: Any, key_serde: Any, value_serde: Any) -> None:
        self.name = inner.name
        self.inner = inner
        self.key_serde = key_serde
        self.value_serde = value_serde
        self._topic: Optional[str] = None
        self._last_key: Any = None        # aggregations serialize the same key several times per record
        self._last_key_bytes = b""
        self._cached = False              # a record cache is in front of the bytes store (known once initialized)
        # (topic, partition) -> offset of the last record in process while the store was written (Kafka's
        # StoreQueryUtils.updatePosition on every put): what an interactive query's position bound is checked against
        self.position_offsets: dict[tuple[str, int], int] = {}

    def init(self, context: Any) -> None:
        """Resolve default serdes from the task config, name the changelog topic, hook dropped-record counts."""
        inner_init = getattr(self.inner, "init", None)
        if inner_init is not None:
            inner_init(context)
        if isinstance(self.inner, CachingBytesStore):
            self._cached = self.inner.enabled
            if not self._cached:
                self.inner = self.inner.wrapped   # no cache here (size 0, or a global store): skip the layer
            else:   # a window or session store's position moves when the cache flushes into it (as Kafka's)
                self.inner.flushed_into_position = self._written
        if self.key_serde is None:
            self.key_serde = getattr(context, "default_key_serde", None)
        if self.value_serde is None:
            self.value_serde = getattr(context, "default_value_serde", None)
        app_id = getattr(context, "application_id", None)
        self._topic = f"{app_id}-{self.name}-changelog" if app_id else self.name
        self._record_context = record_context(context)
        if hasattr(self.inner, "metrics"):
            self.inner.metrics = getattr(context, "metrics", None)

    def _written(self) -> None:
        """Kafka's ``StoreQueryUtils.updatePosition``: the record in process (if any: not in a punctuation) is now
        part of the store's position, which keeps the highest offset per topic partition (``Position.withComponent``):
        a cache flush writing with an older entry's writer does not move it back."""
        context = self._record_context
        queue = context.queue
        if queue is not None:
            offsets, where, offset = self.position_offsets, queue.topic_partition, context.offset
            if offsets.get(where, -1) < offset:
                offsets[where] = offset

    def _kser(self, key: Any) -> bytes:
        if key is self._last_key and key is not None:
            return self._last_key_bytes
        if key is None:
            raise ValueError(f"key cannot be null (store {self.name})")
        serde = self.key_serde
        if serde is None:
            raise StreamsException(f"Store {self.name} has no key serde: pass one to its builder or Materialized, "
                                   "or set 'default.key.serde' in the config")
        data = serde.serialize(self._topic, key)
        if type(key) in _IMMUTABLE:
            self._last_key, self._last_key_bytes = key, data
        return data

    def _kser_opt(self, key: Any) -> Optional[bytes]:
        return None if key is None else self._kser(key)

    def _vser(self, value: Any) -> Optional[bytes]:
        if value is None:
            return None
        serde = self.value_serde
        if serde is None:
            raise StreamsException(f"Store {self.name} has no value serde: pass one to its builder or Materialized, "
                                   "or set 'default.value.serde' in the config")
        return serde.serialize(self._topic, value)

    def _vde(self, data: Optional[bytes]) -> Any:
        if data is None:
            return None
        return self.value_serde.deserialize(self._topic, data)

    def _kde(self, data: bytes) -> Any:
        return self.key_serde.deserialize(self._topic, data)

    @property
    def record_cache(self) -> Optional[CachingBytesStore]:
        """The enabled record cache in front of the bytes store (:class:`~streams_on_spark.state.caching
        .RecordCached`), None without one; known once the store is initialized."""
        return self.inner if self._cached else None

    def approximate_num_entries(self) -> int:
        return self.inner.approximate_num_entries()

    def set_flush_listener(self, listener: Callable[[Any, Any, Optional[int], Any, int, Any], None],
                           send_old_values: bool) -> bool:
        """Let the record cache forward what it flushes, as ``listener(key, new_value, new_timestamp, old_value,
        record_timestamp, headers)``; False when the store has no active cache (the processor forwards itself)."""
        return self._cached and self.inner.set_flush_listener(self._flush_adapter(listener), send_old_values)

    def _flush_adapter(self, listener: Callable[..., None]) -> FlushListener:
        """The cache's flush listener for ``listener``: typed keys and values from the flushed bytes."""
        raise StreamsException(f"store {self.name} ({type(self).__name__}) cannot forward cache flushes")

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


@dataclass(frozen=True)
class PositionRules:
    """Which writes of a key-value store move its IQv2 position: those Kafka's store of the supplier's kind moves it
    with (``StoreQueryUtils.updatePosition``). A supplier says its kind once (its ``position_rules``), and the typed
    store built over it takes them from it (:class:`KeyValueStore`)."""

    #: Kafka's in-memory stores' rules rather than RocksDB's: a ``put_if_absent`` of None moves the position (RocksDB's
    #: writes nothing), an empty ``put_all`` does not (RocksDB's updates it after its empty batch)
    in_memory: bool
    #: ``delete`` moves the position (``InMemoryKeyValueStore.delete`` does not; RocksDB's and ``MemoryLRUCache``'s do)
    delete_moves: bool


#: Kafka's ``RocksDBStore`` (and a store over a supplier of the application's own: Kafka's default kind)
ROCKSDB_POSITION = PositionRules(in_memory=False, delete_moves=True)
#: Kafka's ``InMemoryKeyValueStore``
IN_MEMORY_POSITION = PositionRules(in_memory=True, delete_moves=False)


def position_rules_of(supplier: Any) -> PositionRules:
    """The position rules of the stores ``supplier`` makes (RocksDB's for a supplier not of this library)."""
    return getattr(supplier, "position_rules", ROCKSDB_POSITION)


class KeyValueStore(SerdeStore, Generic[K, V]):
    """A typed key-value store: serdes around an :class:`InMemoryKeyValueBytesStore`.

    Its position follows the writes of Kafka's store of the same kind (``StoreQueryUtils.updatePosition``), the
    ``position_rules`` of its supplier: every write of a cached store (``CachingKeyValueStore``); an in-memory store's
    puts, not its ``delete`` (``InMemoryKeyValueStore.delete`` leaves the position, ``put(key, None)`` does not); an
    ``lru_map`` store's as the in-memory one's, its ``delete`` included (``MemoryLRUCache.delete`` moves it); a RocksDB
    store's puts and deletes, not a ``put_if_absent`` of None (which writes nothing), and a ``put_all`` even of no
    entries."""

    def __init__(self, inner: InMemoryKeyValueBytesStore, key_serde: Any = None, value_serde: Any = None,
                 supplier: Any = None) -> None:
        """``supplier``: the one ``inner`` comes from (or stands in for, an engine's own bytes store): its kind's
        position rules are the store's (RocksDB's without one)."""
        self._init_serdes(inner, key_serde, value_serde)
        self.position_rules = position_rules_of(supplier)

    def get(self, key: K) -> Optional[V]:
        return self._vde(self.inner.get(self._kser(key)))

    def put(self, key: K, value: Optional[V]) -> None:
        self.inner.put(self._kser(key), self._vser(value))
        self._written()

    def _rocksdb_rules(self) -> bool:
        """Whether the position follows Kafka's uncached RocksDB store (else its in-memory or caching store)."""
        return not self._cached and not self.position_rules.in_memory

    def put_if_absent(self, key: K, value: V) -> Optional[V]:
        kb = self._kser(key)
        old = self.inner.get(kb)
        if old is None:
            raw = self._vser(value)
            self.inner.put(kb, raw)
            if raw is not None or not self._rocksdb_rules():   # RocksDBStore.putIfAbsent puts no null
                self._written()
            return None
        return self._vde(old)

    def put_all(self, entries: list[KeyValue]) -> None:
        for key, value in entries:
            self.put(key, value)
        if not entries and self._rocksdb_rules():
            self._written()   # RocksDBStore.putAll updates the position after its (here empty) batch

    def delete(self, key: K) -> Optional[V]:
        old = self.inner.delete(self._kser(key))
        if self.position_rules.delete_moves or self._cached:   # InMemoryKeyValueStore.delete leaves the position
            self._written()
        return self._vde(old)

    def range(self, key_from: Optional[K], key_to: Optional[K]) -> KeyValueIterator:
        """Entries with ``key_from <= key <= key_to`` by serialized-key order (None = unbounded)."""
        lo = None if key_from is None else self._kser(key_from)
        hi = None if key_to is None else self._kser(key_to)
        return KeyValueIterator([KeyValue(self._kde(k), self._vde(v)) for k, v in self.inner.range(lo, hi)])

    def reverse_range(self, key_from: Optional[K], key_to: Optional[K]) -> KeyValueIterator:
        lo = None if key_from is None else self._kser(key_from)
        hi = None if key_to is None else self._kser(key_to)
        rows = self.inner.range(lo, hi, reverse=True)
        return KeyValueIterator([KeyValue(self._kde(k), self._vde(v)) for k, v in rows])

    def all(self) -> KeyValueIterator:
        """Every entry in serialized-key order; a snapshot, safe to modify the store while iterating."""
        return self.range(None, None)

    def prefix_scan(self, prefix: Any, prefix_key_serializer: Any) -> KeyValueIterator:
        """Entries whose serialized key starts with ``prefix`` serialized by ``prefix_key_serializer`` (anything with
        Kafka's ``serialize(topic, data)``), in serialized-key order (Kafka's ``prefixScan``); an empty or all-0xff
        prefix raises ``IndexError`` as Kafka's raises ``IndexOutOfBoundsException``."""
        if prefix is None or prefix_key_serializer is None:
            raise ValueError(f"prefix and prefix_key_serializer cannot be null (store {self.name})")
        raw = prefix_key_serializer.serialize(None, prefix)   # as Kafka's stores: no topic
        upper = prefix_upper_bound(raw)
        if upper is None:   # Kafka's Bytes.increment(prefix) throws IndexOutOfBoundsException
            raise IndexError(f"prefix_scan on store {self.name}: no key is above every key starting with {raw!r} (an "
                             "empty prefix, or bytes 0xff only), as in Kafka's stores")
        rows = self.inner.range(raw, upper)
        return KeyValueIterator([KeyValue(self._kde(k), self._vde(v)) for k, v in rows if k.startswith(raw)])

    def reverse_all(self) -> KeyValueIterator:
        return self.reverse_range(None, None)


@dataclass(frozen=True, slots=True)
class ValueAndTimestamp(Generic[V]):
    """A value with the timestamp of the record that last updated it."""

    value: V
    timestamp: int

    @staticmethod
    def make(value: Any, timestamp: int) -> Optional["ValueAndTimestamp"]:
        return None if value is None else ValueAndTimestamp(value, timestamp)

    @staticmethod
    def get_value_or_null(vat: Optional["ValueAndTimestamp"]) -> Any:
        return None if vat is None else vat.value


class ValueAndTimestampSerde:
    """Kafka's ``ValueAndTimestampSerializer`` layout: 8-byte big-endian timestamp, then the value bytes."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def serialize(self, topic: Optional[str], vat: Optional[ValueAndTimestamp]) -> Optional[bytes]:
        if vat is None:
            return None
        raw = self.inner.serialize(topic, vat.value)
        if raw is None:
            return None
        return _TS.pack(vat.timestamp) + raw

    def deserialize(self, topic: Optional[str], data: Optional[bytes]) -> Optional[ValueAndTimestamp]:
        if data is None:
            return None
        return ValueAndTimestamp(self.inner.deserialize(topic, data[8:]), _TS.unpack_from(data)[0])


class TimestampedValues(SerdeStore):
    """Values kept as Kafka's ``ValueAndTimestamp`` bytes (8-byte timestamp, then the value): what DSL key-value and
    window stores hold; a cache flush hands on the value and its timestamp."""

    #: what the store holds (a headers-aware store: ``ValueTimestampHeaders``) and the serde of its bytes
    value_type: Any = ValueAndTimestamp
    stored_serde: Any = ValueAndTimestampSerde

    def _init_serdes(self, inner: Any, key_serde: Any, value_serde: Any) -> None:
        """Called by the store kind's own constructor (which takes what that kind needs, a key-value store's
        supplier): ``value_serde`` is the plain values' serde, the stored bytes' is :attr:`stored_serde` over it."""
        super()._init_serdes(inner, key_serde, None if value_serde is None else self.stored_serde(value_serde))
        self.plain_value_serde = value_serde

    def init(self, context: Any) -> None:
        super().init(context)
        if self.plain_value_serde is None:
            self.plain_value_serde = getattr(context, "default_value_serde", None)
        if self.plain_value_serde is not None:
            self.value_serde = self.stored_serde(self.plain_value_serde)

    def _vser(self, value: Any) -> Optional[bytes]:
        if value is not None and not isinstance(value, self.value_type):
            raise ValueError(f"store {self.name} holds {self.value_type.__name__} values, got {type(value).__name__}")
        return super()._vser(value)

    @abstractmethod
    def _flushed_key(self, cache_key: Any, key: Any) -> Any:
        """The key downstream sees for a flushed cache key; ``key`` is the writer's key object, or None."""

    @staticmethod
    def _value_start(data: bytes) -> int:
        """Where the value's bytes start in stored ``data``: after Kafka's 8-byte timestamp."""
        return 8

    def _flush_adapter(self, listener: Callable[..., None]) -> FlushListener:
        topic, key_of, start = self._topic, self._flushed_key, self._value_start

        def flushed(cache_key: Any, new: Optional[bytes], old: Optional[bytes], timestamp: int, headers: Any,
                    typed: Any) -> None:
            value_serde = self.plain_value_serde
            if typed is not None:
                key, new_value, new_ts = typed
                key = key_of(cache_key, key)
            elif new is None:
                key, new_value, new_ts = key_of(cache_key, None), None, None
            else:
                key = key_of(cache_key, None)
                at = start(new)
                new_value, new_ts = value_serde.deserialize(topic, new[at:]), _TS.unpack_from(new, at - 8)[0]
            old_value = None if old is None else value_serde.deserialize(topic, old[start(old):])
            listener(key, new_value, new_ts, old_value, timestamp, headers)
        return flushed


class TimestampedKeyValueStore(TimestampedValues, KeyValueStore[K, ValueAndTimestamp]):
    """Values are :class:`ValueAndTimestamp`; what DSL aggregations and tables use."""

    # read-modify-write path of DSL aggregations: same bytes as get/put, without ValueAndTimestamp objects
    def get_with_timestamp(self, key: Any) -> Optional[tuple[Any, int]]:
        data = self.inner.get(self._kser(key))
        if data is None:
            return None
        return self.plain_value_serde.deserialize(self._topic, data[8:]), _TS.unpack_from(data)[0]

    def put_with_timestamp(self, key: Any, value: Any, timestamp: int) -> None:
        kb = self._kser(key)
        raw = None if value is None else self.plain_value_serde.serialize(self._topic, value)
        if raw is None:
            self.inner.delete(kb)
        elif self._cached:
            self.inner.put(kb, _TS.pack(timestamp) + raw, (key, value, timestamp))
        else:
            self.inner.put(kb, _TS.pack(timestamp) + raw)
        self._written()

    def put(self, key: Any, value: Optional[ValueAndTimestamp]) -> None:
        if not self._cached or value is None:
            super().put(key, value)
            return
        self.inner.put(self._kser(key), self._vser(value), (key, value.value, value.timestamp))
        self._written()

    def _flushed_key(self, cache_key: bytes, key: Any) -> Any:
        return self._kde(cache_key) if key is None else key


class KeyValueStoreFacade:
    """A plain key-value view of a timestamped store (what ``get_key_value_store`` returns for DSL stores)."""

    def __init__(self, store: TimestampedKeyValueStore) -> None:
        self.store = store
        self.name = store.name

    def _shown(self, stored: Any) -> Any:
        """What the view shows for a stored value."""
        return None if stored is None else stored.value

    def _stored(self, value: Any) -> Any:
        """What the store keeps for a value written through the view (no timestamp, no headers)."""
        return None if value is None else self.store.value_type.make(value, -1)

    def get(self, key: Any) -> Any:
        return self._shown(self.store.get(key))

    def put(self, key: Any, value: Any) -> None:
        self.store.put(key, self._stored(value))

    def put_if_absent(self, key: Any, value: Any) -> Any:
        return self._shown(self.store.put_if_absent(key, self._stored(value)))

    def delete(self, key: Any) -> Any:
        return self._shown(self.store.delete(key))

    def _rows(self, rows: Iterator[KeyValue]) -> KeyValueIterator:
        return KeyValueIterator([KeyValue(k, self._shown(v)) for k, v in rows])

    def range(self, key_from: Any, key_to: Any) -> KeyValueIterator:
        return self._rows(self.store.range(key_from, key_to))

    def reverse_range(self, key_from: Any, key_to: Any) -> KeyValueIterator:
        return self._rows(self.store.reverse_range(key_from, key_to))

    def all(self) -> KeyValueIterator:
        return self.range(None, None)

    def reverse_all(self) -> KeyValueIterator:
        return self.reverse_range(None, None)

    def prefix_scan(self, prefix: Any, prefix_key_serializer: Any) -> KeyValueIterator:
        return self._rows(self.store.prefix_scan(prefix, prefix_key_serializer))

    def approximate_num_entries(self) -> int:
        return self.store.approximate_num_entries()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def plain_values(rows: Iterator[KeyValue]) -> KeyValueIterator:
    """A timestamped store's entries with plain values (Kafka's facades drop the timestamps)."""
    return KeyValueIterator([KeyValue(k, ValueAndTimestamp.get_value_or_null(v)) for k, v in rows])


class ReadOnlyStore:
    """A global store as a stream task's processors see it: reads go through, writes fail with Kafka's message
    (its ``AbstractReadOnlyDecorator``); only the global store's own processor, fed from its topic, writes."""

    _REFUSED = frozenset({"put", "put_if_absent", "put_all", "delete", "put_with_timestamp", "init", "flush", "close"})

    def __init__(self, store: Any) -> None:
        self._store = store
        self.name = store.name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_store":   # pickle probes these before the instance has a store
            raise AttributeError(name)
        if name in ReadOnlyStore._REFUSED:
            def refused(*args: Any, **kwargs: Any) -> None:
                raise UnsupportedOperationError("Global store is read only")
            return refused
        return getattr(self._store, name)

    def __repr__(self) -> str:
        return f"ReadOnlyStore({self._store!r})"


class KeyValueBytesStoreSupplier:
    """Makes the bytes store a builder wraps (``Stores.in_memory_key_value_store``)."""

    #: Kafka's in-memory store's, which the typed store's position follows (:class:`KeyValueStore`)
    position_rules = IN_MEMORY_POSITION

    def __init__(self, name: str) -> None:
        if not name:
            raise ValueError("store name cannot be null or empty")
        self.name = name

    def get(self) -> InMemoryKeyValueBytesStore:
        return InMemoryKeyValueBytesStore(self.name)

    def metrics_scope(self) -> str:
        return "in-memory"


class PersistentKeyValueBytesStoreSupplier(KeyValueBytesStoreSupplier):
    """``Stores.persistent_key_value_store`` (``timestamped=False``) and ``persistent_timestamped_key_value_store``
    (Kafka's ``RocksDBKeyValueBytesStoreSupplier`` and its ``returnTimestampedStore``): a key-value store with RocksDB's
    rules (ordered by key bytes, as the in-memory one), in memory in the in-process engine, in the task's local RocksDB
    on Spark. A timestamped store built over one without timestamps keeps none (:class:`PlainToTimestampedBytesStore`).
    """

    position_rules = ROCKSDB_POSITION

    def __init__(self, name: str, timestamped: bool = True) -> None:
        super().__init__(name)
        self.timestamped = timestamped

    def metrics_scope(self) -> str:
        return "rocksdb"


class TimestampAdapter:
    """What Kafka's adapters from a store without timestamps to a timestamped one share: the wrapped bytes store
    answers and keeps everything the adapter does not convert (attributes a layer above sets too)."""

    NO_TIMESTAMP = _TS.pack(-1)   # the timestamp every value is read back with

    def __init__(self, wrapped: Any) -> None:
        object.__setattr__(self, "wrapped", wrapped)
        object.__setattr__(self, "name", wrapped.name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "wrapped":   # pickle probes these before the instance has a store
            raise AttributeError(name)
        return getattr(self.wrapped, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.wrapped, name, value)   # what a layer above sets (metrics, ...) is the wrapped store's

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.wrapped!r})"


class PlainToTimestampedBytesStore(TimestampAdapter):
    """Kafka's ``KeyValueToTimestampedKeyValueByteStoreAdapter``: what a timestamped key-value store is built over
    when its supplier's persistent store keeps no timestamps (``Stores.persistent_key_value_store``). Writes drop the
    8-byte timestamp of Kafka's ``ValueAndTimestamp`` layout, reads give every value the timestamp -1 (a record cache
    above still answers with the timestamps it holds)."""

    def _timestamped(self, raw: Optional[bytes]) -> Optional[bytes]:
        return None if raw is None else self.NO_TIMESTAMP + raw

    def get(self, key: bytes) -> Optional[bytes]:
        return self._timestamped(self.wrapped.get(key))

    def put(self, key: bytes, value: Optional[bytes]) -> None:
        self.wrapped.put(key, None if value is None else value[8:])

    def delete(self, key: bytes) -> Optional[bytes]:
        return self._timestamped(self.wrapped.delete(key))

    def range(self, key_from: Optional[bytes], key_to: Optional[bytes],
              reverse: bool = False) -> list[tuple[bytes, bytes]]:
        stamp = self.NO_TIMESTAMP
        return [(k, stamp + v) for k, v in self.wrapped.range(key_from, key_to, reverse)]

    def scan(self, key_from: Optional[bytes], key_to: Optional[bytes],
             reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        stamp = self.NO_TIMESTAMP
        return ((k, stamp + v) for k, v in self.wrapped.scan(key_from, key_to, reverse))


def without_timestamps(supplier: Any) -> bool:
    """Whether ``supplier``'s stores are persistent and keep no timestamps, so that Kafka's timestamped builders put
    an adapter over them (an in-memory store is only marked timestamped: it keeps the bytes it is given)."""
    return isinstance(supplier, PersistentKeyValueBytesStoreSupplier) and not supplier.timestamped


class HeadersBytesStoreSupplier:
    """Marks a supplier of headers-aware stores (Kafka's ``HeadersBytesStoreSupplier``)."""


class PersistentKeyValueHeadersBytesStoreSupplier(PersistentKeyValueBytesStoreSupplier, HeadersBytesStoreSupplier):
    """``Stores.persistent_timestamped_key_value_store_with_headers`` (KIP-1271): the RocksDB store of a headers-aware
    key-value store, whose values carry the headers."""


def check_changelog_config(config: Optional[dict], call: str) -> None:
    """Kafka's ``withLoggingEnabled(config)`` configures the store's changelog topic. No changelog topics are created
    here (a task's store changes go to the engine's changelog: Spark's checkpointed state), so topic configs are
    refused rather than ignored; ``None`` or ``{}`` is fine."""
    if config is not None and not isinstance(config, dict):
        raise ValueError(f"{call}(config): config must be a dict of changelog topic configs, got "
                         f"{type(config).__name__}")
    if config:
        raise ValueError(f"{call}({config!r}): changelog topic configs have nothing to apply to — streams-on-spark "
                         "creates no changelog topics (a store's changes are kept in the engine's own changelog: "
                         f"Spark's checkpoint). Call {call}() without them.")


class StoreBuilder(ABC):
    """Builds one store instance per task."""

    name: str
    logging_enabled: bool = True
    caching_enabled: bool = False
    #: the library's bytes-store suppliers this builder's stores may come from (see :meth:`engine_kept`)
    own_suppliers: tuple[type, ...] = ()
    #: a DSL operator's store over the default supplier, whose format follows ``dsl.store.format``; any other store
    #: stays as it is built
    follows_dsl_store_format: bool = False

    def engine_kept(self) -> bool:
        """Whether an engine may keep the store's entries where it wants (a local RocksDB on Spark): a store over one
        of the library's own bytes stores, which the builder then builds over the bytes store the engine gives
        (``build(bytes_store)``)."""
        return type(getattr(self, "supplier", None)) in self.own_suppliers

    def bytes_store_over(self, table: Any) -> Any:
        """The bytes store this builder builds over (``build(bytes_store)``) with its entries in an engine's ordered
        bytes ``table`` (when :meth:`engine_kept`): the table itself for key-value stores and buffers; window and
        session builders make their supplier's store over it."""
        return table

    @abstractmethod
    def build(self) -> StateStore: ...

    def with_logging_disabled(self) -> "StoreBuilder":
        self.logging_enabled = False
        return self

    def with_logging_enabled(self, config: Optional[dict] = None) -> "StoreBuilder":
        """Logging on (the default); Kafka's changelog topic ``config`` is refused: there is no such topic here."""
        check_changelog_config(config, "with_logging_enabled")
        self.logging_enabled = True
        return self

    def with_caching_enabled(self) -> "StoreBuilder":
        """Put the record cache in front of the store (``state/caching.py``): updates are forwarded on commit."""
        self.caching_enabled = True
        return self

    def with_caching_disabled(self) -> "StoreBuilder":
        self.caching_enabled = False
        return self


class SupplierStoreBuilder(StoreBuilder):
    """A builder of stores over the bytes stores of a ``supplier``, with key and value serdes."""

    def __init__(self, supplier: Any, key_serde: Any = None, value_serde: Any = None) -> None:
        if supplier is None:
            raise ValueError("supplier cannot be null")
        self.supplier = supplier
        self.name = supplier.name
        self.key_serde = key_serde
        self.value_serde = value_serde
        self.logging_enabled = True


class KeyValueStoreBuilder(SupplierStoreBuilder):
    store_type = KeyValueStore
    own_suppliers = (KeyValueBytesStoreSupplier, PersistentKeyValueBytesStoreSupplier,
                     PersistentKeyValueHeadersBytesStoreSupplier)

    def build(self, bytes_store: Any = None) -> KeyValueStore:
        """The typed store over ``bytes_store``, or over a new store from the supplier."""
        inner = self.supplier.get() if bytes_store is None else bytes_store
        if self.caching_enabled:
            inner = CachingKeyValueBytesStore(inner)
        return self.store_type(inner, self.key_serde, self.value_serde, self.supplier)


class TimestampedKeyValueStoreBuilder(KeyValueStoreBuilder):
    store_type = TimestampedKeyValueStore

    def build(self, bytes_store: Any = None) -> KeyValueStore:
        """As Kafka's: over a persistent supplier without timestamps, through :class:`PlainToTimestampedBytesStore`
        (beneath the record cache)."""
        if without_timestamps(self.supplier):
            bytes_store = PlainToTimestampedBytesStore(self.supplier.get() if bytes_store is None else bytes_store)
        return super().build(bytes_store)


def bytes_store_over(builder: StoreBuilder, table: Any) -> Any:
    """The bytes store an engine gives ``builder`` (one whose ``engine_kept()`` is true), with the entries in the
    engine's ``table``: :meth:`StoreBuilder.bytes_store_over`."""
    return builder.bytes_store_over(table)


__all__ = ["StateStore", "PositionRules", "ROCKSDB_POSITION", "IN_MEMORY_POSITION", "position_rules_of", "bytes_store_over", "InMemoryKeyValueBytesStore", "KeyValueIterator", "KeyValueStore", "TimestampedKeyValueStore",
           "ValueAndTimestamp", "ValueAndTimestampSerde", "KeyValueStoreFacade", "KeyValueBytesStoreSupplier",
           "PlainToTimestampedBytesStore", "TimestampAdapter", "without_timestamps",
           "StoreBuilder", "KeyValueStoreBuilder", "TimestampedKeyValueStoreBuilder", "KeyValue", "IllegalStateError",
           "check_changelog_config"]

"""A task's stores in a local RocksDB (``rocksdict``): what an engine uses when the stores must outlive the process
that ran the task and need not fit in its memory.

One RocksDB per task, one column family per store (a key-value store's keys as they are, in byte order: the order of
Kafka's stores for ``range``/``all``; window and session stores under composite keys, ``key_schemas.py``). A
batch's writes stay in memory until :meth:`LocalTaskStore.commit`, which writes them and the new version marker in
one atomic ``WriteBatch`` and returns them as the batch's changelog. A crash mid-batch therefore leaves the previous
version intact, and a copy whose marker is not the version the engine expects is discarded and rebuilt from the
engine's changelog (:meth:`LocalTaskStore.load`).

Writes skip RocksDB's write-ahead log: the database is flushed when the task releases it (:meth:`LocalTaskStore.close`),
atomically across its column families, so a crash loses whole batches since the last release, never part of one, and
the marker always names what the files hold; with the log, every open replayed it and flushed it then, the larger
part of the 20-60 ms a task call spent opening and closing its database.

A task without stores (a stateless subtopology) keeps only its version marker and image: one small file replaced
whole (:class:`_CopyFile`) instead of a RocksDB, whose open and close cost 10-50 ms per batch.
"""
from __future__ import annotations

import bisect
import fcntl
import heapq
import logging
import os
import shutil
import struct
import weakref
from abc import ABC, abstractmethod
from itertools import takewhile
from operator import itemgetter
from typing import Any, Generator, Iterable, Iterator, Optional

from streams_on_spark.files import replace_file
from streams_on_spark.errors import StreamsException
from streams_on_spark.state.stores import StateStore, invalid_range, raise_written_while_scanning

log = logging.getLogger(__name__)

_MARKER = b"streams-on-spark.version"   # in the default column family: the committed version this copy holds
_IMAGE = b"streams-on-spark.task-image"  # beside it: the engine's image of the task at that version, if any
#: A batch's changes: store -> key -> new value (None: deleted). The key None means "delete every key below the
#: value" (window and session stores dropping expired segments; their keys are never empty).
Changes = dict[str, dict[Optional[bytes], Optional[bytes]]]


def _options() -> Any:
    """A task database is opened and closed by every batch: keep few info logs (RocksDB starts one per open), and
    open its files in the opening thread (RocksDB's default starts 16 threads to open them: 3-4 ms of CPU per open,
    measured, for a task's few files). Its statistics are read on open (~3 ms for 2M keys in 20 files): without them
    the entry estimate that decides compaction reads 0 after every reopen and the changelog would be compacted every
    batch. Table files carry a Bloom filter of 10 bits a key, as Kafka's RocksDB stores do (``BloomFilter()``): a
    key absent from a file is answered without reading its blocks (a fill's multi-gets of new keys: ~0.4-0.6 against
    ~1.1-1.4 µs a key, measured over four files)."""
    from rocksdict import BlockBasedOptions, Options
    options = Options(raw_mode=True)
    table = BlockBasedOptions()
    table.set_bloom_filter(10, False)
    options.set_block_based_table_factory(table)
    options.create_if_missing(True)
    options.create_missing_column_families(True)
    options.set_keep_log_file_num(2)
    options.set_max_file_opening_threads(1)
    options.set_atomic_flush(True)   # the marker (default column family) is flushed with the stores it versions
    return options


_MULTI_GET_KEYS = 512   # keys per RocksDB multi-get (LocalKeyValueBytesStore.get_many)


class LocalKeyValueBytesStore(StateStore):
    """``bytes -> bytes`` in one column family of the task's RocksDB; reads see the batch's uncommitted writes."""

    _writes = 0   # keys the batch added or removed so far: an open scan fails clearly if they change under it
    _empty: Optional[bool] = None   # whether the column family holds no entry (None: not looked yet, or written since)

    def __init__(self, name: str, column_family: Any) -> None:
        self.name = name
        self._db = column_family
        self.pending: dict[bytes, Optional[bytes]] = {}
        self._pending_sorted: Optional[list[bytes]] = None
        self.floor: Optional[bytes] = None   # delete_below's bound, pending until commit
        self._scans: weakref.WeakSet = weakref.WeakSet()   # scans handed out, closed with the database

    @property
    def persistent(self) -> bool:
        return True

    def get(self, key: bytes) -> Optional[bytes]:
        pending = self.pending
        if key in pending:
            return pending[key]
        return self._db.get(key)

    def get_many(self, keys: list[bytes]) -> list[Optional[bytes]]:
        """The values of ``keys``, in order (None where absent): RocksDB multi-gets of :data:`_MULTI_GET_KEYS` keys
        each (a multi-get's cost a key grows with its size: ~1 µs a key for 512 keys, ~2 µs for 65,536, measured),
        the batch's writes over them."""
        db = self._db
        if self._empty is None:
            self._empty = self._holds_nothing()
        if self._empty:   # a new store's fill: nothing committed to look up (the batch's writes merged below)
            values = [None] * len(keys)
        elif len(keys) <= _MULTI_GET_KEYS:
            values = db.get(keys)
        else:
            values = []
            for at in range(0, len(keys), _MULTI_GET_KEYS):
                values += db.get(keys[at:at + _MULTI_GET_KEYS])
        pending = self.pending
        if pending and not pending.keys().isdisjoint(keys):   # (a fill's new keys: none written, checked in C)
            values = [pending[key] if key in pending else value for key, value in zip(keys, values)]
        return values

    def _holds_nothing(self) -> bool:
        """Whether the column family holds no committed entry (one seek: a store's first batch then skips the
        multi-gets of its keys, ~0.35 µs a key in a fill)."""
        rows = self._db.iter()
        try:
            rows.seek_to_first()
            return not rows.valid()
        finally:
            del rows   # a live iterator keeps the database open

    def put(self, key: bytes, value: Optional[bytes]) -> None:
        pending = self.pending
        if key not in pending:
            self._writes += 1
            keys = self._pending_sorted
            if keys is not None:   # kept sorted once a range read needed it (cheaper than re-sorting each read)
                bisect.insort(keys, key)
        pending[key] = value

    def put_many(self, keys: list[bytes], values: list[Optional[bytes]]) -> None:
        """:meth:`put` of each key with its value, in order (a batch path's flush: one dict update)."""
        pending = self.pending
        before = len(pending)
        added = None if self._pending_sorted is None else [key for key in dict.fromkeys(keys) if key not in pending]
        pending.update(zip(keys, values))
        self._writes += len(pending) - before
        if added:
            for key in added:
                bisect.insort(self._pending_sorted, key)   # type: ignore[arg-type]

    def delete(self, key: bytes) -> Optional[bytes]:
        old = self.get(key)
        if old is not None:
            self.put(key, None)
        return old

    def range(self, key_from: Optional[bytes], key_to: Optional[bytes], reverse: bool = False) -> list[tuple[bytes, bytes]]:
        """Entries with ``key_from <= key <= key_to`` in key-byte order (None = unbounded); a snapshot."""
        if invalid_range(key_from, key_to):
            return []
        committed = self._committed(key_from, key_to, False)
        keys, lo, hi = self._pending_between(key_from, key_to)
        if lo >= hi:
            rows = list(committed)
        else:   # whole ranges merge faster in a dict than row by row (see scan)
            merged = dict(committed)
            pending = self.pending
            for key in keys[lo:hi]:
                merged[key] = pending[key]
            rows = sorted((k, v) for k, v in merged.items() if v is not None)
        return rows[::-1] if reverse else rows

    def scan(self, key_from: Optional[bytes], key_to: Optional[bytes],
             reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        """The entries of :meth:`range`, read lazily: a RocksDB iterator merged with the batch's sorted writes, so a
        caller that stops early pays for what it read. Not a snapshot: do not write the store while iterating."""
        if invalid_range(key_from, key_to):
            return iter(())
        committed = self._committed(key_from, key_to, reverse)
        keys, lo, hi = self._pending_between(key_from, key_to)
        if lo >= hi:
            rows = _rows(self, committed)
        else:
            rows = _merged(self, _pending_rows(keys, self.pending, lo, hi, reverse), committed, reverse)
        self._scans.add(rows)
        return rows

    def close_scans(self) -> None:
        """End the scans still open: a live RocksDB iterator keeps the database open (and locked) after closing."""
        for rows in list(self._scans):
            rows.close()
        self._scans.clear()

    def _committed(self, key_from: Optional[bytes], key_to: Optional[bytes],
                   reverse: bool) -> Iterable[tuple[bytes, bytes]]:
        """The committed entries in the range, lazily, without those below delete_below's bound (gone at commit)."""
        lower = key_from
        if self.floor is not None and (lower is None or lower < self.floor):
            lower = self.floor
        db = self._db
        if reverse:
            rows = db.items(backwards=True, from_key=key_to) if key_to is not None else db.items(backwards=True)
            return rows if lower is None else takewhile(lambda row: row[0] >= lower, rows)
        rows = db.items(from_key=lower) if lower is not None else db.items()
        return rows if key_to is None else takewhile(lambda row: row[0] <= key_to, rows)

    def _pending_between(self, key_from: Optional[bytes], key_to: Optional[bytes]) -> tuple[list[bytes], int, int]:
        """The batch's written keys, sorted, and the slice ``[lo, hi)`` of them in the range."""
        if not self.pending:
            return [], 0, 0
        if self._pending_sorted is None:
            self._pending_sorted = sorted(self.pending)
        keys = self._pending_sorted
        lo = 0 if key_from is None else bisect.bisect_left(keys, key_from)
        hi = len(keys) if key_to is None else bisect.bisect_right(keys, key_to)
        return keys, lo, hi

    def delete_below(self, bound: bytes) -> None:
        """Delete every key below ``bound`` (a window or session store dropping expired segments), at commit as one
        range tombstone; the batch's own writes below it go now."""
        if self.floor is not None and bound <= self.floor:
            return
        self.floor = bound
        if any(key < bound for key in self.pending):
            self.pending = {k: v for k, v in self.pending.items() if k >= bound}
            self._pending_sorted = None
        self._writes += 1

    def approximate_num_entries(self) -> int:
        """RocksDB's estimate of the committed keys, as Kafka's RocksDB store answers, plus the keys the batch added
        less those it removed (one multi-get of the batch's written keys)."""
        estimate = self._db.property_int_value("rocksdb.estimate-num-keys") or 0
        pending = self.pending
        if pending:
            committed = self._db.get(list(pending))
            estimate += sum((new is not None) - (old is not None) for new, old in zip(pending.values(), committed))
        return max(0, estimate)

    def entries(self) -> None:
        """Nothing for the task's snapshot: the content is the engine's (its changelog)."""
        return None

    def restore(self, entries: Any) -> None:
        """A snapshot holds none of this store's entries (they are the engine's); one that does was written by an
        older version, which kept the store in the snapshot."""
        if entries:
            raise StreamsException(f"store {self.name}: the saved task state holds the store's entries in its "
                                   "snapshot, as older versions of streams-on-spark wrote it; this version keeps them "
                                   "in the task's local store and cannot resume that state: start on a new checkpoint")

    def entries_iter(self) -> Iterator[tuple[bytes, bytes]]:
        """Every committed entry in key order (for compacting the changelog)."""
        return self._db.items()

    def discard(self) -> None:
        """Forget the uncommitted writes (committed by the caller, or dropped; the column family looked at again)."""
        self.pending = {}
        self._pending_sorted = None
        self.floor = None
        self._writes += 1
        self._empty = None

    def close(self) -> None:
        """Nothing to release: the task's :class:`LocalTaskStore` owns the database."""


class LocalTaskStore(ABC):
    """One task's local copy: its key-value stores and the version of the state they hold (with the image an engine
    left beside it). :func:`open_local_task_store` picks the kind: a RocksDB for a task with stores
    (:class:`RocksTaskStore`), one small file for a task without (:class:`StorelessTaskCopy`)."""

    def __init__(self, path: str, stores: dict[str, LocalKeyValueBytesStore]) -> None:
        self.path = path
        self.stores = stores
        self._db: Any = None
        self.open()

    @abstractmethod
    def open(self) -> None:
        """Open the copy (again): a task's stores are used by one process at a time, so a task opens it for a
        batch and :meth:`close` releases it; the store objects stay valid across the cycle."""

    def version(self) -> Optional[str]:
        """The committed version this copy holds, or None (new or unusable)."""
        marker = self._db.get(_MARKER)
        return None if marker is None else marker.decode()

    def clear(self) -> None:
        """Drop every store's content (before :meth:`load` rebuilds it). The marker goes first, and for good: a
        crash in between must not leave the old marker over emptied stores."""
        self._db.delete(_MARKER)
        self._db.delete(_IMAGE)

    def image(self) -> Optional[bytes]:
        """What :meth:`commit` was given as ``image`` with the version this copy holds."""
        return self._db.get(_IMAGE)

    def load(self, changes: Iterable[Changes], version: str) -> int:
        """Apply committed changelog entries, oldest first, and mark the copy as ``version``; entries applied."""
        applied = 0
        for change in changes:
            if change:
                applied += self._apply(change)
        self._db.put(_MARKER, version.encode())
        return applied

    def _apply(self, change: Changes) -> int:
        """Write one batch's committed changes; entries written (here, without stores, none can be)."""
        raise _unknown_store(next(iter(change)))

    @abstractmethod
    def commit(self, version: str, image: Optional[bytes] = None) -> Changes:
        """Write the batch's changes, the new version marker and ``image`` (an engine's picture of the task at that
        version, or none) atomically; the changes, per store."""

    def discard(self) -> None:
        """Forget the batch's uncommitted writes."""
        for store in self.stores.values():
            store.discard()

    def dump(self) -> Iterator[tuple[str, bytes, bytes]]:
        """Every committed entry as ``(store, key, value)``, store by store in key order (compaction)."""
        for name, store in self.stores.items():
            for key, value in store.entries_iter():
                yield name, key, value

    def close(self) -> None:
        """Release the copy (uncommitted writes are dropped); :meth:`open` takes it again."""
        if self._db is None:
            return
        self._db.close()
        self._db = None

    @staticmethod
    def destroy(path: str) -> None:
        shutil.rmtree(path, ignore_errors=True)


def _unknown_store(name: str) -> StreamsException:
    return StreamsException(f"the saved state has store {name} that this topology does not have; was the topology "
                            "changed incompatibly?")


def open_local_task_store(path: str, store_names: Iterable[str]) -> LocalTaskStore:
    """The local copy under ``path`` of a task with the key-value stores ``store_names``, opened."""
    names = sorted(set(store_names))
    return RocksTaskStore(path, names) if names else StorelessTaskCopy(path)


class RocksTaskStore(LocalTaskStore):
    """A task's stores in one RocksDB under ``path``, a column family per store, the marker and image in the default
    one."""

    def __init__(self, path: str, store_names: Iterable[str]) -> None:
        super().__init__(path, {n: LocalKeyValueBytesStore(n, None) for n in sorted(set(store_names))})

    def open(self) -> None:
        from rocksdict import Rdict
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        families = {_cf(n): _options() for n in self.stores}
        try:
            self._db = Rdict(self.path, _options(), column_families=families)
        except Exception as e:
            if "lock" in str(e).lower():
                raise StreamsException(f"cannot open the local state store at {self.path}: another process is running "
                                       f"this task ({e})") from e
            # unreadable (a machine crash, a full disk): it is only a copy, the engine rebuilds it from its changelog
            log.warning("the local state store at %s cannot be opened (%s); deleting it", self.path, e)
            self.destroy(self.path)
            self._db = Rdict(self.path, _options(), column_families=families)
        from rocksdict import WriteOptions
        unlogged = WriteOptions()
        unlogged.disable_wal = True   # durable at close (see the module doc)
        self._db.set_write_options(unlogged)
        for name, store in self.stores.items():
            store._db = self._db.get_column_family(_cf(name))
            store._empty = None

    def clear(self) -> None:
        super().clear()
        self._db.flush()
        for name, store in self.stores.items():
            self._db.drop_column_family(_cf(name))
            store._db = self._db.create_column_family(_cf(name), _options())
            store.discard()

    def _apply(self, change: Changes) -> int:
        from rocksdict import WriteBatch
        applied = 0
        batch = WriteBatch(raw_mode=True)
        for name, entries in change.items():
            if name not in self.stores:
                raise _unknown_store(name)
            handle = self._db.get_column_family_handle(_cf(name))
            _write(batch, handle, entries)
            self.stores[name]._empty = None
            applied += len(entries)
        self._db.write(batch)
        return applied

    def commit(self, version: str, image: Optional[bytes] = None) -> Changes:
        from rocksdict import WriteBatch
        batch = WriteBatch(raw_mode=True)
        changes: Changes = {}
        for name, store in self.stores.items():
            if not store.pending and store.floor is None:
                continue
            entries: dict[Optional[bytes], Optional[bytes]] = dict(store.pending)
            if store.floor is not None:
                entries[None] = store.floor
            _write(batch, self._db.get_column_family_handle(_cf(name)), entries)
            changes[name] = entries
            store.discard()
        batch.put(_MARKER, version.encode())
        if image is None:
            batch.delete(_IMAGE)
        else:
            batch.put(_IMAGE, image)
        self._db.write(batch)
        return changes

    def close(self) -> None:
        if self._db is None:
            return
        for store in self.stores.values():   # column family handles (and iterators) keep the database open
            store.close_scans()
            store._db = None
            store.discard()
        self._db.flush()   # the writes since open, all column families at once (no write-ahead log)
        super().close()


class StorelessTaskCopy(LocalTaskStore):
    """The local copy of a task without stores (a stateless subtopology): its marker and image in one small file
    replaced whole (:class:`_CopyFile`), where a RocksDB's open and close would cost 10-50 ms per batch."""

    def __init__(self, path: str) -> None:
        super().__init__(path, {})

    def open(self) -> None:
        self._db = _CopyFile(self.path)

    def commit(self, version: str, image: Optional[bytes] = None) -> Changes:
        self._db.replace({_MARKER: version.encode()} if image is None else
                         {_MARKER: version.encode(), _IMAGE: image})
        return {}


_LENGTH = struct.Struct("<I")


class _CopyFile:
    """The local copy of a task without stores: its marker and image (``key -> value``) in one file under ``path``,
    written whole to a temporary file and renamed over the old one, so that a crash leaves the old pair or the new
    (as RocksDB's atomic write would). A lock beside it keeps one process at a time, as RocksDB's ``LOCK`` does.
    Only what :class:`LocalTaskStore` asks of its database: ``get``, ``put``, ``delete``, ``replace``, ``close``."""

    def __init__(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)
        self._file = os.path.join(path, "task-copy")
        self._lock = open(os.path.join(path, "task-copy.lock"), "ab")  # noqa: SIM115 - held until close
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            self._lock.close()
            raise StreamsException(f"cannot open the local state store at {path}: another process is running this "
                                   f"task ({e})") from e
        self._entries = self._read()

    def _read(self) -> dict[bytes, bytes]:
        try:
            with open(self._file, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return {}
        entries: dict[bytes, bytes] = {}
        at = 0
        try:
            while at < len(data):
                parts = []
                for _ in range(2):
                    (length,) = _LENGTH.unpack_from(data, at)
                    at += 4
                    if at + length > len(data):
                        raise ValueError(f"an entry ends past the file's {len(data)} bytes")
                    parts.append(data[at:at + length])
                    at += length
                entries[parts[0]] = parts[1]
        except (struct.error, ValueError) as e:
            # unreadable (a machine crash, a full disk): it is only a copy, the engine rebuilds it
            log.warning("the local task copy %s cannot be read (%s); starting from none", self._file, e)
            return {}
        return entries

    def _write(self) -> None:
        replace_file(self._file, b"".join(_LENGTH.pack(len(part)) + part
                                          for entry in self._entries.items() for part in entry))

    def get(self, key: bytes) -> Optional[bytes]:
        return self._entries.get(key)

    def put(self, key: bytes, value: bytes) -> None:
        self._entries[key] = value
        self._write()

    def delete(self, key: bytes) -> None:
        if self._entries.pop(key, None) is not None:
            self._write()

    def replace(self, entries: dict[bytes, bytes]) -> None:
        """Every entry at once (the marker with the image it goes with)."""
        self._entries = dict(entries)
        self._write()

    def close(self) -> None:
        self._lock.close()   # releases the lock


def _rows(store: LocalKeyValueBytesStore,
          rows: Iterable[tuple[bytes, bytes]]) -> Generator[tuple[bytes, bytes], None, None]:
    """``rows`` as a generator (closing it releases the RocksDB iterator beneath)."""
    writes = store._writes
    for row in rows:
        if store._writes != writes:
            raise_written_while_scanning(store.name)
        yield row


def _pending_rows(keys: list[bytes], pending: dict[bytes, Optional[bytes]], lo: int, hi: int,
                  reverse: bool) -> Iterator[tuple[bytes, Optional[bytes]]]:
    """The batch's writes of ``keys[lo:hi]`` in order (reversed if asked), deletions (None) included."""
    for i in (range(hi - 1, lo - 1, -1) if reverse else range(lo, hi)):
        key = keys[i]
        yield key, pending[key]


def _merged(store: LocalKeyValueBytesStore, pending: Iterator[tuple[bytes, Optional[bytes]]],
            committed: Iterable[tuple[bytes, bytes]], reverse: bool) -> Generator[tuple[bytes, bytes], None, None]:
    """Committed entries with the batch's writes over them, in key order: a write hides the committed entry of its
    key (``heapq.merge`` yields the first iterable's row first on equal keys), a deletion hides it for good."""
    last: Optional[bytes] = None
    writes = store._writes
    for key, value in heapq.merge(pending, committed, key=itemgetter(0), reverse=reverse):
        if store._writes != writes:
            raise_written_while_scanning(store.name)
        if key == last:
            continue
        last = key
        if value is not None:
            yield key, value


def _write(batch: Any, handle: Any, entries: dict[Optional[bytes], Optional[bytes]]) -> None:
    """One store's changelog entries into a RocksDB write batch (puts and deletes, then a range deletion); many
    entries in a random order go in key order (:func:`_in_write_order`)."""
    floor = None
    for key, value in _in_write_order(entries):
        if key is None:
            floor = value
        elif value is None:
            batch.delete(key, handle)
        else:
            batch.put(key, value, handle)
    if floor is not None:
        batch.delete_range(b"", floor, handle)


_SORTED_WRITES = 4096   # entries from which a commit looks at their order
_ORDER_PAIRS = 64       # pairs of neighbouring keys it looks at


def _in_write_order(entries: dict[Optional[bytes], Optional[bytes]]) -> Iterable[tuple[Optional[bytes],
                                                                                   Optional[bytes]]]:
    """The entries in key order where more than a quarter of :data:`_ORDER_PAIRS` neighbouring pairs spread over
    them are out of order (a random order's: half), else as they are (increasing keys: none, or a few where the
    keys grow longer). RocksDB's memtable (a skip list) took a million keys in a random order in 2.5-3.2 s, the
    same keys sorted first in ~1.4 s with the sort (measured); keys already in order skip the sort's ~0.3 s."""
    if len(entries) < _SORTED_WRITES:
        return entries.items()
    keys = [key for key in entries if key is not None] if None in entries else list(entries)
    step = len(keys) // _ORDER_PAIRS
    if sum(keys[i] > keys[i + 1] for i in range(0, len(keys) - 1, step)) * 4 <= _ORDER_PAIRS:
        return entries.items()
    keys.sort()
    if None in entries:
        keys.append(None)   # the range deletion's bound, taken last as before
    return zip(keys, map(entries.__getitem__, keys))


def apply_changes(changes: Iterable[Changes], stores: dict[str, Any]) -> None:
    """Apply changelog entries, oldest first, to bytes stores with ``put``/``delete_below`` (an offline copy)."""
    for change in changes:
        for name, entries in change.items():
            store = stores[name]
            for key, value in entries.items():
                if key is None:
                    store.delete_below(value)
                else:
                    store.put(key, value)


def _cf(store: str) -> str:
    return f"store-{store}"

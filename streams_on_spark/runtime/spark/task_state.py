"""A task's state on Spark: a small value and a changelog in Spark's state store, a local RocksDB copy on the executor.

Spark's checkpointed state is the only durable copy (``transformWithStateInPandas`` state variables of the task's
group, on the RocksDB state store provider):

- ``task`` (a value): the task's snapshot without the content of its local stores (stream and partition times,
  schedules, placement counters, window and session stores' stream times), the version of the state and the
  changelog's size;
- ``changelog`` (a list): one row per micro-batch that changed local stores, holding just those changes.

Spark writes a batch's list append, not the whole list, so a batch costs what it changed. The key-value, window and
session stores and the buffers are read and written in a local RocksDB per task (:class:`~streams_on_spark.state.local.LocalTaskStore`)
under the executor's directory; its version marker is written atomically with each batch's changes. When the marker
is not the version Spark's state is at (a new executor or Python worker directory, a replayed batch, a restart), the
copy is rebuilt from the changelog. When the changelog holds much more than the stores (``2 * entries + 100k``), it
is replaced by the stores' content (compaction), so its length stays proportional to the stores.
"""
from __future__ import annotations

import functools
import itertools
import logging
import math
import os
import pickle
import struct
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Optional

from streams_on_spark.state.local import Changes, LocalTaskStore

log = logging.getLogger(__name__)

TASK_STATE = "task"
CHANGELOG = "changelog"


@functools.cache
def state_types() -> dict[str, Any]:
    """Each state variable's ``StructType`` (``task``: epoch string, version long, snapshot binary, wall_clock long,
    changelog_rows long, changelog_entries long; ``changelog``: changes binary). Given as types, not DDL text: pyspark
    asks Spark's state server to parse a DDL string, a round trip per variable per task call."""
    from pyspark.sql.types import BinaryType, LongType, StringType, StructField, StructType
    return {TASK_STATE: StructType([StructField("epoch", StringType()), StructField("version", LongType()),
                                    StructField("snapshot", BinaryType()), StructField("wall_clock", LongType()),
                                    StructField("changelog_rows", LongType()),
                                    StructField("changelog_entries", LongType())]),
            CHANGELOG: StructType([StructField("changes", BinaryType())])}


COMPACT_MIN_ENTRIES = 100_000
# a changelog row's size: Spark's state server hands list elements to Python 16 at a time (RUNTIME_DEFAULTS)
CHANGELOG_ROW_BYTES = 2 << 20
# changelog rows appended in one call to the state server (one message, one round trip; at most ~32 MB)
APPEND_ROWS = 16


@dataclass(frozen=True)
class SavedTask:
    """The ``task`` value: ``epoch`` names the state's lineage (new when a task first commits), ``version`` the
    micro-batch that wrote it; ``wall_clock`` is the mock time the task last saw (-1 on the system clock)."""

    epoch: str
    version: int
    snapshot: bytes
    wall_clock: int
    changelog_rows: int
    changelog_entries: int

    @property
    def marker(self) -> str:
        return f"{self.epoch}:{self.version}"


def committed_state(state: "TaskState") -> bytes:
    """What a task just committed, for the driver's copy of its stores: (batch id, snapshot, the batch's changes of
    its local stores), pickled."""
    saved = state.saved
    assert saved is not None, "committed_state() before commit()"
    return pickle.dumps((saved.version, saved.snapshot, state.last_changes), protocol=pickle.HIGHEST_PROTOCOL)


# a changelog row: this tag, the pickle's length (8 bytes, big-endian), the pickle of its changes compressed by zstd
_COMPRESSED = b"sos.zstd"
_LENGTH = struct.Struct(">Q")


@functools.cache
def _zstd() -> Any:
    """zstd at level 1 (Arrow's codec): ~1 GB/s over a pickle of changes, which it makes 6-100x smaller."""
    import pyarrow as pa
    return pa.Codec("zstd", compression_level=1)


def encode_changes(changes: Changes) -> bytes:
    """A changelog row's bytes: its changes pickled and compressed. Every byte of a row crosses to the JVM and is
    written again by Spark's state store (its RocksDB and checkpoint files): a fill's 1M-key batch was ~30 MB of
    pickles, 0.7-0.8 s of waiting on the JVM's side of ``appendList``."""
    data = pickle.dumps(changes, protocol=pickle.HIGHEST_PROTOCOL)
    return b"".join((_COMPRESSED, _LENGTH.pack(len(data)), _zstd().compress(data, asbytes=True)))


def decode_changes(data: bytes) -> Changes:
    """A changelog row's changes, from :func:`encode_changes`'s bytes or a bare pickle (rows checkpoints hold from
    before rows were compressed)."""
    if data.startswith(_COMPRESSED):
        start = len(_COMPRESSED) + _LENGTH.size
        data = _zstd().decompress(memoryview(data)[start:], _LENGTH.unpack_from(data, len(_COMPRESSED))[0],
                                  asbytes=True)
    return pickle.loads(data)


def _chunks(rows: Iterable[tuple[str, Optional[bytes], Optional[bytes]]],
            max_bytes: Optional[int] = None) -> Iterator[Changes]:
    """``(store, key, value)`` rows as changelog rows of about ``max_bytes`` each (default
    :data:`CHANGELOG_ROW_BYTES`): a big batch or a compaction never makes one huge row."""
    max_bytes = CHANGELOG_ROW_BYTES if max_bytes is None else max_bytes
    chunk: Changes = {}
    size = 0
    for store, key, value in rows:
        chunk.setdefault(store, {})[key] = value
        size += (len(key) if key is not None else 0) + (len(value) if value is not None else 0) + 16
        if size >= max_bytes:
            yield chunk
            chunk, size = {}, 0
    if chunk:
        yield chunk


def _split(changes: Changes, max_bytes: Optional[int] = None) -> Iterator[Changes]:
    """A batch's changes as changelog rows of about ``max_bytes`` each (default :data:`CHANGELOG_ROW_BYTES`), as
    :func:`_chunks` makes them, each store's entries sliced in order by counts from their average size (sizes summed
    and entries taken in C: a fill's batch changes a million keys)."""
    room = max_bytes = CHANGELOG_ROW_BYTES if max_bytes is None else max_bytes
    chunk: Changes = {}
    for store, entries in changes.items():
        left = len(entries)
        if not left:
            continue
        per_entry = (sum(map(len, filter(None, entries))) + sum(map(len, filter(None, entries.values())))) / left + 16
        items = iter(entries.items())
        while left:
            take = min(left, max(1, math.ceil(room / per_entry)))
            chunk[store] = dict(itertools.islice(items, take))
            left -= take
            room -= take * per_entry
            if room <= 0:
                yield chunk
                chunk, room = {}, max_bytes
    if chunk:
        yield chunk


def local_state_path(root: str, query_id: Optional[str], partition: int) -> str:
    """Where an executor keeps one task's local copy: per query (its checkpoint) and task."""
    return os.path.join(root, "streams-on-spark-state", query_id or "no-query", str(partition))


class TaskState:
    """One task's state variables in Spark (bound to its group by ``transformWithStateInPandas``) and its local
    copy, synchronised before the task runs and committed after."""

    def __init__(self, handle: Any) -> None:
        self._value = handle.getValueState(TASK_STATE, state_types()[TASK_STATE])
        self._changelog = handle.getListState(CHANGELOG, state_types()[CHANGELOG])
        self.saved: Optional[SavedTask] = None
        self.last_changes: Changes = {}

    def load(self) -> Optional[SavedTask]:
        """What Spark holds for this task (None for a new task)."""
        row = self._value.get()   # None when unset: one round trip to the state server (exists() would be another)
        self.saved = None if row is None else SavedTask(str(row[0]), int(row[1]), bytes(row[2]), int(row[3]),
                                                        int(row[4]), int(row[5]))
        return self.saved

    def sync(self, local: LocalTaskStore) -> bool:
        """Bring the task's local copy to the version Spark holds: as it is (True), or rebuilt from the changelog."""
        expected = None if self.saved is None else self.saved.marker
        found = local.version()
        if found == expected:
            return True
        local.clear()
        if self.saved is not None:
            log.info("rebuilding the local state at %s from the changelog (%d rows, %d entries): it was at %s, "
                     "Spark is at %s", local.path, self.saved.changelog_rows, self.saved.changelog_entries, found,
                     expected)
            applied = local.load(self._changes(), expected)
            log.info("rebuilt %s: %d entries applied", local.path, applied)
        return False

    def _changes(self) -> Iterator[Changes]:
        for row in self._changelog.get():
            yield decode_changes(bytes(row[0]))

    def commit(self, local: LocalTaskStore, batch_id: int, snapshot: bytes, wall_clock: int,
               image: Optional[bytes] = None) -> str:
        """Write the batch's store changes locally (with the task's ``image``) and to the changelog, and the
        task's value; the new version's marker."""
        saved = self.saved
        epoch = saved.epoch if saved is not None else uuid.uuid4().hex
        rows = saved.changelog_rows if saved is not None else 0
        entries = saved.changelog_entries if saved is not None else 0
        changes = local.commit(f"{epoch}:{batch_id}", image)
        self.last_changes = changes   # what interactive queries' copy on the driver applies (QueryableOutput)
        if changes:
            changed = sum(len(c) for c in changes.values())
            live = sum(store.approximate_num_entries() for store in local.stores.values())
            if entries + changed > 2 * live + COMPACT_MIN_ENTRIES:
                rows, entries = self._compact(local)
            else:
                appended, added = self._append(_split(changes))
                rows, entries = rows + appended, entries + added
        self._value.update((epoch, batch_id, snapshot, wall_clock, rows, entries))
        self.saved = SavedTask(epoch, batch_id, snapshot, wall_clock, rows, entries)
        return self.saved.marker

    def _compact(self, local: LocalTaskStore) -> tuple[int, int]:
        """Replace the changelog with the stores' content; its rows and entries."""
        self._changelog.clear()
        rows, entries = self._append(_chunks(local.dump()))
        log.info("compacted the changelog of %s to %d rows, %d entries", local.path, rows, entries)
        return rows, entries

    def _append(self, chunks: Iterator[Changes]) -> tuple[int, int]:
        """Append the chunks to the changelog as rows, :data:`APPEND_ROWS` a call to the state server (a 1M-key
        batch's ~20 rows were 20 round trips); the rows and entries appended."""
        rows = entries = 0
        while group := list(itertools.islice(chunks, APPEND_ROWS)):
            encoded = [(encode_changes(chunk),) for chunk in group]
            if len(encoded) == 1:
                self._changelog.appendValue(encoded[0])
            else:
                self._changelog.appendList(encoded)
            rows += len(group)
            entries += sum(len(c) for chunk in group for c in chunk.values())
        return rows, entries

"""Embedded topics: file-backed, multi-partition Kafka-like logs, and a Spark streaming source over them.

Embedded topics replace Kafka in test mode. The in-process engine reads and writes them through
:class:`EmbeddedTopics`; Spark Structured Streaming reads them through the Python data source
``"embedded-topics"`` (:class:`EmbeddedTopicsDataSource`). They live in files because a Python
streaming source plans in a separate Python worker process and reads on executors, so nothing
held in the test process's memory would be visible there. By default the files go under
``/dev/shm`` (RAM) when it exists.

On-disk format (version 1; all integers little-endian)::

    <root>/.lock                          flock target serialising create_topic across processes
    <root>/topics/<topic>/meta.json       {"format": 1, "partitions": N}; written last, via rename,
                                          so a topic exists only once it is complete
    <root>/topics/<topic>/.lock           flock target serialising appends to the topic
    <root>/topics/<topic>/<p>.log         partition p's records, back to back (append-only)
    <root>/topics/<topic>/<p>.index       one int64 per record: the END position of record i in
                                          <p>.log; record i spans [index[i-1] (0 for i=0), index[i])
    <root>/topics/<topic>/end-offsets     one int64 per partition: the published end offsets, then
                                          (optionally) the producer table as UTF-8 JSON; replaced (by
                                          rename) after each append, so an append that spans several
                                          partitions becomes visible at once, together with the producer
                                          table that records it

    <p>.log holds partition p's records in the layout of
    :class:`~streams_on_spark.connectors.record_batch.RecordBatch` (timestamp, key, value, headers per
    record); <p>.index holds its ends.

Consistency: writers hold the topic's flock, write a partition's records to ``.log`` first and
its index entries to ``.index`` second (one ``pwrite`` each per partition per call), then publish
the topic's new end offsets. Readers take no lock and read only up to the published end offsets and
the positions the index names, so a reader never sees a torn or half-written record, nor part of an
append. Publishing is the commit: a writer that died before it leaves records after the published
end (data, index entries, or part of either); the next writer truncates them away under the lock.

Idempotent producers: an append may name its ``producer`` and a ``sequence`` (the Spark runtime's tasks use
their query id and task, and the micro-batch id). The published producer table keeps each producer's last
sequence per topic, so a replayed append (a retried Spark task, a batch replayed after a crash) is recognised
under the lock and skipped, as Kafka's idempotent producer drops a retried batch.
"""
from __future__ import annotations

import atexit
import fcntl
import gc
import json
import logging
import os
import re
import shutil
import struct
import tempfile
import threading
from array import array
from itertools import repeat
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence, Union

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

try:  # pyspark >= 4.2 ships the mixin; without it AvailableNow falls back to a single batch
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow as _AvailableNowMixin
except ImportError:  # pragma: no cover - older pyspark
    class _AvailableNowMixin:  # type: ignore[no-redef]
        """Stand-in for pyspark's SupportsTriggerAvailableNow on versions that lack it."""

from streams_on_spark.connectors.record_batch import BIG_ENDIAN, RecordBatch, parse_records
from streams_on_spark.connectors.records import ConsumerRecord, Headers, ProducerRecord

__all__ = [
    "EmbeddedTopics",
    "EmbeddedTopicsDataSource",
    "EmbeddedTopicsStreamReader",
    "EmbeddedTopicPartition",
    "SCHEMA",
    "BATCH_SCHEMA",
    "register",
]

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
_I64 = struct.Struct("<q")
_I64x2 = struct.Struct("<qq")
_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")
_MAX_TOPIC_NAME_LENGTH = 249
_META = "meta.json"
_LOCK = ".lock"
_END_OFFSETS = "end-offsets"
_MAX_PRODUCERS = 4096  # producer table entries kept per topic (a query's tasks are one producer each)


def validate_topic_name(name: str) -> None:
    """Reject a topic name Kafka would reject (legal chars ``[a-zA-Z0-9._-]``, 1..249 chars, not ``.``/``..``)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"topic name must be a non-empty str, got {name!r}")
    if len(name) > _MAX_TOPIC_NAME_LENGTH:
        raise ValueError(f"topic name {name[:40]!r}... is {len(name)} chars long; the maximum is 249")
    if name in (".", ".."):
        raise ValueError(f"topic name cannot be {name!r}")
    if not _TOPIC_NAME.fullmatch(name):
        raise ValueError(f"topic name {name!r} is illegal: it may contain only ASCII letters, digits, '.', '_', '-'")


def _default_parent_dir() -> Optional[str]:
    """``/dev/shm`` if it is a writable directory (keeps topics in RAM), else None (the system temp dir)."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return None


def _remove_tree(path: str, owner_pid: int) -> None:
    """Remove a temp root at interpreter exit, but only in the process that created it."""
    if os.getpid() == owner_pid:
        shutil.rmtree(path, ignore_errors=True)


class EmbeddedTopics:
    """A directory of named, multi-partition, append-only topics with Kafka offsets, shared across processes.

    Appends are atomic per topic-partition and safe across processes (flock on a per-topic lock file);
    reads take no lock and see only fully written records. Pickles as its root path, so a copy in a
    Spark worker opens the same files.
    """

    def __init__(self, root: Union[str, os.PathLike[str], None] = None) -> None:
        """Open (creating if needed) the topics directory ``root``; None makes a fresh temp dir, removed by close()."""
        self._owned = root is None
        if root is None:
            root = tempfile.mkdtemp(prefix="embedded-topics-", dir=_default_parent_dir())
            atexit.register(_remove_tree, str(root), os.getpid())
        self._root = os.path.abspath(os.fspath(root))
        os.makedirs(os.path.join(self._root, "topics"), exist_ok=True)
        self._closed = False
        self._mutex = threading.RLock()  # flock excludes processes; this excludes threads sharing our fds
        self._reset_caches()

    def _reset_caches(self) -> None:
        """Forget cached partition counts and file descriptors (after fork they would be shared with the parent)."""
        self._pid = os.getpid()
        self._partition_counts: dict[str, int] = {}
        self._fds: dict[tuple[str, int, str], int] = {}
        self._lock_fds: dict[str, int] = {}

    # ------------------------------------------------------------------ lifecycle

    @property
    def root(self) -> str:
        """Absolute path of the topics directory (what the Spark source's ``path`` option takes)."""
        return self._root

    def close(self) -> None:
        """Close cached files; remove the directory if this instance created it as a temp dir."""
        with self._mutex:
            if self._pid == os.getpid():
                for fd in list(self._fds.values()) + list(self._lock_fds.values()):
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            self._reset_caches()
            if self._owned and not self._closed:
                shutil.rmtree(self._root, ignore_errors=True)
            self._closed = True

    def __enter__(self) -> "EmbeddedTopics":
        """Use as a context manager: close() on exit."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        """Pickle as the root path: the copy shares the files but never owns (removes) the directory."""
        return (EmbeddedTopics, (self._root,))

    def __repr__(self) -> str:
        return f"EmbeddedTopics({self._root!r})"

    # ------------------------------------------------------------------ topics

    def _topic_dir(self, name: str) -> str:
        """Directory holding topic ``name``'s files."""
        return os.path.join(self._root, "topics", name)

    def create_topic(self, name: str, partitions: int) -> None:
        """Create topic ``name`` with ``partitions`` partitions; a no-op if it exists with that count."""
        validate_topic_name(name)
        if not isinstance(partitions, int) or isinstance(partitions, bool) or partitions < 1:
            raise ValueError(f"partitions of topic {name} must be an int >= 1, got {partitions!r}")
        with self._mutex, open(os.path.join(self._root, _LOCK), "a+b") as lock_file:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
            existing = self._read_meta(name)
            if existing is not None:
                if existing != partitions:
                    raise ValueError(f"topic {name} already exists with {existing} partitions, cannot create it with {partitions}")
                self._partition_counts[name] = existing
                return
            tdir = self._topic_dir(name)
            os.makedirs(tdir, exist_ok=True)
            for p in range(partitions):
                for suffix in ("log", "index"):
                    path = os.path.join(tdir, f"{p}.{suffix}")
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                    os.close(fd)
            open(os.path.join(tdir, _LOCK), "ab").close()
            _write_end_offsets(tdir, [0] * partitions)
            tmp = os.path.join(tdir, f".{_META}.tmp")
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"format": FORMAT_VERSION, "partitions": partitions}, f)
            os.replace(tmp, os.path.join(tdir, _META))
            self._partition_counts[name] = partitions
            log.debug("created topic %s with %d partitions in %s", name, partitions, self._root)

    def delete_topic(self, name: str) -> None:
        """Delete topic ``name`` and its records (the application reset tool's step); a no-op if it does not exist.
        Its meta file goes first, so a reader sees the topic whole or not at all."""
        validate_topic_name(name)
        with self._mutex, open(os.path.join(self._root, _LOCK), "a+b") as lock_file:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
            for key in [k for k in self._fds if k[0] == name]:
                os.close(self._fds.pop(key))
            fd = self._lock_fds.pop(name, None)
            if fd is not None:
                os.close(fd)
            self._partition_counts.pop(name, None)
            tdir = self._topic_dir(name)
            if not os.path.isdir(tdir):
                return
            try:
                os.remove(os.path.join(tdir, _META))
            except FileNotFoundError:
                pass
            shutil.rmtree(tdir)
            log.info("deleted topic %s from %s", name, self._root)

    def _read_meta(self, name: str) -> Optional[int]:
        """Partition count from the topic's meta file, or None if the topic does not exist."""
        try:
            with open(os.path.join(self._topic_dir(name), _META), encoding="utf-8") as f:
                meta = json.load(f)
        except FileNotFoundError:
            return None
        if meta.get("format") != FORMAT_VERSION:
            raise RuntimeError(f"topic {name} in {self._root} has unsupported format {meta.get('format')!r}")
        return int(meta["partitions"])

    def partitions(self, name: str) -> int:
        """Partition count of topic ``name``; ValueError naming it if it does not exist."""
        if self._pid != os.getpid():
            self._reset_caches()
        count = self._partition_counts.get(name)
        if count is None:
            count = self._read_meta(name) if isinstance(name, str) and _TOPIC_NAME.fullmatch(name) else None
            if count is None:
                raise ValueError(f"unknown topic {name!r} in embedded topics {self._root}")
            self._partition_counts[name] = count
        return count

    def topics(self) -> dict[str, int]:
        """All complete topics and their partition counts, sorted by name."""
        result: dict[str, int] = {}
        for name in sorted(os.listdir(os.path.join(self._root, "topics"))):
            count = self._read_meta(name)
            if count is not None:
                result[name] = count
        return result

    # ------------------------------------------------------------------ files

    def _fd(self, topic: str, partition: int, suffix: str) -> int:
        """A cached read-write descriptor of one partition file (reset after fork)."""
        if self._pid != os.getpid():
            self._reset_caches()
        key = (topic, partition, suffix)
        fd = self._fds.get(key)
        if fd is None:
            path = os.path.join(self._topic_dir(topic), f"{partition}.{suffix}")
            opened = os.open(path, os.O_RDWR)
            fd = self._fds.setdefault(key, opened)  # another thread may have won the race
            if fd != opened:
                os.close(opened)
        return fd

    def _lock_fd(self, topic: str) -> int:
        """A cached descriptor of the topic's lock file; per process, so flock excludes other processes."""
        if self._pid != os.getpid():
            self._reset_caches()
        fd = self._lock_fds.get(topic)
        if fd is None:
            fd = os.open(os.path.join(self._topic_dir(topic), _LOCK), os.O_RDWR | os.O_CREAT, 0o644)
            self._lock_fds[topic] = fd
        return fd

    def _check_partition(self, topic: str, partition: int) -> int:
        """Validate ``partition`` of ``topic``; returns the topic's partition count."""
        count = self.partitions(topic)
        if partition.__class__ is not int or not 0 <= partition < count:
            raise ValueError(f"partition {partition!r} of topic {topic} is out of range: the topic has {count} partitions")
        return count

    # ------------------------------------------------------------------ append

    def append(self, records: Iterable[ProducerRecord]) -> list[int]:
        """Append ``records`` (each to its topic/partition, in arrival order); returns their offsets.

        Everything is validated and encoded before anything is written, so a bad record leaves the
        topics unchanged. Each partition gets one data write and one index write under its topic's lock.
        """
        batches: dict[tuple[str, int], RecordBatch] = {}
        indices: dict[tuple[str, int], list[int]] = {}
        n = 0
        for n, record in enumerate(records):  # noqa: B007 - n is the record count afterwards
            try:
                topic, partition, timestamp, key, value, headers = record
            except (TypeError, ValueError):
                raise TypeError(f"append needs ProducerRecords, got {record!r:.200}") from None
            batch = batches.get((topic, partition))
            if batch is None:
                self._check_partition(topic, partition)
                batch = batches[(topic, partition)] = RecordBatch(topic, partition)
                indices[(topic, partition)] = []
            batch.add(timestamp, key, value, headers)
            indices[(topic, partition)].append(n)
        if not batches:
            return []
        bases = self.append_batches(batches.values())
        if len(batches) == 1:
            (base,) = bases
            return list(range(base, base + n + 1))
        offsets: list[int] = [0] * (n + 1)
        for base, where in zip(bases, indices.values()):
            for i, idx in enumerate(where):
                offsets[idx] = base + i
        return offsets

    def append_batches(self, batches: Iterable[RecordBatch], producer: Optional[str] = None,
                       sequence: Optional[int] = None) -> list[int]:
        """Append encoded batches, each to its topic-partition; returns each batch's first offset.

        Each topic's batches become visible at once (one publish under the topic's lock). With ``producer`` and
        ``sequence`` the append is idempotent per topic: if this producer already published ``sequence`` (or a
        later one) to a topic, its batches for that topic are not written again, and the offsets returned for
        them are those of the first write where it wrote that partition, else -1.
        """
        batches = list(batches)
        if (producer is None) != (sequence is None):
            raise ValueError("append_batches needs both producer and sequence, or neither")
        for batch in batches:
            self._check_partition(batch.topic, batch.partition)
        bases = [0] * len(batches)
        by_topic: dict[str, list[int]] = {}
        for i, batch in enumerate(batches):
            by_topic.setdefault(batch.topic, []).append(i)
        with self._mutex:
            for topic in sorted(by_topic):
                lock_fd = self._lock_fd(topic)
                fcntl.flock(lock_fd, fcntl.LOCK_EX)
                try:
                    ends, producers = self._read_published(topic)
                    if producer is not None:
                        last = producers.get(producer)
                        if last is not None and last["sequence"] >= sequence:
                            log.info("%s: producer %s already wrote sequence %d (asked %d): skipping its replay",
                                     topic, producer, last["sequence"], sequence)
                            for i in by_topic[topic]:
                                bases[i] = last["bases"].get(str(batches[i].partition), -1)
                            continue
                    written: dict[str, int] = {}
                    for i in by_topic[topic]:
                        partition = batches[i].partition
                        bases[i] = self._write(topic, partition, batches[i], ends[partition])
                        ends[partition] += len(batches[i])
                        written.setdefault(str(partition), bases[i])
                    if producer is not None:
                        producers.pop(producer, None)  # re-inserted last: the table is ordered by last write
                        producers[producer] = {"sequence": sequence, "bases": written}
                        while len(producers) > _MAX_PRODUCERS:
                            del producers[next(iter(producers))]
                    _write_end_offsets(self._topic_dir(topic), ends, producers)
                finally:
                    fcntl.flock(lock_fd, fcntl.LOCK_UN)
        return bases

    def _read_published(self, topic: str) -> tuple[list[int], dict[str, Any]]:
        """The topic's published end offsets and producer table (read under its lock by a writer)."""
        ends, tail = self._published(topic)
        return ends, (json.loads(tail) if tail else {})

    def _published(self, topic: str) -> tuple[list[int], bytes]:
        """The topic's published end offsets, and the producer table's bytes after them (not parsed: readers
        need only the offsets)."""
        count = self.partitions(topic)
        try:
            with open(os.path.join(self._topic_dir(topic), _END_OFFSETS), "rb") as f:
                data = f.read()
        except FileNotFoundError:  # written by a version without the file: the indexes are the truth
            return [os.fstat(self._fd(topic, p, "index")).st_size // 8 for p in range(count)], b""
        return _decode_end_offsets(data, count, topic, self._root), data[count * 8:]

    def _write(self, topic: str, partition: int, batch: RecordBatch, published: int) -> int:
        """Write one encoded batch after the ``published`` records (data first, then index) under the topic lock;
        returns its first offset. What lies after the published end was left by a writer that died: dropped."""
        data_fd = self._fd(topic, partition, "log")
        index_fd = self._fd(topic, partition, "index")
        index_size = os.fstat(index_fd).st_size
        if index_size != published * 8:
            log.warning("%s-%d: dropping %d unpublished index bytes", topic, partition, index_size - published * 8)
            os.ftruncate(index_fd, published * 8)
        data_end = _I64.unpack(os.pread(index_fd, 8, (published - 1) * 8))[0] if published else 0
        if os.fstat(data_fd).st_size != data_end:
            log.warning("%s-%d: truncating unpublished data after position %d", topic, partition, data_end)
            os.ftruncate(data_fd, data_end)
        _pwrite_all(data_fd, batch.data, data_end)
        if not batch.ends:
            return published
        ends = batch.ends if data_end == 0 else array("q", [data_end + e for e in batch.ends])
        if BIG_ENDIAN:  # pragma: no cover - no big-endian machine here
            ends = array("q", ends)
            ends.byteswap()
        _pwrite_all(index_fd, ends.tobytes(), published * 8)
        return published

    # ------------------------------------------------------------------ read

    def end_offsets(self, name: str) -> list[int]:
        """Per partition of ``name``, the offset the next appended record will get (= record count).

        An append becomes visible here for all its partitions at once, so a reader never sees a multi-partition
        append half done (a downstream Spark query gets each upstream task's write whole, in one micro-batch).
        """
        return self._published(name)[0]

    def end_offset(self, name: str, partition: int) -> int:
        """The end offset of one partition of ``name``."""
        self._check_partition(name, partition)
        return self.end_offsets(name)[partition]

    def _read_raw(self, name: str, partition: int, start: int, end: int) -> bytes:
        """The encoded bytes of offsets [start, end): two index entries, one data read."""
        self._check_partition(name, partition)
        if start.__class__ is not int or end.__class__ is not int or not 0 <= start <= end:
            raise ValueError(f"bad offset range [{start!r}, {end!r}) for {name}-{partition}")
        if start == end:
            return b""
        index_fd = self._fd(name, partition, "index")
        if start == 0:
            first, last = 0, self._index_entry(index_fd, name, partition, end - 1, start, end)
        elif end == start + 1:
            raw = os.pread(index_fd, 16, (start - 1) * 8)
            if len(raw) != 16:
                self._beyond_end(index_fd, name, partition, start, end)
            first, last = _I64x2.unpack(raw)
        else:
            first = self._index_entry(index_fd, name, partition, start - 1, start, end)
            last = self._index_entry(index_fd, name, partition, end - 1, start, end)
        length = last - first
        data = _pread_all(self._fd(name, partition, "log"), length, first)
        if len(data) != length:
            raise RuntimeError(f"{name}-{partition}: data file shorter than its index ({len(data)} < {length} bytes at {first})")
        return data

    def read_batch(self, name: str, partition: int, start: int, end: int) -> RecordBatch:
        """Offsets [start, end) of ``name``-``partition`` as one encoded batch (no per-record decoding)."""
        import numpy as np
        self._check_partition(name, partition)
        if start.__class__ is not int or end.__class__ is not int or not 0 <= start <= end:
            raise ValueError(f"bad offset range [{start!r}, {end!r}) for {name}-{partition}")
        if start == end:
            return RecordBatch(name, partition, b"")
        index_fd = self._fd(name, partition, "index")
        first_entry = max(start - 1, 0)
        raw = _pread_all(index_fd, (end - first_entry) * 8, first_entry * 8)
        if len(raw) != (end - first_entry) * 8:
            self._beyond_end(index_fd, name, partition, start, end)
        entries = np.frombuffer(raw, "<i8")
        if start > 0:
            first, entries = int(entries[0]), entries[1:]
        else:
            first = 0
        data = _pread_all(self._fd(name, partition, "log"), int(entries[-1]) - first, first)
        if len(data) != int(entries[-1]) - first:
            raise RuntimeError(f"{name}-{partition}: data file shorter than its index at position {first}")
        return RecordBatch.from_bytes(name, partition, data, (entries - first).astype("<i8").tobytes())

    @staticmethod
    def _beyond_end(index_fd: int, name: str, partition: int, start: int, end: int) -> None:
        """Raise the ValueError for a read past the partition's end offset."""
        available = os.fstat(index_fd).st_size // 8
        raise ValueError(f"offset range [{start}, {end}) of {name}-{partition} is beyond its end offset {available}")

    def _index_entry(self, index_fd: int, name: str, partition: int, i: int, start: int, end: int) -> int:
        """End position of record ``i``; ValueError (naming the requested range) if it is not indexed yet."""
        raw = os.pread(index_fd, 8, i * 8)
        if len(raw) != 8:
            self._beyond_end(index_fd, name, partition, start, end)
        return _I64.unpack(raw)[0]

    def read_columns(self, name: str, partition: int, start: int, end: int) -> tuple[list[int], list[Optional[bytes]], list[Optional[bytes]], list[Headers]]:
        """Offsets [start, end) of ``name``-``partition`` as columns: timestamps, keys, values, headers."""
        return parse_records(self._read_raw(name, partition, start, end), end - start)

    def read(self, name: str, partition: int, start: int, end: int) -> list[ConsumerRecord]:
        """Exactly the records at offsets [start, end) of ``name``-``partition``; ValueError beyond the end offset."""
        timestamps, keys, values, headers = self.read_columns(name, partition, start, end)
        new = tuple.__new__
        rows = zip(repeat(name), repeat(partition), range(start, end), timestamps, keys, values, headers)
        if end - start < 10_000:
            return [new(ConsumerRecord, row) for row in rows]
        # Creating many tuples triggers repeated cyclic-GC passes over them: measured 4x slower.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return [new(ConsumerRecord, row) for row in rows]
        finally:
            if was_enabled:
                gc.enable()


def _decode_end_offsets(data: bytes, count: int, topic: str, root: str) -> list[int]:
    """The ``count`` end offsets an end-offsets file starts with (its producer table follows them)."""
    if len(data) < count * 8 or (len(data) > count * 8 and data[count * 8:count * 8 + 1] != b"{"):
        raise RuntimeError(f"topic {topic} in {root}: an end offsets file of {len(data)} bytes does not fit "
                           f"{count} partitions")
    ends = array("q", data[:count * 8])
    if BIG_ENDIAN:  # pragma: no cover - no big-endian machine here
        ends.byteswap()
    return ends.tolist()


def _write_end_offsets(topic_dir: str, ends: list[int], producers: Optional[Mapping[str, Any]] = None) -> None:
    """Replace a topic's published end offsets (little-endian int64 per partition) and producer table, by rename."""
    data = array("q", ends)
    if BIG_ENDIAN:  # pragma: no cover
        data.byteswap()
    tmp = os.path.join(topic_dir, f".{_END_OFFSETS}.tmp")
    with open(tmp, "wb") as f:
        f.write(data.tobytes())
        if producers:
            f.write(json.dumps(producers, separators=(",", ":")).encode())
    os.replace(tmp, os.path.join(topic_dir, _END_OFFSETS))


def _pwrite_all(fd: int, data: Union[bytes, bytearray], position: int) -> None:
    """pwrite all of ``data`` at ``position`` (loops over short writes)."""
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, position)
        view = view[written:]
        position += written


def _pread_all(fd: int, length: int, position: int) -> bytes:
    """pread ``length`` bytes at ``position`` (one call in practice; loops over short reads)."""
    data = os.pread(fd, length, position)
    if len(data) == length or not data:
        return data
    chunks = [data]
    got = len(data)
    while got < length:
        chunk = os.pread(fd, length - got, position + got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


# ====================================================================== Spark streaming source

SCHEMA = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", LongType()),
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("headers", ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))),
    ]
)

# The Arrow schema Spark expects back from read() (pyspark's to_arrow_schema(SCHEMA, "UTC")).
_HEADER_ARROW_TYPE = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
_ARROW_SCHEMA = pa.schema(
    [
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.int64()),
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("headers", pa.list_(pa.field("element", _HEADER_ARROW_TYPE))),
    ]
)
_READ_CHUNK = 65536  # records per Arrow batch yielded by read()
_MAX_BATCH_BYTES = 64 << 20  # with layout=batches, a row's data stays far below Arrow's 2 GiB per binary column

# layout=batches: one row per chunk of consecutive records of a topic-partition, as a RecordBatch (offset = the
# offset of its first record). What the Spark runtime reads: no per-record decoding or conversion in Spark.
BATCH_SCHEMA = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("ends", BinaryType()),
        StructField("data", BinaryType()),
    ]
)
_BATCH_ARROW_SCHEMA = pa.schema(
    [
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("ends", pa.binary()),
        pa.field("data", pa.binary()),
    ]
)
LAYOUTS = ("records", "batches")

Offsets = dict[str, dict[str, int]]


class EmbeddedTopicPartition(InputPartition):
    """One Spark input partition: offsets [start, end) of one topic-partition (picklable, no open files)."""

    def __init__(self, root: str, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.root = root
        self.topic = topic
        self.partition = partition
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"EmbeddedTopicPartition({self.topic}-{self.partition} [{self.start}, {self.end}))"


def _to_record_batch(topic: str, partition: int, start: int, columns: tuple[list[int], list[Optional[bytes]], list[Optional[bytes]], list[Headers]]) -> pa.RecordBatch:
    """Build the Arrow batch Spark expects from parsed columns (faster than yielding tuples)."""
    timestamps, keys, values, headers = columns
    n = len(timestamps)
    if any(headers):
        list_offsets = [0]
        hkeys: list[str] = []
        hvalues: list[Optional[bytes]] = []
        total = 0
        for hs in headers:
            if hs:
                total += len(hs)
                for hk, hv in hs:
                    hkeys.append(hk)
                    hvalues.append(hv)
            list_offsets.append(total)
        structs = pa.StructArray.from_arrays(
            [pa.array(hkeys, pa.string()), pa.array(hvalues, pa.binary())], fields=list(_HEADER_ARROW_TYPE)
        )
        header_array = pa.ListArray.from_arrays(pa.array(list_offsets, pa.int32()), structs, type=_ARROW_SCHEMA.field("headers").type)
    else:
        header_array = pa.ListArray.from_arrays(
            pa.array([0] * (n + 1), pa.int32()),
            pa.StructArray.from_arrays([pa.array([], pa.string()), pa.array([], pa.binary())], fields=list(_HEADER_ARROW_TYPE)),
            type=_ARROW_SCHEMA.field("headers").type,
        )
    return pa.RecordBatch.from_arrays(
        [
            pa.repeat(pa.scalar(topic, pa.string()), n),
            pa.repeat(pa.scalar(partition, pa.int32()), n),
            pa.array(range(start, start + n), pa.int64()),
            pa.array(timestamps, pa.int64()),
            pa.array(keys, pa.binary()),
            pa.array(values, pa.binary()),
            header_array,
        ],
        schema=_ARROW_SCHEMA,
    )


def _to_batch_rows(batch: RecordBatch, first_offset: int) -> Iterator[pa.RecordBatch]:
    """A record batch as rows of the ``batches`` layout, split so that no row's data exceeds ``_MAX_BATCH_BYTES``."""
    import numpy as np
    ends = np.frombuffer(batch.ends_bytes(), "<i8")
    lo = 0
    while lo < len(ends):
        base = int(ends[lo - 1]) if lo else 0
        hi = max(lo + 1, int(np.searchsorted(ends, base + _MAX_BATCH_BYTES, side="right")))
        data = memoryview(batch.data)[base:int(ends[hi - 1])]
        yield pa.RecordBatch.from_arrays(
            [pa.array([batch.topic], pa.string()), pa.array([batch.partition], pa.int32()),
             pa.array([first_offset + lo], pa.int64()), pa.array([(ends[lo:hi] - base).tobytes()], pa.binary()),
             pa.array([bytes(data)], pa.binary())],
            schema=_BATCH_ARROW_SCHEMA)
        lo = hi


def _parse_starting_offsets(option: str, topics: Sequence[str], store: EmbeddedTopics) -> Offsets:
    """Resolve ``startingOffsets``: "earliest", "latest", or Kafka-style JSON ``{"t": {"0": 5, "1": -2}}`` (-2 earliest, -1 latest)."""
    spec = option.strip()
    ends = {t: store.end_offsets(t) for t in topics}
    if spec == "earliest":
        return {t: {str(p): 0 for p in range(len(e))} for t, e in ends.items()}
    if spec == "latest":
        return {t: {str(p): o for p, o in enumerate(e)} for t, e in ends.items()}
    try:
        given = json.loads(spec)
    except ValueError:
        raise ValueError(f'startingOffsets must be "earliest", "latest" or JSON like {{"topic": {{"0": 5}}}}, got {option!r}') from None
    result: Offsets = {}
    for t, e in ends.items():
        per = given.get(t, {})
        offsets: dict[str, int] = {}
        for p, end in enumerate(e):
            o = int(per.get(str(p), -2))
            offsets[str(p)] = 0 if o == -2 else end if o == -1 else o
            if not 0 <= offsets[str(p)] <= end:
                raise ValueError(f"startingOffsets for {t}-{p} is {o}, outside [0, {end}]")
        result[t] = offsets
    return result


class EmbeddedTopicsStreamReader(DataSourceStreamReader, _AvailableNowMixin):
    """Kafka-source semantics over embedded topics: one input partition per topic-partition and [start, end) range.

    Planning methods run in a driver-side Python worker; ``read`` runs in executors on a pickled copy.
    Reads are deterministic, so a batch re-planned on the same offsets returns the same rows.
    """

    def __init__(self, options: Mapping[str, str]) -> None:
        # Spark hands options over in a CaseInsensitiveDict whose keys are lower-cased: normalise any mapping.
        options = {k.lower(): v for k, v in options.items()}
        root = options.get("path")
        if not root:
            raise ValueError('the embedded-topics source needs option "path" (the EmbeddedTopics root)')
        topics = [t.strip() for t in options.get("topics", "").split(",") if t.strip()]
        if not topics:
            raise ValueError('the embedded-topics source needs option "topics" (comma-separated topic names)')
        self.root = os.path.abspath(root)
        self.topics = list(dict.fromkeys(topics))
        self.layout = options.get("layout", "records")
        if self.layout not in LAYOUTS:
            raise ValueError(f'the embedded-topics source option "layout" must be one of {LAYOUTS}, got {self.layout!r}')
        self.starting_offsets = options.get("startingoffsets", "earliest")
        max_offsets = options.get("maxoffsetspertrigger")
        self.max_offsets_per_trigger = int(max_offsets) if max_offsets else None
        if self.max_offsets_per_trigger is not None and self.max_offsets_per_trigger < 1:
            raise ValueError(f"maxOffsetsPerTrigger must be >= 1, got {max_offsets!r}")
        self._target: Optional[Offsets] = None  # AvailableNow: the end offsets when the query started
        with self._store() as store:
            for t in self.topics:
                store.partitions(t)  # fail fast, naming the topic, if it does not exist

    def _store(self) -> EmbeddedTopics:
        """A fresh handle on the topics (never cached: the reader is pickled and runs in several processes)."""
        return EmbeddedTopics(self.root)

    def _current(self) -> Offsets:
        """The topics' current end offsets in the source's offset format."""
        with self._store() as store:
            return {t: {str(p): o for p, o in enumerate(store.end_offsets(t))} for t in self.topics}

    def initialOffset(self) -> dict:
        """Where a new query starts: ``startingOffsets`` (default earliest, i.e. all 0)."""
        with self._store() as store:
            return _parse_starting_offsets(self.starting_offsets, self.topics, store)

    def prepareForTriggerAvailableNow(self) -> None:
        """Freeze the target offsets: with AvailableNow the query reads up to today's ends, then stops."""
        self._target = self._current()
        log.debug("AvailableNow target offsets: %s", self._target)

    def getDefaultReadLimit(self) -> ReadLimit:
        """``maxOffsetsPerTrigger`` as a ReadMaxRows limit, else read all available."""
        if self.max_offsets_per_trigger is None:
            return ReadAllAvailable()
        return ReadMaxRows(self.max_offsets_per_trigger)

    def latestOffset(self, start: Optional[dict] = None, limit: Optional[ReadLimit] = None) -> dict:
        """The end offsets of the next batch (both the pre-4.2 no-arg and the 4.2+ ``(start, limit)`` forms).

        The current end offsets, capped by the AvailableNow target and by a ReadMaxRows limit
        (split over partitions proportionally to their backlog, like Kafka's maxOffsetsPerTrigger).
        """
        latest = self._target if self._target is not None else self._current()
        if start is None or not isinstance(limit, ReadMaxRows):
            return latest
        return _cap(start, latest, limit.max_rows)

    def reportLatestOffset(self) -> Optional[dict]:
        """Current end offsets, for the query progress report."""
        return self._current()

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        """One input partition per topic-partition with new records in [start, end); none if nothing is new."""
        result: list[InputPartition] = []
        for topic in self.topics:
            ends = end.get(topic, {})
            starts = start.get(topic, {})
            for p in sorted(ends, key=int):
                s, e = int(starts.get(p, 0)), int(ends[p])
                if s > e:
                    raise ValueError(f"{topic}-{p}: start offset {s} is after end offset {e} (was the topic recreated?)")
                if s < e:
                    result.append(EmbeddedTopicPartition(self.root, topic, int(p), s, e))
        return result

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        """Yield the partition's records in offset order, as Arrow batches of the source schema."""
        assert isinstance(partition, EmbeddedTopicPartition), partition
        with EmbeddedTopics(partition.root) as store:
            for chunk_start in range(partition.start, partition.end, _READ_CHUNK):
                chunk_end = min(chunk_start + _READ_CHUNK, partition.end)
                if self.layout == "batches":
                    batch = store.read_batch(partition.topic, partition.partition, chunk_start, chunk_end)
                    yield from _to_batch_rows(batch, chunk_start)
                    continue
                columns = store.read_columns(partition.topic, partition.partition, chunk_start, chunk_end)
                yield _to_record_batch(partition.topic, partition.partition, chunk_start, columns)

    def commit(self, end: dict) -> None:
        """Nothing to clean up: embedded topics keep all records (no retention)."""

    def stop(self) -> None:
        """Nothing to release: every method opens and closes its own files."""


def _cap(start: dict, latest: Offsets, max_rows: int) -> Offsets:
    """End offsets admitting at most ``max_rows`` records past ``start``, shared proportionally to backlog."""
    backlog = {(t, p): max(0, e - int(start.get(t, {}).get(p, 0))) for t, ps in latest.items() for p, e in ps.items()}
    total = sum(backlog.values())
    if total <= max_rows:
        return latest
    grant = {tp: n * max_rows // total for tp, n in backlog.items()}
    leftover = max_rows - sum(grant.values())
    for tp, n in backlog.items():  # hand out the rounding remainder in order
        if leftover <= 0:
            break
        extra = min(leftover, n - grant[tp])
        grant[tp] += extra
        leftover -= extra
    return {t: {p: int(start.get(t, {}).get(p, 0)) + grant[(t, p)] if backlog[(t, p)] else e for p, e in ps.items()} for t, ps in latest.items()}


class EmbeddedTopicsDataSource(DataSource):
    """Spark data source ``"embedded-topics"``: options ``path``, ``topics``, ``startingOffsets``, ``maxOffsetsPerTrigger``,
    ``layout`` (``records``: one row per record, like Spark's Kafka source; ``batches``: one row per record batch)."""

    @classmethod
    def name(cls) -> str:
        """The format name: ``spark.readStream.format("embedded-topics")``."""
        return "embedded-topics"

    def schema(self) -> StructType:
        """Kafka-source-like columns (topic, partition, offset, timestamp (ms), key, value, headers), or with
        ``layout=batches`` topic, partition, offset (of the first record), ends, data."""
        layout = {k.lower(): v for k, v in self.options.items()}.get("layout", "records")
        return BATCH_SCHEMA if layout == "batches" else SCHEMA

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """The micro-batch reader (planning in a driver-side worker, ``read`` on executors)."""
        return EmbeddedTopicsStreamReader(dict(self.options))


def register(spark: Any) -> None:
    """Register the ``embedded-topics`` data source with ``spark`` (safe to call repeatedly)."""
    spark.dataSource.register(EmbeddedTopicsDataSource)

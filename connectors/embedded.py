"""Embedded topics: file-backed, multi-partition Kafka-like logs (no Spark needed to use them).

Embedded topics replace Kafka in test mode. The in-process engine reads and writes them through
:class:`EmbeddedTopics`; Spark Structured Streaming reads them through the Python data source
``"embedded-topics"`` (``embedded_source.EmbeddedTopicsDataSource``). They live in files because a Python
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
    :class:`~streams_on_spark.record_batch.RecordBatch` (timestamp, key, value, headers per
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
from typing import Any, Iterable, Mapping, Optional, Union

from streams_on_spark.files import replace_file
from streams_on_spark.record_batch import BIG_ENDIAN, RecordBatch, parse_records
from streams_on_spark.records import ConsumerRecord, Headers, ProducerRecord

__all__ = ["EmbeddedTopics", "validate_topic_name"]

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
_I64 = struct.Struct("<q")
_I64x2 = struct.Struct("<qq")
_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")
_MAX_TOPIC_NAME_LENGTH = 249
_META = "meta.json"
_LOCK = ".lock"
_END_OFFSETS = "end-offsets"
_BATCH_ENDS = "batch-end-offsets"   # the end offsets as of the writing query's last committed micro-batch
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
            replace_file(os.path.join(tdir, _META),
                         json.dumps({"format": FORMAT_VERSION, "partitions": partitions}).encode("utf-8"))
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

    def publish_batch(self, name: str) -> None:
        """Record ``name``'s current end offsets as its *batch end offsets*: where readers that take a writer's
        micro-batches whole stop (the Spark runtime calls this when the query writing the topic commits a batch,
        after every task of the batch has appended)."""
        with self._mutex:
            lock_fd = self._lock_fd(name)
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            try:
                _write_end_offsets(self._topic_dir(name), self._published(name)[0], name=_BATCH_ENDS)
            finally:
                fcntl.flock(lock_fd, fcntl.LOCK_UN)

    def batch_end_offsets(self, name: str) -> Optional[list[int]]:
        """The end offsets :meth:`publish_batch` last recorded for ``name`` (None if it never did), each at most
        the partition's end offset (a topic deleted and created again starts over)."""
        try:
            with open(os.path.join(self._topic_dir(name), _BATCH_ENDS), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        ends = self.end_offsets(name)
        return [min(b, e) for b, e in zip(_decode_end_offsets(data, len(ends), name, self._root), ends)]

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


def _write_end_offsets(topic_dir: str, ends: list[int], producers: Optional[Mapping[str, Any]] = None,
                       name: str = _END_OFFSETS) -> None:
    """Replace a topic's published end offsets (little-endian int64 per partition) and producer table (or the file
    ``name`` of other end offsets), by rename."""
    data = array("q", ends)
    if BIG_ENDIAN:  # pragma: no cover
        data.byteswap()
    table = json.dumps(producers, separators=(",", ":")).encode() if producers else b""
    replace_file(os.path.join(topic_dir, name), data.tobytes() + table)


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

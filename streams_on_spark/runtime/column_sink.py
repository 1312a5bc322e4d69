"""A fused sink's records held as columns and encoded a batch at a time: what a fused chain's sink does record by
record (serialize, murmur2 of the key bytes, the record's prefix, key and value appended to its partition's record
batch), done over a batch's records at once by Arrow and numpy.

A fused chain compiled for a batch (:class:`~streams_on_spark.runtime.fused.FusedChains`) appends each record its
sink takes this way to two lists (key, value), and at the end of each source record its timestamp and the count
held so far (a chain's records keep their source record's timestamp); :meth:`ColumnSink.flush` then encodes
them into the partitions' batches exactly as the record-by-record code would have, in the same order. The chain
flushes before anything else can write to those partitions (a record of the same sink that takes the record-by-record
code, the collector's own ``send``, a failure) and at the end of the batch.

Taken only where the inline code's rules reduce to one answer for every held record: the sink's key and value serdes
are Kafka's String serde in UTF-8 and both are a ``str`` (so serializing cannot fail: UTF-8 with ``replace``), the
record has no headers, the sink has no partitioner and is the only sink writing its topic, and the task's output is
grouped by destination (``PartitionedRecords``). A batch whose strings Arrow does not take (a lone surrogate, which
``replace`` turns into ``?``) or whose timestamps are not all int64 takes the record-by-record encoding, which is
also used for small batches.
"""
from __future__ import annotations

import itertools
import operator
import threading
from typing import Any

from streams_on_spark.errors import IllegalStateError
from streams_on_spark.partitioner import partition_for_key, positive_hashes
from streams_on_spark.record_batch import PREFIX

__all__ = ["ColumnSink"]

#: from this many records a flush encodes with Arrow and numpy; fewer go through the record-by-record encoding
VECTOR_MIN = 64
#: records encoded at once (bounds the temporary arrays, which are reused from one chunk to the next)
CHUNK = 32768

_PREFIX_DTYPE = [("ts", "<i8"), ("kl", "<i4"), ("vl", "<i4"), ("hc", "<i4")]


class _Scratch(threading.local):
    """Per thread, numpy arrays reused by every flush (a fresh large array costs its pages' faults each time)."""

    def __init__(self) -> None:
        self.size = 0
        self.prefix: Any = None
        self.index: Any = None
        self.prefix_offsets: Any = None

    def arrays(self, n: int) -> tuple[Any, Any, Any]:
        """(prefix records, take indices, prefix offsets), at least ``n`` long (3 n for the indices)."""
        if n > self.size:
            import numpy as np
            size = max(n, 1024)
            self.prefix = np.zeros(size, dtype=_PREFIX_DTYPE)   # the header count stays 0
            self.index = np.empty(3 * size, np.int64)
            self.prefix_offsets = np.arange(0, 20 * size + 1, 20, dtype=np.int64)
            self.size = size
        return self.prefix, self.index, self.prefix_offsets


_scratch = _Scratch()


class ColumnSink:
    """One sink's held records (see the module doc): ``keys`` and ``values`` appended to by the generated chain, and
    per source record the chain ran since the last flush its timestamp (``stamps``) and how many records the sink
    held at its end (``marks``: a chain's records keep their source record's timestamp); encoded into ``topic``'s
    ``count`` partitions' batches of ``buffer`` by :meth:`flush`."""

    __slots__ = ("keys", "values", "stamps", "marks", "topic", "count", "_datas", "_ends", "_add")

    def __init__(self, buffer: Any, topic: str, count: int) -> None:
        self.keys: list[str] = []
        self.values: list[str] = []
        self.stamps: list[int] = []
        self.marks: list[int] = []
        self.topic, self.count = topic, count
        buffers = [batch.buffers() for batch in buffer.partition_batches(topic, count)]
        self._datas = [data for data, _ in buffers]
        self._ends = [ends for _, ends in buffers]
        self._add = buffer.add   # the checked way (RecordBatch.add's rules), as the inline code's

    def flush(self, timestamp: Any = None) -> None:
        """Encode the held records into their partitions' batches, in order, and forget them. ``timestamp``: the
        source record in process, whose records held so far follow the last mark (None between source records)."""
        keys, values, stamps, marks = self.keys, self.values, self.stamps, self.marks
        n = len(keys)
        try:
            if not n:
                return
            if not marks or marks[-1] < n:   # flushed inside a source record: its records so far
                if timestamp is None:
                    raise IllegalStateError(f"records held for {self.topic} without their source record's timestamp")
                stamps.append(timestamp)
                marks.append(n)
            counts = [marks[0], *map(operator.sub, marks[1:], marks[:-1])]
            if n < VECTOR_MIN:
                self._encode_each(keys, values, _repeated(stamps, counts))
                return
            import numpy as np
            times = np.array(stamps)
            if times.dtype != np.int64:   # a Python int past int64, a float: the checked way, record by record
                self._encode_each(keys, values, _repeated(stamps, counts))
                return
            times = np.repeat(times, counts)
            for at in range(0, n, CHUNK):
                k, v, t = keys[at:at + CHUNK], values[at:at + CHUNK], times[at:at + CHUNK]
                if not self._encode_columns(k, v, t):
                    self._encode_each(k, v, t.tolist())
        finally:
            del keys[:], values[:], stamps[:], marks[:]

    def discard(self) -> None:
        """Forget the held records (the task failed: its output is not written)."""
        del self.keys[:], self.values[:], self.stamps[:], self.marks[:]

    def _encode_each(self, keys: list, values: list, timestamps: list) -> None:
        """The inline sink's code, record by record (the same bytes, the same checked way where the prefix cannot be
        packed)."""
        count, datas, ends, prefix, topic = self.count, self._datas, self._ends, PREFIX.pack, self.topic
        for k, v, ts in zip(keys, values, timestamps):
            kb = k.encode("utf-8", "replace")
            vb = kb if v is k else v.encode("utf-8", "replace")
            place = partition_for_key(kb, count) if count > 1 else 0
            try:
                head = prefix(ts, len(kb), len(vb), 0)
            except Exception:
                self._add(topic, place, ts, kb, vb, ())
                continue
            data = datas[place]
            data += head
            data += kb
            if vb:
                data += vb
            ends[place].append(len(data))

    def _encode_columns(self, keys: list, values: list, stamps: Any) -> bool:
        """The same as :meth:`_encode_each` by Arrow and numpy: keys and values encoded in one call each, their
        partitions from :func:`~streams_on_spark.partitioner.positive_hashes`, the records grouped by partition in
        order (a stable sort), and each record's prefix, key and value interleaved by one Arrow ``take`` over the
        three columns (``stamps``: the records' timestamps, int64). False (nothing written) where Arrow does not take
        the strings."""
        import numpy as np
        import pyarrow as pa
        n = len(keys)
        try:
            key_column = pa.array(keys, pa.large_string())
            value_column = key_column if values == keys else pa.array(values, pa.large_string())
        except (pa.ArrowException, UnicodeError):   # a lone surrogate: encoded with replace, record by record
            return False
        wide = pa.large_binary()
        key_column, value_column = key_column.cast(wide), value_column.cast(wide)
        key_buffers, value_buffers = key_column.buffers(), value_column.buffers()
        key_offsets = np.frombuffer(key_buffers[1], np.int64, n + 1)
        value_offsets = np.frombuffer(value_buffers[1], np.int64, n + 1)
        count = self.count
        if count > 1:
            place = positive_hashes(key_offsets, key_buffers[2] or b"")
            place %= np.uint32(count)
            order = np.argsort(place.astype(np.uint16 if count < 65536 else np.uint32), kind="stable")
            bounds = np.zeros(count + 1, np.int64)
            np.cumsum(np.bincount(place, minlength=count), out=bounds[1:])
        else:
            order = np.arange(n)
            bounds = np.array([0, n])
        prefix, index, prefix_offsets = _scratch.arrays(n)
        prefix = prefix[:n]
        prefix["ts"] = stamps
        np.subtract(key_offsets[1:], key_offsets[:-1], out=prefix["kl"], casting="unsafe")
        np.subtract(value_offsets[1:], value_offsets[:-1], out=prefix["vl"], casting="unsafe")
        prefixes = pa.LargeBinaryArray.from_buffers(wide, n, [None, pa.py_buffer(prefix_offsets[:n + 1]),
                                                               pa.py_buffer(prefix)])
        columns = pa.concat_arrays([prefixes, key_column, value_column])
        index = index[:3 * n]
        index[0::3] = order
        np.add(order, n, out=index[1::3])
        np.add(order, 2 * n, out=index[2::3])
        records = columns.take(pa.array(index))
        buffers = records.buffers()
        offsets = np.frombuffer(buffers[1], np.int64, 3 * n + 1)[::3]
        data = memoryview(buffers[2]) if buffers[2] is not None else memoryview(b"")
        for p in range(count):
            lo, hi = int(bounds[p]), int(bounds[p + 1])
            if lo == hi:
                continue
            start = int(offsets[lo])
            out = self._datas[p]
            base = len(out) - start
            out += data[start:int(offsets[hi])]
            self._ends[p].frombytes((offsets[lo + 1:hi + 1] + base).tobytes())
        return True


def _repeated(stamps: list, counts: list) -> list:
    """Each source record's timestamp once per record it holds."""
    return list(itertools.chain.from_iterable(map(itertools.repeat, stamps, counts)))

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
from typing import Any

from streams_on_spark.errors import IllegalStateError
from streams_on_spark.partitioner import partition_for_key
from streams_on_spark.record_batch import encode_arrow_headerless, encode_headerless, headerless_by_arrow

__all__ = ["ColumnSink"]

#: records encoded at once (bounds the temporary arrays, which are reused from one chunk to the next)
CHUNK = 32768
_MIN_INT64, _MAX_INT64 = -0x8000000000000000, 0x7FFFFFFFFFFFFFFF


class ColumnSink:
    """One sink's held records (see the module doc): ``keys`` and ``values`` appended to by the generated chain, and
    per source record the chain ran since the last flush its timestamp (``stamps``) and how many records the sink
    held at its end (``marks``: a chain's records keep their source record's timestamp); encoded into ``topic``'s
    ``count`` partitions' batches of ``buffer`` by :meth:`flush`."""

    __slots__ = ("keys", "values", "stamps", "marks", "topic", "count", "_outs", "_add")

    def __init__(self, buffer: Any, topic: str, count: int) -> None:
        self.keys: list[str] = []
        self.values: list[str] = []
        self.stamps: list[int] = []
        self.marks: list[int] = []
        self.topic, self.count = topic, count
        self._outs = [batch.buffers() for batch in buffer.partition_batches(topic, count)]   # (data, ends) each
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
            if not headerless_by_arrow(n, self.count):   # record by record (encode_headerless' own choice)
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
        """The inline sink's code: each record's key and value encoded, then the records encoded into their
        partitions' batches (:func:`~streams_on_spark.record_batch.encode_headerless`: the same bytes); where a
        timestamp is not an int64, every record the checked way, as the inline code takes it (the record's error)."""
        key_bytes = [k.encode("utf-8", "replace") for k in keys]
        value_bytes = [kb if v is k else v.encode("utf-8", "replace") for k, v, kb in zip(keys, values, key_bytes)]
        if all(ts.__class__ is int for ts in timestamps) and _MIN_INT64 <= min(timestamps) <= max(timestamps) <= \
                _MAX_INT64:
            encode_headerless(self._outs, timestamps, key_bytes, value_bytes)
            return
        count, topic, add = self.count, self.topic, self._add
        for kb, vb, ts in zip(key_bytes, value_bytes, timestamps):
            add(topic, partition_for_key(kb, count) if count > 1 else 0, ts, kb, vb, ())

    def _encode_columns(self, keys: list, values: list, stamps: Any) -> bool:
        """The same as :meth:`_encode_each` by Arrow: keys and values encoded in one call each, then
        :func:`~streams_on_spark.record_batch.encode_arrow_headerless` (``stamps``: the records' timestamps, int64).
        False (nothing written) where Arrow does not take the strings."""
        import pyarrow as pa
        try:
            key_column = pa.array(keys, pa.large_string())
            value_column = key_column if values == keys else pa.array(values, pa.large_string())
        except (pa.ArrowException, UnicodeError):   # a lone surrogate: encoded with replace, record by record
            return False
        wide = pa.large_binary()
        encode_arrow_headerless(self._outs, stamps, key_column.cast(wide), value_column.cast(wide))
        return True


def _repeated(stamps: list, counts: list) -> list:
    """Each source record's timestamp once per record it holds."""
    return list(itertools.chain.from_iterable(map(itertools.repeat, stamps, counts)))

"""``RecordBatch``: serialized records of one topic-partition, back to back, in one binary layout.

The layout is the embedded topics' log format, and also how a Spark task hands its output to the sink: records
travel and are stored as batches (like Kafka's own record batches), not one row or object per record.

Layout (all integers little-endian)::

    record  = prefix, key bytes, value bytes, headers
      prefix  = timestamp int64, key length int32, value length int32, header count int32
                (a length of -1 means null and is followed by no bytes; b"" has length 0)
      header  = key length int32, key UTF-8 bytes, value length int32 (-1 = null), value bytes

    ends    = one int64 per record: the END position of record i in ``data``; record i spans
              [ends[i-1] (0 for i=0), ends[i])

The three fixed-size lengths are hoisted into one 20-byte prefix so that a record is parsed with a single
``struct.unpack_from`` (measured ~1.7x faster to parse than interleaving the lengths).
"""
from __future__ import annotations

import struct
import sys
import threading
from array import array
from typing import Any, Iterable, NamedTuple, Optional, Sequence, Union

from streams_on_spark.partitioner import partition_for_key, positive_hashes
from streams_on_spark.records import Headers, ProducerRecord

__all__ = ["RecordBatch", "PartitionedRecords", "parse_records", "encode_by_partition", "encode_headerless",
           "encode_arrow_headerless", "headerless_by_arrow", "merge_by_stream_time", "ORDER_KEY"]

PREFIX = struct.Struct("<qiii")  # timestamp, key length, value length, header count
_I32 = struct.Struct("<i")
_NULL = b"\xff\xff\xff\xff"  # int32 -1: a null key/value/header value
BIG_ENDIAN = sys.byteorder == "big"  # ends are little-endian int64; array("q") is native


def as_bytes(data: Any, what: str, topic: str, partition: int) -> Optional[bytes]:
    """Slow path of record encoding: accept None and bytes-like objects, reject anything else."""
    if data is None or data.__class__ is bytes:
        return data
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"record {what} for {topic}-{partition} must be bytes or None, got {type(data).__name__}")


def _as_headers(headers: Any, topic: str, partition: int) -> Headers:
    """Slow path: headers given as a list or other iterable of pairs become a tuple."""
    try:
        return tuple(headers)
    except TypeError:
        raise TypeError(f"headers of a record for {topic}-{partition} must be a sequence of (str, bytes|None) "
                        f"pairs, got {headers!r:.100}") from None


def _encode_headers(headers: Headers, topic: str, partition: int) -> bytes:
    """Encode a record's headers: per header the UTF-8 key and the value, both int32-length-prefixed."""
    parts: list[bytes] = []
    pack = _I32.pack
    for header in headers:
        try:
            hkey, hvalue = header
        except (TypeError, ValueError):
            raise TypeError(f"a header of a record for {topic}-{partition} must be a (str, bytes|None) pair, "
                            f"got {header!r}") from None
        if not isinstance(hkey, str):
            raise TypeError(f"header key of a record for {topic}-{partition} must be str, got {type(hkey).__name__}")
        kb = hkey.encode("utf-8")
        parts.append(pack(len(kb)))
        parts.append(kb)
        hvalue = as_bytes(hvalue, f"header {hkey!r} value", topic, partition)
        if hvalue is None:
            parts.append(_NULL)
        else:
            parts.append(pack(len(hvalue)))
            parts.append(hvalue)
    return b"".join(parts)


def parse_records(buf: Union[bytes, bytearray, memoryview], count: int, ends: Optional[array] = None) -> tuple[
        list[int], list[Optional[bytes]], list[Optional[bytes]], list[Headers]]:
    """Decode ``count`` back-to-back records from ``buf`` into columns (timestamps, keys, values, headers); given
    their ``ends``, a batch of some size without headers is decoded by Arrow (:func:`_parse_vectorised`)."""
    if ends is not None and count >= _PARSE_VECTOR_MIN and len(ends) == count and not BIG_ENDIAN:
        columns = _parse_vectorised(buf, ends)
        if columns is not None:
            return columns
    timestamps: list[int] = []
    keys: list[Optional[bytes]] = []
    values: list[Optional[bytes]] = []
    headers: list[Headers] = [()] * count  # records with headers are rare: patch them in place
    add_ts, add_key, add_value = timestamps.append, keys.append, values.append
    unpack = PREFIX.unpack_from
    unpack_i32 = _I32.unpack_from
    if not isinstance(buf, bytes):
        buf = bytes(buf)
    pos = 0
    end = len(buf)
    while pos < end:
        ts, klen, vlen, hcount = unpack(buf, pos)
        pos += 20
        add_ts(ts)
        if klen >= 0:
            add_key(buf[pos : pos + klen])
            pos += klen
        else:
            add_key(None)
        if vlen >= 0:
            add_value(buf[pos : pos + vlen])
            pos += vlen
        else:
            add_value(None)
        if hcount:
            hs = []
            for _ in range(hcount):
                (hklen,) = unpack_i32(buf, pos)
                pos += 4
                hkey = buf[pos : pos + hklen].decode("utf-8")
                pos += hklen
                (hvlen,) = unpack_i32(buf, pos)
                pos += 4
                if hvlen >= 0:
                    hs.append((hkey, buf[pos : pos + hvlen]))
                    pos += hvlen
                else:
                    hs.append((hkey, None))
            if len(timestamps) <= count:
                headers[len(timestamps) - 1] = tuple(hs)
    if pos != end or len(timestamps) != count:
        raise RuntimeError(f"corrupt record batch: expected {count} records in {end} bytes, parsed "
                           f"{len(timestamps)} ending at {pos}")
    return timestamps, keys, values, headers


_PREFIX_DTYPE = [("ts", "<i8"), ("kl", "<i4"), ("vl", "<i4"), ("hc", "<i4")]   # numpy's view of a prefix


def _parse_vectorised(buf: Union[bytes, bytearray, memoryview], ends: array) -> Optional[tuple[
        list[int], list[Optional[bytes]], list[Optional[bytes]], list[Headers]]]:
    """:func:`parse_records` of records without headers, by Arrow (~0.1 µs a record against ~0.6-1 µs for the loop):
    :func:`arrow_columns` made Python lists. None where it gives none (the loop then decodes, or names what is
    wrong)."""
    import numpy as np
    columns = arrow_columns(buf, ends)
    if columns is None:
        return None
    keys, values = columns.keys.to_pylist(), columns.values.to_pylist()
    for column, lengths in ((keys, columns.key_lengths), (values, columns.value_lengths)):
        if (lengths < 0).any():
            for i in np.flatnonzero(lengths < 0).tolist():
                column[i] = None
    return columns.timestamps.tolist(), keys, values, [()] * len(keys)


class ArrowColumns(NamedTuple):
    """A batch of records without headers as arrays, without a Python object per record: numpy int64 timestamps and
    key and value lengths (-1: null), and the keys and values as Arrow binary arrays of slices of the batch's buffer
    (a null's slice empty)."""

    timestamps: Any
    key_lengths: Any
    value_lengths: Any
    keys: Any
    values: Any


def arrow_columns(buf: Union[bytes, bytearray, memoryview], ends: array) -> Optional[ArrowColumns]:
    """The records of ``buf`` (their ``ends`` given) as :class:`ArrowColumns`: the prefixes sliced out of all records
    in one Arrow call, keys and values taken as slices of ``buf``. None where a record has headers or the lengths do
    not add up."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    n = len(ends)
    if not n or BIG_ENDIAN:
        return None
    stops = np.frombuffer(ends, np.int64)
    if stops[-1] != len(buf):
        return None
    bounds = np.empty(n + 1, np.int64)
    bounds[0] = 0
    bounds[1:] = stops
    starts = bounds[:-1]
    if (stops - starts < 20).any():
        return None
    data = pa.py_buffer(buf)
    records = pa.LargeBinaryArray.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(bounds), data])
    sliced = pc.binary_slice(records, 0, 20)
    prefixes = np.frombuffer(sliced.buffers()[2], _PREFIX_DTYPE, n, int(np.frombuffer(sliced.buffers()[1], np.int64,
                                                                                           1)[0]))
    key_lengths, value_lengths = prefixes["kl"], prefixes["vl"]
    if prefixes["hc"].any() or (key_lengths < -1).any() or (value_lengths < -1).any():
        return None
    key_starts = starts + 20
    value_starts = key_starts + np.maximum(key_lengths, 0)
    if not np.array_equal(value_starts + np.maximum(value_lengths, 0), stops):
        return None
    parts = np.empty(3 * n + 1, np.int64)   # every prefix, key and value as an element, in order
    parts[0:3 * n:3] = starts
    parts[1::3] = key_starts
    parts[2::3] = value_starts
    parts[3 * n] = stops[-1]
    pieces = pa.LargeBinaryArray.from_buffers(pa.large_binary(), 3 * n, [None, pa.py_buffer(parts), data])
    return ArrowColumns(prefixes["ts"], key_lengths, value_lengths, pieces.take(pa.array(np.arange(1, 3 * n, 3))),
                        pieces.take(pa.array(np.arange(2, 3 * n, 3))))


class RecordBatch:
    """Records bound for (or read from) one topic-partition, held encoded (``data`` plus the ``ends`` of its
    records) or as columns (timestamps, keys, values, headers), whichever it was made from; the other form is made
    on first use and kept. A writer that needs bytes (embedded topics) reads ``data``; one that hands each record to
    a client (Kafka) reads :meth:`columns`, so a task's output never goes through bytes it does not need."""

    __slots__ = ("topic", "partition", "_data", "_ends", "_columns")

    def __init__(self, topic: str, partition: int, data: Union[bytes, bytearray, None] = None,
                 ends: Optional[array] = None) -> None:
        self.topic = topic
        self.partition = partition
        self._data = bytearray() if data is None else data  # grows in place: ~2x faster than joining parts
        self._ends = array("q") if ends is None else ends
        self._columns: Optional[tuple[list, list, list, list]] = None

    @classmethod
    def of_columns(cls, topic: str, partition: int, timestamps: list[int], keys: list[Optional[bytes]],
                   values: list[Optional[bytes]], headers: list[Headers]) -> "RecordBatch":
        """A batch of checked columns (int64 timestamps, bytes or None keys and values, tuples of headers: what
        :func:`encode_by_partition` gives), encoded only when ``data`` is read."""
        batch = cls.__new__(cls)
        batch.topic, batch.partition = topic, partition
        batch._data = batch._ends = None
        batch._columns = (timestamps, keys, values, headers)
        return batch

    @property
    def data(self) -> Union[bytes, bytearray]:
        if self._data is None:
            self._encode()
        return self._data   # type: ignore[return-value]

    @property
    def ends(self) -> array:
        if self._ends is None:
            self._encode()
        return self._ends   # type: ignore[return-value]

    def columns(self) -> tuple[list[int], list[Optional[bytes]], list[Optional[bytes]], list[Headers]]:
        """The records as columns: timestamps, keys, values, headers."""
        if self._columns is None:
            self._columns = parse_records(self._data, len(self._ends), self._ends)   # type: ignore[arg-type]
        return self._columns

    def arrow_columns(self) -> Optional[ArrowColumns]:
        """The records as :class:`ArrowColumns` (see :func:`arrow_columns`), for a batch held encoded; None for one
        held as columns, or with headers, or whose lengths do not add up (:meth:`columns` names what is wrong)."""
        if self._data is None or self._ends is None:
            return None
        return arrow_columns(self._data, self._ends)

    def nbytes(self) -> int:
        """The size of the encoded records (computed from the columns when not encoded)."""
        if self._data is not None:
            return len(self._data)
        _, keys, values, headers = self._columns   # type: ignore[misc]
        size = 20 * len(keys)
        for k in keys:
            if k:
                size += len(k)
        for v in values:
            if v:
                size += len(v)
        for hs in headers:
            if hs:
                size += len(_encode_headers(hs, self.topic, self.partition))
        return size

    def __len__(self) -> int:
        return len(self._ends) if self._ends is not None else len(self._columns[0])   # type: ignore[index]

    def _encode(self) -> None:
        """``data`` and ``ends`` from the columns: by :func:`encode_headerless` where no record has headers (which
        chooses between Arrow and a loop by the batch's size), else record by record (:meth:`add`)."""
        timestamps, keys, values, headers = self._columns   # type: ignore[misc]
        if not any(headers):
            data, ends = bytearray(), array("q")
            encode_headerless(((data, ends),), timestamps, keys, values)
        else:
            encoded = RecordBatch(self.topic, self.partition)
            for timestamp, key, value, hs in zip(timestamps, keys, values, headers):
                encoded.add(timestamp, key, value, hs)
            data, ends = encoded._data, encoded._ends
        self._data, self._ends = data, ends   # once whole: a header's error leaves the batch as it was

    def add(self, timestamp: int, key: Optional[bytes], value: Optional[bytes], headers: Headers = ()) -> None:
        """Encode one record at the end of the batch (validating what it is given, naming the topic-partition)."""
        topic, partition = self.topic, self.partition
        if key.__class__ is not bytes and key is not None:
            key = as_bytes(key, "key", topic, partition)
        if value.__class__ is not bytes and value is not None:
            value = as_bytes(value, "value", topic, partition)
        if headers and headers.__class__ is not tuple:
            headers = _as_headers(headers, topic, partition)
        try:
            prefix = PREFIX.pack(timestamp, -1 if key is None else len(key), -1 if value is None else len(value),
                                 len(headers) if headers else 0)
        except (struct.error, TypeError):
            raise ValueError(f"timestamp of a record for {topic}-{partition} must be an int64, "
                             f"got {timestamp!r}") from None
        encoded = _encode_headers(headers, topic, partition) if headers else None   # its error: nothing appended
        data = self.data
        if data.__class__ is not bytearray:   # a batch read (bytes): grows from here on
            data = self._data = bytearray(data)
        self._columns = None
        data += prefix
        if key:
            data += key
        if value:
            data += value
        if encoded:
            data += encoded
        self._ends.append(len(data))   # type: ignore[union-attr]

    def buffers(self) -> tuple[bytearray, array]:
        """``data`` and ``ends`` to encode into in place, for a writer that appends records in this layout itself
        (a fused sink, see :class:`PartitionedRecords`): the same objects for the batch's life."""
        data = self.data
        if data.__class__ is not bytearray:
            data = self._data = bytearray(data)
            self._columns = None
        return data, self.ends   # type: ignore[return-value]

    def take(self) -> "RecordBatch":
        """The records so far as a new batch; this one emptied in place (its buffers stay the same objects)."""
        data, ends = self.data, self.ends
        taken = RecordBatch(self.topic, self.partition, bytes(data), array("q", ends))
        if data.__class__ is bytearray:
            del data[:]
        else:
            self._data = bytearray()
        del ends[:]
        self._columns = None
        return taken

    def ends_bytes(self) -> bytes:
        """``ends`` as little-endian int64 bytes (how they are stored and shipped)."""
        ends = self.ends
        if BIG_ENDIAN:  # pragma: no cover - no big-endian machine here
            ends = array("q", ends)
            ends.byteswap()
        return ends.tobytes()

    @classmethod
    def from_bytes(cls, topic: str, partition: int, data: bytes, ends: bytes) -> "RecordBatch":
        """A batch as shipped: ``data`` and its little-endian int64 ``ends``."""
        decoded = array("q", ends)
        if BIG_ENDIAN:  # pragma: no cover
            decoded.byteswap()
        return cls(topic, partition, data, decoded)

    def records(self) -> list[ProducerRecord]:
        """The batch decoded into ``ProducerRecord``s, in order."""
        timestamps, keys, values, headers = self.columns()
        topic, partition = self.topic, self.partition
        return [ProducerRecord(topic, partition, ts, k, v, h) for ts, k, v, h in zip(timestamps, keys, values, headers)]

    def __repr__(self) -> str:
        return f"RecordBatch({self.topic}-{self.partition}, {len(self)} records, {self.nbytes()} bytes)"


_MIN_INT64, _MAX_INT64 = -0x8000000000000000, 0x7FFFFFFFFFFFFFFF
#: from this many records (their ``ends`` given) :func:`parse_records` decodes a batch without headers with Arrow
_PARSE_VECTOR_MIN = 256
#: from this many records into one partition a headerless encoding is by Arrow and numpy, and from a sixty-fourth of it
#: (4 records) more for each further destination partition; fewer record by record (:func:`headerless_by_arrow`)
VECTOR_MIN_HEADERLESS = 256


class _Scratch(threading.local):
    """Per thread, numpy arrays reused by every Arrow encoding (a fresh large array costs its pages' faults each
    time)."""

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


def headerless_by_arrow(records: int, partitions: int) -> bool:
    """Whether ``records`` records without headers into ``partitions`` partitions are encoded by Arrow and numpy
    rather than record by record: the one place that chooses. Arrow's calls cost a batch a fixed ~40-120 µs (the key
    hashing's and sort's from two partitions on) and ~1.5 µs more a destination partition; measured on the 2-core
    box (``bench/headerless_crossover.py``), the crossover is ~150-250 records into one partition, ~250-450 into 2-16,
    ~320-640 into 32, ~450-1,000 into 64-128 (a fused sink's str records lower, bytes records higher)."""
    return records >= VECTOR_MIN_HEADERLESS + (partitions - 1) * (VECTOR_MIN_HEADERLESS // 64) and not BIG_ENDIAN


def encode_headerless(outs: Sequence[tuple[bytearray, array]], timestamps: Sequence[int],
                      keys: Sequence[Optional[bytes]], values: Sequence[Optional[bytes]]) -> None:
    """Records without headers (int64 timestamps, bytes or None keys and values) encoded in the batch layout at the
    end of ``outs``' buffers (``data`` and ``ends``, as :meth:`RecordBatch.buffers` gives them): each into its key's
    partition (:func:`~streams_on_spark.partitioner.partition_for_key` among ``len(outs)``; a null key only with one),
    in order; the same bytes as :meth:`RecordBatch.add` of each. By Arrow (:func:`encode_arrow_headerless`) where
    :func:`headerless_by_arrow` says so, else record by record."""
    n = len(keys)
    count = len(outs)
    if headerless_by_arrow(n, count):
        import numpy as np
        import pyarrow as pa
        wide = pa.large_binary()
        encode_arrow_headerless(outs, np.fromiter(timestamps, np.int64, n), pa.array(keys, wide),
                                pa.array(values, wide))
        return
    # RecordBatch.add's encoding inline: a function call a record measured +75 ns (~20 %) on this loop
    pack = PREFIX.pack
    if count == 1:
        data, ends = outs[0]
        end_at = ends.append
        for ts, kb, vb in zip(timestamps, keys, values):
            data += pack(ts, -1 if kb is None else len(kb), -1 if vb is None else len(vb), 0)
            if kb:
                data += kb
            if vb:
                data += vb
            end_at(len(data))
        return
    for ts, kb, vb in zip(timestamps, keys, values):
        data, ends = outs[partition_for_key(kb, count)]
        data += pack(ts, len(kb), -1 if vb is None else len(vb), 0)
        data += kb
        if vb:
            data += vb
        ends.append(len(data))


def encode_arrow_headerless(outs: Sequence[tuple[bytearray, array]], timestamps: Any, key_column: Any,
                            value_column: Any) -> None:
    """:func:`encode_headerless` of Arrow ``large_binary`` columns (``timestamps``: a numpy int64 array): the keys'
    partitions from :func:`~streams_on_spark.partitioner.positive_hashes`, the records grouped by partition in order
    (a stable sort), each record's prefix, key and value interleaved by one Arrow ``take`` over the three columns,
    and each partition's bytes appended to its ``data`` with their ``ends`` moved past what it held."""
    import numpy as np
    import pyarrow as pa
    n, count = len(key_column), len(outs)
    if not n:
        return
    wide = pa.large_binary()
    key_buffers, value_buffers = key_column.buffers(), value_column.buffers()
    key_offsets = np.frombuffer(key_buffers[1], np.int64, key_column.offset + n + 1)[key_column.offset:]
    value_offsets = np.frombuffer(value_buffers[1], np.int64, value_column.offset + n + 1)[value_column.offset:]
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
    prefix["ts"] = timestamps
    np.subtract(key_offsets[1:], key_offsets[:-1], out=prefix["kl"], casting="unsafe")
    np.subtract(value_offsets[1:], value_offsets[:-1], out=prefix["vl"], casting="unsafe")
    for column, lengths in ((key_column, "kl"), (value_column, "vl")):
        if column.null_count:   # a null's length is -1 (its slot holds no bytes)
            prefix[lengths][column.is_null().to_numpy(zero_copy_only=False)] = -1
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
        out, ends = outs[p]
        base = len(out) - start
        out += data[start:int(offsets[hi])]
        ends.frombytes((offsets[lo + 1:hi + 1] + base).tobytes())


def encode_by_partition(records: Iterable[ProducerRecord]) -> list[RecordBatch]:
    """``records`` as one batch per topic-partition, each in arrival order: checked as :meth:`RecordBatch.add`
    checks them (bytes-like keys and values converted, headers as a tuple, int64 timestamps, else the same error),
    held as columns until a writer reads their bytes."""
    groups: dict[tuple[str, int], tuple[list, list, list, list]] = {}
    for topic, partition, timestamp, key, value, headers in records:
        group = groups.get((topic, partition))
        if group is None:
            group = groups[(topic, partition)] = ([], [], [], [])
        if ((key.__class__ is not bytes and key is not None) or (value.__class__ is not bytes and value is not None)
                or (headers and headers.__class__ is not tuple) or timestamp.__class__ is not int
                or not _MIN_INT64 <= timestamp <= _MAX_INT64):
            timestamp, key, value, headers = _checked(topic, partition, timestamp, key, value, headers)
        group[0].append(timestamp)
        group[1].append(key)
        group[2].append(value)
        group[3].append(headers or ())
    return [RecordBatch.of_columns(topic, partition, *columns) for (topic, partition), columns in groups.items()]


class PartitionedRecords:
    """A task's output grouped by destination topic-partition as it is produced, each destination's records
    encoded in arrival order into a :class:`RecordBatch` as they come. What an engine keeps when it writes each
    topic-partition as one batch and needs no order across them: no object per record is kept, and
    :meth:`drain_batches` hands the batches over without visiting a record again. A fused sink encodes into the
    batches' buffers itself (:meth:`partition_batches`). A record :meth:`RecordBatch.add` refuses (a key that is not
    bytes, a timestamp out of int64) fails the next drain with add's error, as a writer encoding the records then
    would."""

    __slots__ = ("_parts", "_error")

    def __init__(self) -> None:
        self._parts: dict[tuple[str, int], RecordBatch] = {}
        self._error: Optional[Exception] = None

    def partition_batches(self, topic: str, partitions: int) -> list["RecordBatch"]:
        """``topic``'s batches, one per partition: a sink binds their :meth:`RecordBatch.buffers` (the same objects
        across drains) and encodes each record into its partition's."""
        return [self._batch(topic, p) for p in range(partitions)]

    def _batch(self, topic: str, partition: int) -> "RecordBatch":
        batch = self._parts.get((topic, partition))
        if batch is None:
            batch = self._parts[(topic, partition)] = RecordBatch(topic, partition)
        return batch

    def add(self, topic: str, partition: int, timestamp: int, key: Optional[bytes], value: Optional[bytes],
            headers: Any) -> None:
        """One record for ``topic``-``partition``, checked and converted as :meth:`RecordBatch.add` does."""
        if self._error is not None:   # the drain fails: what comes after is never written
            return
        batch = self._batch(topic, partition)
        data, ends = batch.buffers()
        size, count = len(data), len(ends)
        try:
            batch.add(timestamp, key, value, headers)
        except (TypeError, ValueError) as e:
            del data[size:], ends[count:]   # nothing of the refused record stays
            self._error = e

    def append(self, record: ProducerRecord) -> None:
        """One record, placed (``record.partition`` set)."""
        self.add(*record)

    def __bool__(self) -> bool:
        return any(self._parts.values()) or self._error is not None

    def __len__(self) -> int:
        return sum(map(len, self._parts.values()))

    def drain_batches(self) -> list[RecordBatch]:
        """One record batch per destination that got records; emptied (the error of a refused record raised)."""
        batches = [batch.take() for batch in self._parts.values() if len(batch)]
        error, self._error = self._error, None
        if error is not None:
            raise error
        return batches

    def drain_records(self) -> list[ProducerRecord]:
        """The records, destination by destination (each in arrival order), as ``ProducerRecord``s; emptied."""
        return [record for batch in self.drain_batches() for record in batch.records()]


BYTES_OR_NONE = frozenset((bytes, type(None)))   # the types a record's key or value may have


def _checked(topic: str, partition: int, timestamp: Any, key: Any, value: Any, headers: Any) -> tuple:
    """Slow path of :func:`encode_by_partition`: a record converted as :meth:`RecordBatch.add` converts it, or its
    error."""
    probe = RecordBatch(topic, partition)
    probe.add(timestamp, key, value, headers)   # raises what add raises
    (timestamp,), (key,), (value,), (headers,) = parse_records(probe.data, 1)
    return timestamp, key, value, headers


ORDER_KEY = [("stamp", "<i8"), ("task", "<i8"), ("seq", "<i8")]  # numpy dtype of a record's merge key


def merge_by_stream_time(topic: str, partition: int, parts: list[tuple[int, bytes, bytes, bytes, bytes]]
                         ) -> tuple[RecordBatch, Any]:
    """One batch for ``topic``-``partition`` from the parts several tasks wrote to it in one Spark batch.

    ``parts`` are ``(task, stamps, seqs, ends, data)``: what one task wrote to this partition, in its order, with
    per record (little-endian int64) the task's stream time when it emitted it (``stamps``: the running max of the
    task's output timestamps) and its position in the task's whole output (``seqs``). Records are ordered by
    (stamp, task, seq): each task's order is kept and tasks interleave by stream time, the order in which the
    in-process engine, which always runs the task with the lowest stream time, appends them. Returns the batch and
    its records' keys (a numpy array of ``ORDER_KEY``) in that order.
    """
    import numpy as np
    keys = np.empty(sum(len(p[3]) // 8 for p in parts), ORDER_KEY)
    at = 0
    for task, stamps, seqs, ends, _ in parts:
        n = len(ends) // 8
        keys["stamp"][at:at + n] = np.frombuffer(stamps, "<i8")
        keys["task"][at:at + n] = task
        keys["seq"][at:at + n] = np.frombuffer(seqs, "<i8")
        at += n
    if len(parts) == 1:
        return RecordBatch.from_bytes(topic, partition, parts[0][4], parts[0][3]), keys
    order = np.argsort(keys, order=("stamp", "task", "seq"))
    part_ends = [np.frombuffer(p[3], "<i8") for p in parts]
    part_starts = [np.concatenate(([0], e[:-1])) for e in part_ends]
    offsets = np.cumsum([0] + [len(e) for e in part_ends])
    part_of = np.searchsorted(offsets, order, side="right") - 1
    index = order - offsets[part_of]
    # copy runs of consecutive records of one part at once
    breaks = np.flatnonzero((np.diff(part_of) != 0) | (np.diff(index) != 1)) + 1
    data = bytearray()
    sizes = np.empty(len(order), np.int64)
    for lo, hi in zip([0, *breaks.tolist()], [*breaks.tolist(), len(order)]):
        p, first, last = int(part_of[lo]), int(index[lo]), int(index[hi - 1])
        starts, ends = part_starts[p], part_ends[p]
        data += memoryview(parts[p][4])[int(starts[first]):int(ends[last])]
        sizes[lo:hi] = ends[first:last + 1] - starts[first:last + 1]
    batch = RecordBatch(topic, partition, data, array("q", np.cumsum(sizes).astype("<i8").tobytes()))
    return batch, keys[order]

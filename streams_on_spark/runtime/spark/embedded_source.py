"""The Spark streaming source over embedded topics: the Python data source ``"embedded-topics"``.

Spark plans a Python streaming source in a separate Python worker and reads it on executors; both open the topics'
files (``connectors/embedded.py``) by their directory, given as the ``path`` option.
"""
from __future__ import annotations

import json
import logging
import os
from typing import Any, Iterator, Mapping, Optional, Sequence

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

from streams_on_spark.config import DEFAULT_EMBEDDED_TOPICS_BATCH_RECORDS
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.records import Headers

__all__ = [
    "EmbeddedTopicsDataSource",
    "EmbeddedTopicsStreamReader",
    "EmbeddedTopicPartition",
    "EmbeddedTopicRanges",
    "SCHEMA",
    "BATCH_SCHEMA",
    "register",
]

log = logging.getLogger(__name__)


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
# records per Arrow batch yielded by read(), and with layout=batches per row (a task's record batch), unless the
# option batchRecords (the library's embedded.topics.batch.records) says otherwise
_READ_CHUNK = DEFAULT_EMBEDDED_TOPICS_BATCH_RECORDS
# A micro-batch with at most this many new records is read by one Spark task, whatever the number of topic-partitions
# it spans: each input partition is a task with its own Python worker call (~20-40 ms of fixed cost on the 2-core
# machine), and a downstream query's few records spread over every partition of its repartition topic, so 4 tasks
# ran in 2 waves on 2 cores for a handful of records (bench/RESULTS.md, issue 25's trigger floor)
SMALL_BATCH_RECORDS = 4096
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


class EmbeddedTopicRanges(InputPartition):
    """One Spark input partition reading several topic-partitions' ranges, in order (a small micro-batch's)."""

    def __init__(self, ranges: Sequence[EmbeddedTopicPartition]) -> None:
        super().__init__(tuple(r.value for r in ranges))
        self.ranges = tuple(ranges)

    def __repr__(self) -> str:
        return f"EmbeddedTopicRanges({', '.join(map(repr, self.ranges))})"


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
        max_partitions = options.get("maxpartitions")
        self.max_partitions = int(max_partitions) if max_partitions else None
        if self.max_partitions is not None and self.max_partitions < 1:
            raise ValueError(f"maxPartitions must be >= 1, got {max_partitions!r}")
        batch_records = options.get("batchrecords")
        self.batch_records = int(batch_records) if batch_records else _READ_CHUNK
        if self.batch_records < 1:
            raise ValueError(f"batchRecords must be >= 1, got {batch_records!r}")
        self._target: Optional[Offsets] = None  # AvailableNow: the end offsets when the query started
        # topics read in their writer's whole micro-batches: up to their batch end offsets (EmbeddedTopics.publish_batch)
        self.whole_batches = frozenset(t.strip() for t in options.get("wholebatches", "").split(",") if t.strip())
        with self._store() as store:
            for t in self.topics:
                store.partitions(t)  # fail fast, naming the topic, if it does not exist

    def _store(self) -> EmbeddedTopics:
        """A fresh handle on the topics (never cached: the reader is pickled and runs in several processes)."""
        return EmbeddedTopics(self.root)

    def _current(self) -> Offsets:
        """The topics' current end offsets in the source's offset format (a ``wholeBatches`` topic's batch end
        offsets, where its writer recorded some)."""
        with self._store() as store:
            current = {}
            for t in self.topics:
                ends = store.batch_end_offsets(t) if t in self.whole_batches else None
                current[t] = {str(p): o for p, o in enumerate(ends if ends is not None else store.end_offsets(t))}
            return current

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
        """One input partition per topic-partition with new records in [start, end) (at most ``maxPartitions``:
        see :func:`_grouped`), or one for them all when they are :data:`SMALL_BATCH_RECORDS` or fewer; none if
        nothing is new."""
        result: list[EmbeddedTopicPartition] = []
        for topic in self.topics:
            ends = end.get(topic, {})
            starts = start.get(topic, {})
            for p in sorted(ends, key=int):
                s, e = int(starts.get(p, 0)), int(ends[p])
                if s > e:
                    raise ValueError(f"{topic}-{p}: start offset {s} is after end offset {e} (was the topic recreated?)")
                if s < e:
                    result.append(EmbeddedTopicPartition(self.root, topic, int(p), s, e))
        if len(result) > 1 and sum(r.end - r.start for r in result) <= SMALL_BATCH_RECORDS:
            return [EmbeddedTopicRanges(result)]
        if self.max_partitions is not None and len(result) > self.max_partitions:
            return _grouped(result, self.max_partitions)
        return result

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        """Yield the partition's records in offset order (per topic-partition), as Arrow batches of the source
        schema."""
        if isinstance(partition, EmbeddedTopicRanges):
            for one in partition.ranges:
                yield from self._read_range(one)
            return
        yield from self._read_range(partition)

    def _read_range(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, EmbeddedTopicPartition), partition
        with EmbeddedTopics(partition.root) as store:
            for chunk_start in range(partition.start, partition.end, self.batch_records):
                chunk_end = min(chunk_start + self.batch_records, partition.end)
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


def _grouped(ranges: list[EmbeddedTopicPartition], groups: int) -> list[InputPartition]:
    """``ranges`` as ``groups`` input partitions of about as many records each (the largest range first to the
    group with the fewest), each reading its ranges whole and in their planned order: as many Spark tasks as the
    application has cores read a batch in one wave, where one task per topic-partition took several waves, each
    task a Python worker call's fixed cost (a 4-partition topic on 2 cores: 2 waves)."""
    members: list[list[int]] = [[] for _ in range(groups)]
    records = [0] * groups
    for i in sorted(range(len(ranges)), key=lambda i: ranges[i].start - ranges[i].end):
        least = records.index(min(records))
        members[least].append(i)
        records[least] += ranges[i].end - ranges[i].start
    planned: list[InputPartition] = []
    for group in sorted(members, key=min):
        ordered = [ranges[i] for i in sorted(group)]
        planned.append(ordered[0] if len(ordered) == 1 else EmbeddedTopicRanges(ordered))
    return planned


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
    ``layout`` (``records``: one row per record, like Spark's Kafka source; ``batches``: one row per record batch),
    ``batchRecords`` (the most records of one topic-partition per Arrow batch read, and per row with
    ``layout=batches``: 65,536), ``maxPartitions`` (the most input partitions, i.e. Spark tasks, a micro-batch is
    read by: topic-partitions' ranges grouped, each read whole by one task; default one per topic-partition)."""

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

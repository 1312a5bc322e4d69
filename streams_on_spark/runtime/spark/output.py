"""What a task does with the records its collector produced in one micro-batch.

Two strategies, picked once per runtime:

- :class:`WrittenOutput` (production): the task writes its records itself, from its executor, through the
  connector's :class:`~streams_on_spark.connectors.base.TopicWriter`, with its producer id (query id and task) and
  the micro-batch id, read from Spark's task context; it returns one small commit row per destination.
- :class:`ReturnedOutput` (the test driver's Spark mode): the task returns its records as record batches, with each
  record's merge key, and the driver appends them merged by stream time (the order the in-process engine writes,
  so both engines produce the same records in the same order) and hands them to the test driver in emission order.
"""
from __future__ import annotations

from array import array
from typing import Any, Callable, Mapping, Optional, Protocol, Sequence

from streams_on_spark.connectors.base import TopicWriter
from streams_on_spark.record_batch import BIG_ENDIAN, RecordBatch
from streams_on_spark.records import ProducerRecord

# ReturnedOutput: one row per destination topic-partition (more for very large outputs), each a record batch
# (``RecordBatch`` layout: ``data`` and its records' ``ends``) with every record's merge key: the task's stream
# time when it emitted the record (``stamps``) and its position in the task's whole output (``seqs``), int64 arrays.
RETURNED_SCHEMA = "topic string, partition int, task int, stamps binary, seqs binary, ends binary, data binary"
RETURNED_COLUMNS = ("topic", "partition", "task", "stamps", "seqs", "ends", "data")
# WrittenOutput: one row per destination topic-partition a task wrote: its first offset (-1 if unknown), records
# and bytes. The only thing that reaches the driver. The task's first row also carries its metrics for the batch:
# records processed and dropped, and its commit latency (ms: flushing caches, writing, committing its state); a task
# that wrote nothing sends one row with a null topic for them.
COMMIT_SCHEMA = ("topic string, partition int, task int, base long, records long, bytes long, processed long, "
                 "dropped long, commit_ms double")
COMMIT_COLUMNS = ("topic", "partition", "task", "base", "records", "bytes", "processed", "dropped", "commit_ms")
_MAX_PART_BYTES = 64 << 20  # a returned part's data stays far below Arrow's 2 GiB per binary column
QUERY_ID_PROPERTY = "sql.streaming.queryId"  # Spark's local properties of a micro-batch's tasks
BATCH_ID_PROPERTY = "streaming.sql.batchId"


class TaskOutput(Protocol):
    """How a task's output leaves the task: ``schema`` of its rows, and ``rows`` for one call's records."""

    schema: str
    columns: tuple[str, ...]
    #: whether ``rows`` takes the call's output as record batches, one per destination topic-partition (the task's
    #: collector then groups it as it is produced: ``RecordCollector.partition_output``), or as the records in the
    #: order the task emitted them
    partitioned: bool

    def rows(self, output: Sequence[Any], task: int,
             positions: Optional[Mapping[tuple[str, int], int]] = None) -> list[tuple]:
        """The rows for ``output`` (see :attr:`partitioned`), emitted by task ``task`` after reading its input up to
        ``positions``."""
        ...

    def report(self, rows: list[tuple], task: int, processed: int, dropped: int, commit_ms: float) -> list[tuple]:
        """``rows`` with the task's metrics of the call added, where the schema has them."""
        ...


class WrittenOutput:
    """The task writes its output from the executor; the driver gets commit rows."""

    schema = COMMIT_SCHEMA
    columns = COMMIT_COLUMNS
    partitioned = True

    def __init__(self, writer: TopicWriter) -> None:
        self.writer = writer

    def rows(self, output: Sequence[RecordBatch], task: int,
             positions: Optional[Mapping[tuple[str, int], int]] = None) -> list[tuple]:
        if not output:
            return []
        batches = list(output)
        producer, sequence = producer_identity(task)
        bases = self.writer.write(batches, producer, sequence, positions)
        return [(b.topic, b.partition, task, base, len(b), b.nbytes()) for b, base in zip(batches, bases)]

    def report(self, rows: list[tuple], task: int, processed: int, dropped: int, commit_ms: float) -> list[tuple]:
        """The commit rows with the task's metrics on the first (a row with a null topic if it wrote nothing)."""
        rows = rows or [(None, -1, task, -1, 0, 0)]
        return [(*rows[0], processed, dropped, commit_ms), *((*r, 0, 0, 0.0) for r in rows[1:])]


# QueryableOutput (interactive.queries=true): the commit rows, the task's first row also carrying what the driver's
# copy of its stores applies (query.standby: the batch's snapshot and store changes, pickled)
QUERYABLE_SCHEMA = COMMIT_SCHEMA + ", state binary"
QUERYABLE_COLUMNS = (*COMMIT_COLUMNS, "state")


class QueryableOutput(WrittenOutput):
    """:class:`WrittenOutput` whose first row of each task also carries the task's committed state changes."""

    schema = QUERYABLE_SCHEMA
    columns = QUERYABLE_COLUMNS

    @staticmethod
    def with_state(rows: list[tuple], state: bytes) -> list[tuple]:
        """``rows`` (from :meth:`report`) with ``state`` on the first and None on the others."""
        return [(*rows[0], state), *((*r, None) for r in rows[1:])]


def producer_identity(task: int) -> tuple[Optional[str], Optional[int]]:
    """The writing task's producer id (its query's id, stable across restarts from one checkpoint, and the task) and
    sequence (the micro-batch id), from the Spark task context; ``(None, None)`` outside a streaming query."""
    query, batch = streaming_batch()
    if query is None or batch is None:
        return None, None
    return f"{query}-{task}", batch


def streaming_batch() -> tuple[Optional[str], Optional[int]]:
    """The running Spark task's query id and micro-batch id (Spark's task context); None outside a query."""
    from pyspark import TaskContext
    context = TaskContext.get()
    if context is None:
        return None, None
    query, batch = context.getLocalProperty(QUERY_ID_PROPERTY), context.getLocalProperty(BATCH_ID_PROPERTY)
    if not query or batch is None:
        return None, None
    return query, int(batch)


class ReturnedOutput:
    """The task returns its output to the driver as record batches with merge keys (the test driver's mode); the
    driver appends it and hands the records to ``on_output`` (a callback of the driver: never pickled to tasks)."""

    schema = RETURNED_SCHEMA
    columns = RETURNED_COLUMNS
    partitioned = False   # the merge keys need the order of emission across destinations

    def __init__(self, on_output: Optional[Callable[[list[ProducerRecord]], None]] = None) -> None:
        self.on_output = on_output

    def __reduce__(self) -> tuple:
        """Tasks get the strategy without the driver's callback."""
        return ReturnedOutput, ()

    def rows(self, output: Sequence[ProducerRecord], task: int,
             positions: Optional[Mapping[tuple[str, int], int]] = None) -> list[tuple]:
        return returned_rows(list(output), task)

    def report(self, rows: list[tuple], task: int, processed: int, dropped: int, commit_ms: float) -> list[tuple]:
        """Unchanged: the test driver reads its tasks' counters from their state."""
        return rows


class _OutputPart:
    """What one task wrote to one topic-partition in one call, being encoded."""

    __slots__ = ("batch", "stamps", "seqs")

    def __init__(self, topic: str, partition: int) -> None:
        self.batch = RecordBatch(topic, partition)
        self.stamps = array("q")
        self.seqs = array("q")

    def row(self, task: int) -> tuple:
        order = (self.stamps, self.seqs)
        if BIG_ENDIAN:  # pragma: no cover - the shipped arrays are little-endian
            order = tuple(array("q", a) for a in order)
            for a in order:
                a.byteswap()
        return (self.batch.topic, self.batch.partition, task, order[0].tobytes(), order[1].tobytes(),
                self.batch.ends_bytes(), bytes(self.batch.data))


def returned_rows(records: list[ProducerRecord], task: int) -> list[tuple]:
    """Encode a task's output as record batches, one per destination topic-partition (split when very large)."""
    parts: dict[tuple[str, int], _OutputPart] = {}
    rows = []
    stream_time = -1
    for seq, (topic, partition, timestamp, key, value, headers) in enumerate(records):
        if timestamp > stream_time:
            stream_time = timestamp
        part = parts.get((topic, partition))
        if part is None:
            part = parts[(topic, partition)] = _OutputPart(topic, partition)
        part.batch.add(timestamp, key, value, headers)
        part.stamps.append(stream_time)
        part.seqs.append(seq)
        if len(part.batch.data) >= _MAX_PART_BYTES:
            rows.append(part.row(task))
            del parts[(topic, partition)]
    rows.extend(part.row(task) for part in parts.values())
    return rows

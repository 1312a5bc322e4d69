"""Stateless chains fused into one loop: a task whose every processor is a stateless DSL operator runs a batch of
queued records through one generated function per source, without a ``Record`` and a ``forward`` per node.

The per-record path (:meth:`StreamTask.process_one`) is the reference; this is a faster way to get exactly its
results for the tasks where that can be shown node by node:

- every node of the task is a source, a sink, or one of the stateless operators below (exact types: a subclass or
  a user's processor may do anything, so it keeps the per-record path), and the task has no stores and no
  punctuation schedules;
- the processing exception handler is Kafka's default (``LogAndFail``): a user function that raises fails the task
  with the same ``StreamsException`` the per-record path raises (same node, topic, partition, offset), because the
  generated code wraps each call in its own ``try`` (free in Python 3.11 until something raises) and hands the
  failure to the task's own error path;
- records are taken from the task's partition queues in the order :meth:`StreamTask.process_one` takes them (the
  head with the smallest timestamp first), so the sinks emit in the same order; partition and stream times end where
  the per-record path leaves them;
- a sink serializes and partitions inline (murmur2 of the key bytes, as the record collector does); a record with a
  null key, a sink with a custom partitioner, and a record whose serialization fails go through the collector's own
  ``send`` (the production exception handler, round-robin counters, partitioner checks). Over a batch whose output
  is grouped by destination, a String-serde sink holds its ``str`` records as columns and encodes them at once
  (:mod:`~streams_on_spark.runtime.column_sink`), flushed before anything else may write the task's output.

Operators fused: ``filter``/``filter_not``, ``map``, ``map_values``, ``flat_map``, ``flat_map_values``, ``select_key``,
``peek``, ``foreach``, ``merge``/pass-through nodes, ``split`` branches, and the repartition null-key filter.
"""
from __future__ import annotations

import contextlib
import itertools
import struct
from operator import itemgetter
from typing import Any, Callable, Iterator, Optional

from streams_on_spark.state.caching import ENTRY_OVERHEAD_BYTES, CachingKeyValueBytesStore
from streams_on_spark.state.stores import _IMMUTABLE, _TS, TimestampedKeyValueStore, ValueAndTimestamp

from streams_on_spark.runtime.cache_replay import CacheReplay, long_sized
from streams_on_spark.runtime.column_sink import ColumnSink
from streams_on_spark.partitioner import memoised_hash, memoised_utf8_key, partition_for_key, remember_utf8_key
from streams_on_spark.record_batch import PREFIX, PartitionedRecords, encode_headerless
from streams_on_spark.records import ProducerRecord
from streams_on_spark.errors import IllegalStateError, UnknownTopicException
from streams_on_spark.operators import aggregations, shared, stateless, tables
from streams_on_spark.change import Change
from streams_on_spark.processor.api import Record
from streams_on_spark.runtime.nodes import SinkProcessor, SourceProcessor
from streams_on_spark.serde import ByteArraySerde, LongSerde, StringSerde

__all__ = ["FusedChains", "BatchAggregation", "FlushedColumns", "fused_forward", "replanned_forward",
           "written_through"]

_FUSABLE = (stateless.KStreamFilter, stateless.RepartitionNullKeyFilter, stateless.KStreamMap,
            stateless.KStreamSelectKey, stateless.KStreamMapValues, stateless.KStreamFlatMap,
            stateless.KStreamFlatMapValues, stateless.KStreamPeek, stateless.PassThrough, stateless.KStreamBranch)


class FusedChains:
    """A task's sources, each compiled to one function over its queued records (see the module doc)."""

    def __init__(self, chains: dict[str, Callable[..., None]],
                 batch_chains: Optional[dict[str, Callable[..., None]]] = None, column_sinks: tuple = ()) -> None:
        self.chains = chains   # topic -> chain(records, queue, append), record by record (process_one's)
        # the chains run over a batch (run): their sinks may hold records as columns (column_sinks, flushed by run)
        self.batch_chains = chains if batch_chains is None else batch_chains
        self.column_sinks = column_sinks

    @staticmethod
    def plan(task: Any) -> Optional["FusedChains"]:
        """The fused chains of ``task``, or None where the task must keep the per-record path. A task with stores
        has them only as the driver's aggregation written through (:func:`_written_through_steps`)."""
        if task._stream_schedules or task._wall_schedules or not _default_handler(task):
            return None
        if task.stores:
            steps = _written_through_steps(task)
            return None if steps is None else FusedChains(steps)
        for node in task.nodes.values():
            kind = type(node.processor)
            if kind not in _FUSABLE and kind is not SourceProcessor and kind is not SinkProcessor:
                return None
        try:
            chains = {topic: _Compiler(task).compile(source)
                      for topic, (source, _) in task.partition_group.sources.items()}
        except _NotFusable:
            return None
        if task.collector.buffer.__class__ is PartitionedRecords:   # sinks whose records a batch encodes as columns
            columnar = _Compiler(task, columnar=True)
            batch_chains = {topic: columnar.compile(source)
                            for topic, (source, _) in task.partition_group.sources.items()}
            if columnar.column_sinks:
                return FusedChains(chains, batch_chains, tuple(columnar.column_sinks.values()))
        return FusedChains(chains)

    def run(self, task: Any) -> None:
        """Process every record queued in ``task``, in :meth:`StreamTask.process_one`'s order."""
        queues = [q for q in task._queue_list if q.records]
        runs = _runs(task)
        processed = 0
        stream_time = task.stream_time
        chains = self.batch_chains
        try:
            for queue, records in runs:
                if not records:
                    continue
                newest = max(r[0] for r in records)
                if newest > queue.partition_time:
                    queue.partition_time = newest
                if newest > stream_time:
                    stream_time = task.stream_time = newest
                chains[queue.topic](records, queue, task.collector.buffer.append)
                processed += len(records)
        except BaseException:
            # a user function's failure flushed what was held before it (the chain's failure handler); anything else
            # fails the task, whose output is not written: what is still held is dropped, the error raised as it is
            for sink in self.column_sinks:
                sink.discard()
            raise
        for sink in self.column_sinks:   # what the sinks hold, into their partitions' batches
            sink.flush()
        for queue in queues:
            queue.records.clear()
        task.metrics.processed += processed


@contextlib.contextmanager
def _at(task: Any, queue: Any, offset: int, node: Any, raw: tuple = (None, None)) -> Iterator[Any]:
    """The task's context as the per-record path has it while ``node`` handles the record at ``offset`` of
    ``queue`` (error handlers and warnings read where a record came from), reset afterwards."""
    ctx = task.context
    ctx.queue, ctx.offset, ctx.current = queue, offset, node
    ctx.source_raw = raw
    try:
        yield ctx
    finally:
        ctx.current = ctx.queue = None
        ctx.source_raw = (None, None)


def _default_handler(task: Any) -> bool:
    from streams_on_spark.error_handlers import LogAndFailProcessingExceptionHandler
    return type(task.config.processing_handler) is LogAndFailProcessingExceptionHandler


def _runs(task: Any) -> list[tuple[Any, Any]]:
    """The task's queued records as runs of one queue each, in :meth:`StreamTask.process_one`'s order."""
    queues = [q for q in task._queue_list if q.records]
    if len(queues) == 1:
        return [(queues[0], queues[0].records)]
    return _merged_runs(queues) if queues else []


class BatchAggregation:
    """``count``/``reduce``/``aggregate`` with the record cache on, folded per key over a batch before the store.

    Where a task is its sources feeding one ``KStreamAggregate`` or ``KStreamReduce`` whose store has the record cache
    in front (Kafka's default; on Spark a commit is the micro-batch, so nothing leaves the cache before the batch's
    end), what the per-record path leaves after a batch is, per key, the last aggregate in the cache, dirty and most
    recently used in the order of the keys' last records, stamped with that record's timestamp and headers. This folds
    the batch per key with the user's aggregator (called once per record, in each key's record order), reading each
    key from the store once and writing it once, in that order, with that record as the writer.

    It stays exact where the cache would have evicted: every record's new entry size is computed as the cache
    computes it (so a serializer's error comes at the record it comes at), and at the first record whose write would
    take the task's cache past ``statestore.cache.max.bytes`` (or write a null), what was folded before it is written,
    that record's aggregate is written through the store as the processor writes it, and the rest of the batch goes
    through the per-record path — or, past an eviction where nothing downstream can tell when the cache flushes,
    through :meth:`_run_evicting`. Null keys and values are dropped and counted as the processor drops them; a raising
    aggregator fails the task with the processor's error. The aggregator of one key may run before an earlier record
    of another key: DSL aggregators are functions of their arguments.
    """

    def __init__(self, node: Any, evicting: bool = False, columns: Optional["FlushedColumns"] = None) -> None:
        self.node = node
        self.processor = node.processor
        self.columns = columns   # the store's flushes in bulk, where nothing below tells one entry from the next
        self.reduce = type(self.processor) is aggregations.KStreamReduce
        self.evicting = evicting   # the batch continues past the first eviction (see _run_evicting)
        # count() of Longs: a record batch can be counted from its columns (count_columns)
        self.counting_columns = (not self.reduce and self.processor.aggregator is aggregations.count_adder
                                 and long_sized(self.processor.store))
        # the cache's account while consecutive record batches are counted through its evictions: written back
        # into the cache (settle) before anything else reads it
        self._replay: Optional[CacheReplay] = None

    @staticmethod
    def plan(task: Any) -> Optional["BatchAggregation"]:
        if (task._stream_schedules or task._wall_schedules or task._commit_every_record
                or not _default_handler(task)):
            return None
        node = _cached_aggregation(task)
        if node is None:
            return None
        columns = FlushedColumns.plan(task, node)
        if columns is not None:   # the commit's flush too (CachingBytesStore.flush)
            node.processor.store.record_cache.use_bulk_flush(columns)
        return BatchAggregation(node, evicting=len(task.stores) == 1 and _stateless_below(node), columns=columns)

    def run(self, task: Any) -> None:
        """Fold every queued record (see the class doc); records past an overflow stay queued for the per-record
        path."""
        processor, store = self.processor, self.processor.store
        cache_store = store.record_cache
        cache, entries = cache_store.budget, cache_store.cached_entries
        kser = store._kser
        initializer, aggregator = (None, processor.reducer) if self.reduce else (processor.initializer,
                                                                                   processor.aggregator)
        reduce = self.reduce
        counting = not reduce and aggregator is aggregations.count_adder   # count(): the aggregate plus one, no call
        projected, limit = cache.size, cache.max_bytes
        entry_size = _entry_sizer(store)
        longs = long_sized(store)   # a Long aggregate's entry size depends on its key only
        # key bytes -> [key, aggregate, its timestamp, entry size, the last record, its index]
        folded: dict[bytes, list] = {}
        by_raw_key: dict[Any, tuple[bytes, list]] = {}   # a record's raw key -> its key bytes and their fold
        stop: Optional[tuple] = None   # (queue, record, key bytes, aggregate, timestamp) written by the processor's way
        index = 0
        consumed: dict[Any, int] = {}
        runs = _runs(task)
        rest: list[tuple[Any, list]] = []   # the records after an overflow, for _run_evicting
        for at, (queue, records) in enumerate(runs):
            taken = index
            for record in records:
                ts, off, key, value, headers, raw_key, _ = record
                index += 1
                if key is None or value is None:
                    self._drop(task, queue, record)
                    continue
                try:
                    known = by_raw_key.get(raw_key)
                    if known is not None:   # folded already in this batch
                        kb, state = known
                        if counting:
                            agg = state[1] + 1
                        else:
                            agg = aggregator(state[1], value) if reduce else aggregator(key, value, state[1])
                        if state[2] > ts:
                            ts = state[2]
                        if longs and agg.__class__ is int and _MIN_LONG <= agg <= _MAX_LONG:
                            # the entry keeps its size: the cache cannot overflow here
                            state[0], state[1], state[2], state[4], state[5], state[6] = (key, agg, ts, record,
                                                                                          index, queue)
                            continue
                    else:
                        kb = kser(key)
                        state = folded.get(kb)
                        if state is None:
                            old = store.get_with_timestamp(key)
                            cached = entries.get(kb)
                            state = folded[kb] = [key, None, ts, 0 if cached is None else cached.size, None, 0,
                                                  None]
                            if old is not None:
                                state[1], state[2] = old
                                agg = aggregator(state[1], value) if reduce else aggregator(key, value, state[1])
                                if old[1] > ts:
                                    ts = old[1]
                            else:
                                agg = value if reduce else aggregator(key, value, initializer())
                        else:
                            agg = aggregator(state[1], value) if reduce else aggregator(key, value, state[1])
                            if state[2] > ts:
                                ts = state[2]
                        by_raw_key[raw_key] = (kb, state)
                    size = entry_size(kb, agg)
                except Exception as e:
                    self._fail(task, queue, record, e)
                if size is None or projected + size - state[3] > limit:
                    stop = (queue, record, kb, agg, ts)
                    if size is not None and self.evicting:
                        rest = [(queue, list(itertools.islice(records, index - taken, None))), *runs[at + 1:]]
                    break
                projected += size - state[3]
                state[0], state[1], state[2], state[3], state[4], state[5], state[6] = (key, agg, ts, size, record,
                                                                                        index, queue)
            else:
                consumed[queue] = consumed.get(queue, 0) + index - taken
                continue
            consumed[queue] = consumed.get(queue, 0) + index - taken
            break
        written = _last_writes(consumed)
        _consume(task, consumed, index)
        ctx = task.context
        ctx.current = self.node
        try:
            for kb, (key, agg, ts, _, last, _, writer) in sorted(folded.items(), key=lambda item: item[1][5]):
                if last is None:
                    continue   # only read: its first record is the one written below
                ctx.queue, ctx.offset = writer, last[1]   # the key's last record writes (the store's position)
                ctx.record = Record(key, None, last[0], last[4])
                self._put(store, key, agg, ts)
            if stop is not None:
                queue, record, kb, agg, ts = stop
                ctx.queue, ctx.offset = queue, record[1]
                ctx.record = Record(record[2], record[3], record[0], record[4])
                self._put(store, record[2], agg, ts)
        finally:
            ctx.current = ctx.record = ctx.queue = None
        # each queue's last record the aggregation took wrote its key on the per-record path, yet the fold writes a
        # key once, from its last record, which may be another queue's: each queue's last write is set here
        store.position_offsets.update(written)
        if rest:
            self._run_evicting(task, rest)

    def settle(self) -> None:
        """Write the account a count through evictions keeps between record batches back into the cache (see
        :meth:`count_columns`); nothing to do where none is kept."""
        replay, self._replay = self._replay, None
        if replay is not None:
            replay.leave()

    def count_columns(self, task: Any, queue: Any, offset: int, batch: Any) -> bool:
        """As :meth:`_count_columns`; a batch counted through the cache's evictions keeps the cache's account
        (:class:`CacheReplay`) for the next record batch, which the caller continues or settles (:meth:`settle`):
        a fill's record batches then pay the cache's conversion once, not once each."""
        if self._count_columns(task, queue, offset, batch):
            return True
        self.settle()
        return False

    def _count_columns(self, task: Any, queue: Any, offset: int, batch: Any) -> bool:
        """``count()`` of one record batch of ``queue`` (its first record at ``offset``) from its Arrow columns,
        leaving what :meth:`run` leaves for the same records, without a Python object per record: per key its count,
        newest timestamp and last record, by Arrow's hash grouping (none where every key comes once), then one read
        and one write per key in the order of the keys' last records. Taken where the task has nothing queued, the
        keys' bytes are the store's (String in UTF-8 or ByteArray on both sides), the values' deserializer cannot
        fail, no key or value is null, no timestamp negative and the batch's new cache entries fit the cache; False
        (nothing done: the records are queued as usual) elsewhere."""
        store = self.processor.store
        if not self.counting_columns or queue.extractor is not None or task.partition_group.has_records():
            return False
        strings = _same_key_bytes(queue.key_serde, store.key_serde)
        if strings is None or type(queue.value_serde) not in _UNFAILING_DESERIALIZERS:
            return False
        columns = batch.arrow_columns()
        if columns is None or columns.key_lengths.min() < 0 or columns.value_lengths.min() < 0:
            return False
        import numpy as np
        timestamps = np.ascontiguousarray(columns.timestamps)
        if timestamps.min() < 0:
            return False
        raw_keys, grouped = _grouped_keys(columns.keys, timestamps)
        n = len(timestamps)
        if strings and not _all_utf8(raw_keys):   # String's deserializer replaces: the store's key bytes would differ
            return False
        key_of = _decoded if strings else _as_they_are   # the writer's keys of cache keys, where they are needed
        fixed = 16 + ENTRY_OVERHEAD_BYTES   # a Long's entry: see _entry_sizer
        # the cache as it is, or as the previous record batch's count left it (its account, not written back yet)
        held, occupied, projected, limit = _occupancy(self._replay, store.record_cache)
        projected += sum(map(len, raw_keys)) + fixed * len(raw_keys)   # what the keys' writes add to the cache...
        cached_keys = held(raw_keys)
        for kb in cached_keys:   # ...less what those it holds occupy now: where it would evict, run() decides
            size = occupied(kb)
            if size > len(kb) + fixed:
                return False
            projected -= size
        if projected > limit:
            # more than the cache holds: counted here where every key comes once (each record is its key's only one,
            # so the cache sees the records' own order) and the fold may go on through the evictions
            if not self.evicting or len(raw_keys) != n:
                return False
            return self._count_through_evictions(task, queue, offset, key_of, raw_keys, timestamps, not cached_keys)
        if (self.evicting and self.columns is not None and len(raw_keys) == n and not cached_keys
                and (self._replay is not None or not store.record_cache.cached_entries)):
            # keys each once, none of them cached, into the account a count through the evictions keeps (or an
            # empty cache's): written in columns, as the next record batches of a fill will be
            replay = self._replay or CacheReplay.of(store, self.node, task.context, self.columns)
            if replay is not None and not replay.dirty_with_headers():
                return self._write_new(task, queue, offset, replay, key_of, raw_keys, timestamps)
        self.settle()
        lasts, counts, newest = grouped()
        # each key's value before the batch: the cache's entry, else read from the store beneath at once (a key read
        # is then written, which makes it the most recently used anyway)
        cache_store = store.record_cache
        entries = cache_store.cached_entries
        cached = [entries.get(kb) for kb in raw_keys] if entries else [None] * len(raw_keys)
        stored = iter(cache_store.read_stored_many([kb for kb, entry in zip(raw_keys, cached) if entry is None]))
        vde, topic, unpack = store.plain_value_serde.deserialize, store._topic, _TS.unpack_from
        folded = []
        for key, count, ts, entry in zip(key_of(raw_keys), counts, newest, cached):
            data = next(stored) if entry is None else entry.value
            if data is not None:
                count += vde(topic, data[8:])
                old_ts = unpack(data)[0]
                if old_ts > ts:
                    ts = old_ts
            if not _MIN_LONG <= count <= _MAX_LONG:
                return False
            folded.append((key, count, ts))
        ctx = task.context
        ctx.current, ctx.queue = self.node, queue
        try:
            for (key, count, ts), last in zip(folded, lasts):
                ctx.offset = offset + last   # the key's last record writes (the store's position)
                ctx.record = Record(key, None, int(timestamps[last]), ())
                self._put(store, key, count, ts)
        finally:
            ctx.current = ctx.record = ctx.queue = None
        _took_batch(task, queue, offset, timestamps)
        return True

    def _count_through_evictions(self, task: Any, queue: Any, offset: int, key_of: Callable[[list], list],
                                 raw_keys: list[bytes], timestamps: Any, none_cached: bool) -> bool:
        """``count()`` of a record batch whose every key comes once (``raw_keys[i]`` is record ``i``'s) and whose new
        entries do not fit the cache, with the cache's eviction rule (:class:`CacheReplay`): what
        :meth:`_run_evicting` leaves for the same records. The keys' values before the batch are read at once (one
        multi-get from the store beneath): a key that comes once is not written before its record. ``none_cached``:
        the cache (or its account) holds none of the keys. False (nothing done) where the cache is not as reads and
        writes leave it or a count would pass a Long's range."""
        store = self.processor.store
        replay = self._replay or CacheReplay.of(store, self.node, task.context, self.columns)
        if replay is None:
            return False
        if replay.columns is not None and none_cached and not replay.dirty_with_headers():
            # none of the keys cached (a fill's new keys): the cache's rule in columns, the flushes in bulk
            return self._write_new(task, queue, offset, replay, key_of, raw_keys, timestamps)
        clean, kept, dirty, limit = replay.clean, replay.kept, replay.dirty, replay.limit
        vde, topic, unpack = store.plain_value_serde.deserialize, store._topic, _TS.unpack_from
        olds: list[Optional[tuple[int, int]]] = []
        for kb, data in zip(raw_keys, replay.cache_store.read_stored_many(raw_keys)):
            state = dirty.get(kb)
            if state is not None:
                old = (state[1], state[2])
            else:
                if kb in clean:
                    data = replay.old_value(kb)
                old = None if data is None else (vde(topic, data[8:]), unpack(data)[0])
            if old is not None and not _MIN_LONG <= old[0] < _MAX_LONG:
                return False
            olds.append(old)
        fixed = 16 + ENTRY_OVERHEAD_BYTES   # a Long's entry: see _entry_sizer
        size = replay.size
        off = offset
        for key, kb, ts, old in zip(key_of(raw_keys), raw_keys, timestamps.tolist(), olds):
            state = dirty.pop(kb, None)   # re-dirtied: to the end
            if state is not None:
                old_size = state[3]
            else:
                old_size = clean.pop(kb, 0)
                if old_size:
                    del kept[kb]
            if old is None:
                count, new_ts = 1, ts
            else:
                count, new_ts = old[0] + 1, (old[1] if old[1] > ts else ts)
            new_size = len(kb) + fixed
            dirty[kb] = [key, count, new_ts, new_size, ts, (), queue, off]
            size += new_size - old_size
            while size > limit and clean:   # the eldest clean entry leaves (what make_room does first, inline)
                evicted, evicted_size = clean.popitem(last=False)
                del kept[evicted]
                size -= evicted_size
            if size > limit:
                size = replay.make_room(size, queue, off)
            off += 1
        replay.size = size
        self._replay = replay   # left in the cache by settle(), after the task's next record batch if it continues
        store.position_offsets[queue.topic_partition] = off - 1   # every record wrote its key
        _took_batch(task, queue, offset, timestamps)
        return True

    def _write_new(self, task: Any, queue: Any, offset: int, replay: CacheReplay, key_of: Callable[[list], list],
                   raw_keys: list[bytes], timestamps: Any) -> bool:
        """:meth:`_count_through_evictions` of keys none of which the cache holds: their values before the batch
        read from the store beneath at once, then written with :meth:`CacheReplay.write_new`."""
        store = self.processor.store
        vde, topic, unpack = store.plain_value_serde.deserialize, store._topic, _TS.unpack_from
        datas = replay.cache_store.read_stored_many(raw_keys)
        n = len(raw_keys)
        written = timestamps.tolist()
        if datas.count(None) == n:   # new keys: a count of one each, the record's timestamp
            counts, newest = [1] * n, written
        else:
            counts, newest = [1] * n, list(written)
            for i, data in enumerate(datas):
                if data is not None:
                    old, old_ts = vde(topic, data[8:]), unpack(data)[0]
                    if not _MIN_LONG <= old < _MAX_LONG:
                        return False
                    counts[i] = old + 1
                    if old_ts > newest[i]:
                        newest[i] = old_ts
        import numpy as np
        sizes = np.fromiter(map(len, raw_keys), np.int64, n) + (16 + ENTRY_OVERHEAD_BYTES)   # see _entry_sizer
        replay.write_new(raw_keys, key_of, counts, newest, sizes, written, queue, offset)
        self._replay = replay   # left in the cache by settle(), after the task's next record batch if it continues
        store.position_offsets[queue.topic_partition] = offset + n - 1   # every record wrote its key
        _took_batch(task, queue, offset, timestamps)
        return True

    def _run_evicting(self, task: Any, runs: list[tuple[Any, list]]) -> None:
        """The rest of a batch after the cache's first eviction, folded with the cache's own eviction rule
        (:class:`~streams_on_spark.runtime.cache_replay.CacheReplay`). Nothing below the aggregation can tell when
        the cache flushes (``evicting``: stateless operators and sinks only, the task's only store). The cache is left
        as the per-record path leaves it; from a record whose aggregate serializes to null the per-record path takes
        over."""
        processor, store = self.processor, self.processor.store
        replay = CacheReplay.of(store, self.node, task.context, self.columns)
        if replay is None:
            return
        clean, dirty, limit = replay.clean, replay.dirty, replay.limit
        kser, topic = store._kser, store._topic
        vde, stored = store.plain_value_serde.deserialize, replay.cache_store.read_stored
        initializer, aggregator = (None, processor.reducer) if self.reduce else (processor.initializer,
                                                                                   processor.aggregator)
        reduce, entry_size = self.reduce, _entry_sizer(store)
        size = replay.size
        key_bytes: dict[Any, bytes] = {}
        consumed: dict[Any, int] = {}
        processed = 0
        stop = False
        for queue, records in runs:
            done = 0
            for record in records:
                ts, off, key, value, headers, raw_key, _ = record
                if key is None or value is None:
                    self._drop(task, queue, record)
                    done += 1
                    continue
                try:
                    kb = key_bytes.get(raw_key)
                    if kb is None:
                        kb = key_bytes[raw_key] = kser(key)
                    state = dirty.get(kb)
                    if state is not None:
                        old_size = state[3]
                        agg = aggregator(state[1], value) if reduce else aggregator(key, value, state[1])
                        new_ts = state[2] if state[2] > ts else ts
                    else:
                        old_size = clean.get(kb, 0)
                        data = replay.old_value(kb) if old_size else stored(kb)
                        if data is None:
                            agg, new_ts = (value if reduce else aggregator(key, value, initializer())), ts
                        else:
                            previous, old_ts = vde(topic, data[8:]), _TS.unpack_from(data)[0]
                            agg = aggregator(previous, value) if reduce else aggregator(key, value, previous)
                            new_ts = old_ts if old_ts > ts else ts
                    new_size = entry_size(kb, agg)
                except Exception as e:
                    self._fail(task, queue, record, e)
                if new_size is None:   # a null: the processor's write (a delete) and what follows, record by record
                    stop = True
                    break
                if state is not None:
                    del dirty[kb]   # re-dirtied: to the end
                elif old_size:
                    replay.take_clean(kb)
                dirty[kb] = [key, agg, new_ts, new_size, ts, headers, queue, off]
                size += new_size - old_size
                if size > limit:
                    size = replay.make_room(size, queue, off)
                done += 1
            processed += done
            if done:
                consumed[queue] = consumed.get(queue, 0) + done
            if stop:
                break
        replay.size = size
        replay.leave()
        store.position_offsets.update(_last_writes(consumed))
        _consume(task, consumed, processed)

    def _put(self, store: Any, key: Any, agg: Any, ts: int) -> None:
        """The write the processor makes for ``agg`` (its put, so a null from the serializer deletes as it does)."""
        if self.reduce:
            store.put(key, ValueAndTimestamp(agg, ts))
        else:
            store.put_with_timestamp(key, agg, ts)

    def _drop(self, task: Any, queue: Any, record: tuple) -> None:
        with _at(task, queue, record[1], self.node) as ctx:
            shared.drop_record(ctx, "null key or value", Record(record[2], record[3], record[0], record[4]))

    def _fail(self, task: Any, queue: Any, record: tuple, e: Exception) -> None:
        ts, off, key, value, headers, raw_key, raw_value = record
        with _at(task, queue, off, self.node, (raw_key, raw_value)):
            task.errors.handle_processing_error(e, queue.topic, queue.partition, off, Record(key, value, ts, headers))
        raise IllegalStateError("the processing exception handler resumed, which the batch path does not support")


class FlushedColumns:
    """A cached aggregation's flush in bulk: the flushed entries' new values written to the store beneath and sent
    downstream all at once, without a ``Record`` and a ``Change`` per entry, where nothing below the aggregation can
    tell one entry from the next — nothing at all, or ``to_stream()`` into a sink the fused forward encodes inline
    (no partitioner, a topic of known partition count, the store's key and value serdes: the entry's key bytes and
    value bytes are then the record's). What it leaves is what the per-entry flush leaves: the same store writes (a
    key's last write wins, in the same order), the same records in the same order per topic-partition with the
    aggregates' timestamps and no headers; nothing in between reads either. Taken by the batch paths' replayed
    flushes (:meth:`CacheReplay._flush`) and the commit's (``CachingBytesStore.flush``); an entry with headers, a
    delete, or an aggregation asked for old values keeps the per-entry flush."""

    __slots__ = ("task", "processor", "store", "cache_store", "topic", "count")

    def __init__(self, task: Any, node: Any, topic: Optional[str], count: int) -> None:
        self.task, self.processor = task, node.processor
        self.store = node.processor.store
        self.cache_store = self.store.record_cache
        self.topic, self.count = topic, count   # the sink's topic and partitions (None: nothing downstream)

    @staticmethod
    def plan(task: Any, node: Any) -> Optional["FlushedColumns"]:
        processor = node.processor
        if processor.send_old_values or not task.config.batch_fast_path or not _default_handler(task):
            return None
        if not node.children:
            return FlushedColumns(task, node, None, 0)
        if len(node.children) != 1 or getattr(processor.forward, "fused_at", None) is None:
            return None   # not the fused forward: a node of the per-record path below
        to_stream = node.children[0]
        if type(to_stream.processor) is not tables.KTableToStream or len(to_stream.children) != 1:
            return None
        sink = to_stream.children[0].processor
        store = processor.store
        if (type(sink) is not SinkProcessor or sink.partitioner is not None
                or not _same_bytes(store.key_serde, sink.key_serde)
                or not _same_bytes(store.plain_value_serde, sink.value_serde)):
            return None
        try:
            count = task.collector._partition_counts(sink.topic)
        except UnknownTopicException:
            # what the task's partition counts raise (TopicLayout.partitions_of, where the layout knows every topic
            # that exists; the local engine's answer 1): the per-entry flush keeps the sink's own send, which raises
            # it at the record, as Kafka's producer does. Anything else is a bug, not a reason to take another path.
            return None
        return FlushedColumns(task, node, sink.topic, count)

    def write(self, cache_keys: list[bytes], datas: list[bytes], timestamps: Any) -> None:
        """The flush of these entries (cache key, stored bytes (:func:`~.cache_replay.stored_bytes`) and the
        aggregate's timestamp), in order: the store beneath written, the records sent."""
        wrapped = self.cache_store.wrapped
        put_many = getattr(wrapped, "put_many", None)
        if put_many is not None:
            put_many(cache_keys, datas)
        else:
            write = self.cache_store.write_stored
            for kb, data in zip(cache_keys, datas):
                write(kb, data)
        if self.topic is not None:
            self._send(cache_keys, [data[8:] for data in datas], list(timestamps))

    def flush_entries(self, cache_keys: list[Any], entries: Any) -> bool:
        """``CachingBytesStore.flush`` of ``cache_keys`` (dirty, in flush order) in bulk (the commit's: this is the
        store's :class:`~streams_on_spark.state.caching.BulkFlush`); False (nothing done) where one is a delete, has
        headers or no writer's objects, or old values are asked for."""
        if self.processor.send_old_values:
            return False
        rows = [entries[kb] for kb in cache_keys]
        for entry in rows:
            if entry.value is None or entry.typed is None or entry.headers:
                return False
        self.write(cache_keys, [entry.value for entry in rows], [entry.typed[2] for entry in rows])
        for entry in rows:
            entry.typed = None   # clean: reads deserialize the bytes again
        return True

    def _send(self, keys: list[bytes], values: list[bytes], timestamps: list[int]) -> None:
        """The records the sink makes of these keys and values, in order, into the task's output: encoded into their
        partitions' batches at once (:func:`~streams_on_spark.record_batch.encode_headerless`: placed by murmur2 of
        the keys, a column at a time from some size), or as records where the output is a list."""
        topic, count = self.topic, self.count
        buffer = self.task.collector.buffer
        if buffer.__class__ is PartitionedRecords:
            encode_headerless([batch.buffers() for batch in buffer.partition_batches(topic, count)], timestamps, keys,
                              values)
            return
        new, pr = tuple.__new__, ProducerRecord
        places = itertools.repeat(0) if count == 1 else [partition_for_key(kb, count) for kb in keys]
        buffer.extend([new(pr, (topic, place, ts, kb, vb, ()))
                       for place, ts, kb, vb in zip(places, timestamps, keys, values)])


_DISTINCT_PROBE = 256   # keys _grouped_keys looks at for a repeat before it sets all of them apart


def _grouped_keys(keys: Any, timestamps: Any) -> tuple[list[bytes], Callable[[], tuple[list, list, list]]]:
    """A record batch's distinct keys (Arrow binary ``keys``, the records' ``timestamps``) in the order of their last
    records, and a function giving each one's last record's index, its count of records and its newest timestamp.
    Where every key comes once (a fill's record batch: told by a set of the keys, ~50 ns a key), that is the keys as
    they are, without Arrow's hash grouping (~0.2-1 µs a key, measured). A repeat among the first
    :data:`_DISTINCT_PROBE` keys (a word count's, nearly always) goes to the grouping at once: the keys as Python
    bytes and their set cost ~175 ns a word, all of it wasted when the grouping follows."""
    import numpy as np
    import pyarrow as pa
    n = len(timestamps)
    raw_keys = keys.slice(0, _DISTINCT_PROBE).to_pylist()
    seen = set(raw_keys)
    if len(seen) == len(raw_keys):
        if n > _DISTINCT_PROBE:   # the rest of the keys into the probe's list and set
            rest = keys.slice(_DISTINCT_PROBE).to_pylist()
            seen.update(rest)
            raw_keys += rest
        if len(seen) == n:
            return raw_keys, lambda: (list(range(n)), [1] * n, timestamps.tolist())
    groups = pa.table({"k": keys, "i": np.arange(n), "t": timestamps}).group_by("k", use_threads=False) \
        .aggregate([("i", "max"), ("i", "count"), ("t", "max")])
    order = np.argsort(groups["i_max"].to_numpy())   # the keys in the order of their last records
    return groups["k"].take(pa.array(order)).to_pylist(), lambda: (groups["i_max"].to_numpy()[order].tolist(),
                                                                   groups["i_count"].to_numpy()[order].tolist(),
                                                                   groups["t_max"].to_numpy()[order].tolist())


def _all_utf8(raw_keys: list[bytes]) -> bool:
    """Whether every key decodes as UTF-8, told by one decode of them all, NUL between keys (a NUL ends any
    sequence, so the whole decodes exactly where each key does): ~30 ns a key, not a ``str`` of each."""
    try:
        b"\0".join(raw_keys).decode()
    except UnicodeDecodeError:
        return False
    return True


def _decoded(raw_keys: list[bytes]) -> list[str]:
    """String keys of UTF-8 bytes (:func:`_all_utf8`)."""
    return [raw.decode() for raw in raw_keys]


def _as_they_are(raw_keys: list[bytes]) -> list[bytes]:
    """ByteArray keys: their bytes."""
    return raw_keys


def _occupancy(replay: Optional[CacheReplay], cache_store: Any) -> tuple[Callable[[list], Any], Callable[[Any], int],
                                                                         int, int]:
    """What a count projects the cache's size from: which of some keys it holds, what a held key occupies now, its
    size and its limit — from the account a count through the evictions keeps (``replay``), else from the cache."""
    if replay is not None:   # (a fill's keys are none of them held: checked without building a set first)
        return replay.held, replay.occupied, replay.size, replay.limit
    entries, budget = cache_store.cached_entries, cache_store.budget
    return ((lambda keys: () if entries.keys().isdisjoint(keys) else entries.keys() & keys),
            lambda kb: entries[kb].size, budget.size, budget.max_bytes)


def _same_bytes(store_serde: Any, sink_serde: Any) -> bool:
    """Whether the store's serde and the sink's give the same bytes for any value: the same built-in serde (String
    in one encoding, ByteArray, Long)."""
    kind = type(store_serde)
    if kind is not type(sink_serde) or kind not in (StringSerde, ByteArraySerde, LongSerde):
        return False
    return kind is not StringSerde or store_serde.encoding == sink_serde.encoding


def _cached_aggregation(task: Any) -> Optional[Any]:
    """The node of the task's one ``KStreamAggregate``/``KStreamReduce`` (exact types) where every source feeds it
    alone and its key-value store has the record cache in front, else None."""
    sources = task.partition_group.sources.values()
    targets = {id(child): child for source, _ in sources for child in source.children}
    if len(targets) != 1 or any(len(source.children) != 1 for source, _ in sources):
        return None
    node = next(iter(targets.values()))
    processor = node.processor
    if type(processor) not in (aggregations.KStreamAggregate, aggregations.KStreamReduce) or not processor.cached:
        return None
    store = processor.store
    if type(store) is not TimestampedKeyValueStore or type(store.record_cache) is not CachingKeyValueBytesStore:
        return None
    return node


_AFTER_AGGREGATION = (*_FUSABLE, tables.KTableToStream, SinkProcessor)


def _stateless_below(node: Any) -> bool:
    """Whether everything below ``node`` is a stateless DSL operator (exact types), ``to_stream`` or a sink."""
    pending, seen = list(node.children), set()
    while pending:
        child = pending.pop()
        if id(child) not in seen:
            seen.add(id(child))
            if type(child.processor) not in _AFTER_AGGREGATION:
                return False
            pending.extend(child.children)
    return True


def fused_forward(task: Any, node: Any) -> Optional[Callable[..., None]]:
    """``node``'s ``forward`` with everything below it fused (:meth:`_Compiler.compile_tail`), where ``node`` is not
    itself one of those operators (a stateful or a user's processor), everything below it is a stateless DSL
    operator, ``to_stream`` or a sink, and the processing exception handler is Kafka's default; else None."""
    if (not task.config.batch_fast_path or not node.children or type(node.processor) in _AFTER_AGGREGATION
            or type(node.processor) is SourceProcessor or not _default_handler(task) or not _stateless_below(node)):
        return None
    try:
        tail = _Compiler(task).compile_tail(node)
    except _NotFusable:
        return None
    tail.fused_at = (task, node.name)   # type: ignore[attr-defined]
    return tail


def replanned_forward(task: Any, node_name: str) -> Callable[..., None]:
    """A fused forward read back from a task image (generated code is not pickled, as :class:`FusedChains` are not):
    planned again on its first call, in the worker that runs the task."""
    planned: list[Callable[..., None]] = []

    def forward(record: Any, child: Optional[str] = None) -> None:
        if not planned:
            node = task.nodes[node_name]
            planned.append(fused_forward(task, node) or _plain_forward(task, node))
        planned[0](record, child)
    forward.fused_at = (task, node_name)   # type: ignore[attr-defined]
    return forward


def _plain_forward(task: Any, node: Any) -> Callable[..., None]:
    """``node``'s forward through the task's context, node by node (a named child, or where nothing is fused)."""
    ctx = task.context

    def forward(record: Any, child: Optional[str] = None) -> None:
        ctx.current = node
        type(ctx).forward(ctx, record, child)
    return forward


def written_through(task: Any) -> list[Any]:
    """The record caches of ``task`` that may flush each write as it is made (``CachingKeyValueBytesStore
    .write_through``) because the task commits after every record (Kafka's driver).

    Where every source feeds one cached aggregation alone (:func:`_cached_aggregation`), a record makes at most one
    write to its store before the commit that follows it, so that commit flushes exactly that write: flushing it at
    the write instead forwards the same record (same old value rule, same timestamp and headers) to the same nodes.
    Only the moment moves, from after the record to inside it, which nothing can observe where everything
    downstream is a stateless DSL operator, ``to_stream`` or a sink, no punctuation is scheduled and the processing
    exception handler is Kafka's default. Caches elsewhere keep holding writes until the commit.
    """
    if (not task._commit_every_record or not task.config.batch_fast_path or task._stream_schedules
            or task._wall_schedules or not _default_handler(task) or len(task.stores) != 1):
        return []
    node = _cached_aggregation(task)
    return [node.processor.store.record_cache] if node is not None and _stateless_below(node) else []


def _written_through_steps(task: Any) -> Optional[dict[str, Callable[..., None]]]:
    """Each source's step, ``step(records, queue, append)``, for a task whose ``count``/``aggregate`` writes through
    (:func:`written_through`): for each record, what :meth:`StreamTask.process_one`, the source, the
    ``KStreamAggregate``, its typed store and its record cache writing through do, in their order, without a
    ``Record`` for the source, its forward, and the cache's chain of listeners: the key's bytes read from the store
    beneath, the aggregate written back, ``Change(new, None)`` forwarded (stamped with the aggregate's timestamp,
    with the record's headers) through the aggregation's own forward, then the store's position moved. A null key or
    value goes to the processor (which drops it), an aggregate serializing to null to the cache (a delete, forwarded
    where the key existed); a failure is the task's, as on the per-record path. None where the task is not such a
    task: a ``reduce``, and an aggregation asked for old values, keep the per-record path (nothing that may stand
    below the step, :data:`_AFTER_AGGREGATION`, asks a table for them, so the step forwards ``Change(new, None)``)."""
    caches = written_through(task)
    node = _cached_aggregation(task) if caches else None
    if (node is None or type(node.processor) is not aggregations.KStreamAggregate or node.processor.send_old_values
            or caches[0] in task._caches
            or any(type(source.processor) is not SourceProcessor for source, _ in task.partition_group.sources.values())):
        return None
    processor, ctx, errors = node.processor, task.context, task.errors
    store = processor.store
    cache = store.record_cache
    read, write, delete = cache.read_stored, cache.write_stored, cache.delete
    kser, topic, written = store._kser, store._topic, store._written
    vde, vser = store.plain_value_serde.deserialize, store.plain_value_serde.serialize
    longs = long_sized(store)   # Kafka's LongSerializer and deserializer inline for an int64 and 8 bytes
    initializer, aggregator = processor.initializer, processor.aggregator
    counting = aggregator is aggregations.count_adder   # count(): the aggregate plus one, no call
    forward, process = processor.forward, processor.process
    unpack, pack, unpack_long, pack_long = _TS.unpack_from, _TS.pack, _LONG.unpack_from, _LONG.pack

    def step(records: Any, queue: Any, append: Any) -> None:
        for ts, off, key, value, headers, raw_key, raw_value in records:
            ctx.queue, ctx.offset, ctx.current = queue, off, node
            ctx.source_raw = (raw_key, raw_value)
            try:
                if key is None or value is None:
                    process(Record(key, value, ts, headers))   # the processor drops it
                    continue
                kb = kser(key)
                data = read(kb)
                if data is None:
                    agg, new_ts = initializer(), ts
                else:
                    agg = unpack_long(data, 8)[0] if longs and len(data) == 16 else vde(topic, data[8:])
                    old_ts = unpack(data)[0]
                    new_ts = ts if ts > old_ts else old_ts
                new = agg + 1 if counting else aggregator(key, value, agg)
                if longs and new.__class__ is int and _MIN_LONG <= new <= _MAX_LONG:
                    raw = pack_long(new)
                else:
                    raw = None if new is None else vser(topic, new)
                if key.__class__ not in _IMMUTABLE:   # the typed store's write serializes the key again (an immutable
                    kb = kser(key)                     # key's bytes are memoised)
                if raw is None:   # the typed store's delete through the cache, which reads the writer's record
                    ctx.record = Record(key, value, ts, headers)
                    delete(kb)
                else:   # the cache's flush of the write
                    if write(kb, pack(new_ts) + raw) and cache.flushed_into_position is not None:
                        cache.flushed_into_position()
                    forward(Record(key, Change(new, None), new_ts, headers))
                written()
            except Exception as e:
                errors.handle_processing_error(e, queue.topic, queue.partition, off, Record(key, value, ts, headers))
            finally:
                ctx.current = ctx.queue = ctx.record = None
                ctx.source_raw = (None, None)
    return {topic: step for topic in task.partition_group.sources}


def _entry_sizer(store: Any) -> Callable[[bytes, Any], Optional[int]]:
    """``size(key bytes, aggregate)``: what the record cache counts for the entry the typed ``store`` writes for that
    aggregate (None where it serializes to null), serializing it as the store would (so a serializer's error comes
    where it would); Kafka's LongSerializer writes 8 bytes for any int64, so a Long's size needs no call."""
    vser, topic = store.plain_value_serde.serialize, store._topic
    fixed = 16 + ENTRY_OVERHEAD_BYTES if long_sized(store) else None

    def size(kb: bytes, agg: Any) -> Optional[int]:
        if fixed is not None and agg.__class__ is int and _MIN_LONG <= agg <= _MAX_LONG:
            return len(kb) + fixed
        raw = vser(topic, agg)
        return None if raw is None else len(kb) + 8 + len(raw) + ENTRY_OVERHEAD_BYTES
    return size


def _last_writes(consumed: dict[Any, int]) -> dict[tuple[str, int], int]:
    """What the aggregation's store's position is after it folded ``consumed`` (queue -> how many from its head),
    which writes each key once: per queue, the offset of the last of them it did not drop (each of those is a write
    on the per-record path)."""
    written = {}
    for queue, count in consumed.items():
        records = queue.records
        for i in range(count - 1, -1, -1):
            record = records[i]
            if record[2] is not None and record[3] is not None:
                written[queue.topic_partition] = record[1]
                break
    return written


def _took_batch(task: Any, queue: Any, offset: int, timestamps: Any) -> None:
    """``queue``'s record batch from ``offset`` (its ``timestamps``, a numpy array) processed whole by a columnar
    path: the queue's next offset and partition time, the stream time and the processed count as the per-record
    path leaves them."""
    queue.next_offset = offset + len(timestamps)
    newest = int(timestamps.max())
    if newest > queue.partition_time:
        queue.partition_time = newest
    if queue.partition_time > task.stream_time:
        task.stream_time = queue.partition_time
    task.metrics.processed += len(timestamps)


def _consume(task: Any, consumed: dict[Any, int], processed: int) -> None:
    """Take the records a batch path processed (``consumed``: queue -> how many from its head) out of their queues,
    leaving the queues, times and processed count as the per-record path leaves them after those records."""
    stream_time = task.stream_time
    for queue, count in consumed.items():
        records = queue.records
        newest = queue.partition_time
        if count == len(records):   # the whole queue (a batch's usual case)
            taken: Any = records
        else:
            taken = [records.popleft() for _ in range(count)]
        if taken:
            newest = max(newest, max(map(_first, taken)))
        if taken is records:
            records.clear()
        queue.partition_time = newest
        if newest > stream_time:
            stream_time = newest
    task.stream_time = stream_time
    task.metrics.processed += processed


_first = itemgetter(0)   # a queued record's timestamp


def _merged_runs(queues: list) -> list[tuple[Any, list]]:
    """The queued records in :meth:`StreamTask.process_one`'s order (the head with the smallest timestamp first,
    the earlier queue on a tie), as runs of consecutive records of one queue."""
    heads = [0] * len(queues)
    lists = [list(q.records) for q in queues]
    runs: list[tuple[Any, list]] = []
    current, run = -1, None
    while True:
        best, best_ts = -1, 0
        for i, records in enumerate(lists):
            h = heads[i]
            if h < len(records):
                ts = records[h][0]
                if best < 0 or ts < best_ts:
                    best, best_ts = i, ts
        if best < 0:
            return runs
        if best != current:
            current, run = best, []
            runs.append((queues[best], run))
        run.append(lists[best][heads[best]])   # type: ignore[union-attr]
        heads[best] += 1


_MIN_LONG, _MAX_LONG = -0x8000000000000000, 0x7FFFFFFFFFFFFFFF
_LONG = struct.Struct(">q")
_UNFAILING_DESERIALIZERS = (StringSerde, ByteArraySerde)   # any bytes give a value


def _same_key_bytes(source_serde: Any, store_serde: Any) -> Optional[bool]:
    """Whether a record's key bytes are the store's key bytes for it (deserialized by ``source_serde``, serialized by
    ``store_serde``): True for String in UTF-8 on both sides (for valid UTF-8, which the caller checks), False for
    ByteArray on both sides, None otherwise."""
    kinds = (type(source_serde), type(store_serde))
    if kinds == (StringSerde, StringSerde):
        return True if source_serde.encoding == store_serde.encoding == "utf-8" else None
    return False if kinds == (ByteArraySerde, ByteArraySerde) else None


class _NotFusable(Exception):
    pass


class _Compiler:
    """Generates one chain function: a loop over a queue's records whose body is the operators, nested."""

    def __init__(self, task: Any, columnar: bool = False) -> None:
        self.task = task
        # columnar: a chain over a batch, whose sinks hold what they can as columns (runtime/column_sink.py)
        self.columnar = columnar
        self.column_sinks: dict[str, ColumnSink] = {}   # sink node name -> its held records (shared by the chains)
        self.chain_columns: dict[str, ColumnSink] = {}   # those the chain being compiled reaches
        # a ProducerRecord made as its own __new__ makes it, without that Python-level frame (half the sink's cost)
        self.env: dict[str, Any] = {"_pair": shared.as_pair, "_pfk": partition_for_key, "_hash": memoised_hash,
                                    "_utf8": memoised_utf8_key, "_remember": remember_utf8_key,
                                    "_PR": ProducerRecord, "_new": tuple.__new__, "_prefix": PREFIX.pack}
        self.lines: list[str] = []
        self.names = 0

    def _bind(self, value: Any) -> str:
        name = f"_o{len(self.env)}"
        self.env[name] = value
        return name

    def _vars(self) -> tuple[str, str]:
        self.names += 1
        return f"k{self.names}", f"v{self.names}"

    def compile(self, source: Any) -> Callable[..., None]:
        self.lines = ["def chain(records, queue, append):",
                      "    for ts, off, k0, v0, h, rk, rv in records:"]
        self.env["_fail"] = self._failure_handler()
        self.chain_columns: dict[str, ColumnSink] = {}
        for child in source.children:
            self._node(child, "k0", "v0", 2)
        for column in self.chain_columns.values():   # each source record's timestamp, and where its records end
            stamps, marks, keys = (self._bind(column.stamps.append), self._bind(column.marks.append),
                                   self._bind(column.keys))
            self.lines += [f"        {stamps}(ts)", f"        {marks}(len({keys}))"]
        if len(self.lines) == 2:
            self.lines.append("        pass")
        namespace: dict[str, Any] = {}
        exec(compile("\n".join(self.lines), f"<fused chain of {source.name}>", "exec"), self.env, namespace)
        return namespace["chain"]

    def compile_tail(self, node: Any) -> Callable[..., None]:
        """``node``'s ``forward``, with everything below it fused: one function taking the record it forwards (a
        processor's output, mid-record), its children's code inline. A user function that raises leaves the task's
        context at its node and raises on, as a ``forward`` through the nodes does; a forward to a named child goes
        through the task's context."""
        task = self.task
        self.env["_fail"] = self._tail_failure_handler()
        self.env["_named"] = _plain_forward(task, node)
        self.env["_collector"] = task.collector
        self.lines = ["def tail(record, child=None):",
                      "    if child is not None:",
                      "        return _named(record, child)",
                      "    k0, v0, ts, h = record.key, record.value, record.timestamp, record.headers",
                      "    queue = off = rk = rv = None",
                      "    append = _collector.buffer.append"]
        before = len(self.lines)
        for child in node.children:
            self._node(child, "k0", "v0", 1)
        if len(self.lines) == before:
            self.lines.append("    pass")
        namespace: dict[str, Any] = {}
        exec(compile("\n".join(self.lines), f"<fused forward of {node.name}>", "exec"), self.env, namespace)
        return namespace["tail"]

    def _call(self, pad: str, target: str, call: str, node: Any, then: tuple[str, ...] = ()) -> None:
        """``target = call`` (and the lines ``then``), failing the task at ``node`` as the per-record path does if
        the user's code raises."""
        name = self._bind(node.name)
        self.lines += [f"{pad}try:", f"{pad}    {target}{call}", *(f"{pad}    {line}" for line in then),
                       f"{pad}except Exception as e:",
                       f"{pad}    _fail({name}, e, queue, ts, off, k0, v0, h, rk, rv)"]

    @staticmethod
    def _materialized(items: str) -> tuple[str, ...]:
        """A mapper's result that is not a list or tuple (a generator) taken whole inside the ``try``: what it raises
        while it is iterated fails the task at its operator, as on the per-record path (where the failure ends the
        batch too, so what it yielded before never leaves)."""
        return (f"if {items}.__class__ is not list and {items}.__class__ is not tuple: {items} = tuple({items})",)

    def _node(self, node: Any, k: str, v: str, depth: int) -> None:
        pad = "    " * depth
        p = node.processor
        kind = type(p)
        add = self.lines.append
        if kind is SinkProcessor:
            self._sink(node, k, v, depth)
            return
        if kind is stateless.PassThrough:
            self._children(node, k, v, depth)
        elif kind is stateless.RepartitionNullKeyFilter:
            add(f"{pad}if {k} is not None:")
            self._children(node, k, v, depth + 1, empty=True)
        elif kind is stateless.KStreamFilter:
            f, keep = self._bind(p.predicate), self._bind(not p.filter_not)
            self._call(pad, "keep = ", f"bool({f}({k}, {v})) is {keep}", node)
            add(f"{pad}if keep:")
            self._children(node, k, v, depth + 1, empty=True)
        elif kind is stateless.KStreamPeek:
            f = self._bind(p.action)
            self._call(pad, "", f"{f}({k}, {v})", node)
            if p.forward_downstream:
                self._children(node, k, v, depth)
        elif kind is stateless.KStreamSelectKey:
            f = self._bind(p.mapper)
            nk, _ = self._vars()
            self._call(pad, f"{nk} = ", f"{f}({k}, {v})", node)
            self._children(node, nk, v, depth)
        elif kind is stateless.KStreamMapValues:
            f = self._bind(p.mapper)
            _, nv = self._vars()
            self._call(pad, f"{nv} = ", f"{f}({k}, {v})" if p.with_key else f"{f}({v})", node)
            self._children(node, k, nv, depth)
        elif kind is stateless.KStreamMap:
            f, name = self._bind(p.mapper), self._bind(p.node)
            nk, nv = self._vars()
            self._call(pad, f"{nk}, {nv} = ", f"_pair({f}({k}, {v}), {name})", node)
            self._children(node, nk, nv, depth)
        elif kind is stateless.KStreamFlatMapValues:
            f = self._bind(p.mapper)
            _, nv = self._vars()
            items = f"i{self.names}"
            self._call(pad, f"{items} = ", (f"{f}({k}, {v})" if p.with_key else f"{f}({v})") + " or ()", node,
                       self._materialized(items))
            add(f"{pad}for {nv} in {items}:")
            self._children(node, k, nv, depth + 1, empty=True)
        elif kind is stateless.KStreamFlatMap:
            f, name = self._bind(p.mapper), self._bind(p.node)
            nk, nv = self._vars()
            items = f"i{self.names}"
            self._call(pad, f"{items} = ", f"{f}({k}, {v}) or ()", node, self._materialized(items))
            add(f"{pad}for item in {items}:")
            self._call(pad + "    ", f"{nk}, {nv} = ", f"_pair(item, {name})", node)
            self._children(node, nk, nv, depth + 1, empty=True)
        elif kind is stateless.KStreamBranch:
            self._branch(node, k, v, depth)
        elif kind is tables.KTableToStream:
            _, nv = self._vars()
            self._call(pad, f"{nv} = ", f"{v}.new_value", node)
            self._children(node, k, nv, depth)
        else:
            raise _NotFusable(node.name)

    def _children(self, node: Any, k: str, v: str, depth: int, empty: bool = False) -> None:
        before = len(self.lines)
        for child in node.children:
            self._node(child, k, v, depth)
        if empty and len(self.lines) == before:
            self.lines.append("    " * depth + "pass")

    def _branch(self, node: Any, k: str, v: str, depth: int) -> None:
        """``split()``: the first branch whose predicate matches, else the default branch (named children)."""
        p = node.processor
        targets = [node.by_name[name] for name in p.children]
        default = None if p.default_child is None else node.by_name[p.default_child]
        predicates = self._bind(tuple(p.predicates))
        self.env["_branch"] = _choose_branch
        pad = "    " * depth
        self._call(pad, "b = ", f"_branch({predicates}, {k}, {v})", node)
        for i, target in enumerate(targets):
            self.lines.append(f"{pad}{'if' if i == 0 else 'elif'} b == {i}:")
            self._children_of(target, k, v, depth + 1)
        if default is not None:
            self.lines.append(f"{pad}{'if' if not targets else 'elif'} b < 0:")
            self._children_of(default, k, v, depth + 1)

    def _children_of(self, target: Any, k: str, v: str, depth: int) -> None:
        before = len(self.lines)
        self._node(target, k, v, depth)
        if len(self.lines) == before:
            self.lines.append("    " * depth + "pass")

    def _sink(self, node: Any, k: str, v: str, depth: int) -> None:
        """Serialize and place inline; the collector's own ``send`` where the inline path cannot decide. In a
        columnar chain a sink that can (:meth:`_column_sink`) holds a record with a str key and value and no headers
        as columns, flushed before any other record of its own takes the inline code."""
        column = self._column_sink(node) if self.columnar else None
        if column is None:
            self._inline_sink(node, k, v, depth)
            return
        pad = "    " * depth
        keys, values = self._bind(column.keys.append), self._bind(column.values.append)
        flush = self._bind(column.flush)
        self.lines += [f"{pad}if {k}.__class__ is str and {v}.__class__ is str and not h:",
                       f"{pad}    {keys}({k})",
                       f"{pad}    {values}({v})",
                       f"{pad}else:",
                       f"{pad}    {flush}(ts)"]
        self._inline_sink(node, k, v, depth + 1)
        self.chain_columns.setdefault(node.name, column)

    def _column_sink(self, node: Any) -> Optional[ColumnSink]:
        """``node``'s held records where its records can be (see runtime/column_sink.py): a sink without a
        partitioner, String serdes in UTF-8 for key and value, the only sink of the task writing its topic, whose
        partition count is known, in a task whose output is grouped by destination; else None."""
        sink, task = node.processor, self.task
        column = self.column_sinks.get(node.name)
        if column is not None:
            return column
        buffer = task.collector.buffer
        if (buffer.__class__ is not PartitionedRecords or sink.partitioner is not None
                or not _utf8_serde(sink.key_serde) or not _utf8_serde(sink.value_serde)
                or sum(1 for n in task.nodes.values()
                       if type(n.processor) is SinkProcessor and n.processor.topic == sink.topic) != 1):
            return None
        try:
            count = task.collector._partition_counts(sink.topic)
        except UnknownTopicException:
            # what the task's partition counts raise (TopicLayout.partitions_of, where the layout knows every topic
            # that exists; the local engine's answer 1): no columns, and the inline sink's code leaves the task to
            # the per-record path, whose send raises it at the record. Anything else is a bug, raised as it is.
            return None
        column = self.column_sinks[node.name] = ColumnSink(buffer, sink.topic, count)
        return column

    def _flush_columns(self, timestamp: int) -> None:
        """Every held record into its partition's batch (``timestamp``: the source record in process): before
        anything else may write the task's output."""
        for column in self.column_sinks.values():
            column.flush(timestamp)

    def _inline_sink(self, node: Any, k: str, v: str, depth: int) -> None:
        """Serialize and place inline; the collector's own ``send`` where the inline path cannot decide."""
        sink = node.processor
        pad = "    " * depth
        slow = self._bind(self._slow_send(node))
        if sink.partitioner is not None:
            self.lines.append(f"{pad}{slow}({k}, {v}, ts, h, queue, off, rk, rv)")
            return
        try:
            count = self.task.collector._partition_counts(sink.topic)
        except UnknownTopicException:
            # not a topic the task's layout knows (see _column_sink): the task is left to the per-record path, whose
            # send raises it at the record. Anything else is a bug, raised as it is.
            raise _NotFusable(node.name) from None
        topic = self._bind(sink.topic)
        if count == 1:
            place = ["place = 0"]
        else:   # partition_for_key, its memo's hit inline
            place = ["place = _hash(kb)", f"place = _pfk(kb, {count}) if place is None else place % {count}"]
        buffer = self.task.collector.buffer
        if buffer.__class__ is PartitionedRecords:   # encoded straight into its partition's batch (partition_output)
            buffers = [batch.buffers() for batch in buffer.partition_batches(sink.topic, count)]
            datas, ends = self._bind([data for data, _ in buffers]), self._bind([e.append for _, e in buffers])
            add = f"{self._bind(buffer.add)}({topic}, place, ts, kb, vb, h)"   # checked: RecordBatch.add's rules
            place += ["if kb.__class__ is bytes and (vb is None or vb.__class__ is bytes) and not h:",
                      "    try:",
                      "        prefix = _prefix(ts, len(kb), -1 if vb is None else len(vb), 0)",
                      "    except Exception:",
                      f"        {add}",
                      "    else:",
                      f"        data = {datas}[place]",
                      "        data += prefix",
                      "        data += kb",
                      "        if vb:",
                      "            data += vb",
                      f"        {ends}[place](len(data))",
                      "else:",
                      f"    {add}"]
        else:
            place.append(f"append(_new(_PR, ({topic}, place, ts, kb, vb, h)))")
        key_bytes = self._serialize(sink.key_serde, topic, k)
        value_bytes = self._serialize(sink.value_serde, topic, v)
        memo = ["hit = None"]
        if _utf8_serde(sink.key_serde) and count > 1:
            # a str key's bytes and hash with one lookup of the str (partitioner.memoised_utf8_key)
            memo = [f"hit = _utf8({k}) if {k}.__class__ is str else None"]
            key_bytes = f"hit[0] if hit is not None else {key_bytes}"
            place = ["if hit is not None:",
                     f"    place = hit[1] % {count}",
                     "else:",
                     *(f"    {line}" for line in place[:2]),
                     f"    if {k}.__class__ is str:",
                     f"        _remember({k}, kb)",
                     *place[2:]]
            if _utf8_serde(sink.value_serde):   # the same str as the key (select_key((k, v) -> v)): the same bytes
                value_bytes = f"kb if {v} is {k} else {value_bytes}"
        self.lines += [
            f"{pad}if {k} is None:",
            f"{pad}    {slow}({k}, {v}, ts, h, queue, off, rk, rv)",
            f"{pad}else:",
            *(f"{pad}    {line}" for line in memo),
            f"{pad}    try:",
            f"{pad}        kb = {key_bytes}",
            f"{pad}        vb = None if {v} is None else {value_bytes}",
            f"{pad}    except Exception:",
            f"{pad}        {slow}({k}, {v}, ts, h, queue, off, rk, rv)",
            f"{pad}    else:",
            f"{pad}        if kb is None:",
            f"{pad}            {slow}({k}, {v}, ts, h, queue, off, rk, rv)",
            f"{pad}        else:",
            *(f"{pad}            {line}" for line in place),
        ]

    def _serialize(self, serde: Any, topic: str, value: str) -> str:
        """The expression serializing ``value`` with ``serde``: Kafka's UTF-8 ``StringSerializer`` inline for a str
        (what :meth:`StringSerde.serialize` does first), else the serde's call."""
        call = f"{self._bind(serde.serialize)}({topic}, {value})"
        if _utf8_serde(serde):
            return f"{value}.encode('utf-8', 'replace') if {value}.__class__ is str else {call}"
        if type(serde) is LongSerde:   # Kafka's LongSerializer for an int64 (a bool is not an int here)
            self.env["_long"] = _LONG.pack
            return f"_long({value}) if {value}.__class__ is int and {_MIN_LONG} <= {value} <= {_MAX_LONG} else {call}"
        return call

    def _slow_send(self, node: Any) -> Callable[..., None]:
        """The record collector's ``send`` for one record at sink ``node``, with the task's context set as the
        per-record path has it (the production handler reads where the record came from)."""
        task, sink = self.task, node.processor
        flush = self._flush_columns if self.columnar else None

        def send(k: Any, v: Any, ts: int, h: Any, queue: Any, off: int, rk: Any, rv: Any) -> None:
            if flush is not None:   # a production handler's records may go anywhere: after what is held
                flush(ts)
            if queue is None:   # a fused forward: the task's context already is the record's
                ctx = task.context
                previous, ctx.current = ctx.current, node
                task.collector.send(sink.topic, Record(k, v, ts, h), sink.key_serde, sink.value_serde,
                                    sink.partitioner, sink.name)
                ctx.current = previous
                return
            with _at(task, queue, off, node, (rk, rv)):
                task.collector.send(sink.topic, Record(k, v, ts, h), sink.key_serde, sink.value_serde,
                                    sink.partitioner, sink.name)
        return send

    def _tail_failure_handler(self) -> Callable[..., None]:
        ctx, nodes = self.task.context, self.task.nodes

        def fail(node: str, e: Exception, *_: Any) -> None:
            """A user function raised at ``node`` inside a fused forward: raised on from that node."""
            ctx.current = nodes[node]
            raise e
        return fail

    def _failure_handler(self) -> Callable[..., None]:
        task = self.task
        flush = self._flush_columns if self.columnar else None

        def fail(node: str, e: Exception, queue: Any, ts: int, off: int, k: Any, v: Any, h: Any, rk: Any,
                 rv: Any) -> None:
            """A user function raised at ``node``: the task's error path, as for the per-record path's record."""
            if flush is not None:   # the output so far, as the per-record path leaves it
                flush(ts)
            with _at(task, queue, off, task.nodes[node], (rk, rv)):
                task.errors.handle_processing_error(e, queue.topic, queue.partition, off, Record(k, v, ts, h))
            raise IllegalStateError(f"the processing exception handler resumed after a failure at {node}, which the "
                                    "fused path does not support")   # unreachable: only LogAndFail is fused
        return fail


def _utf8_serde(serde: Any) -> bool:
    """Whether ``serde`` is Kafka's String serde in UTF-8 (its serializer inlined for a str)."""
    return type(serde) is StringSerde and serde.encoding == "utf-8"


def _choose_branch(predicates: tuple, key: Any, value: Any) -> int:
    """The index of the first predicate ``split()`` matches, -1 for the default branch."""
    for i, predicate in enumerate(predicates):
        if predicate(key, value):
            return i
    return -1

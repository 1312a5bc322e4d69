"""The processors behind DSL operators. Engines only host these; no engine re-implements an operator.

Each supplier is a zero-argument callable (a new processor per task). Table processors pass
:class:`Change` values (new and, when a downstream operator asked for it, old).
"""
from __future__ import annotations

import logging
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from streams_on_spark.change import Change, make_change
from streams_on_spark.errors import StreamsException
from streams_on_spark.keyvalue import KeyValue
from streams_on_spark.processor.api import (
    FixedKeyProcessor,
    FixedKeyProcessorContext,
    FixedKeyRecord,
    ForwardingDisabledProcessorContext,
    Processor,
    ProcessorContext,
    Record,
)
from streams_on_spark.state.stores import ValueAndTimestamp
from streams_on_spark.state.versioned import (
    PUT_RETURN_CODE_NOT_PUT,
    PUT_RETURN_CODE_VALID_TO_UNDEFINED,
    VersionedKeyValueStore,
)

log = logging.getLogger(__name__)


def _pair(result: Any, node: str) -> tuple[Any, Any]:
    if isinstance(result, tuple) and len(result) == 2:
        return result[0], result[1]
    raise StreamsException(f"mapper of {node} must return a KeyValue or a (key, value) tuple, "
                           f"got {type(result).__name__}")


def drop_record(context: ProcessorContext, what: str, record: Record) -> None:
    """Skip a record as Kafka does: a WARN naming where it came from and a dropped-records count."""
    meta = context.record_metadata()
    where = f" topic=[{meta.topic}] partition=[{meta.partition}] offset=[{meta.offset}]" if meta else ""
    log.warning("Skipping record due to %s.%s", what, where)
    metrics = getattr(context, "metrics", None)
    if metrics is not None:
        metrics.record_dropped()


def skip_out_of_order_join_update(context: ProcessorContext) -> None:
    """A table-table join skips an out-of-order update of a versioned table (KIP-914) as Kafka does: an INFO line and
    a dropped-records count."""
    log.info("Skipping out-of-order record from versioned table while performing table-table join.")
    metrics = getattr(context, "metrics", None)
    if metrics is not None:
        metrics.record_dropped()


@dataclass(frozen=True)
class TableValueGetter:
    """A table's value getter in one task (Kafka's ``KTableValueGetter``): ``getter(key)`` reads the latest value;
    a ``versioned`` one (Kafka's ``isVersioned()``) also reads ``getter(key, as_of)``, the value as of a timestamp, so
    a stream-table join sees the table as it was at each stream record's time (KIP-914)."""

    get: Callable[..., Any]
    versioned: bool = False

    def __call__(self, key: Any, as_of: Optional[int] = None) -> Any:
        if as_of is None:
            return self.get(key)
        if not self.versioned:
            raise StreamsException(f"get(key, as_of={as_of}) is only supported for versioned stores")
        return self.get(key, as_of)


class KStreamProcessValues(Processor):
    """Runs a user's ``FixedKeyProcessor`` (``KStream.process_values``): records in as ``FixedKeyRecord``."""

    def __init__(self, supplier: Callable[[], FixedKeyProcessor]) -> None:
        self.supplier = supplier

    def init(self, context: ProcessorContext) -> None:
        self.processor = self.supplier()
        if not isinstance(self.processor, FixedKeyProcessor):
            raise StreamsException(f"process_values needs a supplier of FixedKeyProcessor, got "
                                   f"{type(self.processor).__name__} (use process() for a Processor)")
        self.processor.init(FixedKeyProcessorContext(context))

    def process(self, record: Record) -> None:
        self.processor.process(FixedKeyRecord(record.key, record.value, record.timestamp, record.headers))

    def close(self) -> None:
        self.processor.close()


class _Stateless(Processor):
    name = "?"

    def init(self, context: ProcessorContext) -> None:
        self.context = context
        self.forward = context.forward


class KStreamFilter(_Stateless):
    def __init__(self, predicate: Callable[[Any, Any], bool], filter_not: bool) -> None:
        self.predicate, self.filter_not = predicate, filter_not

    def process(self, record: Record) -> None:
        if bool(self.predicate(record.key, record.value)) != self.filter_not:
            self.forward(record)


class RepartitionNullKeyFilter(_Stateless):
    """The ``-repartition-filter`` node: null keys cannot be partitioned, so they are dropped."""

    def process(self, record: Record) -> None:
        if record.key is not None:
            self.forward(record)


class KStreamMap(_Stateless):
    def __init__(self, mapper: Callable[[Any, Any], Any], node: str) -> None:
        self.mapper, self.node = mapper, node

    def process(self, record: Record) -> None:
        key, value = _pair(self.mapper(record.key, record.value), self.node)
        self.forward(Record(key, value, record.timestamp, record.headers))


class KStreamSelectKey(_Stateless):
    def __init__(self, mapper: Callable[[Any, Any], Any]) -> None:
        self.mapper = mapper

    def process(self, record: Record) -> None:
        self.forward(Record(self.mapper(record.key, record.value), record.value, record.timestamp, record.headers))


class KStreamMapValues(_Stateless):
    def __init__(self, mapper: Callable[..., Any], with_key: bool = False) -> None:
        self.mapper, self.with_key = mapper, with_key

    def process(self, record: Record) -> None:
        value = self.mapper(record.key, record.value) if self.with_key else self.mapper(record.value)
        self.forward(Record(record.key, value, record.timestamp, record.headers))


class KStreamFlatMap(_Stateless):
    def __init__(self, mapper: Callable[[Any, Any], Iterable[Any]], node: str) -> None:
        self.mapper, self.node = mapper, node

    def process(self, record: Record) -> None:
        ts, headers, forward = record.timestamp, record.headers, self.forward
        for item in self.mapper(record.key, record.value) or ():
            key, value = _pair(item, self.node)
            forward(Record(key, value, ts, headers))


class KStreamFlatMapValues(_Stateless):
    def __init__(self, mapper: Callable[..., Iterable[Any]], with_key: bool = False) -> None:
        self.mapper, self.with_key = mapper, with_key

    def process(self, record: Record) -> None:
        key, ts, headers, forward = record.key, record.timestamp, record.headers, self.forward
        values = self.mapper(key, record.value) if self.with_key else self.mapper(record.value)
        for value in values or ():
            forward(Record(key, value, ts, headers))


class KStreamPeek(_Stateless):
    def __init__(self, action: Callable[[Any, Any], None], forward: bool) -> None:
        self.action, self.forward_downstream = action, forward

    def process(self, record: Record) -> None:
        self.action(record.key, record.value)
        if self.forward_downstream:
            self.forward(record)


class PassThrough(_Stateless):
    def process(self, record: Record) -> None:
        self.forward(record)


class KStreamBranch(_Stateless):
    """``split()``: a record goes to the first branch whose predicate matches, else the default branch."""

    def __init__(self, predicates: list[Callable[[Any, Any], bool]], children: list[str],
                 default_child: Optional[str]) -> None:
        self.predicates, self.children, self.default_child = predicates, children, default_child

    def process(self, record: Record) -> None:
        for predicate, child in zip(self.predicates, self.children):
            if predicate(record.key, record.value):
                self.forward(record, child)
                return
        if self.default_child is not None:
            self.forward(record, self.default_child)


def forward_on_flush(processor: Any, store: Any) -> bool:
    """Kafka's ``TimestampedTupleForwarder``: when a record cache sits in front of ``store``, the processor's
    updates go downstream when the cache flushes (``Change(new, old as of the last flush)`` with the writing record's
    headers, stamped with the new value's timestamp, else the writing record's — a session store gives the session
    end), and the processor must not forward them itself: returns True. Key-value, window and session stores."""
    forward = processor.forward

    def flushed(key: Any, new_value: Any, new_timestamp: Optional[int], old_value: Any, timestamp: int,
                headers: Any) -> None:
        forward(Record(key, Change(new_value, old_value), timestamp if new_timestamp is None else new_timestamp,
                       headers))
    return store is not None and store.set_flush_listener(flushed, processor.send_old_values)


class _Stateful(Processor):
    def __init__(self, store_name: str) -> None:
        self.store_name = store_name
        self.send_old_values = False

    def init(self, context: ProcessorContext) -> None:
        self.context = context
        self.forward = context.forward
        self.store = context.get_state_store(self.store_name)
        self.cached = forward_on_flush(self, self.store)

    def _forward_change(self, key: Any, new: Any, old: Any, timestamp: int, headers: Any) -> None:
        if not self.cached:
            self.forward(Record(key, Change(new, old if self.send_old_values else None), timestamp, headers))


def count_initializer() -> int:
    """``count()``'s initializer."""
    return 0


def count_adder(_key: Any, _value: Any, agg: int) -> int:
    """``count()``'s aggregator (the batch path adds one without calling it: ``fused.BatchAggregation``)."""
    return agg + 1


def count_subtractor(_key: Any, _value: Any, agg: int) -> int:
    """``KGroupedTable.count()``'s subtractor."""
    return agg - 1


class KStreamAggregate(_Stateful):
    """``aggregate``/``count``: fold each record into the key's aggregate; emits the new (and old) value."""

    def __init__(self, store_name: str, initializer: Callable[[], Any],
                 aggregator: Callable[[Any, Any, Any], Any]) -> None:
        super().__init__(store_name)
        self.initializer, self.aggregator = initializer, aggregator

    def process(self, record: Record) -> None:
        key, value = record.key, record.value
        if key is None or value is None:
            drop_record(self.context, "null key or value", record)
            return
        old = self.store.get_with_timestamp(key)
        if old is None:
            agg, ts = self.initializer(), record.timestamp
            old_agg = None
        else:
            agg = old_agg = old[0]
            ts = record.timestamp if record.timestamp > old[1] else old[1]
        new_agg = self.aggregator(key, value, agg)
        self.store.put_with_timestamp(key, new_agg, ts)
        if not self.cached:
            self.forward(Record(key, Change(new_agg, old_agg if self.send_old_values else None), ts, record.headers))


class KStreamReduce(_Stateful):
    def __init__(self, store_name: str, reducer: Callable[[Any, Any], Any]) -> None:
        super().__init__(store_name)
        self.reducer = reducer

    def process(self, record: Record) -> None:
        key, value = record.key, record.value
        if key is None or value is None:
            drop_record(self.context, "null key or value", record)
            return
        old = self.store.get(key)
        if old is None:
            new_agg, ts, old_agg = value, record.timestamp, None
        else:
            old_agg = old.value
            new_agg = self.reducer(old_agg, value)
            ts = record.timestamp if record.timestamp > old.timestamp else old.timestamp
        self.store.put(key, ValueAndTimestamp(new_agg, ts))
        self._forward_change(key, new_agg, old_agg, ts, record.headers)


class KTableSource(Processor):
    """Turns a topic (or a stream, for ``to_table``) into table updates; stores them when materialized."""

    def __init__(self, store_name: Optional[str], queryable_name: Optional[str]) -> None:
        self.store_name = store_name
        self.queryable_name = queryable_name
        self.send_old_values = False

    @property
    def materialized(self) -> bool:
        return self.queryable_name is not None

    def materialize(self) -> None:
        self.queryable_name = self.store_name

    def init(self, context: ProcessorContext) -> None:
        self.context = context
        self.forward = context.forward
        self.store = context.get_state_store(self.queryable_name) if self.queryable_name else None
        self.versioned = isinstance(self.store, VersionedKeyValueStore)
        self.cached = False if self.versioned else forward_on_flush(self, self.store)

    def process(self, record: Record) -> None:
        key = record.key
        if key is None:
            drop_record(self.context, "null key", record)
            return
        if self.store is not None:
            old = self.store.get(key)
            old_value = None if old is None else old.value
            if old is not None and record.timestamp < old.timestamp:
                log.warning("Detected out-of-order KTable update for %s, old timestamp=[%d] new timestamp=[%d].",
                            self.store_name, old.timestamp, record.timestamp)
            if self.versioned:
                # a versioned table keeps an out-of-order update as history and forwards it (Kafka marks it not
                # latest); one older than the history retention is neither stored nor forwarded
                code = self.store.put(key, record.value, record.timestamp)
                if code == PUT_RETURN_CODE_NOT_PUT:
                    return
                self.forward(record.with_value(make_change(record.value, old_value if self.send_old_values else None,
                                                           code == PUT_RETURN_CODE_VALID_TO_UNDEFINED)))
                return
            self.store.put(key, ValueAndTimestamp.make(record.value, record.timestamp))
            if self.cached:
                return
        else:
            old_value = None
        self.forward(record.with_value(Change(record.value, old_value if self.send_old_values else None)))


class _KTableValueProcessor(Processor):
    """A table operator computing each new value from the parent's; stores it when materialized."""

    #: the input is a versioned table (Kafka's ``useVersionedSemantics``): deletes of nothing are forwarded too
    versioned_semantics = False

    def __init__(self, store_name: Optional[str]) -> None:
        self.store_name = store_name
        self.send_old_values = False

    def init(self, context: ProcessorContext) -> None:
        self.context, self.forward = context, context.forward
        self.store = context.get_state_store(self.store_name) if self.store_name else None
        self.versioned = isinstance(self.store, VersionedKeyValueStore)
        self.cached = False if self.versioned else forward_on_flush(self, self.store)

    @abstractmethod
    def _compute(self, key: Any, value: Any) -> Any:
        """The operator's value for ``value`` (None stays None)."""

    def _skip_noop_deletes(self) -> bool:
        return False

    def process(self, record: Record) -> None:
        change: Change = record.value
        new_value = self._compute(record.key, change.new_value)
        old_value = None
        if self.send_old_values:   # Kafka's computeOldValue: from the store when materialized, else computed
            if self.store is not None:
                old = self.store.get(record.key)
                old_value = None if old is None else old.value
            else:
                old_value = self._compute(record.key, change.old_value)
            if new_value is None and old_value is None and self._skip_noop_deletes() and not self.versioned_semantics:
                return  # nothing to delete downstream
        if self.versioned:   # materialized in a versioned store: as the versioned table source
            code = self.store.put(record.key, new_value, record.timestamp)
            if code != PUT_RETURN_CODE_NOT_PUT:
                self.forward(record.with_value(make_change(new_value, old_value,
                                                           code == PUT_RETURN_CODE_VALID_TO_UNDEFINED)))
            return
        if self.store is not None:
            self.store.put(record.key, ValueAndTimestamp.make(new_value, record.timestamp))
            if self.cached:
                return
            self.forward(record.with_value(Change(new_value, old_value)))
            return
        # unmaterialized: an out-of-order update of a versioned table stays one (Kafka passes isLatest on)
        self.forward(record.with_value(make_change(new_value, old_value, change.is_latest)))


class KTableFilter(_KTableValueProcessor):
    def __init__(self, predicate: Callable[[Any, Any], bool], filter_not: bool, store_name: Optional[str]) -> None:
        super().__init__(store_name)
        self.predicate, self.filter_not = predicate, filter_not

    def _compute(self, key: Any, value: Any) -> Any:
        if value is None:
            return None
        return value if bool(self.predicate(key, value)) != self.filter_not else None

    def _skip_noop_deletes(self) -> bool:
        return True


class KTableMapValues(_KTableValueProcessor):
    def __init__(self, mapper: Callable[..., Any], with_key: bool, store_name: Optional[str]) -> None:
        super().__init__(store_name)
        self.mapper, self.with_key = mapper, with_key

    def _compute(self, key: Any, value: Any) -> Any:
        if value is None:
            return None
        return self.mapper(key, value) if self.with_key else self.mapper(value)


def new_value_transformer(supplier: Callable[[], Any], context: ProcessorContext) -> tuple[Any, Any]:
    """A new transformer from ``transform_values``'s supplier, initialized with ``context`` without ``forward``
    (Kafka's ``ForwardingDisabledProcessorContext``): (transformer, the context it got)."""
    transformer = supplier()
    if not callable(getattr(transformer, "transform", None)):
        raise StreamsException(f"transform_values needs a supplier of ValueTransformerWithKey (an object with "
                               f"transform(read_only_key, value)), got {type(transformer).__name__}")
    transformer_context = ForwardingDisabledProcessorContext(context)
    init = getattr(transformer, "init", None)
    if init is not None:
        init(transformer_context)
    return transformer, transformer_context


class KTableTransformValues(Processor):
    """``KTable.transform_values``: the user's ``ValueTransformerWithKey`` turns every new value into the table's
    (Kafka's ``KTableTransformValuesProcessor``), a ``None`` one included. When downstream needs old values, an
    unmaterialized table transforms the old value too (after the new one); a materialized one reads it from its
    store, which it writes with the record's timestamp (forwarding on cache flush when the store is cached)."""

    def __init__(self, transformer_supplier: Callable[[], Any], store_name: Optional[str]) -> None:
        self.transformer_supplier, self.store_name = transformer_supplier, store_name
        self.send_old_values = False

    def init(self, context: ProcessorContext) -> None:
        self.context, self.forward = context, context.forward
        self.transformer, _ = new_value_transformer(self.transformer_supplier, context)
        self.store = context.get_state_store(self.store_name) if self.store_name else None
        self.versioned = isinstance(self.store, VersionedKeyValueStore)
        self.cached = False if self.versioned else forward_on_flush(self, self.store)

    def process(self, record: Record) -> None:
        change: Change = record.value
        transform, key = self.transformer.transform, record.key
        new_value = transform(key, change.new_value)
        store = self.store
        if store is None:
            old_value = transform(key, change.old_value) if self.send_old_values else None
            self.forward(record.with_value(make_change(new_value, old_value, change.is_latest)))
            return
        old_value = None
        if self.send_old_values:
            old = store.get(key)
            old_value = None if old is None else old.value
        if self.versioned:
            code = store.put(key, new_value, record.timestamp)
            if code != PUT_RETURN_CODE_NOT_PUT:
                self.forward(record.with_value(make_change(new_value, old_value,
                                                           code == PUT_RETURN_CODE_VALID_TO_UNDEFINED)))
            return
        store.put(key, ValueAndTimestamp.make(new_value, record.timestamp))
        if not self.cached:
            self.forward(record.with_value(Change(new_value, old_value)))

    def close(self) -> None:
        close = getattr(self.transformer, "close", None)
        if close is not None:
            close()


class KTableToStream(_Stateless):
    def process(self, record: Record) -> None:
        self.forward(Record(record.key, record.value.new_value, record.timestamp, record.headers))


class KTableRepartitionMap(_Stateless):
    """``KTable.group_by``: re-key old and new values; one record when the key is unchanged, else two. Over a
    versioned table (``versioned``) an out-of-order update is skipped: the aggregate counts latest versions only."""

    def __init__(self, selector: Callable[[Any, Any], Any], node: str, versioned: bool = False) -> None:
        self.selector, self.node, self.versioned = selector, node, versioned

    def process(self, record: Record) -> None:
        if record.key is None:
            raise StreamsException("Record key for the grouping KTable should not be null.")
        change: Change = record.value
        if self.versioned and not change.is_latest:
            return
        new_pair = None if change.new_value is None else _pair(self.selector(record.key, change.new_value), self.node)
        old_pair = None if change.old_value is None else _pair(self.selector(record.key, change.old_value), self.node)
        old_ok = old_pair is not None and old_pair[0] is not None and old_pair[1] is not None
        new_ok = new_pair is not None and new_pair[0] is not None and new_pair[1] is not None
        if old_ok and new_ok and old_pair[0] == new_pair[0]:  # type: ignore[index]
            self.forward(Record(old_pair[0], Change(new_pair[1], old_pair[1]), record.timestamp,  # type: ignore[index]
                                record.headers))
            return
        if old_ok:
            self.forward(Record(old_pair[0], Change(None, old_pair[1]), record.timestamp, record.headers))  # type: ignore[index]
        if new_ok:
            self.forward(Record(new_pair[0], Change(new_pair[1], None), record.timestamp, record.headers))  # type: ignore[index]


class KTableAggregate(_Stateful):
    """``KGroupedTable.aggregate``/``count``: subtract the old value, add the new one."""

    operator = "aggregate"
    first_value_starts = False   # reduce: a key's first value is its aggregate (Kafka's KTableReduce)

    def __init__(self, store_name: str, initializer: Callable[[], Any], adder: Callable[[Any, Any, Any], Any],
                 subtractor: Callable[[Any, Any, Any], Any]) -> None:
        super().__init__(store_name)
        self.initializer, self.adder, self.subtractor = initializer, adder, subtractor

    def process(self, record: Record) -> None:
        key, change = record.key, record.value
        if key is None:
            raise StreamsException(f"Record key for KTable {self.operator} operator with state {self.store_name} "
                                   "should not be null.")
        old = self.store.get(key)
        old_agg = None if old is None else old.value
        ts = record.timestamp
        if change.old_value is not None and old_agg is not None:
            agg = self.subtractor(key, change.old_value, old_agg)
            ts = max(record.timestamp, old.timestamp)  # type: ignore[union-attr]
        else:
            agg = old_agg
        if change.new_value is not None:
            if agg is None and self.first_value_starts:
                new_agg = change.new_value
            else:
                new_agg = self.adder(key, change.new_value, self.initializer() if agg is None else agg)
                if old is not None:
                    ts = max(record.timestamp, old.timestamp)
        else:
            new_agg = agg
        self.store.put(key, ValueAndTimestamp.make(new_agg, ts))
        self._forward_change(key, new_agg, old_agg, ts, record.headers)


class KTableReduce(KTableAggregate):
    """``KGroupedTable.reduce``: ``adder(agg, value)``/``subtractor(agg, value)``, the first value starting it."""

    operator = "reduce"
    first_value_starts = True

    def __init__(self, store_name: str, adder: Callable[[Any, Any], Any],
                 subtractor: Callable[[Any, Any], Any]) -> None:
        super().__init__(store_name, _no_initial_value, lambda _key, value, agg: adder(agg, value),
                         lambda _key, value, agg: subtractor(agg, value))


def _no_initial_value() -> None:
    return None


class KStreamCogroupAggregate(KStreamAggregate):
    """One input of a cogroup: the aggregate shares its store with the other inputs."""


class CogroupMerge(_Stateless):
    def process(self, record: Record) -> None:
        self.forward(record)


__all__ = ["Change", "KeyValue"]

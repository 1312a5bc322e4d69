"""The table operators: a table's source, ``filter``/``map_values``/``transform_values`` over it, ``to_stream`` and the
re-keying before a table aggregation (Kafka's ``KTableSource``, ``KTableFilter``, ``KTableMapValues``,
``KTableTransformValues``, ``KTableRepartitionMap``), and a table's value getter. They pass :class:`Change` values
(new and, when a downstream operator asked for it, old)."""
from __future__ import annotations

import logging
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Optional

from streams_on_spark.change import Change, make_change
from streams_on_spark.errors import StreamsException
from streams_on_spark.operators.shared import as_pair, drop_record, forward_on_flush
from streams_on_spark.operators.stateless import StatelessProcessor
from streams_on_spark.processor.api import ForwardingDisabledProcessorContext, Processor, ProcessorContext, Record
from streams_on_spark.state.stores import ValueAndTimestamp
from streams_on_spark.state.versioned import (
    PUT_RETURN_CODE_NOT_PUT,
    PUT_RETURN_CODE_VALID_TO_UNDEFINED,
    VersionedKeyValueStore,
)

log = logging.getLogger(__name__)


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


class KTableSource(Processor):
    """Turns a topic (or a stream, for ``to_table``) into table updates; stores them when materialized."""

    def __init__(self, store_name: Optional[str], queryable_name: Optional[str] = None) -> None:
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


class KTableToStream(StatelessProcessor):
    def process(self, record: Record) -> None:
        self.forward(Record(record.key, record.value.new_value, record.timestamp, record.headers))


class KTableRepartitionMap(StatelessProcessor):
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
        new_pair = None if change.new_value is None else as_pair(self.selector(record.key, change.new_value), self.node)
        old_pair = None if change.old_value is None else as_pair(self.selector(record.key, change.old_value), self.node)
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

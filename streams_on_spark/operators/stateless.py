"""The stateless stream operators (Kafka's ``KStreamFilter``, ``KStreamMap``, ``KStreamFlatMap``, ``KStreamPeek``,
``KStreamBranch``, ...) and ``process_values``. Engines only host these; no engine re-implements an operator.

Each supplier is a zero-argument callable (a new processor per task)."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from streams_on_spark.errors import StreamsException
from streams_on_spark.operators.shared import as_pair
from streams_on_spark.processor.api import (
    FixedKeyProcessor,
    FixedKeyProcessorContext,
    FixedKeyRecord,
    Processor,
    ProcessorContext,
    Record,
)


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


class StatelessProcessor(Processor):
    name = "?"

    def init(self, context: ProcessorContext) -> None:
        self.context = context
        self.forward = context.forward


class KStreamFilter(StatelessProcessor):
    def __init__(self, predicate: Callable[[Any, Any], bool], filter_not: bool) -> None:
        self.predicate, self.filter_not = predicate, filter_not

    def process(self, record: Record) -> None:
        if bool(self.predicate(record.key, record.value)) != self.filter_not:
            self.forward(record)


class RepartitionNullKeyFilter(StatelessProcessor):
    """The ``-repartition-filter`` node: null keys cannot be partitioned, so they are dropped."""

    def process(self, record: Record) -> None:
        if record.key is not None:
            self.forward(record)


class KStreamMap(StatelessProcessor):
    def __init__(self, mapper: Callable[[Any, Any], Any], node: str) -> None:
        self.mapper, self.node = mapper, node

    def process(self, record: Record) -> None:
        key, value = as_pair(self.mapper(record.key, record.value), self.node)
        self.forward(Record(key, value, record.timestamp, record.headers))


class KStreamSelectKey(StatelessProcessor):
    def __init__(self, mapper: Callable[[Any, Any], Any]) -> None:
        self.mapper = mapper

    def process(self, record: Record) -> None:
        self.forward(Record(self.mapper(record.key, record.value), record.value, record.timestamp, record.headers))


class KStreamMapValues(StatelessProcessor):
    def __init__(self, mapper: Callable[..., Any], with_key: bool = False) -> None:
        self.mapper, self.with_key = mapper, with_key

    def process(self, record: Record) -> None:
        value = self.mapper(record.key, record.value) if self.with_key else self.mapper(record.value)
        self.forward(Record(record.key, value, record.timestamp, record.headers))


class KStreamFlatMap(StatelessProcessor):
    def __init__(self, mapper: Callable[[Any, Any], Iterable[Any]], node: str) -> None:
        self.mapper, self.node = mapper, node

    def process(self, record: Record) -> None:
        ts, headers, forward = record.timestamp, record.headers, self.forward
        for item in self.mapper(record.key, record.value) or ():
            key, value = as_pair(item, self.node)
            forward(Record(key, value, ts, headers))


class KStreamFlatMapValues(StatelessProcessor):
    def __init__(self, mapper: Callable[..., Iterable[Any]], with_key: bool = False) -> None:
        self.mapper, self.with_key = mapper, with_key

    def process(self, record: Record) -> None:
        key, ts, headers, forward = record.key, record.timestamp, record.headers, self.forward
        values = self.mapper(key, record.value) if self.with_key else self.mapper(record.value)
        for value in values or ():
            forward(Record(key, value, ts, headers))


class KStreamPeek(StatelessProcessor):
    def __init__(self, action: Callable[[Any, Any], None], forward: bool) -> None:
        self.action, self.forward_downstream = action, forward

    def process(self, record: Record) -> None:
        self.action(record.key, record.value)
        if self.forward_downstream:
            self.forward(record)


class PassThrough(StatelessProcessor):
    def process(self, record: Record) -> None:
        self.forward(record)


class KStreamBranch(StatelessProcessor):
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

"""The Processor API: records, processors, their context and punctuation (Kafka's ``processor.api``)."""
from __future__ import annotations

import enum
import numbers
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Callable, Generic, NamedTuple, Optional, TypeVar

from streams_on_spark.errors import bad_argument
from streams_on_spark.headers import Headers, to_headers

if TYPE_CHECKING:  # pragma: no cover
    from streams_on_spark.state import StateStore

K = TypeVar("K")
V = TypeVar("V")

class Record(Generic[K, V]):
    """A record flowing through processors: key, value, timestamp (ms) and headers.

    Immutable by convention; the ``with_*`` methods return a copy, as in Kafka's ``Record``.
    """

    __slots__ = ("key", "value", "timestamp", "headers")

    def __init__(self, key: K, value: V, timestamp: int, headers: Any = ()) -> None:
        if type(timestamp) is not int:  # fast path: the engines always pass an int
            timestamp = _timestamp(timestamp)
        if timestamp < 0:
            raise ValueError(f"Malformed Record: timestamp may not be negative, got {timestamp}")
        self.key = key
        self.value = value
        self.timestamp = timestamp
        self.headers = headers if type(headers) is tuple else to_headers(headers)

    def with_key(self, key: Any) -> "Record":
        return Record(key, self.value, self.timestamp, self.headers)

    def with_value(self, value: Any) -> "Record":
        return Record(self.key, value, self.timestamp, self.headers)

    def with_timestamp(self, timestamp: int) -> "Record":
        return Record(self.key, self.value, timestamp, self.headers)

    def with_headers(self, headers: Any) -> "Record":
        return Record(self.key, self.value, self.timestamp, headers)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Record) and self.key == other.key and self.value == other.value
                and self.timestamp == other.timestamp and self.headers == other.headers)

    def __hash__(self) -> int:
        return hash((self.timestamp, self.headers))

    def __repr__(self) -> str:
        return f"Record(key={self.key!r}, value={self.value!r}, timestamp={self.timestamp}, headers={self.headers!r})"


def _timestamp(timestamp: Any) -> int:
    """A record timestamp in ms: any integral number (numpy's too), never None, a bool or a float."""
    if isinstance(timestamp, numbers.Integral) and not isinstance(timestamp, bool):
        return int(timestamp)
    raise bad_argument("Malformed Record: timestamp", "an int (ms)", timestamp)


class RecordMetadata(NamedTuple):
    """Where the record being processed came from (``context.record_metadata()``)."""

    topic: str
    partition: int
    offset: int


class RecordContext(NamedTuple):
    """The record a topic name extractor routes: where it came from (``topic`` None, ``partition`` and ``offset`` -1
    in a punctuation), its timestamp and headers (Kafka's ``RecordContext``)."""

    topic: Optional[str]
    partition: int
    offset: int
    timestamp: int
    headers: Headers


class TopicNameExtractor(ABC):
    """Chooses a sink's topic per record (Kafka's ``TopicNameExtractor``); ``str()`` is what ``describe()`` prints."""

    @abstractmethod
    def extract(self, key: Any, value: Any, record_context: RecordContext) -> str: ...


def topic_name_extractor(extractor: Any) -> Callable[[Any, Any, RecordContext], str]:
    """The function choosing a sink's topic: a ``TopicNameExtractor``'s ``extract``, or a callable
    ``(key, value, record_context) -> str``; anything else is a ValueError naming it."""
    if extractor is None:
        raise ValueError("topicExtractor cannot be null")
    if isinstance(extractor, TopicNameExtractor):
        return extractor.extract
    if isinstance(extractor, (str, bytes)) or not callable(extractor):
        raise bad_argument("topic", "a non-empty str, or a TopicNameExtractor (a callable (key, value, "
                           "record_context) -> str)", extractor)
    return extractor


class StreamPartitioner(ABC):
    """Where a sink writes a record (Kafka's ``StreamPartitioner``, KIP-837): override ``partitions`` or, for one
    partition, ``partition``."""

    def partitions(self, topic: str, key: Any, value: Any, num_partitions: int) -> Optional[set[int]]:
        """None for the default partitioning, an empty set to drop the record, else the partitions to write it to."""
        partition = self.partition(topic, key, value, num_partitions)
        return None if partition is None else {partition}

    def partition(self, topic: str, key: Any, value: Any, num_partitions: int) -> Optional[int]:
        """The single-partition form: None for the default partitioning, else the partition."""
        raise NotImplementedError(f"StreamPartitioner {type(self).__name__} must override partitions() or partition()")

    def __call__(self, topic: str, key: Any, value: Any, num_partitions: int) -> Optional[set[int]]:
        return self.partitions(topic, key, value, num_partitions)


class PunctuationType(enum.Enum):
    """What drives a punctuator: the task's stream time or the (mockable) wall clock."""

    STREAM_TIME = "STREAM_TIME"
    WALL_CLOCK_TIME = "WALL_CLOCK_TIME"


class Cancellable(ABC):
    """Handle returned by ``schedule``; ``cancel()`` stops future punctuations."""

    @abstractmethod
    def cancel(self) -> None: ...


class ProcessorContext(ABC):
    """What a processor sees of its task: forwarding, stores, schedules, metadata and time."""

    @abstractmethod
    def forward(self, record: Record, child: str | None = None) -> None: ...

    @abstractmethod
    def get_state_store(self, name: str) -> "StateStore": ...

    @abstractmethod
    def schedule(self, interval_ms: int, punctuation_type: PunctuationType,
                 punctuator: Callable[[int], None]) -> Cancellable: ...

    @abstractmethod
    def record_metadata(self) -> RecordMetadata | None: ...

    @property
    @abstractmethod
    def application_id(self) -> str: ...

    @property
    @abstractmethod
    def task_id(self) -> "TaskId": ...

    @abstractmethod
    def current_stream_time_ms(self) -> int: ...

    @abstractmethod
    def current_system_time_ms(self) -> int: ...

    @abstractmethod
    def app_configs(self) -> dict[str, Any]:
        """The application's configuration, as given (Kafka's ``appConfigs()``)."""

    def commit(self) -> None:
        """Request a commit; engines commit after every batch anyway, so this is a hint."""


class Processor(ABC, Generic[K, V]):
    """A record-at-a-time processor. ``init`` gets the context; ``process`` handles one record."""

    def init(self, context: ProcessorContext) -> None:
        self.context = context

    @abstractmethod
    def process(self, record: Record[K, V]) -> None: ...

    def close(self) -> None:
        pass


ProcessorSupplier = Callable[[], Processor]


class FixedKeyRecord(Record[K, V]):
    """The record a ``FixedKeyProcessor`` gets (KIP-820): its key cannot change, so no repartition follows."""

    __slots__ = ()

    def with_key(self, key: Any) -> "Record":
        raise TypeError("a FixedKeyRecord's key cannot change (process_values keeps the key; use process() to "
                        "change it)")

    def with_value(self, value: Any) -> "FixedKeyRecord":
        return FixedKeyRecord(self.key, value, self.timestamp, self.headers)

    def with_timestamp(self, timestamp: int) -> "FixedKeyRecord":
        return FixedKeyRecord(self.key, self.value, timestamp, self.headers)

    def with_headers(self, headers: Any) -> "FixedKeyRecord":
        return FixedKeyRecord(self.key, self.value, self.timestamp, headers)


class FixedKeyProcessorContext:
    """A ``ProcessorContext`` whose ``forward`` takes only ``FixedKeyRecord`` s derived from the input (KIP-820)."""

    def __init__(self, context: ProcessorContext) -> None:
        self._context = context

    def forward(self, record: FixedKeyRecord, child: str | None = None) -> None:
        if not isinstance(record, FixedKeyRecord):
            raise bad_argument("FixedKeyProcessorContext.forward(record)",
                               "a FixedKeyRecord made from the input record with with_value/with_timestamp/"
                               "with_headers", record)
        self._context.forward(Record(record.key, record.value, record.timestamp, record.headers), child)

    def __getattr__(self, name: str) -> Any:
        return _delegate(self, name)


def _delegate(wrapper: Any, name: str) -> Any:
    """A context wrapper's attribute from the context it wraps; none while it has none (pickle asks for
    ``__setstate__`` before restoring ``_context``: a task on Spark is pickled between batches)."""
    context = wrapper.__dict__.get("_context")
    if context is None:
        raise AttributeError(name)
    return getattr(context, name)


class FixedKeyProcessor(ABC, Generic[K, V]):
    """A processor that may change values, timestamps and headers but never the key (``KStream.process_values``)."""

    def init(self, context: FixedKeyProcessorContext) -> None:
        self.context = context

    @abstractmethod
    def process(self, record: FixedKeyRecord[K, V]) -> None: ...

    def close(self) -> None:
        pass


class ValueTransformerWithKey(ABC, Generic[K, V]):
    """Turns a table's value into a new one, seeing its key (``KTable.transform_values``; Kafka's
    ``ValueTransformerWithKey``). ``init`` gets the processor's context without ``forward`` (the key must not change):
    stores connected by name, schedules, metadata. ``transform(read_only_key, value)`` is called for the new value and,
    when a downstream operator needs old values and the result is not materialized, for the old value too — a
    ``None`` value (a delete, a key the table lacks) included."""

    def init(self, context: "ForwardingDisabledProcessorContext") -> None:
        self.context = context

    @abstractmethod
    def transform(self, read_only_key: Any, value: Any) -> Any: ...

    def close(self) -> None:
        pass


ValueTransformerWithKeySupplier = Callable[[], ValueTransformerWithKey]


class ForwardingDisabledProcessorContext:
    """The context a ``ValueTransformerWithKey`` gets: its processor's, whose ``forward`` raises (Kafka's
    ``ForwardingDisabledProcessorContext``). A table's value getter transforms outside any record: then
    ``record_metadata()`` is None, as Kafka's getter clears the record context."""

    def __init__(self, context: ProcessorContext) -> None:
        self._context = context
        self._outside_record = False

    def forward(self, record: Any, child: str | None = None) -> None:
        from streams_on_spark.errors import StreamsException
        raise StreamsException("ProcessorContext#forward() is not supported from this context, as the framework must "
                               "ensure the key is not changed (#forward allows changing the key on messages which "
                               "are sent). Use KStream.process() if you need to change the key.")

    def record_metadata(self) -> RecordMetadata | None:
        return None if self._outside_record else self._context.record_metadata()

    def __getattr__(self, name: str) -> Any:
        return _delegate(self, name)



class TaskId(NamedTuple):
    """A task: one subtopology on one partition; orders like Kafka's and prints as ``0_1``."""

    subtopology: int
    partition: int

    def __str__(self) -> str:
        return f"{self.subtopology}_{self.partition}"

"""IQv2 (KIP-796): ``StateQueryRequest``, the queries, ``StateQueryResult``/``QueryResult``, ``Position``.

Mirrors ``org.apache.kafka.streams.query``. A request names a store and a query; the answer holds one
:class:`QueryResult` per partition queried (a success with the store's answer, or a failure with Kafka's
:class:`FailureReason`) and the :class:`Position` each answer reflects: per input topic partition, the offset of
the last record the task had processed.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Iterable, Mapping, Optional, TypeVar

from streams_on_spark.errors import IllegalStateError, bad_argument, require, require_instance, require_int

R = TypeVar("R")


class FailureReason(enum.Enum):
    """Why a partition could not answer (Kafka's ``FailureReason``)."""

    UNKNOWN_QUERY_TYPE = "UNKNOWN_QUERY_TYPE"
    NOT_ACTIVE = "NOT_ACTIVE"
    NOT_UP_TO_BOUND = "NOT_UP_TO_BOUND"
    NOT_PRESENT = "NOT_PRESENT"
    DOES_NOT_EXIST = "DOES_NOT_EXIST"
    STORE_EXCEPTION = "STORE_EXCEPTION"


class Position:
    """Topic -> partition -> offset: what a store's answer reflects (Kafka's ``Position``)."""

    def __init__(self, position: Optional[Mapping[str, Mapping[int, int]]] = None) -> None:
        self._position: dict[str, dict[int, int]] = {t: dict(p) for t, p in (position or {}).items()}

    @staticmethod
    def empty_position() -> "Position":
        return Position()

    @staticmethod
    def from_map(position: Mapping[str, Mapping[int, int]]) -> "Position":
        return Position(require_instance(position, "position", Mapping))

    def with_component(self, topic: str, partition: int, offset: int) -> "Position":
        """Set ``topic``'s ``partition`` to ``offset`` (in place, as Kafka's) and return this position."""
        self._position.setdefault(topic, {})[partition] = offset
        return self

    def merge(self, other: "Position") -> "Position":
        """A new position with, per topic partition, the larger offset of the two."""
        out = self.copy()
        for topic, partitions in other._position.items():
            mine = out._position.setdefault(topic, {})
            for partition, offset in partitions.items():
                mine[partition] = max(offset, mine.get(partition, offset))
        return out

    def copy(self) -> "Position":
        return Position(self._position)

    def get_topics(self) -> set[str]:
        return set(self._position)

    def get_partition_positions(self, topic: str) -> dict[int, int]:
        return dict(self._position.get(topic, {}))

    def is_empty(self) -> bool:
        return not self._position

    def reaches(self, bound: "Position", partition: Optional[int]) -> bool:
        """Whether the offsets ``bound`` sets for ``partition`` (of any topic) are reached here (Kafka's
        ``StoreQueryUtils.isPermitted``: a store partition is held only to its own partition's bounds)."""
        return all(self._position.get(topic, {}).get(partition, -1) >= partitions[partition]
                   for topic, partitions in bound._position.items() if partition in partitions)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and other._position == self._position

    __hash__ = None  # type: ignore[assignment]   # mutable, as Kafka's ("not suitable as a hash key")

    def __repr__(self) -> str:
        return f"Position{{position={self._position}}}"


@dataclass(frozen=True)
class PositionBound:
    """How fresh an answer must be: unbounded, or at least at a :class:`Position` (Kafka's ``PositionBound``)."""

    position: Optional[Position] = None

    @staticmethod
    def unbounded() -> "PositionBound":
        return PositionBound(None)

    @staticmethod
    def at(position: Position) -> "PositionBound":
        return PositionBound(require_instance(position, "position", Position).copy())

    def is_unbounded(self) -> bool:
        return self.position is None

    def __repr__(self) -> str:
        return "PositionBound{position=unbounded}" if self.position is None else f"PositionBound{{position={self.position}}}"


class ResultOrder(enum.Enum):
    ANY = "ANY"
    ASCENDING = "ASCENDING"
    DESCENDING = "DESCENDING"


class Query(Generic[R]):
    """A query a store may know how to run (Kafka's ``Query<R>``)."""


@dataclass(frozen=True)
class KeyQuery(Query[R]):
    """The value of one key (a timestamped store answers the plain value, as Kafka's since KIP-992)."""

    key: Any
    skip_cache_: bool = False

    @classmethod
    def with_key(cls, key: Any) -> Any:
        return cls(require(key, "key"))

    def skip_cache(self) -> Any:
        """Read past the record cache (what the task last flushed)."""
        return replace(self, skip_cache_=True)

    def get_key(self) -> Any:
        return self.key

    def is_skip_cache(self) -> bool:
        return self.skip_cache_


@dataclass(frozen=True)
class TimestampedKeyQuery(KeyQuery):
    """The ``ValueAndTimestamp`` of one key of a timestamped key-value store."""


@dataclass(frozen=True)
class RangeQuery(Query[R]):
    """The entries with keys in ``[lower, upper]`` (None = open), in ``result_order``."""

    lower: Any = None
    upper: Any = None
    order: ResultOrder = ResultOrder.ANY

    @classmethod
    def with_range(cls, lower: Any, upper: Any) -> Any:
        return cls(lower, upper)

    @classmethod
    def with_upper_bound(cls, upper: Any) -> Any:
        return cls(None, require(upper, "upper"))

    @classmethod
    def with_lower_bound(cls, lower: Any) -> Any:
        return cls(require(lower, "lower"), None)

    @classmethod
    def with_no_bounds(cls) -> Any:
        return cls()

    def with_descending_keys(self) -> Any:
        return replace(self, order=ResultOrder.DESCENDING)

    def with_ascending_keys(self) -> Any:
        return replace(self, order=ResultOrder.ASCENDING)

    def result_order(self) -> ResultOrder:
        return self.order

    def get_lower_bound(self) -> Optional[Any]:
        return self.lower

    def get_upper_bound(self) -> Optional[Any]:
        return self.upper


@dataclass(frozen=True)
class TimestampedRangeQuery(RangeQuery):
    """A :class:`RangeQuery` answering ``ValueAndTimestamp`` values (timestamped key-value stores)."""


@dataclass(frozen=True)
class WindowKeyQuery(Query[R]):
    """The windows of one key starting in ``[time_from, time_to]`` (ms), as ``KeyValue(start, value)``."""

    key: Any
    time_from: int
    time_to: int

    @staticmethod
    def with_key_and_window_start_range(key: Any, time_from: int, time_to: int) -> "WindowKeyQuery":
        return WindowKeyQuery(require(key, "key"), require_int(time_from, "timeFrom"), require_int(time_to, "timeTo"))

    def get_key(self) -> Any:
        return self.key


@dataclass(frozen=True)
class WindowRangeQuery(Query[R]):
    """Every key's windows starting in a time range (window stores), or one key's sessions (session stores)."""

    key: Any = None
    time_from: Optional[int] = None
    time_to: Optional[int] = None

    @staticmethod
    def with_key(key: Any) -> "WindowRangeQuery":
        return WindowRangeQuery(key=require(key, "key"))

    @staticmethod
    def with_window_start_range(time_from: int, time_to: int) -> "WindowRangeQuery":
        return WindowRangeQuery(None, require_int(time_from, "timeFrom"), require_int(time_to, "timeTo"))

    def get_key(self) -> Optional[Any]:
        return self.key


@dataclass(frozen=True)
class VersionedKeyQuery(Query[R]):
    """The ``VersionedRecord`` of one key, latest or as of a timestamp (versioned key-value stores)."""

    key: Any
    as_of_timestamp: Optional[int] = None

    @staticmethod
    def with_key(key: Any) -> "VersionedKeyQuery":
        return VersionedKeyQuery(require(key, "key"))

    def as_of(self, as_of_timestamp: int) -> "VersionedKeyQuery":
        return replace(self, as_of_timestamp=require_int(as_of_timestamp, "asOf"))

    def get_key(self) -> Any:
        return self.key


@dataclass(frozen=True)
class StateQueryRequest(Generic[R]):
    """Which store, which query, which partitions, how fresh (Kafka's ``StateQueryRequest``)."""

    store_name: str
    query: Query
    partitions: Optional[frozenset] = None          # None: every partition
    position_bound: PositionBound = field(default_factory=PositionBound.unbounded)
    require_active_: bool = False
    execution_info: bool = False

    @staticmethod
    def in_store(name: str) -> "InStore":
        if not isinstance(name, str) or not name:
            raise bad_argument("name", "a store name", name)
        return InStore(name)

    def with_partitions(self, partitions: Iterable[int]) -> "StateQueryRequest":
        wanted = frozenset(require_int(p, "partition", minimum=0) for p in require(partitions, "partitions"))
        return replace(self, partitions=wanted)

    def with_all_partitions(self) -> "StateQueryRequest":
        return replace(self, partitions=None)

    def with_position_bound(self, position_bound: PositionBound) -> "StateQueryRequest":
        return replace(self, position_bound=require_instance(position_bound, "positionBound", PositionBound))

    def require_active(self) -> "StateQueryRequest":
        """Answer only from active tasks that are running (else ``NOT_ACTIVE``)."""
        return replace(self, require_active_=True)

    def enable_execution_info(self) -> "StateQueryRequest":
        return replace(self, execution_info=True)

    def get_store_name(self) -> str:
        return self.store_name

    def get_query(self) -> Query:
        return self.query

    def is_all_partitions(self) -> bool:
        return self.partitions is None

    def get_partitions(self) -> frozenset:
        if self.partitions is None:
            raise IllegalStateError("Cannot list partitions of an 'all partitions' request")
        return self.partitions

    def get_position_bound(self) -> PositionBound:
        return self.position_bound

    def is_require_active(self) -> bool:
        return self.require_active_

    def execution_info_enabled(self) -> bool:
        return self.execution_info


@dataclass(frozen=True)
class InStore:
    """``StateQueryRequest.in_store(name)``, waiting for its query."""

    name: str

    def with_query(self, query: Query) -> StateQueryRequest:
        return StateQueryRequest(self.name, require_instance(query, "query", Query))


class QueryResult(Generic[R]):
    """One partition's answer: a result, or a failure reason and message; with the position it reflects."""

    def __init__(self, result: Any = None, failure: Optional[FailureReason] = None, message: Optional[str] = None,
                 position: Optional[Position] = None) -> None:
        self._result = result
        self._failure = failure
        self._message = message
        self._position = position
        self._execution_info: list[str] = []

    @staticmethod
    def for_result(result: Any) -> "QueryResult":
        return QueryResult(result)

    @staticmethod
    def for_failure(reason: FailureReason, message: str) -> "QueryResult":
        return QueryResult(failure=reason, message=message)

    @staticmethod
    def for_unknown_query_type(query: Query, store: Any) -> "QueryResult":
        return QueryResult.for_failure(FailureReason.UNKNOWN_QUERY_TYPE,
                                       f"This store ({type(store).__name__}) doesn't know how to execute the given "
                                       f"query ({query}). Contact the store maintainer if you need support for a new "
                                       "query type.")

    @staticmethod
    def not_up_to_bound(current: Position, bound: PositionBound, partition: Optional[int]) -> "QueryResult":
        return QueryResult.for_failure(FailureReason.NOT_UP_TO_BOUND,
                                       f"For store partition {partition}, the current position {current} is not yet "
                                       f"up to the bound {bound}")

    def is_success(self) -> bool:
        return self._failure is None

    def is_failure(self) -> bool:
        return self._failure is not None

    def get_result(self) -> Any:
        if self._failure is not None:
            raise ValueError(f"Cannot get result for failed query. Failure is {self._failure.name}: "
                                    f"{self._message}")
        return self._result

    def get_failure_reason(self) -> FailureReason:
        if self._failure is None:
            raise ValueError(f"Cannot get failure reason, because this query did not fail: {self._result!r}")
        return self._failure

    def get_failure_message(self) -> str:
        if self._failure is None:
            raise ValueError(f"Cannot get failure message, because this query did not fail: {self._result!r}")
        return str(self._message)

    def get_position(self) -> Optional[Position]:
        return self._position

    def set_position(self, position: Position) -> None:
        self._position = position

    def get_execution_info(self) -> list[str]:
        return list(self._execution_info)

    def add_execution_info(self, message: str) -> None:
        self._execution_info.append(message)

    def __repr__(self) -> str:
        if self._failure is not None:
            return (f"FailedQueryResult{{failureReason={self._failure.name}, failure='{self._message}', "
                    f"position={self._position}}}")
        return f"SucceededQueryResult{{result={self._result!r}, position={self._position}}}"


class StateQueryResult(Generic[R]):
    """The answer of every partition queried (and of a global store), Kafka's ``StateQueryResult``."""

    def __init__(self) -> None:
        self._partition_results: dict[int, QueryResult] = {}
        self._global_result: Optional[QueryResult] = None

    def add_result(self, partition: int, result: QueryResult) -> None:
        self._partition_results[partition] = result

    def set_global_result(self, result: QueryResult) -> None:
        self._global_result = result

    def get_partition_results(self) -> dict[int, QueryResult]:
        return dict(self._partition_results)

    def get_global_result(self) -> Optional[QueryResult]:
        return self._global_result

    def get_only_partition_result(self) -> Optional[QueryResult]:
        """The one partition result with a non-None answer (a key query's); ``ValueError`` when several have one.
        A failed partition's result raises, as Kafka's ``getResult()`` does."""
        nonempty = [r for r in self._partition_results.values() if r.get_result() is not None]
        if len(nonempty) > 1:
            raise ValueError(f"The query did not return exactly one partition result: {self._partition_results}")
        return nonempty[0] if nonempty else None

    def get_position(self) -> Position:
        """Every partition's position merged."""
        out = Position()
        for r in self._partition_results.values():
            if r.get_position() is not None:
                out = out.merge(r.get_position())
        return out

    def __repr__(self) -> str:
        return f"StateQueryResult{{partitionResults={self._partition_results}, globalResult={self._global_result}}}"

"""Parameter objects of the DSL (``Consumed``, ``Produced``, ``Grouped``, ``Materialized``, ...).

Frozen dataclasses with keyword constructors plus Kafka-style factories (``as_``/``with_`` because ``as`` and
``with`` are Python keywords) and ``with_*`` copies, so a call site reads like its Kafka Streams twin.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

from streams_on_spark.errors import (
    TopologyException,
    bad_argument,
    require,
    require_callable,
    require_int,
    require_serde,
)
from streams_on_spark.state.stores import check_changelog_config
from streams_on_spark.timestamp_extractors import timestamp_extractor
from streams_on_spark.window import validate_millis

_MAX_NAME = 249
_LEGAL = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def validate_name(name: Optional[str], what: str = "Name") -> Optional[str]:
    """Kafka's ``Named.validate``: legal characters ``[a-zA-Z0-9._-]``, at most 249 of them."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise bad_argument(what, "a str", name)
    if not name:
        raise TopologyException("Name is illegal, it can't be empty")
    if name in (".", ".."):
        raise TopologyException("Name cannot be \".\" or \"..\"")
    if len(name) > _MAX_NAME:
        raise TopologyException(f"Name is illegal, it can't be longer than {_MAX_NAME} characters, name: {name}")
    if not set(name) <= _LEGAL:
        raise TopologyException(f"Name \"{name}\" is illegal, it contains a character other than ASCII "
                                "alphanumerics, '.', '_' and '-'")
    return name


# A sink's partitioner: a ``StreamPartitioner`` or a callable ``(topic, key, value, num_partitions)`` answering None
# (the default partitioning), a partition, or a set of partitions (KIP-837: empty drops the record, more multicast it)
Partitioner = Callable[[str, Any, Any, int], Any]


def _check_fields(params: Any, serdes: tuple[str, ...] = ("key_serde", "value_serde"),
                  functions: tuple[str, ...] = ()) -> None:
    """A parameter object's serde fields hold serdes and its function fields callables (``None``: the default)."""
    for field in serdes:
        require_serde(getattr(params, field), field)
    for field in functions:
        require_callable(getattr(params, field), field, optional=True)


@dataclass(frozen=True)
class Named:
    """A processor name (``Named.as_("x")``)."""

    name: Optional[str] = None

    def __post_init__(self) -> None:
        validate_name(self.name)

    @staticmethod
    def as_(name: str) -> "Named":
        return Named(require(name, "name"))

    def with_name(self, name: str) -> "Named":
        return Named(name)


@dataclass(frozen=True)
class Consumed:
    """How a source reads a topic: serdes, timestamp extractor and source name."""

    key_serde: Any = None
    value_serde: Any = None
    name: Optional[str] = None
    timestamp_extractor: Any = None   # see streams_on_spark.timestamp_extractors; None: the config's default

    def __post_init__(self) -> None:
        validate_name(self.name)
        _check_fields(self)
        object.__setattr__(self, "timestamp_extractor", timestamp_extractor(self.timestamp_extractor,
                                                                            "timestamp_extractor"))

    @staticmethod
    def with_(key_serde: Any, value_serde: Any) -> "Consumed":
        return Consumed(key_serde=key_serde, value_serde=value_serde)

    @staticmethod
    def as_(name: str) -> "Consumed":
        return Consumed(name=name)

    def with_key_serde(self, serde: Any) -> "Consumed":
        return replace(self, key_serde=serde)

    def with_value_serde(self, serde: Any) -> "Consumed":
        return replace(self, value_serde=serde)

    def with_name(self, name: str) -> "Consumed":
        return replace(self, name=name)

    def with_timestamp_extractor(self, extractor: Any) -> "Consumed":
        """Kafka's class name, a ``TimestampExtractor`` class or instance, or a function (record, partition_time)."""
        return replace(self, timestamp_extractor=extractor)


@dataclass(frozen=True)
class Produced:
    """How a sink writes a topic: serdes, name and partitioner (a ``StreamPartitioner`` or a callable
    ``(topic, key, value, num_partitions)`` answering None, a partition or a set of them)."""

    key_serde: Any = None
    value_serde: Any = None
    name: Optional[str] = None
    partitioner: Optional[Partitioner] = None

    def __post_init__(self) -> None:
        validate_name(self.name)
        _check_fields(self, functions=("partitioner",))

    @staticmethod
    def with_(key_serde: Any, value_serde: Any) -> "Produced":
        return Produced(key_serde=key_serde, value_serde=value_serde)

    @staticmethod
    def as_(name: str) -> "Produced":
        return Produced(name=name)

    @staticmethod
    def stream_partitioner(partitioner: Partitioner) -> "Produced":
        return Produced(partitioner=partitioner)

    def with_key_serde(self, serde: Any) -> "Produced":
        return replace(self, key_serde=serde)

    def with_value_serde(self, serde: Any) -> "Produced":
        return replace(self, value_serde=serde)

    def with_name(self, name: str) -> "Produced":
        return replace(self, name=name)

    def with_stream_partitioner(self, partitioner: Partitioner) -> "Produced":
        return replace(self, partitioner=partitioner)


@dataclass(frozen=True)
class Grouped:
    """Grouping: the repartition topic's name prefix and the serdes used to write it."""

    name: Optional[str] = None
    key_serde: Any = None
    value_serde: Any = None

    def __post_init__(self) -> None:
        validate_name(self.name)
        _check_fields(self)

    @staticmethod
    def as_(name: str) -> "Grouped":
        return Grouped(name=name)

    @staticmethod
    def with_(key_serde: Any, value_serde: Any, name: Optional[str] = None) -> "Grouped":
        return Grouped(name=name, key_serde=key_serde, value_serde=value_serde)

    @staticmethod
    def key_serde_(serde: Any) -> "Grouped":
        return Grouped(key_serde=serde)

    @staticmethod
    def value_serde_(serde: Any) -> "Grouped":
        return Grouped(value_serde=serde)

    def with_name(self, name: str) -> "Grouped":
        return replace(self, name=name)

    def with_key_serde(self, serde: Any) -> "Grouped":
        return replace(self, key_serde=serde)

    def with_value_serde(self, serde: Any) -> "Grouped":
        return replace(self, value_serde=serde)


@dataclass(frozen=True)
class Materialized:
    """A store: its name (also the default repartition prefix), serdes, retention (window and session stores),
    logging and caching flags.

    - ``with_caching_disabled()``: the store has no record cache, so its operator forwards every update (Kafka's
      default is the cache: the last update per key at each commit); on every engine and in the batch fast paths.
    - ``with_retention(duration)``: how long a window or session store keeps windows (default: what the windows need,
      size + grace); checked against the windows as Kafka checks it. Kafka ignores it for key-value stores; so does
      this library.
    - ``with_logging_disabled()`` / ``with_logging_enabled()``: Kafka's changelog topic. There is none here (a store's
      changes go to the engine's own changelog: Spark's checkpoint), so logging only decides what Kafka's naming rules
      see (``ensure.explicit.internal.resource.naming``: no ``-changelog`` name for an unlogged store); changelog topic
      configs have no topic to apply to and are refused (see docs/state-and-checkpoints.md).
    """

    name: Optional[str] = None
    key_serde: Any = None
    value_serde: Any = None
    logging_enabled: bool = True
    caching_enabled: bool = True
    store_supplier: Any = None
    #: window/session store retention in ms (None: the windows' size + grace)
    retention_ms: Optional[int] = None

    def __post_init__(self) -> None:
        validate_name(self.name, "store name")
        _check_fields(self)
        require_int(self.retention_ms, "retention_ms", minimum=0, optional=True)

    @staticmethod
    def as_(name_or_supplier: Any) -> "Materialized":
        """A store name, or a store supplier (``Stores.in_memory_key_value_store(name)``, ...): a headers-aware one
        (``Stores.persistent_timestamped_key_value_store_with_headers(name)``, ...) gives the DSL's store in the
        headers-aware format whatever ``dsl.store.format`` (KIP-1271), one without headers the format without them."""
        what, supplier = "storeName or supplier", name_or_supplier
        if isinstance(require(supplier, what), str):
            return Materialized(name=supplier)
        if not (isinstance(getattr(supplier, "name", None), str) and callable(getattr(supplier, "get", None))):
            raise bad_argument(what, "a str or a store supplier (Stores.in_memory_key_value_store(...))", supplier)
        return Materialized(name=supplier.name, store_supplier=supplier)

    @staticmethod
    def with_(key_serde: Any, value_serde: Any) -> "Materialized":
        return Materialized(key_serde=key_serde, value_serde=value_serde)

    def with_key_serde(self, serde: Any) -> "Materialized":
        return replace(self, key_serde=serde)

    def with_value_serde(self, serde: Any) -> "Materialized":
        return replace(self, value_serde=serde)

    def with_logging_disabled(self) -> "Materialized":
        return replace(self, logging_enabled=False)

    def with_logging_enabled(self, config: Optional[dict] = None) -> "Materialized":
        """Logging on (the default). Kafka's ``config`` is the changelog topic's configuration; there is no changelog
        topic here, so a non-empty one is refused rather than ignored."""
        check_changelog_config(config, "with_logging_enabled")
        return replace(self, logging_enabled=True)

    def with_caching_disabled(self) -> "Materialized":
        return replace(self, caching_enabled=False)

    def with_caching_enabled(self) -> "Materialized":
        return replace(self, caching_enabled=True)

    def with_retention(self, retention: Any) -> "Materialized":
        """Keep windows this long (ms or ``timedelta``) in a window or session store; at least what the windows need
        (checked when the aggregation is built, with Kafka's text)."""
        retention_ms = validate_millis(retention, "retention")
        if retention_ms < 0:
            raise ValueError("Retention must not be negative.")
        return replace(self, retention_ms=retention_ms)


class _FactoryOrCopy:
    """A setter that makes a new object when called on the class (Kafka's static ``Repartitioned.numberOfPartitions``)
    and a copy when called on an instance (``withNumberOfPartitions``): ``Repartitioned.with_(k, v)
    .with_number_of_partitions(4)`` keeps its serdes, as a Kafka user's chain does."""

    def __init__(self, field: str) -> None:
        self.field = field

    def __get__(self, obj: Any, cls: type) -> Callable[[Any], Any]:
        def setter(value: Any) -> Any:
            return cls(**{self.field: value}) if obj is None else replace(obj, **{self.field: value})
        return setter


@dataclass(frozen=True)
class Repartitioned:
    """An explicit repartition: topic name prefix, partition count, serdes and partitioner."""

    name: Optional[str] = None
    number_of_partitions: Optional[int] = None
    key_serde: Any = None
    value_serde: Any = None
    partitioner: Optional[Partitioner] = None

    def __post_init__(self) -> None:
        validate_name(self.name)
        require_int(self.number_of_partitions, "number_of_partitions", minimum=1, optional=True)
        _check_fields(self, functions=("partitioner",))

    @staticmethod
    def as_(name: str) -> "Repartitioned":
        return Repartitioned(name=name)

    @staticmethod
    def with_(key_serde: Any, value_serde: Any) -> "Repartitioned":
        return Repartitioned(key_serde=key_serde, value_serde=value_serde)

    with_number_of_partitions = _FactoryOrCopy("number_of_partitions")

    @staticmethod
    def stream_partitioner(partitioner: Partitioner) -> "Repartitioned":
        return Repartitioned(partitioner=partitioner)

    def with_name(self, name: str) -> "Repartitioned":
        return replace(self, name=name)

    def with_key_serde(self, serde: Any) -> "Repartitioned":
        return replace(self, key_serde=serde)

    def with_value_serde(self, serde: Any) -> "Repartitioned":
        return replace(self, value_serde=serde)

    def with_stream_partitioner(self, partitioner: Partitioner) -> "Repartitioned":
        return replace(self, partitioner=partitioner)


@dataclass(frozen=True)
class Branched:
    """One branch of ``split()``: its name suffix and an optional function or consumer of the branch stream."""

    name: Optional[str] = None
    chain: Optional[Callable[[Any], Any]] = None
    is_consumer: bool = False

    def __post_init__(self) -> None:
        validate_name(self.name)
        require_callable(self.chain, "chain", optional=True)

    @staticmethod
    def as_(name: str) -> "Branched":
        return Branched(name=require(name, "name"))

    @staticmethod
    def with_function(chain: Callable[[Any], Any], name: Optional[str] = None) -> "Branched":
        """``chain(stream) -> stream``; the returned stream is what the result map holds (None leaves it out)."""
        return Branched(name=name, chain=require(chain, "chain function"))

    @staticmethod
    def with_consumer(chain: Callable[[Any], None], name: Optional[str] = None) -> "Branched":
        """``chain(stream)``; the branch is left out of the result map."""
        return Branched(name=name, chain=require(chain, "chain consumer"), is_consumer=True)


@dataclass(frozen=True)
class StreamJoined:
    """A stream-stream join's serdes, processor-name prefix (``name``) and store-name prefix (``store_name``)."""

    key_serde: Any = None
    value_serde: Any = None
    other_value_serde: Any = None
    name: Optional[str] = None
    store_name: Optional[str] = None
    logging_enabled: bool = True

    def __post_init__(self) -> None:
        validate_name(self.name)
        validate_name(self.store_name, "store name")
        _check_fields(self, ("key_serde", "value_serde", "other_value_serde"))

    @staticmethod
    def with_(key_serde: Any, value_serde: Any, other_value_serde: Any) -> "StreamJoined":
        return StreamJoined(key_serde=key_serde, value_serde=value_serde, other_value_serde=other_value_serde)

    @staticmethod
    def as_(store_name: str) -> "StreamJoined":
        return StreamJoined(store_name=store_name)

    def with_name(self, name: str) -> "StreamJoined":
        return replace(self, name=name)

    def with_store_name(self, store_name: str) -> "StreamJoined":
        return replace(self, store_name=store_name)

    def with_key_serde(self, serde: Any) -> "StreamJoined":
        return replace(self, key_serde=serde)

    def with_value_serde(self, serde: Any) -> "StreamJoined":
        return replace(self, value_serde=serde)

    def with_other_value_serde(self, serde: Any) -> "StreamJoined":
        return replace(self, other_value_serde=serde)

    def with_logging_disabled(self) -> "StreamJoined":
        return replace(self, logging_enabled=False)


@dataclass(frozen=True)
class Joined:
    """A stream-table join's serdes and name (also the prefix of its repartition topic)."""

    key_serde: Any = None
    value_serde: Any = None
    other_value_serde: Any = None
    name: Optional[str] = None
    #: KIP-914: how long (ms) stream records wait for out-of-order updates of a versioned table (None: no buffer)
    grace_period_ms: Optional[int] = None

    def __post_init__(self) -> None:
        validate_name(self.name)
        _check_fields(self, ("key_serde", "value_serde", "other_value_serde"))

    @staticmethod
    def with_(key_serde: Any, value_serde: Any, other_value_serde: Any, name: Optional[str] = None) -> "Joined":
        return Joined(key_serde, value_serde, other_value_serde, name)

    @staticmethod
    def as_(name: str) -> "Joined":
        return Joined(name=name)

    def with_name(self, name: str) -> "Joined":
        return replace(self, name=name)

    def with_key_serde(self, serde: Any) -> "Joined":
        return replace(self, key_serde=serde)

    def with_value_serde(self, serde: Any) -> "Joined":
        return replace(self, value_serde=serde)

    def with_other_value_serde(self, serde: Any) -> "Joined":
        return replace(self, other_value_serde=serde)

    def with_grace_period(self, grace_period: Any) -> "Joined":
        """Buffer stream records for ``grace_period`` (ms or ``timedelta``) so a join against a versioned table sees
        table updates arriving out of order within it (KIP-914; the table must be versioned)."""
        grace_ms = validate_millis(grace_period, "gracePeriod")
        if grace_ms < 0:
            raise ValueError("gracePeriod cannot be negative")
        return replace(self, grace_period_ms=grace_ms)
__all__ = ["Named", "Consumed", "Produced", "Grouped", "Materialized", "Repartitioned", "Branched", "StreamJoined", "Joined",
           "validate_name"]


@dataclass(frozen=True)
class TableJoined:
    """A foreign-key table join's name (prefix of its internal topics, stores and processors) and partitioners:
    ``partitioner(topic, key, None, n)`` for this table's keys, ``other_partitioner`` for the foreign keys — set
    them when a table's topic is not partitioned by the default partitioner (Kafka's ``TableJoined``)."""

    partitioner: Optional[Partitioner] = None
    other_partitioner: Optional[Partitioner] = None
    name: Optional[str] = None

    def __post_init__(self) -> None:
        validate_name(self.name)
        _check_fields(self, (), ("partitioner", "other_partitioner"))

    @staticmethod
    def with_(partitioner: Optional[Partitioner],
              other_partitioner: Optional[Partitioner]) -> "TableJoined":
        return TableJoined(partitioner, other_partitioner)

    @staticmethod
    def as_(name: str) -> "TableJoined":
        return TableJoined(name=require(name, "name"))

    def with_partitioner(self, partitioner: Optional[Partitioner]) -> "TableJoined":
        return replace(self, partitioner=partitioner)

    def with_other_partitioner(self, partitioner: Optional[Partitioner]
                               ) -> "TableJoined":
        return replace(self, other_partitioner=partitioner)

    def with_name(self, name: str) -> "TableJoined":
        return replace(self, name=name)


__all__.append("TableJoined")

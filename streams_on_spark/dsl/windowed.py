"""Windowed grouped streams: ``KGroupedStream.windowed_by(...)`` and ``CogroupedKStream.windowed_by(...)``."""
from __future__ import annotations

from abc import ABC
from typing import TYPE_CHECKING, Any, Callable, Optional, Self

from streams_on_spark.errors import require_callable, require_instance
from streams_on_spark.dsl.emit import EmitStrategy, StrategyType
from streams_on_spark.dsl.ktable import KTable, split_named_materialized
from streams_on_spark.dsl.params import Materialized
from streams_on_spark.operators.aggregations import count_adder, count_initializer
from streams_on_spark.operators import windowed as windowed_processors
from streams_on_spark.serde import Serdes
from streams_on_spark.serde.windowed import WindowedSerdes
from streams_on_spark.state.headers_stores import dsl_store_builder
from streams_on_spark.topology.graph import DslSupplier, GracePeriodGraphNode, GraphNode
from streams_on_spark.window import OperatorWindows

if TYPE_CHECKING:  # pragma: no cover
    from streams_on_spark.dsl.grouped import CogroupedKStream, KGroupedStream


# count()'s functions live with the processors; these names stay for task images pickled by earlier versions
_count_init, _count_add = count_initializer, count_adder


def _count_merge(_key: Any, agg1: int, agg2: int) -> int:
    return agg1 + agg2


def _reduce_init() -> None:
    return None


def _reducing(reducer: Callable[[Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    """Kafka's ``aggregatorForReducer``: the first value starts the aggregate."""
    def aggregate(_key: Any, value: Any, agg: Any) -> Any:
        return value if agg is None else reducer(agg, value)
    return aggregate


# cogrouped windowed streams have no emit_strategy: Kafka's CogroupedStreamAggregateBuilder passes onWindowUpdate()
_ON_UPDATE = EmitStrategy.on_window_update()


def _time_windowed_serde(windows: Any, key_serde: Any) -> Any:
    return WindowedSerdes.time_windowed(key_serde, windows.size_ms)


def _sliding_windowed_serde(windows: Any, key_serde: Any) -> Any:
    return WindowedSerdes.time_windowed(key_serde, windows.time_difference_ms)


def _session_windowed_serde(windows: Any, key_serde: Any) -> Any:
    return WindowedSerdes.session_windowed(key_serde)


def _materialize(m: Materialized, default_supplier: Callable[[], Any], builder_factory: Callable[..., Any],
                 key_serde: Any, value_serde: Any, emit_strategy: EmitStrategy, emit_final_cached: bool = False) -> Any:
    """The store builder of a windowed aggregation: ``m``'s supplier (else the default one), logging as ``m`` says,
    and the record cache when ``m`` enables it (the default). Kafka's Sliding/SessionStoreMaterializer leave the
    cache off when results are emitted on window close; its WindowStoreMaterializer (``emit_final_cached``) keeps
    it, and the emit-final processor then reads through it (registering no flush listener)."""
    builder = dsl_store_builder(builder_factory(m.store_supplier or default_supplier(), key_serde, value_serde),
                                m.store_supplier is not None)
    if not m.logging_enabled:
        builder.with_logging_disabled()
    if m.caching_enabled and (emit_final_cached or emit_strategy.type() is StrategyType.ON_WINDOW_UPDATE):
        builder.with_caching_enabled()
    return builder


def _retention(m: Materialized, needed_ms: int, message: Callable[[int], str]) -> int:
    """The store's retention: ``m.with_retention`` else what the windows need; shorter than that is Kafka's
    ``IllegalArgumentException`` (its Window/SlidingWindow/SessionStoreMaterializer, even with a store supplier)."""
    retention_ms = needed_ms if m.retention_ms is None else m.retention_ms
    if needed_ms > retention_ms:
        raise ValueError(message(retention_ms))
    return retention_ms


def window_store_builder(m: Materialized, name: str, windows: Any, key_serde: Any, value_serde: Any,
                         emit_strategy: EmitStrategy = _ON_UPDATE) -> Any:
    """The timestamped window store of a time-windowed aggregation; retention = size + grace (Kafka's default)."""
    size, grace = windows.size_ms, windows.grace_ms
    retention = _retention(m, size + grace, lambda retention: (
        f"The retention period of the window store {name} must be no smaller than its window size plus the grace "
        f"period. Got size=[{size}], grace=[{grace}], retention=[{retention}]"))
    return _window_store(m, name, retention, size, key_serde, value_serde, emit_strategy, emit_final_cached=True)


def sliding_store_builder(m: Materialized, name: str, windows: Any, key_serde: Any, value_serde: Any,
                          emit_strategy: EmitStrategy = _ON_UPDATE) -> Any:
    """The window store of a sliding-window aggregation; retention = 2 x difference + grace (Kafka's default)."""
    diff, grace = windows.time_difference_ms, windows.grace_ms
    retention = _retention(m, 2 * diff + grace, lambda retention: (
        f"The retention period of the window store {name} must be no smaller than 2 * time difference plus the "
        f"grace period. Got time difference=[{diff}], grace=[{grace}], retention=[{retention}]"))
    return _window_store(m, name, retention, diff, key_serde, value_serde, emit_strategy)


def _window_store(m: Materialized, name: str, retention_ms: int, size_ms: int, key_serde: Any, value_serde: Any,
                  emit_strategy: EmitStrategy, emit_final_cached: bool = False) -> Any:
    """A timestamped window store over ``m``'s supplier, else Kafka's default DSL one (RocksDB semantics; the
    time-ordered store when emitting on window close)."""
    from streams_on_spark.state.factory import Stores
    from streams_on_spark.state.window_stores import PersistentWindowBytesStoreSupplier
    time_first = emit_strategy.type() is StrategyType.ON_WINDOW_CLOSE
    return _materialize(m, lambda: PersistentWindowBytesStoreSupplier(name, retention_ms, size_ms, False, time_first),
                        Stores.timestamped_window_store_builder, key_serde, value_serde, emit_strategy,
                        emit_final_cached)


def session_store_builder(m: Materialized, name: str, windows: Any, key_serde: Any, value_serde: Any,
                          emit_strategy: EmitStrategy = _ON_UPDATE) -> Any:
    """The session store of a session-windowed aggregation; retention = gap + grace (Kafka's default). With
    ON_WINDOW_CLOSE the default store is Kafka's time-ordered one (``TimeOrderedSessionBytesStoreSupplier``)."""
    from streams_on_spark.state.factory import Stores
    from streams_on_spark.state.session_stores import TimeOrderedSessionBytesStoreSupplier
    gap, grace = windows.inactivity_gap_ms, windows.grace_ms
    retention = _retention(m, gap + grace, lambda retention: (
        f"The retention period of the session store {name} must be no smaller than the session inactivity gap plus "
        f"the grace period. Got gap=[{gap}], grace=[{grace}], retention=[{retention}]"))
    time_ordered = emit_strategy.type() is StrategyType.ON_WINDOW_CLOSE
    return _materialize(m, lambda: TimeOrderedSessionBytesStoreSupplier(name, retention) if time_ordered
                        else Stores.persistent_session_store(name, retention),
                        Stores.session_store_builder, key_serde, value_serde, emit_strategy)


class _WindowedAggregations(ABC):
    """Shared by time, sliding and session windowed streams: emit strategy, naming, repartition, store and table."""

    store_builder: Callable[..., Any]
    processor: Callable[..., Any]
    windowed_serde: Callable[[Any, Any], Any]   # (windows, key serde) -> the serde of the Windowed result keys

    def __init__(self, grouped: "KGroupedStream", windows: Any) -> None:
        self._grouped = grouped
        self._builder = grouped._builder
        self.windows = windows
        self._emit_strategy = _ON_UPDATE

    def emit_strategy(self, emit_strategy: EmitStrategy) -> Self:
        """When the aggregations built next forward results (KIP-825): every update (``on_window_update()``, the
        default) or each window once when it closes (``on_window_close()``). Node and store names do not change."""
        self._emit_strategy = require_instance(emit_strategy, "emit_strategy", EmitStrategy)
        return self

    def _build(self, named: Any, materialized: Any, prefix: str, value_serde_default: Any,
               *functions: Callable[..., Any], burn_for_count: bool = False) -> KTable:
        """The aggregation node: this kind's processor over ``functions`` (initializer, aggregator[, merger])."""
        named, m = split_named_materialized(named, materialized)
        if burn_for_count and m is not None and m.name is None:
            self._builder.new_store_name("KSTREAM-AGGREGATE-")  # Kafka's compatibility burn for count()
        m = m or Materialized()
        store = self._builder.materialized_store_name(m, prefix)
        key_serde = m.key_serde if m.key_serde is not None else self._grouped.key_serde
        value_serde = m.value_serde if m.value_serde is not None else value_serde_default
        name = self._builder.name_or_generate(None if named is None else named.name, prefix)
        parent, source_nodes = self._grouped._repartition_if_required(store, m.name is not None)
        supplier = DslSupplier(type(self).processor, store, self._emit_strategy, *functions,
                               windows=OperatorWindows.aggregation(self.windows))
        node = GracePeriodGraphNode(name, supplier, type(self).store_builder(m, store, self.windows, key_serde,
                                                                             value_serde, self._emit_strategy))
        self._builder.add_graph_node(parent, node)
        windowed_key_serde = None if key_serde is None else type(self).windowed_serde(self.windows, key_serde)
        return KTable(self._builder, name, windowed_key_serde, value_serde, source_nodes, m.name, supplier, node)


class TimeWindowedKStream(_WindowedAggregations):
    """A grouped stream cut into tumbling or hopping windows (``TimeWindows``)."""

    store_builder = staticmethod(window_store_builder)
    processor = windowed_processors.KStreamWindowAggregate
    windowed_serde = staticmethod(_time_windowed_serde)

    def count(self, named: Any = None, materialized: Any = None) -> KTable:
        """Records per key and window (null keys are dropped)."""
        return self._build(named, materialized, "KSTREAM-AGGREGATE-", Serdes.Long(), count_initializer, count_adder,
                           burn_for_count=True)

    def reduce(self, reducer: Callable[[Any, Any], Any], named: Any = None, materialized: Any = None) -> KTable:
        require_callable(reducer, "reducer")
        return self._build(named, materialized, "KSTREAM-REDUCE-", self._grouped.value_serde, _reduce_init,
                           _reducing(reducer))

    def aggregate(self, initializer: Callable[[], Any], aggregator: Callable[[Any, Any, Any], Any],
                  named: Any = None, materialized: Any = None) -> KTable:
        require_callable(initializer, "initializer")
        require_callable(aggregator, "aggregator")
        return self._build(named, materialized, "KSTREAM-AGGREGATE-", None, initializer, aggregator)


class SlidingWindowedKStream(TimeWindowedKStream):
    """A grouped stream aggregated over sliding windows (``SlidingWindows``): one window per distinct content.

    A ``TimeWindowedKStream``, as Kafka's ``SlidingWindowedKStreamImpl``: the same operations on another store
    and processor.
    """

    store_builder = staticmethod(sliding_store_builder)
    processor = windowed_processors.KStreamSlidingWindowAggregate
    windowed_serde = staticmethod(_sliding_windowed_serde)


class SessionWindowedKStream(_WindowedAggregations):
    """A grouped stream cut into sessions (``SessionWindows``): activity separated by an inactivity gap."""

    store_builder = staticmethod(session_store_builder)
    processor = windowed_processors.KStreamSessionWindowAggregate
    windowed_serde = staticmethod(_session_windowed_serde)

    def count(self, named: Any = None, materialized: Any = None) -> KTable:
        return self._build(named, materialized, "KSTREAM-AGGREGATE-", Serdes.Long(), count_initializer, count_adder,
                           _count_merge, burn_for_count=True)

    def reduce(self, reducer: Callable[[Any, Any], Any], named: Any = None, materialized: Any = None) -> KTable:
        require_callable(reducer, "reducer")
        return self._build(named, materialized, "KSTREAM-REDUCE-", self._grouped.value_serde, _reduce_init,
                           _reducing(reducer), lambda k, a, b: b if a is None else a if b is None else reducer(a, b))

    def aggregate(self, initializer: Callable[[], Any], aggregator: Callable[[Any, Any, Any], Any],
                  merger: Callable[[Any, Any, Any], Any], named: Any = None, materialized: Any = None) -> KTable:
        """``merger(key, agg1, agg2)`` combines two sessions' aggregates when a record bridges them."""
        require_callable(initializer, "initializer")
        require_callable(aggregator, "aggregator")
        require_callable(merger, "sessionMerger")
        return self._build(named, materialized, "KSTREAM-AGGREGATE-", None, initializer, aggregator, merger)


class _WindowedCogroupedKStream:
    """A cogroup cut into windows: every input folds into the same store, each with its own processor of this
    kind (which keeps its own stream time, as Kafka's)."""

    store_builder: Callable[..., Any]
    processor: Callable[..., Any]
    windowed_serde: Callable[[Any, Any], Any]

    def __init__(self, cogrouped: "CogroupedKStream", windows: Any) -> None:
        self._cogrouped, self.windows = cogrouped, windows

    def _aggregate(self, initializer: Callable[[], Any], named: Any, materialized: Any,
                   *merger: Callable[[Any, Any, Any], Any]) -> KTable:
        require_callable(initializer, "initializer")
        kind, windows = type(self), self.windows
        return self._cogrouped._build(
            initializer, named, materialized,
            lambda store, aggregator, name: DslSupplier(kind.processor, store, _ON_UPDATE, initializer, aggregator,
                                                        *merger, name, windows=OperatorWindows.aggregation(windows)),
            lambda m, store, key_serde, value_serde: kind.store_builder(m, store, windows, key_serde, value_serde),
            lambda key_serde: kind.windowed_serde(windows, key_serde), windows)


class TimeWindowedCogroupedKStream(_WindowedCogroupedKStream):
    """A cogroup cut into tumbling or hopping windows."""

    store_builder = staticmethod(window_store_builder)
    processor = windowed_processors.KStreamWindowAggregate
    windowed_serde = staticmethod(_time_windowed_serde)

    def aggregate(self, initializer: Callable[[], Any], named: Any = None, materialized: Any = None) -> KTable:
        return self._aggregate(initializer, named, materialized)


class SlidingWindowedCogroupedKStream(TimeWindowedCogroupedKStream):
    """A cogroup over sliding windows."""

    store_builder = staticmethod(sliding_store_builder)
    processor = windowed_processors.KStreamSlidingWindowAggregate
    windowed_serde = staticmethod(_sliding_windowed_serde)


class SessionWindowedCogroupedKStream(_WindowedCogroupedKStream):
    """A cogroup cut into sessions; ``merger`` combines the aggregates of merged sessions."""

    store_builder = staticmethod(session_store_builder)
    processor = windowed_processors.KStreamSessionWindowAggregate
    windowed_serde = staticmethod(_session_windowed_serde)

    def aggregate(self, initializer: Callable[[], Any], merger: Callable[[Any, Any, Any], Any], named: Any = None,
                  materialized: Any = None) -> KTable:
        require_callable(merger, "sessionMerger")
        return self._aggregate(initializer, named, materialized, merger)


def windowed_by(owner: Any, windows: Any, time_kind: Any, sliding_kind: Any, session_kind: Any) -> Any:
    """``windowed_by`` of grouped and cogrouped streams: pick the windowed kind for the window specification."""
    from streams_on_spark.dsl.windows import SessionWindows, SlidingWindows, TimeWindows
    for spec, kind in ((TimeWindows, time_kind), (SlidingWindows, sliding_kind), (SessionWindows, session_kind)):
        if isinstance(windows, spec):
            return kind(owner, windows)
    raise ValueError(f"windowed_by takes TimeWindows, SlidingWindows or SessionWindows, got {type(windows).__name__}")


def _extract_grace_period(node: GraphNode) -> Optional[int]:
    """Kafka's ``GraphGraceSearchUtil.extractGracePeriod``: a session window closes ``gap`` after its end, so
    its close delay is grace + inactivity gap; time and sliding windows close ``grace`` after their end."""
    from streams_on_spark.dsl.windows import SessionWindows
    if not isinstance(node, GracePeriodGraphNode):
        return None
    windows = node.windows.spec
    if isinstance(windows, SessionWindows):
        return windows.grace_ms + windows.inactivity_gap_ms
    return windows.grace_ms


def find_window_grace(node: GraphNode, chain: str = "") -> int:
    """Kafka's ``findAndVerifyWindowGrace``: the close delay of the windowed aggregation upstream of ``node``
    (for ``until_window_closes``); every parent must be windowed and the largest delay wins."""
    from streams_on_spark.errors import TopologyException
    grace = _extract_grace_period(node)
    if grace is not None:
        return grace
    chain = node.name if not chain else f"{node.name}->{chain}"
    if not node.parents:
        raise TopologyException(f"Window close time is only defined for windowed computations. Got [{chain}].")
    return max(find_window_grace(parent, chain) for parent in node.parents)

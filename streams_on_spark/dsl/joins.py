"""Joins in the DSL: naming, repartitioning of re-keyed sides, copartitioning, stores and value getters.

Follows Kafka's ``KStreamImpl``/``KStreamImplJoin``/``KTableImpl`` join paths so topologies, names and
``describe()`` match Kafka Streams.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from streams_on_spark.dsl.params import Joined, Named, StreamJoined
from streams_on_spark.errors import TopologyException
from streams_on_spark.operators.aggregations import (
    KStreamAggregate,
    KStreamCogroupAggregate,
    KStreamReduce,
    KTableAggregate,
    KTableReduce,
)
from streams_on_spark.operators.stateless import PassThrough
from streams_on_spark.operators.tables import (
    KTableFilter,
    KTableMapValues,
    KTableSource,
    KTableTransformValues,
    TableValueGetter,
    new_value_transformer,
)
from streams_on_spark.operators import joins as join_processors
from streams_on_spark.operators.windowed import KTableSuppress
from streams_on_spark.state.join_buffer import TimeOrderedJoinBufferBuilder
from streams_on_spark.state.outer_join_store import OuterJoinStoreBuilder
from streams_on_spark.state.stores import ValueAndTimestamp
from streams_on_spark.state.versioned import VersionedKeyValueStore
from streams_on_spark.topology.graph import (
    DslSupplier,
    GraphNode,
    InternalStreamsBuilder,
    ProcessorGraphNode,
    TableSupplier,
)
from streams_on_spark.window import OperatorWindows

if TYPE_CHECKING:  # pragma: no cover
    from streams_on_spark.dsl.kstream import KStream
    from streams_on_spark.dsl.ktable import KTable


# ------------------------------------------------------------------ value getters (picklable, built per task)
class StoreGetter:
    """Reads a table's current value from its store; from a versioned store also as of a timestamp."""

    def __init__(self, store_name: str) -> None:
        self.store_names = [store_name]

    def __call__(self, context: Any) -> TableValueGetter:
        store = context.get_state_store(self.store_names[0])
        return TableValueGetter(store.get, isinstance(store, VersionedKeyValueStore))


class ComputedGetter:
    """An unmaterialized ``filter``/``map_values`` table: the parent's value with the operator applied. Versioned as
    its parent is (Kafka's ``KTableFilterValueGetter``/``KTableMapValuesValueGetter``): a read as of a timestamp
    applies the operator to the parent's value as of that timestamp."""

    def __init__(self, parent: Any, supplier: TableSupplier) -> None:
        self.parent, self.supplier = parent, supplier
        self.store_names = parent.store_names

    def __call__(self, context: Any) -> TableValueGetter:
        parent = self.parent(context)
        compute = self.supplier.factory(*self.supplier.args, **self.supplier.keywords())._compute

        def get(key: Any, as_of: Optional[int] = None) -> Optional[ValueAndTimestamp]:
            vat = parent(key) if as_of is None else parent(key, as_of)
            return None if vat is None else ValueAndTimestamp.make(compute(key, vat.value), vat.timestamp)
        return TableValueGetter(get, parent.versioned)


class TransformedGetter:
    """An unmaterialized ``transform_values`` table (Kafka's ``KTableTransformValuesGetter``): the parent's value, a
    missing one as None, through a transformer of its own (made from the supplier, initialized with the reading
    processor's context, so it sees that processor's stores); its timestamp is the parent value's (-1 when missing).
    Not versioned: a read as of a timestamp is not supported, as in Kafka."""

    def __init__(self, parent: Any, transformer_supplier: Callable[[], Any]) -> None:
        self.parent, self.transformer_supplier = parent, transformer_supplier
        self.store_names = parent.store_names

    def __call__(self, context: Any) -> TableValueGetter:
        parent = self.parent(context)
        transformer, transformer_context = new_value_transformer(self.transformer_supplier, context)
        transform = transformer.transform

        def get(key: Any) -> Optional[ValueAndTimestamp]:
            vat = parent(key)
            transformer_context._outside_record = True   # Kafka's getter runs with an empty record context
            try:
                value = transform(key, None if vat is None else vat.value)
            finally:
                transformer_context._outside_record = False
            return ValueAndTimestamp.make(value, -1 if vat is None else vat.timestamp)
        return TableValueGetter(get)


class JoinedGetter:
    """An unmaterialized table-table join (Kafka's ``KTableKTableJoinMerger.view()``, i.e. the join-this side's
    getter): joins both tables' current values on the fly, for ``mode`` inner, left or outer."""

    def __init__(self, this: Any, other: Any, joiner: Callable[[Any, Any], Any], mode: str) -> None:
        self.this, self.other, self.joiner, self.mode = this, other, joiner, mode
        self.store_names = list(dict.fromkeys(this.store_names + other.store_names))

    def __call__(self, context: Any) -> TableValueGetter:
        this, other, joiner, mode = self.this(context), self.other(context), self.joiner, self.mode
        unknown = -1

        def get(key: Any) -> Optional[ValueAndTimestamp]:
            vat1 = this(key)
            if mode == "outer":
                vat2 = other(key)
                value1, value2 = ValueAndTimestamp.get_value_or_null(vat1), ValueAndTimestamp.get_value_or_null(vat2)
                new = joiner(value1, value2) if value1 is not None or value2 is not None else None
                return ValueAndTimestamp.make(new, max(unknown if vat1 is None else vat1.timestamp,
                                                       unknown if vat2 is None else vat2.timestamp))
            if vat1 is None:
                return None
            vat2 = other(key)
            if vat2 is None:
                return None if mode == "inner" else ValueAndTimestamp.make(joiner(vat1.value, None), vat1.timestamp)
            return ValueAndTimestamp.make(joiner(vat1.value, vat2.value), max(vat1.timestamp, vat2.timestamp))
        return TableValueGetter(get)


class SuppressedGetter:
    """A suppressed table (Kafka's ``KTableSuppressProcessorSupplier.view()``): a buffered key shows its prior
    value (what downstream last saw); any other key shows the parent's value."""

    def __init__(self, buffer_name: str, parent: Any) -> None:
        self.buffer_name, self.parent = buffer_name, parent
        self.store_names = [buffer_name] + parent.store_names

    def __call__(self, context: Any) -> TableValueGetter:
        parent = self.parent(context)
        buffer = context.get_state_store(self.buffer_name)

        def get(key: Any) -> Optional[ValueAndTimestamp]:
            buffered, prior = buffer.prior_value_for_buffered(key)
            return prior if buffered else parent(key)
        return TableValueGetter(get)


_AGGREGATIONS = (KStreamAggregate, KStreamReduce, KTableAggregate, KTableReduce, KStreamCogroupAggregate)


def value_getter(table: "KTable") -> Any:
    """The getter a join reads ``table`` through; a source table is materialized for it, as in Kafka."""
    supplier = table._supplier
    factory = supplier.factory
    if not isinstance(supplier, TableSupplier):
        return None
    store_name = supplier.store_name
    if factory is KTableSource:
        supplier.queryable_name = store_name
        return StoreGetter(store_name)
    if factory in (KTableFilter, KTableMapValues):
        if store_name is not None:
            return StoreGetter(store_name)
        if table._parent is None:
            raise TopologyException(f"table {table.name} has no parent to compute its values from")
        return ComputedGetter(value_getter(table._parent), supplier)
    if factory is KTableTransformValues:
        if store_name is not None:
            return StoreGetter(store_name)
        transformer_supplier = supplier.factory(*supplier.args, **supplier.keywords()).transformer_supplier
        return TransformedGetter(value_getter(table._parent), transformer_supplier)   # type: ignore[arg-type]
    if factory in _AGGREGATIONS:
        return StoreGetter(store_name)
    if factory is join_processors.KTableJoinMerge:
        return StoreGetter(store_name) if store_name is not None else table._joined_getter
    if factory is KTableSuppress:
        return SuppressedGetter(store_name, value_getter(table._parent))
    store = table._join_store or table.queryable_store_name
    if store is not None:
        return StoreGetter(store)
    raise TopologyException(f"table {table.name} cannot be joined: materialize it (Materialized.as_(...)) first")


# ------------------------------------------------------------------ stream-stream
class StreamStreamJoinNode(GraphNode):
    """Writes both join processors, the merge and the stores in Kafka's order."""

    def __init__(self, merge_name: str, this: tuple, other: tuple, this_store: Any, other_store: Any,
                 outer_store: Any) -> None:
        super().__init__(merge_name)
        self.this, self.other = this, other          # (join processor name, supplier, windowed processor name)
        self.this_store, self.other_store, self.outer_store = this_store, other_store, outer_store

    def write(self, builder: Any) -> None:
        (this_name, this_supplier, this_windowed), (other_name, other_supplier, other_windowed) = self.this, self.other
        builder.add_processor(this_name, this_supplier, [this_windowed], this_supplier.windows)
        builder.add_processor(other_name, other_supplier, [other_windowed], other_supplier.windows)
        builder.add_processor(self.name, DslSupplier(PassThrough), [this_name, other_name])
        builder.add_state_store(self.this_store, [this_windowed, other_name])
        builder.add_state_store(self.other_store, [other_windowed, this_name])
        if self.outer_store is not None:
            builder.add_state_store(self.outer_store, [this_name, other_name])


def _join_store(name: str, windows: Any, key_serde: Any, value_serde: Any, logging: bool) -> Any:
    from streams_on_spark.state.factory import Stores
    supplier = Stores.persistent_window_store(name, windows.before_ms + windows.after_ms + windows.grace_ms,
                                              windows.before_ms + windows.after_ms, True)
    builder = Stores.window_store_builder(supplier, key_serde, value_serde)
    builder.follows_dsl_store_format = True
    return builder if logging else builder.with_logging_disabled()


def _repartition_for_join(stream: "KStream", name: str, key_serde: Any, value_serde: Any,
                          named_by_user: bool = True) -> "KStream":
    """Kafka's ``repartitionForJoin``: a generated-name repartition is reused by later joins of the same stream."""
    from streams_on_spark.dsl.kstream import KStream
    builder = stream._builder
    key_serde = key_serde if key_serde is not None else stream.key_serde
    value_serde = value_serde if value_serde is not None else stream.value_serde
    node = builder.create_repartition(name, key_serde, value_serde, named_by_user=named_by_user)
    existing = stream._join_repartition
    if existing is None or stream.name != name:
        existing = node
        stream._join_repartition = existing
        builder.add_graph_node(stream._node, existing)
    return KStream(builder, node.name, key_serde, value_serde, {node.name}, False, existing)


def stream_stream_join(this: "KStream", other: "KStream", joiner: Callable[..., Any], windows: Any,
                       stream_joined: Optional[StreamJoined], left_outer: bool, right_outer: bool) -> "KStream":
    from streams_on_spark.dsl.kstream import KStream
    from streams_on_spark.dsl.windows import JoinWindows
    if not isinstance(other, KStream):
        raise ValueError(f"a windowed join needs another KStream, got {type(other).__name__}")
    if not isinstance(windows, JoinWindows):
        raise ValueError(f"a stream-stream join needs JoinWindows, got {type(windows).__name__}")
    sj = stream_joined or StreamJoined()
    builder: InternalStreamsBuilder = this._builder
    if this._repartition_required:
        this = _repartition_for_join(this, sj.name + "-left" if sj.name else this.name, sj.key_serde, sj.value_serde,
                                     sj.name is not None)
    if other._repartition_required:
        other = _repartition_for_join(other, sj.name + "-right" if sj.name else other.name, sj.key_serde,
                                      sj.other_value_serde, sj.name is not None)
    builder.copartition_groups.append(sorted(this._source_nodes | other._source_nodes))
    this_suffix = "-outer-this-join" if right_outer else "-this-join"
    other_suffix = "-outer-other-join" if left_outer else "-other-join"
    this_windowed = builder.suffixed_or_generate(sj.name, "-this-windowed", "KSTREAM-WINDOWED-")
    other_windowed = builder.suffixed_or_generate(sj.name, "-other-windowed", "KSTREAM-WINDOWED-")
    this_generated = builder.new_processor_name("KSTREAM-OUTERTHIS-" if right_outer else "KSTREAM-JOINTHIS-")
    other_generated = builder.new_processor_name("KSTREAM-OUTEROTHER-" if left_outer else "KSTREAM-JOINOTHER-")
    this_name = sj.name + this_suffix if sj.name else this_generated
    other_name = sj.name + other_suffix if sj.name else other_generated
    merge_name = builder.suffixed_or_generate(sj.name, "-merge", "KSTREAM-MERGE-")
    key_serde = sj.key_serde if sj.key_serde is not None else this.key_serde
    this_value = sj.value_serde if sj.value_serde is not None else this.value_serde
    other_value = sj.other_value_serde if sj.other_value_serde is not None else other.value_serde
    this_store_name = (sj.store_name + this_suffix if sj.store_name else this_generated) + "-store"
    other_store_name = (sj.store_name + other_suffix if sj.store_name else other_generated) + "-store"
    this_store = _join_store(this_store_name, windows, key_serde, this_value, sj.logging_enabled)
    other_store = _join_store(other_store_name, windows, key_serde, other_value, sj.logging_enabled)
    outer_store = None
    if left_outer and windows.enable_spurious_result_fix:  # Kafka writes the shared store only with the fix
        suffix = "-outer-shared-join" if right_outer else "-left-shared-join"
        if sj.store_name:
            outer_name = sj.store_name + suffix
        else:
            prefix = "KSTREAM-OUTERTHIS-" if right_outer else "KSTREAM-JOINTHIS-"
            outer_name = "KSTREAM-OUTERSHARED-" + this_generated[len(prefix):]
        outer_store = OuterJoinStoreBuilder(outer_name + "-store", key_serde, this_value, other_value)
    if not sj.store_name:   # KIP-1111: Kafka records each generated join store (the shared one for any left join)
        generated = [this_store_name, other_store_name]
        if left_outer:
            this_prefix = "KSTREAM-OUTERTHIS-" if right_outer else "KSTREAM-JOINTHIS-"
            generated.append("KSTREAM-OUTERSHARED-" + this_generated[len(this_prefix):] + "-store")
        for store_name in generated:
            builder.add_implicit_names(store_name, sj.logging_enabled)
    this_windowed_node = ProcessorGraphNode(this_windowed,
                                            DslSupplier(join_processors.KStreamJoinWindow, this_store_name))
    builder.add_graph_node(this._node, this_windowed_node)
    other_windowed_node = ProcessorGraphNode(other_windowed,
                                             DslSupplier(join_processors.KStreamJoinWindow, other_store_name))
    builder.add_graph_node(other._node, other_windowed_node)
    outer_name_opt = None if outer_store is None else outer_store.name
    join_windows = OperatorWindows.join(windows)   # each side reads its own bounds from them
    this_supplier = DslSupplier(join_processors.KStreamKStreamJoin, this_generated, other_store_name, joiner, left_outer,
                                True, outer_name_opt, windows=join_windows)
    other_supplier = DslSupplier(join_processors.KStreamKStreamJoin, this_generated, this_store_name, joiner,
                                 right_outer, False, outer_name_opt, windows=join_windows)
    node = StreamStreamJoinNode(merge_name, (this_name, this_supplier, this_windowed),
                                (other_name, other_supplier, other_windowed), this_store, other_store, outer_store)
    node.relaxed_null_keys = left_outer or right_outer
    builder.add_graph_node([this._node, other._node], node)
    return KStream(builder, merge_name, key_serde, None, this._source_nodes | other._source_nodes, False, node)


# ------------------------------------------------------------------ stream-table and stream-global-table
def stream_table_join(stream: "KStream", table: "KTable", joiner: Callable[..., Any], joined: Optional[Joined],
                      left: bool) -> "KStream":
    from streams_on_spark.dsl.kstream import KStream
    from streams_on_spark.dsl.ktable import is_versioned
    jn = joined or Joined()
    builder = stream._builder
    if stream._repartition_required:
        # Joined's serdes, else the stream's: Kafka's repartitionForJoin(name, joined.keySerde(), joined.valueSerde())
        stream = _repartition_for_join(stream, jn.name if jn.name else stream.name, jn.key_serde, jn.value_serde,
                                       jn.name is not None)
    builder.copartition_groups.append(sorted(stream._source_nodes | table._source_nodes))
    name = builder.name_or_generate(jn.name, "KSTREAM-LEFTJOIN-" if left else "KSTREAM-JOIN-")
    getter = value_getter(table)
    buffer = None
    if jn.grace_period_ms is not None:   # KIP-914: stream records wait in "<name>-Buffer" for a versioned table
        # a versioned table or an unmaterialized view of one (its getter reads as of a timestamp)
        if not is_versioned(table):
            raise ValueError("KTable must be versioned to use a grace period in a stream table join.")
        buffer = TimeOrderedJoinBufferBuilder(f"{name}-Buffer", jn.key_serde if jn.key_serde is not None
                                              else stream.key_serde, jn.value_serde if jn.value_serde is not None
                                              else stream.value_serde, jn.grace_period_ms)
    node = ProcessorGraphNode(name, DslSupplier(join_processors.KStreamKTableJoin, getter, joiner, left, None,
                                                None if buffer is None else buffer.name),
                              buffer, store_names=getter.store_names)
    node.relaxed_null_keys = left
    builder.add_graph_node(stream._node, node)
    key_serde = jn.key_serde if jn.key_serde is not None else stream.key_serde
    return KStream(builder, name, key_serde, None, stream._source_nodes | table._source_nodes, False, node)


def stream_global_join(stream: "KStream", table: Any, key_mapper: Callable[[Any, Any], Any],
                       joiner: Callable[..., Any], named: Optional[Named], left: bool) -> "KStream":
    from streams_on_spark.dsl.kstream import KStream
    builder = stream._builder
    # Kafka's globalTableJoin names inner and left joins alike
    name = builder.name_or_generate(None if named is None else named.name, "KSTREAM-LEFTJOIN-")
    getter = StoreGetter(table.queryable_store_name)
    node = ProcessorGraphNode(name, DslSupplier(join_processors.KStreamKTableJoin, getter, joiner, left, key_mapper))
    builder.add_graph_node(stream._node, node)
    return KStream(builder, name, stream.key_serde, None, stream._source_nodes, stream._repartition_required, node)


# ------------------------------------------------------------------ table-table
class TableTableJoinNode(GraphNode):
    def __init__(self, merge_name: str, this: tuple, other: tuple, merge_supplier: Any, store_builder: Any) -> None:
        super().__init__(merge_name)
        self.this, self.other = this, other  # (processor name, supplier, parent name, store names of the other)
        self.merge_supplier, self.store_builder = merge_supplier, store_builder

    def write(self, builder: Any) -> None:
        this_name, this_supplier, this_parent, this_stores = self.this
        other_name, other_supplier, other_parent, other_stores = self.other
        builder.add_processor(this_name, this_supplier, [this_parent])
        builder.add_processor(other_name, other_supplier, [other_parent])
        builder.add_processor(self.name, self.merge_supplier, [this_name, other_name])
        builder.connect_processor_and_state_stores(this_name, this_stores)
        builder.connect_processor_and_state_stores(other_name, other_stores)
        if self.store_builder is not None:
            builder.add_state_store(self.store_builder, [self.name])


def table_table_join(this: "KTable", other: "KTable", joiner: Callable[[Any, Any], Any], named: Any,
                     materialized: Any, left_outer: bool, right_outer: bool) -> "KTable":
    from streams_on_spark.dsl.ktable import KTable, is_versioned, materialize, split_named_materialized
    named, m = split_named_materialized(named, materialized)
    builder = this._builder
    store = None
    if m is not None:  # Kafka's MaterializedInternal: an unnamed store still gets (and burns) a generated name
        store = builder.materialized_store_name(m, "KTABLE-MERGE-")
    merge_name = builder.name_or_generate(None if named is None else named.name, "KTABLE-MERGE-")
    builder.copartition_groups.append(sorted(this._source_nodes | other._source_nodes))
    if left_outer:
        this.enable_sending_old_values(True)
    if right_outer:
        other.enable_sending_old_values(True)
    mode_this, mode_other = ("inner", "inner") if not left_outer else ("left", "right") if not right_outer \
        else ("outer", "outer")
    this_getter, other_getter = value_getter(this), value_getter(other)
    this_supplier = DslSupplier(join_processors.KTableKTableJoin, other_getter, joiner, mode_this, is_versioned(this))
    other_supplier = DslSupplier(join_processors.KTableKTableJoin, this_getter, _reversed(joiner), mode_other,
                                 is_versioned(other))
    this_name = builder.suffixed_or_generate(None if named is None else named.name, "-join-this",
                                             "KTABLE-JOINTHIS-")
    other_name = builder.suffixed_or_generate(None if named is None else named.name, "-join-other",
                                              "KTABLE-JOINOTHER-")
    key_serde = this.key_serde if m is None or m.key_serde is None else m.key_serde
    value_serde = None if m is None else m.value_serde
    store_builder = None if m is None else materialize(m, store, key_serde, value_serde)
    merge_supplier = TableSupplier(join_processors.KTableJoinMerge, store_name=store)
    node = TableTableJoinNode(merge_name, (this_name, this_supplier, this.name, other_getter.store_names),
                              (other_name, other_supplier, other.name, this_getter.store_names),
                              merge_supplier, store_builder)
    builder.add_graph_node([this._node, other._node], node)
    table = KTable(builder, merge_name, key_serde, value_serde, this._source_nodes | other._source_nodes,
                   store, merge_supplier, node)
    table._old_value_inputs = ((this, other), (this_supplier, other_supplier))
    table._joined_getter = JoinedGetter(this_getter, other_getter, joiner, mode_this)
    return table


class _reversed:
    """Kafka's ``reverseJoiner``: the other side's processor calls ``joiner(its value, this value)``."""

    def __init__(self, joiner: Callable[[Any, Any], Any]) -> None:
        self.joiner = joiner

    def __call__(self, a: Any, b: Any) -> Any:
        return self.joiner(b, a)

"""``KTable``: a changelog stream viewed as the latest value per key."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from streams_on_spark.dsl.abstract_stream import AbstractStream
from streams_on_spark.errors import TopologyException, bad_argument, require_callable, require_instance
from streams_on_spark.dsl.params import Grouped, Materialized, Named
from streams_on_spark.operators.tables import (
    KTableFilter,
    KTableMapValues,
    KTableRepartitionMap,
    KTableSource,
    KTableToStream,
    KTableTransformValues,
)
from streams_on_spark.operators.windowed import KTableSuppress
from streams_on_spark.state.suppression_buffer import SuppressionBufferBuilder
from streams_on_spark.state.factory import Stores
from streams_on_spark.state.headers_stores import dsl_store_builder
from streams_on_spark.state.stores import TimestampedKeyValueStoreBuilder
from streams_on_spark.state.versioned import VersionedBytesStoreSupplier, VersionedKeyValueStoreBuilder
from streams_on_spark.topology.graph import (
    DslSupplier,
    GraphNode,
    InternalStreamsBuilder,
    ProcessorGraphNode,
    TableSupplier,
)
from streams_on_spark.window import OperatorWindows

if TYPE_CHECKING:  # pragma: no cover
    from streams_on_spark.dsl.grouped import KGroupedTable
    from streams_on_spark.dsl.kstream import KStream


def materialize(m: Materialized, store_name: str, key_serde: Any,
                value_serde: Any) -> TimestampedKeyValueStoreBuilder | VersionedKeyValueStoreBuilder:
    """The timestamped key-value store a DSL operator keeps for ``m`` (Kafka's ``KeyValueStoreMaterializer``): a
    versioned one for a versioned supplier, a headers-aware one for a headers-aware supplier (KIP-1271, whatever
    ``dsl.store.format``), the format ``dsl.store.format`` says over the default supplier."""
    supplier = m.store_supplier if m.store_supplier is not None else Stores.in_memory_key_value_store(store_name)
    builder: Any
    if isinstance(supplier, VersionedBytesStoreSupplier):   # a versioned table (KIP-889): never cached, as Kafka's
        builder = Stores.versioned_key_value_store_builder(supplier, key_serde, value_serde)
    else:
        builder = dsl_store_builder(Stores.timestamped_key_value_store_builder(supplier, key_serde, value_serde),
                                    m.store_supplier is not None)
    if not m.logging_enabled:
        builder.with_logging_disabled()
    if m.caching_enabled:
        builder.with_caching_enabled()
    return builder


# table operators whose unmaterialized result is a view of their parent (the last argument is their store, or None)
_VIEWS = (KTableFilter, KTableMapValues, KTableTransformValues)


def is_versioned(table: "KTable") -> bool:
    """Whether ``table``'s output is versioned (Kafka's ``isVersionedOrVersionedUpstream``): it is materialized in a
    versioned store, or it is an unmaterialized ``filter``/``map_values`` of a versioned table. Joins and
    ``group_by`` downstream then skip out-of-order updates (KIP-914). An unmaterialized ``transform_values`` too
    (Kafka's output-versioned flag is inherited when no ``Materialized`` is given)."""
    if isinstance(getattr(table._node, "store_builder", None), VersionedKeyValueStoreBuilder):
        return True
    supplier = table._supplier
    if supplier.factory in _VIEWS and supplier.store_name is None:
        return table._parent is not None and is_versioned(table._parent)
    return False


class VersionedSemanticsSupplier(TableSupplier):
    """A table operator's supplier whose input is a versioned table: its processors get ``versioned_semantics``
    (Kafka's ``setUseVersionedSemantics``; a filter then forwards deletes it would otherwise skip)."""

    def __call__(self) -> Any:
        processor = super().__call__()
        processor.versioned_semantics = True
        return processor


def split_named_materialized(named: Any, materialized: Any) -> tuple[Optional[Named], Optional[Materialized]]:
    """Accept ``(named, materialized)`` in either order, as Kafka's overloads do."""
    if isinstance(named, Materialized) and (materialized is None or isinstance(materialized, Named)):
        named, materialized = materialized, named
    if named is not None and not isinstance(named, Named):
        raise ValueError(f"named must be a Named, got {type(named).__name__}")
    if materialized is not None and not isinstance(materialized, Materialized):
        raise ValueError(f"materialized must be a Materialized, got {type(materialized).__name__}")
    return named, materialized


_UNSET: Any = object()   # foreign_key_extractor not given (None is a null extractor: an error)


class KTable(AbstractStream):
    """The latest value per key; updates flow downstream as changes."""

    def __init__(self, builder: InternalStreamsBuilder, name: str, key_serde: Any, value_serde: Any,
                 source_nodes: set[str], queryable_store_name: Optional[str], supplier: DslSupplier,
                 graph_node: GraphNode) -> None:
        super().__init__(builder, name, key_serde, value_serde, source_nodes, graph_node)
        self.queryable_store_name = queryable_store_name
        self._supplier = supplier
        self._parent: Optional[KTable] = None
        # what sending old values also needs (Kafka's join/pass-through suppliers): tables that must send them
        # (forced) and upstream processors that must forward them
        self._old_value_inputs: tuple[tuple["KTable", ...], tuple[DslSupplier, ...]] = ((), ())
        # how a join reads this table when it has no queryable store: a cogroup's store, a table-table join's getter
        self._join_store: Optional[str] = None
        self._joined_getter: Any = None

    def _name_or_generate(self, named: Optional[Named], prefix: str) -> str:
        return self._builder.name_or_generate(None if named is None else named.name, prefix)

    def _table_op(self, prefix: str, named: Any, materialized: Any, factory: Callable[..., Any], args: tuple,
                  keep_value_serde: bool) -> "KTable":
        named, m = split_named_materialized(named, materialized)
        store_builder = None
        queryable = None
        key_serde, value_serde = self.key_serde, (self.value_serde if keep_value_serde else None)
        if m is not None:
            if m.name is None:
                self._builder.new_store_name(prefix)
            key_serde = m.key_serde if m.key_serde is not None else self.key_serde
            value_serde = m.value_serde if m.value_serde is not None else value_serde
            queryable = m.name
            if queryable is not None:
                store_builder = materialize(m, queryable, key_serde, value_serde)
        name = self._name_or_generate(named, prefix)
        supplier = (VersionedSemanticsSupplier if is_versioned(self) else TableSupplier)(factory, *args,
                                                                                          store_name=queryable)
        node = ProcessorGraphNode(name, supplier, store_builder)
        self._builder.add_graph_node(self._node, node)
        table = KTable(self._builder, name, key_serde, value_serde, self._source_nodes, queryable, supplier, node)
        table._parent = self
        return table

    def filter(self, predicate: Callable[[Any, Any], bool], named: Any = None, materialized: Any = None) -> "KTable":
        """Keep entries where ``predicate(key, value)``; others become deletes downstream."""
        require_callable(predicate, "predicate")
        return self._filter(named, materialized, predicate, False)

    def filter_not(self, predicate: Callable[[Any, Any], bool], named: Any = None,
                   materialized: Any = None) -> "KTable":
        """Drop entries where ``predicate(key, value)``; they become deletes downstream."""
        require_callable(predicate, "predicate")
        return self._filter(named, materialized, predicate, True)

    def _filter(self, named: Any, materialized: Any, predicate: Callable[[Any, Any], bool],
                filter_not: bool) -> "KTable":
        table = self._table_op("KTABLE-FILTER-", named, materialized, KTableFilter,
                               (predicate, filter_not), True)
        # Kafka's KTableFilter: when the parent can send old values without being materialized for it, ask for
        # them, so that a key filtered out before and after sends no tombstone
        if self.enable_sending_old_values(False):
            table._supplier.send_old_values = True
        return table

    def map_values(self, mapper: Callable[..., Any], named: Any = None, materialized: Any = None, *,
                   with_key: bool = False) -> "KTable":
        """New value per key: ``mapper(value)`` (or ``mapper(key, value)`` with ``with_key=True``)."""
        require_callable(mapper, "mapper")
        return self._table_op("KTABLE-MAPVALUES-", named, materialized, KTableMapValues,
                              (mapper, with_key), False)

    def transform_values(self, transformer_supplier: Callable[[], Any], *store_names: str, named: Any = None,
                         materialized: Any = None) -> "KTable":
        """New value per key from a ``ValueTransformerWithKey``: ``transformer_supplier()`` makes one per task (and one
        per value getter of a join reading this table), ``init(context)`` gets the context without ``forward`` and
        the ``store_names`` connected to it, ``transform(read_only_key, value)`` is called for every update, a delete
        (``None``) included. With ``materialized`` (a store name) the result is stored, and old values downstream
        come from the store; without, old values (when a downstream operator needs them) go through the transformer
        too, after the new one. Kafka's ``KTable#transformValues``; its overloads' order works too:
        ``transform_values(supplier, materialized, named, *store_names)``."""
        require_callable(transformer_supplier, "transformerSupplier")
        while store_names and isinstance(store_names[0], (Materialized, Named)):   # Kafka's positional overloads
            given, store_names = store_names[0], store_names[1:]
            if isinstance(given, Materialized) and materialized is None:
                materialized = given
            elif isinstance(given, Named) and named is None:
                named = given
            else:
                raise bad_argument("transform_values' arguments", "one Materialized and one Named at most", given)
        for store_name in store_names:
            if not isinstance(store_name, str):
                raise bad_argument("stateStoreNames", "store names (str)", store_name)
        require_instance(named, "named", Named, optional=True)
        require_instance(materialized, "materialized", Materialized, optional=True)
        key_serde, value_serde, queryable, store_builder = self.key_serde, None, None, None
        if materialized is not None:   # Kafka's MaterializedInternal(materialized): an unnamed one is no store
            key_serde = materialized.key_serde if materialized.key_serde is not None else self.key_serde
            value_serde = materialized.value_serde
            queryable = materialized.name
            if queryable is not None:
                store_builder = materialize(materialized, queryable, key_serde, value_serde)
        name = self._name_or_generate(named, "KTABLE-TRANSFORMVALUES-")
        supplier = TableSupplier(KTableTransformValues, transformer_supplier, store_name=queryable)
        node = ProcessorGraphNode(name, supplier, store_builder, store_names)
        self._builder.add_graph_node(self._node, node)
        table = KTable(self._builder, name, key_serde, value_serde, self._source_nodes, queryable, supplier, node)
        table._parent = self
        return table

    def suppress(self, suppressed: Any) -> "KTable":
        """Hold updates back: ``Suppressed.until_window_closes(...)`` emits one final result per window once
        stream time reaches its close time (end + grace, + the inactivity gap for sessions); ``until_time_limit``
        emits a key's latest update after a wait."""
        from streams_on_spark.dsl.suppressed import Suppressed
        from streams_on_spark.dsl.windowed import find_window_grace
        if not isinstance(suppressed, Suppressed):
            raise ValueError(f"suppress takes a Suppressed, got {type(suppressed).__name__}")
        if isinstance(getattr(self._node, "store_builder", None), VersionedKeyValueStoreBuilder):
            raise TopologyException("suppress() is only supported for non-versioned KTables")
        if is_versioned(self):   # Kafka refuses it when it builds
            self._builder.build_failures.append("suppress() is only supported for non-versioned KTables (note that "
                                                "version semantics might be inherited from upstream)")
        name = suppressed.name if suppressed.name is not None else self._builder.new_processor_name("KTABLE-SUPPRESS-")
        grace = find_window_grace(self._node) if suppressed.final_results else None
        store = f"{suppressed.name}-store" if suppressed.name is not None else self._builder.new_store_name(
            "KTABLE-SUPPRESS-")
        if suppressed.name is None:   # KIP-1111: Kafka records only the buffer's changelog
            self._builder.add_implicit_names(store, suppressed.buffer_config.logging_enabled, changelog_only=True)
        supplier = TableSupplier(KTableSuppress, store_name=store,
                                 windows=OperatorWindows.suppression(suppressed, grace))
        self.enable_sending_old_values(True)  # Kafka's supplier: the buffer keeps old values for its view
        buffer = SuppressionBufferBuilder(store, self.key_serde, self.value_serde,
                                          suppressed.buffer_config.logging_enabled)
        node = ProcessorGraphNode(name, supplier, buffer)
        self._builder.add_graph_node(self._node, node)
        table = KTable(self._builder, name, self.key_serde, self.value_serde, {self.name}, None, supplier, node)
        table._parent = self
        return table

    def join(self, other: "KTable", joiner: Any, named: Any = None, materialized: Any = None, *rest: Any,
             foreign_key_extractor: Any = _UNSET, with_key: bool = False) -> "KTable":
        """Inner table-table join on the key: ``join(other, joiner, named=None, materialized=None)`` calls
        ``joiner(value, other_value)`` while both sides have a value.

        On a foreign key (KIP-213): ``join(other, foreign_key_extractor, joiner, table_joined=None,
        materialized=None)`` (or ``join(other, joiner, foreign_key_extractor=...)``) joins each row with the row of
        ``other`` whose key is ``foreign_key_extractor(value)`` (``(key, value)`` with ``with_key=True``); a row
        with a null foreign key is dropped.
        """
        return self._join_dispatch(other, joiner, named, materialized, rest, foreign_key_extractor, with_key, False)

    def left_join(self, other: "KTable", joiner: Any, named: Any = None, materialized: Any = None, *rest: Any,
                  foreign_key_extractor: Any = _UNSET, with_key: bool = False) -> "KTable":
        """Like ``join``, but every row of this table has a result (``joiner(value, None)`` with no match), also on
        a foreign key (a null foreign key included)."""
        return self._join_dispatch(other, joiner, named, materialized, rest, foreign_key_extractor, with_key, True)

    def _join_dispatch(self, other: Any, first: Any, second: Any, third: Any, rest: tuple, extractor: Any,
                       with_key: bool, left: bool) -> "KTable":
        """A foreign-key join when a second function follows the first (or ``foreign_key_extractor=`` is given),
        else the key join."""
        from streams_on_spark.dsl.foreign_key_join import foreign_key_join
        if extractor is not _UNSET:
            return foreign_key_join(self, other, extractor, first, (second, third, *rest), left, with_key)
        if callable(second) and not isinstance(second, (Named, Materialized)):
            return foreign_key_join(self, other, first, second, (third, *rest), left, with_key)
        if rest or with_key:
            raise bad_argument("a key join's arguments", "(other, joiner, named=None, materialized=None) — a "
                               "foreign-key join takes (other, foreign_key_extractor, joiner, ...)",
                               rest[0] if rest else "with_key=True")
        return self._table_join(other, first, second, third, left, False)

    def outer_join(self, other: "KTable", joiner: Callable[[Any, Any], Any], named: Any = None,
                   materialized: Any = None) -> "KTable":
        return self._table_join(other, joiner, named, materialized, True, True)

    def _table_join(self, other: Any, joiner: Any, named: Any, materialized: Any, left: bool,
                    right: bool) -> "KTable":
        from streams_on_spark.dsl.joins import table_table_join
        if not isinstance(other, KTable):
            raise ValueError(f"a table join needs another KTable, got {type(other).__name__}")
        if joiner is None or not callable(joiner):
            raise ValueError("joiner can't be null")
        return table_table_join(self, other, joiner, named, materialized, left, right)

    def to_stream(self, mapper_or_named: Any = None, named: Optional[Named] = None) -> "KStream":
        """The stream of updates (deletes arrive as ``None`` values): ``to_stream()``, ``to_stream(named)``, or
        ``to_stream(mapper, named=None)`` re-keying it with ``mapper(key, value)`` (Kafka's ``selectKey`` after)."""
        from streams_on_spark.dsl.kstream import KStream
        mapper = None
        if isinstance(mapper_or_named, Named):
            if named is not None:
                raise bad_argument("named", "given once: to_stream(named) or to_stream(mapper, named)", named)
            named = mapper_or_named
        elif callable(mapper_or_named):
            mapper = mapper_or_named
        elif mapper_or_named is not None:
            raise bad_argument("to_stream's first argument", "a mapper(key, value) -> new key or a Named",
                               mapper_or_named)
        require_instance(named, "named", Named, optional=True)
        name = self._name_or_generate(named, "KTABLE-TOSTREAM-")
        node = ProcessorGraphNode(name, DslSupplier(KTableToStream))
        self._builder.add_graph_node(self._node, node)
        stream = KStream(self._builder, name, self.key_serde, self.value_serde, self._source_nodes, False, node)
        return stream if mapper is None else stream.select_key(mapper)

    def group_by(self, selector: Callable[[Any, Any], Any], grouped: Optional[Grouped] = None) -> "KGroupedTable":
        """Re-key the table with ``selector(key, value) -> KeyValue`` for an aggregation with a subtractor."""
        from streams_on_spark.dsl.grouped import KGroupedTable
        if selector is None or not callable(selector):
            raise ValueError("selector must be callable")
        g = grouped or Grouped()
        select_name = self._builder.name_or_generate(g.name, "KTABLE-SELECT-")
        node = ProcessorGraphNode(select_name, DslSupplier(KTableRepartitionMap, selector, select_name,
                                                           is_versioned(self)))
        self._builder.add_graph_node(self._node, node)
        self.enable_sending_old_values(force_materialization=True)
        return KGroupedTable(self._builder, select_name, self._source_nodes, g, node)

    def enable_sending_old_values(self, force_materialization: bool) -> bool:
        """Make this table's processor forward old values (materializing a source table if needed)."""
        supplier = self._supplier
        factory = supplier.factory
        if factory is KTableSuppress:  # forwards what it buffered: old values are up to its parent
            return self._parent is not None and self._parent.enable_sending_old_values(force_materialization)
        if factory is KTableSource:
            if not supplier.queryable_name:
                if not force_materialization:
                    return False
                supplier.queryable_name = supplier.store_name
        elif factory in _VIEWS:
            if supplier.store_name is None:
                if self._parent is None or not self._parent.enable_sending_old_values(force_materialization):
                    return False
        tables, suppliers = self._old_value_inputs
        for table in tables:  # Kafka's KTableKTableAbstractJoin: both joined tables, forced
            table.enable_sending_old_values(True)
        for input_supplier in suppliers:
            input_supplier.send_old_values = True
        supplier.send_old_values = True
        return True

"""``KStream``: a record stream, and ``BranchedKStream`` (``split()``)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from streams_on_spark.dsl.abstract_stream import AbstractStream
from streams_on_spark.dsl.params import (
    Branched,
    Grouped,
    Joined,
    Materialized,
    Named,
    Produced,
    Repartitioned,
    StreamJoined,
)
from streams_on_spark.errors import (
    TopologyException,
    bad_argument,
    require,
    require_callable,
    require_instance,
    require_str,
)
from streams_on_spark.operators.stateless import (
    KStreamBranch,
    KStreamFilter,
    KStreamFlatMap,
    KStreamFlatMapValues,
    KStreamMap,
    KStreamMapValues,
    KStreamPeek,
    KStreamProcessValues,
    KStreamSelectKey,
    PassThrough,
)
from streams_on_spark.operators.tables import KTableSource
from streams_on_spark.processor.api import topic_name_extractor
from streams_on_spark.topology.graph import (
    DslSupplier,
    GraphNode,
    InternalStreamsBuilder,
    ProcessorGraphNode,
    StateStoreNode,
    StreamSinkNode,
    TableSourceMaterializingNode,
    TableSupplier,
)

if TYPE_CHECKING:  # pragma: no cover
    from streams_on_spark.dsl.grouped import KGroupedStream
    from streams_on_spark.dsl.ktable import KTable


def _named(named: Optional[Named]) -> Optional[str]:
    """The name of an optional ``Named``."""
    return None if require_instance(named, "named", Named, optional=True) is None else named.name




class ValueJoiner:
    """A user joiner as the processors call it: ``(key, value, other_value)`` (picklable for Spark)."""

    def __init__(self, joiner: Callable[..., Any], with_key: bool) -> None:
        self.joiner, self.with_key = joiner, with_key

    def __call__(self, key: Any, value: Any, other: Any) -> Any:
        return self.joiner(key, value, other) if self.with_key else self.joiner(value, other)


class WindowedStreamPartitioner:
    """Kafka's ``WindowedStreamPartitioner``: a windowed key goes where its base key would, so window results
    land on the partition of the unwindowed key."""

    def __init__(self, windowed_serde: Any) -> None:
        self.serde = windowed_serde

    def __call__(self, topic: str, key: Any, value: Any, num_partitions: int) -> Optional[int]:
        if key is None:
            return None
        from streams_on_spark.partitioner import partition_for_key
        return partition_for_key(self.serde.serialize_base_key(topic, key), num_partitions)


class KStream(AbstractStream):
    """An unbounded stream of records; every method adds one node to the logical graph."""

    def __init__(self, builder: InternalStreamsBuilder, name: str, key_serde: Any, value_serde: Any,
                 source_nodes: set[str], repartition_required: bool, graph_node: GraphNode) -> None:
        super().__init__(builder, name, key_serde, value_serde, source_nodes, graph_node)
        self._repartition_required = repartition_required
        self._join_repartition: Optional[GraphNode] = None   # reused by later joins of this stream (Kafka's)

    # ------------------------------------------------------------------ helpers
    def _processor(self, prefix: str, named: Optional[Named], supplier: Callable[[], Any], *,
                   key_changing: bool = False, value_changing: bool = False) -> ProcessorGraphNode:
        name = self._name_or_generate(_named(named), prefix)
        node = ProcessorGraphNode(name, supplier)
        node.key_changing = key_changing
        node.value_changing = value_changing
        self._builder.add_graph_node(self._node, node)
        return node

    def _name_or_generate(self, name: Optional[str], prefix: str) -> str:
        return self._builder.name_or_generate(name, prefix)

    def _derive(self, node: GraphNode, key_serde: Any, value_serde: Any, repartition_required: bool) -> "KStream":
        return KStream(self._builder, node.name, key_serde, value_serde, self._source_nodes, repartition_required,
                       node)

    # ------------------------------------------------------------------ stateless
    def filter(self, predicate: Callable[[Any, Any], bool], named: Optional[Named] = None) -> "KStream":
        """Keep records for which ``predicate(key, value)`` is true."""
        require_callable(predicate, "predicate")
        node = self._processor("KSTREAM-FILTER-", named, DslSupplier(KStreamFilter, predicate, False))
        return self._derive(node, self.key_serde, self.value_serde, self._repartition_required)

    def filter_not(self, predicate: Callable[[Any, Any], bool], named: Optional[Named] = None) -> "KStream":
        """Drop records for which ``predicate(key, value)`` is true."""
        require_callable(predicate, "predicate")
        node = self._processor("KSTREAM-FILTER-", named, DslSupplier(KStreamFilter, predicate, True))
        return self._derive(node, self.key_serde, self.value_serde, self._repartition_required)

    def select_key(self, mapper: Callable[[Any, Any], Any], named: Optional[Named] = None) -> "KStream":
        """New key ``mapper(key, value)``; marks the stream for repartitioning before stateful operations."""
        require_callable(mapper, "mapper")
        node = self._processor("KSTREAM-KEY-SELECT-", named, DslSupplier(KStreamSelectKey, mapper),
                               key_changing=True)
        return self._derive(node, None, self.value_serde, True)

    def map(self, mapper: Callable[[Any, Any], Any], named: Optional[Named] = None) -> "KStream":
        """``mapper(key, value)`` returns a ``KeyValue`` (or a pair); key-changing."""
        require_callable(mapper, "mapper")
        name = self._name_or_generate(_named(named), "KSTREAM-MAP-")
        node = ProcessorGraphNode(name, DslSupplier(KStreamMap, mapper, name))
        node.key_changing = True
        self._builder.add_graph_node(self._node, node)
        return self._derive(node, None, None, True)

    def map_values(self, mapper: Callable[..., Any], named: Optional[Named] = None, *,
                   with_key: bool = False) -> "KStream":
        """New value ``mapper(value)`` (or ``mapper(key, value)`` with ``with_key=True``); keeps partitioning."""
        require_callable(mapper, "valueMapper")
        node = self._processor("KSTREAM-MAPVALUES-", named, DslSupplier(KStreamMapValues, mapper, with_key),
                               value_changing=True)
        return self._derive(node, self.key_serde, None, self._repartition_required)

    def flat_map(self, mapper: Callable[[Any, Any], Iterable[Any]], named: Optional[Named] = None) -> "KStream":
        """Zero or more ``KeyValue`` per record; key-changing."""
        require_callable(mapper, "mapper")
        name = self._name_or_generate(_named(named), "KSTREAM-FLATMAP-")
        node = ProcessorGraphNode(name, DslSupplier(KStreamFlatMap, mapper, name))
        node.key_changing = True
        self._builder.add_graph_node(self._node, node)
        return self._derive(node, None, None, True)

    def flat_map_values(self, mapper: Callable[..., Iterable[Any]], named: Optional[Named] = None, *,
                        with_key: bool = False) -> "KStream":
        """Zero or more values per record under the same key."""
        require_callable(mapper, "valueMapper")
        node = self._processor("KSTREAM-FLATMAPVALUES-", named,
                               DslSupplier(KStreamFlatMapValues, mapper, with_key), value_changing=True)
        return self._derive(node, self.key_serde, None, self._repartition_required)

    def peek(self, action: Callable[[Any, Any], None], named: Optional[Named] = None) -> "KStream":
        """Call ``action(key, value)`` and pass the record on."""
        require_callable(action, "action")
        node = self._processor("KSTREAM-PEEK-", named, DslSupplier(KStreamPeek, action, True))
        return self._derive(node, self.key_serde, self.value_serde, self._repartition_required)

    def foreach(self, action: Callable[[Any, Any], None], named: Optional[Named] = None) -> None:
        """Terminal: call ``action(key, value)`` for every record."""
        require_callable(action, "action")
        self._processor("KSTREAM-FOREACH-", named, DslSupplier(KStreamPeek, action, False))

    def split(self, named: Optional[Named] = None) -> "BranchedKStream":
        """Route each record to the first matching branch (``branch``/``default_branch``)."""
        return BranchedKStream(self, _named(named))

    def merge(self, other: "KStream", named: Optional[Named] = None) -> "KStream":
        """Interleave two streams; repartition-required if either side is."""
        require_instance(other, "stream", KStream)
        name = self._name_or_generate(_named(named), "KSTREAM-MERGE-")
        node = ProcessorGraphNode(name, DslSupplier(PassThrough))
        node.merge_node = True
        self._builder.add_graph_node([self._node, other._node], node)
        return KStream(self._builder, name, None, None, self._source_nodes | other._source_nodes,
                       self._repartition_required or other._repartition_required, node)

    # ------------------------------------------------------------------ partitioning
    def repartition(self, repartitioned: Optional[Repartitioned] = None) -> "KStream":
        """Always write through a repartition topic (``<name>-repartition``); never optimized away."""
        r = require_instance(repartitioned, "repartitioned", Repartitioned, optional=True) or Repartitioned()
        name = r.name if r.name is not None else self._builder.new_processor_name("KSTREAM-REPARTITION-")
        value_serde = r.value_serde if r.value_serde is not None else self.value_serde
        key_serde = r.key_serde if r.key_serde is not None else self.key_serde
        node = self._builder.create_repartition(name, key_serde, value_serde, r.partitioner,
                                                r.number_of_partitions, optimizable=False,
                                                named_by_user=r.name is not None)
        self._builder.add_graph_node(self._node, node)
        return KStream(self._builder, node.name, key_serde, value_serde, {node.name}, False, node)

    def mark_as_partitioned(self) -> "KStream":
        """KIP-759: declare the stream already partitioned by its key; downstream ops won't repartition.

        Your responsibility: if the key really changed, state splits across partitions.
        """
        return KStream(self._builder, self.name, self.key_serde, self.value_serde, self._source_nodes, False,
                       self._node)

    def group_by_key(self, grouped: Optional[Grouped] = None) -> "KGroupedStream":
        """Group by the current key (repartitions first if the key changed upstream)."""
        from streams_on_spark.dsl.grouped import KGroupedStream
        g = require_instance(grouped, "grouped", Grouped, optional=True) or Grouped.with_(self.key_serde,
                                                                                          self.value_serde)
        return KGroupedStream(self._builder, self.name, self._source_nodes, g, self._repartition_required,
                              self._node)

    def group_by(self, selector: Callable[[Any, Any], Any], grouped: Optional[Grouped] = None) -> "KGroupedStream":
        """Group by ``selector(key, value)``; always repartitions."""
        from streams_on_spark.dsl.grouped import KGroupedStream
        require_callable(selector, "keySelector")
        g = require_instance(grouped, "grouped", Grouped, optional=True) or Grouped.with_(None, self.value_serde)
        name = self._name_or_generate(g.name, "KSTREAM-KEY-SELECT-")
        node = ProcessorGraphNode(name, DslSupplier(KStreamSelectKey, selector))
        node.key_changing = True
        self._builder.add_graph_node(self._node, node)
        return KGroupedStream(self._builder, name, self._source_nodes, g, True, node)

    # ------------------------------------------------------------------ sinks and tables
    def to(self, topic: Any, produced: Optional[Produced] = None) -> None:
        """Write to ``topic``, or to the topic a ``TopicNameExtractor`` (a callable ``(key, value, record_context)
        -> str``) chooses per record; the partition is murmur2 of the serialized key unless a partitioner says
        else."""
        if isinstance(topic, str) or topic is None:
            require_str(topic, "topic")
        else:
            topic_name_extractor(topic)
        pr = require_instance(produced, "produced", Produced, optional=True) or Produced()
        key_serde = pr.key_serde if pr.key_serde is not None else self.key_serde
        partitioner = pr.partitioner
        if partitioner is None and hasattr(key_serde, "serialize_base_key"):
            partitioner = WindowedStreamPartitioner(key_serde)
        pr = Produced(key_serde, pr.value_serde if pr.value_serde is not None else self.value_serde, pr.name,
                      partitioner)
        name = self._name_or_generate(pr.name, "KSTREAM-SINK-")
        self._builder.add_graph_node(self._node, StreamSinkNode(name, topic, pr))

    def to_table(self, named: Optional[Named] = None, materialized: Optional[Materialized] = None) -> "KTable":
        """View the stream as a changelog: the latest value per key (repartitions first if needed)."""
        from streams_on_spark.dsl.ktable import KTable, materialize
        if isinstance(named, Materialized) and materialized is None:
            named, materialized = None, named
        name = self._name_or_generate(_named(named), "KSTREAM-TOTABLE-")
        m = require_instance(materialized, "materialized", Materialized, optional=True) or Materialized()
        store_name = self._builder.materialized_store_name(m, "KSTREAM-TOTABLE-")
        key_serde = m.key_serde if m.key_serde is not None else self.key_serde
        value_serde = m.value_serde if m.value_serde is not None else self.value_serde
        parent, source_nodes = self._node, self._source_nodes
        if self._repartition_required:
            rep = self._builder.create_repartition(name, key_serde, value_serde,
                                                   named_by_user=_named(named) is not None)
            self._builder.add_graph_node(self._node, rep)
            parent, source_nodes = rep, {rep.name}
        store_builder = materialize(m, store_name, key_serde, value_serde)
        supplier = TableSupplier(KTableSource, store_name=store_name, queryable_name=m.name)
        node = TableSourceMaterializingNode(name, supplier, store_builder)
        self._builder.add_graph_node(parent, node)
        return KTable(self._builder, name, key_serde, value_serde, source_nodes, m.name, supplier, node)

    # ------------------------------------------------------------------ joins
    def join(self, other: Any, joiner: Callable[..., Any], windows_or_joined: Any = None,
             stream_joined: Any = None, *, with_key: bool = False) -> "KStream":
        """Inner join: ``join(stream, joiner, JoinWindows, StreamJoined=None)`` (windowed),
        ``join(table, joiner, Joined=None)``, or ``join(global_table, key_mapper, joiner, Named=None)``.

        ``joiner(value, other_value)``; with ``with_key=True``, ``joiner(key, value, other_value)``.
        """
        return self._join(other, joiner, windows_or_joined, stream_joined, with_key, left=False, outer=False)

    def left_join(self, other: Any, joiner: Callable[..., Any], windows_or_joined: Any = None,
                  stream_joined: Any = None, *, with_key: bool = False) -> "KStream":
        """Like ``join``, but every record of this stream produces a result (``None`` for a missing partner)."""
        return self._join(other, joiner, windows_or_joined, stream_joined, with_key, left=True, outer=False)

    def outer_join(self, other: "KStream", joiner: Callable[..., Any], windows: Any,
                   stream_joined: Any = None, *, with_key: bool = False) -> "KStream":
        """Windowed outer join of two streams: unmatched records of either side are emitted when their window closes."""
        require_instance(other, "otherStream", KStream)
        return self._join(other, joiner, windows, stream_joined, with_key, left=True, outer=True)

    def _join(self, other: Any, joiner: Any, third: Any, fourth: Any, with_key: bool, left: bool,
              outer: bool) -> "KStream":
        from streams_on_spark.dsl import joins
        from streams_on_spark.dsl.builder import GlobalKTable
        from streams_on_spark.dsl.ktable import KTable
        require_instance(other, "otherStream", (KStream, KTable, GlobalKTable))
        if isinstance(other, GlobalKTable):
            key_mapper, value_joiner = joiner, third
            require_callable(key_mapper, "keySelector")
            require_callable(value_joiner, "joiner")
            require_instance(fourth, "named", Named, optional=True)
            return joins.stream_global_join(self, other, key_mapper, ValueJoiner(value_joiner, with_key),
                                            fourth, left)
        require_callable(joiner, "joiner")
        if isinstance(other, KTable):
            require_instance(third, "joined", Joined, optional=True)
            if fourth is not None:
                raise bad_argument("a stream-table join's fourth argument", "absent (table, joiner, joined=None)",
                                   fourth)
            return joins.stream_table_join(self, other, ValueJoiner(joiner, with_key), third, left)
        require(third, "windows")
        require_instance(fourth, "streamJoined", StreamJoined, optional=True)
        return joins.stream_stream_join(self, other, ValueJoiner(joiner, with_key), third, fourth, left, outer)

    def process(self, supplier: Callable[[], Any], *store_names: str, named: Optional[Named] = None) -> "KStream":
        """Run a Processor API processor (``supplier()`` makes one per task) with access to ``store_names``.

        The output key may differ, so downstream stateful operations repartition — but ``process`` itself
        never does: a key changed before ``process`` splits its state across partitions (KIP-1238's example).
        """
        node = self._processor_api_node("KSTREAM-PROCESSOR-", supplier, supplier, store_names, named)
        return KStream(self._builder, node.name, None, None, self._source_nodes, True, node)

    def process_values(self, supplier: Callable[[], Any], *store_names: str,
                       named: Optional[Named] = None) -> "KStream":
        """Run a ``FixedKeyProcessor`` (KIP-820): values, timestamps and headers may change, the key cannot, so
        no repartition follows (unless one was already due)."""
        node = self._processor_api_node("KSTREAM-PROCESSVALUES-", supplier,
                                        DslSupplier(KStreamProcessValues, supplier), store_names, named)
        return KStream(self._builder, node.name, self.key_serde, None, self._source_nodes,
                       self._repartition_required, node)

    def _processor_api_node(self, prefix: str, supplier: Any, node_supplier: Callable[[], Any],
                            store_names: tuple[str, ...], named: Optional[Named]) -> ProcessorGraphNode:
        """The graph node of ``process``/``process_values``, connected to ``store_names`` and the stores the
        supplier's ``stores()`` declares (added to the topology)."""
        if not callable(require(supplier, "processorSupplier")):
            raise bad_argument("processorSupplier", "a zero-argument callable returning a processor (e.g. the "
                               "processor class), not a processor instance", supplier)
        for store in store_names:
            require_str(store, "stateStoreNames")
        name = _named(named) if named is not None else self._builder.new_processor_name(prefix)
        node = ProcessorGraphNode(name, node_supplier, store_names=store_names)
        for store_builder in getattr(supplier, "stores", lambda: ())() or ():
            node.store_names.append(store_builder.name)
            self._builder.add_graph_node(self._builder.root, StateStoreNode(store_builder))
        self._builder.add_graph_node(self._node, node)
        return node


class BranchedKStream:
    """The result of ``split()``: add branches, then ``default_branch()``/``no_default_branch()``."""

    def __init__(self, source: KStream, name: Optional[str]) -> None:
        self._source = source
        self._builder = source._builder
        self._split_name = source._name_or_generate(name, "KSTREAM-BRANCH-")
        self._predicates: list[Callable[[Any, Any], bool]] = []
        self._children: list[str] = []
        self._results: dict[str, KStream] = {}
        self._supplier = DslSupplier(KStreamBranch, self._predicates, self._children, None)
        self._split_node = ProcessorGraphNode(self._split_name, self._supplier)
        self._builder.add_graph_node(source._node, self._split_node)
        self._done = False

    def branch(self, predicate: Callable[[Any, Any], bool], branched: Optional[Branched] = None) -> "BranchedKStream":
        """Records matching ``predicate(key, value)`` (and no earlier branch) go to this branch."""
        require_callable(predicate, "predicate")
        self._check_open()
        self._predicates.append(predicate)
        self._add(branched, str(len(self._predicates)))
        return self

    def default_branch(self, branched: Optional[Branched] = None) -> dict[str, KStream]:
        """Records matching no branch go here; closes the split and returns the branches by name."""
        self._check_open()
        child = self._add(branched, "0")
        self._supplier.args = (self._predicates, self._children[:len(self._predicates)], child)
        self._done = True
        return self._results

    def no_default_branch(self) -> dict[str, KStream]:
        self._check_open()
        self._done = True
        return self._results

    def _check_open(self) -> None:
        if self._done:
            raise TopologyException("split() already closed by default_branch()/no_default_branch()")

    def _add(self, branched: Optional[Branched], index: str) -> str:
        b = require_instance(branched, "branched", Branched, optional=True) or Branched()
        suffix = b.name if b.name is not None else index
        child_name = self._split_name + suffix
        self._builder.new_processor_name("KSTREAM-BRANCHCHILD-")
        node = ProcessorGraphNode(child_name, DslSupplier(PassThrough))
        self._builder.add_graph_node(self._split_node, node)
        if index != "0":
            self._children.append(child_name)
        stream = KStream(self._builder, child_name, self._source.key_serde, self._source.value_serde,
                         self._source._source_nodes, self._source._repartition_required, node)
        if b.chain is None:
            self._results[child_name] = stream
        else:
            result = b.chain(stream)
            if not b.is_consumer and result is not None:
                self._results[child_name] = result
        return child_name

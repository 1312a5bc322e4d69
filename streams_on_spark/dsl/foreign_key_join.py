"""``KTable.join/left_join(other, foreign_key_extractor, joiner, ...)``: the foreign-key table-table join (KIP-213).

Builds Kafka 4.3.1's ``KTableImpl.doJoinOnForeignKey`` graph, node for node and name for name (so ``describe()``
is Kafka's): subscription processor → ``...-SUBSCRIPTION-REGISTRATION-...-topic`` → receive (subscription store)
→ join with the foreign table, and the foreign table's updates → the same store's subscribers; both answer on
``...-SUBSCRIPTION-RESPONSE-...-topic`` to the resolver, which feeds the result table (a ``KTableSource``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from streams_on_spark.dsl.params import Consumed, Materialized, Produced, TableJoined
from streams_on_spark.errors import bad_argument, require_callable
from streams_on_spark.operators.tables import KTableSource
from streams_on_spark.operators import foreign_key_joins as fk
from streams_on_spark.serde import Serdes
from streams_on_spark.serde.foreign_key import (
    CombinedKeySchema,
    SubscriptionResponseWrapperSerde,
    SubscriptionWrapperSerde,
)
from streams_on_spark.state.factory import Stores
from streams_on_spark.topology.graph import (
    DslSupplier,
    GraphNode,
    ProcessorGraphNode,
    StreamSinkNode,
    StreamSourceNode,
    TableSourceMaterializingNode,
    TableSupplier,
)

if TYPE_CHECKING:  # pragma: no cover
    from streams_on_spark.dsl.ktable import KTable

FK_JOIN = "KTABLE-FK-JOIN-"
FK_JOIN_STATE_STORE_NAME = FK_JOIN + "SUBSCRIPTION-STATE-STORE-"
SUBSCRIPTION_REGISTRATION = FK_JOIN + "SUBSCRIPTION-REGISTRATION-"
SUBSCRIPTION_RESPONSE = FK_JOIN + "SUBSCRIPTION-RESPONSE-"
SUBSCRIPTION_PROCESSOR = FK_JOIN + "SUBSCRIPTION-PROCESSOR-"
SUBSCRIPTION_RESPONSE_RESOLVER_PROCESSOR = FK_JOIN + "SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-"
FK_JOIN_OUTPUT_NAME = FK_JOIN + "OUTPUT-"
TOPIC_SUFFIX = "-topic"
SOURCE_NAME = "KTABLE-SOURCE-"
SINK_NAME = "KTABLE-SINK-"


def split_table_joined_materialized(args: tuple) -> tuple[TableJoined, Optional[Materialized]]:
    """The optional ``TableJoined`` and ``Materialized`` after the joiner, in either order, each at most once."""
    table_joined: Optional[TableJoined] = None
    materialized: Optional[Materialized] = None
    for arg in args:
        if arg is None:
            continue
        if isinstance(arg, TableJoined) and table_joined is None:
            table_joined = arg
        elif isinstance(arg, Materialized) and materialized is None:
            materialized = arg
        else:
            raise bad_argument("a foreign-key join's optional argument", "one TableJoined and/or one Materialized",
                               arg)
    return table_joined or TableJoined(), materialized


class SubscriptionStoreNode(ProcessorGraphNode):
    """A processor using the subscription store: the first one written adds it, the other connects to it (Kafka's
    ``FactoryWrappingStoreBuilder`` on both suppliers)."""

    def write(self, builder: Any) -> None:
        builder.add_processor(self.name, self.supplier, self.parent_names())
        if self.store_names:
            builder.connect_processor_and_state_stores(self.name, self.store_names)
        if self.store_builder.name in builder.state_factories:
            builder.connect_processor_and_state_stores(self.name, [self.store_builder.name])
        else:
            builder.add_state_store(self.store_builder, [self.name])


def foreign_key_join(this: "KTable", other: Any, extractor: Any, joiner: Any, args: tuple, left_join: bool,
                     with_key: bool) -> "KTable":
    """Kafka's ``doJoinOnForeignKey``: the same checks, graph nodes, names, stores and internal topics."""
    from streams_on_spark.dsl.joins import value_getter
    from streams_on_spark.dsl.ktable import KTable, is_versioned, materialize
    if not isinstance(other, KTable):
        raise bad_argument("foreignKeyTable", "a KTable", other)
    if extractor is None:
        raise ValueError("foreignKeyExtractor can't be null")
    require_callable(extractor, "foreignKeyExtractor")
    if joiner is None:
        raise ValueError("joiner can't be null")
    require_callable(joiner, "joiner")
    table_joined, m = split_table_joined_materialized(args)
    builder = this._builder
    topology_builder = builder.topology_builder

    # old values of both sides: the foreign side's avoid needless scans, this side's unsubscribe a changed key
    other.enable_sending_old_values(True)
    this.enable_sending_old_values(True)
    name = table_joined.name

    def named(suffix: str, prefix: str) -> str:
        return builder.suffixed_or_generate(name, suffix, prefix)

    subscription_topic = named("-subscription-registration", SUBSCRIPTION_REGISTRATION) + TOPIC_SUFFIX
    topology_builder.add_internal_topic(subscription_topic)
    pk_topic, fk_topic, vh_topic = (subscription_topic + "-pk", subscription_topic + "-fk",
                                    subscription_topic + "-vh")
    fk_serde, pk_serde = other.key_serde, this.key_serde
    wrapper_serde = SubscriptionWrapperSerde(pk_serde, pk_topic)
    response_serde = SubscriptionResponseWrapperSerde(other.value_serde)
    key_schema = CombinedKeySchema(fk_serde, pk_serde, fk_topic, pk_topic)

    send_supplier = DslSupplier(fk.SubscriptionSend, fk.ForeignKeyExtractor(extractor, with_key), fk_serde,
                                this.value_serde, left_join, fk_topic, vh_topic, wrapper_serde, is_versioned(this))
    send = ProcessorGraphNode(named("-subscription-registration-processor", SUBSCRIPTION_REGISTRATION),
                              send_supplier)
    builder.add_graph_node(this._node, send)

    other_partitioner = (None if table_joined.other_partitioner is None
                         else fk.KeyOnlyPartitioner(table_joined.other_partitioner))
    sink = StreamSinkNode(named("-subscription-registration-sink", SINK_NAME), subscription_topic,
                          Produced(fk_serde, wrapper_serde, partitioner=other_partitioner))
    builder.add_graph_node(send, sink)
    source = StreamSourceNode(named("-subscription-registration-source", SOURCE_NAME), [subscription_topic],
                              Consumed(fk_serde, wrapper_serde))
    builder.add_graph_node(sink, source)
    # the subscriptions are partitioned like the foreign table
    builder.copartition_groups.append(sorted(other._source_nodes | {source.name}))

    store_name = named("-subscription-store", FK_JOIN_STATE_STORE_NAME)
    store_builder = Stores.timestamped_key_value_store_builder(Stores.in_memory_key_value_store(store_name),
                                                               Serdes.ByteArray(), wrapper_serde)
    store_builder.follows_dsl_store_format = True
    receive = SubscriptionStoreNode(named("-subscription-receive", SUBSCRIPTION_PROCESSOR),
                                    DslSupplier(fk.SubscriptionReceive, store_name, key_schema, wrapper_serde),
                                    store_builder)
    builder.add_graph_node(source, receive)

    foreign_getter = value_getter(other)
    subscription_join = ProcessorGraphNode(named("-subscription-join-foreign", SUBSCRIPTION_PROCESSOR),
                                           DslSupplier(fk.SubscriptionJoin, foreign_getter, response_serde),
                                           store_names=foreign_getter.store_names)
    builder.add_graph_node(receive, subscription_join)

    foreign_join = SubscriptionStoreNode(named("-foreign-join-subscription", SUBSCRIPTION_PROCESSOR),
                                         DslSupplier(fk.ForeignTableJoin, store_name, key_schema, response_serde,
                                                     is_versioned(other)),
                                         store_builder)
    builder.add_graph_node(other._node, foreign_join)

    response_topic = named("-subscription-response", SUBSCRIPTION_RESPONSE) + TOPIC_SUFFIX
    topology_builder.add_internal_topic(response_topic)
    partitioner = (fk.PrimaryPartitioner() if table_joined.partitioner is None
                   else fk.KeyOnlyPartitioner(table_joined.partitioner))
    response_sink = StreamSinkNode(named("-subscription-response-sink", SINK_NAME), response_topic,
                                   Produced(pk_serde, response_serde, partitioner=partitioner))
    builder.add_graph_node([subscription_join, foreign_join], response_sink)
    response_source = StreamSourceNode(named("-subscription-response-source", SOURCE_NAME), [response_topic],
                                       Consumed(pk_serde, response_serde))
    builder.add_graph_node(response_sink, response_source)
    # the responses are partitioned like this table
    result_source_nodes = this._source_nodes | {response_source.name}
    builder.copartition_groups.append(sorted(result_source_nodes))

    this_getter = value_getter(this)
    resolver = ProcessorGraphNode(
        named("-subscription-response-resolver", SUBSCRIPTION_RESPONSE_RESOLVER_PROCESSOR),
        DslSupplier(fk.ResponseJoin, this_getter, this.value_serde, vh_topic, joiner, left_join, response_serde),
        store_names=this_getter.store_names)
    builder.add_graph_node(response_source, resolver)

    result_name = named("-result", FK_JOIN_OUTPUT_NAME)
    m = m or Materialized()
    # Kafka's MaterializedInternal: an unnamed result store still gets (and burns) a generated name (KIP-1111: implicit)
    result_store = builder.materialized_store_name(m, FK_JOIN_OUTPUT_NAME)
    key_serde = m.key_serde if m.key_serde is not None else this.key_serde
    value_serde = m.value_serde
    supplier = TableSupplier(KTableSource, store_name=result_store, queryable_name=m.name)
    result: GraphNode = TableSourceMaterializingNode(result_name, supplier,
                                                     materialize(m, result_store, key_serde, value_serde))
    builder.add_graph_node(resolver, result)
    return KTable(builder, result_name, key_serde, value_serde, result_source_nodes, m.name, supplier, result)


__all__ = ["foreign_key_join", "split_table_joined_materialized", "SubscriptionStoreNode"]

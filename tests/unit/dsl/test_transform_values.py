"""KTable.transform_values (Kafka's KTable#transformValues with a ValueTransformerWithKey) beyond the goldens
(tests/data/kafka-reference/table-transform-values-*): the transformer's context, arguments, naming and lifecycle."""
from __future__ import annotations

import datetime

import pytest

from streams_on_spark import (
    Consumed,
    Materialized,
    Named,
    Produced,
    Serdes,
    StreamsBuilder,
    Stores,
    StreamsException,
    TopologyTestDriver,
    ValueTransformerWithKey,
)

S = Serdes.String()
CONFIG = {"application.id": "transform-values", "default.key.serde": S, "default.value.serde": S}


class Upper(ValueTransformerWithKey):
    closed: list = []

    def transform(self, read_only_key, value):
        return None if value is None else value.upper()

    def close(self):
        Upper.closed.append(self)


class Forwarding(ValueTransformerWithKey):
    def transform(self, read_only_key, value):
        self.context.forward(None)


class Where(ValueTransformerWithKey):
    """The value, with where the record came from (None outside a record: a join's value getter)."""

    def transform(self, read_only_key, value):
        meta = self.context.record_metadata()
        where = "-" if meta is None else f"{meta.topic}@{meta.offset}"
        return f"{value}|{where}"


def table(builder: StreamsBuilder):
    return builder.table("in", Consumed.with_(S, S))


def test_forward_from_a_transformer_is_refused_with_kafkas_text():
    builder = StreamsBuilder()
    table(builder).transform_values(Forwarding).to_stream().to("out")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        with pytest.raises(StreamsException, match=r"ProcessorContext#forward\(\) is not supported from this context, "
                                                   r"as the framework must ensure the key is not changed"):
            driver.create_input_topic("in", S, S).pipe_input("a", "x")


def test_the_transformer_sees_the_record_and_a_join_getter_transforms_outside_any_record():
    builder = StreamsBuilder()   # no cache on the source: its updates leave while their record is processed
    where = builder.table("in", Consumed.with_(S, S), Materialized.as_("in-store").with_caching_disabled()
                          ).transform_values(Where)
    where.to_stream().to("out")
    builder.stream("orders", Consumed.with_(S, S)).join(where, lambda o, w: f"{o}:{w}").to("joined")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("in", S, S).pipe_input("a", "x")
        driver.create_input_topic("orders", S, S).pipe_input("a", "o")
        assert driver.create_output_topic("out", S, S).read_values_to_list() == ["x|in@0"]
        assert driver.create_output_topic("joined", S, S).read_values_to_list() == ["o:x|-"]


def test_a_transformer_per_task_closed_with_the_driver():
    Upper.closed.clear()
    builder = StreamsBuilder()
    table(builder).transform_values(Upper).to_stream().to("out")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("in", S, S).pipe_key_value_list([("a", "x"), ("a", None)])
        assert driver.create_output_topic("out", S, S).read_key_values_to_list() == [("a", "X"), ("a", None)]
        assert Upper.closed == []
    assert len(Upper.closed) == 1


def test_an_unnamed_materialized_makes_no_store_and_burns_no_index_as_kafka():
    """Kafka's transformValues builds ``MaterializedInternal(materialized)`` without the builder: no generated store."""
    def build(materialized):
        builder = StreamsBuilder()
        table(builder).transform_values(Upper, materialized=materialized).to_stream().to("out")
        return str(builder.build().describe())
    plain = build(None)
    assert build(Materialized.with_(S, S)) == plain
    assert "KTABLE-TRANSFORMVALUES-0000000003 (stores: [])" in plain
    assert "(stores: [kept])" in build(Materialized.as_("kept"))


def test_named_and_materialized_name_the_processor_and_store():
    builder = StreamsBuilder()
    (table(builder).transform_values(Upper, named=Named.as_("upper"), materialized=Materialized.as_("upper-store"))
     .to_stream().to("out", Produced.with_(S, S)))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        assert "Processor: upper (stores: [upper-store])" in str(builder.build().describe())
        driver.create_input_topic("in", S, S).pipe_input("a", "x", 5)
        assert driver.get_timestamped_key_value_store("upper-store").get("a").value == "X"


def test_kafkas_positional_overloads_are_accepted():
    """transformValues(supplier, materialized, named, stores...) and (supplier, named, stores...) as in Kafka."""
    def described(call):
        builder = StreamsBuilder()
        builder.add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("calls"), S, S))
        call(table(builder)).to_stream().to("out")
        return str(builder.build().describe())
    keywords = described(lambda t: t.transform_values(Upper, "calls", named=Named.as_("upper"),
                                                      materialized=Materialized.as_("kept")))
    assert "Processor: upper (stores: [calls, kept])" in keywords
    assert described(lambda t: t.transform_values(Upper, Materialized.as_("kept"), Named.as_("upper"), "calls")) \
        == keywords
    assert "Processor: upper (stores: [calls])" in described(lambda t: t.transform_values(Upper, Named.as_("upper"),
                                                                                           "calls"))
    with pytest.raises(ValueError, match="one Materialized and one Named at most"):
        described(lambda t: t.transform_values(Upper, Named.as_("a"), Named.as_("b")))


@pytest.mark.parametrize("call, message", [
    (lambda t: t.transform_values(None), "transformerSupplier can't be null"),
    (lambda t: t.transform_values("Upper"), "transformerSupplier"),
    (lambda t: t.transform_values(Upper, 3), "stateStoreNames"),
    (lambda t: t.transform_values(Upper, named="upper"), "named must be a Named"),
    (lambda t: t.transform_values(Upper, materialized="store"), "materialized must be a Materialized"),
])
def test_bad_arguments_fail_at_the_call(call, message):
    with pytest.raises(ValueError, match=message):
        call(table(StreamsBuilder()))


def test_a_supplier_of_something_else_fails_when_the_task_starts():
    builder = StreamsBuilder()
    table(builder).transform_values(lambda: object()).to_stream().to("out")
    with pytest.raises(StreamsException, match="^failed to initialize processor KTABLE-TRANSFORMVALUES-") as raised:
        TopologyTestDriver(builder.build(), CONFIG)
    assert "transform_values needs a supplier of ValueTransformerWithKey" in str(raised.value.__cause__)


def test_materialized_retention_logging_and_caching_arguments():
    m = Materialized.as_("w")
    assert m.with_retention(datetime.timedelta(minutes=5)).retention_ms == 300_000
    assert m.with_retention(0).retention_ms == 0
    with pytest.raises(ValueError, match="^Retention must not be negative.$"):
        m.with_retention(-1)
    with pytest.raises(TypeError, match='Invalid value for parameter "retention"'):
        m.with_retention("5m")
    assert m.with_caching_disabled().caching_enabled is False
    assert m.with_caching_disabled().with_caching_enabled().caching_enabled is True
    assert m.with_logging_disabled().logging_enabled is False
    assert m.with_logging_disabled().with_logging_enabled().logging_enabled is True
    assert m.with_logging_disabled().with_logging_enabled({}).logging_enabled is True
    with pytest.raises(ValueError, match="changelog topic configs have nothing to apply to"):
        m.with_logging_enabled({"min.insync.replicas": "2"})


class _Context:
    application_id = "app"


def test_transformer_contexts_survive_pickling():
    """On Spark a task (its processors, their transformers and contexts) is pickled between batches: the wrappers must
    unpickle (pickle asks them for ``__setstate__`` before their context is back)."""
    import pickle

    from streams_on_spark.processor.api import FixedKeyProcessorContext, ForwardingDisabledProcessorContext
    for wrapper in (ForwardingDisabledProcessorContext(_Context()), FixedKeyProcessorContext(_Context())):
        assert pickle.loads(pickle.dumps(wrapper)).application_id == "app"

"""``KStream.process_values`` (KIP-820 ``FixedKeyProcessor``) and ``KTable.to_stream(mapper)``."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    FixedKeyProcessor,
    Grouped,
    Materialized,
    Named,
    Processor,
    Produced,
    PunctuationType,
    Record,
    Repartitioned,
    Serdes,
    Stores,
    StreamsBuilder,
    StreamsException,
    TopologyTestDriver,
    TopologyTestDriverBuilder,
)

S, L = Serdes.String(), Serdes.Long()
CONFIG = {"application.id": "process-values"}


class Numbering(FixedKeyProcessor):
    """value#n, n counting the key's records in the "seen" store."""

    def init(self, context) -> None:
        super().init(context)
        self.seen = context.get_state_store("seen")

    def process(self, record) -> None:
        n = (self.seen.get(record.key) or 0) + 1
        self.seen.put(record.key, n)
        self.context.forward(record.with_value(f"{record.value}#{n}"))

    @staticmethod
    def stores():
        return [Stores.key_value_store_builder(Stores.in_memory_key_value_store("seen"), S, L)]


def numbered(rekey: bool, repartition: bool = False):
    builder = StreamsBuilder()
    stream = builder.stream("events", Consumed.with_(S, S))
    if rekey:
        stream = stream.select_key(lambda k, v: v.split(":")[0])
    if repartition:
        stream = stream.repartition(Repartitioned.with_(S, S))
    stream.process_values(Numbering).to("out", Produced.with_(S, S))
    return builder.build(CONFIG)


def run(topology, partitions: int) -> list:
    driver = (TopologyTestDriverBuilder(topology).with_config(CONFIG)
              .declare_topic("events", partitions).declare_topic("out", partitions).build())
    with driver:
        inp = driver.create_input_topic("events", S, S, start_timestamp=0)
        for i, user in enumerate(["u1", "u2", "u1", "u3", "u1", "u2", "u1"]):
            inp.pipe_input(f"e{i}", f"{user}:{i}")
        return sorted(driver.create_output_topic("out", S, S).read_key_values_to_list())


def test_the_key_is_kept_so_a_grouping_after_it_does_not_repartition():
    class Pass(Processor):
        def process(self, record) -> None:
            self.context.forward(record)

    def topology(stage: str):
        builder = StreamsBuilder()
        stream = builder.stream("events", Consumed.with_(S, S))
        stream = stream.process_values(Numbering) if stage == "values" else stream.process(Pass)
        stream.group_by_key(Grouped.with_(S, S)).count().to_stream().to("counts", Produced.with_(S, L))
        return builder.build(CONFIG)

    assert "repartition" not in str(topology("values").describe())
    assert "KSTREAM-PROCESSVALUES-0000000001 (stores: [seen])" in str(topology("values").describe())
    assert "repartition" in str(topology("any").describe())  # process() may change the key


def test_numbers_per_key_at_one_and_four_partitions_when_the_key_did_not_change():
    expected = [("e0", "u1:0#1"), ("e1", "u2:1#1"), ("e2", "u1:2#1"), ("e3", "u3:3#1"), ("e4", "u1:4#1"),
                ("e5", "u2:5#1"), ("e6", "u1:6#1")]
    assert run(numbered(rekey=False), 1) == run(numbered(rekey=False), 4) == expected


def test_a_key_changed_before_process_values_splits_its_state_at_four_partitions_unless_repartitioned():
    """process_values keeps the key, so it never repartitions: the multi-partition driver shows the split."""
    correct = [("u1", "u1:0#1"), ("u1", "u1:2#2"), ("u1", "u1:4#3"), ("u1", "u1:6#4"), ("u2", "u2:1#1"),
               ("u2", "u2:5#2"), ("u3", "u3:3#1")]
    assert run(numbered(rekey=True), 1) == correct
    assert run(numbered(rekey=True), 4) != correct
    assert run(numbered(rekey=True, repartition=True), 4) == correct


def test_timestamps_and_headers_may_change_and_punctuators_forward_kept_records():
    class Stamp(FixedKeyProcessor):
        def init(self, context) -> None:
            super().init(context)
            self.last = None
            context.schedule(10, PunctuationType.STREAM_TIME, self.tick)

        def process(self, record) -> None:
            self.last = record
            self.context.forward(record.with_timestamp(record.timestamp + 1).with_headers({"seen": "yes"}))

        def tick(self, ts: int) -> None:
            if self.last is not None:
                self.context.forward(self.last.with_value("tick"))

    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).process_values(Stamp, named=Named.as_("stamp")).to("out")
    with TopologyTestDriver(builder.build(), {**CONFIG, "default.key.serde": S, "default.value.serde": S}) as driver:
        assert "Processor: stamp (stores: [])" in str(driver._topology.describe())
        driver.create_input_topic("in", S, S).pipe_input("k", "v", 5)
        records = driver.create_output_topic("out", S, S).read_records_to_list()
    assert [(r.key, r.value, r.timestamp, list(r.headers)) for r in records] == [
        ("k", "v", 6, [("seen", b"yes")]), ("k", "tick", 5, [])]


def test_the_key_cannot_change_and_only_fixed_key_records_are_forwarded():
    class Rekey(FixedKeyProcessor):
        def process(self, record) -> None:
            self.context.forward(record.with_key("other"))

    class PlainRecord(FixedKeyProcessor):
        def process(self, record) -> None:
            self.context.forward(Record("other", record.value, record.timestamp))

    for processor, message in [(Rekey, "key cannot change"), (PlainRecord, "a FixedKeyRecord made from the input")]:
        builder = StreamsBuilder()
        builder.stream("in", Consumed.with_(S, S)).process_values(processor).to("out", Produced.with_(S, S))
        with TopologyTestDriver(builder.build(), CONFIG) as driver:
            with pytest.raises(Exception, match=message):
                driver.create_input_topic("in", S, S).pipe_input("k", "v", 1)


def test_a_processor_is_refused_with_a_message_naming_process():
    class Plain(Processor):
        def process(self, record) -> None:
            pass

    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).process_values(Plain)
    with pytest.raises(StreamsException, match="^failed to initialize processor KSTREAM-PROCESSVALUES-") as raised:
        with TopologyTestDriver(builder.build(), CONFIG) as driver:
            driver.create_input_topic("in", S, S).pipe_input("k", "v", 1)
    assert "FixedKeyProcessor, got Plain (use process()" in str(raised.value.__cause__)   # Kafka's: the cause


def test_to_stream_with_a_mapper_re_keys_after_the_table_and_names_as_kafka():
    builder = StreamsBuilder()
    (builder.table("in", Consumed.with_(S, S), Materialized.as_("t"))
     .to_stream(lambda k, v: f"{k}-{v}", Named.as_("updates"))
     .to("out", Produced.with_(S, S)))
    topology = builder.build(CONFIG)
    text = str(topology.describe())
    assert "Processor: updates (stores: [])\n      --> KSTREAM-KEY-SELECT-0000000003" in text
    with TopologyTestDriver(topology, CONFIG) as driver:
        driver.create_input_topic("in", S, S).pipe_key_value_list([("a", "1"), ("a", None)])
        assert driver.create_output_topic("out", S, S).read_key_values_to_list() == [("a-1", "1"), ("a-None", None)]


def test_to_stream_takes_named_once():
    table = StreamsBuilder().table("in", Consumed.with_(S, S))
    with pytest.raises(ValueError, match="named"):
        table.to_stream(Named.as_("a"), Named.as_("b"))
    with pytest.raises(ValueError, match="first argument must be a mapper"):
        table.to_stream("not callable")

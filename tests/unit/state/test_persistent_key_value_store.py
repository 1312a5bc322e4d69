"""``Stores.persistent_key_value_store``: Kafka's RocksDB key-value supplier, usable wherever the in-memory one is and
kept by the engine (a local RocksDB on Spark) as the in-memory one is."""
from __future__ import annotations

from streams_on_spark import Produced, Serdes, Stores, StreamsBuilder, TopologyTestDriverBuilder
from streams_on_spark.processor.api import Processor, Record

S, L = Serdes.String(), Serdes.Long()


class CountingProcessor(Processor):
    def init(self, context):
        self.context, self.store = context, context.get_state_store("seen")

    def process(self, record: Record):
        count = (self.store.get(record.key) or 0) + 1
        self.store.put(record.key, count)
        self.context.forward(record.with_value(count))


def test_a_persistent_key_value_store_backs_a_processor_and_is_kept_by_the_engine():
    supplier = Stores.persistent_key_value_store("seen")
    assert supplier.metrics_scope() == "rocksdb" and supplier.name == "seen"
    assert type(Stores.persistent_timestamped_key_value_store("seen")) is type(supplier)
    store = Stores.key_value_store_builder(supplier, S, L)
    assert store.engine_kept()
    builder = StreamsBuilder()
    builder.add_state_store(store)
    builder.stream("in").process(CountingProcessor, "seen").to("out", Produced.with_(S, L))
    driver = (TopologyTestDriverBuilder(builder.build())
              .with_config({"application.id": "persistent-kv", "default.key.serde": S, "default.value.serde": S})
              .declare_topic("in", 2).declare_topic("out", 2).build())
    with driver:
        driver.create_input_topic("in", S, S).pipe_key_value_list([("a", "x"), ("b", "y"), ("a", "z")])
        assert [(r.key, r.value) for r in driver.create_output_topic("out", S, L).read_records_to_list()] == [
            ("a", 1), ("b", 1), ("a", 2)]

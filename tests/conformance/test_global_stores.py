"""Global stores as a stream task's processors see them, on every engine: readable, never writable (Kafka's
read-only decorator); only the global store's own processor, fed from its topic, changes them."""
from __future__ import annotations

import pytest

from streams_on_spark import Consumed, Materialized, Serdes, StreamsBuilder, StreamsException

S = Serdes.String()


class WritesToGlobal:
    """Reads the global store, then tries to write to it."""

    def init(self, context):
        self.context = context
        self.store = context.get_state_store("product-store")

    def process(self, record):
        assert self.store.get("p1").value == "a pen"     # reading is fine
        self.store.put("p1", None)

    def close(self):
        pass


def test_stream_processors_read_global_stores_but_cannot_write_them(make_driver):
    builder = StreamsBuilder()
    builder.global_table("products", Consumed.with_(S, S), Materialized.as_("product-store"))
    builder.stream("orders", Consumed.with_(S, S)).process(WritesToGlobal)
    driver = make_driver(builder.build(), "orders", "products")
    driver.create_input_topic("products", S, S).pipe_input("p1", "a pen")
    with pytest.raises(StreamsException, match="UnsupportedOperationError: Global store is read only"):
        driver.create_input_topic("orders", S, S).pipe_input("o1", "p1:2")
    assert driver.get_key_value_store("product-store").get("p1") == "a pen"

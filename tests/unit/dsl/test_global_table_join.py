"""Stream-GlobalKTable joins: a key mapper picks the table key, no repartition, the global store is fed from every
partition. Both engines run the same scenario in tests/conformance/test_joins.py."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Consumed,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TopologyTestDriverBuilder,
)

S = Serdes.String()


def topology(left: bool):
    builder = StreamsBuilder()
    products = builder.global_table("products", Consumed.with_(S, S), Materialized.as_("product-store"))
    orders = builder.stream("orders", Consumed.with_(S, S))
    join = orders.left_join if left else orders.join
    join(products, lambda order_id, order: order.split(":")[0], lambda order, product: f"{order} is {product}").to(
        "enriched", Produced.with_(S, S))
    return builder.build()


@pytest.mark.parametrize("left", [False, True])
def test_global_join_uses_the_mapped_key_across_partitions(left):
    built = topology(left)
    assert "repartition" not in str(built.describe())
    with (TopologyTestDriverBuilder(built).with_config({"application.id": "global"})
          .declare_topic("orders", 4).declare_topic("products", 3).build()) as driver:
        driver.create_input_topic("products", S, S).pipe_key_value_list([("p1", "a pen"), ("p2", "a cup")])
        driver.create_input_topic("orders", S, S).pipe_key_value_list(
            [("o1", "p1:2"), ("o2", "p2:1"), ("o3", "p9:5")])
        got = driver.create_output_topic("enriched", S, S).read_key_values_to_map()
    expected = {"o1": "p1:2 is a pen", "o2": "p2:1 is a cup"}
    if left:
        expected["o3"] = "p9:5 is None"
    assert got == expected


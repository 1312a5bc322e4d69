"""Orders enriched from a customers table, after a re-key: a stream–table join.

``orders`` are keyed by order id (value ``order-id,customer-id,item,quantity``); ``customers`` is a table keyed by
customer id (value ``name,city``). The orders are re-keyed by customer (``select_key``: the join must find the
customer on the order's partition, so the stream goes through a repartition topic, whose serdes ``Joined`` gives)
and joined with the table: each order leaves for ``enriched-orders`` with the customer as the table held it when
the order was processed. An order of an unknown customer is dropped (inner join); a customer who moves is seen at
the new address by the orders that come after.

    .venv/bin/python examples/order_enrichment.py --engine local        # the in-process driver
    .venv/bin/python examples/order_enrichment.py                       # Spark over embedded topics
    .venv/bin/python examples/order_enrichment.py --bootstrap-servers 127.0.0.1:9092   # Spark against Kafka
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))   # _common, beside this file, also when imported by path

from _common import Input, Output, Run, Topic, configure_logging, parser, run_example, run_from_args  # noqa: E402

from streams_on_spark import (  # noqa: E402
    Consumed,
    Joined,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    Topology,
)

S = Serdes.String()
T0 = 1_767_225_600_000          # 2026-01-01T00:00:00Z


def topics(prefix: str = "") -> tuple[Topic, Topic, Topic]:
    """orders (order id -> order), customers (customer id -> name,city), enriched-orders (customer id -> text)."""
    return Topic(f"{prefix}orders", S, S), Topic(f"{prefix}customers", S, S), Topic(f"{prefix}enriched-orders", S, S)


def enrich(order: str, customer: str) -> str:
    """The joiner: an order line naming its customer and where to ship it."""
    order_id, _customer_id, item, quantity = order.split(",")
    name, city = customer.split(",")
    return f"{order_id}: {quantity} x {item} for {name}, ship to {city}"


def order_enrichment_topology(prefix: str = "") -> Topology:
    """orders -> re-keyed by customer -> joined with the customers table -> enriched-orders."""
    orders, customers, enriched = topics(prefix)
    builder = StreamsBuilder()
    table = builder.table(customers.name, Consumed.with_(S, S), Materialized.as_("customers-by-id"))
    (builder.stream(orders.name, Consumed.with_(S, S))
     .select_key(lambda _order_id, order: order.split(",")[1])
     .join(table, enrich, Joined.with_(S, S, S).with_name("orders-by-customer"))
     .to(enriched.name, Produced.with_(S, S)))
    return builder.build()


def waves(prefix: str = "") -> list[list[Input]]:
    """Customers first, then orders (one of an unknown customer), then a customer moves, then her next order."""
    orders, customers, _ = (t.name for t in topics(prefix))

    def order(second: int, order_id: str, customer_id: str, item: str, quantity: int) -> Input:
        return Input(orders, order_id, f"{order_id},{customer_id},{item},{quantity}", T0 + second * 1_000)

    return [
        [Input(customers, "c1", "Alice,Berlin", T0), Input(customers, "c2", "Bob,Lisbon", T0),
         Input(customers, "c3", "Carol,Oslo", T0)],
        [order(10, "o1", "c1", "lamp", 1), order(11, "o2", "c2", "chair", 4), order(12, "o3", "c1", "desk", 1),
         order(13, "o4", "c9", "sofa", 1), order(14, "o5", "c3", "rug", 2)],
        [Input(customers, "c1", "Alice,Paris", T0 + 20_000)],
        [order(30, "o6", "c1", "shelf", 3)],
    ]


def lines(outputs: list[Output]) -> list[str]:
    """One line per enriched order, by order id."""
    return [f"{key}  {value}" for key, value in sorted(((r.key, r.value) for r in outputs),
                                                        key=lambda kv: kv[1].split(":")[0])]


def run(prefix: str, run_as: Run) -> list[Output]:
    """Run the example as ``run_as`` says; the records of enriched-orders."""
    orders, customers, enriched = topics(prefix)
    return run_example(order_enrichment_topology(prefix), f"{prefix}order-enrichment", [orders, customers, enriched],
                       waves(prefix), [enriched.name], run_as)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    args = parser("Orders enriched from a customers table after a re-key").parse_args(argv)
    configure_logging(args.verbose)
    if args.describe:
        print(order_enrichment_topology(args.topic_prefix).describe())
    run_as = run_from_args(args, spark)
    outputs = run(args.topic_prefix, run_as)
    if not outputs:
        raise RuntimeError("no enriched orders were read back from enriched-orders")
    print(f"\n{run_as.label}: enriched orders (customer id, order)")
    for line in lines(outputs):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

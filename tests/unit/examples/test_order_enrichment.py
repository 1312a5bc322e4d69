"""examples/order_enrichment.py on the in-process driver: orders re-keyed by customer and joined with the table."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "order_enrichment.py"
EXPECTED = """\
local: enriched orders (customer id, order)
c1  o1: 1 x lamp for Alice, ship to Berlin
c2  o2: 4 x chair for Bob, ship to Lisbon
c1  o3: 1 x desk for Alice, ship to Berlin
c3  o5: 2 x rug for Carol, ship to Oslo
c1  o6: 3 x shelf for Alice, ship to Paris
"""


def load():
    spec = importlib.util.spec_from_file_location("order_enrichment_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("partitions", [1, 4])
def test_orders_enriched_with_the_customer_as_the_table_held_it(capsys, partitions):
    assert load().main(["--engine", "local", "--partitions", str(partitions)]) == 0
    assert capsys.readouterr().out.endswith("\n" + EXPECTED)


def test_the_re_key_goes_through_a_repartition_topic_named_by_joined(capsys):
    assert load().main(["--engine", "local", "--describe"]) == 0
    out = capsys.readouterr().out
    assert "(topic: orders-by-customer-repartition)" in out
    assert "Sub-topology: 1" in out


def test_each_enriched_order_is_on_its_customers_partition():
    from streams_on_spark.partitioner import partition_for_key
    module = load()
    outputs = module.run("", module.Run("local", 4))
    assert outputs and all(r.partition == partition_for_key(r.key.encode(), 4) for r in outputs)

"""A table operator's store is a typed field of its supplier (``TableSupplier.store_name``): the processor is built
with it and the DSL's value getters and old-value settings read it, so a change to an operator's positional
arguments cannot silently point a join at another store (issue 28, item 4)."""
from __future__ import annotations

import ast
from pathlib import Path

from streams_on_spark import Materialized, StreamsBuilder, Suppressed
from streams_on_spark.dsl.joins import StoreGetter, value_getter
from streams_on_spark.dsl.suppressed import BufferConfig
from streams_on_spark.serde import Serdes
from streams_on_spark.topology.graph import TableSupplier

S = Serdes.String()
ROOT = Path(__file__).resolve().parents[3] / "streams_on_spark"


def tables(builder: StreamsBuilder) -> dict:
    """Every kind of table the DSL makes, by what made it."""
    source = builder.table("t", materialized=Materialized.as_("source-store"))
    grouped = builder.stream("s").group_by_key()
    regrouped = source.group_by(lambda k, v: (v, k))
    return {
        "source": source,
        "filter": source.filter(lambda _k, v: v is not None),
        "filter-stored": source.filter(lambda _k, v: v is not None, materialized=Materialized.as_("filtered")),
        "map_values": source.map_values(str.upper),
        "transform_values-stored": source.transform_values(_Upper, materialized=Materialized.as_("transformed")),
        "count": grouped.count(Materialized.as_("counted")),
        "reduce": grouped.reduce(lambda a, b: a + b, materialized=Materialized.as_("reduced")),
        "aggregate": grouped.aggregate(lambda: "", lambda _k, v, a: a + v, materialized=Materialized.as_("agg")),
        "table count": regrouped.count(Materialized.as_("table-counted")),
        "table reduce": regrouped.reduce(lambda a, b: a + b, lambda a, b: a, Materialized.as_("table-reduced")),
        "join": source.join(builder.table("u"), lambda a, b: (a, b), materialized=Materialized.as_("joined")),
        "suppress": source.suppress(Suppressed.until_time_limit(10, BufferConfig.unbounded()).with_name("held")),
    }


class _Upper:
    def init(self, context):
        pass

    def transform(self, key, value):
        return None if value is None else value.upper()

    def close(self):
        pass


def test_every_table_operator_names_its_store_as_a_field_its_processor_is_built_with():
    built = {name: table._supplier for name, table in tables(StreamsBuilder()).items()}
    assert all(isinstance(s, TableSupplier) for s in built.values()), {n: type(s) for n, s in built.items()}
    stores = {name: supplier.store_name for name, supplier in built.items()}
    assert stores == {"source": "source-store", "filter": None, "filter-stored": "filtered", "map_values": None,
                      "transform_values-stored": "transformed", "count": "counted", "reduce": "reduced",
                      "aggregate": "agg", "table count": "table-counted",
                      "table reduce": "table-reduced", "join": "joined", "suppress": "held-store"}
    assert {name: supplier().store_name for name, supplier in built.items()} == stores


def test_a_join_reads_each_table_from_the_store_its_supplier_names():
    made = tables(StreamsBuilder())
    for name in ("source", "filter-stored", "transform_values-stored", "count", "reduce", "aggregate", "table count",
                 "table reduce", "join"):
        getter = value_getter(made[name])
        assert isinstance(getter, StoreGetter) and getter.store_names == [made[name]._supplier.store_name], name
    computed = value_getter(made["filter"])   # not materialized: the parent's store, the filter applied
    assert computed.store_names == ["source-store"]
    assert value_getter(made["suppress"]).store_names == ["held-store", "source-store"]


def test_no_dsl_module_reads_a_suppliers_positional_arguments():
    """``supplier.args[i]`` outside the supplier is what this replaced: it names no field, and a constructor
    change moves it silently."""
    found = [f"{path.relative_to(ROOT)}:{node.lineno}"
             for folder in ("dsl", "topology") for path in sorted((ROOT / folder).glob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "args"]
    found += [f"upgrade.py:{node.lineno}" for node in ast.walk(ast.parse((ROOT / "upgrade.py").read_text()))
              if isinstance(node, ast.Attribute) and node.attr == "args"]
    assert not found, f"positional supplier arguments read at {found}"

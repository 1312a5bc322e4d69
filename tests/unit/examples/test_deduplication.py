"""examples/deduplication.py on the in-process driver: duplicates within a minute dropped, old ids purged."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from streams_on_spark import TestRecord, TopologyTestDriverBuilder

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "deduplication.py"
EXPECTED = """\
local: 7 unique events of 11
   1s e1 login alice
   2s e2 login bob
   5s e3 buy bob
  30s e4 logout alice
 120s e5 login carol
 121s e1 login alice again
 130s e4 logout alice
"""


def load():
    spec = importlib.util.spec_from_file_location("deduplication_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("partitions", [1, 4])
def test_each_id_once_per_minute(capsys, partitions):
    assert load().main(["--engine", "local", "--partitions", str(partitions)]) == 0
    assert capsys.readouterr().out.endswith("\n" + EXPECTED)


def test_stream_time_punctuation_purges_ids_older_than_the_retention():
    module = load()
    S = module.S
    driver = (TopologyTestDriverBuilder(module.deduplication_topology())
              .with_config({"application.id": "dedup-purge"}).declare_topic("events", 1).build())
    with driver:
        events = driver.create_input_topic("events", S, S)
        events.pipe_record_list([TestRecord("a", "x", 1_000), TestRecord("b", "y", 5_000)])
        store = driver.get_key_value_store(module.STORE, 0)
        assert dict(store.all()) == {"a": 1_000, "b": 5_000}
        events.pipe_input(TestRecord("c", "z", 61_000))      # punctuates at 61 s: "a" (1 s) is a minute old
        assert dict(store.all()) == {"b": 5_000, "c": 61_000}
        events.pipe_input(TestRecord("d", "w", 70_000))      # 70 s: "b" (5 s) goes too
        assert dict(store.all()) == {"c": 61_000, "d": 70_000}
        unique = driver.create_output_topic("unique-events", S, S).read_key_values_to_list()
        assert [kv.key for kv in unique] == ["a", "b", "c", "d"]

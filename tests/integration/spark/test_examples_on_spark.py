"""The examples on Spark over embedded topics give what they give on the in-process driver (same lines).

Each example module is loaded by path, as its unit test does, and pickled by value for Spark's Python workers (they
cannot import a module loaded that way); under ``python examples/x.py`` or spark-submit it is ``__main__``, which
cloudpickle ships by value anyway.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from streams_on_spark.runtime.spark.user_code import pickle_by_value

pytestmark = pytest.mark.spark
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_example_on_spark", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pickle_by_value(module)
    return module


@pytest.mark.parametrize("name", ["click_counts", "order_enrichment", "deduplication"])
def test_example_on_spark_matches_the_driver(spark, tmp_path, name):
    module = load(name)
    on_driver = module.lines(module.run("", module.Run("local", 2)))
    on_spark = module.lines(module.run("", module.Run("spark", 2, topics_dir=str(tmp_path / "topics"),
                                                      checkpoint_dir=str(tmp_path / "checkpoints"), spark=spark)))
    assert on_driver                               # the example produced something to compare
    assert on_spark == on_driver

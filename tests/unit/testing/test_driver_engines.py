"""The driver's engines: both satisfy the ``Engine`` protocol (what the driver calls on them), and an engine's name maps
to its implementation in one place (``runtime/engine.py``)."""
from __future__ import annotations

import inspect

import pytest

from streams_on_spark import Consumed, Produced, Serdes, StreamsBuilder, TopologyTestDriverBuilder
from streams_on_spark.runtime.engine import ENGINES, Engine, check_engine
from streams_on_spark.runtime.local import LocalEngine
from streams_on_spark.testing.pytest_plugin import ENGINES as PLUGIN_ENGINES

S = Serdes.String()

# what the driver calls on an engine: the protocol's methods and properties, then its attributes
METHODS = sorted(n for n, v in vars(Engine).items() if callable(v) and not n.startswith("_")
                 or isinstance(v, property))
ATTRIBUTES = sorted(Engine.__annotations__)


def _driver(engine: str = "local", spark=None):
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).map_values(str.upper).to("out", Produced.with_(S, S))
    return TopologyTestDriverBuilder(builder.build()).with_engine(engine, spark).declare_topic("in", 2).build()


def test_the_protocol_names_what_the_driver_calls():
    assert METHODS == ["advance_wall_clock", "close", "global_stores", "metrics", "partitions", "pipe", "pipe_many",
                       "source_topics", "store_tasks", "stores", "task_ids"]
    assert ATTRIBUTES == ["captured", "produced_topics"]


def test_the_local_engine_satisfies_the_protocol():
    with _driver() as driver:
        assert isinstance(driver._engine, LocalEngine) and isinstance(driver._engine, Engine)


def test_the_spark_engine_class_defines_every_method_of_the_protocol():
    """Checked on the class, without starting Spark (the Spark test below checks an instance)."""
    from streams_on_spark.runtime.spark.engine import SparkEngine
    assert [n for n in METHODS if not hasattr(SparkEngine, n)] == []
    init = inspect.getsource(SparkEngine.__init__)
    assert [n for n in ATTRIBUTES if f"self.{n}" not in init] == []


def test_an_engines_name_is_checked_against_the_one_table_of_engines():
    assert list(ENGINES) == ["local", "spark"] and PLUGIN_ENGINES == ("local", "spark")
    assert check_engine("spark") == "spark"
    with pytest.raises(ValueError, match="engine must be 'local' or 'spark', got 'flink'"):
        check_engine("flink")


def test_the_spark_engine_satisfies_the_protocol(spark_session):
    from streams_on_spark.runtime.spark.engine import SparkEngine
    with _driver("spark", spark_session) as driver:
        assert isinstance(driver._engine, SparkEngine) and isinstance(driver._engine, Engine)
        driver.create_input_topic("in", S, S).pipe_input("k", "v")
        record = driver.create_output_topic("out", S, S).read_key_value()
        assert (record.key, record.value) == ("k", "V")

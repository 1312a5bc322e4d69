"""A plain pytest test (no plugin fixture) whose processors, mappers and serdes live in the test module and in a helper
module beside it runs on the driver's Spark engine: the modules Spark's workers cannot import travel by value."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

HELPER = '''
"""A helper module beside the test module: a function and a serde of the user's own."""
from streams_on_spark import Serde


def shout(word):
    return word.upper() + "!"


class Reversed(Serde):
    """Text stored reversed."""

    def serialize(self, topic, value):
        return None if value is None else value[::-1].encode()

    def deserialize(self, topic, data):
        return None if data is None else data.decode()[::-1]
'''

TEST_MODULE = '''
"""Its own Processor and ValueMapper classes, the helper's function and serde; the driver on Spark, no fixture."""
import pytest
from pyspark import cloudpickle

import word_helpers
from streams_on_spark import Consumed, Processor, Produced, Serdes, StreamsBuilder, TopologyTestDriverBuilder
from streams_on_spark.runtime.spark import engine

S = Serdes.String()


class Words(Processor):
    def process(self, record):
        for word in record.value.split():
            self.context.forward(record.with_value(word))


class Shout:
    """A ValueMapper."""

    def __call__(self, value):
        return word_helpers.shout(value)


def run_on_spark():
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(S, word_helpers.Reversed()))
     .process(Words)
     .map_values(Shout())
     .to("shouts", Produced.with_(S, S)))
    driver = (TopologyTestDriverBuilder(builder.build()).with_config({"application.id": "user-code"})
              .declare_topic("sentences", 2).declare_topic("shouts", 2).with_engine("spark").build())
    with driver:
        driver.create_input_topic("sentences", S, word_helpers.Reversed()).pipe_input("doc", "to be")
        return driver.create_output_topic("shouts", S, S).read_values_to_list()


def test_without_shipping_the_workers_cannot_import_them(monkeypatch):
    monkeypatch.setattr(engine, "ship_user_code", lambda *objects: [])
    with pytest.raises(Exception) as failure:
        run_on_spark()
    assert "ModuleNotFoundError: No module named" in str(failure.value)


def test_the_test_module_and_its_helper_run_on_spark():
    assert run_on_spark() == ["TO!", "BE!"]
    assert {"test_user_code", "word_helpers"} <= set(cloudpickle.list_registry_pickle_by_value())
'''


def test_a_test_module_and_a_helper_beside_it_run_on_the_drivers_spark_engine(tmp_path: Path):
    """Must show (issue 26, item 11): a fresh pytest in a project of its own, run from another directory so that no
    Spark worker can import the test module or the helper; one Spark session for both tests."""
    tests = tmp_path / "project" / "tests"
    tests.mkdir(parents=True)
    (tests / "word_helpers.py").write_text(textwrap.dedent(HELPER))
    (tests / "test_user_code.py").write_text(textwrap.dedent(TEST_MODULE))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    report = tmp_path / "report.xml"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--rootdir={tests.parent}",
                           f"--junitxml={report}", str(tests / "test_user_code.py")],
                          cwd=elsewhere, env=env, capture_output=True, text=True, timeout=570)
    outcomes = {case.get("name"): [child.tag for child in case] for case in ET.parse(report).getroot().iter("testcase")}
    assert outcomes == {"test_without_shipping_the_workers_cannot_import_them": [],
                        "test_the_test_module_and_its_helper_run_on_spark": []}, done.stdout[-6000:]

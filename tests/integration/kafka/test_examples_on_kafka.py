"""The examples against the test broker: the three of them on Spark give what they give on the in-process driver,
and the README's spark-submit command for the word count runs as written (connector jars from ``--packages``)."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from streams_on_spark.runtime.spark.user_code import pickle_by_value

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_example_on_kafka", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pickle_by_value(module)              # loaded by path: Spark's workers cannot import it, so it travels by value
    return module


def test_the_examples_on_kafka_match_the_driver(spark, kafka_bootstrap, tmp_path):
    run_id = uuid.uuid4().hex[:8]
    for name in ("click_counts", "order_enrichment", "deduplication"):
        module = load(name)
        prefix = f"{name.replace('_', '-')}-{run_id}-"
        on_driver = module.lines(module.run(prefix, module.Run("local", 2)))
        on_kafka = module.lines(module.run(prefix, module.Run("spark", 2, bootstrap_servers=kafka_bootstrap,
                                                              checkpoint_dir=str(tmp_path / name), spark=spark)))
        assert on_driver, name
        assert on_kafka == on_driver, name


def readme_kafka_commands() -> str:
    """The commands of README's "Against Kafka" block after ``make setup kafka-up`` (what ``make test`` ran before
    pytest): the broker's address exported, then the spark-submit command."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("### Against Kafka", 1)[1].split("\n### ", 1)[0]
    block = re.search(r"^```\n(.*?)^```", section, re.S | re.M).group(1)
    first, rest = block.split("\n", 1)
    assert first.startswith("make setup kafka-up"), f"README's Against Kafka block should start the broker:\n{block}"
    return rest.rstrip()


def test_readme_spark_submit_command_runs_as_written(kafka_bootstrap, class_archive_env):
    commands = readme_kafka_commands()
    assert "--packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0" in commands
    assert 'export STREAMS_ON_SPARK_KAFKA="$(cat .deps/kafka-run/bootstrap)"' in commands
    written = ROOT / ".deps" / "kafka-run" / "bootstrap"
    if not written.is_file() or written.read_text().strip() != kafka_bootstrap:
        pytest.fail(f"README's block reads the broker's address from {written} (`make kafka-up` writes it), which "
                    f"does not name the test broker {kafka_bootstrap}: run the suite with `make test`", pytrace=False)
    run_id = uuid.uuid4().hex[:8]
    # as in a fresh shell: no activated venv, no PYSPARK_PYTHON; only this machine's loopback binding is added
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV", "PYTHONPATH",
                        "STREAMS_ON_SPARK_KAFKA")}
    env.update(PATH=path, SPARK_LOCAL_IP="127.0.0.1", **class_archive_env)
    args = f" --repeat 2 --input-topic readme-in-{run_id} --output-topic readme-out-{run_id}"
    result = subprocess.run(["bash", "-e", "-c", commands + args], capture_output=True, text=True, timeout=600,
                            env=env, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-2000:] + "\n--- stderr ---\n" + result.stderr[-6000:]
    assert "top 10 words: the=46" in result.stdout, result.stdout[-2000:]

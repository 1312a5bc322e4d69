"""The examples against the test broker: the three of them on Spark give what they give on the in-process driver,
and the README's spark-submit command for the word count runs as written (connector jars from ``--packages``)."""
from __future__ import annotations

import importlib.util
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


def test_readme_spark_submit_command_runs_as_written(documented, kafka_bootstrap):
    """The commands of README's "Against Kafka" block after ``make setup kafka-up`` (what ``make test`` ran before
    pytest): the broker's address exported, then the spark-submit command; PYTHONPATH of the test run dropped too."""
    setup, *commands = documented.commands(documented.block("README.md", "### Against Kafka"))
    assert setup.startswith("make setup kafka-up"), f"README's Against Kafka block should start the broker: {setup}"
    assert 'export STREAMS_ON_SPARK_KAFKA="$(cat .deps/kafka-run/bootstrap)"' in commands
    assert "--packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0" in commands[-1]
    documented.require_kafka_up(kafka_bootstrap)
    run_id = uuid.uuid4().hex[:8]
    args = f" --repeat 2 --input-topic readme-in-{run_id} --output-topic readme-out-{run_id}"
    result = documented.run("\n".join(commands) + args, PYTHONPATH="")
    assert result.returncode == 0, result.stdout[-2000:] + "\n--- stderr ---\n" + result.stderr[-6000:]
    assert "top 10 words: the=46" in result.stdout, result.stdout[-2000:]

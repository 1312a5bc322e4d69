"""README's "On a cluster" block runs as written: ``make dist``, the wheel copied to a zip, and spark-submit to the
standalone cluster (``make spark-cluster-up``) against the test broker, in a new user's shell (the ``documented``
fixture's: no activated venv, no PYSPARK_PYTHON or PYTHONPATH of the test run); only the placeholders are filled in
and the example given its own topics."""
from __future__ import annotations

import uuid

import pytest

pytestmark = [pytest.mark.cluster, pytest.mark.spark, pytest.mark.kafka]


def test_readme_cluster_block_runs_as_written(documented, spark_master, kafka_bootstrap):
    block = documented.block("README.md", "### On a cluster")
    assert "spark://<host>:7077" in block and "<address>" in block
    run_id = uuid.uuid4().hex[:8]
    script = (block.replace("spark://<host>:7077", spark_master).replace("<address>", kafka_bootstrap).rstrip()
              + f" --repeat 2 --input-topic readme-cluster-in-{run_id} --output-topic readme-cluster-out-{run_id}\n")
    result = documented.run(script, timeout_s=900, PYTHONPATH="")
    assert result.returncode == 0, result.stdout[-2000:] + "\n--- stderr ---\n" + result.stderr[-6000:]
    assert f"spark: master {spark_master}" in result.stdout, result.stdout[-2000:]
    assert "top 10 words: the=46" in result.stdout, result.stdout[-2000:]

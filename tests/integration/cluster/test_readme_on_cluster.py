"""README's "On a cluster" block runs as written: ``make dist``, the wheel copied to a zip, and spark-submit to the
standalone cluster (``make spark-cluster-up``) against the test broker, in a shell as a new user has it (no
activated venv, no PYSPARK_PYTHON or PYTHONPATH of the test run); only the placeholders are filled in and the
example given its own topics."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

pytestmark = [pytest.mark.cluster, pytest.mark.spark, pytest.mark.kafka]

ROOT = Path(__file__).resolve().parents[3]


def readme_cluster_block() -> str:
    """The command block of README's "On a cluster" section."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("### On a cluster", 1)[1].split("\n### ", 1)[0]
    return re.search(r"^```\n(.*?)^```", section, re.S | re.M).group(1)


def test_readme_cluster_block_runs_as_written(spark_master, kafka_bootstrap, class_archive_env):
    block = readme_cluster_block()
    assert "spark://<host>:7077" in block and "<address>" in block
    run_id = uuid.uuid4().hex[:8]
    script = (block.replace("spark://<host>:7077", spark_master).replace("<address>", kafka_bootstrap).rstrip()
              + f" --repeat 2 --input-topic readme-cluster-in-{run_id} --output-topic readme-cluster-out-{run_id}\n")
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV", "PYTHONPATH", "SPARK_HOME")}
    env.update(PATH=path, SPARK_LOCAL_IP="127.0.0.1", **class_archive_env)
    result = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True, timeout=900, env=env,
                            cwd=ROOT)
    assert result.returncode == 0, result.stdout[-2000:] + "\n--- stderr ---\n" + result.stderr[-6000:]
    assert f"spark: master {spark_master}" in result.stdout, result.stdout[-2000:]
    assert "top 10 words: the=46" in result.stdout, result.stdout[-2000:]

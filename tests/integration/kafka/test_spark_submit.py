"""The example runs under ``spark-submit`` (the one that ships with pyspark) against the test broker."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from streams_on_spark.connectors.kafka import kafka_jars

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
ROOT = Path(__file__).resolve().parents[3]


def test_wordcount_example_under_spark_submit(kafka_bootstrap, class_archive_env, tmp_path):
    spark_submit = Path(sys.executable).parent / "spark-submit"
    assert spark_submit.exists(), "pyspark's spark-submit should be installed beside the venv's python"
    jars = kafka_jars()
    assert jars, "run `make deps-spark-kafka` first"
    run = uuid.uuid4().hex[:8]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1", **class_archive_env}
    result = subprocess.run(
        [str(spark_submit), "--master", "local[2]", "--conf", "spark.ui.enabled=false", "--jars", ",".join(jars),
         str(ROOT / "examples" / "wordcount.py"), "--bootstrap-servers", kafka_bootstrap, "--repeat", "2",
         "--input-topic", f"submit-in-{run}", "--output-topic", f"submit-out-{run}"],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert result.returncode == 0, _failure(result.stderr)
    # the console says what a user needs: under 30 lines, Spark's and kafka-python's INFO left out, and nothing from
    # pyspark 4.2's transformWithStateInPandas driver worker, which prints "Starting Streaming
    # TransformWithStateInPandas Python worker." on each query start before any code of the library runs in it, to
    # the JVM's stderr: under a local master its stdout is /dev/null (session.py's forked workers, docs/logging.md)
    console = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert not [line for line in console if "TransformWithStateInPandas Python worker" in line], "\n".join(console)
    assert len(console) < 30, "\n".join(console)
    assert not any(" INFO kafka." in line for line in console), "\n".join(console)
    # the bundled text has "the" 23 times; sent twice
    assert "top 10 words: the=46" in result.stdout, result.stdout[-1500:] + "\n--- stderr ---\n" + result.stderr[-6000:]


def _failure(stderr: str) -> str:
    """The lines of a failed run that say what failed (exceptions and their causes), then the end of stderr."""
    said = [line for line in stderr.splitlines()
            if ("Exception" in line or "Error" in line or line.startswith("Caused by")) and not line.strip().startswith("at ")]
    return "\n".join(said[:40]) + "\n--- end of stderr ---\n" + stderr[-2000:]

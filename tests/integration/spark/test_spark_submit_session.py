"""Under spark-submit the application runs in the session spark-submit configured: its --master and --conf win."""
from __future__ import annotations

import os
import sys
from pathlib import Path
import subprocess

import pytest

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[3]


def test_spark_submit_master_and_conf_are_what_the_application_runs_with(tmp_path):
    spark_submit = Path(sys.executable).parent / "spark-submit"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1"}
    result = subprocess.run(
        [str(spark_submit), "--master", "local[1]", "--conf", "spark.app.name=wordcount-as-submitted",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.host=127.0.0.1",
         str(ROOT / "examples" / "wordcount.py"), "--repeat", "1", "--partitions", "2",
         "--topics-dir", str(tmp_path / "topics")],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-2000:] + "\n--- stderr ---\n" + result.stderr[-4000:]
    assert "spark: master local[1], app wordcount-as-submitted" in result.stdout
    assert "top 10 words: the=23" in result.stdout

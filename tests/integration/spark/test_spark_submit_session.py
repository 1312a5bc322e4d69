"""Under spark-submit the application runs in the session spark-submit configured: its --master and its
configuration (here spark-defaults.conf) win. The command is docs/running-on-spark.md's embedded-topics block, run as
written in a shell as a new user has it (no activated venv, no PYSPARK_PYTHON of the test run), the example given a
small input."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[3]


def running_on_spark_block() -> str:
    """The first command block of docs/running-on-spark.md's "spark-submit" section (embedded topics, no Kafka)."""
    page = (ROOT / "docs" / "running-on-spark.md").read_text(encoding="utf-8")
    section = page.split("## spark-submit", 1)[1].split("\n## ", 1)[0]
    return re.search(r"^```console\n(.*?)^```", section, re.S | re.M).group(1)


def test_spark_submit_master_and_conf_are_what_the_application_runs_with(tmp_path):
    block = running_on_spark_block()
    assert "--master 'local[2]' examples/wordcount.py" in block, block
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("spark.app.name wordcount-as-submitted\nspark.ui.enabled false\n"
                                              "spark.driver.host 127.0.0.1\n")
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")}
    env.update(PATH=path, SPARK_LOCAL_IP="127.0.0.1", SPARK_CONF_DIR=str(conf))
    # the block's commands without their comments, the example's arguments after the last
    script = "\n".join(line.split("  #")[0].rstrip() for line in block.splitlines())
    script += f" --repeat 1 --partitions 2 --topics-dir {tmp_path / 'topics'}\n"
    result = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True, timeout=600, env=env,
                            cwd=ROOT)
    assert result.returncode == 0, result.stdout[-2000:] + "\n--- stderr ---\n" + result.stderr[-4000:]
    assert "spark: master local[2], app wordcount-as-submitted" in result.stdout
    assert "top 10 words: the=23" in result.stdout

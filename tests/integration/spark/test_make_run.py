"""``make run`` (README's first command) as a new user sees it: the word count on Spark, its whole console within a
line budget, and no line from Spark's Python workers (pyspark 4.2's ``transformWithStateInPandas`` driver worker
prints its own debug lines on every query start unless the library keeps them off the console)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[3]
LINE_BUDGET = 25


def test_make_run_prints_the_counts_in_a_short_console_without_sparks_python_workers():
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    result = subprocess.run(["make", "run"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    console = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    shown = "\n".join(console)
    assert result.returncode == 0, result.stdout[-2000:] + "\n--- stderr ---\n" + result.stderr[-4000:]
    assert "top 10 words: the=1150" in result.stdout, shown
    assert not [line for line in console if "Python worker" in line], shown
    assert len(console) <= LINE_BUDGET, shown

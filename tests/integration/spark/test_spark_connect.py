"""KafkaStreams in a Spark Connect session (``SparkSession.builder.remote("local[2]")``, pyspark's ``connect``
extras): the topology runs, its output and stores equal the classic session's. In a separate process: a Connect
session starts its own local Spark server, which cannot share the JVM of the suite's classic session."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark
APP = Path(__file__).parent / "apps" / "connect_app.py"


def test_kafka_streams_runs_in_a_spark_connect_session(fast_jvm_env, tmp_path):
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1", **fast_jvm_env}
    run = subprocess.run([sys.executable, str(APP)], env=env, capture_output=True, text=True, cwd=tmp_path,
                         timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert "session pyspark.sql.connect.session" in lines
    result = json.loads(next(line for line in lines if line.startswith("result "))[len("result "):])
    assert result["store"] == {"ann": 3, "bob": 2, "cid": 1}
    assert result["remote_refused"] == "yes"   # a remote checkpoint's topology.json, read and written through Spark
    assert sorted(map(tuple, result["outputs"])) == [("ann", 1), ("ann", 2), ("ann", 3), ("bob", 1), ("bob", 2),
                                                    ("cid", 1)]

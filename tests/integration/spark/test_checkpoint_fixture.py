"""A checkpoint written by an earlier version of the library resumes: ``tests/data/checkpoint-fixture`` holds the
crash application's topics and checkpoints after a run over 300 lines (``make checkpoint-fixture`` wrote it; the
executors' local stores were not kept, so the restart rebuilds them from the changelog in Spark's checkpoint). Copied
elsewhere, given 200 more lines and drained, it must end with exactly what one uninterrupted run over all 500 lines
ends with: the stores, every count update once and in order, the repartition topic. A change of the task snapshot,
the local stores' changelog or the topics' layout that breaks old checkpoints fails here."""
from __future__ import annotations

import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from streams_on_spark.connectors.embedded import EmbeddedTopics

pytestmark = pytest.mark.spark
APPS = Path(__file__).parent / "apps"
FIXTURE = Path(__file__).resolve().parents[2] / "data" / "checkpoint-fixture"
_spec = importlib.util.spec_from_file_location("crash_app", APPS / "crash_app.py")
crash_app = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(crash_app)


def test_a_checkpoint_of_the_committed_fixture_resumes_exactly(tmp_path):
    meta = json.loads((FIXTURE / "fixture.json").read_text())
    shutil.copytree(FIXTURE / "topics", tmp_path / "topics")
    shutil.copytree(FIXTURE / "checkpoints", tmp_path / "checkpoints")
    first = crash_app.chunk(random.Random(meta["seed"]), 0, meta["lines"])
    more = crash_app.chunk(random.Random(7), meta["lines"], 200)
    topics = EmbeddedTopics(str(tmp_path / "topics"))
    topics.append(crash_app.records("", more))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    run = subprocess.run([sys.executable, str(APPS / "crash_app.py"), str(tmp_path / "topics"),
                          str(tmp_path / "checkpoints"), str(tmp_path / "state"), "--drain", "--app-id",
                          meta["app_id"]], env=env, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    stores = json.loads(next(line for line in run.stdout.splitlines() if line.startswith("stores "))[7:])

    def read(topic: str, partitions: int) -> list[tuple[bytes, bytes]]:
        return [(r.key, r.value) for p in range(partitions)
                for r in topics.read(topic, p, 0, topics.end_offset(topic, p))]
    crash_app.verify(first + more, stores, read, "", meta["app_id"], exactly_once=True)
    # written with one state partition per task, the checkpoints keep them (a new one of 4 tasks would get the
    # session's 2)
    def state_partitions(offsets: Path) -> set[str]:
        return {json.loads(f.read_text().splitlines()[1])["conf"]["spark.sql.shuffle.partitions"]
                for f in offsets.iterdir() if f.name.isdigit()}
    assert state_partitions(FIXTURE / "checkpoints" / "subtopology-1" / "offsets") == {"4"}
    for checkpoint in (FIXTURE / "checkpoints").glob("subtopology-*"):
        resumed = tmp_path / "checkpoints" / checkpoint.name / "offsets"
        assert len(list(resumed.iterdir())) > len(list((checkpoint / "offsets").iterdir()))
        assert state_partitions(resumed) == state_partitions(checkpoint / "offsets")


def test_the_fixture_holds_the_first_run_only():
    """The fixture is what its generator wrote: the stores after the first 300 lines (not yet the 200 more)."""
    meta = json.loads((FIXTURE / "fixture.json").read_text())
    first = crash_app.chunk(random.Random(meta["seed"]), 0, meta["lines"])
    assert sum(meta["stores"]["counts"].values()) == sum(len(text.split()) for _, text in first)

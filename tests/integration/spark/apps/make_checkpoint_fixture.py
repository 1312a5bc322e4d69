"""Write the checkpoint fixture (``tests/data/checkpoint-fixture``): the crash application's word counts over embedded
topics, run once to the end of its input with the current code. Future versions must keep resuming from it
(``tests/integration/spark/test_checkpoint_fixture.py``); regenerate it only when a format change is deliberate and
an upgrade path exists for the old one.

``python make_checkpoint_fixture.py DIR`` (``make checkpoint-fixture``).
"""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import crash_app
from streams_on_spark import __version__
from streams_on_spark.connectors.embedded import EmbeddedTopics

APP_ID = "fixture"
SEED, LINES = 2026, 300


def main(out: Path) -> None:
    shutil.rmtree(out / "topics", ignore_errors=True)
    shutil.rmtree(out / "checkpoints", ignore_errors=True)
    topics = EmbeddedTopics(str(out / "topics"))
    topics.create_topic("sentences", 1)
    for name in crash_app.OUTPUTS:
        topics.create_topic(name, 4)
    sent = crash_app.chunk(random.Random(SEED), 0, LINES)
    topics.append(crash_app.records("", sent))
    state = out / "state-not-kept"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    run = subprocess.run([sys.executable, crash_app.__file__, str(out / "topics"), str(out / "checkpoints"),
                          str(state), "--drain", "--app-id", APP_ID], env=env, capture_output=True, text=True)
    shutil.rmtree(state, ignore_errors=True)   # the executors' local stores: a restart rebuilds them
    if run.returncode != 0:
        raise SystemExit(run.stderr[-3000:])
    stores = json.loads(next(l for l in run.stdout.splitlines() if l.startswith("stores "))[len("stores "):])
    (out / "fixture.json").write_text(json.dumps(
        {"library_version": __version__, "app_id": APP_ID, "seed": SEED, "lines": LINES, "stores": stores},
        indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())

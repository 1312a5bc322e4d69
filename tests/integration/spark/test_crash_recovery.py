"""Killed with SIGKILL at random moments, again and again, an application on Spark (``local[2,4]``) loses and doubles
nothing: after a final run drains the input, every store holds the counts of an uninterrupted run and every count
update was emitted exactly once, in order (embedded topics: appends are idempotent per batch).

Each kill can land anywhere: in a task between its local RocksDB commit and Spark's state commit (the next run finds
the local copy ahead of Spark and rebuilds it from the changelog), while a repartition or output append is half
done, during a changelog compaction, or while Spark writes its offsets or state files.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from streams_on_spark import Serdes
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.connectors.partitioner import partition_for_key
from streams_on_spark.connectors.records import ProducerRecord

pytestmark = pytest.mark.spark
APP = Path(__file__).parent / "apps" / "crash_app.py"
WORDS = [f"w{i}" for i in range(40)]
KILLS = 4
WINDOW = RETENTION = 60_000   # the app's windows: one minute, no grace
S, L = Serdes.String(), Serdes.Long()


def _chunk(rng: random.Random, topics: EmbeddedTopics, first: int, lines: int) -> list[tuple[int, str]]:
    """Append ``lines`` sentences (timestamps a second apart from line ``first`` on); what was appended."""
    out = [(first + i, " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 8)))) for i in range(lines)]
    topics.append([ProducerRecord("sentences", 0, 1_000 * n, f"line-{n}".encode(), text.encode(), ())
                   for n, text in out])
    return out


def _launch(tmp_path: Path, run: int, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1"}
    with open(tmp_path / f"run-{run}.log", "w") as log:   # Spark's output, for a failure's message
        return subprocess.Popen([sys.executable, str(APP), str(tmp_path / "topics"), str(tmp_path / "checkpoints"),
                                 str(tmp_path / "state"), *args], stdout=subprocess.PIPE, stderr=log, text=True,
                                env=env, cwd=tmp_path, start_new_session=True)


def _log(tmp_path: Path, run: int) -> str:
    return (tmp_path / f"run-{run}.log").read_text()[-3000:]


def _wait_started(proc: subprocess.Popen, log: Path, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.strip() == "started":
            return
        if not line and proc.poll() is not None:
            raise AssertionError(f"the application exited with {proc.returncode}: {log.read_text()[-3000:]}")
    raise AssertionError("the application did not start")


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the application and everything it started (Spark's JVM, its Python workers)."""
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    raise AssertionError("processes of the killed application are still running")


def test_killed_at_random_moments_nothing_is_lost_or_doubled(tmp_path):
    seed = int(os.environ.get("CRASH_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    topics = EmbeddedTopics(str(tmp_path / "topics"))
    topics.create_topic("sentences", 1)
    for name in ("counts-out", "window-counts-out"):
        topics.create_topic(name, 4)
    sent: list[tuple[int, str]] = _chunk(rng, topics, 0, 200)
    for kill in range(KILLS):
        proc = _launch(tmp_path, kill)
        try:
            _wait_started(proc, tmp_path / f"run-{kill}.log")
            deadline = time.monotonic() + rng.uniform(0.5, 8.0)
            while time.monotonic() < deadline:   # more input arrives while it runs
                sent += _chunk(rng, topics, len(sent), rng.randrange(50, 400))
                time.sleep(rng.uniform(0.0, 1.0))
        finally:
            _kill_group(proc)
    drain = _launch(tmp_path, KILLS, "--drain")
    out, _ = drain.communicate(timeout=600)
    assert drain.returncode == 0, f"seed {seed}: {_log(tmp_path, KILLS)}"
    stores = json.loads(next(line for line in out.splitlines() if line.startswith("stores "))[len("stores "):])

    words = Counter(word for _, text in sent for word in text.split())
    windows = Counter((word, n * 1000 // WINDOW * WINDOW) for n, text in sent for word in text.split())
    assert stores["counts"] == dict(words), f"seed {seed}"
    # a task's window store keeps the windows starting after its last window start - retention (size + grace)
    task_of = {word: partition_for_key(S.serialize("by-word", word), 4) for word in words}
    last = {task_of[word]: start for (word, start) in sorted(windows, key=lambda w: w[1])}
    kept = {f"{word}@{start}": n for (word, start), n in windows.items() if start > last[task_of[word]] - RETENTION}
    assert stores["window-counts"] == kept, f"seed {seed}"
    assert len(kept) < len(windows)   # windows expired along the way, by whole segments
    windows = Counter({f"{word}@{start}": n for (word, start), n in windows.items()})
    for topic, expected in (("counts-out", words), ("window-counts-out", windows)):
        updates: dict[str, list[int]] = {}
        for p in range(4):
            for r in topics.read(topic, p, 0, topics.end_offset(topic, p)):
                updates.setdefault(S.deserialize(topic, r.key), []).append(L.deserialize(topic, r.value))
        doubled_or_lost = {k: v for k, v in updates.items() if v != list(range(1, expected[k] + 1))}
        assert not doubled_or_lost and set(updates) == set(expected), f"seed {seed}, {topic}: {doubled_or_lost}"

"""Killed with SIGKILL at random moments, again and again, an application on Spark (``local[2,4]``) loses nothing,
and under ``exactly_once_v2`` doubles nothing: after a final run drains the input, every store holds the counts of an
uninterrupted run, every count update reached the output topic once and in order, and the repartition topic holds
every word once. Over embedded topics (appends idempotent per task and batch) and over Kafka (one transaction per task
and batch, read back with ``isolation.level=read_committed``); over Kafka with ``at_least_once``, nothing is lost and
a replayed batch may be written twice: to the output topics (a consumer sees an update again) and to the repartition
topic, whose duplicates the counting tasks count again, as Kafka Streams' do (``crash_app.verify``).

``CRASH_SEED=<seed>`` replays a failure's random choices (input, kill moments); the kills land at other moments of
the application's work all the same, so a seed reproduces a failure only sometimes. A failure names the seed, what
each run did before its kill, and what was lost or doubled.

Each kill takes the whole process group (driver, Spark's JVM, its Python workers) and can land anywhere: while the
application starts, in a task between its local RocksDB commit and Spark's state commit (the next run finds the local
copy ahead of Spark and rebuilds it from the changelog), in the middle of an append or a transaction, during a
changelog compaction, or while Spark writes its offsets or state files.
"""
from __future__ import annotations

import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Callable

import pytest

from streams_on_spark import Serdes
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.records import ProducerRecord

pytestmark = pytest.mark.spark
APP = Path(__file__).parent / "apps" / "crash_app.py"
_spec = importlib.util.spec_from_file_location("crash_app", APP)
crash_app = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(crash_app)
S, L = Serdes.String(), Serdes.Long()


class Topics:
    """Where the application's topics are: create, append, and read back (read_committed on Kafka)."""

    def __init__(self, create: Callable[[str, int], None], append: Callable[[list[ProducerRecord]], None],
                 read: Callable[[str, int], list[tuple[bytes, bytes, int]]], app_args: list[str]) -> None:
        self.create, self.append, self.read, self.app_args = create, append, read, app_args


@pytest.fixture
def embedded_topics(tmp_path) -> Topics:
    topics = EmbeddedTopics(str(tmp_path / "topics"))

    def read(topic: str, partitions: int) -> list[tuple[bytes, bytes, int]]:
        return [(r.key, r.value, r.timestamp) for p in range(partitions)
                for r in topics.read(topic, p, 0, topics.end_offset(topic, p))]
    return Topics(topics.create_topic, topics.append, read, [str(tmp_path / "topics")])


@pytest.fixture
def kafka_topics(kafka_bootstrap, read_topic, unavailable) -> Topics:
    from streams_on_spark.connectors.kafka import KafkaConnector, kafka_jars
    if not kafka_jars():
        unavailable("the Spark Kafka connector jars are missing: run `make deps-spark-kafka`")
    connector = KafkaConnector(kafka_bootstrap, timeout_ms=10_000)
    yield Topics(connector.create_topic, connector.append,
                 lambda topic, partitions: [(r.key, r.value, r.timestamp)
                                            for r in read_topic(topic, partitions, committed=True)],
                 [kafka_bootstrap, "--kafka"])
    connector.close()


def _chunk(rng: random.Random, topics: "Topics", prefix: str, first: int, lines: int) -> list[tuple[int, str]]:
    """Append ``lines`` random sentences from line ``first`` on; what was appended."""
    out = crash_app.chunk(rng, first, lines)
    topics.append(crash_app.records(prefix, out))
    return out


def _launch(tmp_path: Path, run: int, args: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1"}
    with open(tmp_path / f"run-{run}.log", "w") as log:   # Spark's output, for a failure's message
        return subprocess.Popen([sys.executable, str(APP), *args], stdout=subprocess.PIPE, stderr=log, text=True,
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


@pytest.mark.parametrize("where, guarantee, kills", [
    ("embedded", "exactly_once_v2", 10),
    pytest.param("kafka", "exactly_once_v2", 10, marks=pytest.mark.kafka),
    pytest.param("kafka", "at_least_once", 4, marks=pytest.mark.kafka),
])
def test_killed_at_random_moments_nothing_is_lost_or_doubled(request, tmp_path, where, guarantee, kills):
    seed = int(os.environ.get("CRASH_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    topics: Topics = request.getfixturevalue(f"{where}_topics")
    app_id = f"crash-{uuid.uuid4().hex[:8]}"
    prefix = "" if where == "embedded" else f"{app_id}-"   # Kafka: one broker for the whole suite
    topics.create(f"{prefix}sentences", 1)
    for name in crash_app.OUTPUTS:
        topics.create(f"{prefix}{name}", 4)
    args = [*topics.app_args[:1], str(tmp_path / "checkpoints"), str(tmp_path / "state"), *topics.app_args[1:],
            "--guarantee", guarantee, "--app-id", app_id, "--prefix", prefix]
    sent: list[tuple[int, str]] = _chunk(rng, topics, prefix, 0, 200)
    moments: list[str] = []   # what each run did before its kill, for a failure's message
    for kill in range(kills):
        proc = _launch(tmp_path, kill, args)
        launched, first = time.monotonic(), len(sent)
        try:
            if rng.random() < 0.2:   # now and then while it starts
                time.sleep(rng.uniform(1.0, 6.0))
                moments.append(f"run {kill}: killed while starting, {time.monotonic() - launched:.1f} s after launch")
                continue
            _wait_started(proc, tmp_path / f"run-{kill}.log")
            started = time.monotonic()
            deadline = started + rng.uniform(0.5, 5.0)
            while time.monotonic() < deadline:   # more input arrives while it runs
                sent += _chunk(rng, topics, prefix, len(sent), rng.randrange(50, 400))
                time.sleep(rng.uniform(0.0, 1.0))
            moments.append(f"run {kill}: started {started - launched:.1f} s after launch, lines "
                           f"{first}-{len(sent) - 1} appended, killed {time.monotonic() - started:.1f} s after it "
                           "started")
        except AssertionError as e:   # it did not start
            raise AssertionError(f"seed {seed}, run {kill}: {e}") from None
        finally:
            _kill_group(proc)
    what = f"seed {seed}, {len(sent)} lines sent; {'; '.join(moments)}; logs in {tmp_path}"
    drain = _launch(tmp_path, kills, [*args, "--drain"])
    out, _ = drain.communicate(timeout=600)
    assert drain.returncode == 0, f"{what}: {_log(tmp_path, kills)}"
    stores = json.loads(next(line for line in out.splitlines() if line.startswith("stores "))[len("stores "):])
    try:
        crash_app.verify(sent, stores, topics.read, prefix, app_id, guarantee == "exactly_once_v2")
    except AssertionError as e:
        raise AssertionError(f"{what}: {e}") from None


def _expect_clean_exit(proc: subprocess.Popen, log: Path, code: int) -> None:
    """The application exits with ``code`` within a minute, and wrote no traceback (py4j's or Python's)."""
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise AssertionError(f"the application did not close within 60 s: {log.read_text()[-3000:]}")
    text = log.read_text()
    assert proc.returncode == code, text[-3000:]
    assert "Traceback" not in text and "py4j" not in text, text[-5000:]


def test_sigterm_and_ctrl_c_close_the_application_quietly_and_the_next_run_goes_on(embedded_topics, tmp_path):
    """SIGTERM to the application's process (a service manager), then SIGINT to its whole process group (Ctrl-C in
    a terminal): each time it closes (batches in flight finish) and exits with 128 + the signal, no traceback; a
    last run drains, and every count update is there exactly once."""
    rng = random.Random(7)
    topics = embedded_topics
    topics.create("sentences", 1)
    for name in crash_app.OUTPUTS:
        topics.create(name, 4)
    args = [*topics.app_args, str(tmp_path / "checkpoints"), str(tmp_path / "state"), "--guarantee",
            "exactly_once_v2"]
    sent = _chunk(rng, topics, "", 0, 300)
    for run, (signum, to_group) in enumerate(((signal.SIGTERM, False), (signal.SIGINT, True))):
        proc = _launch(tmp_path, run, args)
        try:
            _wait_started(proc, tmp_path / f"run-{run}.log")
            sent += _chunk(rng, topics, "", len(sent), 300)
            time.sleep(2.0)
            if to_group:
                os.killpg(proc.pid, signum)
            else:
                proc.send_signal(signum)
            _expect_clean_exit(proc, tmp_path / f"run-{run}.log", 128 + signum)
        finally:
            if proc.poll() is None:
                _kill_group(proc)
    drain = _launch(tmp_path, 2, [*args, "--drain"])
    out, _ = drain.communicate(timeout=600)
    assert drain.returncode == 0, _log(tmp_path, 2)
    words = Counter(word for _, text in sent for word in text.split())
    updates: dict[str, list[int]] = {}
    for key, value, _ in topics.read("counts-out", 4):
        updates.setdefault(S.deserialize("c", key), []).append(L.deserialize("c", value))
    assert updates == {word: list(range(1, n + 1)) for word, n in words.items()}

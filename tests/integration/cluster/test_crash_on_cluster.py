"""The crash test on the standalone cluster: the application, spark-submitted with the library shipped as a zip and
``processing.guarantee=exactly_once_v2`` over Kafka, has its driver (spark-submit's whole process group) killed with
SIGKILL at random moments while input arrives, and is submitted again on the same checkpoint each time. The executors
of a killed driver live on for a while (until the master notices): tasks of the old and the new run overlap, and the
transactional producers of the new run fence the old ones. After a last run drains the input, a ``read_committed``
consumer sees every count update once and in order, and the stores hold an uninterrupted run's counts."""
from __future__ import annotations

import importlib.util
import json
import os
import random
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from streams_on_spark.connectors.kafka import KafkaConnector, kafka_jars

pytestmark = [pytest.mark.cluster, pytest.mark.spark, pytest.mark.kafka]
APP = Path(__file__).resolve().parents[1] / "spark" / "apps" / "crash_app.py"
_spec = importlib.util.spec_from_file_location("crash_app", APP)
crash_app = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(crash_app)
KILLS = 10


def test_driver_killed_at_random_moments_nothing_is_lost_or_doubled(spark_submit, library_py_files, kafka_bootstrap,
                                                                    read_topic, tmp_path):
    seed = int(os.environ.get("CRASH_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    app_id = f"cluster-crash-{uuid.uuid4().hex[:8]}"
    prefix = f"{app_id}-"
    connector = KafkaConnector(kafka_bootstrap, timeout_ms=10_000)
    connector.create_topic(f"{prefix}sentences", 1)
    for name in crash_app.OUTPUTS:
        connector.create_topic(f"{prefix}{name}", 4)
    sent = crash_app.chunk(rng, 0, 200)
    connector.append(crash_app.records(prefix, sent))
    args = [kafka_bootstrap, str(tmp_path / "checkpoints"), str(tmp_path / "state"), "--kafka", "--master", "submit",
            "--guarantee", "exactly_once_v2", "--app-id", app_id, "--prefix", prefix]
    submit = {"py_files": [library_py_files], "timeout_s": 600, "env": {"PYTHONPATH": str(library_py_files)},
              "conf": {"spark.jars": ",".join(kafka_jars()), "spark.task.maxFailures": "4"}}
    stdout = tmp_path / "crash_app.stdout"
    running = 0   # runs killed after they started processing
    for kill in range(KILLS):
        moment: dict[str, float] = {}
        if rng.random() < 0.2:   # now and then while it starts
            moment["at"] = time.monotonic() + rng.uniform(2.0, 10.0)

        def feed_then_kill(proc: subprocess.Popen) -> None:
            if "at" not in moment:
                if stdout.exists() and "started" in stdout.read_text():
                    moment["at"] = time.monotonic() + rng.uniform(0.5, 4.0)
                return
            if time.monotonic() >= moment["at"]:
                moment["started"] = stdout.exists() and "started" in stdout.read_text()
                os.killpg(proc.pid, signal.SIGKILL)
            elif rng.random() < 0.25:   # more input arrives while it runs
                more = crash_app.chunk(rng, len(sent), rng.randrange(50, 300))
                connector.append(crash_app.records(prefix, more))
                sent.extend(more)

        submission = spark_submit(APP, *args, while_running=feed_then_kill, **submit)
        assert submission.returncode == -signal.SIGKILL, f"seed {seed}, run {kill}: {submission.failure()}"
        running += bool(moment.get("started"))
    assert running >= 3, f"seed {seed}: only {running} of {KILLS} runs were killed while processing"
    drain = spark_submit(APP, *args, "--drain", **submit)
    assert drain.returncode == 0, f"seed {seed}: {drain.failure()}"
    assert drain.executor_pids_seen, "no executor ran on the cluster"
    stores = json.loads(drain.lines("stores ")[-1])
    connector.close()
    read = lambda topic, partitions: [(r.key, r.value) for r in read_topic(topic, partitions, committed=True)]  # noqa: E731
    try:
        crash_app.verify(sent, stores, read, prefix, app_id, exactly_once=True)
    except AssertionError as e:
        raise AssertionError(f"seed {seed}: {e}") from None

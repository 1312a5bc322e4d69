"""A broker outage on the console of a process using Kafka through the library: one line when Kafka becomes
unreachable and one when it is reachable again, not kafka-python's WARNING and ERROR for every retry (~5 a second).
The broker is one of the test's own (the suite's shared broker stays up).

A short outage proves what a long one would. While the broker is down a client's life is a sequence of reconnect
cycles: an attempt fails, the client waits its reconnect backoff (``reconnect.backoff.ms``, doubled on each failure up
to ``reconnect.backoff.max.ms``, 1 s by default here) and tries again. Once the backoff has reached its maximum, every
further cycle is the same as the one before, so a 60 s outage only adds more identical cycles. The tests lower the
backoff (50 ms, at most 200 ms) and hold the broker down for OUTAGE_S more than its stop and start take (seconds to tens
of seconds on a busy machine): the clients go through the whole growth of the backoff and then many capped cycles,
each failed attempt a kafka-python ERROR or WARNING that the library keeps off the console; the process application
counts them (apps/outage_app.py) and the test requires several at the maximum, with still one line per outage and
one per recovery."""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.kafka
APP = Path(__file__).parent / "apps" / "outage_app.py"
SPARK_APP = Path(__file__).parent / "apps" / "outage_spark_app.py"
OUTAGE_S = 3
RECONNECT_BACKOFF_MS, RECONNECT_BACKOFF_MAX_MS = 50, 200
MIN_CAPPED_CYCLES = 5   # failed attempts after the backoff reached its maximum: what a longer outage repeats


def test_an_outage_and_its_recovery_are_one_line_each(own_broker):
    app = subprocess.Popen([sys.executable, str(APP), own_broker.bootstrap, str(RECONNECT_BACKOFF_MS),
                            str(RECONNECT_BACKOFF_MAX_MS)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert app.stdout.readline() == "ready\n", app.stderr.read() if app.poll() is not None else "no 'ready'"
        own_broker.down()
        time.sleep(OUTAGE_S)
        own_broker.up()
        out, console = app.communicate(timeout=120)
    finally:
        if app.poll() is None:
            app.kill()
            app.communicate()
    assert app.returncode == 0, console
    assert out.startswith("recovered after "), out + console
    failed_calls, failed_attempts = int(out.split()[2]), int(out.split()[5])
    assert failed_calls >= OUTAGE_S, out   # a call every 0.2 s, each failing after up to 2 s
    # the backoff grows 50, 100, 200 ms in three failures; from the fourth on every cycle is a capped one
    assert failed_attempts >= 3 + MIN_CAPPED_CYCLES, out
    ours = f"WARNING streams_on_spark.connectors.kafka_config: Kafka at {own_broker.bootstrap} is"
    lines = console.splitlines()
    assert len(lines) == 2, console
    assert lines[0].startswith(f"{ours} unreachable (") and lines[0].endswith("); retrying"), console
    assert lines[1] == f"{ours} reachable again", console


def test_a_spark_application_waiting_on_a_broker_that_went_down_says_so_once(own_broker, tmp_path):
    """Spark's Kafka source waits for the broker in the JVM, whose clients' warnings are kept off the console: the
    library's broker watch says it, one line when the outage is noticed and one when the broker is back."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    app = subprocess.Popen([sys.executable, str(SPARK_APP), own_broker.bootstrap, str(tmp_path / "state"),
                            str(RECONNECT_BACKOFF_MS), str(RECONNECT_BACKOFF_MAX_MS)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    console: "queue.Queue[str]" = queue.Queue()
    reader = threading.Thread(target=lambda: [console.put(line) for line in app.stderr], daemon=True)
    reader.start()
    ours = f"WARNING streams_on_spark.connectors.kafka_config: Kafka at {own_broker.bootstrap} is"
    lines: list[str] = []

    def until(text: str, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = console.get(timeout=1)
            except queue.Empty:
                continue
            lines.append(line.rstrip("\n"))
            if lines[-1].startswith(f"{ours} {text}"):
                return True
        return False

    try:
        if app.stdout.readline() != "ready\n":
            app.wait(timeout=60)
            reader.join(timeout=10)
            pytest.fail("no 'ready':\n" + "".join(console.queue))
        own_broker.down()
        assert until("unreachable (", 60), "\n".join(lines)   # the queries stalled 5 s, then the probe says it
        time.sleep(OUTAGE_S)
        own_broker.up()
        assert until("reachable again", 60), "\n".join(lines)
        app.send_signal(signal.SIGTERM)   # closes the application
        app.wait(timeout=120)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    reader.join(timeout=10)
    while not console.empty():
        lines.append(console.get().rstrip("\n"))
    mine = [line for line in lines if line.startswith(ours)]
    assert len(mine) == 2, "\n".join(lines)
    assert mine[0].endswith("); retrying") and mine[1] == f"{ours} reachable again", "\n".join(lines)
    # and nothing else says it: not the tasks' producers (librdkafka's "FAIL [...] Connect to ... failed" at ERROR,
    # about twice a second from each Python worker's producer while the broker was down), no ERROR at all
    assert not [line for line in lines if line.startswith("ERROR") or " FAIL [" in line], "\n".join(lines)

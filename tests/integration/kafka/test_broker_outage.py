"""A broker outage on the console of a process using Kafka through the library: one line when Kafka becomes
unreachable and one when it is reachable again, not kafka-python's WARNING and ERROR for every retry (~5 a second).
The broker is one of the test's own (the suite's shared broker stays up); 10 s of outage show the retries as well as
60 would (the connector's reconnect backoff is at most 1 s)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.kafka
APP = Path(__file__).parent / "apps" / "outage_app.py"
OUTAGE_S = 10


def test_an_outage_and_its_recovery_are_one_line_each(own_broker):
    app = subprocess.Popen([sys.executable, str(APP), own_broker.bootstrap], stdout=subprocess.PIPE,
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
    assert int(out.split()[2]) >= OUTAGE_S, out   # a call every 0.2 s, each failing after up to 2 s
    ours = f"WARNING streams_on_spark.connectors.kafka_config: Kafka at {own_broker.bootstrap} is"
    lines = console.splitlines()
    assert len(lines) == 2, console
    assert lines[0].startswith(f"{ours} unreachable (") and lines[0].endswith("); retrying"), console
    assert lines[1] == f"{ours} reachable again", console

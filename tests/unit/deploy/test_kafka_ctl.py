"""deps/kafka_ctl.py, `make kafka-up`'s broker control: a second `kafka-up` while the first is still starting the
broker waits for it and reports the same broker, instead of failing on the bootstrap file the first has not written
yet."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("kafka_ctl", ROOT / "deps" / "kafka_ctl.py")
kafka_ctl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kafka_ctl)


@pytest.fixture
def starting_broker(tmp_path):
    """A run dir whose broker process exists (its command line names ``kafka.Kafka`` and the run's config, as a real
    one's does) and has no bootstrap file yet: what another kafka-up leaves while the broker starts."""
    run, jars = tmp_path / "run", tmp_path / "jars"
    run.mkdir()
    jars.mkdir()
    (jars / "kafka_2.13-4.3.1.jar").write_bytes(b"")
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "kafka.Kafka",
                             str(run / "server.properties")])
    (run / "broker.pid").write_text(f"{proc.pid}\n")
    deadline = time.monotonic() + 30
    while not kafka_ctl.is_our_broker(proc.pid, run):   # until the child has exec'd its command line
        assert time.monotonic() < deadline, "the stand-in broker did not start"
        time.sleep(0.01)
    yield run, jars, proc
    proc.kill()
    proc.wait()


def test_a_second_kafka_up_waits_for_the_broker_another_is_starting(starting_broker, monkeypatch, capsys):
    run, jars, proc = starting_broker
    monkeypatch.setattr(kafka_ctl, "answers", lambda bootstrap, timeout_s: bootstrap == "127.0.0.1:9999")
    threading.Timer(0.5, lambda: (run / "bootstrap").write_text("127.0.0.1:9999\n")).start()
    assert kafka_ctl.up(jars, run, timeout_s=30) == 0
    assert capsys.readouterr().out.splitlines() == [f"kafka-up: broker already running (pid {proc.pid}) at "
                                                    "127.0.0.1:9999", "127.0.0.1:9999"]
    assert proc.poll() is None   # the first kafka-up's broker was left alone


def test_a_broker_that_never_gets_its_address_is_reported_not_restarted(starting_broker, capsys):
    run, jars, proc = starting_broker
    assert kafka_ctl.up(jars, run, timeout_s=0.5) == 1
    assert f"broker pid {proc.pid} was being started by another kafka-up and did not answer" in capsys.readouterr().err
    assert proc.poll() is None

"""Fixtures of the Kafka integration tests: the broker's jars and the Spark Kafka connector jars (the broker itself,
``kafka_bootstrap``, is tests/integration/conftest.py's)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BROKER_JARS = ROOT / ".deps" / "kafka-broker"


@pytest.fixture(scope="session")
def broker_jars(unavailable) -> Path:
    """The Kafka jars `make deps-kafka-broker` resolved (for the Java command-line tools)."""
    if not any(BROKER_JARS.glob("kafka-tools-*.jar")):
        unavailable(f"no Kafka jars in {BROKER_JARS}: run `make deps-kafka-broker`")
    return BROKER_JARS


class OwnBroker:
    """A broker of the test's own under a temp dir (deps/kafka_ctl.py, as `make kafka-up`), on ports fixed at
    creation so that it can be stopped and started again at the same address; started fresh, it has no consumer
    group (its __consumer_offsets topic, where group coordinators live, is not even created yet), as a new
    cluster."""

    def __init__(self, jars: Path, run: Path) -> None:
        self.ctl = [sys.executable, str(ROOT / "deps" / "kafka_ctl.py")]
        self.options = ["--jars", str(jars), "--run-dir", str(run)]
        self.env = {**os.environ, "KAFKA_PORT": str(_free_port()), "KAFKA_CONTROLLER_PORT": str(_free_port())}
        self.bootstrap = f"127.0.0.1:{self.env['KAFKA_PORT']}"

    def up(self) -> None:
        """Start it (an empty broker: `kafka-down` removed the last one's data) and wait until it answers."""
        started = subprocess.run([*self.ctl, "up", *self.options, "--timeout", "150"], capture_output=True,
                                 text=True, timeout=240, env=self.env)
        assert started.returncode == 0, started.stdout + started.stderr
        assert (Path(self.options[3]) / "bootstrap").read_text().strip() == self.bootstrap

    def down(self) -> None:
        subprocess.run([*self.ctl, "down", *self.options], capture_output=True, text=True, timeout=120)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def own_broker(broker_jars, tmp_path):
    """An :class:`OwnBroker`, up; stopped at the end of the test."""
    broker = OwnBroker(broker_jars, tmp_path / "own-broker")
    broker.up()
    try:
        yield broker
    finally:
        broker.down()


@pytest.fixture(scope="session")
def kafka_spark(spark, unavailable):
    """The suite's Spark session (tests/conftest.py); it must have been started with the Kafka connector jars."""
    from streams_on_spark.connectors.kafka import kafka_jars
    jars = kafka_jars()
    if not jars:
        unavailable("the Spark Kafka connector jars are missing: run `make deps-spark-kafka`")
    loaded = spark.sparkContext.getConf().get("spark.jars", "")
    missing = [j for j in jars if j not in loaded]
    if missing:
        pytest.fail(f"the shared Spark session was started without the Kafka connector jars {missing} "
                    f"(spark.jars={loaded!r}); they must be set before the JVM starts", pytrace=False)
    return spark


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    """A fresh topic name per test (the broker lives for the whole session)."""
    return f"{request.node.name[:60].replace('[', '-').replace(']', '')}-{uuid.uuid4().hex[:8]}"

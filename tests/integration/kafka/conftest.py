"""Fixtures of the Kafka integration tests: the broker's jars and the Spark Kafka connector jars (the broker itself,
``kafka_bootstrap``, is tests/integration/conftest.py's)."""
from __future__ import annotations

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

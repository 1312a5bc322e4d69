"""Fixtures of the Kafka integration tests: the broker `make test` starts, and the Spark Kafka connector jars.

`make test` starts a KRaft broker on loopback (`make kafka-up`) and exports its address as
``STREAMS_ON_SPARK_KAFKA``. A kafka test then FAILS when that broker does not answer. Without the variable (plain
``pytest`` on a machine where nobody ran `make kafka-up`) the tests that need the broker are skipped with the
reason, except in CI (``CI=true``), where they fail: CI must never pass with its Kafka tests silently skipped.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

KAFKA_ENV = "STREAMS_ON_SPARK_KAFKA"
ROOT = Path(__file__).resolve().parents[3]
BROKER_JARS = ROOT / ".deps" / "kafka-broker"


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def unavailable(reason: str) -> None:
    """Skip for a developer's plain `pytest` run; fail under `make test` (variable set) and in CI."""
    if os.environ.get(KAFKA_ENV) or _in_ci():
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def kafka_bootstrap() -> str:
    """The bootstrap address of the test broker; it answered a metadata request."""
    address = os.environ.get(KAFKA_ENV, "").strip()
    if not address:
        unavailable(f"{KAFKA_ENV} is not set: run `make test`, or `make kafka-up` and "
                    f"`export {KAFKA_ENV}=<the address it prints>`")
    from kafka import KafkaAdminClient
    try:
        admin = KafkaAdminClient(bootstrap_servers=address, request_timeout_ms=5000, bootstrap_timeout_ms=5000)
        try:
            admin.list_topics()
        finally:
            admin.close()
    except Exception as e:
        pytest.fail(f"{KAFKA_ENV}={address}, but no Kafka broker answers there ({type(e).__name__}: {e}); "
                    "is `make kafka-up` running?", pytrace=False)
    return address


@pytest.fixture(scope="session")
def broker_jars() -> Path:
    """The Kafka jars `make deps-kafka-broker` resolved (for the Java command-line tools)."""
    if not any(BROKER_JARS.glob("kafka-tools-*.jar")):
        unavailable(f"no Kafka jars in {BROKER_JARS}: run `make deps-kafka-broker`")
    return BROKER_JARS


@pytest.fixture(scope="session")
def kafka_spark(spark):
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

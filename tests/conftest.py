"""Suite-wide fixtures: one local SparkSession, created only when a test asks for it (Spark is slow to start)."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from streams_on_spark.connectors.kafka import kafka_jars
    from streams_on_spark.runtime.spark import local_session
    # The Spark Kafka connector jars (resolved by `make deps-spark-kafka`) must be on spark.jars before the JVM
    # starts, so the one shared session carries them whenever they exist; without them only Kafka tests fail.
    session = local_session("streams-on-spark-tests", jars=kafka_jars())
    yield session
    session.stop()

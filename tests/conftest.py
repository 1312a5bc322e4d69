"""Suite-wide fixtures: one local SparkSession, created only when a test asks for it (Spark is slow to start)."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from streams_on_spark.runtime.spark import local_session
    session = local_session("streams-on-spark-tests")
    yield session
    session.stop()

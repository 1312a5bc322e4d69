"""Suite-wide fixtures. The SparkSession is the pytest plugin's (streams_on_spark.testing.pytest_plugin), so the
suite and its users start Spark one way: ``spark`` is ``spark_session``, created only when a test asks for it."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark(spark_session):
    """The plugin's ``spark_session``: one local session (with the Kafka connector's jars when `make
    deps-spark-kafka` resolved them), stopped at the end of the run."""
    return spark_session

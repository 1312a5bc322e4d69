"""The JVM Kafka clients of Spark's Kafka source and sink stay below WARNING on the console (a WARN per reconnect
attempt while a broker is down), unless the application's log4j configuration names their logger."""
from __future__ import annotations

import pytest

from streams_on_spark.runtime.spark.session import KAFKA_CLIENT_LOGGERS, quiet_spark_logs

pytestmark = pytest.mark.spark


def test_the_jvm_kafka_clients_pass_only_errors_unless_their_level_was_set(spark):
    log4j = spark.sparkContext._jvm.org.apache.logging.log4j
    configurator = log4j.core.config.Configurator
    (kafka,) = KAFKA_CLIENT_LOGGERS
    suite_level = log4j.LogManager.getRootLogger().getLevel().toString()
    spark.sparkContext.setLogLevel("WARN")   # an application's session under Spark's default profile
    try:
        quiet_spark_logs(spark)   # what every SparkRuntime does when it starts
        for name in ("org.apache.kafka.clients.NetworkClient", "org.apache.kafka.clients.producer.internals.Sender",
                     "org.apache.kafka.clients.admin.AdminClientConfig"):
            client = log4j.LogManager.getLogger(name)
            assert not client.isWarnEnabled() and client.isErrorEnabled(), name
        # Spark's own Kafka connector keeps its warnings (data loss, offsets out of range)
        assert log4j.LogManager.getLogger("org.apache.spark.sql.kafka010.KafkaSourceProvider").isWarnEnabled()

        configurator.setLevel(kafka, log4j.Level.WARN)   # as a log4j2 file naming the logger does
        quiet_spark_logs(spark)
        assert log4j.LogManager.getLogger("org.apache.kafka.clients.NetworkClient").isWarnEnabled()
    finally:
        configurator.setLevel(kafka, log4j.Level.ERROR)
        spark.sparkContext.setLogLevel(suite_level)

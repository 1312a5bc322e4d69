"""A process using Kafka through the library while its broker goes away: ``python outage_app.py BOOTSTRAP
RECONNECT_BACKOFF_MS RECONNECT_BACKOFF_MAX_MS`` prints ``ready`` once Kafka answered, asks for the topics every 0.2 s,
and when Kafka answers again after failed calls prints ``recovered after N failed calls, M failed connection
attempts`` and exits. M is counted from kafka-python's own report of each failed attempt (an ERROR or a WARNING of
``kafka.net.manager``, seen here before the library's filter drops it), so the test can tell the outage spanned
several reconnect cycles. Its stderr is the console a user sees (logging.basicConfig)."""
from __future__ import annotations

import importlib
import logging
import sys
import time

from streams_on_spark.connectors.kafka import KafkaConnector

class FailedAttempts(logging.Filter):
    """Counts kafka-python's reports of a failed connection attempt ("Connection failed: ...", "Bootstrap connection
    to ... failed: ..."); lets every record through (what reaches the console is the library's business)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING and " failed" in record.getMessage():
            self.count += 1
        return True


logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
attempts = FailedAttempts()
importlib.import_module("kafka")   # creates kafka-python's loggers: the counter goes in front of the library's filters
logging.getLogger("kafka.net.manager").filters.insert(0, attempts)
bootstrap, backoff_ms, backoff_max_ms = sys.argv[1], sys.argv[2], sys.argv[3]
client = {"reconnect.backoff.ms": backoff_ms, "reconnect.backoff.max.ms": backoff_max_ms}
with KafkaConnector(bootstrap, client, timeout_ms=2000) as kafka_connector:
    kafka_connector.topics()
    print("ready", flush=True)
    failed, deadline = 0, time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            kafka_connector.topics()
        except Exception:   # the application's own handling: the library's logs are what the test counts
            failed += 1
        else:
            if failed:
                print(f"recovered after {failed} failed calls, {attempts.count} failed connection attempts",
                      flush=True)
                break
        time.sleep(0.2)

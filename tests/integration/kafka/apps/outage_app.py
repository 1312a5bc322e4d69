"""A process using Kafka through the library while its broker goes away: ``python outage_app.py BOOTSTRAP`` prints
``ready`` once Kafka answered, asks for the topics every 0.2 s, and when Kafka answers again after failed calls
prints ``recovered after N failed calls`` and exits. Its stderr is the console a user sees (logging.basicConfig)."""
from __future__ import annotations

import logging
import sys
import time

from streams_on_spark.connectors.kafka import KafkaConnector

logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
with KafkaConnector(sys.argv[1], timeout_ms=2000) as kafka:
    kafka.topics()
    print("ready", flush=True)
    failed, deadline = 0, time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            kafka.topics()
        except Exception:   # the application's own handling: the library's logs are what the test counts
            failed += 1
        else:
            if failed:
                print(f"recovered after {failed} failed calls", flush=True)
                break
        time.sleep(0.2)

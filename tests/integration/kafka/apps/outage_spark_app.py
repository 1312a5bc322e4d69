"""A Spark application (``KafkaStreams`` on a real broker) while its broker goes away: ``python outage_spark_app.py
BOOTSTRAP WORKDIR RECONNECT_BACKOFF_MS RECONNECT_BACKOFF_MAX_MS`` copies topic ``in`` to ``out`` (its Kafka clients
with those reconnect backoffs), prints ``ready`` once a first record went through, then runs until it is stopped
(SIGTERM closes it). While the broker is down the queries wait in Spark's Kafka source (JVM clients): its stderr is
the console a user sees (logging.basicConfig), where the library says once that Kafka is unreachable and once that it
is reachable again."""
from __future__ import annotations

import logging
import sys

from streams_on_spark import Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder
from streams_on_spark.connectors.kafka import KafkaConnector
from streams_on_spark.records import ProducerRecord

logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
bootstrap, workdir, backoff_ms, backoff_max_ms = sys.argv[1:5]
S = Serdes.String()
with KafkaConnector(bootstrap, timeout_ms=10_000) as kafka:
    kafka.create_topic("in", 1)
    kafka.create_topic("out", 1)
    kafka.append([ProducerRecord("in", 0, 1_000, b"k", b"v", ())])
builder = StreamsBuilder()
builder.stream("in", Consumed.with_(S, S)).to("out", Produced.with_(S, S))
config = {"application.id": "outage-app", "bootstrap.servers": bootstrap, "state.dir": workdir,
          "trigger.interval": "200 milliseconds",
          "reconnect.backoff.ms": backoff_ms, "reconnect.backoff.max.ms": backoff_max_ms}
with KafkaStreams(builder.build(), config) as streams:
    streams.start()
    streams.process_all_available()
    print("ready", flush=True)
    streams.await_termination(600)

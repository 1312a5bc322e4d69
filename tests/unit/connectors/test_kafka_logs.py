"""kafka-python's chatter while a broker is down: one line from the library when the outage starts and one when it
ends, unless the application configured the ``kafka`` logger itself."""
from __future__ import annotations

import importlib
import logging
import socket

import pytest

from streams_on_spark.connectors import kafka_config
from streams_on_spark.connectors.kafka_config import _guard_kafka_python_logs, quiet_kafka_python_logs

OURS = "streams_on_spark.connectors.kafka_config"


@pytest.fixture
def fresh_filter(monkeypatch):
    """A filter and ``kafka`` logger as in a new process (no level set), restored afterwards."""
    fresh = kafka_config._OutageFilter()
    monkeypatch.setattr(kafka_config, "_OUTAGE_FILTER", fresh)
    monkeypatch.setattr(logging.getLogger("kafka"), "level", logging.NOTSET)
    importlib.import_module("kafka")   # creates kafka-python's loggers
    for name in ["kafka"] + [n for n in list(logging.Logger.manager.loggerDict) if n.startswith("kafka.")]:
        logger = logging.getLogger(name)   # without the filters other tests' connectors put there
        others = [f for f in logger.filters if not isinstance(f, kafka_config._OutageFilter)]
        monkeypatch.setattr(logger, "filters", others)
    yield fresh


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_broker_is_one_line_not_a_line_per_retry(fresh_filter, caplog):
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError
    address = f"127.0.0.1:{closed_port()}"
    quiet_kafka_python_logs(address)
    _guard_kafka_python_logs(())
    caplog.set_level(logging.DEBUG)
    with pytest.raises(KafkaError):
        KafkaConsumer(bootstrap_servers=address, request_timeout_ms=2500, bootstrap_timeout_ms=2500)   # retries
    kafka_lines = [r for r in caplog.records if r.name.startswith("kafka")]
    ours = [r.getMessage() for r in caplog.records if r.name == OURS]
    assert kafka_lines == [], [r.getMessage() for r in kafka_lines]
    assert len(ours) == 1 and ours[0].startswith(f"Kafka at {address} is unreachable ("), ours
    assert "ECONNREFUSED" in ours[0] and ours[0].endswith("); retrying")


def test_the_recovery_is_one_line_too(fresh_filter, caplog):
    quiet_kafka_python_logs("broker:9092")
    _guard_kafka_python_logs(())
    caplog.set_level(logging.DEBUG)
    net = logging.getLogger("kafka.net.connection")
    for _ in range(3):
        logging.getLogger("kafka.net.manager").error("Connection failed: %s", "KafkaConnectionError: 111 ECONNREFUSED")
    net.info("<KafkaConnection node_id=1 (connected)>: Connected")
    net.info("<KafkaConnection node_id=2 (connected)>: Connected")
    logging.getLogger("kafka.coordinator").warning("Heartbeat session expired")   # other warnings still pass
    messages = [(r.name, r.getMessage()) for r in caplog.records]
    assert messages == [
        (OURS, "Kafka at broker:9092 is unreachable (Connection failed: KafkaConnectionError: 111 ECONNREFUSED); "
               "retrying"),
        (OURS, "Kafka at broker:9092 is reachable again"),
        ("kafka.coordinator", "Heartbeat session expired"),
    ]


def test_an_application_that_set_the_kafka_level_gets_every_line(fresh_filter, caplog, monkeypatch):
    monkeypatch.setattr(logging.getLogger("kafka"), "level", logging.INFO)   # asked for kafka-python's logs
    quiet_kafka_python_logs("broker:9092")
    _guard_kafka_python_logs(())
    caplog.set_level(logging.DEBUG)
    logging.getLogger("kafka.net.manager").error("Connection failed: %s", "KafkaConnectionError: 111 ECONNREFUSED")
    logging.getLogger("kafka.net.connection").info("<KafkaConnection node_id=1>: Connected")
    assert [r.name for r in caplog.records] == ["kafka.net.manager", "kafka.net.connection"]


def test_a_running_broker_that_stops_is_one_line_too(fresh_filter, caplog):
    """What kafka-python 3 says when a broker it was connected to stops (seen on a real broker killed and started
    again, tests/integration/kafka/test_broker_outage.py): a disconnect and a reset at ERROR, a metadata WARNING per
    retry, the cancelled metadata request given up after the recovery; and its note of a slow task (a busy machine)."""
    quiet_kafka_python_logs("broker:9092")
    _guard_kafka_python_logs(())
    caplog.set_level(logging.DEBUG)
    logging.getLogger("kafka.net.transport").error("%s: socket disconnected", "<KafkaTCPTransport [broker:9092<-1]>")
    logging.getLogger("kafka.net.connection").error("%s: Abort (KafkaConnectionError: socket disconnected)",
                                                    "<KafkaTCPTransport [broker:9092<-1]>")
    try:
        raise ConnectionResetError(104, "Connection reset by peer")
    except ConnectionResetError:
        logging.getLogger("kafka.net.transport").exception("%s: Error receiving network data closing socket",
                                                           "<KafkaTCPTransport [none]>")
    for _ in range(5):
        logging.getLogger("kafka.cluster").warning("No node available for metadata refresh - backoff/retry")
    logging.getLogger("kafka.net.connection").info("<KafkaConnection node_id=1 (connected)>: Connected")
    logging.getLogger("kafka.cluster").error("Metadata refresh: failed %s", "Cancelled")   # given up after it
    logging.getLogger("kafka.net.selector").warning(
        "Task %s ran for 0.107s (>0.100s threshold). It is blocking the event loop -- likely a tight sync loop inside "
        "a coroutine. Other pollers will time out.", "<kafka.net.selector.Task object at 0x7ff31dc48590>")
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        (OURS, "Kafka at broker:9092 is unreachable (<KafkaTCPTransport [broker:9092<-1]>: socket disconnected); "
               "retrying"),
        (OURS, "Kafka at broker:9092 is reachable again"),
    ]


def test_the_broker_watch_says_what_spark_s_kafka_source_does_not(fresh_filter, caplog):
    """Spark's Kafka source waits for a broker in the JVM, without a word: the watch probes the broker once the queries
    stalled, and reports the outage and the recovery in the same one line each, once, shared with kafka-python's."""
    caplog.set_level(logging.DEBUG)
    port = closed_port()
    address = f"127.0.0.1:{port}"
    stalled = [False]
    watch = kafka_config.BrokerWatch(address, lambda: stalled[0])
    watch.check()   # batches keep coming: no probe, nothing said
    assert [r for r in caplog.records if r.name == OURS] == []
    stalled[0] = True
    for _ in range(3):
        watch.check()
    # kafka-python's clients in the same process noticing the same outage add nothing
    logging.getLogger("kafka.net.manager").error("Connection failed: %s", "KafkaConnectionError: 111 ECONNREFUSED")
    ours = [r.getMessage() for r in caplog.records if r.name == OURS]
    assert len(ours) == 1 and ours[0].startswith(f"Kafka at {address} is unreachable ({address}: "), ours
    assert ours[0].endswith("); retrying")
    with socket.socket() as listening:   # the broker is back (the port takes connections again)
        listening.bind(("127.0.0.1", port))
        listening.listen()
        watch.check()
        watch.check()
    assert [r.getMessage() for r in caplog.records if r.name == OURS][1:] == [f"Kafka at {address} is reachable again"]

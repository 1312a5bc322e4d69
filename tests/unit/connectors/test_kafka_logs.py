"""kafka-python's chatter while a broker is down: one line from the library when the outage starts and one when it
ends, unless the application configured the ``kafka`` logger itself."""
from __future__ import annotations

import logging
import socket
import time

import pytest

from streams_on_spark.connectors import kafka_config
from streams_on_spark.connectors.kafka_config import (
    _guard_kafka_python_logs,
    bootstrap_string,
    quiet_kafka_python_logs,
    unreachable,
)

OURS = "streams_on_spark.connectors.kafka_config"


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


def test_a_failure_while_the_broker_that_is_back_settles_is_no_new_outage(fresh_filter, caplog):
    """A broker that is back takes connections before it serves metadata (seen at load 10-19 on a restarted broker:
    "Connected", then "No node available for metadata refresh"): no second outage line for that; a failure after
    ``SETTLE_S`` (10 s) is a new outage."""
    now = [100.0]
    fresh_filter.clock = lambda: now[0]   # the filter's own clock (time.monotonic), set by hand
    quiet_kafka_python_logs("broker:9092")
    _guard_kafka_python_logs(())
    caplog.set_level(logging.DEBUG)
    manager, net = logging.getLogger("kafka.net.manager"), logging.getLogger("kafka.net.connection")
    manager.error("Connection failed: %s", "KafkaConnectionError: 111 ECONNREFUSED")
    net.info("<KafkaConnection node_id=1 (connected)>: Connected")
    now[0] += 9.0
    logging.getLogger("kafka.cluster").warning("No node available for metadata refresh - backoff/retry")
    now[0] += 1
    manager.error("Connection failed: %s", "KafkaConnectionError: 111 ECONNREFUSED")
    assert [r.getMessage() for r in caplog.records] == [
        "Kafka at broker:9092 is unreachable (Connection failed: KafkaConnectionError: 111 ECONNREFUSED); retrying",
        "Kafka at broker:9092 is reachable again",
        "Kafka at broker:9092 is unreachable (Connection failed: KafkaConnectionError: 111 ECONNREFUSED); retrying",
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
    try:   # a connection made as the broker went (seen once in CI): its peer gone before its log prefix was built
        raise OSError(107, "Transport endpoint is not connected")
    except OSError:
        logging.getLogger("kafka.net.connection").exception("Failed to build connection log_prefix")
    try:
        raise ConnectionResetError(104, "Connection reset by peer")
    except ConnectionResetError:
        logging.getLogger("kafka.net.transport").exception("%s: Error sending request data: %s",
                                                           "<KafkaTCPTransport [none]>", "[Errno 104] Connection reset")
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
    watch = kafka_config.BrokerWatch(address, lambda: stalled[0], 1.0)
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


class _Runtime:
    """A runtime's ``stalled(seconds)`` as the broker watch asks it (never stalled: the watch probes nothing)."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    def stalled(self, seconds: float) -> bool:
        self.asked.append(seconds)
        return False


def _streams(config: dict):
    from streams_on_spark import Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(Serdes.String(), Serdes.String())).to(
        "out", Produced.with_(Serdes.String(), Serdes.String()))
    # nothing listens at the bootstrap address; construction reaches no broker
    return KafkaStreams(builder.build(), {"application.id": "watch", "bootstrap.servers": "127.0.0.1:1", **config})


def test_the_broker_watch_takes_its_timings_from_the_config():
    """broker.watch.interval.ms: how often the watch looks; broker.watch.stalled.ms: how long without progress counts
    as stalled (read once when the application starts)."""
    runtime = _Runtime()
    watch = _streams({"broker.watch.interval.ms": 10, "broker.watch.stalled.ms": "250"})._start_broker_watch(runtime)
    try:
        deadline = time.monotonic() + 5
        while len(runtime.asked) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        watch.stop()
    assert len(runtime.asked) >= 5 and set(runtime.asked) == {0.25}
    # the defaults: a look a second, stalled after 5 s
    runtime = _Runtime()
    watch = _streams({})._start_broker_watch(runtime)
    time.sleep(0.3)
    watch.stop()
    assert runtime.asked == [] and watch._interval_s == 1.0
    watch.check()
    assert runtime.asked == [5.0]


def test_the_broker_watch_and_the_start_probe_get_the_bootstrap_addresses():
    """bootstrap.servers (Kafka's LIST type) reaches the watch and the probes as addresses, given as a string or a
    list: the typed config's list once reached the watch as its repr, which the probe could not parse and took for
    "not definite", so an outage flapped between unreachable and reachable again."""
    for given, expected in (("127.0.0.1:1", "127.0.0.1:1"), (["127.0.0.1:1", "127.0.0.1:2"], "127.0.0.1:1,127.0.0.1:2")):
        watch = _streams({"bootstrap.servers": given})._start_broker_watch(_Runtime())
        watch.stop()
        assert watch.bootstrap == expected
        assert bootstrap_string(given) == expected
        assert unreachable(watch.bootstrap) is not None   # nothing listens on ports 1 and 2: a definite answer


@pytest.mark.parametrize("key, value, message", [
    ("broker.watch.interval.ms", 0, "Invalid value 0 for configuration broker.watch.interval.ms: Value must be at "
                                    "least 1"),
    ("broker.watch.stalled.ms", "soon", "Invalid value soon for configuration broker.watch.stalled.ms: Not a number "
                                        "of type LONG"),
    ("broker.watch.stalled.ms", -5, "Invalid value -5 for configuration broker.watch.stalled.ms: Value must be at "
                                    "least 1"),
])
def test_a_bad_broker_watch_timing_fails_at_construction_naming_the_key(key, value, message):
    from streams_on_spark.errors import ConfigException
    with pytest.raises(ConfigException) as info:
        _streams({key: value})
    assert str(info.value) == message

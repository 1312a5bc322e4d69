"""The examples' logging (examples/_common.py's ``configure_logging``, which every example's ``main`` calls first): the
library's quieting of kafka-python is in place before the examples' own kafka-python clients exist, so neither
kafka-python's INFO (the admin and producer of a Kafka run: ~67 lines) nor its "It is blocking the event loop" note
on a loaded machine reaches the console (test_spark_submit.py's 30-line budget), and its other warnings still do."""
from __future__ import annotations

import importlib.util
import logging
import sys
from pathlib import Path

COMMON = Path(__file__).resolve().parents[3] / "examples" / "_common.py"


def configure_logging(monkeypatch) -> None:
    spec = importlib.util.spec_from_file_location("examples_common_logging", COMMON)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)   # its dataclasses look their module up
    spec.loader.exec_module(module)
    module.configure_logging()


def test_the_examples_keep_kafka_python_below_warning_and_its_event_loop_note_off(fresh_filter, caplog, monkeypatch):
    configure_logging(monkeypatch)
    caplog.set_level(logging.DEBUG)
    # what the examples' admin and producer log on a Kafka run, and a slow I/O task on a busy machine
    logging.getLogger("kafka.admin.client").info("Bootstrap complete")
    logging.getLogger("kafka.producer.kafka").info("<KafkaProducer client_id=kafka-python-producer-1>: Closing")
    logging.getLogger("kafka.net.selector").warning(
        "Task %s ran for 0.107s (>0.100s threshold). It is blocking the event loop -- likely a tight sync loop inside "
        "a coroutine. Other pollers will time out.", "<kafka.net.selector.Task object at 0x7ff31dc48590>")
    logging.getLogger("kafka.coordinator").warning("Heartbeat session expired")   # other warnings still pass
    assert [(r.name, r.getMessage()) for r in caplog.records if r.name.startswith("kafka")] == [
        ("kafka.coordinator", "Heartbeat session expired")]
    assert fresh_filter.active, "the library's filter is off: configure_logging set a level on the kafka logger"

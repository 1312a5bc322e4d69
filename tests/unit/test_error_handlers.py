"""Error handlers as Kafka 4.3.1's: how they are configured, what they are told, what their answers do."""
from __future__ import annotations

import logging
import re

import pytest

from streams_on_spark import (
    Consumed,
    Processor,
    Produced,
    PunctuationType,
    Record,
    Serdes,
    StreamsBuilder,
    StreamsException,
    Topology,
    TopologyTestDriver,
)
from streams_on_spark.config import TaskConfig
from streams_on_spark.error_handlers import (
    DefaultProductionExceptionHandler,
    ErrorHandlerContext,
    LogAndContinueExceptionHandler,
    LogAndContinueProcessingExceptionHandler,
    LogAndFailExceptionHandler,
    LogAndFailProcessingExceptionHandler,
    ProcessingExceptionHandler,
    Response,
    Result,
)

S, L = Serdes.String(), Serdes.Long()
KAFKA = "org.apache.kafka.streams.errors."


@pytest.mark.parametrize("key, value, expected", [
    ("deserialization.exception.handler", None, LogAndFailExceptionHandler),
    ("deserialization.exception.handler", KAFKA + "LogAndContinueExceptionHandler", LogAndContinueExceptionHandler),
    ("deserialization.exception.handler", "LogAndFailExceptionHandler", LogAndFailExceptionHandler),
    ("deserialization.exception.handler", "log-and-continue", LogAndContinueExceptionHandler),
    ("processing.exception.handler", None, LogAndFailProcessingExceptionHandler),
    ("processing.exception.handler", KAFKA + "LogAndContinueProcessingExceptionHandler",
     LogAndContinueProcessingExceptionHandler),
    ("processing.exception.handler", "log-and-continue", LogAndContinueProcessingExceptionHandler),
    ("processing.exception.handler", LogAndContinueProcessingExceptionHandler,
     LogAndContinueProcessingExceptionHandler),
    ("production.exception.handler", None, DefaultProductionExceptionHandler),
    ("production.exception.handler", KAFKA + "DefaultProductionExceptionHandler", DefaultProductionExceptionHandler),
])
def test_handlers_are_named_as_kafka_names_them(key, value, expected):
    config = TaskConfig.from_config({"application.id": "a", **({} if value is None else {key: value})})
    handler = {"deserialization.exception.handler": config.deserialization_handler,
               "processing.exception.handler": config.processing_handler,
               "production.exception.handler": config.production_handler}[key]
    assert type(handler) is expected


def test_the_deprecated_keys_are_read_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="streams_on_spark.error_handlers"):
        config = TaskConfig.from_config({"application.id": "a", "default.deserialization.exception.handler":
                                         KAFKA + "LogAndContinueExceptionHandler"})
    assert type(config.deserialization_handler) is LogAndContinueExceptionHandler
    assert "'default.deserialization.exception.handler' is deprecated" in caplog.text


@pytest.mark.parametrize("key, value, message", [
    ("processing.exception.handler", KAFKA + "LogAndContinueExceptionHandler",
     "Invalid value org.apache.kafka.streams.errors.LogAndContinueExceptionHandler for configuration "
     "processing.exception.handler: Class org.apache.kafka.streams.errors.LogAndContinueExceptionHandler could not "
     "be found"),
    ("deserialization.exception.handler", "LogAndSkip", "Invalid value LogAndSkip for configuration "
     "deserialization.exception.handler: Class LogAndSkip could not be found"),
    ("production.exception.handler", 42, "Invalid value 42 for configuration production.exception.handler"),
    ("processing.exception.handler", int, "a handler class must define handle_error"),
    ("errors.dead.letter.queue.topic.name", "", "Invalid value '' for configuration "
     "errors.dead.letter.queue.topic.name"),
])
def test_a_bad_handler_setting_is_a_value_error_naming_the_key(key, value, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TaskConfig.from_config({"application.id": "a", key: value})


def test_built_in_handlers_build_dead_letter_records_only_when_a_topic_is_configured():
    context = ErrorHandlerContext("in", 2, 7, (("h", b"1"),), "node", "0_2", 5, b"k", b"v")
    handler = LogAndContinueProcessingExceptionHandler()
    handler.configure({})
    assert handler.handle_error(context, None, ValueError("boom")) == Response.resume()
    handler.configure({"errors.dead.letter.queue.topic.name": "dead"})
    response = handler.handle_error(context, None, ValueError("boom"))
    assert response.result is Result.RESUME and Result.CONTINUE is Result.RESUME
    (record,) = response.dead_letter_queue_records
    assert (record.topic, record.partition, record.timestamp, record.key, record.value) == ("dead", None, 5, b"k",
                                                                                            b"v")
    headers = dict(record.headers)
    assert [k for k, _ in record.headers][0] == "h"
    assert (headers["__streams.errors.exception"], headers["__streams.errors.message"],
            headers["__streams.errors.topic"], headers["__streams.errors.partition"],
            headers["__streams.errors.offset"]) == (b"ValueError", b"boom", b"in", b"2", b"7")
    assert headers["__streams.errors.stacktrace"].startswith(b"ValueError: boom")


class Recording(ProcessingExceptionHandler):
    """Keeps what it is told; answers with ``answer``."""

    def __init__(self, answer=Result.RESUME) -> None:
        self.answer, self.calls = answer, []

    def handle_error(self, context, record, exception):
        self.calls.append((context, record, exception))
        return self.answer


class Fragile(Processor):
    """Raises on "bad" values; punctuates every 10 ms of stream time and raises there once stream time passes 100."""

    def init(self, context) -> None:
        super().init(context)
        context.schedule(10, PunctuationType.STREAM_TIME, self.tick)

    def tick(self, ts: int) -> None:
        if ts >= 100:
            raise RuntimeError(f"tick at {ts}")

    def process(self, record) -> None:
        if record.value.startswith("bad"):
            raise KeyError(record.value)
        self.context.forward(record.with_value(record.value.upper()).with_headers({"seen": "1"}))


def fragile_topology() -> Topology:
    topology = Topology()
    topology.add_source("src", "in", key_serde=S, value_serde=S)
    topology.add_processor("fragile", Fragile, "src")
    topology.add_sink("out", "out", "fragile", key_serde=S, value_serde=S)
    return topology


def test_a_processing_handler_gets_kafka_s_context_and_its_resume_drops_the_record():
    handler = Recording()
    config = {"application.id": "h", "processing.exception.handler": handler}
    with TopologyTestDriver(fragile_topology(), config) as driver:
        inp = driver.create_input_topic("in", S, S)
        inp.pipe_input("k1", "ok", 1)
        inp.pipe_input("k2", "bad-1", 2)
        inp.pipe_input("k3", "fine", 150)   # stream-time punctuation at 150 raises
        out = driver.create_output_topic("out", S, S).read_key_values_to_list()
        metrics = driver.metrics()
    assert out == [("k1", "OK"), ("k3", "FINE")]
    assert metrics["dropped-records-total"] == 2
    (record_context, record, error), (tick_context, tick_record, tick_error) = handler.calls
    configured = driver._engine.tasks[next(iter(driver._engine.tasks))].config.processing_handler
    assert configured is handler
    assert (record_context.topic, record_context.partition, record_context.offset, record_context.processor_node_id,
            record_context.timestamp, record_context.source_raw_key, record_context.source_raw_value) == (
        "in", 0, 1, "fragile", 2, b"k2", b"bad-1")
    assert str(record_context.task_id) == "0_0"
    assert record == Record("k2", "bad-1", 2) and isinstance(error, KeyError)
    assert (tick_context.topic, tick_context.partition, tick_context.offset, tick_context.processor_node_id,
            tick_context.timestamp, tick_record) == (None, -1, -1, "fragile", 150, None)
    assert str(tick_error) == "tick at 150"


def test_a_function_is_a_handler_and_fail_fails_the_task_with_the_user_s_error():
    def fail(context, record, exception):
        return Response.fail()

    with TopologyTestDriver(fragile_topology(), {"application.id": "h", "processing.exception.handler": fail}) as d:
        with pytest.raises(StreamsException, match=r"(?s)processor=fragile, topic=in, partition=0, offset=0.*KeyError"):
            d.create_input_topic("in", S, S).pipe_input("k", "bad", 1)


@pytest.mark.parametrize("answer, message", [
    (None, "Invalid processing.exception.handler response: expected a Response or Result"),
    (Result.RETRY, r"\(RESUME or FAIL\), got Response\(result=<Result.RETRY"),
])
def test_a_handler_answering_badly_fails_the_task_naming_the_handler(answer, message):
    config = {"application.id": "h", "processing.exception.handler": Recording(answer)}
    with TopologyTestDriver(fragile_topology(), config) as driver:
        with pytest.raises(StreamsException, match="Fatal user code error in processing.exception.handler callback"):
            try:
                driver.create_input_topic("in", S, S).pipe_input("k", "bad", 1)
            except StreamsException as e:
                assert re.search(message, str(e.__cause__))
                raise


def test_deserialization_handler_as_a_class_with_its_own_configure():
    class Counting(LogAndContinueExceptionHandler):
        def configure(self, configs) -> None:
            super().configure(configs)
            self.application = configs["application.id"]

    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, L)).to("out", Produced.with_(S, L))
    config = {"application.id": "d", "deserialization.exception.handler": Counting}
    with TopologyTestDriver(builder.build(), config) as driver:
        inp = driver.create_input_topic("in", S, Serdes.String())
        inp.pipe_input("a", "12345678", 1)
        inp.pipe_input("b", "short", 2)
        assert driver.create_output_topic("out", S, L).read_key_values_to_list() == [("a", 0x3132333435363738)]
        assert driver.metrics()["dropped-records-total"] == 1
        handler = driver._engine.tasks[next(iter(driver._engine.tasks))].config.deserialization_handler
        assert type(handler) is Counting and handler.application == "d"


def test_a_serialization_error_at_a_sink_goes_to_the_production_handler():
    seen = []

    def skip(context, record, exception):
        seen.append((context.processor_node_id, record.value))
        return Result.RESUME

    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).map_values(lambda v: int(v) if v.isdigit() else v).to(
        "out", Produced.with_(S, L))
    with TopologyTestDriver(builder.build(), {"application.id": "p", "production.exception.handler": skip}) as driver:
        driver.create_input_topic("in", S, S).pipe_key_value_list([("a", "1"), ("b", "x"), ("c", "3")])
        assert driver.create_output_topic("out", S, L).read_key_values_to_list() == [("a", 1), ("c", 3)]
        assert driver.metrics()["dropped-records-total"] == 1
    assert seen == [("KSTREAM-SINK-0000000002", "x")]
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).to("out", Produced.with_(S, L))
    with TopologyTestDriver(builder.build(), {"application.id": "p"}) as driver:
        with pytest.raises(StreamsException, match="Error serializing the record sent by sink KSTREAM-SINK-0000000001 to topic out"):
            driver.create_input_topic("in", S, S).pipe_input("b", "x", 1)

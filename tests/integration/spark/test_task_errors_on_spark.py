"""A processor that raises on Spark fails the application with the user's error, as in the in-process driver: a
StreamsException naming the task, processor, topic, partition and offset, with the user's exception type and
message (not the first line of Spark's report, nor a JVM stack trace)."""
from __future__ import annotations

import re

import pytest

from streams_on_spark import Consumed, Produced, Serdes, StreamsBuilder, StreamsException, TopologyTestDriverBuilder

pytestmark = pytest.mark.spark
S = Serdes.String()


class BadRecord(ValueError):
    """A user's own exception type."""


def parse(value: str) -> str:
    if value == "bad":
        raise BadRecord(f"cannot parse {value!r}")
    return value


def test_a_processors_error_on_spark_names_where_and_the_users_exception(spark):
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).map_values(parse).to("out", Produced.with_(S, S))
    with (TopologyTestDriverBuilder(builder.build()).with_config({"application.id": "errors"})
          .declare_topic("in", 2).with_engine("spark", spark).build()) as driver:
        source = driver.create_input_topic("in", S, S, start_timestamp=0)
        source.pipe_input("k", "good")
        with pytest.raises(StreamsException) as raised:
            source.pipe_input("k", "bad")
    message = str(raised.value)
    assert re.fullmatch(r"query errors-subtopology-0 failed: Exception caught in process\. taskId=0_\d, "
                        r"processor=KSTREAM-MAPVALUES-0000000001, topic=in, partition=\d, offset=1: "
                        r"(\w+\.)*BadRecord: cannot parse 'bad'", message), message


def run_failing_app(tmp_path, *args: str):
    """``python failing_app.py`` as a user runs it (a local session of its own): its stdout, after checking that it
    exited with the error and that its console (stderr) has none of Spark's reports of the failed task and query (a
    traceback, pages of JVM or py4j stack) and no line of Spark's Python workers."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    app = Path(__file__).parent / "apps" / "failing_app.py"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    run = subprocess.run([sys.executable, str(app), str(tmp_path), *args], capture_output=True, text=True, env=env,
                         timeout=300, cwd=tmp_path)
    assert run.returncode == 1, run.stderr[-3000:]
    console = run.stderr
    assert "Traceback" not in console and "py4j" not in console, console[-3000:]
    assert "\tat org.apache.spark" not in console and " ERROR " not in console, console[-3000:]
    assert "Python worker" not in console, console   # none of pyspark's driver worker's prints (fork_server.py)
    assert len(console.splitlines()) < 25, console   # Spark's start-up lines
    return run.stdout, console


def test_the_console_shows_the_error_once_without_sparks_reports(tmp_path):
    out, console = run_failing_app(tmp_path)
    assert re.fullmatch(r"error: query failing-subtopology-0 failed: Exception caught in process\. taskId=0_1, "
                        r"processor=KSTREAM-MAPVALUES-0000000001, topic=in, partition=1, offset=0: "
                        r"ValueError: cannot parse 'bad'\n", out), out
    assert "cannot parse" not in console, console[-3000:]


def test_a_fatal_deserialization_error_is_one_line_naming_the_record_and_the_setting(tmp_path):
    """Its last line names the topic, partition and offset and the setting that would skip the record (Kafka's
    text), and nothing else reaches the console: no py4j traceback."""
    out, console = run_failing_app(tmp_path, "deserialization")
    error = re.fullmatch(r"error: query failing-subtopology-0 failed: streams_on_spark\.errors\.StreamsException: "
                         r"Deserialization exception handler is set to fail upon a deserialization error\. .*please "
                         r"set the deserialization\.exception\.handler appropriately\. Failed record: taskId=0_(\d), "
                         r"topic=in, partition=(\d), offset=0: SerializationException: Size of data received by "
                         r"LongDeserializer is not 8 for topic 'in': got bytes of length \d\n", out)
    assert error and error.group(1) == error.group(2), out
    assert "LongDeserializer" not in console, console[-3000:]


def test_a_fatal_deserialization_error_names_the_record_and_the_setting_on_both_engines(spark):
    """Kafka's text (the handler fails; set deserialization.exception.handler to continue) with the task, topic,
    partition and offset of the record, as the in-process driver raises it: not the serde's error alone."""
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, Serdes.Long())).to("out", Produced.with_(S, Serdes.Long()))
    messages = {}
    for engine in ("local", "spark"):
        driver_builder = (TopologyTestDriverBuilder(builder.build()).with_config({"application.id": "deser"})
                          .declare_topic("in", 2))
        if engine == "spark":
            driver_builder = driver_builder.with_engine("spark", spark)
        with driver_builder.build() as driver:
            source = driver.create_input_topic("in", S, S, start_timestamp=0)   # strings where longs are expected
            with pytest.raises(StreamsException) as raised:
                source.pipe_input("k", "bad")
        messages[engine] = str(raised.value)
    expected = (r"Deserialization exception handler is set to fail upon a deserialization error\. If you would rather "
                r"have the streaming pipeline continue after a deserialization error, please set the "
                r"deserialization\.exception\.handler appropriately\. Failed record: taskId=0_(\d), topic=in, "
                r"partition=(\d), offset=0: SerializationException: Size of data received by LongDeserializer is "
                r"not 8 for topic 'in': got bytes of length 3")
    local = re.fullmatch(expected, messages["local"])
    assert local and local.group(1) == local.group(2), messages["local"]
    assert re.fullmatch(r"query deser-subtopology-0 failed: streams_on_spark\.errors\.StreamsException: " + expected,
                        messages["spark"]), messages["spark"]

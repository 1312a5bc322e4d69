"""docs/kafka.md's "The connector jars" block against the test broker, run as written: the word count under the
``spark-submit`` that ships with pyspark with the jars of the checkout (``--jars``), and under a plain python that
finds them through ``STREAMS_ON_SPARK_KAFKA_JARS``. (Its ``--packages`` command is README's, which
test_examples_on_kafka.py runs; tests/unit/docs/test_command_blocks.py keeps the two the same.)"""
from __future__ import annotations

import uuid

import pytest

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
PAGE, SECTION = "docs/kafka.md", "## The connector jars"


def connector_jars_commands(documented, kafka_bootstrap) -> dict[str, str]:
    """The block's commands by what brings the connector: "export" (the broker's address), "--packages", "--jars" and
    "STREAMS_ON_SPARK_KAFKA_JARS"."""
    documented.require_kafka_up(kafka_bootstrap)
    export, packages, jars, plain = documented.commands(documented.block(PAGE, SECTION))
    assert export.startswith("export STREAMS_ON_SPARK_KAFKA="), export
    assert "--packages" in packages and "--jars" in jars and plain.startswith("STREAMS_ON_SPARK_KAFKA_JARS="), plain
    return {"export": export, "--packages": packages, "--jars": jars, "STREAMS_ON_SPARK_KAFKA_JARS": plain}


def run_word_count(documented, export: str, command: str, name: str):
    run = uuid.uuid4().hex[:8]
    script = f"{export}\n{command} --repeat 2 --input-topic {name}-in-{run} --output-topic {name}-out-{run}\n"
    return documented.run(script)


def test_the_word_count_under_spark_submit_with_the_checkout_jars(documented, kafka_bootstrap):
    commands = connector_jars_commands(documented, kafka_bootstrap)
    result = run_word_count(documented, commands["export"], commands["--jars"], "submit")
    assert result.returncode == 0, _failure(result.stderr)
    # the console says what a user needs: under 30 lines, Spark's and kafka-python's INFO left out (and its "It is
    # blocking the event loop" notes of a loaded machine: the examples take the library's quieting of kafka-python
    # before their own clients exist), and nothing from pyspark 4.2's transformWithStateInPandas driver worker, which
    # prints "Starting Streaming TransformWithStateInPandas Python worker." on each query start before any code of the
    # library runs in it, to the JVM's stderr: under a local master its stdout is /dev/null (session.py's forked
    # workers, docs/logging.md)
    console = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert not [line for line in console if "TransformWithStateInPandas Python worker" in line], "\n".join(console)
    assert len(console) < 30, "\n".join(console)
    assert not [line for line in console if " kafka." in line], "\n".join(console)
    # the bundled text has "the" 23 times; sent twice
    assert "top 10 words: the=46" in result.stdout, result.stdout[-1500:] + "\n--- stderr ---\n" + result.stderr[-6000:]


def test_the_word_count_under_a_plain_python_with_the_jars_variable(documented, kafka_bootstrap):
    commands = connector_jars_commands(documented, kafka_bootstrap)
    result = run_word_count(documented, commands["export"], commands["STREAMS_ON_SPARK_KAFKA_JARS"], "plain")
    assert result.returncode == 0, _failure(result.stderr)
    assert "spark: master local[2]" in result.stdout, result.stdout[-1500:]   # the session it started itself
    assert "top 10 words: the=46" in result.stdout, result.stdout[-1500:] + "\n--- stderr ---\n" + result.stderr[-6000:]


def _failure(stderr: str) -> str:
    """The lines of a failed run that say what failed (exceptions and their causes), then the end of stderr."""
    said = [line for line in stderr.splitlines()
            if ("Exception" in line or "Error" in line or line.startswith("Caused by")) and not line.strip().startswith("at ")]
    return "\n".join(said[:40]) + "\n--- end of stderr ---\n" + stderr[-2000:]

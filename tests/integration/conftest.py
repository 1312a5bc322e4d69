"""Fixtures shared by the integration tests: the Kafka broker `make test` starts (tests/conftest.py's `unavailable`
is the skip-or-fail rule for it, the Spark cluster and the wheel), and a spark-submit's JVM options (the class
archive, the C1 compiler).

`make test` starts a KRaft broker on loopback (`make kafka-up`) and exports its address as ``STREAMS_ON_SPARK_KAFKA``.
A test that needs it then FAILS when that broker does not answer. Without the variable (plain ``pytest`` on a machine
where nobody ran `make kafka-up`) such tests are skipped with the reason, except in CI (``CI=true``), where they
fail: CI must never pass with its Kafka tests silently skipped.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

KAFKA_ENV = "STREAMS_ON_SPARK_KAFKA"
ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.S | re.M)


@pytest.fixture(scope="session")
def fast_jvm_env() -> dict[str, str]:
    """What a spark-submit's environment adds so that its driver and executors start as a local session's JVM does:
    from the class archive `make test` builds (``STREAMS_ON_SPARK_CLASS_ARCHIVE``) and with the C1 compiler only
    (``LOCAL_JAVA_OPTIONS``: the tests' JVMs are short-lived, and C2's compilations cost them more CPU than they give
    back). ``SPARK_SUBMIT_OPTS`` carries the options to the driver's JVM, and ``spark.executor.extraJavaOptions`` to
    the executors'. A command line's own ``--conf`` still wins."""
    from streams_on_spark.runtime.spark.session import LOCAL_JAVA_OPTIONS, java_options_with_archive
    options = java_options_with_archive(LOCAL_JAVA_OPTIONS)
    return {"SPARK_SUBMIT_OPTS": f'{options} "-Dspark.executor.extraJavaOptions={options}"'}


@pytest.fixture(scope="session")
def kafka_bootstrap(unavailable) -> str:
    """The bootstrap address of the test broker; it answered a metadata request."""
    address = os.environ.get(KAFKA_ENV, "").strip()
    if not address:
        unavailable(f"{KAFKA_ENV} is not set: run `make test`, or `make kafka-up` and "
                     f"`export {KAFKA_ENV}=<the address it prints>`")
    from kafka import KafkaAdminClient
    try:
        admin = KafkaAdminClient(bootstrap_servers=address, request_timeout_ms=5000, bootstrap_timeout_ms=5000)
        try:
            admin.list_topics()
        finally:
            admin.close()
    except Exception as e:
        pytest.fail(f"{KAFKA_ENV}={address}, but no Kafka broker answers there ({type(e).__name__}: {e}); "
                    "is `make kafka-up` running?", pytrace=False)
    return address


def _read_topic(bootstrap: str, topic: str, partitions: int, timeout_s: float = 60, committed: bool = False) -> list:
    """Every record of ``topic`` up to its end offsets when called (kafka-python ``ConsumerRecord``s, by partition
    and offset); fails the test if they cannot all be read within ``timeout_s``. ``committed``: as a consumer with
    ``isolation.level=read_committed`` (up to the last stable offsets, aborted transactions left out)."""
    import time

    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                             isolation_level="read_committed" if committed else "read_uncommitted")
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        records: list = []
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            if time.monotonic() > deadline:
                pytest.fail(f"could not read {topic} to its end offsets {ends} within {timeout_s:.0f}s", pytrace=False)
            for tp, batch in consumer.poll(timeout_ms=500).items():
                records.extend(r for r in batch if r.offset < ends[tp])
        return sorted(records, key=lambda r: (r.partition, r.offset))
    finally:
        consumer.close()


@pytest.fixture(scope="session")
def read_topic(kafka_bootstrap) -> Callable[..., list]:
    """``read_topic(topic, partitions, committed=False)``: every record of a topic of the test broker, up to its end
    offsets now (``committed``: as a read_committed consumer)."""
    return lambda topic, partitions, timeout_s=60, committed=False: _read_topic(kafka_bootstrap, topic, partitions,
                                                                                 timeout_s, committed)



class DocumentedCommands:
    """The command blocks of README.md and docs/, run as written: :meth:`block` finds one, :meth:`commands` splits it
    into its commands, :meth:`run` runs a script of them (and the arguments a test adds) as a new user's shell would,
    with ``fast_jvm_env`` (the suite's faster JVM start) added."""

    def __init__(self, fast_jvm_env: dict[str, str]) -> None:
        self.fast_jvm_env = fast_jvm_env

    def block(self, page: str, section: str, starting: str = "") -> str:
        """The first command block (```console, ```bash or a bare ```) under the heading ``section`` (e.g.
        "## spark-submit") of ``page`` (README.md, docs/kafka.md, ...) whose first line starts with ``starting``."""
        lines = (ROOT / page).read_text(encoding="utf-8").split("\n")
        assert section in lines, f"{page} has no heading {section!r}"
        below, fenced = [], False
        for line in lines[lines.index(section) + 1:]:
            if not fenced and line.startswith("#"):
                break                       # the next heading (a '#' line inside a fence is a comment)
            fenced ^= line.startswith("```")
            below.append(line)
        blocks = [body for language, body in FENCE.findall("\n".join(below) + "\n")
                  if language in ("", "bash", "console", "sh", "shell") and body.startswith(starting)]
        assert blocks, f"{page} has no command block under {section!r} starting with {starting!r}"
        return blocks[0]

    @staticmethod
    def commands(block: str) -> list[str]:
        """A block's commands as the shell reads them: continuation lines kept, comments dropped."""
        commands, current = [], ""
        for line in block.splitlines():
            code = line.split("  #")[0].rstrip()
            current += code + ("\n" if code.endswith("\\") else "")
            if not code.endswith("\\"):
                if current.strip():
                    commands.append(current)
                current = ""
        return commands

    @staticmethod
    def require_kafka_up(kafka_bootstrap: str) -> None:
        """Fail unless .deps/kafka-run/bootstrap, where the blocks read the broker's address (`make kafka-up` writes
        it), names the test broker."""
        written = ROOT / ".deps" / "kafka-run" / "bootstrap"
        if not written.is_file() or written.read_text().strip() != kafka_bootstrap:
            pytest.fail(f"the documented commands read the broker's address from {written} (`make kafka-up` writes "
                        f"it), which does not name the test broker {kafka_bootstrap}: run the suite with `make test`",
                        pytrace=False)

    def run(self, script: str, timeout_s: float = 600, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
        """``script`` with ``bash -e`` in ``cwd`` (the checkout), in a new user's shell: no activated venv (the
        venv's bin off PATH), none of the test run's PYSPARK_PYTHON, PYSPARK_DRIVER_PYTHON, VIRTUAL_ENV, SPARK_HOME
        or STREAMS_ON_SPARK_KAFKA; only binding to loopback (SPARK_LOCAL_IP), the class archive's options for
        spark-submit (a JVM of another class path refuses the archive quietly) and ``env`` added."""
        venv_bin = str(Path(sys.executable).parent)
        path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != venv_bin)
        shell = {k: v for k, v in os.environ.items()
                 if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV", "SPARK_HOME", KAFKA_ENV)}
        shell.update(PATH=path, SPARK_LOCAL_IP="127.0.0.1", **{**self.fast_jvm_env, **env})
        return subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True, timeout=timeout_s,
                              env=shell, cwd=cwd)


@pytest.fixture(scope="session")
def documented(fast_jvm_env) -> DocumentedCommands:
    """README's and docs/' command blocks, and a new user's shell to run them in (:class:`DocumentedCommands`)."""
    return DocumentedCommands(fast_jvm_env)

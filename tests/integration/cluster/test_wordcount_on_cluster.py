"""The README word count as a user deploys it: spark-submit to the standalone cluster, the library shipped as the
wheel, the executors doing the work and writing every record (the driver may collect at most 1 MB per action).

The counts read back must equal the in-process driver's per partition, every count update on its key's murmur2
partition with its timestamp and the input's headers; each upstream micro-batch writes well over 10 MB. Over
embedded topics the same holds when an executor JVM is killed with SIGKILL mid-run: Spark starts another, retries the
lost tasks, and the tasks' idempotent appends leave exactly one count update per word.
"""
from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from streams_on_spark import Serdes, TestRecord, TopologyTestDriverBuilder
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.connectors.kafka import kafka_jars
from streams_on_spark.partitioner import partition_for_key

pytestmark = [pytest.mark.cluster, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "wordcount.py"
TEXT = ROOT / "examples" / "data" / "streams.txt"
PARTITIONS = 4
REPEAT = 1600  # 395k words in two waves: each upstream batch writes ~11 MB of repartition records (cache off)
HEADERS = (("source", b"streams.txt"),)
S, L = Serdes.String(), Serdes.Long()
SUBMIT_CONF = {"spark.driver.maxResultSize": "1m"}
_WROTE = re.compile(r"batch \d+: \d+ tasks wrote (\d+) records \((\d+) bytes\)")


def sentences() -> list[tuple[str, str]]:
    lines = [line for line in TEXT.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(f"line-{i}", line) for _ in range(REPEAT) for i, line in enumerate(lines)]


def words(sentence: str) -> list[str]:
    """The example's tokenizer."""
    return sentence.lower().replace(",", " ").replace(".", " ").split()


@functools.lru_cache(maxsize=2)   # the embedded tests share their timestamps: one driver run of 395k words for both
def expected(timestamps: tuple[int, ...]) -> dict[int, dict[str, tuple[int, int]]]:
    """The in-process driver's result: per partition, word -> (final count, timestamp of its last update)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("wordcount_example", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    driver = (TopologyTestDriverBuilder(example.word_count_topology()).with_config({"application.id": "wordcount"})
              .declare_topic("sentences", PARTITIONS).declare_topic("word-counts-out", PARTITIONS).build())
    with driver:
        topic = driver.create_input_topic("sentences", S, S)
        topic.pipe_record_list([TestRecord(k, v, ts, HEADERS) for (k, v), ts in zip(sentences(), timestamps)])
        last: dict[int, dict[str, tuple[int, int]]] = {p: {} for p in range(PARTITIONS)}
        for r in driver.create_output_topic("word-counts-out", S, L).read_records_to_list():
            last[r.partition][r.key] = (r.value, r.timestamp)
        for p in range(PARTITIONS):
            assert {kv.key: kv.value for kv in driver.get_key_value_store("word-counts", p).all()} == \
                {w: c for w, (c, _) in last[p].items()}
        return last


def check(records_by_partition: dict[int, list[tuple]], timestamps: list[int]) -> None:
    """Every update on its key's partition with the input's headers; the last per word equals the driver's."""
    got: dict[int, dict[str, tuple[int, int]]] = {p: {} for p in range(PARTITIONS)}
    for p, records in records_by_partition.items():
        for key, value, timestamp, headers in records:
            assert partition_for_key(key, PARTITIONS) == p, (key, p)
            assert tuple(headers) == HEADERS, headers
            got[p][S.deserialize("o", key)] = (L.deserialize("o", value), timestamp)
    assert got == expected(tuple(timestamps))


def wrote_over_10mb(submission) -> None:
    written = [int(m.group(2)) for m in _WROTE.finditer(submission.output)]
    assert written and max(written) > 10 << 20, f"largest batch wrote {max(written, default=0)} bytes"


def driver_env(library_py_files: Path) -> dict[str, str]:
    """The driver host imports the library from the shipped zip too: Spark's planner of Python streaming sources (the
    embedded topics) runs there with ``spark.pyspark.python`` and the driver's PYTHONPATH, without --py-files."""
    return {"PYTHONPATH": str(library_py_files)}


def example_args(tmp_path: Path, *more: str) -> list[str]:
    return ["--repeat", str(REPEAT), "--partitions", str(PARTITIONS), "--cache-bytes", "0",
            "--checkpoint-dir", str(tmp_path / "checkpoints"), "--verbose", *more]


def embedded_timestamps() -> list[int]:
    half = len(sentences()) // 2  # the example appends two waves, each stamped 1000 + its index
    return [1_000 + i for i in range(half)] + [1_000 + i for i in range(len(sentences()) - half)]


def read_embedded(root: Path) -> dict[int, list[tuple]]:
    with EmbeddedTopics(str(root)) as topics:
        return {p: [(r.key, r.value, r.timestamp, r.headers) for r in
                    topics.read("word-counts-out", p, 0, topics.end_offset("word-counts-out", p))]
                for p in range(PARTITIONS)}


def test_wordcount_submitted_to_the_cluster_over_kafka(spark_submit, library_py_files, kafka_bootstrap, read_topic,
                                                      tmp_path):
    run = uuid.uuid4().hex[:8]
    source, sink = f"cluster-in-{run}", f"cluster-out-{run}"
    submission = spark_submit(EXAMPLE, *example_args(tmp_path, "--bootstrap-servers", kafka_bootstrap,
                                                     "--input-topic", source, "--output-topic", sink),
                              py_files=[library_py_files], timeout_s=1200, env=driver_env(library_py_files),
                              conf={**SUBMIT_CONF, "spark.jars": ",".join(kafka_jars())})
    assert submission.returncode == 0, submission.failure()
    assert f"spark: master {submission.command[2]}" in submission.stdout
    assert submission.executor_pids_seen, "no executor ran on the cluster"
    wrote_over_10mb(submission)
    records: dict[int, list[tuple]] = {p: [] for p in range(PARTITIONS)}
    for r in read_topic(sink, PARTITIONS, timeout_s=300):
        records[r.partition].append((r.key, r.value, r.timestamp, r.headers))
    check(records, [1_000 + i for i in range(len(sentences()))])


def test_wordcount_submitted_to_the_cluster_over_embedded_topics(spark_submit, library_py_files, tmp_path):
    topics = tmp_path / "topics"
    submission = spark_submit(EXAMPLE, *example_args(tmp_path, "--topics-dir", str(topics)),
                              py_files=[library_py_files], timeout_s=1200, env=driver_env(library_py_files), conf=SUBMIT_CONF)
    assert submission.returncode == 0, submission.failure()
    assert f"spark: master {submission.command[2]}" in submission.stdout
    assert submission.executor_pids_seen, "no executor ran on the cluster"
    wrote_over_10mb(submission)
    check(read_embedded(topics), embedded_timestamps())


def test_an_executor_killed_mid_run_is_replaced_and_nothing_is_lost_or_doubled(spark_submit, spark_cluster,
                                                                             library_py_files, tmp_path):
    topics = tmp_path / "topics"
    killed: list[int] = []

    def kill_once_the_upstream_wrote(proc: subprocess.Popen) -> None:
        if killed:
            return
        repartition = topics / "topics" / "wordcount-by-word-repartition" / "end-offsets"
        if repartition.exists() and any(repartition.read_bytes()[:8 * PARTITIONS]):
            for pid in spark_cluster.executor_pids():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

    submission = spark_submit(EXAMPLE, *example_args(tmp_path, "--topics-dir", str(topics)),
                              py_files=[library_py_files], timeout_s=1200, env=driver_env(library_py_files),
                              conf={**SUBMIT_CONF, "spark.task.maxFailures": "4"},
                              while_running=kill_once_the_upstream_wrote)
    assert killed, "the run ended before an executor could be killed"
    assert submission.returncode == 0, submission.failure()
    assert set(submission.executor_pids_seen) - set(killed), "no executor replaced the killed one"
    records = read_embedded(topics)
    assert sum(len(r) for r in records.values()) == sum(len(words(s)) for _, s in sentences())  # one update a word
    check(records, embedded_timestamps())

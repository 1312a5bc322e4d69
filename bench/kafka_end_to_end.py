"""The README word count end to end on a real Kafka broker: ours vs hand-written PySpark vs Kafka Streams vs Quix.

N words (default 1,000,000; 10-word sentences, 5,000 distinct words, the generator of bench/driver_throughput.py)
are produced once with kafka-python into a fresh 4-partition input topic. Then, on the same broker and data, each
run reads that topic from the beginning and writes word counts to its own fresh output topic:

  ours      KafkaStreams(word count, {"bootstrap.servers": ...}) on Spark (local[2], Spark's Kafka source, the
            ``<app>-by-word-repartition`` topic, Kafka's default record cache: the last count per word and
            micro-batch); timed from ``start()`` to the end
            of ``process_all_available()``.
  ours-eos  the same with ``processing.guarantee=exactly_once_v2``: each task writes a micro-batch in one Kafka
            transaction with its consumed offsets, every read is read_committed.
  ours-pipeline  ours with ``pipeline.mode=true`` (opt-in): the upstream subtopology runs before the counting
            query's shuffle, which replaces the repartition topic (docs/performance.md).
  pyspark   a hand-written Structured Streaming query: Spark's kafka source -> ``explode(split(lower(value)))``
            -> ``groupBy(word).count()`` -> Spark's kafka sink (update mode, ``availableNow`` trigger); timed
            from ``start()`` to termination.
  java      Kafka Streams (Java, kafka-streams at the broker's version), bench/baselines/kafka-streams-wordcount,
            with Kafka Streams' default record cache (10 MiB: counts are deduplicated per commit interval).
  java-nocache  the same with ``statestore.cache.max.bytes=0``: one count update per word.
            Both Java runs are timed from ``KafkaStreams.start()`` until the application's consumer group has
            committed the end offsets of the input and the repartition topic (``commit.interval.ms=1000``, so the
            end is seen at most ~1 s late; ``--java-commit-ms``).
  java-eos  the ``java`` run with ``processing.guarantee=exactly_once_v2`` (a transaction per commit interval).
  quix      Quix Streams (Python, the version pinned in bench/baselines/quix/requirements.txt, run from its own
            venv .venv-quix: ``make quix-venv``), bench/baselines/quix/wordcount.py: ``apply(split, expand)`` ->
            ``group_by(word)`` (its repartition topic) -> stateful count (RocksDB + changelog topic) -> output, no
            record cache (one count update per word); two processes in one consumer group (two consumers, like the
            2 cores), ``commit_interval`` 1 s (``--quix-commit-interval``). Timed from the first process's
            ``Application.run()`` until the group has committed the end offsets of the input and the repartition
            topic (seen by this script, polling every 0.1 s), then the processes are stopped with SIGTERM.

Output topics of the exactly-once runs are read back with ``isolation.level=read_committed``.

Every run's output topic is read back (last value per word) and checked against a Counter of the input; a
mismatch fails the benchmark. Prints words/s for each run and the ratios, then a Markdown block for
bench/RESULTS.md. The run's topics (prefix ``kbench-<time>-<pid>``) and consumer groups are deleted afterwards.
Every wait is bounded (``--timeout`` per run), so the script always stops by itself.

Needs a broker (``make kafka-up``; the bootstrap address comes from ``$STREAMS_ON_SPARK_KAFKA``, else
``.deps/kafka-run/bootstrap``, or ``--bootstrap-servers``), the Spark Kafka jars (``make deps-spark-kafka``) and
the Java baseline, built with Maven from Maven Central if its jar is missing:

    mvn -q -s deps/settings.xml -f bench/baselines/kafka-streams-wordcount/pom.xml package

and, for the quix run, .venv-quix (``make quix-venv``; ``make bench-kafka`` makes both).

    .venv/bin/python bench/kafka_end_to_end.py [--words N]
        [--runs ours,ours-eos,ours-pipeline,pyspark,java,java-nocache,java-eos,quix]
"""
from __future__ import annotations

import argparse
import collections
import datetime
import logging
import os
import platform
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[1]
JAVA_PROJECT = ROOT / "bench" / "baselines" / "kafka-streams-wordcount"
JAVA_JAR = JAVA_PROJECT / "target" / "kafka-streams-wordcount.jar"
JAVA_LIB = JAVA_PROJECT / "target" / "lib"
QUIX_PYTHON = ROOT / ".venv-quix" / "bin" / "python"
QUIX_SCRIPT = ROOT / "bench" / "baselines" / "quix" / "wordcount.py"
QUIX_REQUIREMENTS = ROOT / "bench" / "baselines" / "quix" / "requirements.txt"
BOOTSTRAP_ENV = "STREAMS_ON_SPARK_KAFKA"
RUNS = ("ours", "ours-eos", "ours-pipeline", "pyspark", "java", "java-nocache", "java-eos", "quix")
PARTITIONS = 4

log = logging.getLogger("bench.kafka_end_to_end")


def sentences(words: int, seed: int = 7, per_sentence: int = 10) -> list[str]:
    """bench/driver_throughput.py's generator: ``words`` words in sentences of 10, over w0..w4999."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(5000)]
    return [" ".join(rng.choice(vocabulary) for _ in range(min(per_sentence, words - start)))
            for start in range(0, words, per_sentence)]


# -- Kafka helpers (kafka-python) -----------------------------------------------------------------------------------

def admin_client(bootstrap: str):
    from kafka import KafkaAdminClient
    return KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kafka-bench-admin", request_timeout_ms=30000)


def create_topics(bootstrap: str, topics: list[str], partitions: int) -> None:
    from kafka.admin import NewTopic
    admin = admin_client(bootstrap)
    try:
        admin.create_topics([NewTopic(t, partitions, 1) for t in topics], timeout_ms=30000)
        admin.wait_for_topics(topics, timeout_ms=30000)
    finally:
        admin.close()
    log.info("created topics %s (%d partitions each)", topics, partitions)


def delete_run_topics(bootstrap: str, prefix: str, groups: list[str]) -> None:
    """Best effort: delete every topic whose name holds ``prefix`` (``prefix*``, and Quix Streams' internal
    ``repartition__<group>--...`` / ``changelog__<group>--...`` topics) and the given consumer groups."""
    admin = admin_client(bootstrap)
    try:
        topics = sorted(t for t in admin.list_topics() if prefix in t)
        if topics:
            admin.delete_topics(topics, timeout_ms=30000)
            log.info("deleted topics %s", topics)
        if groups:
            try:
                admin.delete_groups(groups)  # kafka-python 3 (2.x: delete_consumer_groups)
            except Exception as e:  # a group that never committed does not exist
                log.debug("deleting consumer groups %s: %s", groups, e)
    except Exception as e:
        log.warning("cleaning up the topics of %s failed: %s", prefix, e)
    finally:
        admin.close()


def produce(bootstrap: str, topic: str, lines: list[str], partitions: int, timeout_s: float) -> float:
    """Write ``lines`` (null keys) round-robin over the partitions; returns the seconds it took."""
    from kafka import KafkaProducer
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="kafka-bench-producer", acks="all",
                             linger_ms=20, batch_size=512 * 1024, max_block_ms=int(timeout_s * 1000),
                             compression_type=None)
    start = time.perf_counter()
    try:
        for i, line in enumerate(lines):
            producer.send(topic, value=line.encode(), partition=i % partitions)
            if (i + 1) % 50_000 == 0:
                log.info("produced %d/%d sentences", i + 1, len(lines))
        producer.flush(timeout=timeout_s)
    finally:
        producer.close(timeout=30)
    return time.perf_counter() - start


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="kafka-bench-offsets", enable_auto_commit=False)
    try:
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        return {tp.partition: off for tp, off in consumer.end_offsets(parts).items()}
    finally:
        consumer.close()


def read_counts(bootstrap: str, topic: str, timeout_s: float, committed: bool = False) -> tuple[dict[str, int], int]:
    """The last value (a Long serde, 8 bytes big-endian) of every key of ``topic``, and its record count
    (``committed``: as a read_committed consumer)."""
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="kafka-bench-reader", enable_auto_commit=False,
                             auto_offset_reset="earliest", max_partition_fetch_bytes=8 * 1024 * 1024,
                             fetch_max_bytes=64 * 1024 * 1024,
                             isolation_level="read_committed" if committed else "read_uncommitted")
    counts: dict[str, int] = {}
    records = 0
    try:
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        ends = consumer.end_offsets(parts)
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < ends[tp] for tp in parts):
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading back {topic} did not finish within {timeout_s:.0f}s")
            for batch in consumer.poll(timeout_ms=1000, max_records=100_000).values():
                for record in batch:
                    counts[record.key.decode()] = struct.unpack(">q", record.value)[0]
                records += len(batch)
    finally:
        consumer.close()
    return counts, records


# -- the runs ---------------------------------------------------------------------------------------------------------

class Run:
    def __init__(self, name: str, label: str) -> None:
        self.name, self.label = name, label
        self.seconds: Optional[float] = None
        self.detail = ""
        self.output_records: Optional[int] = None
        self.error: Optional[str] = None
        self.counts_ok: Optional[bool] = None


def word_count(input_topic: str, output_topic: str):
    from streams_on_spark import Consumed, Grouped, Materialized, Produced, Serdes, StreamsBuilder
    S, L = Serdes.String(), Serdes.Long()
    builder = StreamsBuilder()
    (builder.stream(input_topic, Consumed.with_(S, S))
     .flat_map_values(lambda sentence: sentence.lower().split())
     .select_key(lambda _key, word: word)
     .group_by_key(Grouped.as_("by-word").with_key_serde(S).with_value_serde(S))
     .count(Materialized.as_("word-counts"))
     .to_stream()
     .to(output_topic, Produced.with_(S, L)))
    return builder.build()


def run_ours(spark, bootstrap: str, input_topic: str, output_topic: str, app_id: str, timeout_s: float,
             work: str, guarantee: str = "at_least_once", pipeline: bool = False) -> tuple[float, str]:
    from streams_on_spark import KafkaStreams
    config = {"application.id": app_id, "bootstrap.servers": bootstrap,
              "checkpoint.location": os.path.join(work, app_id), "processing.guarantee": guarantee,
              "pipeline.mode": pipeline}
    with KafkaStreams(word_count(input_topic, output_topic), config, spark) as streams:
        start = time.perf_counter()
        streams.start()
        started = time.perf_counter()
        streams.process_all_available(timeout_s)
        end = time.perf_counter()
    return end - start, f"start() {started - start:.2f} s"


def run_pyspark(spark, bootstrap: str, input_topic: str, output_topic: str, app_id: str, timeout_s: float,
                work: str) -> tuple[float, str]:
    from pyspark.sql import functions as F
    from streams_on_spark.runtime.spark.session import session_conf
    source = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", input_topic).option("startingOffsets", "earliest")
              .option("failOnDataLoss", "false").load())
    words = (source.select(F.explode(F.split(F.lower(F.col("value").cast("string")), r"\s+")).alias("word"))
             .where(F.col("word") != ""))
    counts = words.groupBy("word").count()
    # key: the word's UTF-8 bytes; value: the count as a Long serde writes it (8 bytes, big-endian)
    out = counts.select(F.col("word").cast("binary").alias("key"),
                        F.unhex(F.lpad(F.hex(F.col("count")), 16, "0")).alias("value"))
    start = time.perf_counter()
    with session_conf(spark, "spark.sql.shuffle.partitions", str(PARTITIONS)):   # this query's; ours keep theirs
        query = (out.writeStream.queryName(app_id).format("kafka").option("kafka.bootstrap.servers", bootstrap)
                 .option("topic", output_topic).outputMode("update")
                 .option("checkpointLocation", os.path.join(work, app_id))
                 .trigger(availableNow=True).start())
    try:
        if not query.awaitTermination(timeout_s):
            raise TimeoutError(f"the PySpark query did not finish within {timeout_s:.0f}s")
    finally:
        if query.isActive:
            query.stop()
    elapsed = time.perf_counter() - start
    batches = len(query.recentProgress)
    return elapsed, f"{batches} batch(es)"


def build_java() -> None:
    if JAVA_JAR.exists() and JAVA_LIB.is_dir():
        return
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError(f"{JAVA_JAR} is missing and mvn is not installed: install Maven 3.8+ and run "
                           f"mvn -q -s deps/settings.xml -f {JAVA_PROJECT.relative_to(ROOT)}/pom.xml package")
    log.info("building the Java baseline with Maven (dependencies from Maven Central)")
    subprocess.run([mvn, "-B", "-q", "-s", str(ROOT / "deps" / "settings.xml"), "-f", str(JAVA_PROJECT / "pom.xml"),
                    "package"], check=True, cwd=ROOT, timeout=900)


def run_java(bootstrap: str, input_topic: str, output_topic: str, app_id: str, timeout_s: float, work: str,
             threads: int, cache_bytes: Optional[int], commit_ms: int,
             guarantee: str = "at_least_once") -> tuple[float, str]:
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    cmd = [java, "-Xms512m", "-Xmx1g", "-cp", f"{JAVA_JAR}{os.pathsep}{JAVA_LIB}/*", "WordCount",
           f"bootstrap={bootstrap}", f"input={input_topic}", f"output={output_topic}", f"application.id={app_id}",
           f"state.dir={os.path.join(work, app_id)}", f"threads={threads}", f"commit.interval.ms={commit_ms}",
           f"timeout.s={timeout_s}", f"processing.guarantee={guarantee}"]
    if cache_bytes is not None:
        cmd.append(f"cache.max.bytes={cache_bytes}")
    log.info("running %s", " ".join(cmd))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=work)
    try:
        out, _ = proc.communicate(timeout=timeout_s + 60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise TimeoutError(f"the Java WordCount (pid {proc.pid}) did not exit within {timeout_s + 60:.0f}s")
    for line in out.splitlines():
        log.info("java: %s", line)
    result = [line for line in out.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not result:
        tail = "\n".join(out.splitlines()[-20:])
        raise RuntimeError(f"the Java WordCount exited with code {proc.returncode}:\n{tail}")
    fields = dict(item.split("=", 1) for item in result[-1].split()[1:])
    return float(fields["elapsed_s"]), f"{float(fields['running_s']):.2f} s after RUNNING"


class GroupProgress:
    """A consumer group's progress on some topics, with one admin client and one consumer kept open between polls."""

    def __init__(self, bootstrap: str, group: str, topics: list[str]) -> None:
        from kafka import KafkaAdminClient, KafkaConsumer
        self.group, self.topics = group, topics
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kafka-bench-progress",
                                      request_timeout_ms=30000)
        self.consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="kafka-bench-progress",
                                      enable_auto_commit=False)

    def poll(self) -> Optional[tuple[dict[str, int], dict[str, int]]]:
        """(end offsets summed per topic, lag per topic: records beyond the group's committed offsets, no commit
        counting as offset 0); None while a topic does not exist yet."""
        from kafka import TopicPartition
        existing = set(self.admin.list_topics())
        if any(t not in existing for t in self.topics):
            return None
        parts = [TopicPartition(t, p) for t in self.topics for p in sorted(self.consumer.partitions_for_topic(t) or ())]
        if {tp.topic for tp in parts} != set(self.topics):
            return None
        ends = self.consumer.end_offsets(parts)
        try:
            committed = self.admin.list_group_offsets({self.group: None}).get(self.group) or {}
        except Exception as e:  # the group does not exist until its first join/commit
            log.debug("committed offsets of %s: %s", self.group, e)
            committed = {}
        total = dict.fromkeys(self.topics, 0)
        lag = dict.fromkeys(self.topics, 0)
        for tp, end in ends.items():
            done = committed[tp].offset if tp in committed else 0
            total[tp.topic] += end
            lag[tp.topic] += end - max(done, 0)
        return total, lag

    def close(self) -> None:
        self.consumer.close()
        self.admin.close()


def quix_version() -> str:
    for line in QUIX_REQUIREMENTS.read_text().splitlines():
        if line.strip().startswith("quixstreams=="):
            return line.strip().split("==", 1)[1]
    return "?"


def run_quix(bootstrap: str, input_topic: str, output_topic: str, app_id: str, timeout_s: float, work: str,
             processes: int, commit_interval_s: float, words: int) -> tuple[float, str]:
    """Quix Streams in ``processes`` processes of .venv-quix, one consumer group; the seconds from the first one's
    ``Application.run()`` until the group has committed the ends of the input and the repartition topic."""
    import json
    import signal
    repartition = f"repartition__{app_id}--{input_topic}--by-word"
    procs, logs, started_files = [], [], []
    progress: Optional[GroupProgress] = None
    try:
        for i in range(processes):
            state_dir = os.path.join(work, app_id, f"state-{i}")
            os.makedirs(state_dir)
            started_files.append(os.path.join(work, app_id, f"started-{i}.json"))
            logs.append(open(os.path.join(work, app_id, f"worker-{i}.log"), "w+"))
            cmd = [str(QUIX_PYTHON), "-W", "ignore", str(QUIX_SCRIPT), "--bootstrap", bootstrap, "--input", input_topic,
                   "--output", output_topic, "--group", app_id, "--state-dir", state_dir,
                   "--started-file", started_files[-1], "--commit-interval", str(commit_interval_s)]
            log.info("starting %s", " ".join(cmd))
            procs.append(subprocess.Popen(cmd, stdout=logs[-1], stderr=subprocess.STDOUT, cwd=work))
        progress = GroupProgress(bootstrap, app_id, [input_topic, repartition])
        deadline = time.monotonic() + timeout_s
        last_log = time.monotonic()
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError(f"Quix Streams did not process the input within {timeout_s:.0f}s")
            dead = [(i, p.returncode) for i, p in enumerate(procs) if p.poll() is not None]
            if dead:
                i = dead[0][0]
                logs[i].seek(0)
                tail = "\n".join(logs[i].read().splitlines()[-20:])
                raise RuntimeError(f"Quix Streams process {i} exited with code {dead[0][1]}:\n{tail}")
            state = progress.poll()
            if state is not None and not any(state[1].values()) and state[0][repartition] >= words:
                end = time.time()
                break
            if time.monotonic() - last_log > 5:
                last_log = time.monotonic()
                log.info("quix: %s", "repartition topic not created yet" if state is None else
                         f"lag input {state[1][input_topic]}, repartition {state[1][repartition]}")
            time.sleep(0.1)
        starts = [json.loads(Path(f).read_text()) for f in started_files]
    finally:
        if progress is not None:
            progress.close()
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for i, f in enumerate(logs):
            f.seek(0)
            for line in f.read().splitlines():
                log.debug("quix %d: %s", i, line)
            f.close()
    start = min(s["started"] for s in starts)
    return end - start, f"quixstreams {starts[0]['version']}, {processes} processes"


# -- main -------------------------------------------------------------------------------------------------------------

def guarantee(run: str) -> str:
    """The processing.guarantee of a run: exactly_once_v2 for the ``-eos`` runs."""
    return "exactly_once_v2" if run.endswith("-eos") else "at_least_once"


def default_bootstrap() -> Optional[str]:
    if os.environ.get(BOOTSTRAP_ENV):
        return os.environ[BOOTSTRAP_ENV]
    path = ROOT / ".deps" / "kafka-run" / "bootstrap"
    return path.read_text().strip() if path.exists() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--bootstrap-servers", default=None,
                        help=f"default: ${BOOTSTRAP_ENV}, else .deps/kafka-run/bootstrap (make kafka-up)")
    parser.add_argument("--runs", default=",".join(RUNS), help=f"comma-separated subset of {','.join(RUNS)}")
    parser.add_argument("--warmup-words", type=int, default=20_000,
                        help="words for an unmeasured first run of ours and pyspark (JVM/JIT, Python workers); 0: none")
    parser.add_argument("--java-threads", type=int, default=2,
                        help="num.stream.threads of the Java runs (default 2, as Spark's local[2])")
    parser.add_argument("--java-commit-ms", type=int, default=1000,
                        help="commit.interval.ms of the Java runs: the end is detected from committed offsets, so "
                             "this bounds the timing error (Kafka Streams' own default is 30000)")
    parser.add_argument("--quix-processes", type=int, default=2,
                        help="Quix Streams processes in the quix run's consumer group (default 2, as local[2])")
    parser.add_argument("--quix-commit-interval", type=float, default=1.0,
                        help="commit_interval (seconds) of the quix run: the end is detected from committed offsets, "
                             "as for Java (Quix Streams' own default is 5.0)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds allowed per run")
    parser.add_argument("--java-options", default=None,
                        help="the Spark runs' local JVM options (default: local_session's, what `python app.py` gets)")
    parser.add_argument("--keep-topics", action="store_true", help="do not delete the run's topics afterwards")
    parser.add_argument("-v", "--verbose", action="store_true", help="also log the runtime's per-batch progress")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log.setLevel(logging.INFO)
    if args.verbose:
        logging.getLogger("streams_on_spark").setLevel(logging.INFO)
    logging.getLogger("kafka").setLevel(logging.ERROR)

    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    unknown = [r for r in runs if r not in RUNS]
    if unknown or not runs:
        parser.error(f"--runs: unknown {unknown}; choose from {RUNS}")
    bootstrap = args.bootstrap_servers or default_bootstrap()
    if not bootstrap:
        parser.error(f"no broker: run `make kafka-up`, set ${BOOTSTRAP_ENV} or pass --bootstrap-servers")
    from streams_on_spark.connectors.kafka import kafka_jars
    jars = kafka_jars()
    if any(r.startswith(("ours", "pyspark")) for r in runs) and not jars:
        parser.error("no Spark Kafka connector jars: run `make deps-spark-kafka`")
    if any(r.startswith("java") for r in runs):
        build_java()
    if "quix" in runs and not QUIX_PYTHON.exists():
        parser.error(f"no {QUIX_PYTHON.relative_to(ROOT)}: run `make quix-venv` (Quix Streams in a venv of its own)")

    rid = f"kbench-{time.strftime('%Y%m%d%H%M%S')}-{os.getpid()}"
    input_topic = f"{rid}-sentences"
    log.info("run %s on Kafka at %s: %d words, runs %s", rid, bootstrap, args.words, runs)
    lines = sentences(args.words)
    expected = collections.Counter(w for line in lines for w in line.lower().split())
    results: list[Run] = []
    groups: list[str] = []
    work = tempfile.mkdtemp(prefix="kafka-bench-")
    spark = None
    try:
        create_topics(bootstrap, [input_topic] + [f"{rid}-{r}-out" for r in runs], PARTITIONS)
        produce_s = produce(bootstrap, input_topic, lines, PARTITIONS, args.timeout)
        assert sum(end_offsets(bootstrap, input_topic).values()) == len(lines)
        log.info("produced %d sentences (%d words) into %s in %.2f s", len(lines), args.words, input_topic, produce_s)

        if any(r.startswith(("ours", "pyspark")) for r in runs):
            from streams_on_spark.runtime.spark.session import LOCAL_JAVA_OPTIONS, local_session
            spark = local_session("bench-kafka-end-to-end", jars=jars,
                                  java_options=LOCAL_JAVA_OPTIONS if args.java_options is None else args.java_options)
            if args.warmup_words > 0:
                warm_input = f"{rid}-warmup-sentences"
                warm = [r for r in ("ours", "pyspark") if r in runs or f"{r}-eos" in runs or f"{r}-pipeline" in runs]
                create_topics(bootstrap, [warm_input] + [f"{rid}-warmup-{r}-out" for r in warm], PARTITIONS)
                produce(bootstrap, warm_input, sentences(args.warmup_words, seed=1), PARTITIONS, args.timeout)
                for r in warm:
                    log.info("warm-up run of %s (%d words, not measured)", r, args.warmup_words)
                    fn = run_ours if r == "ours" else run_pyspark
                    fn(spark, bootstrap, warm_input, f"{rid}-warmup-{r}-out", f"{rid}-warmup-{r}", args.timeout,
                       work)

        labels = {
            "ours": "ours: `KafkaStreams` on Spark, 2 subtopology queries, repartition topic, "
                    "default record cache (last count per word and micro-batch)",
            "ours-eos": "ours with `processing.guarantee=exactly_once_v2` (a transaction per task and micro-batch, "
                        "read_committed)",
            "ours-pipeline": "ours with `pipeline.mode=true` (opt-in: one query, Spark's shuffle in place of the "
                             "repartition topic)",
            "pyspark": "hand-written PySpark: kafka source → `explode(split)` → `groupBy(word).count()` → "
                       "kafka sink, update mode, availableNow",
            "java": f"Kafka Streams 4.3.1 (Java), {args.java_threads} stream thread(s), "
                    f"`commit.interval.ms={args.java_commit_ms}`, default 10 MiB record cache",
            "java-nocache": f"Kafka Streams 4.3.1 (Java), {args.java_threads} stream thread(s), "
                            f"`commit.interval.ms={args.java_commit_ms}`, `statestore.cache.max.bytes=0` "
                            "(one count update per word)",
            "java-eos": f"Kafka Streams 4.3.1 (Java), {args.java_threads} stream thread(s), "
                        f"`commit.interval.ms={args.java_commit_ms}`, default record cache, "
                        "`processing.guarantee=exactly_once_v2`",
            "quix": f"Quix Streams {quix_version()} (Python), {args.quix_processes} processes in one consumer group, "
                    f"`group_by` repartition topic, RocksDB state + changelog, "
                    f"`commit_interval={args.quix_commit_interval:g}` s, no record cache",
        }
        for name in runs:
            run = Run(name, labels[name])
            results.append(run)
            output_topic, app_id = f"{rid}-{name}-out", f"{rid}-{name}"
            log.info("measuring %s -> %s", name, output_topic)
            try:
                if name in ("ours", "ours-eos", "ours-pipeline"):
                    run.seconds, run.detail = run_ours(spark, bootstrap, input_topic, output_topic, app_id,
                                                       args.timeout, work, guarantee(name),
                                                       pipeline=name == "ours-pipeline")
                elif name == "pyspark":
                    run.seconds, run.detail = run_pyspark(spark, bootstrap, input_topic, output_topic, app_id,
                                                          args.timeout, work)
                elif name == "quix":
                    groups.append(app_id)
                    run.seconds, run.detail = run_quix(bootstrap, input_topic, output_topic, app_id, args.timeout,
                                                       work, args.quix_processes, args.quix_commit_interval,
                                                       args.words)
                else:
                    groups.append(app_id)
                    run.seconds, run.detail = run_java(bootstrap, input_topic, output_topic, app_id, args.timeout,
                                                       work, args.java_threads,
                                                       0 if name == "java-nocache" else None,
                                                       args.java_commit_ms, guarantee(name))
            except Exception as e:
                run.error = f"{type(e).__name__}: {e}"
                log.error("run %s failed: %s", name, run.error, exc_info=True)
                continue
            log.info("%s: %.2f s, %s words/s (%s)", name, run.seconds, f"{args.words / run.seconds:,.0f}", run.detail)
            counts, run.output_records = read_counts(bootstrap, output_topic, args.timeout,
                                                     committed=name.endswith("-eos"))
            run.counts_ok = counts == expected
            if not run.counts_ok:
                wrong = sorted(w for w in set(counts) | set(expected) if counts.get(w) != expected.get(w))
                log.error("%s: counts differ from the input's for %d words, e.g. %s", name, len(wrong),
                          [(w, counts.get(w), expected.get(w)) for w in wrong[:5]])
            else:
                log.info("%s: %d output records, final counts match the input (%d words)", name,
                         run.output_records, len(expected))
    finally:
        if spark is not None:
            spark.stop()
        if not args.keep_topics:
            delete_run_topics(bootstrap, rid, groups)
        shutil.rmtree(work, ignore_errors=True)

    print_results(args, results, len(lines), len(expected), produce_s)
    return 0 if results and all(r.error is None and r.counts_ok for r in results) else 1


def print_results(args, results: list[Run], sentence_count: int, distinct: int, produce_s: float) -> None:
    import pyspark
    by_name = {r.name: r for r in results}
    rate: Callable[[Run], float] = lambda r: args.words / r.seconds  # noqa: E731
    print()
    print("## `bench/kafka_end_to_end.py` — README word count end to end on Kafka: ours vs PySpark vs Kafka Streams "
          "vs Quix Streams")
    print()
    print(f"{datetime.date.today().isoformat()}, {platform.python_implementation()} {platform.python_version()}, "
          f"pyspark {pyspark.__version__} (local[2]), Kafka 4.3.1 broker (single node, loopback, `make kafka-up`), "
          f"{os.cpu_count()} CPUs. {args.words:,} words in {sentence_count:,} sentences ({distinct:,} distinct words) "
          f"produced once into a {PARTITIONS}-partition topic ({produce_s:.1f} s with kafka-python); every run reads "
          f"it from the start into its own output topic, and its final counts (last value per word, read back) "
          f"are checked against the input. "
          + (f"Spark runs after an unmeasured {args.warmup_words:,}-word warm-up."
             if args.warmup_words and any(r.name.startswith(("ours", "pyspark")) for r in results) else ""))
    print()
    print("| run | seconds | words/s | output records | counts | notes |")
    print("|---|---|---|---|---|---|")
    for r in results:
        if r.error is not None:
            print(f"| {r.label} | — | — | — | FAILED | {r.error.splitlines()[0][:200]} |")
            continue
        counts = "match" if r.counts_ok else "MISMATCH"
        print(f"| {r.label} | {r.seconds:.2f} | {rate(r):,.0f} | {r.output_records:,} | {counts} | {r.detail} |")
    print()
    pairs = [("ours", "pyspark"), ("ours", "java"), ("ours", "java-nocache"), ("pyspark", "java"),
             ("ours-eos", "ours"), ("ours-eos", "java-eos"), ("java-eos", "java"), ("ours", "quix"),
             ("ours-pipeline", "java"), ("ours-pipeline", "ours"),
             ("quix", "java"), ("quix", "java-nocache")]
    for a, b in pairs:
        ra, rb = by_name.get(a), by_name.get(b)
        if ra and rb and ra.seconds and rb.seconds and ra.error is None and rb.error is None:
            print(f"- throughput ratio {a} / {b}: {rb.seconds / ra.seconds:.3f}")
    print()


if __name__ == "__main__":
    sys.exit(main())

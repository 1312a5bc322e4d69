"""End-to-end latency at low load over two hops: the README word count, one sentence at a time.

The topology is examples/wordcount.py's (``word_count_topology``): sentences -> flat_map_values -> select_key ->
the ``<app>-by-word-repartition`` topic -> count -> ``word-counts-out``; two subtopology queries, 4 partitions,
Kafka Streams' default record cache. It runs in ``KafkaStreams`` on a local Spark session (``local[2]``;
``--cores``), over embedded topics by default or, with ``--kafka``, on the test broker
(``$STREAMS_ON_SPARK_KAFKA``, else ``.deps/kafka-run/bootstrap``, else ``--bootstrap-servers``; fresh topics named
``latbench-<time>-<pid>-*``, deleted afterwards).

Once the application is up, the lines of examples/data/streams.txt are appended **one sentence at a time**: each
sample appends one sentence (stamped with the wall clock), then polls the output topic (every ``--poll-ms``) until
every word of that sentence has its new count there (the count this sentence brings it to: counts are cumulative,
so a word is done when an update with at least that count is read). The next sentence follows a random gap of
``--gap`` seconds (default 1.0-2.0, so that sentences do not phase-lock with the trigger) after the previous one
was done: only one sentence is ever in flight, the queries are idle in between (low load). ``--warmup`` samples
first are not counted (the first batches of a query plan and warm up for seconds).

Per sample it records the latency (append -> last word's count read) and its split over the hops: append -> the
first repartition record of the sentence visible (hop 1: upstream query), and from there to the end (hop 2:
downstream query). It prints p50/p90/p99/max of each (nearest rank; p99 of 50 samples is their second largest).

The trigger floor: every query's progress (``lastProgress``/``recentProgress``) of the batches run while samples
were measured, i.e. batches of one sentence (upstream) or its few words (downstream), about the least data a batch
can have. Per query: how many batches each sample took, ``durationMs.triggerExecution`` p50/p90/min, and the
median of its parts (latestOffset, getBatch, queryPlanning, addBatch, walCommit, commitOffsets). With
``--event-log DIR`` Spark's event log is written there and each query's measured batches are broken down further
(``bench/event_log.py``): before the first job (split at the batch's SQL execution and the sink's collect), each
job's stages (tasks, wall, tasks in a later wave, and the run time and SQL metrics of its tasks with shuffled rows
and without), after the last job; median and min.

Issue 25's targets: p50 <= 1 s, p99 <= 2 s; trigger floor <= 300 ms per query. A benchmark: it prints, never asserts
timings (it exits non-zero only when a count never arrives within ``--timeout``).

    .venv/bin/python bench/latency.py [--samples 50] [--warmup 5] [--trigger-interval "100 milliseconds"]
        [--gap 1.0-2.0] [--kafka [--bootstrap-servers H:P]] [--cores 2] [--partitions 4] [--event-log DIR]
        [--state-dir DIR] [--java-options OPTIONS]
    make bench-latency BENCH_ARGS="--samples 20"
"""
from __future__ import annotations

import argparse
import collections
import importlib.util
import logging
import math
import os
import random
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import event_log  # noqa: E402  (this directory's bench module)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "wordcount.py"
BOOTSTRAP_ENV = "STREAMS_ON_SPARK_KAFKA"
INPUT, OUTPUT = "sentences", "word-counts-out"
DURATIONS = ("latestOffset", "getBatch", "queryPlanning", "addBatch", "walCommit", "commitOffsets")

log = logging.getLogger("bench.latency")


def load_example() -> Any:
    """examples/wordcount.py as a module: the README's topology and its bundled text."""
    spec = importlib.util.spec_from_file_location("wordcount_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tokens(sentence: str) -> list[str]:
    """The example topology's tokenizer (its flat_map_values)."""
    return sentence.lower().replace(",", " ").replace(".", " ").split()


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of non-empty ``values``."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def summary(values: list[float], unit: float = 1000.0) -> str:
    if not values:
        return "no samples"
    return (f"p50 {percentile(values, 50) * unit:6.0f} ms   p90 {percentile(values, 90) * unit:6.0f} ms   "
            f"p99 {percentile(values, 99) * unit:6.0f} ms   max {max(values) * unit:6.0f} ms   "
            f"min {min(values) * unit:6.0f} ms   (n={len(values)})")


def default_bootstrap() -> Optional[str]:
    if os.environ.get(BOOTSTRAP_ENV):
        return os.environ[BOOTSTRAP_ENV]
    path = ROOT / ".deps" / "kafka-run" / "bootstrap"
    return path.read_text().strip() if path.exists() else None


# -- the two transports: append a sentence, see what reached the repartition and output topics ------------------------

class EmbeddedIO:
    """Embedded topics: append with ``EmbeddedTopics.append``, poll end offsets and read new records."""

    def __init__(self, partitions: int) -> None:
        from streams_on_spark.connectors.embedded import EmbeddedTopics
        self.topics = EmbeddedTopics()   # a fresh temporary directory (on /dev/shm where there is one)
        self.partitions = partitions
        self.input, self.output = INPUT, OUTPUT
        self.topics.create_topic(self.input, partitions)
        self.topics.create_topic(self.output, partitions)
        self.repartition = ""
        self._positions: dict[str, list[int]] = {}

    def config(self) -> dict[str, Any]:
        return {"embedded.topics.dir": self.topics.root}

    def watch(self, repartition: str) -> None:
        self.repartition = repartition
        self._positions = {t: list(self.topics.end_offsets(t)) for t in (repartition, self.output)}

    def send(self, partition: int, timestamp: int, sentence: str) -> None:
        from streams_on_spark.records import ProducerRecord
        self.topics.append([ProducerRecord(self.input, partition, timestamp, None, sentence.encode(), ())])

    def poll(self) -> tuple[int, list[tuple[bytes, bytes]]]:
        """(new repartition records, new output records as (key, value)) since the last poll."""
        ends = self.topics.end_offsets(self.repartition)
        new_rep = sum(e - s for e, s in zip(ends, self._positions[self.repartition]))
        self._positions[self.repartition] = list(ends)
        out: list[tuple[bytes, bytes]] = []
        ends = self.topics.end_offsets(self.output)
        for p, (start, end) in enumerate(zip(self._positions[self.output], ends)):
            if end > start:
                out.extend((r.key, r.value) for r in self.topics.read(self.output, p, start, end))
        self._positions[self.output] = list(ends)
        return new_rep, out

    def close(self) -> None:
        self.topics.close()   # removes the directory


class KafkaIO:
    """The test broker: a kafka-python producer (acks=all, no linger) and one consumer assigned to every partition
    of the repartition and output topics."""

    def __init__(self, bootstrap: str, partitions: int, prefix: str) -> None:
        from kafka import KafkaAdminClient, KafkaProducer
        from kafka.admin import NewTopic
        self.bootstrap, self.partitions, self.prefix = bootstrap, partitions, prefix
        self.input, self.output = f"{prefix}-{INPUT}", f"{prefix}-{OUTPUT}"
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="latency-bench-admin",
                                 request_timeout_ms=30_000)
        try:
            admin.create_topics([NewTopic(t, partitions, 1) for t in (self.input, self.output)], timeout_ms=30_000)
        finally:
            admin.close()
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="latency-bench-producer", acks="all",
                                      linger_ms=0)
        self.consumer: Any = None
        self.repartition = ""

    def config(self) -> dict[str, Any]:
        return {"bootstrap.servers": self.bootstrap}

    def watch(self, repartition: str) -> None:
        from kafka import KafkaConsumer, TopicPartition
        self.repartition = repartition
        self.consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, client_id="latency-bench-reader",
                                      enable_auto_commit=False, fetch_max_wait_ms=50,
                                      isolation_level="read_uncommitted")
        parts = [TopicPartition(t, p) for t in (repartition, self.output) for p in range(self.partitions)]
        self.consumer.assign(parts)
        self.consumer.seek_to_end(*parts)
        for tp in parts:
            self.consumer.position(tp)   # resolve the end now, not at the first poll after a send

    def send(self, partition: int, timestamp: int, sentence: str) -> None:
        self.producer.send(self.input, value=sentence.encode(), partition=partition, timestamp_ms=timestamp)
        self.producer.flush()

    def poll(self, timeout_ms: int = 0) -> tuple[int, list[tuple[bytes, bytes]]]:
        new_rep = 0
        out: list[tuple[bytes, bytes]] = []
        for tp, records in self.consumer.poll(timeout_ms=timeout_ms).items():
            if tp.topic == self.repartition:
                new_rep += len(records)
            else:
                out.extend((r.key, r.value) for r in records)
        return new_rep, out

    def close(self) -> None:
        from kafka import KafkaAdminClient
        for client in (self.consumer, self.producer):
            if client is not None:
                try:
                    client.close()
                except Exception:  # best effort
                    pass
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap, client_id="latency-bench-admin")
        try:
            topics = sorted(t for t in admin.list_topics() if t.startswith(self.prefix))
            if topics:
                admin.delete_topics(topics, timeout_ms=30_000)
        except Exception as e:
            log.warning("deleting the topics of %s failed: %s", self.prefix, e)
        finally:
            admin.close()


def shm_or_tmp() -> Optional[str]:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


# -- measuring -----------------------------------------------------------------------------------------------------------

class ProgressLog:
    """Every batch's progress of the application's queries, by query name and batch id (recentProgress keeps only
    the last N, so it is collected after every sample)."""

    def __init__(self, spark: Any, app_id: str) -> None:
        self.spark, self.prefix = spark, f"{app_id}-subtopology-"
        self.batches: dict[str, dict[int, dict]] = collections.defaultdict(dict)

    def queries(self) -> dict[str, Any]:
        return {q.name: q for q in self.spark.streams.active if (q.name or "").startswith(self.prefix)}

    def collect(self) -> None:
        for name, query in self.queries().items():
            for progress in query.recentProgress:   # dicts (pyspark >= 4)
                self.batches[name].setdefault(int(progress["batchId"]), progress)

    def wait_idle(self, timeout_s: float = 15.0) -> None:
        """Wait until no query is running a trigger (twice in a row, 0.1 s apart), so its last batch is posted."""
        deadline, quiet = time.monotonic() + timeout_s, 0
        while quiet < 2 and time.monotonic() < deadline:
            busy = any(q.status.get("isTriggerActive") for q in self.queries().values())
            quiet = 0 if busy else quiet + 1
            time.sleep(0.1)


def run_sample(io: Any, sentence: str, expected: dict[str, int], partition: int, poll_s: float,
               timeout_s: float) -> tuple[Optional[float], Optional[float]]:
    """Append one sentence and wait until every word has reached its expected count on the output topic; returns
    (total seconds, seconds until the first repartition record), None where it never came within ``timeout_s``."""
    waiting = {w.encode(): c for w, c in expected.items()}
    hop1: Optional[float] = None
    kafka = isinstance(io, KafkaIO)
    t0 = time.perf_counter()
    io.send(partition, int(time.time() * 1000), sentence)
    while True:
        new_rep, out = io.poll(int(poll_s * 1000)) if kafka else io.poll()
        now = time.perf_counter()
        if new_rep and hop1 is None:
            hop1 = now - t0
        for key, value in out:
            want = waiting.get(key)
            if want is not None and struct.unpack(">q", value)[0] >= want:
                del waiting[key]
        if not waiting:
            return now - t0, hop1
        if now - t0 > timeout_s:
            log.warning("sample %r: no count for %s within %.0f s", sentence, sorted(waiting), timeout_s)
            return None, hop1
        if not kafka:
            time.sleep(poll_s)


def floor_report(progress: ProgressLog, measured: dict[str, set[int]], samples: int,
                 timeline: Optional[event_log.Timeline] = None) -> list[str]:
    lines = []
    for name in sorted(measured):
        batches = [progress.batches[name][b] for b in sorted(measured[name]) if b in progress.batches[name]]
        if not batches:
            lines.append(f"  {name}: no batch seen")
            continue
        trig = [b["durationMs"].get("triggerExecution", 0) / 1000 for b in batches]
        rows = [b.get("numInputRows", 0) for b in batches]
        parts = "  ".join(f"{k} {statistics.median(b['durationMs'].get(k, 0) for b in batches):.0f}"
                          for k in DURATIONS)
        lines.append(f"  {name}: {len(batches)} batches for {samples} samples ({len(batches) / max(samples, 1):.2f} "
                     f"per sample), input rows per batch median {statistics.median(rows):.0f}")
        lines.append(f"    triggerExecution  {summary(trig)}")
        lines.append(f"    median ms: {parts}")
        if timeline is not None:
            rows = [row for b in batches if (row := timeline.batch(
                b["id"], int(b["batchId"]), _epoch_ms(b["timestamp"]), b["durationMs"].get("triggerExecution", 0)))]
            lines.append(f"    inside the batch ({len(rows)} batches in the event log), median / min:")
            lines.extend(f"      {key:<58} {med:8.1f} {low:8.1f}" for key, med, low in event_log.medians(rows))
    return lines


def _epoch_ms(timestamp: str) -> float:
    """A progress' ``timestamp`` (its trigger's start, UTC) in epoch ms."""
    import datetime
    return datetime.datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp() * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50, help="measured sentences (default 50)")
    parser.add_argument("--warmup", type=int, default=5, help="sentences sent first and not counted (default 5)")
    parser.add_argument("--trigger-interval", default="100 milliseconds",
                        help="KafkaStreams' trigger.interval (Spark processing-time trigger; default its default, "
                             "'100 milliseconds')")
    parser.add_argument("--gap", default="1.0-2.0",
                        help="seconds between a sample's end and the next append: 'a-b' uniform, or one number")
    parser.add_argument("--poll-ms", type=float, default=5.0, help="how often the output topic is polled")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a sample may take before it is lost")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--cores", type=int, default=2, help="local[N] (default 2)")
    parser.add_argument("--kafka", action="store_true", help="run on the test broker instead of embedded topics")
    parser.add_argument("--bootstrap-servers", default=None,
                        help=f"with --kafka; default ${BOOTSTRAP_ENV}, else .deps/kafka-run/bootstrap")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--state-dir", metavar="DIR",
                        help="the application's state.dir (the tasks' local RocksDB copies; default: Spark's files "
                             "directory under spark.local.dir)")
    parser.add_argument("--java-options", metavar="OPTIONS",
                        help="the local session JVM's options (default: local_session's, LOCAL_JAVA_OPTIONS: C1 "
                             "only; '' for HotSpot's default tiered compilation with C2)")
    parser.add_argument("--event-log", metavar="DIR",
                        help="write Spark's event log to DIR and break each batch down into jobs, stages, tasks")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every sample; the library at INFO")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log.setLevel(logging.INFO)
    logging.getLogger("kafka").setLevel(logging.ERROR)
    if args.verbose:
        logging.getLogger("streams_on_spark").setLevel(logging.INFO)
    gap_lo, _, gap_hi = args.gap.partition("-")
    gap = (float(gap_lo), float(gap_hi or gap_lo))

    example = load_example()
    text = [line for _, line in example.sentences(1)]
    rng = random.Random(args.seed)
    tid = f"latbench-{time.strftime('%Y%m%d%H%M%S')}-{os.getpid()}"
    app_id = f"{tid}-wordcount"
    jars: list[str] = []
    if args.kafka:
        bootstrap = args.bootstrap_servers or default_bootstrap()
        if not bootstrap:
            parser.error(f"--kafka: no broker; run `make kafka-up`, set ${BOOTSTRAP_ENV} or pass --bootstrap-servers")
        from streams_on_spark.connectors.kafka import kafka_jars
        jars = kafka_jars()
        if not jars:
            parser.error("--kafka: no Spark Kafka connector jars; run `make deps-spark-kafka`")
        io: Any = KafkaIO(bootstrap, args.partitions, tid)
        where = f"Kafka at {bootstrap}"
    else:
        io = EmbeddedIO(args.partitions)
        where = f"embedded topics in {io.topics.root}"

    if args.event_log:
        event_log.enable(args.event_log)
    from streams_on_spark import KafkaStreams
    from streams_on_spark.runtime.spark import local_session
    started = time.perf_counter()
    options = {} if args.java_options is None else {"java_options": args.java_options}
    spark = local_session("bench-latency", cores=args.cores, jars=jars, **options)
    session_s = time.perf_counter() - started
    topology = example.word_count_topology(io.input, io.output)
    repartition = f"{app_id}-by-word-repartition"
    counts: collections.Counter[str] = collections.Counter()
    totals: list[float] = []
    hop1s: list[float] = []
    hop2s: list[float] = []
    lost = 0
    measured: dict[str, set[int]] = {}
    first_measured: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="latency-checkpoints-", dir=shm_or_tmp()) as checkpoints:
        config = {"application.id": app_id, "checkpoint.location": checkpoints,
                  "trigger.interval": args.trigger_interval, **io.config()}
        if args.state_dir:
            config["state.dir"] = args.state_dir
        try:
            with KafkaStreams(topology, config, spark) as streams:
                started = time.perf_counter()
                streams.start()
                io.watch(repartition)
                start_s = time.perf_counter() - started
                progress = ProgressLog(spark, app_id)
                print(f"latency bench: README word count, {args.partitions} partitions, {where}, "
                      f"{spark.sparkContext.master}, trigger.interval '{args.trigger_interval}', gap {args.gap} s; "
                      f"session {session_s:.1f} s, start {start_s:.1f} s"
                      + ("" if args.java_options is None else f", java options '{args.java_options}'"), flush=True)
                for i in range(args.warmup + args.samples):
                    if i == args.warmup:   # batches from here on are the measured ones
                        progress.collect()
                        first_measured = {name: max(b, default=-1) + 1 for name, b in progress.batches.items()}
                    sentence = text[i % len(text)]
                    words = tokens(sentence)
                    counts.update(words)
                    total, hop1 = run_sample(io, sentence, {w: counts[w] for w in words}, i % args.partitions,
                                             args.poll_ms / 1000, args.timeout)
                    if i < args.warmup:
                        if args.verbose:
                            print(f"  warm-up {i}: {total if total is None else round(total * 1000)} ms", flush=True)
                    elif total is None:
                        lost += 1
                    else:
                        totals.append(total)
                        if hop1 is not None:
                            hop1s.append(hop1)
                            hop2s.append(total - hop1)
                        if args.verbose:
                            print(f"  sample {i - args.warmup}: {total * 1000:.0f} ms (hop 1 "
                                  f"{'?' if hop1 is None else round(hop1 * 1000)} ms), {len(words)} words", flush=True)
                    time.sleep(rng.uniform(*gap))
                    progress.collect()   # recentProgress keeps only the last N batches: collect as we go
                progress.wait_idle()
                progress.collect()
                measured = {name: {b for b in batches if b >= first_measured.get(name, 0)}
                            for name, batches in progress.batches.items()}
        finally:
            io.close()
    spark.stop()

    print(f"\nend-to-end latency, one sentence appended -> all its words' counts on {io.output} "
          f"(2 hops, {len(totals)} samples after {args.warmup} warm-up, {lost} lost):")
    print(f"  total             {summary(totals)}")
    print(f"  hop 1 (upstream)  {summary(hop1s)}")
    print(f"  hop 2 (downstream){summary(hop2s)}")
    print("per-query trigger floor (the measured samples' batches: one sentence, or its words):")
    timeline = event_log.Timeline(event_log.events(args.event_log)) if args.event_log else None
    for line in floor_report(progress, measured, len(totals), timeline):
        print(line)
    print("targets (issue 25): p50 <= 1000 ms, p99 <= 2000 ms; trigger floor <= 300 ms per query")
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    print(f"machine load average at the end (1/5/15 min): {' '.join(load)}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())

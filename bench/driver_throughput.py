"""Throughput of the in-process TopologyTestDriver on the README word count (4 partitions), beside Kafka's own.

Pipes N words (default 1,000,000) as sentences through flat_map_values -> select_key -> group_by_key -> count ->
to_stream().to(), and prints input words per second. The runs (``--runs``, all by default), side by side in one go:

  ours          our driver, ``--partitions`` partitions, Kafka's default record cache (flushed after every record,
                as Kafka's driver commits)
  ours-nocache  the same with ``statestore.cache.max.bytes=0``
  python        a plain Python loop over the same sentences (dict of counts, murmur2 placement of each word): what
                the Kafka Streams semantics (serdes, repartition topic, per-task stores, scheduling) cost
  java          Kafka's own TopologyTestDriver (Java, kafka-streams-test-utils 4.3.1,
                bench/baselines/kafka-streams-driver-wordcount) on the same topology and sentences (written to a file
                it reads), one ``pipeInput`` per sentence, Kafka's default record cache and the DSL's default
                RocksDB store; Kafka's driver has one partition per topic (one task per subtopology)
  java-nocache  the same with ``statestore.cache.max.bytes=0``
  java-inmemory the ``java`` run with an in-memory count store (``Stores.inMemoryKeyValueStore``), the kind of
                store our driver keeps in process

Warm-up, the same for every run: an unmeasured pass over the first ``--warmup-words`` words in a driver of its own
(for Java in the same JVM, so the JIT has compiled the hot path), then the measured pass over all the words in a
fresh driver. Only the pipe loop is timed (driver construction and read-back are not), for ours and Java alike;
each Java run is a JVM of its own. Every run's final counts are checked against the plain loop's (Java's through
the number of distinct words, their sum and a checksum of its store, which it checks against its output topic).
Prints each run's words/s (ours: with the pipe loop's CPU time beside) and the ratios ours/python and ours/java.

The Java runs need target/kafka-streams-driver-wordcount.jar, which ``make bench`` builds (Maven, Maven Central);
run directly, the script builds it with mvn if it is missing:

    mvn -q -s deps/settings.xml -f bench/baselines/kafka-streams-driver-wordcount/pom.xml package

    .venv/bin/python bench/driver_throughput.py [--words N] [--partitions P] [--warmup-words W]
        [--runs ours,ours-nocache,python,java,java-nocache,java-inmemory]
"""
from __future__ import annotations

import argparse
import logging
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from streams_on_spark import (Consumed, Grouped, Materialized, Produced, Serdes, StreamsBuilder,
                              TopologyTestDriverBuilder)
from streams_on_spark.partitioner import partition_for_key

log = logging.getLogger("bench.driver_throughput")

ROOT = Path(__file__).resolve().parents[1]
JAVA_PROJECT = ROOT / "bench" / "baselines" / "kafka-streams-driver-wordcount"
JAVA_JAR = JAVA_PROJECT / "target" / "kafka-streams-driver-wordcount.jar"
JAVA_LIB = JAVA_PROJECT / "target" / "lib"
RUNS = ("ours", "ours-nocache", "python", "java", "java-nocache", "java-inmemory")


def sentences(words: int, seed: int = 7, per_sentence: int = 10) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(5000)]
    out = []
    for start in range(0, words, per_sentence):
        n = min(per_sentence, words - start)
        out.append(" ".join(rng.choice(vocabulary) for _ in range(n)))
    return out


def warmup_lines(lines: list[str], warmup_words: int) -> list[str]:
    """The first sentences holding ``warmup_words`` words (the warm-up pass of every run)."""
    out, n = [], 0
    for line in lines:
        if n >= warmup_words:
            break
        out.append(line)
        n += len(line.split())
    return out


def checksum(counts: dict[str, int]) -> int:
    """DriverWordCount.java's checksum: the sum over words of CRC32(UTF-8 "word\tcount"), unsigned."""
    return sum(zlib.crc32(f"{word}\t{count}".encode("utf-8")) for word, count in counts.items())


def word_count_topology():
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(Serdes.String(), Serdes.String()))
     .flat_map_values(lambda sentence: sentence.split())
     .select_key(lambda _key, word: word)
     .group_by_key(Grouped.with_(Serdes.String(), Serdes.String(), name="by-word"))
     .count(Materialized.as_("word-counts"))
     .to_stream()
     .to("word-counts-out", Produced.with_(Serdes.String(), Serdes.Long())))
    return builder.build()


def run_driver(lines: list[str], partitions: int,
               cache_bytes: int | None = None) -> tuple[float, float, dict[str, int]]:
    """The pipe loop's wall and CPU seconds (this process's user + sys: the box may be shared) and the final counts."""
    config = {"application.id": "bench-wc"}
    if cache_bytes is not None:
        config["statestore.cache.max.bytes"] = cache_bytes
    driver = (TopologyTestDriverBuilder(word_count_topology())
              .with_config(config)
              .declare_topic("sentences", partitions)
              .declare_topic("word-counts-out", partitions)
              .build())
    with driver:
        topic = driver.create_input_topic("sentences", Serdes.String(), Serdes.String(), start_timestamp=0)
        start, cpu_start = time.perf_counter(), time.process_time()
        for i, line in enumerate(lines):
            topic.pipe_input(f"line-{i}", line)
            if i % 10000 == 9999:
                log.info("piped %d sentences", i + 1)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        produced = driver.create_output_topic("word-counts-out", Serdes.String(), Serdes.Long()).get_queue_size()
        if produced != sum(len(line.split()) for line in lines):
            raise RuntimeError(f"expected one count update per word, got {produced} output records")
        counts: dict[str, int] = {}
        for p in range(partitions):
            for key, value in driver.get_key_value_store("word-counts", p).all():
                counts[key] = value
    return elapsed, cpu, counts


def run_baseline(lines: list[str], partitions: int) -> tuple[float, dict[str, int]]:
    start = time.perf_counter()
    stores: list[dict[str, int]] = [dict() for _ in range(partitions)]
    for line in lines:
        for word in line.split():
            store = stores[partition_for_key(word.encode("utf-8"), partitions)]
            store[word] = store.get(word, 0) + 1
    elapsed = time.perf_counter() - start
    counts = {k: v for store in stores for k, v in store.items()}
    return elapsed, counts


def build_java() -> None:
    if JAVA_JAR.exists() and JAVA_LIB.is_dir():
        return
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError(f"{JAVA_JAR} is missing and mvn is not installed: install Maven 3.8+ and run `make bench` "
                           f"(or mvn -q -s deps/settings.xml -f {JAVA_PROJECT.relative_to(ROOT)}/pom.xml package)")
    log.warning("building the Java baseline with Maven (dependencies from Maven Central)")
    subprocess.run([mvn, "-B", "-q", "-s", str(ROOT / "deps" / "settings.xml"), "-f", str(JAVA_PROJECT / "pom.xml"),
                    "package"], check=True, cwd=ROOT, timeout=900)


def run_java(input_file: str, warmup_sentences: int, work: str, cache_bytes: int | None = None,
             store: str = "rocksdb", timeout_s: float = 3600) -> tuple[float, dict[str, str]]:
    """Kafka's TopologyTestDriver in a JVM of its own (DriverWordCount.java): the seconds of its measured pipe loop
    and its RESULT fields (sentences, words, output_records, distinct, total, checksum, warmup_s, ...)."""
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    state_dir = tempfile.mkdtemp(prefix="state-", dir=work)
    cmd = [java, "-Xms1g", "-Xmx2g", "-cp", f"{JAVA_JAR}{os.pathsep}{JAVA_LIB}/*", "DriverWordCount",
           f"input={input_file}", f"warmup.lines={warmup_sentences}", f"store={store}", f"state.dir={state_dir}"]
    if cache_bytes is not None:
        cmd.append(f"cache.max.bytes={cache_bytes}")
    log.info("running %s", " ".join(cmd))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout_s)
    result = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not result:
        tail = "\n".join(proc.stdout.splitlines()[-20:])
        raise RuntimeError(f"the Java DriverWordCount exited with code {proc.returncode}:\n{tail}")
    fields = dict(item.split("=", 1) for item in result[-1].split()[1:])
    return float(fields["elapsed_s"]), fields


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4, help="partitions of our driver's topics (default 4); "
                        "Kafka's driver has one per topic")
    parser.add_argument("--runs", default=",".join(RUNS), help=f"comma-separated subset of {','.join(RUNS)}")
    parser.add_argument("--warmup-words", type=int, default=100_000,
                        help="words of the unmeasured warm-up pass every run makes first in a driver of its own "
                             "(default 100,000, capped at --words; 0: none)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    unknown = [r for r in runs if r not in RUNS]
    if unknown or not runs:
        parser.error(f"--runs: unknown {unknown}; choose from {RUNS}")
    if any(r.startswith("java") for r in runs):
        build_java()

    lines = sentences(args.words)
    warm = warmup_lines(lines, args.warmup_words)
    warm_words = sum(len(line.split()) for line in warm)
    # the reference counts: the plain loop's (computed even when the python run is not asked for)
    base_s, expected = run_baseline(lines, args.partitions)
    seconds: dict[str, float] = {}
    notes: dict[str, str] = {}
    failed = []
    work = tempfile.mkdtemp(prefix="driver-bench-")
    try:
        input_file = os.path.join(work, "sentences.txt")
        if any(r.startswith("java") for r in runs):
            with open(input_file, "w", encoding="utf-8") as f:
                f.writelines(line + "\n" for line in lines)
        for name in runs:
            if name == "python":
                if warm:
                    run_baseline(warm, args.partitions)
                seconds[name], counts = run_baseline(lines, args.partitions)
                ok = counts == expected
            elif name.startswith("ours"):
                cache = 0 if name == "ours-nocache" else None
                if warm:
                    run_driver(warm, args.partitions, cache_bytes=cache)
                seconds[name], cpu, counts = run_driver(lines, args.partitions, cache_bytes=cache)
                ok = counts == expected
                notes[name] = f"pipe loop's CPU {cpu:.2f} s, {cpu / args.words * 1e6:.2f} µs a word"
            else:
                seconds[name], fields = run_java(input_file, len(warm), work,
                                                 cache_bytes=0 if name == "java-nocache" else None,
                                                 store="in-memory" if name == "java-inmemory" else "rocksdb")
                got = (int(fields["distinct"]), int(fields["total"]), int(fields["checksum"]),
                       int(fields["output_records"]))
                want = (len(expected), sum(expected.values()), checksum(expected), args.words)
                ok = got == want
                notes[name] = f"warm-up {float(fields['warmup_s']):.2f} s"
                if not ok:
                    print(f"{name}: (distinct, total, checksum, output records) {got}, expected {want}",
                          file=sys.stderr)
            if not ok:
                failed.append(name)
                print(f"MISMATCH: the {name} run's counts differ from the plain loop's", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    labels = {
        "ours": f"ours, {args.partitions} partitions, record cache on (Kafka's default)",
        "ours-nocache": f"ours, {args.partitions} partitions, statestore.cache.max.bytes=0",
        "python": "plain Python dict counting, same placement",
        "java": "Kafka's TopologyTestDriver 4.3.1 (Java), 1 partition, record cache on, RocksDB store (DSL default)",
        "java-nocache": "Kafka's TopologyTestDriver 4.3.1 (Java), 1 partition, statestore.cache.max.bytes=0, RocksDB",
        "java-inmemory": "Kafka's TopologyTestDriver 4.3.1 (Java), 1 partition, record cache on, in-memory store",
    }
    rate = {name: args.words / s for name, s in seconds.items()}
    print(f"words={args.words} partitions={args.partitions} sentences={len(lines)} distinct_words={len(expected)}")
    print(f"every run: an unmeasured warm-up pass over the first {warm_words:,} words ({len(warm):,} sentences) in a "
          f"driver of its own (Java: in the same JVM, for the JIT), then the measured pass in a fresh driver; only "
          f"the pipe loop is timed")
    for name in runs:
        note = f"; {notes[name]}" if name in notes else ""
        print(f"{name:<14} {seconds[name]:8.2f} s  {rate[name]:12,.0f} words/s  ({labels[name]}{note})")
    pairs = [("ours", "python"), ("ours-nocache", "python"), ("ours", "java"), ("ours-nocache", "java-nocache"),
             ("ours", "java-inmemory"), ("java", "python")]
    for a, b in pairs:
        if a in rate and b in rate:
            print(f"ratio {a}/{b} throughput: {rate[a] / rate[b]:.3f}")
    if failed:
        print(f"MISMATCH in {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Writing record batches to Kafka: the librdkafka KafkaBatchProducer vs kafka-python vs the driver JVM producer.

N word-count-like records (default 1,000,000: 10-byte word keys over 5,000 words, 8-byte big-endian counts,
increasing timestamps, no headers) are encoded once into RecordBatches of ~64k records over 4 partitions (what
Spark tasks hand the sink). Then each run writes all of them to its own fresh 4-partition topic on the same broker
and waits until every record is acknowledged (acks=all); the end offsets are checked afterwards. Each run first
writes one small warm-up batch (connection, metadata, producer id), which is not timed.

  librdkafka          KafkaBatchProducer.send (connectors/kafka_producer.py): parse each batch, one produce per
                      record, delivery reports, flush. Also checks the returned base offsets.
  librdkafka-defaults the same with librdkafka's default batch/queue sizes (batch.num.messages=10000,
                      queue.buffering.max.messages=100000, queue.buffering.max.kbytes=1048576), to justify ours.
  raw                 a plain confluent_kafka.Producer over the same parsed batches with no delivery callback at
                      all (the floor: what the bookkeeping costs).
  kafka-python        the connector's former kafka-python path: decode to records, one kafka-python send per
                      record, flush, check every future.

The connector's former driver path (one py4j call per batch to a Java KafkaProducer in the Spark driver's JVM) is
gone with the jar it needed; its last measurement, side by side with these, is in bench/RESULTS.md.

Prints records/s per run and the ratios to librdkafka, then a Markdown row block for bench/RESULTS.md. Topics
(prefix ``kpbench-<time>-<pid>``) are deleted afterwards. Needs a broker: ``$STREAMS_ON_SPARK_KAFKA``, else
``.deps/kafka-run/bootstrap``, or ``--bootstrap-servers``.

    .venv/bin/python bench/kafka_producer.py [--records N] [--runs librdkafka,kafka-python] [--repeat 2]
"""
from __future__ import annotations

import argparse
import datetime
import logging
import os
import platform
import struct
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
BOOTSTRAP_ENV = "STREAMS_ON_SPARK_KAFKA"
RUNS = ("librdkafka", "librdkafka-defaults", "raw", "kafka-python")
PARTITIONS = 4

log = logging.getLogger("bench.kafka_producer")


def bootstrap_address(given: str | None) -> str:
    if given:
        return given
    if os.environ.get(BOOTSTRAP_ENV):
        return os.environ[BOOTSTRAP_ENV].strip()
    saved = ROOT / ".deps" / "kafka-run" / "bootstrap"
    if saved.is_file():
        return saved.read_text().strip()
    sys.exit(f"no broker: set ${BOOTSTRAP_ENV} or pass --bootstrap-servers (make kafka-up prints the address)")


def make_batches(topic: str, records: int, batch_records: int):
    """``records`` word-count-like records over PARTITIONS partitions, in batches of at most ``batch_records``."""
    from streams_on_spark.record_batch import RecordBatch
    words = [f"w{i}".ljust(10, "_").encode() for i in range(5000)]
    pack = struct.Struct(">q").pack
    per_partition = [records // PARTITIONS + (1 if p < records % PARTITIONS else 0) for p in range(PARTITIONS)]
    batches = []
    i = 0
    for p, n in enumerate(per_partition):
        batch = None
        for _ in range(n):
            if batch is None or len(batch) >= batch_records:
                batch = RecordBatch(topic, p)
                batches.append(batch)
            batch.add(1_700_000_000_000 + i, words[(i * 7919) % 5000], pack(i // 5000 + 1))
            i += 1
    return batches, per_partition


def retarget(batches, topic: str):
    """The same encoded batches, bound for ``topic``."""
    from streams_on_spark.record_batch import RecordBatch
    return [RecordBatch(topic, b.partition, b.data, b.ends) for b in batches]


def expected_bases(batches) -> list[int]:
    seen = [0] * PARTITIONS
    out = []
    for b in batches:
        out.append(seen[b.partition])
        seen[b.partition] += len(b)
    return out


def admin_client(bootstrap: str):
    from kafka import KafkaAdminClient
    return KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kpbench-admin", request_timeout_ms=30000)


def create_topic(bootstrap: str, topic: str) -> None:
    from kafka.admin import NewTopic
    admin = admin_client(bootstrap)
    try:
        admin.create_topics([NewTopic(topic, PARTITIONS, 1)], timeout_ms=30000)
        admin.wait_for_topics([topic], timeout_ms=30000)
    finally:
        admin.close()


def end_offsets(bootstrap: str, topic: str) -> list[int]:
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="kpbench-offsets", enable_auto_commit=False)
    try:
        parts = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        found = consumer.end_offsets(parts)
        return [found[tp] for tp in parts]
    finally:
        consumer.close()


def delete_topics(bootstrap: str, prefix: str) -> None:
    admin = admin_client(bootstrap)
    try:
        topics = sorted(t for t in admin.list_topics() if t.startswith(prefix))
        if topics:
            admin.delete_topics(topics, timeout_ms=30000)
    except Exception as e:
        log.warning("deleting the topics of %s failed: %s", prefix, e)
    finally:
        admin.close()


# -- the writers: each returns (write, close) ----------------------------------------------------------------------

def librdkafka_writer(bootstrap: str, overrides: dict | None = None):
    from streams_on_spark.connectors.kafka_producer import KafkaBatchProducer
    producer = KafkaBatchProducer(bootstrap, {"client.id": "kpbench-librdkafka"}, timeout_ms=60000,
                                  config_overrides=overrides)

    def write(batches):
        bases = producer.send(batches)
        if bases != expected_bases(batches):
            raise SystemExit(f"wrong base offsets: {bases[:8]}... expected {expected_bases(batches)[:8]}...")
    return write, producer.close


def raw_writer(bootstrap: str):
    from confluent_kafka import Producer

    from streams_on_spark.connectors.kafka_producer import PRODUCER_DEFAULTS
    from streams_on_spark.record_batch import parse_records
    producer = Producer({**PRODUCER_DEFAULTS, "bootstrap.servers": bootstrap, "client.id": "kpbench-raw"})

    def write(batches):
        produce, poll = producer.produce, producer.poll
        for b in batches:
            timestamps, keys, values, headers = parse_records(b.data, len(b.ends))
            topic, partition = b.topic, b.partition
            for v, k, t in zip(values, keys, timestamps):
                while True:
                    try:
                        produce(topic, v, k, partition, None, None, t)
                        break
                    except BufferError:
                        poll(0.05)
            poll(0)
        if producer.flush(60):
            raise SystemExit("raw producer: records left unacknowledged")
    return write, lambda: producer.flush(10)


def kafka_python_writer(bootstrap: str):
    """The connector's former kafka-python write path (``KafkaConnector._append_python`` before the librdkafka
    producer): decode each batch to records, one ``send`` per record, flush, then check every future."""
    from kafka import KafkaProducer
    timeout_ms = 25000
    producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), client_id="kpbench-kafka-python", acks="all",
                             linger_ms=5, max_block_ms=timeout_ms, delivery_timeout_ms=max(timeout_ms, 30000),
                             request_timeout_ms=timeout_ms, reconnect_backoff_max_ms=1000)

    def write(batches):
        futures = []
        for b in batches:
            for topic, partition, timestamp, key, value, headers in b.records():
                futures.append(producer.send(topic, value=value, key=key, partition=partition,
                                             timestamp_ms=timestamp, headers=list(headers) if headers else None))
        producer.flush(timeout=timeout_ms / 1000)
        for future in futures:
            future.get(timeout=timeout_ms / 1000)
    return write, lambda: producer.close(timeout=10)


LIBRDKAFKA_DEFAULTS = {"batch.num.messages": 10000, "queue.buffering.max.messages": 100000,
                       "queue.buffering.max.kbytes": 1048576}
WRITERS: dict[str, Callable] = {
    "librdkafka": librdkafka_writer,
    "librdkafka-defaults": lambda bs: librdkafka_writer(bs, LIBRDKAFKA_DEFAULTS),
    "raw": raw_writer,
    "kafka-python": kafka_python_writer,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--batch-records", type=int, default=65536)
    parser.add_argument("--runs", default=",".join(RUNS))
    parser.add_argument("--repeat", type=int, default=1, help="timed writes per run (each to a fresh topic)")
    parser.add_argument("--bootstrap-servers")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    unknown = [r for r in runs if r not in WRITERS]
    if unknown:
        sys.exit(f"unknown runs {unknown}; choose from {list(WRITERS)}")
    bootstrap = bootstrap_address(args.bootstrap_servers)
    prefix = f"kpbench-{int(time.time())}-{os.getpid()}"
    batches, per_partition = make_batches(f"{prefix}-template", args.records, args.batch_records)
    warm, _ = make_batches(f"{prefix}-template", 1000, 1000)
    print(f"{args.records:,} records in {len(batches)} batches of <= {args.batch_records:,} over {PARTITIONS} "
          f"partitions, {sum(len(b.data) for b in batches) / 1e6:.1f} MB encoded; broker {bootstrap}")
    results: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}  # CPU seconds of this process (all its threads; not the Spark JVM's)
    try:
        for run in runs:
            write, close = WRITERS[run](bootstrap)
            try:
                warm_topic = f"{prefix}-{run}-warm"
                create_topic(bootstrap, warm_topic)
                write(retarget(warm, warm_topic))
                for attempt in range(args.repeat):
                    topic = f"{prefix}-{run}-{attempt}"
                    create_topic(bootstrap, topic)
                    target = retarget(batches, topic)
                    start, cpu = time.perf_counter(), time.process_time()
                    write(target)
                    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
                    got = end_offsets(bootstrap, topic)
                    if got != per_partition:
                        raise SystemExit(f"{run}: end offsets {got}, expected {per_partition}")
                    results.setdefault(run, []).append(args.records / seconds)
                    cpus.setdefault(run, []).append(cpu)
                    print(f"{run:20s} {seconds:7.2f} s  {args.records / seconds:>12,.0f} records/s  "
                          f"(this process's CPU {cpu:5.2f} s)", flush=True)
            finally:
                close()
    finally:
        delete_topics(bootstrap, prefix)
    best = {run: max(rates) for run, rates in results.items()}
    base = best.get("librdkafka")
    print("\nbest of each run" + (" (ratio librdkafka / run)" if base else "") + ", least CPU of this process")
    for run, rate in best.items():
        ratio = f"  {base / rate:6.2f}x" if base else ""
        print(f"  {run:20s} {rate:>12,.0f} records/s{ratio}  {min(cpus[run]):5.2f} s CPU")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average (1 min) at the end: {load:.1f}")
    today = datetime.date.today().isoformat()
    print(f"\nMarkdown ({platform.python_version()}, {os.cpu_count()} cores):\n")
    print("| date | run | records/s | librdkafka / run | CPU s (this process) |\n|---|---|---|---|---|")
    for run, rate in best.items():
        ratio = f"{base / rate:.2f}" if base else ""
        print(f"| {today} | {run} | {rate:,.0f} | {ratio} | {min(cpus[run]):.2f} |")


if __name__ == "__main__":
    main()

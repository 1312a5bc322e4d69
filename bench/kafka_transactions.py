"""What exactly-once costs a task's micro-batch write on Kafka: at_least_once vs exactly_once_v2, side by side.

One task's output for one micro-batch (``--records`` records, default 100 and 10,000) is written ``--batches``
times (default 50) through the connector's writer, as a Spark task writes it: one write per micro-batch, the
next one ``--interval-ms`` later (default 100, the runtime's trigger interval; the pause is not timed — back to
back, each transaction would wait for the coordinator to finish the previous one's markers):

  at_least_once        KafkaTopicWriter: the idempotent librdkafka producer, every record acknowledged.
  exactly_once_v2      KafkaTransactionalWriter: read the batch marker back, begin, produce, commit the consumed
                       offsets with the marker, commit the transaction; the producer kept from the last batch (the
                       same Python worker ran the task).
  exactly_once_v2-init the same with the producer initialized for every batch (``init_transactions``), as when
                       Spark ran the task's previous batch in another worker.

Prints milliseconds per batch write and the difference to at_least_once. Needs a broker: ``$STREAMS_ON_SPARK_KAFKA``,
else ``.deps/kafka-run/bootstrap``, or ``--bootstrap-servers``. Topics (prefix ``txbench-``) are deleted afterwards.

    .venv/bin/python bench/kafka_transactions.py [--records 100,10000] [--batches 50] [--interval-ms 100]
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bootstrap_address(given: str | None) -> str:
    if given:
        return given
    if os.environ.get("STREAMS_ON_SPARK_KAFKA"):
        return os.environ["STREAMS_ON_SPARK_KAFKA"]
    path = ROOT / ".deps" / "kafka-run" / "bootstrap"
    if path.exists():
        return path.read_text().strip()
    raise SystemExit("no broker: run `make kafka-up`, set $STREAMS_ON_SPARK_KAFKA or pass --bootstrap-servers")


def main() -> None:
    from streams_on_spark.connectors.kafka import KafkaConnector
    from streams_on_spark.record_batch import RecordBatch
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", default="100,10000", help="records per batch write, comma-separated")
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--interval-ms", type=float, default=100.0, help="untimed pause between writes")
    parser.add_argument("--bootstrap-servers")
    args = parser.parse_args()
    bootstrap = bootstrap_address(args.bootstrap_servers)
    prefix = f"txbench-{uuid.uuid4().hex[:8]}"
    out, source = f"{prefix}-out", f"{prefix}-in"
    admin = KafkaConnector(bootstrap, timeout_ms=10_000)
    admin.create_topic(out, 1)
    admin.create_topic(source, 1)
    rows = []
    try:
        for size in (int(n) for n in args.records.split(",")):
            batch = RecordBatch(out, 0)
            for i in range(size):
                batch.add(1_000 + i, b"word-%05d" % (i % 5000), (i).to_bytes(8, "big"), ())
            timings = {}
            for run in ("at_least_once", "exactly_once_v2", "exactly_once_v2-init"):
                group = f"{prefix}-{run}-{size}"
                writer = KafkaConnector(bootstrap, exactly_once_group=None if run == "at_least_once" else group,
                                        timeout_ms=10_000).writer()
                writer.write([batch], "q-0", 0, {(source, 0): 1})   # warm-up: connection, producer id
                step = 1000 if run.endswith("-init") else 1        # a gap in batch ids: the writer initializes again
                spent = 0.0
                for n in range(1, args.batches + 1):
                    time.sleep(args.interval_ms / 1000)
                    start = time.perf_counter()
                    writer.write([batch], "q-0", n * step, {(source, 0): n})
                    spent += time.perf_counter() - start
                timings[run] = spent / args.batches * 1000
                print(f"{size:>6} records  {run:22s} {timings[run]:7.1f} ms per batch write", flush=True)
            rows += [(size, run, ms, ms - timings["at_least_once"]) for run, ms in timings.items()]
    finally:
        admin._admin().delete_topics([out, source])
        admin.close()
    print(f"\nMarkdown ({datetime.date.today().isoformat()}, {platform.python_version()}, {os.cpu_count()} cores, "
          f"{args.batches} writes each):\n")
    print("| records per write | run | ms per write | + ms vs at_least_once |\n|---|---|---|---|")
    for size, run, ms, extra in rows:
        print(f"| {size:,} | {run} | {ms:.1f} | {extra:+.1f} |")


if __name__ == "__main__":
    main()

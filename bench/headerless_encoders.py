"""The headerless encoders side by side, in process: CPU ns a record (min of ``--repeat``) of the three callers of
``record_batch.encode_headerless``/``encode_arrow_headerless``.

    .venv/bin/python bench/headerless_encoders.py [--records N] [--repeat N]

``ColumnSink.flush`` (a fused sink's str records, at 1 and 8 partitions), ``FlushedColumns._send`` (a bulk flush's
bytes records, 8 partitions) and ``RecordBatch.of_columns(...).data`` (one batch of bytes records). CPU time, not
wall: the figure that holds on a shared box. Run it against another tree with ``SOS_WORKTREE``/``PYTHONPATH``.
"""
from __future__ import annotations

import argparse
import random
import time
from types import SimpleNamespace
from typing import Callable

from streams_on_spark.record_batch import PartitionedRecords, RecordBatch
from streams_on_spark.runtime.column_sink import ColumnSink
from streams_on_spark.runtime.fused import FlushedColumns


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    n = args.records
    rng = random.Random(1)
    keys = [f"word-{rng.randrange(50000)}" for _ in range(n)]
    values = [f"v{rng.randrange(10**6)}" for _ in range(n)]
    key_bytes, value_bytes = [k.encode() for k in keys], [v.encode() for v in values]
    stamps = list(range(n))

    def sink(partitions: int) -> float:
        held = ColumnSink(PartitionedRecords(), "t", partitions)
        held.keys.extend(keys)
        held.values.extend(values)
        held.stamps.extend(stamps)
        held.marks.extend(range(1, n + 1))
        start = time.process_time()
        held.flush()
        return time.process_time() - start

    def send(partitions: int) -> float:
        flushed = object.__new__(FlushedColumns)   # only what _send reads: the task's output, the sink's topic
        flushed.task = SimpleNamespace(collector=SimpleNamespace(buffer=PartitionedRecords()))
        flushed.topic, flushed.count = "t", partitions
        start = time.process_time()
        flushed._send(key_bytes, value_bytes, stamps)
        return time.process_time() - start

    def of_columns() -> float:
        batch = RecordBatch.of_columns("t", 0, stamps, key_bytes, value_bytes, [()] * n)
        start = time.process_time()
        batch.data
        return time.process_time() - start

    cases: dict[str, Callable[[], float]] = {
        "ColumnSink.flush, 1 partition": lambda: sink(1), "ColumnSink.flush, 8 partitions": lambda: sink(8),
        "FlushedColumns._send, 8 partitions": lambda: send(8), "RecordBatch.of_columns(...).data": of_columns}
    print(f"{n:,} records, CPU ns a record, min of {args.repeat}")
    for name, run in cases.items():
        print(f"{name:<40} {min(run() for _ in range(args.repeat)) * 1e9 / n:8.0f}")


if __name__ == "__main__":
    main()

"""Where Arrow starts to beat the record-by-record loop in the headerless encoders, by destination partitions: CPU ns
a record (min of ``--repeat``) of each path forced, at each batch size and partition count.

    .venv/bin/python bench/headerless_crossover.py [--partitions 1,2,4,8,16] [--sizes 64,128,...] [--repeat N] [--built]

Two callers: bytes records into ``record_batch.encode_headerless`` (``FlushedColumns._send``, ``RecordBatch``'s
encoding) and a fused sink's str records through ``ColumnSink.flush`` (which also UTF-8 encodes them: by one
``pa.array`` on the Arrow side). Each path is forced by setting ``VECTOR_MIN_HEADERLESS`` (``record_batch``'s, and
``column_sink``'s where an older tree has its own) to 0 or out of reach.
The last columns are the smallest size at which Arrow was faster, and that size per partition. ``--built``: each
case as the tree chooses (no path forced), one figure a cell, to set trees side by side. CPU time, not wall:
the figure that holds on a shared box. Run it against another tree with ``SOS_WORKTREE``/``PYTHONPATH``.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import random
import time
from typing import Callable, Iterator

from streams_on_spark import record_batch
from streams_on_spark.record_batch import PartitionedRecords, encode_headerless
from streams_on_spark.runtime import column_sink
from streams_on_spark.runtime.column_sink import ColumnSink

NEVER = 1 << 40


@contextlib.contextmanager
def forced(arrow: bool) -> Iterator[None]:
    """Every headerless encoding by Arrow (``arrow``) or record by record, whatever the batch's size."""
    value = 0 if arrow else NEVER
    saved = []
    for module in (record_batch, column_sink):
        if hasattr(module, "VECTOR_MIN_HEADERLESS"):
            saved.append((module, getattr(module, "VECTOR_MIN_HEADERLESS")))
            setattr(module, "VECTOR_MIN_HEADERLESS", value)
    try:
        yield
    finally:
        for module, old in saved:
            setattr(module, "VECTOR_MIN_HEADERLESS", old)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", default="1,2,4,8,16")
    parser.add_argument("--sizes", default="64,128,256,384,512,768,1024,1536,2048,3072,4096,6144,8192")
    parser.add_argument("--repeat", type=int, default=0, help="runs per case (default: about 2M records' worth)")
    parser.add_argument("--built", action="store_true", help="the tree's own choice, no path forced")
    args = parser.parse_args()
    partitions = [int(p) for p in args.partitions.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = random.Random(1)
    top = max(sizes)
    all_keys = [f"word-{rng.randrange(50000)}" for _ in range(top)]
    all_values = [f"v{rng.randrange(10**6)}" for _ in range(top)]
    all_key_bytes, all_value_bytes = [k.encode() for k in all_keys], [v.encode() for v in all_values]

    def encode(n: int, count: int) -> float:
        outs = [batch.buffers() for batch in PartitionedRecords().partition_batches("t", count)]
        stamps, keys, values = list(range(n)), all_key_bytes[:n], all_value_bytes[:n]
        start = time.process_time()
        encode_headerless(outs, stamps, keys, values)
        return time.process_time() - start

    def sink(n: int, count: int) -> float:
        held = ColumnSink(PartitionedRecords(), "t", count)
        held.keys.extend(all_keys[:n])
        held.values.extend(all_values[:n])
        held.stamps.extend(range(n))
        held.marks.extend(range(1, n + 1))
        start = time.process_time()
        held.flush()
        return time.process_time() - start

    cases: dict[str, Callable[[int, int], float]] = {"encode_headerless (bytes)": encode, "ColumnSink.flush (str)": sink}
    paths = [None] if args.built else [False, True]
    print(f"CPU ns a record, min of runs; {'as built' if args.built else 'loop / Arrow'}; "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    gc.disable()
    for name, run in cases.items():
        print(f"\n{name}")
        print("partitions | " + " | ".join(f"{n:>11}" for n in sizes) + ("" if args.built else
                                                                         " | crossover | per partition"))
        for count in partitions:
            cells, first = [], None
            for n in sizes:
                repeat = args.repeat or max(15, min(400, 2_000_000 // n // 10))
                timing = []
                for arrow in paths:
                    with forced(arrow) if arrow is not None else contextlib.nullcontext():
                        run(n, count)   # warm
                        timing.append(min(run(n, count) for _ in range(repeat)) * 1e9 / n)
                if args.built:
                    cells.append(f"{timing[0]:11.0f}")
                    continue
                loop, arrow_ns = timing
                if first is None and arrow_ns < loop:
                    first = n
                cells.append(f"{loop:5.0f}/{arrow_ns:5.0f}")
            if args.built:
                print(f"{count:>10} | " + " | ".join(cells))
                continue
            where = f"{first:>9}" if first else f"> {top:>7}"
            per = f"{first / count:>13.0f}" if first else ""
            print(f"{count:>10} | " + " | ".join(cells) + f" | {where} | {per}")


if __name__ == "__main__":
    main()

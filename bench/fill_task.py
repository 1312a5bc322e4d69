"""One task filling its store, in-process: the task function a Spark task runs, minus Spark.

    .venv/bin/python bench/fill_task.py [--keys N] [--batches N] [--chunk N] [--shuffled] [--profile FILE]

``bench/spark_engine.py``'s ``key_count`` topology (a count with the record cache on, to_stream, sink): each batch
brings ``--keys`` new distinct keys as record batches of ``--chunk`` records (the embedded source's 65,536, as a
Spark task gets them) to ``SubtopologyTaskFunction.run`` over a local RocksDB copy
(``RocksTaskStore``), with Spark's state variables stood in for by plain objects and the output appended to embedded
topics, as on an executor (``--shuffled``: each batch's keys in a random order, as real keys come, not increasing).
Prints wall and CPU time per key of each batch (CPU time is the steadier figure on a shared machine); ``--profile``
writes cProfile's stats of the last batch and prints the top of them.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import random
import shutil
import sys
import tempfile
import time
from types import SimpleNamespace
from typing import Any

import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spark_engine import key_count  # noqa: E402

from streams_on_spark.config import TaskConfig  # noqa: E402
from streams_on_spark.connectors.embedded import EmbeddedTopics  # noqa: E402
from streams_on_spark.connectors.embedded_connector import EmbeddedTopicWriter  # noqa: E402
from streams_on_spark.record_batch import RecordBatch  # noqa: E402
from streams_on_spark.runtime.spark.embedded_source import _READ_CHUNK  # noqa: E402
from streams_on_spark.runtime.spark.output import WrittenOutput  # noqa: E402
from streams_on_spark.runtime.spark.task_function import SubtopologyTaskFunction  # noqa: E402
from streams_on_spark.runtime.spark.task_state import TaskState  # noqa: E402
from streams_on_spark.topology.partitions import TopicLayout  # noqa: E402


def _state_handle() -> Any:
    """Spark's state variables of one task's group (``transformWithStateInPandas``), stood in for by plain objects."""
    value: list = [None]
    changelog: list = []
    value_state = SimpleNamespace(get=lambda: value[0], update=lambda row: value.__setitem__(0, tuple(row)))
    list_state = SimpleNamespace(get=lambda: iter(changelog), appendValue=lambda row: changelog.append(tuple(row)),
                                 appendList=lambda rows: changelog.extend(map(tuple, rows)), clear=changelog.clear)
    return SimpleNamespace(getValueState=lambda name, schema: value_state,
                           getListState=lambda name, schema: list_state)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--batches", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=_READ_CHUNK,
                        help="records per record batch (default: the embedded source's, as a Spark task gets them; "
                             "0: one record batch a batch)")
    parser.add_argument("--shuffled", action="store_true", help="each batch's keys in a random order")
    parser.add_argument("--profile", default="")
    args = parser.parse_args(argv)
    builder = key_count().internal_builder
    builder.application_id = "bench-fill"
    root = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        topics = EmbeddedTopics(os.path.join(root, "topics"))
        topics.create_topic("keys", 1)
        topics.create_topic("counts-out", 1)
        config = TaskConfig.from_config({"application.id": "bench-fill", "state.dir": os.path.join(root, "state")})
        layout = TopicLayout.of(builder, "bench-fill", {"keys": 1, "counts-out": 1})
        function = SubtopologyTaskFunction(builder, 0, config, layout, WrittenOutput(EmbeddedTopicWriter(topics.root)))
        state = TaskState(_state_handle())
        rng = random.Random(7)
        for batch in range(args.batches):
            first, end = batch * args.keys, (batch + 1) * args.keys
            numbers = rng.sample(range(first, end), args.keys) if args.shuffled else range(first, end)
            rows = []
            for start in range(first, end, args.chunk or args.keys):
                records = RecordBatch("keys", 0)
                for i in numbers[start - first:min(end, start + (args.chunk or args.keys)) - first]:
                    records.add(1, f"k{i}".encode(), b"v")
                rows.append(("keys", 0, start, records.ends.tobytes(), bytes(records.data)))
            frame = pd.DataFrame(rows, columns=["topic", "partition", "offset", "ends", "data"])
            gc.collect()
            profile = cProfile.Profile() if args.profile and batch == args.batches - 1 else None
            wall, cpu = time.perf_counter(), time.process_time()
            if profile is not None:
                profile.enable()
            list(function.run((0,), iter([frame]), state))
            if profile is not None:
                profile.disable()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(f"batch {batch}: {wall:.2f} s wall, {cpu:.2f} s CPU: {cpu / args.keys * 1e6:.2f} us CPU a key, "
                  f"{args.keys / wall:,.0f} keys/s")
            if profile is not None:
                profile.dump_stats(args.profile)
                pstats.Stats(args.profile).sort_stats("tottime").print_stats(25)
        written = sum(topics.end_offsets("counts-out"))
        if written != args.keys * args.batches:
            print(f"expected {args.keys * args.batches:,} counts written, got {written:,}")
            return 1
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A task's batch paths against its per-record path, side by side: ns per word in the README word count's two tasks.

    .venv/bin/python bench/task_paths.py [--words N] [--distinct N] [--repeat N]

The upstream task (source -> flat_map_values -> select_key -> repartition sink) and the downstream task (repartition
source -> count with the record cache -> to_stream -> sink) of the word count each get one record batch of N words,
as a Spark micro-batch gives them, once with ``batch.fast.path=false`` (records decoded and queued, then every record
through ``process_one``, and the commit) and once with the default (``process_record_batches``: fused chains, the
count from the batch's columns; then the commit), its output grouped by destination as produced and encoded as the embedded topics' writer encodes it
(what a Spark task writing its own output does). No Spark: this is the task's own cost. Prints the min over ``--repeat`` runs of each, the ratio,
and checks that both paths produced the same records.
"""
from __future__ import annotations

import argparse
import logging
import random
import time

from streams_on_spark import Consumed, Grouped, Produced, Serdes, StreamsBuilder
from streams_on_spark.config import TaskConfig
from streams_on_spark.processor.api import TaskId
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.runtime.task import StreamTask

S, L = Serdes.String(), Serdes.Long()


def word_count():
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(S, S))
     .flat_map_values(lambda v: v.lower().split())
     .select_key(lambda k, v: v)
     .group_by_key(Grouped.with_(S, S).with_name("by-word"))
     .count()
     .to_stream()
     .to("counts", Produced.with_(S, L)))
    return builder.build()


def run(subtopology: int, topic_of, batch: tuple, fast: bool) -> tuple[float, float, dict]:
    """(seconds to queue, seconds to process + commit + encode, output per destination) of one batch in a fresh
    task."""
    topology = word_count()
    builder = topology.internal_builder
    builder.application_id = "bench"
    spec = builder.subtopologies()[subtopology]
    config = TaskConfig.from_config({"application.id": "bench", "batch.fast.path": fast})
    task = StreamTask(TaskId(subtopology, 0), spec, builder, config, lambda topic: 4, lambda: 0,
                      partition_output=True)   # as a Spark task writing its own output groups it
    topic = topic_of(spec)
    keys, values = batch
    records = RecordBatch.from_bytes(topic, 0, *_encoded(topic, keys, values))
    started = time.perf_counter()
    if fast:   # as a Spark task gets it: one record batch
        queued = started
        task.process_record_batches([(topic, 0, 0, records)])
    else:
        task.add_columns(topic, 0, 0, *records.columns())
        queued = time.perf_counter()
        task.process_available()
    task.commit()
    batches = task.collector.drain_batches()
    for out_batch in batches:
        out_batch.data   # noqa: B018 - encoded as the embedded topics' writer encodes it
    done = time.perf_counter()
    return queued - started, done - queued, {(b.topic, b.partition): b.records() for b in batches}


def _encoded(topic: str, keys: list, values: list) -> tuple[bytes, bytes]:
    """The records as shipped to a Spark task: a record batch's bytes and ends."""
    batch = RecordBatch(topic, 0)
    for key, value in zip(keys, values):
        batch.add(1000, key, value)
    return bytes(batch.data), batch.ends.tobytes()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=250_000)
    parser.add_argument("--distinct", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)   # the topology's generated-names warning
    rng = random.Random(1)
    vocabulary = [f"w{i}".encode() for i in range(args.distinct)]
    sentences = [b" ".join(rng.choice(vocabulary) for _ in range(10)) for _ in range(args.words // 10)]
    words = [rng.choice(vocabulary) for _ in range(args.words)]
    cases = [("upstream: split, select_key, repartition sink", 0, lambda spec: "sentences",
              ([b"doc"] * len(sentences), sentences)),
             ("downstream: count (record cache on), to_stream, sink", 1,
              lambda spec: next(iter(spec.source_topics)), (words, words))]
    print(f"{args.words:,} words, {args.distinct:,} distinct; ns per word, min of {args.repeat}")
    print(f"{'task':<55} {'path':<11} {'queue':>7} {'process':>8} {'total':>7}")
    for label, subtopology, topic_of, batch in cases:
        totals = {}
        outputs = {}
        for fast in (False, True) * args.repeat:
            queue_s, process_s, out = run(subtopology, topic_of, batch, fast)
            best = totals.get(fast)
            if best is None or queue_s + process_s < sum(best):
                totals[fast] = (queue_s, process_s)
            outputs[fast] = out
        assert outputs[True] == outputs[False], f"{label}: the paths' outputs differ"
        for fast in (False, True):
            queue_s, process_s = totals[fast]
            print(f"{label:<55} {'batch' if fast else 'per-record':<11} {queue_s * 1e9 / args.words:>7.0f} "
                  f"{process_s * 1e9 / args.words:>8.0f} {(queue_s + process_s) * 1e9 / args.words:>7.0f}")
        print(f"{'':<55} {'ratio':<11} {sum(totals[False]) / sum(totals[True]):>24.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

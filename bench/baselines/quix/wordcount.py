"""The README word count on Quix Streams, the Python peer of bench/kafka_end_to_end.py (``--runs quix``).

Runs in .venv-quix (``make quix-venv``; Quix Streams pinned in requirements.txt beside this file), never in the
project's venv. bench/kafka_end_to_end.py starts two of these processes in one consumer group (two consumers, like
Spark's local[2] and the Java runs' two stream threads), watches the group's committed offsets and stops them with
SIGTERM once the input and the repartition topic are fully committed.

    input topic (str values, null keys) -> apply(lower().split(), expand=True) -> group_by(word, "by-word")
      (repartition topic repartition__<group>--<input>--by-word, str serdes) -> apply(count, stateful=True)
      (RocksDB state with its changelog topic) -> to_topic(output: str key, 8-byte big-endian count, as Kafka's
      Long serde writes it)

Quix Streams has no record cache: one output record per word. Writes ``{"started": <epoch s>, "version": ...}`` to
``--started-file`` just before ``Application.run()`` (after imports and set-up), which the bench times from.

    .venv-quix/bin/python bench/baselines/quix/wordcount.py --bootstrap HOST:PORT --input T --output T --group G \\
        --state-dir DIR --started-file FILE [--commit-interval 1.0]
"""
from __future__ import annotations

import argparse
import json
import os
import struct
import time

import quixstreams
from quixstreams import Application, State


def count(_word: str, state: State) -> bytes:
    n = state.get("count", 0) + 1
    state.set("count", n)
    return struct.pack(">q", n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--started-file", required=True)
    parser.add_argument("--commit-interval", type=float, default=1.0,
                        help="seconds between commits (Quix Streams' default is 5.0)")
    args = parser.parse_args()

    app = Application(broker_address=args.bootstrap, consumer_group=args.group, auto_offset_reset="earliest",
                      commit_interval=args.commit_interval, state_dir=args.state_dir, loglevel="WARNING",
                      processing_guarantee="at-least-once")
    source = app.topic(args.input, key_deserializer="bytes", value_deserializer="str")
    sink = app.topic(args.output, key_serializer="str", value_serializer="bytes")
    sdf = app.dataframe(source)
    sdf = sdf.apply(lambda sentence: sentence.lower().split(), expand=True)
    sdf = sdf.group_by(lambda word: word, name="by-word", key_serializer="str", value_serializer="str",
                       key_deserializer="str", value_deserializer="str")
    sdf = sdf.apply(count, stateful=True)
    sdf.to_topic(sink)

    tmp = args.started_file + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"started": time.time(), "version": quixstreams.__version__, "pid": os.getpid()}, f)
    os.replace(tmp, args.started_file)
    app.run()


if __name__ == "__main__":
    main()

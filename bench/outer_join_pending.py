"""Cost per record of a left or outer stream-stream join while N records wait in its outer-join store.

The join (window 1 ms, grace 2N ms: records wait, window-store reads stay cheap) first takes N records, one per
millisecond, that find no partner: they wait in the outer-join store. Then a steady trickle of M records, each one
millisecond past the grace of the earliest waiting record: each expires exactly one waiting record (emitted with
``None``) and waits itself. An outer join gets records on both sides, alternating: Kafka reads its outer-join store
from the head and stops once a record of each side is still open, so a record should cost the same whatever N is; a
scan that reads the whole store makes it grow with N. A left join (left records only) reads to the end, in Kafka too,
but rarely: its earliest-pending time becomes the last record's, so expiries come in bursts.

Two measurements side by side: the in-process driver (the join processor end to end), and the outer-join store
directly over the local RocksDB store of the Spark engine (``state/local.py``): the head read, the removal and the
new record that each trickle record causes, committed every ``--batch`` records like a Spark batch.

    .venv/bin/python bench/outer_join_pending.py [--waiting 10000 100000] [--trickle M] [--batch B] [--kinds outer left]
"""
from __future__ import annotations

import argparse
import logging
import shutil
import sys
import tempfile
import time

from streams_on_spark import Consumed, JoinWindows, Produced, Serdes, StreamsBuilder, TopologyTestDriverBuilder
from streams_on_spark.state.local import open_local_task_store
from streams_on_spark.state.outer_join_store import OuterJoinStore

log = logging.getLogger("bench.outer_join_pending")
S = Serdes.String()


def join_topology(kind: str, grace_ms: int):
    builder = StreamsBuilder()
    left = builder.stream("left", Consumed.with_(S, S))
    right = builder.stream("right", Consumed.with_(S, S))
    getattr(left, f"{kind}_join")(right, lambda l, r: f"{l}+{r}", JoinWindows.of_time_difference_and_grace(1, grace_ms)).to(
        "joined", Produced.with_(S, S))
    return builder.build()


def run_driver(kind: str, waiting: int, trickle: int) -> tuple[float, float]:
    """Seconds to fill ``waiting`` records, and microseconds per trickle record (one expiry each). An outer join
    gets them on both sides, alternating (its scan stops once both sides' windows are open); a left join only on
    the left (its scan reads to the end: Kafka's, too)."""
    grace = 2 * waiting   # records wait for their grace period; a small window keeps window-store reads cheap
    driver = (TopologyTestDriverBuilder(join_topology(kind, grace))
              .with_config({"application.id": "bench-outer-join"})
              .build())
    with driver:
        sides = [driver.create_input_topic("left", S, S)]
        if kind == "outer":
            sides.append(driver.create_input_topic("right", S, S))
        out = driver.create_output_topic("joined", S, S)
        start = time.perf_counter()
        for i in range(waiting):
            sides[i % len(sides)].pipe_input(f"w{i}", "v", i)
        fill_s = time.perf_counter() - start
        if out.get_queue_size():
            raise RuntimeError("a waiting record was emitted before its window closed")
        start = time.perf_counter()
        for i in range(trickle):
            sides[i % len(sides)].pipe_input(f"t{i}", "v", grace + 2 + i)   # closes the window of w{i}
        trickle_s = time.perf_counter() - start
        emitted = out.get_queue_size()
        if not trickle - 3 <= emitted <= trickle if kind == "outer" else emitted > trickle:
            # Kafka's earliest-pending time is the record its scan stopped at: expiries come a few at a time
            raise RuntimeError(f"expected about {trickle} non-joined records, got {emitted}")
    return fill_s, trickle_s / trickle * 1e6


def run_local(waiting: int, trickle: int, batch: int) -> float:
    """Microseconds per trickle record on the outer-join store over a local RocksDB column family."""
    path = tempfile.mkdtemp(prefix="bench-outer-join-")
    try:
        local = open_local_task_store(f"{path}/task", ["outer"])
        store = OuterJoinStore("outer", S, S, S, local.stores["outer"])
        store.init(None)
        for i in range(waiting):
            store.add_pending(i, True, f"w{i}", "v")
        local.commit("0")
        start = time.perf_counter()
        for i in range(trickle):
            for ts, left_side, key, _values in store.pending():   # the head only, as the join reads it
                break
            else:
                raise RuntimeError("the outer-join store is empty")
            store.remove_pending(ts, left_side, key)
            store.add_pending(2 * waiting + 1 + i, True, f"t{i}", "v")
            if i % batch == batch - 1:
                local.commit(str(i))
        elapsed = time.perf_counter() - start
        local.close()
    finally:
        shutil.rmtree(path, ignore_errors=True)
    return elapsed / trickle * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiting", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--trickle", type=int, default=200)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--kinds", nargs="+", default=["outer", "left"], choices=["outer", "left"])
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    print(f"trickle={args.trickle} records, each expiring one waiting record; local commits every {args.batch}")
    for waiting in args.waiting:
        for kind in args.kinds:
            fill_s, driver_us = run_driver(kind, waiting, args.trickle)
            print(f"N={waiting:>7} {kind:>5} join, driver: {driver_us:10,.0f} us/trickle record "
                  f"(fill {fill_s / waiting * 1e6:5.0f} us/record)")
        local_us = run_local(waiting, args.trickle, args.batch)
        print(f"N={waiting:>7} outer-join store head read over local RocksDB: {local_us:10,.0f} us/trickle record")
    return 0


if __name__ == "__main__":
    sys.exit(main())

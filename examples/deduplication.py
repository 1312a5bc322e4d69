"""Deduplication with the Processor API: a key-value store of the event ids seen, purged by stream-time punctuation.

``events`` are keyed by event id (a producer that retries sends the same id again). The ``Deduplicate`` processor
keeps each id with the time it was first seen in the ``seen-ids`` store and forwards an event only if its id was not
seen within the last 60 s of event time. Every 10 s of stream time a punctuator deletes the ids older than that, so
the store holds one minute of ids, not every id ever seen. An id seen again after its minute is a new event.

    .venv/bin/python examples/deduplication.py --engine local        # the in-process driver
    .venv/bin/python examples/deduplication.py                       # Spark over embedded topics
    .venv/bin/python examples/deduplication.py --bootstrap-servers 127.0.0.1:9092   # Spark against Kafka
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))   # _common, beside this file, also when imported by path

from _common import Input, Output, Run, Topic, configure_logging, parser, run_example, run_from_args  # noqa: E402

from streams_on_spark import (  # noqa: E402
    Consumed,
    Processor,
    ProcessorContext,
    Produced,
    PunctuationType,
    Record,
    Serdes,
    Stores,
    StreamsBuilder,
    Topology,
)

log = logging.getLogger("deduplication")
S, L = Serdes.String(), Serdes.Long()
T0 = 1_767_225_600_000          # 2026-01-01T00:00:00Z
RETENTION = 60_000              # how long an id is remembered (event time)
PURGE_EVERY = 10_000            # stream-time punctuation interval
STORE = "seen-ids"


class Deduplicate(Processor):
    """Forwards an event unless its id (the key) was seen in the last RETENTION ms; purges older ids on stream time."""

    def init(self, context: ProcessorContext) -> None:
        super().init(context)
        self.seen = context.get_state_store(STORE)
        context.schedule(PURGE_EVERY, PunctuationType.STREAM_TIME, self.purge)

    def process(self, record: Record) -> None:
        first_seen: Optional[int] = self.seen.get(record.key)
        if first_seen is not None and record.timestamp - first_seen < RETENTION:
            return                                  # a duplicate: its id is still remembered
        self.seen.put(record.key, record.timestamp)
        self.context.forward(record)

    def purge(self, stream_time: int) -> None:
        expired = [key for key, first_seen in self.seen.all() if first_seen <= stream_time - RETENTION]
        for key in expired:
            self.seen.delete(key)
        if expired:
            log.debug("purged %d ids older than %d", len(expired), stream_time - RETENTION)


def topics(prefix: str = "") -> tuple[Topic, Topic]:
    """events (event id -> payload) and unique-events (the same, each id once per RETENTION)."""
    return Topic(f"{prefix}events", S, S), Topic(f"{prefix}unique-events", S, S)


def deduplication_topology(prefix: str = "") -> Topology:
    """events -> Deduplicate (store seen-ids, stream-time punctuation) -> unique-events."""
    events, unique = topics(prefix)
    builder = StreamsBuilder()
    builder.add_state_store(Stores.key_value_store_builder(Stores.persistent_key_value_store(STORE), S, L))
    (builder.stream(events.name, Consumed.with_(S, S))
     .process(Deduplicate, STORE)
     .to(unique.name, Produced.with_(S, S)))
    return builder.build()


def waves(prefix: str = "") -> list[list[Input]]:
    """Events with retried duplicates; in the second wave, 2 minutes later, ids reused after their minute."""
    events = f"{prefix}events"

    def at(second: int, event_id: str, payload: str) -> Input:
        return Input(events, event_id, payload, T0 + second * 1_000)

    first = [at(1, "e1", "login alice"), at(2, "e2", "login bob"), at(3, "e1", "login alice"),
             at(5, "e3", "buy bob"), at(9, "e2", "login bob"), at(30, "e4", "logout alice"), at(31, "e3", "buy bob")]
    second = [at(120, "e5", "login carol"), at(121, "e1", "login alice again"), at(125, "e5", "login carol"),
              at(130, "e4", "logout alice")]
    return [first, second]


def lines(outputs: list[Output]) -> list[str]:
    """One line per event forwarded, in event time."""
    return [f"{(r.timestamp - T0) // 1000:4d}s {r.key} {r.value}"
            for r in sorted(outputs, key=lambda r: (r.timestamp, r.key))]


def run(prefix: str, run_as: Run) -> list[Output]:
    """Run the example as ``run_as`` says; the records of unique-events."""
    events, unique = topics(prefix)
    return run_example(deduplication_topology(prefix), f"{prefix}deduplication", [events, unique], waves(prefix),
                       [unique.name], run_as)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    args = parser("Deduplication of events by id with the Processor API").parse_args(argv)
    configure_logging(args.verbose)
    if args.describe:
        print(deduplication_topology(args.topic_prefix).describe())
    run_as = run_from_args(args, spark)
    outputs = run(args.topic_prefix, run_as)
    if not outputs:
        raise RuntimeError("no events were read back from unique-events")
    n_in = sum(len(wave) for wave in waves(args.topic_prefix))
    print(f"\n{run_as.label}: {len(outputs)} unique events of {n_in}")
    for line in lines(outputs):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

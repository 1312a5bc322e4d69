"""Click counts per user in one-minute tumbling windows, one final count per window (suppress untilWindowCloses).

Clicks arrive keyed by user. Each window [start, start + 1 min) accepts late clicks for 10 s of grace; only when a
user's stream time passes the window's end + grace is its count sent, once (``Suppressed.until_window_closes``):
no intermediate updates reach ``click-counts``. A click later than that is dropped (Kafka's
``dropped-records-total``). The second wave of input closes the first minutes' windows and brings one such late
click.

    .venv/bin/python examples/click_counts.py --engine local        # the in-process driver
    .venv/bin/python examples/click_counts.py                       # Spark over embedded topics
    .venv/bin/python examples/click_counts.py --bootstrap-servers 127.0.0.1:9092   # Spark against Kafka
"""
from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))   # _common, beside this file, also when imported by path

from _common import Input, Output, Run, Topic, configure_logging, parser, run_example, run_from_args  # noqa: E402

from streams_on_spark import (  # noqa: E402
    BufferConfig,
    Consumed,
    Grouped,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    Suppressed,
    TimeWindows,
    Topology,
    WindowedSerdes,
)

S, L = Serdes.String(), Serdes.Long()
MINUTE = 60_000
GRACE = 10_000
T0 = 1_767_225_600_000          # 2026-01-01T00:00:00Z
WINDOWED = WindowedSerdes.time_windowed(S, MINUTE)


def topics(prefix: str = "") -> tuple[Topic, Topic]:
    """The clicks topic (user -> page) and the final counts per user and window."""
    return Topic(f"{prefix}clicks", S, S), Topic(f"{prefix}click-counts", WINDOWED, L)


def click_counts_topology(prefix: str = "") -> Topology:
    """clicks -> per user -> 1-minute windows (10 s grace) -> counted -> final results only -> click-counts."""
    clicks, counts = topics(prefix)
    builder = StreamsBuilder()
    (builder.stream(clicks.name, Consumed.with_(S, S))
     .group_by_key(Grouped.with_(S, S).with_name("by-user"))
     .windowed_by(TimeWindows.of_size_and_grace(MINUTE, GRACE))
     .count(Materialized.as_("clicks-per-minute"))
     .suppress(Suppressed.until_window_closes(BufferConfig.unbounded()).with_name("final-counts"))
     .to_stream()
     .to(counts.name, Produced.with_(WINDOWED, L)))
    return builder.build()


def waves(prefix: str = "") -> list[list[Input]]:
    """Two waves of clicks: the first minutes, then clicks that close them and one that comes too late."""
    clicks = f"{prefix}clicks"

    def at(seconds: int, user: str, page: str) -> Input:
        return Input(clicks, user, page, T0 + seconds * 1_000)

    first = [at(5, "alice", "/home"), at(12, "bob", "/home"), at(20, "alice", "/cart"), at(42, "carol", "/help"),
             at(58, "alice", "/pay"), at(61, "bob", "/cart"), at(65, "alice", "/home"), at(55, "bob", "/home"),
             at(118, "carol", "/home"), at(66, "bob", "/pay")]
    # 3 minutes in: every user's stream time passes 00:02 + grace, so minutes 0 and 1 close for all of them;
    # then bob's click at 00:01:30 is beyond the grace of [00:01, 00:02): dropped
    second = [at(185, "alice", "/home"), at(181, "bob", "/home"), at(190, "carol", "/home"), at(90, "bob", "/late")]
    return [first, second]


def clock(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%H:%M")


def lines(outputs: list[Output]) -> list[str]:
    """One line per final count, by user then window."""
    rows = sorted((r.key.key, r.key.window.start, r.key.window.end, r.value) for r in outputs)
    return [f"{user:6s} {clock(start)}-{clock(end)} clicks={count}" for user, start, end, count in rows]


def run(prefix: str, run_as: Run) -> list[Output]:
    """Run the example as ``run_as`` says; the records of click-counts."""
    clicks, counts = topics(prefix)
    return run_example(click_counts_topology(prefix), f"{prefix}click-counts", [clicks, counts], waves(prefix),
                       [counts.name], run_as)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    args = parser("Click counts per user in tumbling windows, final results only").parse_args(argv)
    configure_logging(args.verbose)
    if args.describe:
        print(click_counts_topology(args.topic_prefix).describe())
    run_as = run_from_args(args, spark)
    outputs = run(args.topic_prefix, run_as)
    if not outputs:
        raise RuntimeError("no final counts were read back from click-counts")
    print(f"\n{run_as.label}: final click counts per user and minute")
    for line in lines(outputs):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Word count, the README topology, run over a bundled text with 4 partitions.

Prints the topology description, progress while it runs, each partition's store and the top words.

    make run                      # or: .venv/bin/python examples/wordcount.py [--partitions N] [--repeat N]
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from collections import Counter
from pathlib import Path

from streams_on_spark import (
    Consumed,
    Grouped,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    Topology,
    TopologyTestDriverBuilder,
)

log = logging.getLogger("wordcount")
TEXT = Path(__file__).parent / "data" / "streams.txt"


def word_count_topology() -> Topology:
    """sentences -> words -> re-keyed by word -> counted per word -> word-counts-out."""
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(Serdes.String(), Serdes.String()))
     .flat_map_values(lambda sentence: sentence.lower().replace(",", " ").replace(".", " ").split())
     .select_key(lambda _key, word: word)
     .group_by_key(Grouped.as_("by-word").with_key_serde(Serdes.String()).with_value_serde(Serdes.String()))
     .count(Materialized.as_("word-counts"))
     .to_stream()
     .to("word-counts-out", Produced.with_(Serdes.String(), Serdes.Long())))
    return builder.build()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Word count on the in-process engine")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=50, help="pipe the text this many times")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    topology = word_count_topology()
    print(topology.describe())
    lines = [line for line in TEXT.read_text(encoding="utf-8").splitlines() if line.strip()]
    driver = (TopologyTestDriverBuilder(topology)
              .with_config({"application.id": "wordcount"})
              .declare_topic("sentences", args.partitions)
              .declare_topic("word-counts-out", args.partitions)
              .build())
    with driver:
        sentences = driver.create_input_topic("sentences", Serdes.String(), Serdes.String(), start_timestamp=0,
                                              auto_advance=1)
        output = driver.create_output_topic("word-counts-out", Serdes.String(), Serdes.Long())
        start = time.perf_counter()
        total = args.repeat * len(lines)
        for n in range(args.repeat):
            for i, line in enumerate(lines):
                sentences.pipe_input(f"line-{i}", line)
            if (n + 1) % max(1, args.repeat // 5) == 0:
                log.info("piped %d/%d sentences, %d count updates emitted", (n + 1) * len(lines), total,
                         output.get_queue_size())
        elapsed = time.perf_counter() - start
        updates = output.read_records_to_list()
        print(f"\n{total} sentences, {len(updates)} count updates in {elapsed:.2f}s "
              f"on {args.partitions} partitions\n")
        totals: Counter[str] = Counter()
        for p in range(args.partitions):
            store = {kv.key: kv.value for kv in driver.get_key_value_store("word-counts", p).all()}
            totals.update(store)
            top = ", ".join(f"{w}={c}" for w, c in Counter(store).most_common(5))
            print(f"partition {p}: {len(store):3d} words  top: {top}")
        print("\ntop 10 words:", ", ".join(f"{w}={c}" for w, c in totals.most_common(10)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

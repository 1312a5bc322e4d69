"""An application whose processor raises on its second record: ``python failing_app.py DIR`` prints the error it
gets from KafkaStreams (``error: <message>``) and exits 1. ``python failing_app.py DIR deserialization``: its
source's value serde (a Long) fails on that record instead, under the default deserialization handler."""
from __future__ import annotations

import os
import sys

from streams_on_spark import Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder, StreamsException
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.records import ProducerRecord

S = Serdes.String()


def parse(value: str) -> str:
    if value == "bad":
        raise ValueError(f"cannot parse {value!r}")
    return value


def main(root: str, failing: str = "processor") -> int:
    topics = EmbeddedTopics(os.path.join(root, "topics"))
    topics.create_topic("in", 2)
    topics.create_topic("out", 2)
    topics.append([ProducerRecord("in", 0, 1000, b"k", b"good", ()), ProducerRecord("in", 1, 1001, b"k", b"bad", ())])
    builder = StreamsBuilder()
    if failing == "deserialization":   # "good" is not 8 bytes either: the first record read fails
        builder.stream("in", Consumed.with_(S, Serdes.Long())).to("out", Produced.with_(S, Serdes.Long()))
    else:
        builder.stream("in", Consumed.with_(S, S)).map_values(parse).to("out", Produced.with_(S, S))
    config = {"application.id": "failing", "embedded.topics.dir": topics.root,
              "checkpoint.location": os.path.join(root, "checkpoints")}
    with KafkaStreams(builder.build(), config) as streams:
        streams.start()
        try:
            streams.process_all_available()
        except StreamsException as e:
            print(f"error: {e}", flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

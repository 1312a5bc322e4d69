"""KafkaStreams on Spark with the system clock: wall-clock punctuators fire while no data arrives.

A task on Spark only runs when its group is called; a processing-time timeout set to the next due punctuation wakes
it without input, as a Kafka Streams thread punctuates idle tasks.
"""
from __future__ import annotations

import time

import pytest

from streams_on_spark import (
    Consumed,
    KafkaStreams,
    Processor,
    Produced,
    PunctuationType,
    Record,
    Serdes,
    Stores,
    StreamsBuilder,
)
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.records import ProducerRecord

pytestmark = pytest.mark.spark
S, L = Serdes.String(), Serdes.Long()


class Heartbeat(Processor):
    """Counts records; every 300 ms of wall clock forwards the count so far (stored, so it survives batches)."""

    def init(self, context) -> None:
        super().init(context)
        self.seen = context.get_state_store("seen")
        context.schedule(300, PunctuationType.WALL_CLOCK_TIME, self.beat)

    def process(self, record: Record) -> None:
        self.seen.put("count", (self.seen.get("count") or 0) + 1)

    def beat(self, now: int) -> None:
        self.context.forward(Record("count", self.seen.get("count") or 0, now))


def heartbeat_topology():
    builder = StreamsBuilder()
    builder.add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("seen"), S, L))
    (builder.stream("events", Consumed.with_(S, S)).process(Heartbeat, "seen")
     .to("beats", Produced.with_(S, L)))
    return builder.build()


def test_idle_task_keeps_punctuating_on_the_system_clock(spark, tmp_path):
    with EmbeddedTopics(str(tmp_path / "topics")) as topics:
        topics.create_topic("events", 1)
        topics.create_topic("beats", 1)
        config = {"application.id": "heartbeat", "embedded.topics.dir": topics.root,
                  "checkpoint.location": str(tmp_path / "checkpoints")}
        with KafkaStreams(heartbeat_topology(), config, spark) as streams:
            streams.start()
            topics.append([ProducerRecord("events", 0, 1, b"k", b"v", ()) for _ in range(3)])
            streams.process_all_available()
            started = time.time() * 1000
            deadline = time.monotonic() + 60
            while topics.end_offset("beats", 0) < 3 and time.monotonic() < deadline:
                time.sleep(0.2)           # no new input: only timeouts can make the task punctuate
            beats = topics.read("beats", 0, 0, topics.end_offset("beats", 0))
    assert len(beats) >= 3, "the idle task stopped punctuating"
    assert {L.deserialize("beats", b.value) for b in beats} == {3}
    stamps = [b.timestamp for b in beats]
    # Kafka's schedule is a grid (PunctuationSchedule.next: a late punctuation keeps the grid, missed slots are
    # skipped), so one punctuation per 300 ms slot: consecutive ones may be closer than 300 ms when the first was
    # late, but never in the same slot, so every other one is more than a slot apart
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps), stamps
    assert all(later - earlier > 300 for earlier, later in zip(stamps, stamps[2:])), stamps
    assert stamps[-1] >= started          # fired after the last input was processed

"""Punctuation on every engine: a processor that buffers in its store and flushes on the wall clock.

Kafka rules checked: a WALL_CLOCK_TIME schedule first fires at init time + interval and then at most once per
clock check, with the time of the check (``PunctuationQueue``/``PunctuationSchedule``); every task punctuates,
whatever data it has seen; what a punctuator forwards is processed downstream within the same
``advance_wall_clock_time`` call, repartition included (Kafka's driver drains after punctuating).
"""
from __future__ import annotations

from collections import Counter

from streams_on_spark import (
    Consumed,
    Grouped,
    Materialized,
    Processor,
    Produced,
    PunctuationType,
    Record,
    Serdes,
    Stores,
    StreamsBuilder,
    TestRecord,
)
from streams_on_spark.partitioner import partition_for_key

S, L = Serdes.String(), Serdes.Long()
START = 10_000


class FlushEverySecond(Processor):
    """Counts records per key in its store and forwards (key, count, flush time) every second of wall clock."""

    def init(self, context) -> None:
        super().init(context)
        self.pending = context.get_state_store("pending")
        context.schedule(1_000, PunctuationType.WALL_CLOCK_TIME, self.flush)

    def process(self, record: Record) -> None:
        self.pending.put(record.key, (self.pending.get(record.key) or 0) + 1)

    def flush(self, now: int) -> None:
        for key, count in list(self.pending.all()):
            task = self.context.task_id
            self.context.forward(Record(f"{key}@{task.partition}", count, now))
            self.pending.delete(key)


def flushing_topology():
    """events -> buffer per key, flushed by wall clock -> "flushed"; flushed counts re-keyed and summed per key."""
    builder = StreamsBuilder()
    builder.add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("pending"), S, L))
    flushed = builder.stream("events", Consumed.with_(S, S)).process(FlushEverySecond, "pending")
    flushed.to("flushed", Produced.with_(S, L))
    (flushed.select_key(lambda key, _count: key.split("@")[0])
     .group_by_key(Grouped.with_(S, L, name="by-key"))
     .reduce(lambda a, b: a + b, materialized=Materialized.as_("totals"))
     .to_stream().to("totals-out", Produced.with_(S, L)))
    return builder.build()


def test_wall_clock_flush_on_every_task_then_downstream(make_driver, partitions):
    driver = make_driver(flushing_topology(), "events", "flushed", "totals-out")
    events = driver.create_input_topic("events", S, S, start_timestamp=1, auto_advance=1)
    keys = ["alice", "bob", "carol", "dave", "alice", "bob", "alice"]
    events.pipe_record_list([TestRecord(k, "click") for k in keys])
    flushed = driver.create_output_topic("flushed", S, L)
    assert flushed.is_empty()                      # nothing is due before init time + 1000

    driver.advance_wall_clock_time(999)            # 10_999: still not due
    assert flushed.is_empty()

    driver.advance_wall_clock_time(1)              # 11_000: every task flushes what its partition buffered
    records = flushed.read_records_to_list()
    expected = Counter(keys)
    assert sorted((r.key, r.value) for r in records) == sorted(
        (f"{k}@{partition_for_key(k.encode(), partitions)}", n) for k, n in expected.items())
    assert {r.timestamp for r in records} == {START + 1_000}
    assert all(r.partition == partition_for_key(r.key.encode(), partitions) for r in records)
    # the flushed counts went through the by-key repartition into "totals" within the same call
    for key, n in expected.items():
        home = partition_for_key(key.encode(), partitions)
        assert driver.get_key_value_store("totals", home).get(key) == n

    driver.advance_wall_clock_time(2_500)          # 13_500: one firing (at most once per check), nothing pending
    assert flushed.is_empty()
    events.pipe_input("bob", "click")
    driver.advance_wall_clock_time(500)            # 14_000: the schedule moved on to 14_000
    bob = flushed.read_records_to_list()
    assert [(r.key, r.value, r.timestamp) for r in bob] == [(f"bob@{partition_for_key(b'bob', partitions)}", 1,
                                                              START + 4_000)]
    home = partition_for_key(b"bob", partitions)
    assert driver.get_key_value_store("totals", home).get("bob") == expected["bob"] + 1

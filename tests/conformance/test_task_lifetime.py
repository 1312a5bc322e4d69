"""A task's processors live from assignment to revocation, as in Kafka: their fields and the punctuations they
schedule or cancel after ``init()`` carry over from one record (and on Spark, one micro-batch) to the next."""
from __future__ import annotations

from streams_on_spark import Processor, PunctuationType, Record, Serdes, Topology

S, L = Serdes.String(), Serdes.Long()


class FieldCounter(Processor):
    """Counts the records it saw in a field (no store)."""

    def init(self, context):
        super().init(context)
        self.seen = 0

    def process(self, record):
        self.seen += 1
        self.context.forward(record.with_value(self.seen))


class CancelAfterTwo(Processor):
    """Punctuates on stream time from init(); cancels the schedule at its second record."""

    def init(self, context):
        super().init(context)
        self.records = 0
        self.handle = context.schedule(10, PunctuationType.STREAM_TIME, self.tick)

    def tick(self, now):
        self.context.forward(Record("tick", now, now))

    def process(self, record):
        self.records += 1
        if self.records == 2:
            self.handle.cancel()
        self.context.forward(record.with_value(self.records))


def topology(processor):
    return (Topology().add_source("src", "in", key_serde=S, value_serde=S)
            .add_processor("p", processor, "src")
            .add_sink("out", "out", "p", key_serde=S, value_serde=L))


def test_a_processor_field_counts_on_across_batches(make_driver):
    driver = make_driver(topology(FieldCounter), "in", "out")
    source, out = driver.create_input_topic("in", S, S), driver.create_output_topic("out", S, L)
    for i in range(5):   # one input at a time: on Spark, five micro-batches of the same task
        source.pipe_input("k", "v", i)
    assert out.read_values_to_list() == [1, 2, 3, 4, 5]


def test_a_cancelled_punctuation_stays_cancelled(make_driver):
    driver = make_driver(topology(CancelAfterTwo), "in", "out")
    source, out = driver.create_input_topic("in", S, S), driver.create_output_topic("out", S, L)
    for ts in (0, 15, 40, 80):
        source.pipe_input("k", "v", ts)
    assert out.read_key_values_to_list() == [("k", 1), ("tick", 0), ("k", 2), ("k", 3), ("k", 4)]

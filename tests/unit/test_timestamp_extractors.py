"""Timestamp extractors (Kafka's built-ins by class name, classes, instances, functions) and ``max.task.idle.ms``
where the goldens cannot reach: Kafka's driver refuses a negative record timestamp (``TestRecord``), and its
``WallclockTimestampExtractor`` reads the real clock."""
from __future__ import annotations

import logging

import pytest

from streams_on_spark import Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder, StreamsException
from streams_on_spark.config import TaskConfig
from streams_on_spark.records import ProducerRecord
from streams_on_spark.errors import ConfigException
from streams_on_spark.runtime.local import LocalEngine
from streams_on_spark.timestamp_extractors import (
    FailOnInvalidTimestamp,
    TimestampExtractor,
    UsePartitionTimeOnInvalidTimestamp,
    WallclockTimestampExtractor,
    timestamp_extractor,
)

S = Serdes.String()


def topology(consumed: Consumed = Consumed.with_(S, S)):
    builder = StreamsBuilder()
    builder.stream("events", consumed).to("out", Produced.with_(S, S))
    return builder.build()


def run(config: dict, records: list[tuple[int, str]], consumed: Consumed = Consumed.with_(S, S)):
    """Pipe (timestamp, value) records, negative timestamps included, as a topic holds them: (value, timestamp) out
    and the dropped count."""
    engine = LocalEngine(topology(consumed).internal_builder, TaskConfig.from_config({"application.id": "ts", **config}),
                         {}, False, 0)
    out = []
    produce = engine._produce
    engine._produce = lambda record: (out.append((record.value.decode(), record.timestamp)), produce(record))
    for timestamp, value in records:
        engine.pipe(ProducerRecord("events", 0, timestamp, b"k", value.encode(), ()))
    return out, engine.metrics()["dropped-records-total"]


def test_the_default_fails_on_a_negative_record_timestamp_with_kafkas_message():
    with pytest.raises(StreamsException, match=r"^Input record ConsumerRecord\(topic = events, partition = 0, "
                                               r"leaderEpoch = null, offset = 1, CreateTime = -1, .* has invalid \(negative\) timestamp\. "
                                               r"Possibly because a pre-0\.10 producer"):
        run({}, [(5, "a"), (-1, "b")])


@pytest.mark.parametrize("name", ["LogAndSkipOnInvalidTimestamp",
                                  "org.apache.kafka.streams.processor.LogAndSkipOnInvalidTimestamp"])
def test_log_and_skip_drops_a_negative_record_timestamp_and_counts_it(name, caplog):
    with caplog.at_level(logging.WARNING):
        assert run({"default.timestamp.extractor": name}, [(5, "a"), (-1, "b"), (7, "c")]) == (
            [("a", 5), ("c", 7)], 1)
    assert "Skipping record due to negative extracted timestamp. topic=[events] partition=[0] offset=[1] " \
           "extractedTimestamp=[-1] extractor=[LogAndSkipOnInvalidTimestamp]" in caplog.text


def test_use_partition_time_replaces_a_negative_timestamp_by_the_highest_so_far():
    assert run({"default.timestamp.extractor": "UsePartitionTimeOnInvalidTimestamp"},
               [(5, "a"), (9, "b"), (3, "c"), (-1, "d")]) == ([("a", 5), ("b", 9), ("c", 3), ("d", 9)], 0)
    with pytest.raises(StreamsException, match="because partition time is unknown"):
        run({"default.timestamp.extractor": UsePartitionTimeOnInvalidTimestamp}, [(-1, "a")])


def test_wallclock_takes_the_system_clock(monkeypatch):
    monkeypatch.setattr("time.time_ns", lambda: 1_234_567_000_000)
    assert run({}, [(5, "a")], Consumed.with_(S, S).with_timestamp_extractor(WallclockTimestampExtractor())) == (
        [("a", 1_234_567)], 0)


def test_a_source_extractor_overrides_the_configured_one_and_may_be_a_class_an_instance_or_a_function():
    class Doubled(TimestampExtractor):
        def extract(self, record, partition_time):
            return record.timestamp * 2

    class DuckTyped:
        def extract(self, record, partition_time):
            return record.timestamp + 1

    config = {"default.timestamp.extractor": FailOnInvalidTimestamp()}
    for extractor, expected in [(Doubled, 10), (Doubled(), 10), (DuckTyped(), 6), (lambda r, pt: 42, 42)]:
        consumed = Consumed.with_(S, S).with_timestamp_extractor(extractor)
        assert run(config, [(5, "a")], consumed) == ([("a", expected)], 0)


def test_bad_extractors_are_refused_naming_what_was_wrong():
    with pytest.raises(ConfigException, match="Invalid value Nope for configuration default.timestamp.extractor: "
                                              "Class Nope could not be found"):
        TaskConfig.from_config({"application.id": "x", "default.timestamp.extractor": "Nope"})
    with pytest.raises(ValueError, match="^timestamp_extractor must be a TimestampExtractor, a Kafka extractor's class name or a function"):
        Consumed.with_(S, S).with_timestamp_extractor(42)
    with pytest.raises(ValueError, match="must define extract"):
        timestamp_extractor(int, "timestamp_extractor")


def test_an_extractor_that_raises_or_answers_no_int_fails_the_task():
    def raising(record, partition_time):
        raise KeyError("at")

    with pytest.raises(StreamsException, match="^Fatal user code error in TimestampExtractor callback for record "
                                               "ConsumerRecord") as failed:
        run({}, [(5, "a")], Consumed.with_(S, S).with_timestamp_extractor(raising))
    assert isinstance(failed.value.__cause__, KeyError)
    with pytest.raises(StreamsException, match="returned '5' for record .*a timestamp must be an int"):
        run({}, [(5, "a")], Consumed.with_(S, S).with_timestamp_extractor(lambda r, pt: "5"))


def test_the_partition_time_an_extractor_sees_within_one_batch_is_the_highest_extracted_before():
    """A Spark micro-batch queues many records of a partition before processing: each record's extractor still gets
    the highest timestamp extracted before it, as Kafka's (which extracts a record when the previous one leaves)."""
    seen = []

    def recording(record, partition_time):
        seen.append(partition_time)
        return int(record.value)

    builder = topology(Consumed.with_(S, S).with_timestamp_extractor(recording)).internal_builder
    engine = LocalEngine(builder, TaskConfig.from_config({"application.id": "b"}), {}, False, 0)
    task = engine.tasks[next(iter(engine.tasks))]
    task.add_columns("events", 0, 0, [0, 0, 0, 0], [b"k"] * 4, [b"5", b"9", b"-2", b"3"], [()] * 4)
    task.process_available()
    assert seen == [-1, 5, 9, 9]
    assert [(r.value, r.timestamp) for r in task.collector.drain()] == [(b"5", 5), (b"9", 9), (b"3", 3)]
    assert task.metrics.dropped == 1


@pytest.mark.parametrize("fast", [True, False])
def test_a_micro_batch_is_processed_in_timestamp_order_across_its_input_partitions(fast):
    """What max.task.idle.ms would wait for on Spark is already there: a batch holds what every input partition had,
    and the task takes the records in timestamp order across them (per-record and fused paths alike)."""
    builder = StreamsBuilder()
    builder.stream("left", Consumed.with_(S, S)).merge(builder.stream("right", Consumed.with_(S, S))).to(
        "merged", Produced.with_(S, S))
    config = TaskConfig.from_config({"application.id": "m", "batch.fast.path": fast})
    engine = LocalEngine(builder.build().internal_builder, config, {}, False, 0)
    task = engine.tasks[next(iter(engine.tasks))]
    task.add_columns("left", 0, 0, [10, 30, 50], [b"k"] * 3, [b"l10", b"l30", b"l50"], [()] * 3)
    task.add_columns("right", 0, 0, [5, 20, 40], [b"k"] * 3, [b"r5", b"r20", b"r40"], [()] * 3)
    task.process_available()
    assert [r.value for r in task.collector.drain()] == [b"r5", b"l10", b"r20", b"l30", b"r40", b"l50"]


@pytest.mark.parametrize("idle", [1, 100])
def test_spark_refuses_waiting_for_an_empty_partition(idle):
    with pytest.raises(ConfigException, match="Invalid value .* for configuration max.task.idle.ms: on Spark"):
        KafkaStreams(topology(), {"application.id": "idle", "bootstrap.servers": "localhost:9092",
                                  "max.task.idle.ms": idle})
    for accepted in (0, -1):
        TaskConfig.from_config({"application.id": "x", "max.task.idle.ms": accepted}).check_micro_batches()


def test_a_function_given_twice_makes_equal_parameters():
    def at(record, partition_time):
        return 1

    assert Consumed.with_(S, S).with_timestamp_extractor(at) == Consumed.with_(S, S).with_timestamp_extractor(at)
    assert Consumed.with_(S, S).with_timestamp_extractor(at) != Consumed.with_(S, S).with_timestamp_extractor(
        lambda r, pt: 1)

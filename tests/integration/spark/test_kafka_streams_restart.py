"""KafkaStreams on Spark over embedded topics: a run stopped mid-stream and restarted on its checkpoint ends
with the same stores and count updates as an uninterrupted run, whether the executors kept their local copies of the
tasks' stores or lost them (a new machine: the stores are rebuilt from the changelog in Spark's checkpoint)."""
from __future__ import annotations

import shutil

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TopologyException,
)
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.partitioner import partition_for_key
from streams_on_spark.records import ProducerRecord

pytestmark = pytest.mark.spark
S, L = Serdes.String(), Serdes.Long()
FIRST = ["the cat sat", "the dog ran", "a cat and a dog"]
SECOND = ["the end", "cat dog cat", "the the the"]


def word_count():
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(S, S))
     .flat_map_values(str.split)
     .select_key(lambda _k, w: w)
     .group_by_key(Grouped.with_(S, S, name="by-word"))
     .count(Materialized.as_("word-counts"))
     .to_stream().to("word-counts-out", Produced.with_(S, L)))
    return builder.build()


def append(topics: EmbeddedTopics, lines: list[str], start_ts: int) -> None:
    topics.append([ProducerRecord("sentences", i % 4, start_ts + i, f"line-{i}".encode(), line.encode(), ())
                   for i, line in enumerate(lines)])


def config(app: str, topics: EmbeddedTopics, checkpoints) -> dict:
    # no record cache: every count update is emitted, so outputs do not depend on where batches (commits) fall
    return {"application.id": app, "embedded.topics.dir": topics.root, "checkpoint.location": str(checkpoints),
            "statestore.cache.max.bytes": 0}


def outcome(streams: KafkaStreams, topics: EmbeddedTopics) -> tuple[dict, dict]:
    outputs = {p: [(S.deserialize("o", r.key), L.deserialize("o", r.value), r.timestamp)
                   for r in topics.read("word-counts-out", p, 0, topics.end_offset("word-counts-out", p))]
               for p in range(4)}
    stores = {p: {kv.key: kv.value.value for kv in task.stores["word-counts"].all()}
              for p, task in streams.read_tasks(1).items()}
    return outputs, stores


def per_key_counts(outputs: dict) -> dict:
    counts: dict = {}
    for p, records in outputs.items():
        for key, count, _ in records:
            counts.setdefault((p, key), []).append(count)
    return counts


def topics_with(tmp_path, name):
    topics = EmbeddedTopics(str(tmp_path / name))
    topics.create_topic("sentences", 4)
    topics.create_topic("word-counts-out", 4)
    return topics


def uninterrupted(spark, tmp_path) -> tuple[dict, dict]:
    """The outcome of one run over both halves of the input (checkpoint ck-whole)."""
    whole = topics_with(tmp_path, "whole")
    append(whole, FIRST, 1_000)
    append(whole, SECOND, 2_000)
    with KafkaStreams(word_count(), config("uninterrupted", whole, tmp_path / "ck-whole"), spark) as streams:
        streams.start()
        streams.process_all_available()
        return outcome(streams, whole)


@pytest.mark.parametrize("local_state", ["kept", "lost"])
def test_restart_on_the_checkpoint_equals_an_uninterrupted_run(spark, tmp_path, caplog, local_state):
    expected = uninterrupted(spark, tmp_path)

    parts = topics_with(tmp_path, "parts")
    append(parts, FIRST, 1_000)
    cfg = {**config("restarted", parts, tmp_path / "ck-parts"), "state.dir": str(tmp_path / "local-state")}
    with KafkaStreams(word_count(), cfg, spark) as first_run:
        first_run.start()
        first_run.process_all_available()
    assert any((tmp_path / "local-state").rglob("CURRENT")), "no task kept its stores in a local RocksDB"
    if local_state == "lost":
        shutil.rmtree(tmp_path / "local-state")
    append(parts, SECOND, 2_000)              # arrives while the application is down
    with KafkaStreams(word_count(), cfg, spark) as second_run, caplog.at_level("INFO", "streams_on_spark"):
        second_run.start()
        second_run.process_all_available()
        got = outcome(second_run, parts)
    # progress counts records (not Spark rows, which are record batches) and only what the restart had left
    progress = [r.getMessage() for r in caplog.records if "input records" in r.getMessage()]
    assert "restarted-subtopology-0: batch 1, 3 input records, lag 0" in progress
    # the upstream tasks write their output themselves, each when done: it may reach subtopology 1 in several batches
    downstream = [int(m.split(", ")[1].split()[0]) for m in progress if m.startswith("restarted-subtopology-1: ")]
    assert sum(downstream) == 8, progress

    # Stores equal; each key's count updates equal. Which input record got which count may differ: several upstream
    # tasks write to one repartition partition, each when it is done, so records of different upstream tasks
    # interleave as they arrive (as in Kafka).
    outputs, stores = got
    assert stores == expected[1]
    assert per_key_counts(outputs) == per_key_counts(expected[0])
    assert stores[partition_for_key(b"the", 4)]["the"] == 6
    assert sum(len(records) for records in outputs.values()) == sum(len(line.split()) for line in FIRST + SECOND)
    assert all(partition_for_key(key.encode(), 4) == p for p, records in outputs.items() for key, *_ in records)
    assert parts.partitions("restarted-by-word-repartition") == 4


def test_missing_source_topic_is_reported_before_anything_runs(spark, tmp_path):
    topics = EmbeddedTopics(str(tmp_path / "empty"))
    with KafkaStreams(word_count(), config("missing", topics, tmp_path / "ck"), spark) as streams:
        with pytest.raises(TopologyException, match=r"source topics \['sentences'\] do not exist"):
            streams.start()


def test_close_takes_a_timeout_as_kafkas_and_gives_back_the_signal_handlers(spark, tmp_path):
    import datetime
    import signal
    with EmbeddedTopics(str(tmp_path / "topics")) as topics:
        topics.create_topic("sentences", 4)
        topics.create_topic("word-counts-out", 4)
        before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        streams = KafkaStreams(word_count(), config("close", topics, tmp_path / "ck"), spark)
        with pytest.raises(ValueError, match="timeout must be >= 0"):
            streams.close(-1)
        streams.start()
        assert all(signal.getsignal(s) == streams._on_signal for s in before)   # SIGINT/SIGTERM close it now
        append(topics, FIRST, 1_000)
        streams.process_all_available()
        assert streams.close(datetime.timedelta(seconds=60)) is True
        assert streams.state.value == "NOT_RUNNING"
        assert {s: signal.getsignal(s) for s in before} == before
        assert streams.close(0) is True   # closing again is a no-op


def state_partitions_of(checkpoints, subtopology: int) -> set[str]:
    """The state partitions each batch of a subtopology's query ran with, from its checkpoint's offset log."""
    import json
    offsets = checkpoints / f"subtopology-{subtopology}" / "offsets"
    return {json.loads(f.read_text().splitlines()[1])["conf"]["spark.sql.shuffle.partitions"]
            for f in offsets.iterdir() if f.name.isdigit()}


def test_tasks_share_state_partitions_and_a_checkpoint_keeps_its_own(spark, tmp_path):
    """4 tasks on the session's 2 shuffle partitions run in 2 state partitions of 2 tasks each (one wave on 2
    cores); a checkpoint written with 4 state partitions keeps them when restarted in that session, its tasks'
    state found under the same slots; both end as one uninterrupted run; the session's setting is left as it was."""
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"
    expected = uninterrupted(spark, tmp_path)
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"
    assert state_partitions_of(tmp_path / "ck-whole", 0) == state_partitions_of(tmp_path / "ck-whole", 1) == {"2"}
    assert sorted(p.name for p in (tmp_path / "ck-whole" / "subtopology-1" / "state" / "0").iterdir()
                  if p.name.isdigit()) == ["0", "1"]

    parts = topics_with(tmp_path, "parts")
    append(parts, FIRST, 1_000)
    cfg = config("restarted", parts, tmp_path / "ck-parts")
    spark.conf.set("spark.sql.shuffle.partitions", "4")   # the first run: one state partition per task
    try:
        with KafkaStreams(word_count(), cfg, spark) as first_run:
            first_run.start()
            first_run.process_all_available()
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", "2")
    assert state_partitions_of(tmp_path / "ck-parts", 1) == {"4"}
    append(parts, SECOND, 2_000)
    with KafkaStreams(word_count(), cfg, spark) as second_run:
        second_run.start()
        second_run.process_all_available()
        outputs, stores = outcome(second_run, parts)
    assert state_partitions_of(tmp_path / "ck-parts", 1) == {"4"}   # Spark took the checkpoint's own
    assert stores == expected[1]
    assert stores[partition_for_key(b"the", 4)]["the"] == 6           # the restart found the first run's counts
    assert per_key_counts(outputs) == per_key_counts(expected[0])

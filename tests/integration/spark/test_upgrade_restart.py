"""KafkaStreams restarted on its checkpoints with a changed topology (issue 14): the checkpoint remembers the
topology that wrote it. An unsafe change (an operator inserted before generated store and repartition names, which
shifts them) is refused with the findings and the ways out, before anything runs; the same change with named
operators, plus a new branch that renumbers every subtopology, resumes each subtopology from its own checkpoint with
its stores intact."""
from __future__ import annotations

import json

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
from streams_on_spark.checkpoint_manifest import MANIFEST
from streams_on_spark.runtime.spark.checkpoints import CheckpointLocation
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.records import ProducerRecord

pytestmark = pytest.mark.spark
S, L = Serdes.String(), Serdes.Long()
FIRST = ["the cat sat", "the dog ran", "a cat and a dog"]
SECOND = ["the end", "cat dog cat"]


def word_count(named: bool, upgraded: bool):
    """The word count; ``upgraded`` inserts a filter before the grouping and, first, a new branch of its own."""
    builder = StreamsBuilder()
    if upgraded:
        builder.stream("clicks", Consumed.with_(S, S)).map_values(str.upper).to("clicks-upper", Produced.with_(S, S))
    words = builder.stream("sentences", Consumed.with_(S, S)).flat_map_values(str.split)
    if upgraded:
        words = words.filter(lambda _k, word: word != "")
    grouped = (words.group_by(lambda _k, word: word, Grouped.with_(S, S, name="by-word")) if named
               else words.group_by(lambda _k, word: word, Grouped.with_(S, S)))
    counts = grouped.count(Materialized.as_("word-counts")) if named else grouped.count()
    counts.to_stream().to("word-counts-out", Produced.with_(S, L))
    return builder.build()


def make_topics(tmp_path) -> EmbeddedTopics:
    topics = EmbeddedTopics(str(tmp_path / "topics"))
    for name in ("sentences", "clicks"):
        topics.create_topic(name, 2)
    for name in ("word-counts-out", "clicks-upper"):
        topics.create_topic(name, 2)
    return topics


def append(topics: EmbeddedTopics, lines: list[str], start_ts: int) -> None:
    topics.append([ProducerRecord("sentences", i % 2, start_ts + i, f"line-{i}".encode(), line.encode(), ())
                   for i, line in enumerate(lines)])


def config(topics: EmbeddedTopics, tmp_path) -> dict:
    return {"application.id": "upgraded", "embedded.topics.dir": topics.root,
            "checkpoint.location": str(tmp_path / "checkpoints"), "statestore.cache.max.bytes": 0}


def counts_in(streams: KafkaStreams, subtopology: int, store: str) -> dict[str, int]:
    return {kv.key: kv.value.value for task in streams.read_tasks(subtopology).values()
            for kv in task.stores[store].all()}


def expected_counts(lines: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for word in " ".join(lines).split():
        out[word] = out.get(word, 0) + 1
    return out


def test_an_unsafe_change_is_refused_with_its_findings_and_the_ways_out(spark, tmp_path):
    topics = make_topics(tmp_path)
    append(topics, FIRST, 1_000)
    with KafkaStreams(word_count(named=False, upgraded=False), config(topics, tmp_path), spark) as streams:
        streams.start()
        streams.process_all_available()
    manifest = (tmp_path / "checkpoints" / MANIFEST).read_text()
    assert "KSTREAM-AGGREGATE-STATE-STORE-0000000003" in json.loads(manifest)["description"]

    streams = KafkaStreams(word_count(named=False, upgraded=True), config(topics, tmp_path), spark)
    with pytest.raises(TopologyException) as refused:
        streams.start()
    message = str(refused.value)
    assert "KSTREAM-AGGREGATE-STATE-STORE-0000000003" in message        # the store whose name shifted
    assert "application.id" in message and "reset" in message and "upgrade.allow.unsafe=true" in message
    assert streams.state.value == "CREATED" and streams.spark is spark
    assert (tmp_path / "checkpoints" / MANIFEST).read_text() == manifest   # nothing recorded for the refused run

    allowed = {**config(topics, tmp_path), "upgrade.allow.unsafe": "true"}
    with KafkaStreams(word_count(named=False, upgraded=True), allowed, spark) as streams:
        streams.start()       # the team accepted the loss: it starts, over a store that begins empty
        streams.process_all_available()


def test_a_restart_with_the_same_topology_says_nothing(spark, tmp_path, caplog):
    """Generated names and a store whose windows describe() does not show: the restart logs no warning (building the
    topology warned of the names once, KIP-1111's warning; the manifest keeps the windows, so they are checked)."""
    topics = make_topics(tmp_path)
    append(topics, FIRST, 1_000)
    with KafkaStreams(word_count(named=False, upgraded=False), config(topics, tmp_path), spark) as streams:
        streams.start()
        streams.process_all_available()
    append(topics, SECOND, 2_000)
    same = word_count(named=False, upgraded=False)
    caplog.clear()   # building it may warn of its generated names (once per process): the restart is what counts
    with KafkaStreams(same, config(topics, tmp_path), spark) as streams, caplog.at_level("WARNING"):
        streams.start()
        streams.process_all_available()
        assert counts_in(streams, 1, "KSTREAM-AGGREGATE-STATE-STORE-0000000003") == expected_counts(FIRST + SECOND)
    assert [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.name.startswith("streams_on_spark")] == []


def test_the_same_change_with_named_operators_resumes_every_store(spark, tmp_path):
    topics = make_topics(tmp_path)
    append(topics, FIRST, 1_000)
    with KafkaStreams(word_count(named=True, upgraded=False), config(topics, tmp_path), spark) as streams:
        streams.start()
        streams.process_all_available()
        assert counts_in(streams, 1, "word-counts") == expected_counts(FIRST)
    append(topics, SECOND, 2_000)      # arrives while the application is down

    upgraded = word_count(named=True, upgraded=True)
    assert [s.id for s in upgraded.describe().subtopologies] == [0, 1, 2]   # the new branch is subtopology 0
    with KafkaStreams(upgraded, config(topics, tmp_path), spark) as streams:
        streams.start()
        streams.process_all_available()
        assert counts_in(streams, 2, "word-counts") == expected_counts(FIRST + SECOND)
    manifest = json.loads((tmp_path / "checkpoints" / MANIFEST).read_text())
    # each subtopology kept its own checkpoint; the new one got a directory no run had used
    assert manifest["checkpoints"] == {"0": "subtopology-0-1", "1": "subtopology-0", "2": "subtopology-1"}
    outputs = [(S.deserialize("o", r.key), L.deserialize("o", r.value))
               for p in range(2) for r in topics.read("word-counts-out", p, 0, topics.end_offset("word-counts-out", p))]
    assert sorted(c for w, c in outputs if w == "cat") == [1, 2, 3, 4]   # every update once, counting on



def test_a_remote_location_lists_its_checkpoints_so_a_new_subtopology_takes_a_fresh_one(spark, tmp_path):
    """The checkpoints already under a remote location are listed through Spark (they were not: a new subtopology
    could take the directory of an old one and resume its state)."""
    topics = make_topics(tmp_path)
    append(topics, FIRST, 1_000)
    remote = {**config(topics, tmp_path), "checkpoint.location": (tmp_path / "remote").as_uri()}
    with KafkaStreams(word_count(named=True, upgraded=False), remote, spark) as streams:
        streams.start()
        streams.process_all_available()
    assert CheckpointLocation(remote["checkpoint.location"]).checkpoint_names(spark) == {"subtopology-0",
                                                                                          "subtopology-1"}
    assert CheckpointLocation((tmp_path / "nothing-here").as_uri()).checkpoint_names(spark) == frozenset()
    append(topics, SECOND, 2_000)
    with KafkaStreams(word_count(named=True, upgraded=True), remote, spark) as streams:
        streams.start()
        streams.process_all_available()
        assert counts_in(streams, 2, "word-counts") == expected_counts(FIRST + SECOND)
    written = "".join(p.read_text() for p in (tmp_path / "remote" / MANIFEST).glob("part-*"))
    assert json.loads(written)["checkpoints"] == {"0": "subtopology-0-1", "1": "subtopology-0", "2": "subtopology-1"}

def test_a_remote_checkpoint_location_remembers_its_topology_too(spark, tmp_path):
    """A location with a scheme (hdfs://, s3a://; here file://) is read and written through Spark, as the
    checkpoints are: the manifest is there after a run, and the next start is checked against it."""
    topics = make_topics(tmp_path)
    append(topics, FIRST, 1_000)
    remote = {**config(topics, tmp_path), "checkpoint.location": (tmp_path / "remote").as_uri()}
    with KafkaStreams(word_count(named=False, upgraded=False), remote, spark) as streams:
        streams.start()
        streams.process_all_available()
    written = "".join(p.read_text() for p in (tmp_path / "remote" / MANIFEST).glob("part-*"))
    assert "KSTREAM-AGGREGATE-STATE-STORE-0000000003" in json.loads(written)["description"]
    with pytest.raises(TopologyException, match="KSTREAM-AGGREGATE-STATE-STORE-0000000003"):
        KafkaStreams(word_count(named=False, upgraded=True), remote, spark).start()
    with KafkaStreams(word_count(named=False, upgraded=False), remote, spark) as streams:
        streams.start()   # the same topology resumes
        append(topics, SECOND, 2_000)
        streams.process_all_available()
        assert counts_in(streams, 1, "KSTREAM-AGGREGATE-STATE-STORE-0000000003") == expected_counts(FIRST + SECOND)
    outputs = [(S.deserialize("o", r.key), L.deserialize("o", r.value))
               for p in range(2) for r in topics.read("word-counts-out", p, 0, topics.end_offset("word-counts-out", p))]
    assert max(c for w, c in outputs if w == "cat") == expected_counts(FIRST + SECOND)["cat"]

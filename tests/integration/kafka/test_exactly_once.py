"""A micro-batch replayed after its output was written (the crash the guarantees are about, made deterministic: the
run wrote everything, then the last entry of each query's commit log is removed, as if the process died before
Spark recorded the batch as done). The next run processes those batches again: with ``at_least_once`` their output
reaches Kafka twice (the repartition topic too, so the downstream counts count twice); with ``exactly_once_v2`` each
replayed task finds its batch committed and writes nothing, and a ``read_committed`` consumer sees every update once.
Either way the replay computes what the first run did: a processor reading the wall clock gets the same time (the
micro-batch's timestamp), so the records written twice under at_least_once are equal.
"""
from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path

import pytest

from streams_on_spark import (Consumed, Grouped, KafkaStreams, Materialized, Processor, Produced, Record, Serdes,
                              StreamsBuilder)
from streams_on_spark.connectors.kafka import KafkaConnector
from streams_on_spark.records import ProducerRecord

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
S, L = Serdes.String(), Serdes.Long()
LINES = ["the cat sat", "the dog sat", "a cat and a dog", "the end"]


class StampWithWallClock(Processor):
    """Forwards each line with the wall-clock time the task saw as its value."""

    def init(self, context) -> None:
        self.context = context

    def process(self, record: Record) -> None:
        self.context.forward(Record(record.value, self.context.current_system_time_ms(), record.timestamp))


def word_count(source: str, sink: str):
    builder = StreamsBuilder()
    lines = builder.stream(source, Consumed.with_(S, S))
    (lines.flat_map_values(str.split).select_key(lambda _k, w: w)
     .group_by_key(Grouped.with_(S, S, name="by-word")).count(Materialized.as_("counts"))
     .to_stream().to(sink, Produced.with_(S, L)))
    lines.process(StampWithWallClock).to(f"{sink}-clock", Produced.with_(S, L))
    return builder.build()


def forget_last_batches(checkpoints: Path) -> list[str]:
    """Remove the newest commit-log entry of every query: Spark runs those batches again on the next start."""
    removed = []
    for query in sorted(checkpoints.glob("subtopology-*")):   # not topology.json, the manifest beside them
        commits = sorted((f for f in (query / "commits").iterdir() if f.name.isdigit()), key=lambda f: int(f.name))
        commits[-1].unlink()
        (commits[-1].parent / f".{commits[-1].name}.crc").unlink(missing_ok=True)   # Hadoop's checksum of it
        removed.append(f"{query.name}/{commits[-1].name}")
    return removed


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_a_replayed_batch_is_written_once_under_exactly_once(kafka_bootstrap, kafka_spark, read_topic, tmp_path,
                                                             guarantee):
    run = uuid.uuid4().hex[:8]
    source, sink, app = f"eos-in-{run}", f"eos-out-{run}", f"eos-{run}"
    with KafkaConnector(kafka_bootstrap, timeout_ms=10_000) as admin:
        admin.create_topic(source, 2)
        admin.create_topic(sink, 2)
        admin.create_topic(f"{sink}-clock", 2)
        admin.append([ProducerRecord(source, i % 2, 1_000 + i, None, line.encode(), ()) for i, line in enumerate(LINES)])
    checkpoints = tmp_path / "checkpoints"
    config = {"application.id": app, "bootstrap.servers": kafka_bootstrap, "checkpoint.location": str(checkpoints),
              "statestore.cache.max.bytes": 0, "processing.guarantee": guarantee}
    for replay in (False, True):
        if replay:
            assert len(forget_last_batches(checkpoints)) == 2
        with KafkaStreams(word_count(source, sink), config, kafka_spark) as streams:
            streams.start()
            streams.process_all_available()
            stores = {kv.key: kv.value.value for task in streams.read_tasks(1).values() for kv in task.stores["counts"].all()}

    words = Counter(w for line in LINES for w in line.split())
    updates: dict[str, list[int]] = {}
    for r in read_topic(sink, 2, committed=True):
        updates.setdefault(S.deserialize(sink, r.key), []).append(L.deserialize(sink, r.value))
    repartitioned = Counter(S.deserialize("r", r.value) for r in read_topic(f"{app}-by-word-repartition", 2,
                                                                            committed=True))
    clock = Counter((S.deserialize("c", r.key), L.deserialize("c", r.value))
                    for r in read_topic(f"{sink}-clock", 2, committed=True))
    assert set(line for line, _ in clock) == set(LINES)
    assert all(now > 1_700_000_000_000 for _, now in clock)   # a real clock, not a record timestamp
    if guarantee == "exactly_once_v2":
        assert set(clock.values()) == {1}
        assert updates == {w: list(range(1, n + 1)) for w, n in words.items()}
        assert repartitioned == words
        assert stores == dict(words)
    else:   # the replays wrote again: the repartition topic holds the words twice, and the counts went on counting
        assert repartitioned == words + words
        assert set(clock.values()) == {2}   # each line's record written twice, with the same wall-clock time
        assert any(len(v) > n for (w, n), v in zip(words.items(), (updates[w] for w in words)))
        assert stores == {w: 2 * n for w, n in words.items()}

"""The record cache on Spark: a micro-batch is a commit, so an aggregation emits its last update per key and batch.

Kafka rule: with caching (the default, ``statestore.cache.max.bytes`` 10 MiB) a cached store forwards on commit the
latest value of each key written since the last commit, as ``Change(new, old as of the last commit)``, stamped with
the new value's timestamp; ``statestore.cache.max.bytes=0``, or ``Materialized.with_caching_disabled()`` for one store,
forwards every update (the batch fast path does not fold an uncached store).
"""
from __future__ import annotations

from collections import Counter

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
)
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.partitioner import partition_for_key
from streams_on_spark.records import ProducerRecord

pytestmark = pytest.mark.spark
S, L = Serdes.String(), Serdes.Long()
BATCHES = [["the cat sat", "the dog sat", "a cat"], ["the end", "dog dog"]]


def word_count(caching: bool = True):
    store = Materialized.as_("word-counts")
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(S, S)).flat_map_values(str.split)
     .select_key(lambda _k, w: w).group_by_key(Grouped.with_(S, S, name="by-word"))
     .count(store if caching else store.with_caching_disabled()).to_stream().to("counts", Produced.with_(S, L)))
    return builder.build()


def run(tmp_path, name: str, cache_bytes: int, caching: bool = True) -> list[list[tuple[str, int, int]]]:
    """Each batch's output records (word, count, timestamp), after running the batches one by one."""
    with EmbeddedTopics(str(tmp_path / name)) as topics:
        topics.create_topic("sentences", 2)
        topics.create_topic("counts", 2)
        config = {"application.id": name, "embedded.topics.dir": topics.root,
                  "checkpoint.location": str(tmp_path / f"{name}-ck"), "statestore.cache.max.bytes": cache_bytes}
        seen = [0, 0]
        per_batch = []
        with KafkaStreams(word_count(caching), config) as streams:
            streams.start()
            ts = 100
            for lines in BATCHES:
                # one input partition: one upstream task writes the wave's repartition records in one append, so
                # the counting query reads them in one batch (two tasks' appends may land in two batches)
                topics.append([ProducerRecord("sentences", 0, ts + i, None, line.encode(), ())
                               for i, line in enumerate(lines)])
                ts += 100
                streams.process_all_available()
                batch = []
                for p in range(2):
                    end = topics.end_offset("counts", p)
                    batch += [(S.deserialize("c", r.key), L.deserialize("c", r.value), r.timestamp)
                              for r in topics.read("counts", p, seen[p], end)]
                    assert all(partition_for_key(r.key, 2) == p for r in topics.read("counts", p, seen[p], end))
                    seen[p] = end
                per_batch.append(sorted(batch))
    return per_batch


def test_each_batch_emits_the_last_count_per_word(spark, tmp_path):
    cached = run(tmp_path, "cached", 10 * 1024 * 1024)
    uncached = run(tmp_path, "uncached", 0)
    totals: Counter = Counter()
    for lines, got, every in zip(BATCHES, cached, uncached):
        words = Counter(w for line in lines for w in line.split())
        totals.update(words)
        assert len(every) == sum(words.values())                   # without a cache: one update per word
        assert [(w, c) for w, c, _ in got] == sorted((w, totals[w]) for w in words)   # with it: one per word
        last = {w: (c, ts) for w, c, ts in every}                  # ...the same as the batch's last update
        assert [(w, c, ts) for w, c, ts in got] == sorted((w, *last[w]) for w in words)


def test_a_store_with_caching_disabled_emits_every_update_on_spark(spark, tmp_path):
    """The cache is on for the task (10 MiB) but off for the store: every update, as with a cache of 0 bytes."""
    assert run(tmp_path, "store-uncached", 10 * 1024 * 1024, caching=False) == run(tmp_path, "uncached", 0)


def test_a_downstream_batch_takes_a_whole_upstream_batch_from_every_upstream_task(spark, tmp_path):
    """Four input partitions: four upstream tasks write the repartition topic at different moments of their batch.
    The counting query reads it in the upstream query's whole batches (the batch end offsets the runtime records when
    a batch commits), so each wave leaves one count per word, never one from the first tasks' records and another."""
    waves = [[f"w{(i * 7 + j) % 23} w{(i * 3 + j) % 17} shared" for i in range(40)] for j in range(3)]
    with EmbeddedTopics(str(tmp_path / "whole")) as topics:
        topics.create_topic("sentences", 4)
        topics.create_topic("counts", 4)
        config = {"application.id": "whole", "embedded.topics.dir": topics.root,
                  "checkpoint.location": str(tmp_path / "whole-ck")}
        seen = [0] * 4
        totals: Counter = Counter()
        with KafkaStreams(word_count(), config) as streams:
            streams.start()
            for n, lines in enumerate(waves):
                topics.append([ProducerRecord("sentences", i % 4, 1000 * n + i, None, line.encode(), ())
                               for i, line in enumerate(lines)])
                streams.process_all_available()
                out = []
                for p in range(4):
                    end = topics.end_offset("counts", p)
                    out += [(S.deserialize("c", r.key), L.deserialize("c", r.value))
                            for r in topics.read("counts", p, seen[p], end)]
                    seen[p] = end
                totals.update(w for line in lines for w in line.split())
                assert sorted(out) == sorted((w, totals[w]) for w in {w for line in lines for w in line.split()})

"""Pipeline mode (``pipeline.mode=true``): a stateless upstream subtopology runs before the downstream query's shuffle,
in place of the repartition topic between them (``streams_on_spark.runtime.spark.pipeline``).

The README word count and two Kafka goldens' topologies whose upstream subtopology qualifies (the golden word count,
and a stream-table join whose stream is re-keyed: the downstream query also reads a topic of its own) run through ``KafkaStreams`` on 4-partition embedded topics, once in
the default shape and once in pipeline mode, in two micro-batches each, and must write the same records per output
key: the same values, timestamps and headers in the same order where each key's records come from one upstream task
(the README's sentences on each partition have words of their own; the re-keyed golden's inputs sit on their new
key's partition), and where they come from several (the golden word count), the same values in the same order, the
same headers and the same last timestamp: across upstream tasks neither Kafka nor this library orders records (a
repartition topic's partition takes the upstream tasks' writes in whatever order they come), and a count's timestamp
is the largest of its records' so far. The record cache is off
(``statestore.cache.max.bytes=0``), so what is emitted does not depend on how the default shape's two queries happen
to split the input into micro-batches. Pipeline mode creates no repartition topic, keeps the upstream tasks'
metrics, and a checkpoint refuses a switch of mode.
"""
from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import pytest

from streams_on_spark import (Consumed, Grouped, KafkaStreams, Materialized, Produced, Serdes, StreamsBuilder,
                              TopologyException)
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.partitioner import partition_for_key
from streams_on_spark.records import ProducerRecord
from streams_on_spark.metrics import TASK_GROUP, THREAD_GROUP

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
import test_kafka_reference as goldens  # noqa: E402

pytestmark = pytest.mark.spark
S, L = Serdes.String(), Serdes.Long()
N = 4


def readme_word_count(variant: str, config: dict):
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(S, S))
     .flat_map_values(str.split)
     .select_key(lambda _k, w: w)
     .group_by_key(Grouped.with_(S, S, name="by-word"))
     .count(Materialized.as_("word-counts"))
     .to_stream().to("word-counts-out", Produced.with_(S, L)))
    return builder.build(config)


# one vocabulary per partition: each word's records come from one upstream task
VOCABULARIES = [["the", "cat", "sat", "mat"], ["a", "dog", "ran", "far"], ["one", "fox", "hid"], ["end", "of", "it"]]
SENTENCES = [(p, " ".join(words[(i + j) % len(words)] for j in range(i % 3 + 2)))
             for i in range(12) for p, words in enumerate(VOCABULARIES)]


def readme_case() -> dict:
    return {"scenario": "readme", "config": {"application.id": "readme"}, "builder": readme_word_count,
            "inputs": {"sentences": {"key": "string", "value": "string"}},
            "outputs": {"word-counts-out": {"key": "string", "value": "long"}},
            # headers on partition 0 only: its upstream task's output travels as record batches, the others' as
            # Arrow columns (see pipeline.PREFIX_SCHEMA)
            "records": [("sentences", f"line-{i}", line, 1_000 + i % 7, [("n", str(i))] if p == 0 else [], p)
                        for i, (p, line) in enumerate(SENTENCES)]}


def golden_case(name: str) -> dict:
    golden = goldens.load(name)
    records = [(s["pipe"], s["key"], s["value"], s["timestamp"], s["headers"], None)
               for s in golden["steps"] if "pipe" in s]
    return {"scenario": name, "config": dict(golden["config"]),
            "builder": lambda variant, config, g=golden: goldens.BUILDERS[g["scenario"]](g["variant"], config),
            "inputs": golden["inputs"], "records": records,
            "outputs": {t: spec for t, spec in golden["outputs"].items() if not goldens.is_internal(golden, t)}}


CASES = {"readme": readme_case, **{name: (lambda n=name: golden_case(n)) for name in (
    "wordcount-uncached", "stream-table-join-joined-default")}}
# (the repartition and selectkey-optimization goldens qualify too; they re-key as the README's count does and are
# left out for the suite's time: each case is two KafkaStreams runs)


def source_partition(case: dict, topic: str, key, value, index: int, partition) -> int:
    if partition is not None:
        return partition
    if key is None:
        return index % N
    return partition_for_key(goldens.serde(case["inputs"][topic]["key"]).serialize(topic, key), N)


def run(spark, case: dict, mode: bool, root: Path) -> dict:
    """Run the case's topology through KafkaStreams (two batches); its output per topic and key, the topics that
    exist, the metrics."""
    topics = EmbeddedTopics(str(root / "topics"))
    for topic in [*case["inputs"], *case["outputs"]]:
        topics.create_topic(topic, N)
    records = []
    for i, (topic, key, value, timestamp, headers, partition) in enumerate(case["records"]):
        spec = case["inputs"][topic]
        kb = None if key is None else goldens.serde(spec["key"]).serialize(topic, key)
        vb = None if value is None else goldens.serde(spec["value"]).serialize(topic, value)
        records.append(ProducerRecord(topic, source_partition(case, topic, key, value, i, partition), timestamp, kb, vb,
                                      tuple((k, None if v is None else v.encode()) for k, v in headers)))
    config = {**case["config"], "embedded.topics.dir": topics.root, "checkpoint.location": str(root / "ck"),
              "statestore.cache.max.bytes": 0, "pipeline.mode": mode}
    half = len(records) // 2
    with KafkaStreams(case["builder"](None, dict(case["config"])), config, spark) as streams:
        streams.start()
        topics.append(records[:half])
        streams.process_all_available()
        topics.append(records[half:])
        streams.process_all_available()
        metrics = streams.metrics()
        queries = len(streams._runtime.queries)
        # the downstream tasks' positions in the repartition topic (kept in their state): records received per
        # partition, in either shape
        downstream = max(streams._runtime.functions)
        positions = {(t, p): task.next_offset(t, p) for p, task in streams.read_tasks(downstream).items()
                     for t in task.spec.repartition_source_topics} if case["scenario"] == "readme" else {}
    out: dict = {}
    for topic, spec in case["outputs"].items():
        per_key = defaultdict(list)
        kd, vd = goldens.serde(spec["key"]), goldens.serde(spec["value"])
        for p, end in enumerate(topics.end_offsets(topic)):
            for r in topics.read(topic, p, 0, end):
                key = None if r.key is None else kd.deserialize(topic, r.key)
                per_key[repr(key)].append((None if r.value is None else vd.deserialize(topic, r.value), r.timestamp,
                                           tuple(r.headers)))
        out[topic] = dict(per_key)
    return {"outputs": out, "topics": set(topics.topics()), "metrics": metrics, "inputs": len(records),
            "config": config, "queries": queries, "positions": positions}


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """Every case in both shapes, once, in the suite's Spark session."""
    from streams_on_spark.runtime.spark.user_code import pickle_by_value
    pickle_by_value(goldens)   # its topologies' functions run on Spark's workers
    results = {}
    for name, make in CASES.items():
        case = make()
        results[name] = {mode: run(spark, case, mode, tmp_path_factory.mktemp(f"{name}-{mode}")) for mode in (False, True)}
        results[name]["case"] = case
    return results


@pytest.mark.parametrize("name", list(CASES))
def test_pipeline_mode_writes_what_the_default_shape_writes(runs, name):
    default, pipeline = runs[name][False], runs[name][True]
    assert any(default["outputs"][t] for t in default["outputs"]), "the case produced nothing"
    assert pipeline["queries"] == default["queries"] - 1   # the upstream subtopology runs in the downstream's query
    if name in ACROSS_TASKS:   # a key's records from several upstream tasks: their interleaving may differ
        assert across_tasks(pipeline["outputs"]) == across_tasks(default["outputs"])
    else:
        assert pipeline["outputs"] == default["outputs"]


ACROSS_TASKS = {"wordcount-uncached"}


def across_tasks(outputs: dict) -> dict:
    """Per topic and key: the values in order, the headers in any order, and the last timestamp (a count's timestamp
    is the largest of its records' so far, so the ones before the last depend on the interleaving)."""
    return {topic: {key: ([r[0] for r in records], sorted(r[2] for r in records), records[-1][1])
                    for key, records in keys.items()} for topic, keys in outputs.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_pipeline_mode_creates_no_repartition_topic(runs, name):
    app = runs[name]["case"]["config"]["application.id"]
    repartition = {t for t in runs[name][False]["topics"] if t.startswith(app + "-") and t.endswith("-repartition")}
    assert repartition, "the default shape has a repartition topic"
    assert not {t for t in runs[name][True]["topics"] if t in repartition}


def test_the_downstream_tasks_keep_their_positions_in_the_replaced_topic(runs):
    """A downstream task numbers the records of its virtual repartition partition on from its saved position: after
    two micro-batches, as many as the partition received (what the topic's end offset is in the default shape)."""
    assert runs["readme"][True]["queries"] == 1   # one query: the count's tasks read no repartition topic
    default, pipeline = runs["readme"][False]["positions"], runs["readme"][True]["positions"]
    assert sum(pipeline.values()) == sum(len(s.split()) for _, s in SENTENCES)
    assert pipeline == default


def test_pipeline_mode_keeps_the_upstream_tasks_metrics(runs):
    result = runs["readme"][True]
    assert result["queries"] == 1   # the upstream tasks ran in the downstream's query, before its shuffle
    metrics = result["metrics"]
    per_task = {m.tags["task-id"]: v for m, v in metrics.find("process-total", TASK_GROUP).items()}
    assert sum(v for t, v in per_task.items() if t.startswith("0_")) == len(SENTENCES)
    assert sorted(t for t in per_task if t.startswith("0_")) == [f"0_{p}" for p in range(N)]
    words = sum(len(s.split()) for _, s in SENTENCES)
    assert sum(v for t, v in per_task.items() if t.startswith("1_")) == words
    threads = {m.tags["thread-id"]: v for m, v in metrics.find("process-total", THREAD_GROUP).items()}
    assert sorted(threads.values()) == sorted([len(SENTENCES), words])


@pytest.mark.parametrize("mode", [False, True])
def test_switching_pipeline_mode_on_a_checkpoint_is_refused(spark, runs, mode):
    """A checkpoint written in one shape refuses the other (its queries read other topics), before anything runs,
    even with upgrade.allow.unsafe; the same shape resumes."""
    case = runs["readme"]["case"]
    config = dict(runs["readme"][mode]["config"])
    switched = {**config, "pipeline.mode": not mode, "upgrade.allow.unsafe": True}
    streams = KafkaStreams(case["builder"](None, dict(case["config"])), switched, spark)
    with pytest.raises(TopologyException, match="pipeline") as refused:
        streams.start()
    assert "reset" in str(refused.value) and "by-word-repartition" in str(refused.value)
    streams.close()

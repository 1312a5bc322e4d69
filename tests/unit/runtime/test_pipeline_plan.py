"""Pipeline mode's plan (which upstream subtopologies run before which query's shuffle) and the checkpoint's refusal
of a switch of mode; tests/integration/spark/test_pipeline_mode.py runs the mode on Spark."""
from __future__ import annotations

import pytest

from streams_on_spark import (Consumed, Grouped, Materialized, Produced, Serdes, StreamsBuilder, TopologyException)
from streams_on_spark.checkpoint_manifest import CheckpointManifest, plan_restart
from streams_on_spark.config import StreamsConfig, TaskConfig
from streams_on_spark.runtime.spark.pipeline import Pipeline, plan_pipelines
from streams_on_spark.topology.partitions import TopicLayout, resolve_partition_counts

S, L = Serdes.String(), Serdes.Long()


def word_count(extra=None, **config):
    builder = StreamsBuilder()
    words = builder.stream("sentences", Consumed.with_(S, S)).flat_map_values(str.split)
    if extra is not None:
        words = extra(words)
    (words.group_by(lambda _k, w: w, Grouped.with_(S, S, name="by-word")).count(Materialized.as_("word-counts"))
     .to_stream().to("out", Produced.with_(S, L)))
    return builder.build(config)


def plan(topology, **config):
    builder = topology.internal_builder
    builder.application_id = "app"
    counts = resolve_partition_counts(builder, {}, default_unknown=4)
    return plan_pipelines(builder, TaskConfig.from_config({"application.id": "app", **config}),
                          TopicLayout.of(builder, "app", counts))


def test_a_stateless_upstream_feeding_one_repartition_topic_is_fused():
    assert plan(word_count()) == [Pipeline(1, (0,), ("app-by-word-repartition",))]


@pytest.mark.parametrize("why, topology, config", [
    ("a sink to a user topic", lambda: word_count(_copy), {}),
    ("a store in the upstream", lambda: word_count(_with_count), {}),
    ("the batch fast path off", word_count, {"batch.fast.path": False}),
    ("a dead letter queue", word_count, {"errors.dead.letter.queue.topic.name": "dlq"}),
])
def test_what_keeps_the_default_shape(why, topology, config):
    assert plan(topology(), **config) == [], why


def _with_count(stream):
    stream.group_by_key().count()   # the same subtopology gets a store (no key change before it)
    return stream


def _copy(stream):
    stream.to("copy")   # a sink to a user topic beside the repartition topic
    return stream


def test_an_upstream_with_two_source_topics_keeps_the_default_shape():
    builder = StreamsBuilder()
    merged = builder.stream("a", Consumed.with_(S, S)).merge(builder.stream("b", Consumed.with_(S, S)))
    merged.group_by(lambda _k, v: v, Grouped.with_(S, S, name="g")).count().to_stream().to("out",
                                                                                          Produced.with_(S, L))
    assert plan(builder.build()) == []


def manifest(pipelined=()):
    return plan_restart(None, word_count().describe(), {"sentences": 4}, StreamsConfig({"application.id": "app"}), 3,
                        pipelined=pipelined)


@pytest.mark.parametrize("before, after", [((), ("app-by-word-repartition",)), (("app-by-word-repartition",), ())])
def test_a_checkpoint_refuses_a_switch_of_pipeline_mode(before, after):
    previous = manifest(before)
    assert previous.pipelined == tuple(before)
    assert CheckpointManifest.from_json(previous.to_json(), "here") == previous
    config = StreamsConfig({"application.id": "app", "pipeline.mode": bool(after), "upgrade.allow.unsafe": True})
    with pytest.raises(TopologyException, match="pipeline") as refused:
        plan_restart(previous, word_count().describe(), {"sentences": 4}, config, 3, pipelined=after)
    assert "app-by-word-repartition" in str(refused.value) and "reset" in str(refused.value)
    same = plan_restart(previous, word_count().describe(), {"sentences": 4}, config, 3, pipelined=before)
    assert same.pipelined == tuple(before)


def test_a_manifest_written_before_pipeline_mode_reads_as_default_shape():
    text = manifest().to_json().replace('"pipelined": [],', "")
    assert '"pipelined"' not in text
    assert CheckpointManifest.from_json(text, "old").pipelined == ()

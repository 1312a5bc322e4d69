"""``TopicLayout``: computed once from the topology and the topics' partition counts, read-only, picklable."""
from __future__ import annotations

import pickle

import pytest

from streams_on_spark import Grouped, Serdes, StreamsBuilder
from streams_on_spark.topology.partitions import TopicLayout, resolve_partition_counts


def _word_count_builder():
    builder = StreamsBuilder()
    (builder.stream("sentences").flat_map_values(str.split).select_key(lambda _k, w: w)
     .group_by_key(Grouped.with_(Serdes.String(), Serdes.String(), name="by-word")).count().to_stream().to("out"))
    internal = builder.build().internal_builder
    internal.application_id = "app"
    return internal


def test_tasks_per_subtopology_follow_the_partition_counts():
    builder = _word_count_builder()
    layout = TopicLayout.of(builder, "app", {**resolve_partition_counts(builder, {"sentences": 3}), "out": 5})
    assert dict(layout.tasks) == {0: 3, 1: 3}
    assert layout.partitions["app-by-word-repartition"] == 3
    assert layout.partitions_of("out") == 5 and layout.partitions_of("unknown") == 1


def test_a_layout_is_read_only_and_survives_pickling_for_executors():
    builder = _word_count_builder()
    layout = TopicLayout.of(builder, "app", resolve_partition_counts(builder, {"sentences": 2}))
    with pytest.raises(TypeError):
        layout.partitions["sentences"] = 9  # type: ignore[index]
    copy = pickle.loads(pickle.dumps(layout))
    assert copy == layout and dict(copy.tasks) == {0: 2, 1: 2}

"""The one topic planner (``runtime/spark/topics.py``): an application's topics over those that exist, the test
driver's from its declared counts; missing topics created through the connector, the layout fixed once."""
from __future__ import annotations

import logging

import pytest

from streams_on_spark import Grouped, Produced, Serdes, StreamsBuilder, TopologyException
from streams_on_spark.config import TaskConfig
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.runtime.spark.topics import TopicPlanner

S = Serdes.String()
REPARTITION = "app-by-word-repartition"


def word_count():
    builder = StreamsBuilder()
    (builder.stream("lines").flat_map_values(str.split).group_by(lambda k, w: w, Grouped.as_("by-word"))
     .count().to_stream().to("counts", Produced.with_(S, Serdes.Long())))
    return builder.build().internal_builder


class TopicAdmin:
    """The connector's topic administration over embedded topics (no Spark), recording the repartition topics."""

    def __init__(self, topics: EmbeddedTopics) -> None:
        self.topics, self.repartition = topics, []

    def partitions(self, topic: str) -> int:
        return self.topics.partitions(topic)

    def create_topic(self, topic: str, partitions: int) -> None:
        self.topics.create_topic(topic, partitions)

    def create_repartition_topic(self, topic: str, partitions: int) -> None:
        self.repartition.append(topic)
        self.topics.create_topic(topic, partitions)


@pytest.fixture
def embedded():
    topics = EmbeddedTopics()
    yield topics
    topics.close()


def test_an_application_creates_its_repartition_and_missing_output_topics(embedded, caplog):
    embedded.create_topic("lines", 3)
    planner = TopicPlanner.for_application(word_count(), TaskConfig("app"), embedded.topics())
    assert dict(planner.counts) == {"lines": 3, REPARTITION: 3}
    assert planner.read_partitions() == {"lines": 3, "by-word-repartition": 3}   # describe()'s names
    admin = TopicAdmin(embedded)
    with caplog.at_level(logging.WARNING, "streams_on_spark.runtime.spark.topics"):
        layout = planner.create(admin)
    assert admin.repartition == [REPARTITION]
    assert embedded.topics() == {"lines": 3, REPARTITION: 3, "counts": 1}
    assert dict(layout.partitions) == {"lines": 3, REPARTITION: 3, "counts": 1} and dict(layout.tasks) == {0: 3, 1: 3}
    assert "sink topic counts does not exist; creating it with 1 partition" in caplog.text


def test_an_application_reads_an_existing_output_topics_count_and_skips_pipelined_topics(embedded):
    embedded.create_topic("lines", 2)
    embedded.create_topic("counts", 5)
    planner = TopicPlanner.for_application(word_count(), TaskConfig("app"), embedded.topics())
    layout = planner.create(TopicAdmin(embedded), skip={REPARTITION})
    assert REPARTITION not in embedded.topics() and layout.partitions["counts"] == 5


def test_an_application_refuses_missing_sources_and_a_repartition_topic_of_another_count(embedded):
    with pytest.raises(TopologyException, match=r"source topics \['lines'\] do not exist \(application app\)"):
        TopicPlanner.for_application(word_count(), TaskConfig("app"), {})
    embedded.create_topic("lines", 2)
    embedded.create_topic(REPARTITION, 4)
    planner = TopicPlanner.for_application(word_count(), TaskConfig("app"), embedded.topics())
    with pytest.raises(TopologyException, match=f"repartition topic {REPARTITION} exists with 4 partitions, but "
                                                 "the topology needs 2"):
        planner.create(TopicAdmin(embedded))


@pytest.mark.parametrize("multi_partition, expected", [
    (True, {"lines": 4, REPARTITION: 4, "counts": 2}),
    (False, {"lines": 1, REPARTITION: 1, "counts": 1}),   # Kafka's driver: one task, every topic one partition
])
def test_the_driver_creates_every_topic_from_its_declared_counts(embedded, multi_partition, expected):
    planner = TopicPlanner.for_driver(word_count(), TaskConfig("app"), {"lines": 4, "counts": 2}, multi_partition)
    layout = planner.create(TopicAdmin(embedded))
    assert embedded.topics() == expected and dict(layout.partitions) == expected
    assert not layout.known_topics_only


def test_the_driver_gives_an_undeclared_output_topic_one_partition(embedded):
    planner = TopicPlanner.for_driver(word_count(), TaskConfig("app"), {"lines": 4}, True)
    assert planner.create(TopicAdmin(embedded)).partitions["counts"] == 1 and embedded.topics()["counts"] == 1

"""The one topic planner of a topology run on Spark: an application's (``KafkaStreams``) and the test driver's.

Planning has two steps, as Kafka's ``RepartitionTopics`` then ``InternalTopicManager``: the partition counts are
resolved before anything runs (the checkpoint check and pipeline mode read them), then the topics that do not exist
are created through the connector and the :class:`~streams_on_spark.topology.partitions.TopicLayout` every part of
the runtime reads is fixed.
"""
from __future__ import annotations

import logging
from types import MappingProxyType
from typing import Any, Collection, Mapping, Optional

from streams_on_spark.config import TaskConfig
from streams_on_spark.errors import TopologyException
from streams_on_spark.topology.builder import InternalTopologyBuilder
from streams_on_spark.topology.partitions import TopicLayout, driver_partition_counts, resolve_partition_counts

log = logging.getLogger(__name__)


class TopicPlanner:
    """A topology's topics: ``counts`` (decorated topic -> partitions) resolved at construction, :meth:`create`
    making what is missing. Built by :meth:`for_application` (over the topics that exist) or :meth:`for_driver`."""

    def __init__(self, builder: InternalTopologyBuilder, config: TaskConfig, counts: Mapping[str, int],
                 existing: Mapping[str, int], output_partitions: Optional[Mapping[str, int]]) -> None:
        self.builder, self.config = builder, config
        self.counts: Mapping[str, int] = MappingProxyType(dict(counts))
        self.existing: Mapping[str, int] = MappingProxyType(dict(existing))
        # the test driver's declared counts of output topics; None: an application's (a missing one gets 1, warned)
        self.output_partitions = output_partitions

    @classmethod
    def for_application(cls, builder: InternalTopologyBuilder, config: TaskConfig,
                        existing: Mapping[str, int]) -> "TopicPlanner":
        """An application's topics over ``existing`` (topic -> partitions, as its connector lists them): every
        source topic must exist; repartition topics take their writers' counts."""
        builder.application_id = config.application_id
        missing = [t for t in builder.source_topics() if t not in existing]
        if missing:
            raise TopologyException(f"source topics {missing} do not exist (application {config.application_id}); "
                                    "create them before starting")
        return cls(builder, config, resolve_partition_counts(builder, existing), existing, None)

    @classmethod
    def for_driver(cls, builder: InternalTopologyBuilder, config: TaskConfig, declared: Mapping[str, int],
                   multi_partition: bool) -> "TopicPlanner":
        """The test driver's topics (none exist yet): the declared counts, one partition each in single-partition
        mode (Kafka's driver), output topics as declared else one partition."""
        builder.application_id = config.application_id
        return cls(builder, config, driver_partition_counts(builder, declared, multi_partition), {}, declared)

    def layout(self) -> TopicLayout:
        """The layout of the resolved counts alone (before :meth:`create`; pipeline mode plans with it)."""
        return TopicLayout.of(self.builder, self.config.application_id, self.counts)

    def read_partitions(self) -> dict[str, int]:
        """The partition count of every topic the topology reads (source and repartition topics, by the names
        ``describe()`` shows), as the checkpoint manifest records them."""
        builder = self.builder
        decorated = {t: builder.decorate_topic(t) for t in [*builder.source_topics(), *builder.internal_topics]}
        return {t: self.counts[d] for t, d in decorated.items() if d in self.counts}

    def create(self, connector: Any, skip: Collection[str] = ()) -> TopicLayout:
        """Create through ``connector`` the topics that do not exist (``skip``: repartition topics pipeline mode
        replaces by Spark's shuffle) and return the layout the runtime runs over."""
        builder, existing, counts = self.builder, self.existing, dict(self.counts)
        created: set[str] = set()
        for topic in builder.internal_topics:
            decorated = builder.decorate_topic(topic)
            if decorated in skip:
                continue
            want = counts[decorated]
            if decorated in existing and existing[decorated] != want:
                raise TopologyException(f"repartition topic {decorated} exists with {existing[decorated]} "
                                        f"partitions, but the topology needs {want}")
            connector.create_repartition_topic(decorated, want)
            created.add(decorated)
        application = self.output_partitions is None
        for topic in builder.output_topics(self.config.dead_letter_queue_topic):
            if topic in counts:
                continue
            if topic not in existing:
                n = 1 if application else self.output_partitions.get(topic, 1)   # type: ignore[union-attr]
                if application:
                    log.warning("sink topic %s does not exist; creating it with 1 partition", topic)
                connector.create_topic(topic, n)
                created.add(topic)
            counts[topic] = connector.partitions(topic)
        if not application:   # the test driver's source, global and declared topics
            for topic, n in counts.items():
                if topic not in created:
                    connector.create_topic(topic, n)
        dynamic = application and builder.has_topic_name_extractors()
        if dynamic:   # a TopicNameExtractor may route to any topic that exists now; another is an UnknownTopicException
            for topic, n in existing.items():
                counts.setdefault(topic, n)
        return TopicLayout.of(builder, self.config.application_id, counts, known_topics_only=dynamic)

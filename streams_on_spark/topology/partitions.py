"""Partition counts of repartition topics and copartition enforcement, as Kafka does at assignment time.

Engines call :func:`resolve_partition_counts` before creating tasks, so a mismatch is a clear
``TopologyException`` when the driver is built or the runtime starts, never halfway through a run.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from streams_on_spark.errors import TopologyException, UnknownTopicException
from streams_on_spark.topology.builder import InternalTopologyBuilder, SinkNodeSpec, SubtopologySpec

log = logging.getLogger(__name__)


def resolve_partition_counts(builder: InternalTopologyBuilder, known: Mapping[str, int],
                             default_unknown: int | None = None) -> dict[str, int]:
    """Partition count of every topic the topology touches, keyed by decorated name.

    ``known`` holds the counts of external topics (decorated names). A source topic missing from it gets
    ``default_unknown`` if given, else a ``TopologyException`` names it. Repartition topics take their explicit
    count, else the max over the writing subtopologies' source topics (iterated to a fixed point, as
    ``RepartitionTopics`` does), then copartition groups are enforced (``CopartitionedTopicsEnforcer``).
    """
    counts: dict[str, int] = {}
    subtopologies = builder.subtopologies()
    internal = {builder.decorate_topic(t): spec for t, spec in builder.internal_topics.items()}
    for sub in subtopologies:
        for topic in sub.source_topics:
            if topic in internal:
                continue
            if topic in known:
                counts[topic] = known[topic]
            elif default_unknown is not None:
                counts[topic] = default_unknown
            else:
                raise TopologyException(f"Source topic {topic} does not exist; cannot determine its partition count")
    for topic in builder.global_topics:
        counts[topic] = known.get(topic, default_unknown or 1)
    enforced = {t for t, spec in internal.items() if spec.number_of_partitions is not None}
    for topic, spec in internal.items():
        if spec.number_of_partitions is not None:
            counts[topic] = spec.number_of_partitions
    pending = [t for t in internal if t not in counts]
    while pending:
        progressed = False
        for topic in list(pending):
            best = None
            for sub in subtopologies:
                if topic not in sub.sink_topics:
                    continue
                for source in sub.source_topics:
                    if source in counts:
                        best = counts[source] if best is None else max(best, counts[source])
            if best is not None:
                counts[topic] = best
                pending.remove(topic)
                progressed = True
        if not progressed:
            raise TopologyException(f"Unable to determine the number of partitions of repartition topics {pending}: "
                                    "no writing subtopology has a source topic with a known partition count")
    for group in builder.copartition_topic_groups():
        _enforce_copartition([builder.decorate_topic(t) for t in group], internal, enforced, counts)
    for sub in subtopologies:
        for node in sub.nodes:
            if isinstance(node, SinkNodeSpec) and node.topic is not None:
                decorated = builder.decorate_topic(node.topic)
                if decorated not in counts and decorated in known:
                    counts[decorated] = known[decorated]
    return counts


def driver_partition_counts(builder: InternalTopologyBuilder, declared: Mapping[str, int],
                            multi_partition: bool) -> dict[str, int]:
    """The test driver's partition counts: resolved in multi-partition mode, else one per topic.

    Kafka's driver runs a topology as one task ``0_0`` whatever counts the topology sets itself
    (``Repartitioned.with_number_of_partitions``), so single-partition mode gives every topic one partition.
    """
    counts = resolve_partition_counts(builder, declared, default_unknown=1)
    for topic, n in declared.items():
        counts.setdefault(topic, n)
    return counts if multi_partition else dict.fromkeys(counts, 1)


def driver_subtopologies(builder: InternalTopologyBuilder, multi_partition: bool) -> list[SubtopologySpec]:
    """What the test driver runs as tasks: each subtopology in multi-partition mode; in single-partition mode every
    subtopology as one, task ``0_0`` with one stream time, as Kafka's driver runs a topology."""
    subtopologies = builder.subtopologies()
    if multi_partition or len(subtopologies) < 2:
        return subtopologies
    merged = SubtopologySpec(0, [], {}, [], [], [])
    for sub in subtopologies:
        merged.nodes.extend(sub.nodes)
        merged.source_topics.update(sub.source_topics)
        merged.sink_topics.extend(t for t in sub.sink_topics if t not in merged.sink_topics)
        merged.store_names.extend(s for s in sub.store_names if s not in merged.store_names)
        merged.repartition_source_topics.extend(sub.repartition_source_topics)
    return [merged]


def feeds_back(subtopologies: list[SubtopologySpec]) -> bool:
    """Whether some subtopology's output comes back to its own input (a cycle of topics between subtopologies, as a
    foreign-key join's subscription and response topics make)."""
    readers: dict[str, set[int]] = {}
    for sub in subtopologies:
        for topic in sub.source_topics:
            readers.setdefault(topic, set()).add(sub.id)
    downstream = {sub.id: {r for t in sub.sink_topics for r in readers.get(t, ())} for sub in subtopologies}
    for start in downstream:
        seen, frontier = set(), set(downstream[start])
        while frontier:
            if start in frontier:
                return True
            seen |= frontier
            frontier = {d for s in frontier for d in downstream[s]} - seen
    return False


def _enforce_copartition(group: list[str], internal: Mapping[str, object], enforced: set[str],
                         counts: dict[str, int]) -> None:
    if not group:
        return
    repartition = [t for t in group if t in internal]
    external = {t: counts[t] for t in group if t not in internal}
    if not external:
        fixed = [t for t in repartition if t in enforced]
        if fixed:
            target = counts[fixed[0]]
            if any(counts[t] != target for t in fixed):
                detail = ", ".join(f"{t}={counts[t]}" for t in sorted(repartition))
                raise TopologyException(f"Following topics do not have the same number of partitions: [{{{detail}}}]")
        else:
            target = max(counts[t] for t in repartition)
    else:
        values = set(external.values())
        if len(values) > 1:
            detail = ", ".join(f"{t}={external[t]}" for t in sorted(external))
            raise TopologyException(f"Topics not co-partitioned: [{{{detail}}}]")
        target = values.pop()
    for topic in repartition:
        if topic not in enforced:
            counts[topic] = target
        elif counts[topic] != target:
            raise TopologyException(f"Number of partitions [{counts[topic]}] of repartition topic [{topic}] "
                                    f"doesn't match number of partitions [{target}] of the source topic.")


def task_partitions(source_topics: list[str], counts: Mapping[str, int]) -> int:
    """Tasks of a subtopology: the max partition count over its source topics (Kafka's partition grouper)."""
    return max(counts[t] for t in source_topics)




@dataclass(frozen=True)
class TopicLayout:
    """Where a running topology's records live, computed once before it runs and passed down to every engine part:
    the application id (which decorates internal topics), every topic's partition count and each subtopology's
    task count. Read-only, so a runtime never patches what another computed."""

    application_id: str
    partitions: Mapping[str, int]
    tasks: Mapping[int, int]
    # a topic the layout does not know does not exist (an application's: an UnknownTopicException), rather than
    # having one partition (the test driver's, which accepts any topic as Kafka's does)
    known_topics_only: bool = False

    @classmethod
    def of(cls, builder: InternalTopologyBuilder, application_id: str, counts: Mapping[str, int],
           known_topics_only: bool = False) -> "TopicLayout":
        """The layout of ``builder``'s subtopologies over topics with partition ``counts`` (decorated names)."""
        counts = dict(counts)
        tasks = {sub.id: task_partitions(sorted(sub.source_topics), counts) for sub in builder.subtopologies()}
        return cls(application_id, MappingProxyType(counts), MappingProxyType(tasks), known_topics_only)

    def partitions_of(self, topic: str) -> int:
        """Partitions of ``topic``: 1 for a topic the layout does not know (a single-partition output topic), or an
        ``UnknownTopicException`` naming it where the layout knows every topic that exists."""
        n = self.partitions.get(topic)
        if n is not None:
            return n
        if self.known_topics_only:
            raise UnknownTopicException(
                f"Topic {topic} not present in metadata: a record was sent to topic {topic}, which did not exist when "
                f"application {self.application_id} started (a TopicNameExtractor's topics must be created first)")
        return 1

    def __reduce__(self) -> tuple[Any, tuple]:
        """Pickled for executors as plain dicts (mapping proxies do not pickle)."""
        return (TopicLayout._restore, (self.application_id, dict(self.partitions), dict(self.tasks),
                                       self.known_topics_only))

    @staticmethod
    def _restore(application_id: str, partitions: dict[str, int], tasks: dict[int, int],
                 known_topics_only: bool = False) -> "TopicLayout":
        return TopicLayout(application_id, MappingProxyType(partitions), MappingProxyType(tasks), known_topics_only)


__all__ = ["driver_partition_counts", "resolve_partition_counts", "task_partitions", "TopicLayout"]

"""Kafka's application reset tool for this runtime: start an application over from its input's beginning.

Kafka's ``kafka-streams-application-reset`` deletes the application's internal topics and resets its consumer group
to the input's start; local state goes with ``KafkaStreams.cleanUp()``. Here source positions and task state both
live in the queries' checkpoints, so a reset deletes:

- the internal topics (``<application.id>-...-repartition``, ``-changelog`` and the foreign-key join topics), in Kafka
  or in the embedded topics;
- the checkpoint location (``checkpoint.location``, or the default ``KafkaStreams`` uses), so every query starts at
  the earliest offsets with empty stores;
- on Kafka, the consumer group ``application.id`` (what ``exactly_once_v2`` commits positions and batch markers to).

Stop the application first. ``dry_run=True`` only lists what would go. A reset is idempotent: what is already gone
(or never existed, as on a cluster where the application never ran) is skipped, and a second reset succeeds too.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from streams_on_spark.config import (
    APPLICATION_ID,
    BOOTSTRAP_SERVERS,
    DEFAULT_API_TIMEOUT_MS,
    EMBEDDED_TOPICS_DIR,
    StreamsConfig,
)
from streams_on_spark.kafka_streams import checkpoint_location, client_config
from streams_on_spark.runtime.spark.checkpoints import CheckpointLocation

log = logging.getLogger(__name__)

# Kafka's StreamsResetter.isInternalTopic
INTERNAL_TOPIC_SUFFIXES = ("-changelog", "-repartition", "-subscription-registration-topic",
                           "-subscription-response-topic")


def is_internal_topic(application_id: str, topic: str) -> bool:
    """Whether ``topic`` is one of ``application_id``'s internal topics (Kafka's rule: prefix and suffix)."""
    return topic.startswith(application_id + "-") and topic.endswith(INTERNAL_TOPIC_SUFFIXES)


@dataclass(frozen=True)
class ResetResult:
    """What a reset deleted (or, in a dry run, would delete)."""

    application_id: str
    internal_topics: tuple[str, ...]
    checkpoint_location: Optional[str]      # None: there was none
    consumer_group: Optional[str]           # None: not on Kafka, or no such group
    dry_run: bool

    def __str__(self) -> str:
        verb = "would delete" if self.dry_run else "deleted"
        lines = [f"application {self.application_id}: {verb}"]
        lines += [f"  internal topic {t}" for t in self.internal_topics] or ["  no internal topics"]
        lines.append(f"  checkpoints {self.checkpoint_location}" if self.checkpoint_location else "  no checkpoints")
        if self.consumer_group:
            lines.append(f"  consumer group {self.consumer_group}")
        return "\n".join(lines)


def reset_application(config: Mapping[str, Any], *, dry_run: bool = False) -> ResetResult:
    """Reset the application ``config`` describes (as given to ``KafkaStreams``): its internal topics, checkpoints
    and, on Kafka, consumer group; ``dry_run`` lists them and deletes nothing."""
    application_id = config.get(APPLICATION_ID)
    if not isinstance(application_id, str) or not application_id:
        raise ValueError(f"Missing required configuration '{APPLICATION_ID}'")
    location = CheckpointLocation(checkpoint_location(config))
    has_checkpoints = location.may_exist()
    bootstrap = config.get(BOOTSTRAP_SERVERS)
    if bootstrap:
        from streams_on_spark.connectors.kafka import KafkaConnector
        from streams_on_spark.connectors.kafka_config import bootstrap_string
        streams_config = StreamsConfig(config)
        streams_config.check_embedded_only_keys()   # Kafka's topics or embedded ones, as KafkaStreams decides
        with KafkaConnector(bootstrap_string(bootstrap), client_config(config),
                            timeout_ms=streams_config.get(DEFAULT_API_TIMEOUT_MS)) as kafka:
            topics = tuple(sorted(t for t in kafka.topics() if is_internal_topic(application_id, t)))
            # only a group that exists is deleted: on a cluster where the application never ran there is none, and
            # asking for its coordinator there would fail (a new cluster has no __consumer_offsets yet)
            group = application_id if application_id in kafka.consumer_groups() else None
            if not dry_run:
                kafka.delete_topics(list(topics))
                if group is not None and not kafka.delete_consumer_group(group):
                    group = None   # gone meanwhile
    else:
        from streams_on_spark.connectors.embedded import EmbeddedTopics
        embedded = EmbeddedTopics(config.get(EMBEDDED_TOPICS_DIR))
        topics = tuple(sorted(t for t in embedded.topics() if is_internal_topic(application_id, t)))
        group = None
        if not dry_run:
            for topic in topics:
                embedded.delete_topic(topic)
    if has_checkpoints and not dry_run:
        location.delete(_active_session(location) if location.is_remote else None)
    result = ResetResult(application_id, topics, location.path if has_checkpoints else None, group, dry_run)
    log.info("%s", result)
    return result


def _active_session(location: CheckpointLocation) -> Any:
    """The active SparkSession a remote checkpoint location is deleted through (hdfs://, s3a://)."""
    from pyspark.sql import SparkSession
    spark = SparkSession.getActiveSession()
    if spark is None:
        raise ValueError(f"checkpoint.location {location} is remote: reset it from a Spark application (an active "
                         "SparkSession), or delete it with your file system's tools")
    return spark

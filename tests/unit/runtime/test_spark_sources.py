"""The Spark runtime reads topics through the sources it owns (runtime/spark/sources.py): a connector names one and
gives its options; one the runtime has not is refused by name, before Spark is asked."""
from __future__ import annotations

import pytest

from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.connectors.embedded_connector import EmbeddedTopicsConnector
from streams_on_spark.errors import StreamsException
from streams_on_spark.runtime.spark.sources import EMBEDDED_TOPICS, read_topics


class OtherConnector(EmbeddedTopicsConnector):
    """A connector whose topics only a source the runtime does not have reads."""

    def reader_options(self, topics, whole_batches=()):
        return "parquet", {"path": "/nowhere"}


class NoSpark:
    """A session the refusal must not reach."""

    def __getattr__(self, name):
        raise AssertionError(f"Spark was asked for {name}")


def test_a_connector_names_the_runtimes_embedded_source_and_needs_no_session(tmp_path):
    with EmbeddedTopics(str(tmp_path / "topics")) as topics:
        fmt, options = EmbeddedTopicsConnector(topics).reader_options(["a", "b"], whole_batches=["b"])
    assert fmt == EMBEDDED_TOPICS
    assert options == {"path": topics.root, "topics": "a,b", "layout": "batches", "wholeBatches": "b"}


def test_a_source_the_runtime_does_not_have_is_refused_by_name(tmp_path):
    with EmbeddedTopics(str(tmp_path / "topics")) as topics:
        with pytest.raises(StreamsException, match=r"OtherConnector reads its topics through the Spark source "
                                                   r"'parquet': the Spark runtime reads topics through "
                                                   r"'embedded-topics' or 'kafka' only"):
            read_topics(NoSpark(), OtherConnector(topics), ["a"])


class RecordingSpark:
    """A classic session of 3 cores whose reader records its options (no JVM)."""

    class sparkContext:
        defaultParallelism = 3

    def __init__(self):
        self.options = {}
        self.dataSource = self   # register() calls spark.dataSource.register(...)
        self.readStream = self

    def register(self, _source):
        pass

    def format(self, _fmt):
        return self

    def option(self, key, value):
        self.options[key] = value
        return self

    def load(self):
        return "frame"


def test_embedded_topics_are_read_by_at_most_as_many_tasks_as_the_application_has_cores(tmp_path):
    spark = RecordingSpark()
    with EmbeddedTopics(str(tmp_path / "topics")) as topics:
        assert read_topics(spark, EmbeddedTopicsConnector(topics), ["a"]) == "frame"
    assert spark.options["maxPartitions"] == "3"

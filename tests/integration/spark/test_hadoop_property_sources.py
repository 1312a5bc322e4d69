"""A runtime drops the session's record of where each Hadoop property came from (``forget_hadoop_property_sources``):
every micro-batch of a stateful query broadcasts a copy of the session's Hadoop configuration, and writing each
property's sources was most of that copy's cost. The properties' values stay as they were."""
from __future__ import annotations

import pytest

from streams_on_spark import Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.records import ProducerRecord
from streams_on_spark.runtime.spark.session import forget_hadoop_property_sources

pytestmark = pytest.mark.spark
S = Serdes.String()
DEFAULTS = ("fs.defaultFS", "io.file.buffer.size", "hadoop.tmp.dir")   # from core-default.xml


def written_bytes(spark, conf) -> int:
    """The bytes ``Configuration.write`` gives for ``conf`` (what a broadcast of it serializes)."""
    jvm = spark.sparkContext._jvm
    buffer = jvm.java.io.ByteArrayOutputStream()
    conf.write(jvm.java.io.DataOutputStream(buffer))
    return buffer.size()


def test_the_session_configuration_keeps_its_values_without_their_sources(spark):
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    fresh = jvm.org.apache.hadoop.conf.Configuration()   # as the session's was made: each default with its file
    assert list(fresh.getPropertySources("fs.defaultFS")) == ["core-default.xml"]
    values = {key: conf.get(key) for key in DEFAULTS}

    forget_hadoop_property_sources(spark)

    assert all(conf.getPropertySources(key) is None for key in DEFAULTS)
    assert {key: conf.get(key) for key in DEFAULTS} == values
    # the copy each batch's state store RDD broadcasts: the same values, no sources, a smaller serialized form
    copy = spark._jsparkSession.sessionState().newHadoopConf()
    assert {key: copy.get(key) for key in DEFAULTS} == values and copy.getPropertySources("fs.defaultFS") is None
    assert written_bytes(spark, copy) < written_bytes(spark, jvm.org.apache.hadoop.conf.Configuration(fresh)) * 0.8


def test_a_started_application_has_dropped_them(spark, tmp_path):
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    conf.set("streams.on.spark.test.marker", "kept")   # recorded as set programmatically
    assert conf.getPropertySources("streams.on.spark.test.marker") is not None
    topics = EmbeddedTopics(str(tmp_path / "topics"))
    topics.create_topic("in", 1)
    topics.create_topic("out", 1)
    topics.append([ProducerRecord("in", 0, 1_000, b"k", b"v", ())])
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).map_values(str.upper).to("out", Produced.with_(S, S))
    config = {"application.id": "sources-app", "embedded.topics.dir": topics.root,
              "checkpoint.location": str(tmp_path / "ck")}
    try:
        with KafkaStreams(builder.build(), config, spark) as streams:
            streams.start()
            streams.process_all_available()
            assert conf.getPropertySources("streams.on.spark.test.marker") is None
            assert conf.get("streams.on.spark.test.marker") == "kept"
            assert [r.value for r in topics.read("out", 0, 0, topics.end_offsets("out")[0])] == [b"V"]
    finally:
        conf.unset("streams.on.spark.test.marker")

"""Writes the JVM class archive that a Spark JVM starts from in about half the time
(:data:`~streams_on_spark.runtime.spark.session.CLASS_ARCHIVE_ENV` says which JVMs it serves and what it saves).

``python -m streams_on_spark.class_archive PATH`` runs a word count on Spark over embedded topics in a local session
whose JVM writes the classes it loaded (HotSpot's ``-XX:ArchiveClassesAtExit``) as it exits, and moves the archive to
PATH once complete (``make class-archive``, which ``make test`` runs). Point ``STREAMS_ON_SPARK_CLASS_ARCHIVE`` at it.
The session has Spark's jars only on its class path (Hadoop's own local file system): the class path a driver
spark-submit starts and a standalone cluster's executors have, of which a local session's is a prefix.
"""
from __future__ import annotations

import logging
import os
import sys
import tempfile

log = logging.getLogger(__name__)


def build(path: str) -> None:
    """Run a word count on Spark over embedded topics in a JVM that writes its loaded classes to ``path`` as it exits
    (written under a temporary name, moved into place once the JVM has exited)."""
    from pyspark import SparkContext

    from streams_on_spark.connectors.embedded import EmbeddedTopics
    from streams_on_spark.dsl.builder import StreamsBuilder
    from streams_on_spark.dsl.params import Consumed, Grouped, Materialized, Produced
    from streams_on_spark.kafka_streams import KafkaStreams
    from streams_on_spark.records import ProducerRecord
    from streams_on_spark.runtime.spark.session import CLASS_ARCHIVE_ENV, LOCAL_JAVA_OPTIONS, QUIET, local_session
    from streams_on_spark.serde import Serdes

    if SparkContext._active_spark_context is not None:
        raise RuntimeError("a class archive is written by a JVM of its own: build it in a process without Spark")
    partial = f"{path}.{os.getpid()}.partial"
    os.environ.pop(CLASS_ARCHIVE_ENV, None)   # a fresh archive over the base one, not over an older of ours
    spark = local_session("streams-on-spark-class-archive", local_files=False,
                          java_options=f"{LOCAL_JAVA_OPTIONS} -XX:ArchiveClassesAtExit={partial} {QUIET}")
    builder = StreamsBuilder()
    S = Serdes.String()
    (builder.stream("sentences", Consumed.with_(S, S))
     .flat_map_values(lambda sentence: sentence.split())
     .select_key(lambda _key, word: word)
     .group_by_key(Grouped.as_("by-word").with_key_serde(S).with_value_serde(S))
     .count(Materialized.as_("word-counts"))
     .to_stream()
     .to("word-counts-out", Produced.with_(S, Serdes.Long())))
    with EmbeddedTopics() as topics, tempfile.TemporaryDirectory() as checkpoints:
        topics.create_topic("sentences", 2)
        topics.create_topic("word-counts-out", 2)
        topics.append([ProducerRecord("sentences", p, 1_000, b"k", b"the quick brown fox jumps", ()) for p in (0, 1)])
        config = {"application.id": "class-archive", "embedded.topics.dir": topics.root,
                  "checkpoint.location": checkpoints}
        with KafkaStreams(builder.build(), config, spark) as streams:
            streams.start()
            streams.process_all_available()
            streams.read_tasks(1)
    spark.stop()
    gateway = SparkContext._gateway
    gateway.proc.stdin.close()   # the gateway JVM exits at end of input, writing the archive on its way out
    gateway.proc.wait()
    if not os.path.isfile(partial):
        raise RuntimeError(f"the JVM exited without writing a class archive to {partial}")
    os.replace(partial, path)
    log.info("class archive of Spark's jars written to %s (%.0f MB)", path, os.path.getsize(path) / 1e6)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    if len(sys.argv) != 2:
        sys.exit("usage: python -m streams_on_spark.class_archive PATH")
    build(os.path.abspath(sys.argv[1]))

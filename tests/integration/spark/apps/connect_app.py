"""A topology run by KafkaStreams in a Spark Connect session (``SparkSession.builder.remote("local[2]")``) over
embedded topics; prints the output records and the count store (tests/integration/spark/test_spark_connect.py)."""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession

from streams_on_spark import (
    Consumed,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    Topology,
    TopologyException,
)
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.records import ProducerRecord

S, L = Serdes.String(), Serdes.Long()


def click_counts(store: str = "clicks-per-user") -> Topology:
    builder = StreamsBuilder()
    (builder.stream("clicks", Consumed.with_(S, S)).group_by_key().count(Materialized.as_(store))
     .to_stream().to("click-counts", Produced.with_(S, L)))
    return builder.build()


def main() -> None:
    spark = SparkSession.builder.remote("local[2]").getOrCreate()
    with EmbeddedTopics() as topics:
        topics.create_topic("clicks", 2)
        topics.create_topic("click-counts", 2)
        users = ["ann", "bob", "ann", "cid", "ann", "bob"]
        topics.append([ProducerRecord("clicks", i % 2, 1_000 + i, user.encode(), b"click", ())
                       for i, user in enumerate(users)])
        config = {"application.id": "connect-app", "embedded.topics.dir": topics.root,
                  "checkpoint.location": tempfile.mkdtemp(), "statestore.cache.max.bytes": 0}
        with KafkaStreams(click_counts(), config, spark) as streams:
            streams.start()
            streams.process_all_available()
            store = {kv.key: kv.value.value for task in streams.read_tasks(0).values()
                     for kv in task.stores["clicks-per-user"].all()}
            outputs = [(S.deserialize("o", r.key), L.deserialize("o", r.value))
                       for p in range(2) for r in topics.read("click-counts", p, 0, topics.end_offset("click-counts", p))]
        # a checkpoint location with a scheme (hdfs://, s3a://; here file://) keeps its topology.json through Spark:
        # a restart that renames the store is refused
        remote = {**config, "application.id": "connect-remote", "checkpoint.location": Path(tempfile.mkdtemp()).as_uri()}
        with KafkaStreams(click_counts(), remote, spark) as streams:
            streams.start()
            streams.process_all_available()
        try:
            KafkaStreams(click_counts("renamed-store"), remote, spark).start()
            refused = "no"
        except TopologyException as e:
            refused = "yes" if "clicks-per-user" in str(e) else f"other: {e}"
    print("session " + type(spark).__module__)
    print("result " + json.dumps({"store": store, "outputs": sorted(outputs), "remote_refused": refused}))
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())

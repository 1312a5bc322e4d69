"""A topology run by KafkaStreams in a Spark Connect session (``SparkSession.builder.remote("local[2]")``) over
embedded topics; prints the output records and the count store (tests/integration/spark/test_spark_connect.py)."""
from __future__ import annotations

import json
import sys
import tempfile

from pyspark.sql import SparkSession

from streams_on_spark import Consumed, KafkaStreams, Materialized, Produced, Serdes, StreamsBuilder
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.connectors.records import ProducerRecord

S, L = Serdes.String(), Serdes.Long()


def main() -> None:
    spark = SparkSession.builder.remote("local[2]").getOrCreate()
    builder = StreamsBuilder()
    (builder.stream("clicks", Consumed.with_(S, S)).group_by_key().count(Materialized.as_("clicks-per-user"))
     .to_stream().to("click-counts", Produced.with_(S, L)))
    with EmbeddedTopics() as topics:
        topics.create_topic("clicks", 2)
        topics.create_topic("click-counts", 2)
        users = ["ann", "bob", "ann", "cid", "ann", "bob"]
        topics.append([ProducerRecord("clicks", i % 2, 1_000 + i, user.encode(), b"click", ())
                       for i, user in enumerate(users)])
        config = {"application.id": "connect-app", "embedded.topics.dir": topics.root,
                  "checkpoint.location": tempfile.mkdtemp(), "statestore.cache.max.bytes": 0}
        with KafkaStreams(builder.build(), config, spark) as streams:
            streams.start()
            streams.process_all_available()
            store = {kv.key: kv.value.value for task in streams.read_tasks(0).values()
                     for kv in task.stores["clicks-per-user"].all()}
            outputs = [(S.deserialize("o", r.key), L.deserialize("o", r.value))
                       for p in range(2) for r in topics.read("click-counts", p, 0, topics.end_offset("click-counts", p))]
    print("session " + type(spark).__module__)
    print("result " + json.dumps({"store": store, "outputs": sorted(outputs)}))
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())

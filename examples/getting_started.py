"""docs/getting-started.md's first application: the page's word count on Spark over embedded topics (no Kafka).

    .venv/bin/python examples/getting_started.py

It builds the topology of the page's first example, then runs what the page shows under "The same topology, on
Spark" (a local Spark session starts first, which takes a few seconds).
"""
from streams_on_spark import Consumed, Grouped, Materialized, Produced, Serdes, StreamsBuilder

S, L = Serdes.String(), Serdes.Long()

builder = StreamsBuilder()
(builder.stream("sentences", Consumed.with_(S, S))
    .flat_map_values(lambda sentence: sentence.lower().split())
    .group_by(lambda _key, word: word, Grouped.with_(S, S))
    .count(Materialized.as_("word-counts"))
    .to_stream()
    .to("word-counts-out", Produced.with_(S, L)))
topology = builder.build()

# -- the page's block -----------------------------------------------------------------------------------------
import tempfile
from streams_on_spark import KafkaStreams
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.records import ProducerRecord

with EmbeddedTopics() as topics:      # files under /dev/shm, removed on exit
    topics.create_topic("sentences", 4)
    topics.create_topic("word-counts-out", 4)
    topics.append([ProducerRecord("sentences", 0, 1_000, b"doc-1", b"the quick brown fox", ())])
    config = {"application.id": "wordcount", "embedded.topics.dir": topics.root,
              "checkpoint.location": tempfile.mkdtemp()}
    with KafkaStreams(topology, config) as streams:
        streams.start()
        streams.process_all_available()
        counts = streams.read_tasks(1)[3].stores["word-counts"]   # subtopology 1, partition 3
        assert counts.get("the").value == 1
        print("word-counts of 'the' in partition 3:", counts.get("the").value)

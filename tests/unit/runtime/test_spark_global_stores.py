"""Global stores on Spark are kept per Python worker and follow their topics: a batch reads only what is new."""
from __future__ import annotations

from streams_on_spark import Consumed, Materialized, Serdes, StreamsBuilder
from streams_on_spark.config import TaskConfig
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.connectors.embedded_connector import EmbeddedGlobalReader
from streams_on_spark.records import ConsumerRecord, ProducerRecord
from streams_on_spark.runtime.spark import global_stores as module
from streams_on_spark.runtime.spark.global_stores import global_stores

S = Serdes.String()


def internal_builder():
    builder = StreamsBuilder()
    builder.global_table("products", Consumed.with_(S, S), Materialized.as_("product-store"))
    builder.stream("orders", Consumed.with_(S, S)).to("out")
    internal = builder.build().internal_builder
    internal.application_id = "follow"
    return internal


class CountingReader:
    """Records what the follower asks for; serves a topic held in a list per partition."""

    def __init__(self, partitions):
        self.partitions = partitions
        self.calls = []

    def read(self, topic, positions):
        self.calls.append(dict(positions))
        records = [ConsumerRecord(topic, p, o, 1, k.encode(), v.encode(), ())
                   for p, log in enumerate(self.partitions) for o, (k, v) in enumerate(log)
                   if o >= positions.get(p, 0)]
        return records, {p: len(log) for p, log in enumerate(self.partitions)}


def test_a_follower_reads_only_what_its_topics_gained(tmp_path):
    module._FOLLOWERS.clear()
    with EmbeddedTopics(str(tmp_path)) as topics:
        topics.create_topic("products", 2)
        topics.append([ProducerRecord("products", 0, 1, b"p1", b"pen", ()),
                       ProducerRecord("products", 1, 2, b"p2", b"cup", ())])
        reader = EmbeddedGlobalReader(str(tmp_path))
        key = (repr(reader), "follow", "t")
        stores = global_stores(key, internal_builder(), TaskConfig("follow"), reader)
        assert stores["product-store"].get("p1").value == "pen"
        follower = module._FOLLOWERS[key]
        assert follower.positions == {"products": {0: 1, 1: 1}}

        topics.append([ProducerRecord("products", 1, 3, b"p1", b"ink", ())])
        again = global_stores(key, internal_builder(), TaskConfig("follow"), reader)
    assert again["product-store"] is stores["product-store"]  # kept, not rebuilt
    assert again["product-store"].get("p1").value == "ink"
    assert again["product-store"].get("p2").value == "cup"
    assert follower.positions == {"products": {0: 1, 1: 2}}


def test_only_new_offsets_are_asked_for_and_a_shrunken_topic_is_read_again():
    module._FOLLOWERS.clear()
    reader = CountingReader([[("a", "1"), ("b", "2")], [("c", "3")]])
    key = ("counting", "follow", "t")
    global_stores(key, internal_builder(), TaskConfig("follow"), reader)
    reader.partitions[0].append(("a", "4"))
    stores = global_stores(key, internal_builder(), TaskConfig("follow"), reader)
    assert reader.calls == [{}, {0: 2, 1: 1}]
    assert stores["product-store"].get("a").value == "4"

    reader.partitions[:] = [[("z", "9")], []]   # deleted and created again: fewer records than applied
    stores = global_stores(key, internal_builder(), TaskConfig("follow"), reader)
    assert reader.calls[-1] == {}
    assert stores["product-store"].get("z").value == "9"
    assert stores["product-store"].get("a") is None


def test_followers_are_bounded_per_process():
    module._FOLLOWERS.clear()
    reader = CountingReader([[("a", "1")]])
    for app in range(module._MAX_FOLLOWERS + 3):
        global_stores(("counting", f"app-{app}", "t"), internal_builder(), TaskConfig("follow"), reader)
    assert len(module._FOLLOWERS) == module._MAX_FOLLOWERS
    assert ("counting", "app-0", "t") not in module._FOLLOWERS

"""The README word count, and its ``mark_as_partitioned`` twin that shows the split-state bug."""
from __future__ import annotations

from collections import Counter

from streams_on_spark import (
    Consumed,
    Grouped,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TestRecord,
    Topology,
)
from streams_on_spark.partitioner import partition_for_key

S, L = Serdes.String(), Serdes.Long()

SENTENCES = [
    ("doc-1", "the quick brown fox"),
    ("doc-2", "jumps over the lazy dog"),
    ("doc-3", "the dog barks"),
    ("doc-4", "a quick brown dog"),
    ("doc-5", "the end of the story"),
    ("doc-6", "over and over again"),
]


def word_count(mark_as_partitioned: bool = False) -> Topology:
    builder = StreamsBuilder()
    words = (builder.stream("sentences", Consumed.with_(S, S))
             .flat_map_values(lambda sentence: sentence.lower().split())
             .select_key(lambda _key, word: word))
    if mark_as_partitioned:
        words = words.mark_as_partitioned()
    (words.group_by_key(Grouped.as_("by-word").with_key_serde(S).with_value_serde(S))
     .count(Materialized.as_("word-counts"))
     .to_stream()
     .to("word-counts-out", Produced.with_(S, L)))
    return builder.build()


def pipe_sentences(driver) -> None:
    topic = driver.create_input_topic("sentences", S, S, start_timestamp=1_000, auto_advance=10)
    topic.pipe_key_value_list(SENTENCES)  # one batch on Spark; one record at a time in-process


def expected_counts() -> Counter:
    return Counter(word for _, sentence in SENTENCES for word in sentence.split())


def store_contents(driver, partitions: int) -> dict[int, dict[str, int]]:
    return {p: {kv.key: kv.value for kv in driver.get_key_value_store("word-counts", p).all()}
            for p in range(partitions)}


def test_each_word_counted_only_in_its_murmur2_partition(make_driver, partitions):
    driver = make_driver(word_count(), "sentences", "word-counts-out")
    pipe_sentences(driver)
    counts = expected_counts()
    stores = store_contents(driver, partitions)
    for word, count in counts.items():
        home = partition_for_key(word.encode("utf-8"), partitions)
        assert stores[home][word] == count
        assert all(word not in stores[p] for p in range(partitions) if p != home)
    assert sum(len(s) for s in stores.values()) == len(counts)


def test_output_records_land_on_the_partition_of_their_word(make_driver, partitions):
    driver = make_driver(word_count(), "sentences", "word-counts-out")
    pipe_sentences(driver)
    records = driver.create_output_topic("word-counts-out", S, L).read_records_to_list()
    assert len(records) == sum(expected_counts().values())  # one update per word occurrence
    final: dict[str, int] = {}
    for r in records:
        assert r.partition == partition_for_key(r.key.encode(), partitions)
        assert r.value == final.get(r.key, 0) + 1  # counts go up by one, per key, in order
        final[r.key] = r.value
    assert final == dict(expected_counts())


def test_timestamps_of_counts_follow_the_input(make_driver, partitions):
    driver = make_driver(word_count(), "sentences", "word-counts-out")
    pipe_sentences(driver)
    records = driver.create_output_topic("word-counts-out", S, L).read_records_to_list()
    # sentence i was piped at 1000 + 10*i; a count's timestamp is the max of its inputs so far
    by_word: dict[str, list[int]] = {}
    for r in records:
        by_word.setdefault(r.key, []).append(r.timestamp)
    for word, stamps in by_word.items():
        expected = [1_000 + 10 * i for i, (_, s) in enumerate(SENTENCES) for w in s.split() if w == word]
        assert stamps == expected


def test_the_repartition_topic_holds_every_word_on_its_partition(make_driver, partitions):
    driver = make_driver(word_count(), "sentences", "word-counts-out")
    pipe_sentences(driver)
    topic = "conformance-by-word-repartition"
    assert topic in driver.produced_topic_names()
    records = driver.create_output_topic(topic, S, S).read_records_to_list()
    assert sorted(r.key for r in records) == sorted(expected_counts().elements())
    assert all(r.partition == partition_for_key(r.key.encode(), partitions) for r in records)


def test_mark_as_partitioned_splits_a_words_state_across_partitions(make_driver, partitions):
    """KIP-759 misused: the key changed but no repartition happens, so each input partition counts separately."""
    driver = make_driver(word_count(mark_as_partitioned=True), "sentences", "word-counts-out")
    assert "repartition" not in str(driver._topology.describe())
    topic = driver.create_input_topic("sentences", S, S, start_timestamp=0)
    # "shared" arrives on every input partition
    topic.pipe_record_list([TestRecord(f"doc-{p}", "shared words here", partition=p) for p in range(partitions)])
    stores = store_contents(driver, partitions)
    holders = [p for p, store in stores.items() if "shared" in store]
    assert holders == list(range(partitions))
    assert all(stores[p]["shared"] == 1 for p in holders)
    if partitions > 1:
        assert len(holders) > 1  # the split-state bug: one word, several partial counts


def test_the_same_input_with_repartition_keeps_one_count(make_driver, partitions):
    driver = make_driver(word_count(), "sentences", "word-counts-out")
    topic = driver.create_input_topic("sentences", S, S, start_timestamp=0)
    topic.pipe_record_list([TestRecord(f"doc-{p}", "shared words here", partition=p) for p in range(partitions)])
    stores = store_contents(driver, partitions)
    assert [stores[p].get("shared") for p in range(partitions)] == [
        partitions if p == partition_for_key(b"shared", partitions) else None for p in range(partitions)]

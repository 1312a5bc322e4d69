"""Ground truth from Java: Kafka's own console producer places String keys where our murmur2 partitioner says.

The records are produced by ``org.apache.kafka.tools.ConsoleProducer`` from the resolved broker jars (Kafka's
``BuiltInPartitioner`` over ``StringSerializer``'s UTF-8 bytes) and read back with kafka-python.
"""
from __future__ import annotations

import subprocess
import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition

from streams_on_spark.partitioner import partition_for_key

pytestmark = pytest.mark.kafka

PARTITIONS = 6
KEYS = ([f"key-{i}" for i in range(100)]
        + ["", "a", "ab", "abc", "abcd", "ключ", "schlüssel", "clé-é", "键", "キー", "🔑", "🔑🔑-emoji", "ελληνικά",
           "مفتاح", "ZAŻÓŁĆ gęślą jaźń", " leading space", "trailing space ", "tab\tinside", "x" * 300])


def test_console_producer_places_keys_like_partition_for_key(kafka_bootstrap, broker_jars, topic_name):
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap, request_timeout_ms=10000)
    try:
        admin.create_topics({topic_name: {"num_partitions": PARTITIONS, "replication_factor": 1}})
        admin.wait_for_topics([topic_name], timeout_ms=10000)
    finally:
        admin.close()
    keys = [k for k in KEYS if k]  # the console producer reads an empty key as "" too, but keep it unambiguous
    lines = "".join(f"{key}:value-{i}\n" for i, key in enumerate(keys))
    started = time.monotonic()
    produced = subprocess.run(
        ["java", "-Dfile.encoding=UTF-8", "-Dlog4j2.level=WARN", "-cp", f"{broker_jars}/*",
         "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", kafka_bootstrap, "--topic", topic_name,
         "--property", "parse.key=true", "--property", "key.separator=:",
         "--producer-property", "acks=all", "--producer-property", "linger.ms=0"],
        input=lines.encode("utf-8"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    assert produced.returncode == 0, produced.stdout.decode(errors="replace")[-3000:]

    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=2000)
    try:
        consumer.assign([TopicPartition(topic_name, p) for p in range(PARTITIONS)])
        records = []
        deadline = time.monotonic() + 30
        while len(records) < len(keys) and time.monotonic() < deadline:
            records.extend(consumer)
    finally:
        consumer.close()
    assert len(records) == len(keys), f"read {len(records)} of {len(keys)} records in {time.monotonic() - started:.0f}s"
    placed = {r.key.decode("utf-8"): r.partition for r in records}
    assert set(placed) == set(keys)
    wrong = {k: (p, partition_for_key(k.encode("utf-8"), PARTITIONS)) for k, p in placed.items()
             if p != partition_for_key(k.encode("utf-8"), PARTITIONS)}
    assert not wrong, f"keys Kafka placed elsewhere than partition_for_key (kafka, ours): {wrong}"
    assert set(placed.values()) == set(range(PARTITIONS))

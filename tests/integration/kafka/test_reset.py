"""Resetting an application on the real broker: its repartition topic, consumer group (exactly_once_v2 commits
there) and checkpoints go; a restart re-reads the input from the beginning and counts as the first run did."""
from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from streams_on_spark import Consumed, Grouped, KafkaStreams, Materialized, Produced, Serdes, StreamsBuilder
from streams_on_spark.connectors.kafka import KafkaConnector
from streams_on_spark.records import ProducerRecord
from streams_on_spark.reset import reset_application

S, L = Serdes.String(), Serdes.Long()


def word_count(source: str, sink: str):
    builder = StreamsBuilder()
    (builder.stream(source, Consumed.with_(S, S)).flat_map_values(str.split).select_key(lambda _k, w: w)
     .group_by_key(Grouped.with_(S, S, name="by-word")).count(Materialized.as_("counts"))
     .to_stream().to(sink, Produced.with_(S, L)))
    return builder.build()


@pytest.mark.kafka
@pytest.mark.spark
def test_reset_then_restart_counts_the_input_again_from_the_start(kafka_bootstrap, kafka_spark, read_topic, tmp_path):
    run = uuid.uuid4().hex[:8]
    source, sink, app = f"reset-in-{run}", f"reset-out-{run}", f"reset-{run}"
    with KafkaConnector(kafka_bootstrap, timeout_ms=10_000) as admin:
        admin.create_topic(source, 1)
        admin.create_topic(sink, 1)
        admin.append([ProducerRecord(source, 0, 1_000 + i, None, line.encode(), ())
                      for i, line in enumerate(["a b a", "b a"])])
    checkpoints = tmp_path / "checkpoints"
    config = {"application.id": app, "bootstrap.servers": kafka_bootstrap, "checkpoint.location": str(checkpoints),
              "statestore.cache.max.bytes": 0, "processing.guarantee": "exactly_once_v2"}

    def run_once() -> dict:
        with KafkaStreams(word_count(source, sink), config, kafka_spark) as streams:
            streams.start()
            streams.process_all_available()
            return {kv.key: kv.value.value for t in streams.read_tasks(1).values() for kv in t.stores["counts"].all()}

    assert run_once() == {"a": 3, "b": 2}
    plan = reset_application(config, dry_run=True)
    assert plan.internal_topics == (f"{app}-by-word-repartition",)
    assert plan.consumer_group == app and plan.checkpoint_location == str(checkpoints)
    assert checkpoints.exists()
    done = reset_application(config)
    assert (done.internal_topics, done.consumer_group) == (plan.internal_topics, app)
    with KafkaConnector(kafka_bootstrap, timeout_ms=10_000) as admin:
        assert f"{app}-by-word-repartition" not in admin.topics()
        assert app not in admin.consumer_groups()
    assert not checkpoints.exists()

    assert run_once() == {"a": 3, "b": 2}   # not 6 and 4: the input was read again into empty stores
    counts = [(r.key.decode(), L.deserialize(sink, r.value)) for r in read_topic(sink, 1, committed=True)]
    assert counts == [("a", 1), ("b", 1), ("a", 2), ("b", 2), ("a", 3)] * 2


@pytest.mark.kafka
def test_reset_on_a_fresh_broker_succeeds_and_again(own_broker, tmp_path):
    """``streams-on-spark reset`` as a user types it, on a broker where the application never ran (its consumer group
    does not exist, nor the broker's group coordinator yet): nothing to delete but the checkpoints, and exit 0; and
    run again, the same (idempotent)."""
    fresh_broker = own_broker.bootstrap
    checkpoints = tmp_path / "checkpoints"
    (checkpoints / "subtopology-0").mkdir(parents=True)
    command = [str(Path(sys.executable).parent / "streams-on-spark"), "reset", "--application-id", "never-ran",
               "--bootstrap-servers", fresh_broker, "--checkpoint-location", str(checkpoints)]
    first = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.splitlines() == ["application never-ran: deleted", "  no internal topics",
                                         f"  checkpoints {checkpoints}"]
    assert not checkpoints.exists()
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.splitlines() == ["application never-ran: deleted", "  no internal topics", "  no checkpoints"]
    # the admin call itself, on the broker still without a coordinator: waits for it, then finds no such group
    with KafkaConnector(fresh_broker, timeout_ms=30_000) as admin:
        assert admin.delete_consumer_group("never-ran") is False

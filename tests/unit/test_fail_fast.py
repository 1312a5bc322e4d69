"""``KafkaStreams.start()`` fails fast, before the Spark session starts, on what it can check without Spark: an
unreachable broker, missing Kafka connector jars, an unsafe upgrade of the checkpoints' topology. Each is run as a
user runs an application (``python app.py``, in its own process), which must fail in seconds with no JVM started."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys


APP = '''
import json, sys, time
from streams_on_spark import Consumed, Grouped, KafkaStreams, Produced, Serdes, StreamsBuilder

S, L = Serdes.String(), Serdes.Long()


def word_count(filtered):
    builder = StreamsBuilder()
    words = builder.stream("sentences", Consumed.with_(S, S)).flat_map_values(str.split)
    if filtered:   # inserted before the generated names: they shift, the checkpoint's state would be lost
        words = words.filter(lambda _k, word: word != "")
    words.group_by(lambda _k, word: word, Grouped.with_(S, S)).count().to_stream().to("counts", Produced.with_(S, L))
    return builder.build()


config = json.loads(sys.argv[1])
{setup}
started = time.monotonic()
try:
    with KafkaStreams(word_count(filtered=True), config) as streams:
        streams.start()
except Exception as e:
    from pyspark import SparkContext
    print(json.dumps({{"error": f"{{type(e).__name__}}: {{e}}", "seconds": time.monotonic() - started,
                      "jvm": SparkContext._gateway is not None}}))
'''
# the checkpoint a first run of the word count (unfiltered) left: its manifest, as KafkaStreams writes it
FIRST_RUN = '''
from streams_on_spark.checkpoint_manifest import plan_restart, write_manifest
from streams_on_spark.config import StreamsConfig
from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.runtime.snapshot import SNAPSHOT_VERSION
topics = EmbeddedTopics(config["embedded.topics.dir"])
topics.create_topic("sentences", 2)
topics.create_topic("counts", 2)
partitions = {"sentences": 2, "KSTREAM-KEY-SELECT-0000000002-repartition": 2}
write_manifest(config["checkpoint.location"], plan_restart(None, word_count(filtered=False).describe(), partitions,
                                                           StreamsConfig(config), SNAPSHOT_VERSION))
'''


def run_app(tmp_path, config: dict, setup: str = "", **env: str) -> dict:
    script = tmp_path / "app.py"
    script.write_text(APP.format(setup=setup))
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("STREAMS_ON_SPARK_KAFKA_JARS", "SPARK_REMOTE", "PYSPARK_GATEWAY_PORT", "MASTER")}
    result = subprocess.run([sys.executable, str(script), json.dumps(config)], capture_output=True, text=True,
                            cwd=tmp_path, timeout=120, env={**environment, **env})
    assert result.returncode == 0 and result.stdout.strip(), result.stdout + result.stderr
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert not outcome["jvm"], f"Spark was started before the failure: {outcome}"
    assert outcome["seconds"] < 5, outcome
    return outcome


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_broker_fails_at_once_without_starting_spark(tmp_path):
    port = closed_port()
    outcome = run_app(tmp_path, {"application.id": "ff", "bootstrap.servers": f"127.0.0.1:{port}",
                                 "checkpoint.location": str(tmp_path / "checkpoints")})
    assert outcome["error"] == (f"StreamsException: Kafka at 127.0.0.1:{port} is unreachable (127.0.0.1:{port}: "
                                "Connection refused): check bootstrap.servers and that the brokers are up")


def test_missing_connector_jars_name_the_variable_and_the_path_searched_without_starting_spark(tmp_path):
    ivy = tmp_path / "ivy2" / "jars"
    ivy.mkdir(parents=True)
    (ivy / "org.apache.spark_spark-sql-kafka-0-10_2.13-4.2.0.jar").write_bytes(b"")   # the others are missing
    outcome = run_app(tmp_path, {"application.id": "ff", "bootstrap.servers": f"127.0.0.1:{closed_port()}",
                                 "checkpoint.location": str(tmp_path / "checkpoints")},
                      STREAMS_ON_SPARK_KAFKA_JARS=str(ivy))
    assert outcome["error"].startswith(
        f"StreamsException: the Spark Kafka connector jars were not found: searched {ivy} (from "
        "STREAMS_ON_SPARK_KAFKA_JARS), which has no spark-token-provider-kafka-0-10, kafka-clients, commons-pool2 "
        "jar. Set STREAMS_ON_SPARK_KAFKA_JARS to a directory"), outcome


def test_an_unsafe_upgrade_is_refused_at_once_without_starting_spark(tmp_path):
    outcome = run_app(tmp_path, {"application.id": "ff", "embedded.topics.dir": str(tmp_path / "topics"),
                                 "checkpoint.location": str(tmp_path / "checkpoints")}, FIRST_RUN)
    assert outcome["error"].startswith("TopologyException: Invalid topology: The topology changed in a way its "
                                       "checkpoints cannot follow safely"), outcome


def test_a_source_or_sink_without_serdes_fails_at_start_before_spark(tmp_path):
    """As Kafka's source and sink nodes fail their init: at start, naming the node and what to set, and here before
    the Spark session (no session is made), not at the first record inside a Spark task."""
    import pytest

    from streams_on_spark import KafkaStreams, StreamsBuilder
    from streams_on_spark.connectors.embedded import EmbeddedTopics
    from streams_on_spark.errors import StreamsException
    builder = StreamsBuilder()
    builder.stream("in").to("out")
    with EmbeddedTopics(str(tmp_path / "topics")) as topics:
        topics.create_topic("in", 1)
        config = {"application.id": "serdes", "embedded.topics.dir": topics.root,
                  "checkpoint.location": str(tmp_path / "checkpoints")}
        streams = KafkaStreams(builder.build(), config)
        with pytest.raises(StreamsException, match="^Failed to initialize key serdes for source node "
                                                   "KSTREAM-SOURCE-0000000000$") as raised:
            streams.start()
        assert "set one with Consumed" in str(raised.value.__cause__)
        assert streams._spark is None

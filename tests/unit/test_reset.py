"""The application reset tool on embedded topics: internal topics and checkpoints go, everything else stays."""
from __future__ import annotations

import pytest

from streams_on_spark.connectors.embedded import EmbeddedTopics
from streams_on_spark.errors import ConfigException
from streams_on_spark.records import ProducerRecord
from streams_on_spark.reset import is_internal_topic, reset_application


def test_internal_topics_are_named_as_kafka_s_resetter_names_them():
    assert is_internal_topic("app", "app-by-word-repartition")
    assert is_internal_topic("app", "app-counts-changelog")
    assert is_internal_topic("app", "app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic") is False
    assert is_internal_topic("app", "app-x-subscription-registration-topic")
    assert not is_internal_topic("app", "app2-by-word-repartition")   # another application's
    assert not is_internal_topic("app", "sentences")


def test_reset_deletes_internal_topics_and_checkpoints_and_a_dry_run_deletes_nothing(tmp_path):
    topics = EmbeddedTopics(str(tmp_path / "topics"))
    for name, n in [("sentences", 2), ("app-by-word-repartition", 4), ("app-x-changelog", 1),
                    ("other-by-word-repartition", 4)]:
        topics.create_topic(name, n)
    topics.append([ProducerRecord("app-by-word-repartition", 1, 5, b"k", b"v", ())])
    checkpoints = tmp_path / "checkpoints"
    (checkpoints / "subtopology-0" / "commits").mkdir(parents=True)
    config = {"application.id": "app", "embedded.topics.dir": str(tmp_path / "topics"),
              "checkpoint.location": str(checkpoints)}

    plan = reset_application(config, dry_run=True)
    assert plan.internal_topics == ("app-by-word-repartition", "app-x-changelog")
    assert plan.checkpoint_location == str(checkpoints) and plan.consumer_group is None
    assert str(plan).splitlines() == ["application app: would delete", "  internal topic app-by-word-repartition",
                                      "  internal topic app-x-changelog", f"  checkpoints {checkpoints}"]
    assert set(topics.topics()) == {"sentences", "app-by-word-repartition", "app-x-changelog",
                                    "other-by-word-repartition"} and checkpoints.exists()

    done = reset_application(config)
    assert done.internal_topics == plan.internal_topics and not done.dry_run
    assert set(EmbeddedTopics(str(tmp_path / "topics")).topics()) == {"sentences", "other-by-word-repartition"}
    assert not checkpoints.exists()
    assert str(reset_application(config)).splitlines() == ["application app: deleted", "  no internal topics",
                                                           "  no checkpoints"]
    topics.create_topic("app-by-word-repartition", 4)   # a restarted application creates it again, empty
    assert topics.end_offsets("app-by-word-repartition") == [0, 0, 0, 0]


def test_the_default_checkpoint_location_is_kafka_streams_one(tmp_path):
    (tmp_path / "state" / "app").mkdir(parents=True)
    config = {"application.id": "app", "embedded.topics.dir": str(tmp_path / "topics"),
              "state.dir": str(tmp_path / "state")}
    assert reset_application(config).checkpoint_location == str(tmp_path / "state" / "app")
    assert not (tmp_path / "state" / "app").exists()


def test_an_application_id_is_required():
    with pytest.raises(ValueError, match="Missing required configuration 'application.id'"):
        reset_application({"embedded.topics.dir": "/tmp/x"})


def test_kafka_and_embedded_topics_together_are_refused_and_nothing_is_deleted(tmp_path):
    """With both, one would be ignored (``KafkaStreams`` refuses them too): nothing is reached or deleted."""
    checkpoints = tmp_path / "checkpoints"
    (checkpoints / "subtopology-0").mkdir(parents=True)
    config = {"application.id": "app", "bootstrap.servers": "127.0.0.1:1",
              "embedded.topics.dir": str(tmp_path / "topics"), "checkpoint.location": str(checkpoints)}
    with pytest.raises(ConfigException, match="'bootstrap.servers' and 'embedded.topics.dir'"):
        reset_application(config)
    assert checkpoints.exists()

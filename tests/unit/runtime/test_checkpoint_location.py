"""``CheckpointLocation``: the one place that tells a local checkpoint location from a remote one (a URI, read
through Spark). The remote side runs in tests/integration/spark/test_upgrade_restart.py."""
from __future__ import annotations

import pytest

from streams_on_spark import TopologyException
from streams_on_spark.runtime.spark.checkpoints import CheckpointLocation


def test_a_local_location_lists_writes_reads_and_deletes(tmp_path):
    location = CheckpointLocation(str(tmp_path / "app"))
    assert not location.is_remote and not location.may_exist()
    assert location.checkpoint_names() == frozenset() and location.read_text("topology.json") is None
    location.ensure_exists()
    (tmp_path / "app" / "subtopology-0" / "state").mkdir(parents=True)
    (tmp_path / "app" / "subtopology-1").mkdir()
    (tmp_path / "app" / "other").mkdir()
    location.write_text("topology.json", "{}\n")
    assert location.checkpoint_names() == {"subtopology-0", "subtopology-1"}
    assert location.read_text("topology.json") == "{}\n" and location.join("x") == str(tmp_path / "app" / "x")
    assert location.has_state("subtopology-0") and not location.has_state("subtopology-1")
    location.delete()
    assert not (tmp_path / "app").exists()


def test_a_remote_location_needs_a_spark_session(tmp_path):
    location = CheckpointLocation.of((tmp_path / "app").as_uri() + "/")
    assert location.is_remote and location.may_exist()
    assert location.join("subtopology-0") == (tmp_path / "app").as_uri() + "/subtopology-0"
    assert location.relocate_state_schema_paths("subtopology-0") == []   # left to Spark
    location.ensure_exists()
    assert not (tmp_path / "app").exists()   # created by Spark's first write, not here
    for read in (location.checkpoint_names, lambda: location.read_text("topology.json")):
        with pytest.raises(TopologyException, match="is remote: it is read through a SparkSession"):
            read()


def test_a_location_is_a_non_empty_path():
    with pytest.raises(ValueError, match="non-empty path or URI"):
        CheckpointLocation("")
    assert CheckpointLocation.of(CheckpointLocation("/x")) == CheckpointLocation("/x")

"""The checkpoint manifest: what a run records beside its checkpoints, and how the next run is checked against it and
finds each subtopology's own checkpoint (tests/integration/spark/test_upgrade_restart.py runs it on Spark)."""
from __future__ import annotations

import json
import logging

import pytest

from streams_on_spark import (
    Consumed,
    Grouped,
    Materialized,
    Serdes,
    StreamsBuilder,
    TimeWindows,
    Topology,
    TopologyException,
)
from streams_on_spark.checkpoint_manifest import (
    MANIFEST,
    CheckpointManifest,
    plan_restart,
    read_manifest,
    write_manifest,
)
from streams_on_spark.config import StreamsConfig
from streams_on_spark.upgrade import windows_of

S = Serdes.String()


def word_count(*, new_branch: bool = False, named: bool = True):
    builder = StreamsBuilder()
    if new_branch:
        builder.stream("clicks").to("clicks-copy")
    words = builder.stream("sentences", Consumed.with_(S, S)).flat_map_values(str.split)
    grouped = words.group_by(lambda _k, w: w, Grouped.with_(S, S, name="by-word" if named else None))
    (grouped.count(Materialized.as_("word-counts")) if named else grouped.count()).to_stream().to("out")
    return builder.build().describe()


PARTITIONS = {"sentences": 4, "by-word-repartition": 4}
APP = {"application.id": "app"}
NO_CONFIG = StreamsConfig(APP)   # every key at its default


def first_run(tmp_path, description=None, snapshot_format: int = 2) -> CheckpointManifest:
    manifest = plan_restart(None, description or word_count(), PARTITIONS, NO_CONFIG, snapshot_format)
    write_manifest(str(tmp_path), manifest)
    return manifest


def test_a_first_run_records_its_topology_and_uses_one_directory_per_subtopology(tmp_path):
    manifest = first_run(tmp_path)
    assert manifest.checkpoints == {0: "subtopology-0", 1: "subtopology-1"}
    assert read_manifest(str(tmp_path)) == manifest
    data = json.loads((tmp_path / MANIFEST).read_text())
    assert data["description"] == str(word_count()) and data["snapshot_format"] == 2
    assert data["partitions"] == PARTITIONS and data["optimization"] == "none"
    assert read_manifest(str(tmp_path / "nothing-here")) is None


def test_checkpoints_written_before_manifests_existed_resume_with_a_warning(tmp_path, caplog):
    manifest = plan_restart(None, word_count(), PARTITIONS, NO_CONFIG, 2,
                            frozenset({"subtopology-0", "subtopology-1"}))
    assert manifest.checkpoints == {0: "subtopology-0", 1: "subtopology-1"}
    assert "without a topology manifest" in caplog.text


def test_renumbered_subtopologies_keep_their_own_checkpoints(tmp_path):
    previous = first_run(tmp_path)
    upgraded = word_count(new_branch=True)
    manifest = plan_restart(previous, upgraded, {**PARTITIONS, "clicks": 1}, NO_CONFIG, 2,
                            frozenset(previous.checkpoints.values()))
    sources = {s.id: {t for n in s.nodes for t in getattr(n, "topics", ())} for s in upgraded.subtopologies}
    assert sources[0] == {"clicks"}
    assert manifest.checkpoints == {0: "subtopology-0-1", 1: "subtopology-0", 2: "subtopology-1"}


def test_an_unsafe_change_is_refused_unless_allowed(tmp_path, caplog):
    previous = first_run(tmp_path, word_count(named=False))
    renamed = word_count(named=True)
    with pytest.raises(TopologyException) as refused:
        plan_restart(previous, renamed, PARTITIONS, NO_CONFIG, 2)
    assert "upgrade.allow.unsafe=true" in str(refused.value) and "application.id" in str(refused.value)
    manifest = plan_restart(previous, renamed, PARTITIONS, StreamsConfig({**APP, "upgrade.allow.unsafe": "true"}),
                            2)
    assert manifest.description == str(renamed)
    assert "despite a topology change that loses state" in caplog.text


def test_a_changed_partition_count_of_a_stateful_subtopology_is_refused(tmp_path):
    previous = first_run(tmp_path)
    with pytest.raises(TopologyException, match="by-word-repartition"):
        plan_restart(previous, word_count(), {"sentences": 4, "by-word-repartition": 8}, NO_CONFIG, 2)


def test_a_changed_dsl_store_format_is_refused_as_the_stores_would_be_misread(tmp_path):
    previous = first_run(tmp_path)
    assert previous.dsl_store_format == "DEFAULT"
    with pytest.raises(TopologyException, match="dsl-store-format-changed.*dsl.store.format changed from DEFAULT to "
                                                "HEADERS"):
        plan_restart(previous, word_count(), PARTITIONS, StreamsConfig({**APP, "dsl.store.format": "headers"}), 2)
    headers = plan_restart(None, word_count(), PARTITIONS, StreamsConfig({**APP, "dsl.store.format": "headers"}), 2)
    write_manifest(str(tmp_path), headers)
    assert read_manifest(str(tmp_path)).dsl_store_format == "HEADERS"
    assert plan_restart(headers, word_count(), PARTITIONS, StreamsConfig({**APP, "dsl.store.format": "Headers"}),
                        2) == headers   # kept
    older = json.loads(previous.to_json())
    del older["dsl_store_format"]   # a manifest from before the setting was recorded: the default format
    assert CheckpointManifest.from_json(json.dumps(older), "old").dsl_store_format == "DEFAULT"


def test_another_snapshot_format_is_refused_naming_both_versions(tmp_path):
    previous = first_run(tmp_path)
    with pytest.raises(TopologyException, match="task snapshot format 2; this version .* reads format 3"):
        plan_restart(previous, word_count(), PARTITIONS, NO_CONFIG, 3)


def test_an_older_snapshot_format_this_version_reads_is_resumed(tmp_path):
    previous = first_run(tmp_path)
    manifest = plan_restart(previous, word_count(), PARTITIONS, NO_CONFIG, 3, readable_formats={2, 3})
    assert manifest.snapshot_format == 3
    with pytest.raises(TopologyException, match="task snapshot format 4; this version .* reads format 3"):
        plan_restart(first_run(tmp_path, snapshot_format=4), word_count(), PARTITIONS, NO_CONFIG, 3,
                     readable_formats={2, 3})


def test_an_unreadable_manifest_names_its_file(tmp_path):
    (tmp_path / MANIFEST).write_text("{not json")
    with pytest.raises(TopologyException, match=MANIFEST):
        read_manifest(str(tmp_path))
    (tmp_path / MANIFEST).write_text(json.dumps({"manifest_version": 99, "library_version": "9.0"}))
    with pytest.raises(TopologyException, match="manifest version 99 .* streams-on-spark 9.0"):
        read_manifest(str(tmp_path))


def windowed_counts(size_ms: int) -> Topology:
    """Generated names (a grouping and an unnamed store) and a window: what a restart used to warn about."""
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(S, S)).flat_map_values(str.split)
     .group_by(lambda _k, w: w, Grouped.with_(S, S)).windowed_by(TimeWindows.of_size_with_no_grace(size_ms))
     .count().to_stream().to("out"))
    return builder.build()


WINDOWED_PARTITIONS = {"sentences": 4, "KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition": 4}


def restart(previous, topology: Topology, config=None) -> CheckpointManifest:
    return plan_restart(previous, topology.describe(), WINDOWED_PARTITIONS, StreamsConfig({**APP, **(config or {})}),
                        2, windows=windows_of(topology))


def said(caplog) -> list[logging.LogRecord]:
    """What a restart's checks logged, without the builder's warning on generated names, which a process logs once
    for the first topology built with them (the one test of a worker that builds it first sees it)."""
    return [r for r in caplog.records if r.name in ("streams_on_spark.checkpoint_manifest", "streams_on_spark.upgrade")]


def test_a_restart_with_the_same_topology_says_nothing(tmp_path, caplog):
    """Neither the windows (the manifest keeps them) nor the generated names (building the topology warned of them,
    KIP-1111's warning) are worth a line when nothing changed."""
    write_manifest(str(tmp_path), restart(None, windowed_counts(60_000)))
    previous = read_manifest(str(tmp_path))
    assert previous.windows == json.loads(json.dumps(windows_of(windowed_counts(60_000))))
    caplog.set_level("DEBUG", "streams_on_spark.checkpoint_manifest")
    manifest = restart(previous, windowed_counts(60_000))
    assert [r for r in said(caplog) if r.levelname != "DEBUG"] == []
    assert manifest.windows == previous.windows


def test_a_window_size_changed_between_runs_is_refused(tmp_path):
    """describe() text is the same: only the windows the manifest keeps tell the two runs apart."""
    previous = restart(None, windowed_counts(60_000))
    assert str(windowed_counts(120_000).describe()) == previous.description
    with pytest.raises(TopologyException, match="window-size-changed: KSTREAM-AGGREGATE-STATE-STORE-0000000003"):
        restart(previous, windowed_counts(120_000))


def test_a_manifest_without_windows_warns_once_that_they_could_not_be_checked(tmp_path, caplog):
    """A manifest an earlier version wrote has no windows: that restart says so, the next one is silent."""
    older = restart(None, windowed_counts(60_000))
    older = CheckpointManifest(**{**older.__dict__, "windows": None})
    write_manifest(str(tmp_path), older)
    assert "windows" not in {k for k, v in json.loads((tmp_path / MANIFEST).read_text()).items() if v is not None}
    caplog.set_level("WARNING", "streams_on_spark")
    manifest = restart(read_manifest(str(tmp_path)), windowed_counts(60_000))
    warned = [r.getMessage() for r in said(caplog)]
    assert len(warned) == 1 and "could not be checked" in warned[0], warned
    caplog.clear()
    restart(manifest, windowed_counts(60_000))
    assert said(caplog) == []

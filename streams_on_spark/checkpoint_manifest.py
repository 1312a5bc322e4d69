"""The checkpoint remembers what wrote it: ``topology.json`` beside an application's subtopology checkpoints.

It holds the topology's ``describe()`` text, the partition count of every topic it reads, ``topology.optimization``,
the task snapshot format, the library version, which checkpoint directory each subtopology uses, and the repartition
topics that pipeline mode (``pipeline.mode``) replaced by Spark's shuffle. On restart
:func:`plan_restart` compares the new topology with it (:func:`streams_on_spark.upgrade.check_upgrade`): unsafe
findings stop the start with a :class:`TopologyException` naming them and the ways out, unless
``upgrade.allow.unsafe=true``. Subtopologies are matched to their old checkpoints by what they read (their source
topics), not by their number, so a change that renumbers subtopologies (a new operator earlier in the topology)
resumes each one from its own offsets and state.

A store that moves to another subtopology is not carried over: ``check_upgrade`` calls that unsafe, and the start
is refused (its state lives in the other subtopology's Spark checkpoint).

The manifest is read and written through the application's
:class:`~streams_on_spark.runtime.spark.checkpoints.CheckpointLocation` (local, or remote through Spark).
"""
from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import Any, Collection, Mapping, Optional, Union

from streams_on_spark.config import PIPELINE_MODE, TOPOLOGY_OPTIMIZATION, UPGRADE_ALLOW_UNSAFE, StreamsConfig
from streams_on_spark.errors import TopologyException
from streams_on_spark.runtime.spark.checkpoints import CheckpointLocation
from streams_on_spark.topology.description import TopologyDescription
from streams_on_spark.upgrade import UpgradeReport, check_upgrade

log = logging.getLogger(__name__)

MANIFEST = "topology.json"
MANIFEST_VERSION = 1
# findings Kafka must restore state for that the manifest handles: checkpoints are matched by source topics
HANDLED_HERE = frozenset({"subtopology-renumbered"})
# findings not logged at a restart: building the topology already warned of its generated names (KIP-1111's warning)
SAID_AT_BUILD = frozenset({"generated-names"})


def library_version() -> str:
    """The installed streams-on-spark version (``unknown`` when run from a tree that is not installed)."""
    try:
        return metadata.version("streams-on-spark")
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class CheckpointManifest:
    """What a run wrote its checkpoints with; ``checkpoints`` maps subtopology id to its directory's name."""

    description: str
    partitions: Mapping[str, int]
    optimization: str
    snapshot_format: int
    library_version: str
    checkpoints: Mapping[int, str] = field(default_factory=dict)
    # repartition topics (decorated) that pipeline mode replaced by Spark's shuffle; absent in older manifests
    pipelined: tuple[str, ...] = ()
    # the topology's windows (upgrade.windows_of: describe() does not show them); None in older manifests
    windows: Optional[Mapping[str, Any]] = None

    def to_json(self) -> str:
        data = {"manifest_version": MANIFEST_VERSION, **asdict(self)}
        data["checkpoints"] = {str(sid): name for sid, name in sorted(self.checkpoints.items())}
        data["pipelined"] = sorted(self.pipelined)
        return json.dumps(data, indent=1, sort_keys=True) + "\n"

    @staticmethod
    def from_json(text: str, where: str) -> "CheckpointManifest":
        try:
            data = json.loads(text)
            if data.get("manifest_version") != MANIFEST_VERSION:
                raise TopologyException(f"{where}: manifest version {data.get('manifest_version')} is not supported "
                                        f"(this version of streams-on-spark reads {MANIFEST_VERSION}); it was "
                                        f"written by streams-on-spark {data.get('library_version')}")
            return CheckpointManifest(str(data["description"]), {str(t): int(n) for t, n in data["partitions"].items()},
                                      str(data["optimization"]), int(data["snapshot_format"]),
                                      str(data["library_version"]),
                                      {int(sid): str(name) for sid, name in data["checkpoints"].items()},
                                      tuple(str(t) for t in data.get("pipelined", ())), data.get("windows"))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise TopologyException(f"{where} is not a checkpoint manifest this version can read: {e}") from None


def read_manifest(location: Union[CheckpointLocation, str], spark: Any = None) -> Optional[CheckpointManifest]:
    """The manifest under checkpoint ``location``, or None when there is none (a first run, or checkpoints written
    before manifests existed); a remote location is read through ``spark``."""
    location = CheckpointLocation.of(location)
    text = location.read_text(MANIFEST, spark)
    return None if text is None else CheckpointManifest.from_json(text, location.join(MANIFEST))


def write_manifest(location: Union[CheckpointLocation, str], manifest: CheckpointManifest, spark: Any = None) -> None:
    """Replace the manifest under ``location`` (atomically on a local file system; a remote one through ``spark``)."""
    CheckpointLocation.of(location).write_text(MANIFEST, manifest.to_json(), spark)


def plan_restart(previous: Optional[CheckpointManifest], description: TopologyDescription,
                 partitions: Mapping[str, int], config: StreamsConfig, snapshot_format: int,
                 existing: frozenset[str] = frozenset(), *,
                 readable_formats: Collection[int] = (), pipelined: Collection[str] = (),
                 windows: Optional[Mapping[str, Any]] = None) -> CheckpointManifest:
    """The manifest for this run: the checkpoint directory of every subtopology, after checking the change from
    ``previous`` (None: nothing to compare with). ``existing`` names directories already under the location, which
    a new subtopology must not take; ``readable_formats`` the older task snapshot formats this version still reads;
    ``pipelined`` the repartition topics pipeline mode replaces in this run (see :func:`_check_pipelined`);
    ``windows`` the topology's windows (:func:`streams_on_spark.upgrade.windows_of`), checked against the previous
    run's. Raises :class:`TopologyException` on an unsafe change unless allowed."""
    optimization = config.get(TOPOLOGY_OPTIMIZATION)
    subtopologies = [s.id for s in description.subtopologies]
    if previous is None:
        if existing:
            log.warning("checkpoints %s were written without a topology manifest (an earlier version of "
                        "streams-on-spark): resuming them without an upgrade check", sorted(existing))
        checkpoints = {sid: f"subtopology-{sid}" for sid in subtopologies}
    else:
        _check_snapshot_format(previous, snapshot_format, readable_formats)
        _check_pipelined(previous, frozenset(pipelined), config)
        report = check_upgrade(previous.description, description,
                               before_config={TOPOLOGY_OPTIMIZATION: previous.optimization},
                               after_config={TOPOLOGY_OPTIMIZATION: optimization},
                               before_partitions=previous.partitions, after_partitions=partitions,
                               before_windows=previous.windows, after_windows=windows)
        _refuse_unsafe(report, config)
        checkpoints = _match_checkpoints(previous, description, existing)
    return CheckpointManifest(str(description), dict(partitions), optimization, snapshot_format, library_version(),
                              checkpoints, tuple(sorted(pipelined)), None if windows is None else dict(windows))


def _check_pipelined(previous: CheckpointManifest, pipelined: frozenset[str], config: StreamsConfig) -> None:
    """Refuse a run whose queries read other topics than the checkpoints' did: pipeline mode switched on or off, or
    a topology change that makes a subtopology run before another's shuffle (or stop doing so). A fused query's
    checkpoint holds the upstream's source offsets and no position in the repartition topic, and the default
    shape's the reverse, so neither can resume the other; ``upgrade.allow.unsafe`` does not change that."""
    before = frozenset(previous.pipelined)
    if before == pipelined:
        return
    mode = config.get(PIPELINE_MODE)
    if not before:
        change = ("pipeline.mode=true would replace the repartition topics " + ", ".join(sorted(pipelined))
                  + " by Spark's shuffle, but the checkpoints were written with them as topics")
    elif not pipelined:
        change = ("the checkpoints were written in pipeline mode (Spark's shuffle in place of the repartition "
                  "topics " + ", ".join(sorted(before)) + "), but this run "
                  + ("keeps them as topics (the topology changed)" if mode else "has pipeline.mode=false"))
    else:
        change = (f"pipeline mode replaced the repartition topics {sorted(before)} when the checkpoints were "
                  f"written, and would replace {sorted(pipelined)} now (the topology changed)")
    raise TopologyException(
        f"Refusing to start: {change}. A query's checkpoint holds the offsets of the topics it reads, so a "
        "subtopology cannot switch between reading a repartition topic and running after its upstream's shuffle "
        f"(this is not overridden by {UPGRADE_ALLOW_UNSAFE}). Ways out: start with {PIPELINE_MODE} as the "
        "checkpoints were written; start under a new application.id; or reset the application "
        "(`streams-on-spark reset`) and re-read the inputs.")


def _check_snapshot_format(previous: CheckpointManifest, snapshot_format: int, readable: Collection[int]) -> None:
    if previous.snapshot_format != snapshot_format and previous.snapshot_format not in readable:
        newer = previous.snapshot_format > snapshot_format
        raise TopologyException(
            f"the checkpoints were written by streams-on-spark {previous.library_version} with task snapshot format "
            f"{previous.snapshot_format}; this version ({library_version()}) reads format {snapshot_format}"
            + (": run the newer version, or reset the application" if newer else
               ": resume them with the version that wrote them and upgrade through each release, or reset the "
               "application"))


def _refuse_unsafe(report: UpgradeReport, config: StreamsConfig) -> None:
    """Refuse what loses state on Spark: unsafe findings, and those needing a restore (a store whose state moves to
    another subtopology: Kafka rebuilds it from its changelog; here it lives in the old subtopology's checkpoint)."""
    for finding in report.findings:
        if finding.severity != "safe" and finding.rule not in SAID_AT_BUILD:
            log.warning("topology upgrade: %s: %s", finding.subject, finding.detail)
    blocking = [f for f in report.findings if f.severity in ("unsafe", "restore") and f.rule not in HANDLED_HERE]
    if not blocking:
        return
    if config.get(UPGRADE_ALLOW_UNSAFE):
        log.warning("starting despite a topology change that loses state (%s=true): %s", UPGRADE_ALLOW_UNSAFE,
                    ", ".join(sorted({f.subject for f in blocking})))
        return
    moved = any(f.severity == "restore" for f in blocking)
    raise TopologyException(
        "The topology changed in a way its checkpoints cannot follow safely:\n" + str(report) + "\n"
        + ("A store that moves to another subtopology is not carried over: its state lives in the old "
           "subtopology's Spark checkpoint.\n" if moved else "")
        + "Ways out: start under a new application.id (blue/green: the old state and offsets stay with the old "
        "one); reset the application (`streams-on-spark reset`: its internal topics and checkpoints are deleted and "
        f"the inputs re-read); or set {UPGRADE_ALLOW_UNSAFE}=true to start anyway and accept the loss.")


def _sources(description: TopologyDescription) -> dict[int, frozenset[str]]:
    return {s.id: frozenset(t for node in s.nodes for t in getattr(node, "topics", ())) for s in description.subtopologies}


def _match_checkpoints(previous: CheckpointManifest, description: TopologyDescription,
                       existing: frozenset[str]) -> dict[int, str]:
    """Each subtopology keeps the checkpoint of the old one that read the same topics; a new one gets a directory
    no earlier run used."""
    old = _sources(TopologyDescription.parse(previous.description))
    by_sources = {topics: previous.checkpoints[sid] for sid, topics in old.items() if sid in previous.checkpoints}
    taken = set(existing) | set(previous.checkpoints.values())
    checkpoints: dict[int, str] = {}
    for sid, topics in sorted(_sources(description).items()):
        name = by_sources.pop(topics, None)
        if name is None:
            name, n = f"subtopology-{sid}", 1
            while name in taken:
                name, n = f"subtopology-{sid}-{n}", n + 1
            taken.add(name)
            log.info("subtopology %d (topics %s) is new: it starts from an empty checkpoint %s", sid, sorted(topics),
                     name)
        checkpoints[sid] = name
    return checkpoints

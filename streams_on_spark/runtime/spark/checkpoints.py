"""An application's checkpoint location, and checkpoints that can move.

:class:`CheckpointLocation` is the one place that tells a local directory from a Hadoop URI (hdfs://, s3a://,
file://): it joins names under it, lists the subtopology checkpoints, reads and writes small text files (the topology
manifest), asks whether a checkpoint holds state and deletes it, each locally or through Spark.

Spark 4.2's ``transformWithStateInPandas`` writes ``state/<operator>/_metadata/v2/<batch>`` with
``stateSchemaFilePaths`` naming its files under ``state/<operator>/_stateSchema`` absolutely. A checkpoint copied to
another directory (a backup restored, a fixture, a new volume) then fails on restart with "File file:/old/... does
not exist" — or, if the old one still exists, reads the old schema and creates directories there. Before a query
starts, :func:`relocate_state_schema_paths` points such paths at the same files inside the checkpoint they belong to.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import dataclass
from typing import Any, Optional, Union

from streams_on_spark.errors import TopologyException
from streams_on_spark.files import replace_file

log = logging.getLogger(__name__)
_SCHEMA_DIR = "/_stateSchema/"
SUBTOPOLOGY_PREFIX = "subtopology-"


@dataclass(frozen=True)
class CheckpointLocation:
    """Where an application's checkpoints live: a local directory, or a remote one (a URI: hdfs://, s3a://, file://)
    read, listed and written through a SparkSession (what a classic session and a Spark Connect one can both do)."""

    path: str

    def __post_init__(self) -> None:
        if not isinstance(self.path, str) or not self.path:
            raise ValueError(f"checkpoint location must be a non-empty path or URI, got {self.path!r}")

    @staticmethod
    def of(location: Union["CheckpointLocation", str]) -> "CheckpointLocation":
        """``location`` as a :class:`CheckpointLocation` (a path or URI, or one already)."""
        return location if isinstance(location, CheckpointLocation) else CheckpointLocation(location)

    @property
    def is_remote(self) -> bool:
        """A URI (hdfs://, s3a://, file://): read and written through Spark, not the local file system."""
        return "://" in self.path

    def join(self, name: str) -> str:
        """The path of ``name`` under this location."""
        return self.path.rstrip("/") + "/" + name if self.is_remote else os.path.join(self.path, name)

    def ensure_exists(self) -> None:
        """Create a local location's directory (a remote one is created by Spark's first write)."""
        if not self.is_remote:
            os.makedirs(self.path, exist_ok=True)

    def may_exist(self) -> bool:
        """Whether there may be checkpoints here: a local directory that exists; a remote location always may."""
        return self.is_remote or os.path.exists(self.path)

    def checkpoint_names(self, spark: Any = None) -> frozenset[str]:
        """The subtopology checkpoint directories (``subtopology-*``) here. A remote location is listed through
        Spark, by the ``metadata`` file every query's checkpoint holds."""
        if not self.is_remote:
            return frozenset(name for name in (os.listdir(self.path) if os.path.isdir(self.path) else ())
                             if name.startswith(SUBTOPOLOGY_PREFIX))
        pattern = self.join(SUBTOPOLOGY_PREFIX + "*/metadata")
        try:
            rows = self._session(spark).read.text(pattern).select("_metadata.file_path").distinct().collect()
        except Exception as e:   # pyspark's AnalysisException, classic or Connect
            if _path_not_found(e):
                return frozenset()
            raise
        return frozenset(str(row[0]).rstrip("/").split("/")[-2] for row in rows)

    def read_text(self, name: str, spark: Any = None) -> Optional[str]:
        """The text of file ``name`` here, or None when there is none."""
        path = self.join(name)
        if not self.is_remote:
            try:
                with open(path, encoding="utf-8") as f:
                    return f.read()
            except FileNotFoundError:
                return None
        try:
            rows = self._session(spark).read.option("wholetext", "true").text(path).collect()
        except Exception as e:   # pyspark's AnalysisException, classic or Connect
            if _path_not_found(e):
                return None
            raise
        return "".join(row[0] for row in rows) if rows else None

    def write_text(self, name: str, text: str, spark: Any = None) -> None:
        """Replace file ``name`` here with ``text`` (atomically on a local file system)."""
        path = self.join(name)
        if not self.is_remote:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            replace_file(path, text.encode("utf-8"), durable=True)
            return
        # one text file in a directory of that name, written by Spark: what a classic session and a Spark Connect
        # one (which has no JVM on the client) can both do, on any file system Spark's checkpoints are on
        session = self._session(spark)
        session.createDataFrame([(text,)], "value string").coalesce(1).write.mode("overwrite").text(path)

    def has_state(self, name: str, spark: Any = None) -> bool:
        """Whether checkpoint ``name`` here holds state yet (a remote one asked through Spark)."""
        if not self.is_remote:
            return os.path.isdir(os.path.join(self.join(name), "state"))
        try:
            return bool(self._session(spark).read.format("binaryFile").option("recursiveFileLookup", "true")
                        .load(self.join(name).rstrip("/") + "/state").limit(1).count())
        except Exception as e:   # no state directory yet
            if _path_not_found(e):
                return False
            raise

    def relocate_state_schema_paths(self, name: str) -> list[str]:
        """:func:`relocate_state_schema_paths` for checkpoint ``name`` here (a remote one is left alone)."""
        return [] if self.is_remote else relocate_state_schema_paths(self.join(name))

    def delete(self, spark: Any = None) -> None:
        """Delete everything here; a remote location through ``spark``'s JVM (a classic session)."""
        if not self.is_remote:
            shutil.rmtree(self.path)
            return
        fs, hadoop_path = hadoop_file_system(self.path, self._session(spark))
        fs.delete(hadoop_path, True)

    def _session(self, spark: Any) -> Any:
        """The session a remote location is read and written through."""
        if spark is None:
            raise TopologyException(f"checkpoint location {self.path} is remote: it is read through a SparkSession")
        return spark

    def __str__(self) -> str:
        return self.path


def _path_not_found(error: Exception) -> bool:
    """Spark's error for a path that does not exist (pyspark's AnalysisException, classic or Connect)."""
    return "PATH_NOT_FOUND" in str(error) or "Path does not exist" in str(error)


def hadoop_file_system(path: str, spark: Any) -> tuple[Any, Any]:
    """A remote checkpoint path (hdfs://, s3a://) and its Hadoop file system, through ``spark``'s JVM (a classic
    session: Spark Connect has no JVM on the client)."""
    jvm = spark.sparkContext._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    return hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hadoop_path


def relocate_state_schema_paths(checkpoint: str) -> list[str]:
    """Rewrite the schema paths in ``checkpoint``'s operator metadata that point outside it to the same files inside
    it (when they are there); the metadata files rewritten. Local checkpoints only (a remote one is left alone)."""
    if CheckpointLocation(checkpoint).is_remote:
        return []
    state = os.path.join(checkpoint, "state")
    if not os.path.isdir(state):
        return []
    rewritten = []
    for operator in sorted(os.listdir(state)):
        operator_dir = os.path.join(state, operator)
        metadata = os.path.join(operator_dir, "_metadata")
        if not os.path.isdir(metadata):
            continue
        for version in sorted(os.listdir(metadata)):
            version_dir = os.path.join(metadata, version)
            for name in sorted(os.listdir(version_dir)) if os.path.isdir(version_dir) else ():
                if not name.startswith(".") and _relocate(os.path.join(version_dir, name), operator_dir):
                    rewritten.append(os.path.join(version_dir, name))
    if rewritten:
        log.info("checkpoint %s was moved: pointed %d operator metadata file(s) at its own state schema files",
                 checkpoint, len(rewritten))
    return rewritten


def _relocate(path: str, operator_dir: str) -> bool:
    """One metadata file (``v2`` line, then JSON): its schema paths moved into ``operator_dir`` where needed."""
    with open(path, encoding="utf-8") as f:
        header, _, body = f.read().partition("\n")
    try:
        metadata = json.loads(body)
    except ValueError:
        return False   # not a format this code knows: leave it to Spark
    changed = False
    for store in metadata.get("stateStoreInfo", []) if isinstance(metadata, dict) else []:
        paths = store.get("stateSchemaFilePaths") or []
        for i, schema in enumerate(paths):
            local = schema[len("file:"):] if schema.startswith("file:") else schema
            if _SCHEMA_DIR not in local or os.path.realpath(local).startswith(os.path.realpath(operator_dir) + os.sep):
                continue
            moved = os.path.join(operator_dir, "_stateSchema", local.split(_SCHEMA_DIR, 1)[1])
            if os.path.exists(moved):
                paths[i] = "file:" + os.path.abspath(moved)
                changed = True
    if changed:
        with open(path, "w", encoding="utf-8") as f:
            f.write(header + "\n" + json.dumps(metadata, separators=(",", ":")))
        crc = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.crc")
        if os.path.exists(crc):
            os.remove(crc)   # Hadoop's checksum of the old content; it accepts a file without one
    return changed

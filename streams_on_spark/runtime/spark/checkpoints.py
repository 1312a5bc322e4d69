"""Checkpoints that can move: Spark records a stateful operator's schema files by absolute path.

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
from typing import Any

log = logging.getLogger(__name__)
_SCHEMA_DIR = "/_stateSchema/"


def hadoop_file_system(path: str, spark: Any) -> tuple[Any, Any]:
    """A remote checkpoint path (hdfs://, s3a://) and its Hadoop file system, through ``spark``'s JVM (a classic
    session: Spark Connect has no JVM on the client)."""
    jvm = spark.sparkContext._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    return hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hadoop_path


def relocate_state_schema_paths(checkpoint: str) -> list[str]:
    """Rewrite the schema paths in ``checkpoint``'s operator metadata that point outside it to the same files inside
    it (when they are there); the metadata files rewritten. Local checkpoints only (a remote one is left alone)."""
    if "://" in checkpoint:
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

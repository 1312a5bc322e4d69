"""A moved checkpoint's operator metadata points at its own state schema files again (Spark writes them absolute)."""
from __future__ import annotations

import json

from streams_on_spark.runtime.spark.checkpoints import relocate_state_schema_paths


def write_operator(checkpoint, schema_path: str) -> tuple:
    operator = checkpoint / "state" / "0"
    (operator / "_stateSchema" / "default").mkdir(parents=True)
    (operator / "_stateSchema" / "default" / "0_abc").write_bytes(b"schema")
    (operator / "_metadata" / "v2").mkdir(parents=True)
    metadata = operator / "_metadata" / "v2" / "0"
    body = {"operatorInfo": {"operatorId": 0}, "stateStoreInfo": [
        {"storeName": "default", "stateSchemaFilePaths": [schema_path]}], "operatorPropertiesJson": "{}"}
    metadata.write_text("v2\n" + json.dumps(body))
    (operator / "_metadata" / "v2" / ".0.crc").write_bytes(b"old checksum")
    return operator, metadata


def test_paths_into_the_old_location_are_moved_into_this_checkpoint(tmp_path):
    checkpoint = tmp_path / "restored" / "subtopology-0"
    operator, metadata = write_operator(checkpoint, "file:/gone/subtopology-0/state/0/_stateSchema/default/0_abc")
    assert relocate_state_schema_paths(str(checkpoint)) == [str(metadata)]
    header, body = metadata.read_text().split("\n", 1)
    assert header == "v2"
    paths = json.loads(body)["stateStoreInfo"][0]["stateSchemaFilePaths"]
    assert paths == [f"file:{operator}/_stateSchema/default/0_abc"]
    assert not (metadata.parent / ".0.crc").exists()
    assert relocate_state_schema_paths(str(checkpoint)) == []   # already in place: untouched


def test_paths_already_inside_or_whose_file_is_missing_stay(tmp_path):
    checkpoint = tmp_path / "cp"
    operator, metadata = write_operator(checkpoint, "file:/gone/state/0/_stateSchema/default/0_missing")
    before = metadata.read_text()
    assert relocate_state_schema_paths(str(checkpoint)) == []
    assert metadata.read_text() == before and (metadata.parent / ".0.crc").exists()
    assert relocate_state_schema_paths(str(tmp_path / "never-started")) == []
    assert relocate_state_schema_paths("hdfs://namenode/checkpoints") == []

"""The JVM class archive (streams_on_spark/runtime/spark/session.py, class_archive.py): named in the JVM's options only
where it exists, after Spark's jars on a local session's class path, and mapped by the suite's own session under
`make test`, which builds it (tests/integration/cluster/test_cluster_smoke.py: by a submitted driver and executors)."""
from __future__ import annotations

import os

import pytest

from streams_on_spark.runtime.spark.session import CLASS_ARCHIVE_ENV, QUIET, java_options_with_archive


def test_the_options_name_the_archive_only_where_the_file_exists(tmp_path, monkeypatch, caplog):
    monkeypatch.delenv(CLASS_ARCHIVE_ENV, raising=False)
    assert java_options_with_archive("-XX:TieredStopAtLevel=1") == "-XX:TieredStopAtLevel=1"
    assert not caplog.records
    archive = tmp_path / "spark-classes.jsa"
    monkeypatch.setenv(CLASS_ARCHIVE_ENV, str(archive))
    assert java_options_with_archive("-XX:TieredStopAtLevel=1") == "-XX:TieredStopAtLevel=1"   # not built yet
    [warning] = caplog.records   # a user's misspelt path is said, not silently ignored
    assert warning.levelname == "WARNING" and f"{CLASS_ARCHIVE_ENV}={archive}, but there is no such file" in warning.message
    archive.write_bytes(b"archive")
    assert java_options_with_archive("-XX:TieredStopAtLevel=1") == (
        f"-XX:TieredStopAtLevel=1 -XX:SharedArchiveFile={archive} {QUIET}")
    assert java_options_with_archive("") == f"-XX:SharedArchiveFile={archive} {QUIET}"


@pytest.mark.spark
def test_the_suites_local_session_maps_the_archive_make_test_built(spark, unavailable):
    """Under `make test` (which exports STREAMS_ON_SPARK_CLASS_ARCHIVE after building it) the session's JVM has the
    archive mapped: the classes came from it, not from Spark's jars one by one."""
    archive = os.environ.get(CLASS_ARCHIVE_ENV)
    if not archive:
        unavailable(f"{CLASS_ARCHIVE_ENV} is not set: run `make test`, or `make class-archive` and "
                    f"`export {CLASS_ARCHIVE_ENV}=$PWD/.deps/spark-classes.jsa`")
    assert os.path.isfile(archive), f"{CLASS_ARCHIVE_ENV}={archive}, but there is no such file"
    from pyspark import SparkContext
    jvm = SparkContext._gateway.proc.pid
    with open(f"/proc/{jvm}/maps") as maps:
        mapped = {line.split()[-1] for line in maps if len(line.split()) >= 6}
    assert os.path.realpath(archive) in mapped or archive in mapped, (
        f"the session's JVM (pid {jvm}) did not map {archive}: it started without the archive")


def test_a_local_sessions_own_jars_come_after_sparks_and_the_environment_is_restored(monkeypatch):
    """The local file system's jar goes last on the JVM's class path (SPARK_DIST_CLASSPATH, which Spark's launcher
    appends after its jars: the archive's class path must be the JVM's first entries), only while the JVM starts."""
    from streams_on_spark.runtime.spark.session import DIST_CLASSPATH, _appended_to_class_path
    monkeypatch.delenv(DIST_CLASSPATH, raising=False)
    with _appended_to_class_path(["/a.jar"]):
        assert os.environ[DIST_CLASSPATH] == "/a.jar"
    assert DIST_CLASSPATH not in os.environ
    monkeypatch.setenv(DIST_CLASSPATH, "/hadoop/*")
    with _appended_to_class_path(["/a.jar"]):
        assert os.environ[DIST_CLASSPATH] == "/hadoop/*:/a.jar"
    assert os.environ[DIST_CLASSPATH] == "/hadoop/*"
    with _appended_to_class_path([]):
        assert os.environ[DIST_CLASSPATH] == "/hadoop/*"

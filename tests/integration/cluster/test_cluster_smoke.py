"""The library runs on a real Spark standalone cluster, shipped to it as a user ships it: the wheel, via --py-files.

One small PySpark application (written per test) is spark-submitted to the cluster of `make spark-cluster-up`. Its
executors import streams_on_spark and compute Kafka's default partition (murmur2) of some keys twice: in an RDD
``mapPartitions``, and in a Python data source (the kind the library's embedded-topics source is) whose ``reader()``
runs in the planner, a Python process the driver's JVM starts, and whose ``read()`` runs on the executors. The
executors' interpreter hides this checkout's editable install (conftest `executor_python`), so the code they run is
the wheel's. The wheel goes to --py-files under a ``.zip`` name: Spark puts a ``.whl`` on the driver's path only
(test_a_whl_in_py_files_reaches_only_the_driver).
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import textwrap
from pathlib import Path

import pytest

from streams_on_spark.partitioner import murmur2, partition_for_key
from streams_on_spark.runtime.spark.session import CLASS_ARCHIVE_ENV

pytestmark = [pytest.mark.cluster, pytest.mark.spark]

NUM_PARTITIONS = 7
KEYS = [f"key-{i}" for i in range(40)] + ["", "a", "ab", "abc", "ünïcode-ключ-🔑", "x" * 300]

APP = textwrap.dedent('''\
    """Cluster smoke app: executors import streams_on_spark and compute Kafka's default partition of keys."""
    import json
    import os
    import socket
    import sys
    import time

    T0 = time.monotonic()

    from pyspark.sql import SparkSession
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    NUM_PARTITIONS = int(sys.argv[1])
    KEYS = json.loads(sys.argv[2])
    EXECUTOR_CLASS = b"org.apache.spark.executor.CoarseGrainedExecutorBackend"


    def archives(pid):
        """The class archives (.jsa) the JVM ``pid`` has mapped."""
        with open(f"/proc/{pid}/maps") as maps:
            return sorted({line.split()[-1] for line in maps if line.rstrip().endswith(".jsa")})


    def where():
        """Where this Python process is and which streams_on_spark it imports (raises if it cannot)."""
        import streams_on_spark
        jvm = os.getppid()
        while jvm > 1:  # Python worker -> pyspark.daemon -> the JVM that started them
            with open(f"/proc/{jvm}/cmdline", "rb") as f:
                if EXECUTOR_CLASS in f.read().split(b"\\0"):
                    break
            with open(f"/proc/{jvm}/stat") as f:
                jvm = int(f.read().rsplit(")", 1)[1].split()[1])
        return {"pid": os.getpid(), "host": socket.gethostname(), "cwd": os.getcwd(),
                "executor_jvm": jvm if jvm > 1 else None, "module": streams_on_spark.__file__,
                "archives": archives(jvm) if jvm > 1 else []}


    def partitions(keys):
        from streams_on_spark.partitioner import murmur2, partition_for_key
        here = where()
        for key in keys:
            data = key.encode("utf-8")
            yield {"key": key, "murmur2": murmur2(data), "partition": partition_for_key(data, NUM_PARTITIONS), **here}


    class KeysSource(DataSource):
        """reader() runs in the driver-side planner process, read() on the executors: both import the library."""

        @classmethod
        def name(cls):
            return "smoke-keys"

        def schema(self):
            return "key string, partition int, planner string, executor string"

        def reader(self, schema):
            return KeysReader(json.dumps(where()))


    class KeysReader(DataSourceReader):
        def __init__(self, planner):
            self.planner = planner

        def partitions(self):
            return [InputPartition(i) for i in range(2)]

        def read(self, partition):
            from streams_on_spark.partitioner import partition_for_key
            executor = json.dumps(where())
            for key in KEYS[partition.value::2]:
                yield key, partition_for_key(key.encode("utf-8"), NUM_PARTITIONS), self.planner, executor


    def timing(phase):
        print(f"TIMING {phase} {time.monotonic() - T0:.1f}s", flush=True)


    spark = SparkSession.builder.appName("streams-on-spark-cluster-smoke").getOrCreate()
    sc = spark.sparkContext
    timing("session")
    try:
        import streams_on_spark
        driver_module = streams_on_spark.__file__
    except ImportError as e:
        driver_module = repr(e)
    print("DRIVER " + json.dumps({"master": sc.getConf().get("spark.master"), "app_id": sc.applicationId,
                                  "pid": os.getpid(), "host": socket.gethostname(), "module": driver_module,
                                  "archives": archives(os.getppid())}),   # spark-submit's JVM started this Python
          flush=True)
    rows = sc.parallelize(KEYS, 2).mapPartitions(partitions).collect()
    print("RDD " + json.dumps(rows), flush=True)
    timing("rdd")
    spark.dataSource.register(KeysSource)
    source_rows = spark.read.format("smoke-keys").load().collect()
    print("SOURCE " + json.dumps([r.asDict() for r in source_rows]), flush=True)
    timing("source")
    spark.stop()
    timing("stop")
''')


@pytest.fixture
def app(tmp_path) -> Path:
    path = tmp_path / "cluster_smoke_app.py"
    path.write_text(APP)
    return path


def _app_args() -> tuple[str, str]:
    return str(NUM_PARTITIONS), json.dumps(KEYS)


def _expected() -> dict[str, tuple[int, int]]:
    """The same computation in this process (the checkout's code): key -> (murmur2, partition)."""
    return {k: (murmur2(k.encode()), partition_for_key(k.encode(), NUM_PARTITIONS)) for k in KEYS}


def test_executor_python_hides_the_editable_install_but_imports_the_wheel(executor_python, library_wheel,
                                                                         library_py_files, tmp_path):
    code = "import streams_on_spark.connectors.embedded as p; print(p.__file__)"
    hidden = subprocess.run([str(executor_python), "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    assert hidden.returncode != 0 and "No module named 'streams_on_spark'" in hidden.stderr, hidden
    for shipped in (library_wheel, library_py_files):
        env = {**os.environ, "PYTHONPATH": str(shipped)}
        found = subprocess.run([str(executor_python), "-c", code], cwd=tmp_path, capture_output=True, text=True,
                               timeout=120, env=env)
        assert found.returncode == 0, found.stderr
        assert found.stdout.strip() == f"{shipped}/streams_on_spark/connectors/embedded.py"


def test_the_wheel_runs_on_the_cluster(spark_submit, spark_cluster, library_py_files, app):
    run = spark_submit(app, *_app_args(), py_files=[library_py_files])
    assert run.returncode == 0, run.failure()
    [driver] = [json.loads(line) for line in run.lines("DRIVER ")]
    [rdd] = [json.loads(line) for line in run.lines("RDD ")]
    [source] = [json.loads(line) for line in run.lines("SOURCE ")]

    # It ran on the cluster, in executors of this cluster's worker, not in the driver.
    assert driver["master"] == spark_cluster.master
    app_dir = spark_cluster.work_dir / driver["app_id"]
    assert app_dir.is_dir(), f"the worker made no dir for {driver['app_id']} in {spark_cluster.work_dir}"
    executors = {(r["pid"], r["executor_jvm"], r["cwd"]) for r in rdd}
    assert all(pid != driver["pid"] and jvm not in (None, driver["pid"]) for pid, jvm, _ in executors), executors
    assert {jvm for _, jvm, _ in executors} <= run.executor_pids_seen, (
        f"the executor JVMs the app reported {executors} were not all found by executor_pids() while it ran "
        f"({sorted(run.executor_pids_seen)})")
    assert all(Path(cwd).parent == app_dir for _, _, cwd in executors), executors
    assert {r["host"] for r in rdd} == {socket.gethostname()}  # one machine: same host, other processes

    # The executors' code came from the shipped file, not from this checkout.
    # (executors import it from their own copy, ./<name>.zip in their working dir; the planner from the driver's)
    shipped = f"/{library_py_files.name}/streams_on_spark/__init__.py"
    assert all(r["module"].endswith(shipped) for r in rdd), {r["module"] for r in rdd}

    # Results equal the same computation done here.
    expected = _expected()
    assert {r["key"]: (r["murmur2"], r["partition"]) for r in rdd} == expected
    assert {r["key"]: r["partition"] for r in source} == {k: p for k, (_, p) in expected.items()}

    # The Python data source's planner (a Python process the driver JVM starts, with spark.pyspark.python) and its
    # executors got the library from --py-files too.
    planners = {r["planner"] for r in source}
    assert len(planners) == 1
    planner = json.loads(planners.pop())
    assert planner["pid"] != driver["pid"] and planner["executor_jvm"] is None, planner
    assert planner["module"].endswith(shipped), planner
    assert all(json.loads(r["executor"])["module"].endswith(shipped) for r in source), source

    # Under `make test` the driver's and the executors' JVMs started from the class archive it built (their class path
    # is Spark's jars, which the archive was written with; conftest's fast_jvm_env passes it).
    archive = os.environ.get(CLASS_ARCHIVE_ENV)
    if archive:
        assert os.path.realpath(archive) in driver["archives"], driver
        assert all(os.path.realpath(archive) in r["archives"] for r in rdd), {r["executor_jvm"]: r["archives"] for r in rdd}

    # When the application ends, the worker stops its executors.
    assert spark_cluster.wait_for_no_executors() == [], "executors of a finished application still run"


def test_without_py_files_the_executors_cannot_import_the_library(spark_submit, app):
    run = spark_submit(app, *_app_args())
    assert run.returncode != 0, "the executors imported streams_on_spark though nothing shipped it:\n" + run.stdout
    assert "ModuleNotFoundError: No module named 'streams_on_spark'" in run.output, run.failure()
    assert run.lines("RDD ") == []


def test_a_whl_in_py_files_reaches_only_the_driver(spark_submit, library_wheel, app):
    """Spark ships a ``.whl`` given to --py-files but puts it on the driver's path only; executors cannot import it.

    Documents why `library_py_files` ships the wheel under a ``.zip`` name. Should Spark ever put wheels on the
    executors' sys.path, this fails, and the rename can go."""
    run = spark_submit(app, *_app_args(), py_files=[library_wheel])
    [driver] = [json.loads(line) for line in run.lines("DRIVER ")]
    assert driver["module"] == f"{library_wheel}/streams_on_spark/__init__.py", driver
    assert run.returncode != 0, "executors imported a .whl shipped with --py-files:\n" + run.stdout
    assert "ModuleNotFoundError: No module named 'streams_on_spark'" in run.output, run.failure()

"""Spark's Python workers forked from a warm process: the launcher Spark runs behaves as ``python -m`` would."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from streams_on_spark.runtime.spark.fork_server import ForkServer

WORKER = textwrap.dedent("""
    import json, os, sys
    print(json.dumps({"pid": os.getpid(), "ppid": os.getppid(), "argv": sys.argv[1:], "cwd": os.getcwd(),
                      "env": os.environ.get("WORKER_SETTING"), "name": __name__, "path": sys.path[:2],
                      "preloaded": "fork_server_preload" in sys.modules}), flush=True)
    sys.stderr.write("to stderr\\n")
    line = sys.stdin.readline()
    if line.strip() == "sleep":
        import time
        time.sleep(60)
    sys.exit(int(line or 0))
""")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    modules = tmp_path_factory.mktemp("modules")
    (modules / "fork_server_worker.py").write_text(WORKER)
    (modules / "fork_server_preload.py").write_text("")
    (modules / "fork_server_quiet.py").write_text("import sys; print('debug line'); sys.stderr.write('err')")
    env_path = os.environ.get("PYTHONPATH")   # the server imports its preload list from the environment it starts in
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(modules), env_path) if p)
    try:
        server = ForkServer(sys.executable, preload=("fork_server_preload",), quiet=("fork_server_quiet",))
    finally:
        if env_path is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = env_path
    server.modules = str(modules)
    yield server
    server.close()


def launch(server, *args, env=None, cwd=None):
    worker_env = {**os.environ, "PYTHONPATH": server.modules, "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0"),
                  "PYTHONUNBUFFERED": "YES", "WORKER_SETTING": "from-spark", **(env or {})}
    return subprocess.Popen([server.launcher, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=worker_env, cwd=cwd, text=True)


def started(process) -> dict:
    return json.loads(process.stdout.readline())


def test_a_worker_is_forked_with_the_launchers_arguments_environment_directory_and_streams(server, tmp_path):
    process = launch(server, "-m", "fork_server_worker", "a", "b", cwd=tmp_path)
    worker = started(process)
    out, err = process.communicate("3\n", timeout=30)
    assert process.returncode == 3                              # the worker's exit status, through the launcher
    assert worker["ppid"] == server.process.pid                 # forked by the server, not started by the launcher
    assert worker["preloaded"]                                  # with what the server imported
    assert worker["argv"] == ["a", "b"] and worker["name"] == "__main__"
    assert worker["cwd"] == str(tmp_path) and worker["env"] == "from-spark"
    assert worker["path"] == [str(tmp_path), server.modules]    # as `python -m` starts: its directory, PYTHONPATH
    assert err == "to stderr\n"


def test_a_quiet_modules_worker_prints_nothing_to_standard_output(server):
    """pyspark's transformWithStateInPandas driver worker talks to Spark over its socket and prints debug lines."""
    process = launch(server, "-m", "fork_server_quiet")
    out, err = process.communicate(timeout=30)
    assert (process.returncode, out, err) == (0, "", "err")


def test_signals_reach_the_worker_and_the_launcher_ends_as_it_did(server):
    process = launch(server, "-m", "fork_server_worker")
    worker = started(process)
    process.stdin.write("sleep\n")
    process.stdin.flush()
    process.send_signal(signal.SIGTERM)                         # what Spark's Process.destroy() sends
    assert process.wait(timeout=30) == -signal.SIGTERM
    assert _gone(worker["pid"])


def test_a_launcher_killed_outright_takes_its_worker_along(server):
    process = launch(server, "-m", "fork_server_worker")
    worker = started(process)
    process.stdin.write("sleep\n")
    process.stdin.flush()
    process.kill()
    process.wait(timeout=30)
    assert _gone(worker["pid"])


@pytest.mark.parametrize("env", [{"PYTHONHASHSEED": "123"}, {"PYTHONOPTIMIZE": "1"}, {"OMP_NUM_THREADS": "4"}])
def test_a_worker_the_server_cannot_reproduce_starts_its_own_interpreter(server, env):
    """An interpreter setting from the environment other than the server's: the launcher runs Python itself."""
    process = launch(server, "-m", "fork_server_worker", env=env)
    worker = started(process)
    process.communicate("0\n", timeout=30)
    assert process.returncode == 0
    assert worker["pid"] == process.pid and not worker["preloaded"]   # the launcher exec'd the interpreter


def test_anything_but_a_module_runs_in_the_interpreter_itself(server):
    result = subprocess.run([server.launcher, "-c", "import os, sys; print(os.getpid()); sys.exit(4)"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 4 and result.stdout.strip()


def test_without_its_server_a_launcher_starts_its_own_interpreter():
    server = ForkServer(sys.executable, preload=())
    try:
        server.process.kill()
        server.process.wait(timeout=30)
        result = subprocess.run([server.launcher, "-m", "json.tool"], input='{"a": 1}', capture_output=True,
                                text=True, timeout=30)
        assert result.returncode == 0 and '"a": 1' in result.stdout
    finally:
        server.close()


def test_the_server_ends_with_the_process_that_started_it():
    script = ("import sys; from streams_on_spark.runtime.spark.fork_server import ForkServer; "
              "s = ForkServer(sys.executable, preload=()); print(s.process.pid, flush=True); import os; os._exit(0)")
    pid = int(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60).stdout)
    assert _gone(pid)


def test_a_local_session_starts_its_workers_through_the_server(monkeypatch):
    from streams_on_spark.runtime.spark import session

    class Context:
        _active_spark_context = None

    seen = {}
    monkeypatch.setattr("pyspark.SparkContext", Context)
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", sys.executable)
    with session._forked_workers():
        seen["inside"] = os.environ["PYSPARK_PYTHON"]
        seen["driver"] = os.environ["PYSPARK_DRIVER_PYTHON"]
    assert seen["inside"] == session._fork_server.launcher      # what the new context keeps as its pythonExec
    assert seen["driver"] == session._fork_server.launcher      # the JVM's defaultPythonExec (data source lookup)
    assert os.environ["PYSPARK_PYTHON"] == sys.executable        # and this process's children start Python as before
    assert os.environ["PYSPARK_DRIVER_PYTHON"] == sys.executable
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", "/usr/bin/another-python")   # not this Python: left to Spark
    with session._forked_workers():
        assert os.environ["PYSPARK_DRIVER_PYTHON"] == "/usr/bin/another-python"
    monkeypatch.setenv(session.FORKED_WORKERS, "false")
    with session._forked_workers():
        assert os.environ["PYSPARK_PYTHON"] == sys.executable


def test_without_pyspark_python_the_workers_python_is_pysparks_default_and_stays_unset(monkeypatch, tmp_path):
    """spark-submit may leave PYSPARK_PYTHON unset (pyspark then starts ``python3``): not this process's Python here,
    so Spark starts its workers itself, and the variable is still unset afterwards."""
    from streams_on_spark.runtime.spark import session

    class Context:
        _active_spark_context = None

    (tmp_path / "python3").symlink_to(sys.executable)   # on PATH, but not sys.executable's own path
    monkeypatch.setattr("pyspark.SparkContext", Context)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with session._forked_workers():
        assert "PYSPARK_PYTHON" not in os.environ
    assert "PYSPARK_PYTHON" not in os.environ


def test_this_python_through_a_linked_directory_is_this_python(tmp_path):
    """A venv reached through a linked directory (a worktree's, a deployment's ``current``) is this Python: its
    workers are forked; the base interpreter or a link to this program from elsewhere is not."""
    from streams_on_spark.runtime.spark import session
    bin_dir = os.path.dirname(os.path.abspath(sys.executable))
    (tmp_path / "linked-bin").symlink_to(bin_dir, target_is_directory=True)
    assert session._is_this_python(str(tmp_path / "linked-bin" / os.path.basename(sys.executable)))
    assert session._is_this_python(sys.executable)
    (tmp_path / "python3").symlink_to(sys.executable)
    assert not session._is_this_python(str(tmp_path / "python3"))
    assert not session._is_this_python(None)
    if os.path.realpath(sys.executable) != os.path.abspath(sys.executable):   # a venv: its python links to the base
        assert not session._is_this_python(os.path.realpath(sys.executable))


def _gone(pid: int, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def test_every_dsl_and_operator_module_is_preloaded():
    """A topology's processors unpickle from the DSL's and its operators' modules: each one in those packages'
    directories (a module added or renamed too) is in what the server imports before it forks."""
    import streams_on_spark
    from streams_on_spark.runtime.spark.fork_server import PRELOAD
    root = Path(streams_on_spark.__file__).parent
    on_disk = {f"streams_on_spark.{package}.{path.stem}" for package in ("dsl", "operators")
               for path in (root / package).glob("*.py") if path.stem != "__init__"}
    assert len(on_disk) > 10   # the packages were found where they are
    assert sorted(on_disk - set(PRELOAD)) == []


@pytest.mark.spark
def test_a_local_sessions_workers_start_with_what_they_import_when_they_run(spark, tmp_path):
    """The local session's server preloads the workers' modules and what they import only when they run (the
    state server's protocol, pandas conversion, the DSL's modules a topology unpickles from): a forked worker
    starts with every one of them imported (a renamed or missing module would not be), and frozen out of its
    cyclic collections (pyspark's worker collects after every task)."""
    from streams_on_spark.runtime.spark import session
    from streams_on_spark.runtime.spark.fork_server import PRELOAD
    run_time_imports = ["pyspark.sql.streaming.proto.StateMessage_pb2", "pyspark.testing.utils",
                        "pyarrow.pandas_compat", "rocksdict", "streams_on_spark.dsl.builder",
                        "streams_on_spark.operators.aggregations"]
    (tmp_path / "preload_probe.py").write_text(
        "import gc, json, sys\n"
        f"print(json.dumps([[m for m in {run_time_imports + list(PRELOAD)!r} if m not in sys.modules],"
        " gc.get_freeze_count() > 0]))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
           "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0"), "PYTHONUNBUFFERED": "YES"}
    result = subprocess.run([session._fork_server.launcher, "-m", "preload_probe"], capture_output=True, text=True,
                            env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    missing, frozen = json.loads(result.stdout)
    assert missing == []
    assert frozen   # inherited out of the worker's collections: they neither traverse nor copy it

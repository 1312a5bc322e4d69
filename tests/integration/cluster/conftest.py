"""Fixtures of the Spark standalone cluster tests: the cluster `make test` starts, and the library shipped to it.

`make test` starts a master and one worker on loopback (`make spark-cluster-up`, deps/spark_cluster_ctl.py), builds
the library's wheel (`make wheel`) and exports:

    STREAMS_ON_SPARK_SPARK_MASTER       the master URL, e.g. spark://127.0.0.1:41234
    STREAMS_ON_SPARK_WHEEL              the wheel, dist/streams_on_spark-<version>-py3-none-any.whl
    STREAMS_ON_SPARK_SPARK_CLUSTER_DIR  the cluster's run dir (default .deps/spark-cluster-run): logs, work dirs

A cluster test then FAILS when the master does not answer or the wheel is missing. Without the variables (plain
``pytest`` on a machine where nobody ran `make spark-cluster-up`) the tests are skipped with the reason, except in
CI (``CI=true``), where they fail: CI must never pass with its cluster tests silently skipped (the same rule as
tests/integration/kafka).

The executors must get the library from what the application ships, never from this checkout: on this machine the
venv has the project installed in editable mode, which any Python on the machine would find. `executor_python` is
the venv's interpreter with that editable install hidden, given to Spark as ``spark.pyspark.python``.

Shipping: Spark's ``--py-files`` copies every file to the executors, but puts only ``.zip``, ``.egg`` and ``.jar``
files on their ``sys.path`` (``SparkContext.PACKAGE_EXTENSIONS``); a ``.whl`` reaches only the driver (through its
PYTHONPATH), and the executors and the driver-side Python data source planner fail with ModuleNotFoundError. A
pure-Python wheel is a zip archive with the packages at its root, so `library_py_files` ships the very same file
under a ``.zip`` name.
"""
from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

MASTER_ENV = "STREAMS_ON_SPARK_SPARK_MASTER"
WHEEL_ENV = "STREAMS_ON_SPARK_WHEEL"
RUN_DIR_ENV = "STREAMS_ON_SPARK_SPARK_CLUSTER_DIR"
ROOT = Path(__file__).resolve().parents[3]
VENV_PYTHON = Path(sys.executable)  # .venv/bin/python (pytest runs from the venv); not resolved: it is the venv


def _load_ctl():
    """deps/spark_cluster_ctl.py, the one place that knows the run dir's layout and how to find its processes."""
    spec = importlib.util.spec_from_file_location("streams_on_spark_cluster_ctl", ROOT / "deps" / "spark_cluster_ctl.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ctl = _load_ctl()


def pytest_configure(config: pytest.Config) -> None:
    # pyproject's marker list is not ours to edit; registering here satisfies --strict-markers for this directory.
    config.addinivalue_line("markers", "cluster: submits to the Spark standalone cluster of `make spark-cluster-up`")


def cluster_run_dir() -> Path:
    return Path(os.environ.get(RUN_DIR_ENV) or ctl.DEFAULT_RUN).resolve()


def executor_pids(run_dir: Path | None = None) -> list[int]:
    """Pids of the executor JVMs (CoarseGrainedExecutorBackend) the cluster's worker runs now, from /proc: those
    whose working dir (or SPARK_WORKER_DIR) is inside the cluster's run dir. Never another cluster's."""
    return ctl.executor_pids((run_dir or cluster_run_dir()).resolve())


@dataclass(frozen=True)
class SparkCluster:
    master: str
    run_dir: Path

    @property
    def work_dir(self) -> Path:
        """SPARK_WORKER_DIR: ``<app id>/<executor id>/`` per executor, with its stdout/stderr and shipped files."""
        return self.run_dir / "work"

    def executor_pids(self) -> list[int]:
        return executor_pids(self.run_dir)

    def state(self) -> dict | None:
        """The master web UI's JSON (workers, cores, active/completed apps), or None if not this run dir's master."""
        info = ctl.read_cluster(self.run_dir)
        return ctl.master_state(info["master_webui"], 10) if info and info.get("master") == self.master else None

    def wait_for_no_executors(self, timeout_s: float = 60) -> list[int]:
        """Wait until the worker has reaped every executor; returns those still running at the timeout."""
        deadline = time.monotonic() + timeout_s
        while (left := self.executor_pids()) and time.monotonic() < deadline:
            time.sleep(0.5)
        return left


@pytest.fixture(scope="session")
def spark_master(unavailable) -> str:
    """The master URL of `make spark-cluster-up`; the master accepts connections and (when it is this checkout's
    cluster) its web UI reports itself ALIVE with at least one ALIVE worker."""
    url = os.environ.get(MASTER_ENV, "").strip()
    if not url:
        unavailable(f"{MASTER_ENV} is not set: run `make test`, or `make spark-cluster-up` and "
                    f"`export {MASTER_ENV}=<the URL it prints>`")
    host, _, port = url.removeprefix("spark://").rpartition(":")
    if not url.startswith("spark://") or not host or not port.isdigit():
        pytest.fail(f"{MASTER_ENV}={url!r} is not a spark://host:port URL", pytrace=False)
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        pytest.fail(f"{MASTER_ENV}={url}, but no Spark master answers there ({e}); is `make spark-cluster-up` "
                    "running?", pytrace=False)
    run = cluster_run_dir()
    info = ctl.read_cluster(run)
    if info and info.get("master") == url:
        state = ctl.master_state(info["master_webui"], 10)
        workers = ctl.alive_workers(state)
        if not state or state.get("status") != "ALIVE" or not workers:
            pytest.fail(f"the Spark master {url} accepts connections, but its web UI {info['master_webui']} reports "
                        f"status {(state or {}).get('status', 'no answer')} with {len(workers)} ALIVE workers; "
                        f"logs in {run / 'logs'}", pytrace=False)
    return url


@pytest.fixture(scope="session")
def spark_cluster(spark_master) -> SparkCluster:
    """The cluster as an object: master URL, run dir, and its executor processes (for tests that kill them)."""
    return SparkCluster(spark_master, cluster_run_dir())


@pytest.fixture(scope="session")
def library_wheel(unavailable) -> Path:
    """The library's wheel (`make wheel`), as an application ships it."""
    path = os.environ.get(WHEEL_ENV, "").strip()
    if not path:
        unavailable(f"{WHEEL_ENV} is not set: run `make test`, or `make wheel` and "
                    f"`export {WHEEL_ENV}=$PWD/dist/streams_on_spark-<version>-py3-none-any.whl`")
    wheel = Path(path).resolve()
    if not wheel.is_file() or not zipfile.is_zipfile(wheel):
        pytest.fail(f"{WHEEL_ENV}={path}, but that is not a wheel file; run `make wheel`", pytrace=False)
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = {"streams_on_spark/__init__.py", "streams_on_spark/connectors/embedded.py"} - names
    if missing:
        pytest.fail(f"the wheel {wheel} lacks {sorted(missing)}; rebuild it with `make wheel`", pytrace=False)
    return wheel


@pytest.fixture(scope="session")
def library_py_files(library_wheel, tmp_path_factory) -> Path:
    """The wheel under a ``.zip`` name, the form ``--py-files`` puts on the executors' sys.path (see the module
    docstring): byte for byte the same file."""
    target = tmp_path_factory.mktemp("py-files") / (library_wheel.name.removesuffix(".whl") + ".zip")
    shutil.copyfile(library_wheel, target)
    return target


# Runs in every interpreter started through the wrapper, after site-packages' .pth files (which install setuptools'
# editable finder) were processed: removes that finder, its path hooks and entries, and the checkout's directories.
SITECUSTOMIZE = '''\
"""Hide the editable install of streams_on_spark (written by tests/integration/cluster/conftest.py)."""
import os
import sys


def _hide_editable_install():
    finders = {name: module for name, module in list(sys.modules.items())
               if name.startswith("__editable__") and "streams_on_spark" in name}
    hidden = set()
    for module in finders.values():
        for path in getattr(module, "MAPPING", {}).values():
            hidden.add(os.path.abspath(path))
            hidden.add(os.path.dirname(os.path.abspath(path)))  # the checkout: streams_on_spark/ sits in it
    sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, "__module__", None) not in finders]
    sys.path_hooks[:] = [h for h in sys.path_hooks if getattr(h, "__module__", None) not in finders]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") not in hidden and "__editable__" not in p]
    for path in list(sys.path_importer_cache):
        if os.path.abspath(path or ".") in hidden:
            del sys.path_importer_cache[path]
    for name in finders:
        del sys.modules[name]


_hide_editable_install()
'''


@pytest.fixture(scope="session")
def executor_python(tmp_path_factory) -> Path:
    """An executable for ``spark.pyspark.python``: the venv's python (same pyspark, pandas, pyarrow) with the editable
    install of streams_on_spark hidden, so a Python worker can import the library only from what the application
    shipped. A wrapper script puts a dir holding a ``sitecustomize.py`` first on PYTHONPATH (keeping the PYTHONPATH
    Spark gives its workers) and execs the venv's python. Verified here: plain ``import streams_on_spark`` fails.

    Not hidden: the directory Python itself puts first on sys.path for ``-c``/a script (added after site runs);
    Spark's workers start in their executor's dir, never in the checkout."""
    base = tmp_path_factory.mktemp("executor-python")
    hide = base / "hide-editable-install"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(SITECUSTOMIZE)
    wrapper = base / "python"
    wrapper.write_text(
        "#!/bin/sh\n"
        "# The venv's python without the editable install of streams_on_spark (tests/integration/cluster).\n"
        f'PYTHONPATH={shlex.quote(str(hide))}"${{PYTHONPATH:+:$PYTHONPATH}}" exec {shlex.quote(str(VENV_PYTHON))} "$@"\n')
    wrapper.chmod(0o755)
    probe = subprocess.run([str(wrapper), "-c", "import pyspark, streams_on_spark; print(streams_on_spark.__file__)"],
                           cwd=base, capture_output=True, text=True, timeout=120)
    if "No module named 'streams_on_spark'" not in probe.stderr:
        pytest.fail(f"{wrapper} should hide the editable install, but `import streams_on_spark` gave exit "
                    f"{probe.returncode}: {probe.stdout.strip()} {probe.stderr.strip()[-1500:]}", pytrace=False)
    return wrapper


# ---------------------------------------------------------------------------------------------- spark-submit


@dataclass(repr=False)
class Submission:
    """A finished spark-submit: exit code, output, and the executor JVMs seen running under the cluster meanwhile.

    The Python driver's own traceback goes to stdout (PythonRunner pipes it there); Spark's log to stderr."""
    command: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    executor_pids_seen: set[int] = field(default_factory=set)

    def __repr__(self) -> str:
        return f"<spark-submit exit {self.returncode} after {self.seconds:.0f}s>"

    @property
    def output(self) -> str:
        return self.stdout + "\n" + self.stderr

    def lines(self, prefix: str) -> list[str]:
        return [line[len(prefix):].strip() for line in self.stdout.splitlines() if line.startswith(prefix)]

    def failure(self) -> str:
        """What a failed run said: its exception lines, then the ends of stdout and stderr."""
        said = [line for line in self.output.splitlines()
                if ("Exception" in line or "Error" in line or line.startswith("Caused by"))
                and not line.strip().startswith("at ")]
        return ("\n".join(said[:40]) + f"\n--- exit {self.returncode} after {self.seconds:.0f}s; stdout ---\n"
                + self.stdout[-2000:] + "\n--- end of stderr ---\n" + self.stderr[-3000:])


def submit_env() -> dict[str, str]:
    """spark-submit's environment: SPARK_HOME = the installed pyspark, loopback, and nothing that would put the
    checkout on a Python path behind the test's back (PYTHONPATH and PYSPARK_* of the calling shell are dropped)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "PYTHON", "SPARK_"))}
    env.update(SPARK_HOME=str(ctl.spark_home()), SPARK_LOCAL_IP="127.0.0.1", SPARK_LOCAL_HOSTNAME="127.0.0.1")
    return env


@pytest.fixture
def spark_submit(spark_cluster, executor_python, fast_jvm_env, tmp_path) -> Callable[..., Submission]:
    """Runs ``.venv/bin/spark-submit --master <cluster> ... app args`` in tmp_path and returns a Submission.

    Driver: the venv's python; executors: `executor_python`. Everything on loopback, no UI, the driver's scratch in
    tmp_path, a failed task not retried (a failure shows at once). ``py_files`` becomes ``--py-files``; ``conf``
    adds ``--conf`` pairs; ``while_running(proc)`` is called about every 0.25 s while spark-submit runs; ``env`` is
    added to spark-submit's environment (the driver's, never the executors'), after `fast_jvm_env`."""
    spark_submit_bin = VENV_PYTHON.parent / "spark-submit"
    assert spark_submit_bin.exists(), f"pyspark's spark-submit should be installed beside {VENV_PYTHON}"

    def run(app: Path, *app_args: str, py_files: list[Path] | None = None, conf: dict[str, str] | None = None,
            timeout_s: float = 300, while_running: Callable[[subprocess.Popen], None] | None = None,
            env: dict[str, str] | None = None) -> Submission:
        settings = {
            "spark.pyspark.python": str(executor_python),
            "spark.pyspark.driver.python": str(VENV_PYTHON),
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.local.dir": str(tmp_path / "driver-local"),
            "spark.task.maxFailures": "1",
            **(conf or {}),
        }
        command = [str(spark_submit_bin), "--master", spark_cluster.master]
        if py_files:
            command += ["--py-files", ",".join(str(p) for p in py_files)]
        for key, value in settings.items():
            command += ["--conf", f"{key}={value}"]
        command += [str(app), *app_args]
        (tmp_path / "driver-local").mkdir(exist_ok=True)
        out_path, err_path = tmp_path / f"{app.stem}.stdout", tmp_path / f"{app.stem}.stderr"
        seen: set[int] = set()
        started = time.monotonic()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=tmp_path,
                                    env={**submit_env(), **fast_jvm_env, **(env or {})}, start_new_session=True)
            try:
                while proc.poll() is None:
                    if time.monotonic() - started > timeout_s:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                        pytest.fail(f"spark-submit of {app.name} did not finish within {timeout_s:.0f}s; "
                                    f"stderr: {err_path}", pytrace=False)
                    seen.update(spark_cluster.executor_pids())
                    if while_running is not None:
                        while_running(proc)
                    time.sleep(0.25)
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        return Submission(command, proc.returncode, out_path.read_text(errors="replace"),
                          err_path.read_text(errors="replace"), time.monotonic() - started, seen)

    return run

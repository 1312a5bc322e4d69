"""Start and stop the Spark standalone cluster of the integration tests (`make spark-cluster-up` / `-down`).

One master and one worker, both on loopback, run from the installed pyspark package: ``SPARK_HOME`` is the
``pyspark`` package directory (the pip wheel ships ``sbin/spark-daemon.sh`` and the jars but no
``start-master.sh``), so the cluster runs exactly the Spark version the project pins; nothing is downloaded.
Everything lives under the run directory (``.deps/spark-cluster-run/`` by default):

    conf/           SPARK_CONF_DIR, never created: no stray spark-defaults.conf or spark-env.sh from elsewhere applies,
                    and the JVMs the cluster starts have Spark's jars only on their class path, so the class archive
                    of `make class-archive` serves the executors too (a conf dir, even empty, would be on it first)
    logs/           SPARK_LOG_DIR: the daemons' output, ``spark-streams-on-spark-<class>-1-<host>.out``
    pids/           SPARK_PID_DIR: spark-daemon.sh's pid files
    work/           SPARK_WORKER_DIR: one dir per application and executor (the executors' working dirs, with
                    their stdout/stderr and the files an application ships, e.g. --py-files)
    local/          SPARK_LOCAL_DIRS: the executors' scratch space (shuffle and block manager files)
    cluster.json    master URL, ports, web UI addresses, cores and memory of the running cluster
    master          the master URL, e.g. ``spark://127.0.0.1:41234`` (read by `make test`)

The logs and work/ of the last run are kept after `down` for post-mortems and wiped at the next `up`.

Ports: ``SPARK_MASTER_PORT``, ``SPARK_MASTER_WEBUI_PORT``, ``SPARK_WORKER_PORT``, ``SPARK_WORKER_WEBUI_PORT``
if set, otherwise free loopback ports picked at start (below the kernel's ephemeral range), so several checkouts on
one machine can each run their own cluster. Every daemon, web UI and executor binds 127.0.0.1 only
(SPARK_LOCAL_IP, SPARK_MASTER_HOST; the master's REST submission server is off). A port taken between the pick and
the bind fails the daemon instead of letting it drift to the next port (``spark.port.maxRetries=0``), so the
recorded addresses are always the real ones; `up` then retries with fresh ports (up to 3 times).

The daemons get a scrubbed environment: the worker's environment is inherited by every executor it launches
(and by their Python workers), so no PYTHONPATH, PYSPARK_* or SPARK_* of the calling shell leaks into them.

`up` returns once the master's web UI (``http://127.0.0.1:<webui>/json/``) reports the worker ALIVE with its
cores. `down` stops the worker, then the master (spark-daemon.sh stop, SIGKILL after a grace period), then
kills any executor left behind (``CoarseGrainedExecutorBackend`` processes, and their PySpark workers, whose
working dir is inside this run dir); it is a no-op when nothing runs. Processes of other clusters on the
machine are never signalled.

Usage: python deps/spark_cluster_ctl.py up|down|status [--run-dir DIR] [--cores N] [--memory 2g] [--timeout S]
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RUN = ROOT / ".deps" / "spark-cluster-run"
HOST = "127.0.0.1"
IDENT = "streams-on-spark"  # SPARK_IDENT_STRING: names the pid and log files
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
STOP_GRACE_S = 20.0

log = logging.getLogger("spark-cluster")


class ClusterError(Exception):
    """A problem to report in one clear message (no traceback)."""


# ---------------------------------------------------------------------------------------------------- locations

def spark_home() -> Path:
    """The installed pyspark package directory, which is a complete SPARK_HOME (bin/, sbin/, jars/)."""
    try:
        import pyspark
    except ImportError as e:
        raise ClusterError(f"pyspark is not importable by {sys.executable} ({e}); run `make setup` first") from None
    home = Path(pyspark.__file__).resolve().parent
    if not (home / "sbin" / "spark-daemon.sh").is_file() or not (home / "jars").is_dir():
        raise ClusterError(f"{home} is not a usable SPARK_HOME (no sbin/spark-daemon.sh or jars/)")
    return home


def find_java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        java = Path(java_home) / "bin" / "java"
        if not os.access(java, os.X_OK):
            raise ClusterError(f"JAVA_HOME={java_home}, but {java} is not an executable; fix or unset JAVA_HOME")
        return str(java)
    java = shutil.which("java")
    if java is None:
        raise ClusterError("java not found on PATH and JAVA_HOME is not set: Spark needs a JDK 17 or 21 "
                           "(e.g. `apt-get install openjdk-17-jdk-headless`)")
    return java


def pid_file(run: Path, cls: str) -> Path:
    return run / "pids" / f"spark-{IDENT}-{cls}-1.pid"


def log_files(run: Path, cls: str) -> list[Path]:
    return sorted((run / "logs").glob(f"spark-{IDENT}-{cls}-1-*.out"))


# ----------------------------------------------------------------------------------------------------- processes

def _proc_bytes(pid: int, name: str) -> bytes | None:
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes()
    except OSError:
        return None


def _cwd(pid: int) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None


def _environ_has(pid: int, entry: str) -> bool:
    environ = _proc_bytes(pid, "environ")
    return environ is not None and entry.encode() in environ.split(b"\0")


def _alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie (our own exited child) counts as gone and is reaped."""
    stat = _proc_bytes(pid, "stat")
    if stat is None:
        return False
    if stat.rsplit(b")", 1)[1].split()[0] == b"Z":
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        return False
    return True


def _inside(path: Path | None, run: Path) -> bool:
    return path is not None and (path == run or run in path.parents)


def is_our_daemon(pid: int, run: Path, cls: str) -> bool:
    """``pid`` is alive, runs ``cls`` and was started for this run dir (its SPARK_WORKER_DIR is ours)."""
    if not _alive(pid):
        return False
    cmdline = _proc_bytes(pid, "cmdline") or b""
    return cls.encode() in cmdline.split(b"\0") and _environ_has(pid, f"SPARK_WORKER_DIR={run / 'work'}")


def read_pid(run: Path, cls: str) -> int | None:
    try:
        return int(pid_file(run, cls).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def running_daemon(run: Path, cls: str) -> int | None:
    pid = read_pid(run, cls)
    return pid if pid is not None and is_our_daemon(pid, run, cls) else None


def executor_pids(run: Path) -> list[int]:
    """Executor JVMs (CoarseGrainedExecutorBackend) launched by this run dir's worker, found through /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        cmdline = _proc_bytes(pid, "cmdline")
        if not cmdline or EXECUTOR_CLASS.encode() not in cmdline.split(b"\0"):
            continue
        if _inside(_cwd(pid), run) or _environ_has(pid, f"SPARK_WORKER_DIR={run / 'work'}"):
            found.append(pid)
    return sorted(found)


def stray_pids(run: Path) -> list[int]:
    """Executors of this run dir plus their PySpark workers (``python -m pyspark.daemon`` and its forks, which run
    in the executor's dir). Nothing else: a shell of someone reading the logs in work/ is left alone."""
    work = run / "work"
    found = set(executor_pids(run))
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        if _inside(_cwd(pid), work) and b"pyspark" in (_proc_bytes(pid, "cmdline") or b""):
            found.add(pid)
    return sorted(found)


def _terminate(pids: list[int], what: str, grace_s: float) -> None:
    """SIGTERM, wait up to ``grace_s``, then SIGKILL whatever is left; returns once all are gone."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.2)
    left = [p for p in pids if _alive(p)]
    if left:
        log.warning("%s %s ignored SIGTERM for %.0fs; killing", what, left, grace_s)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(p) for p in left):
            time.sleep(0.1)


# ---------------------------------------------------------------------------------------------------- the daemons

def daemon_env(run: Path, home: Path) -> dict[str, str]:
    """The daemons' environment: the caller's minus anything Python/Spark-specific, plus the run dir's layout.

    Executors inherit the worker's environment, and their Python workers too (the worker's PYTHONPATH ends up
    on theirs), so what is scrubbed here is what an application would otherwise silently depend on.
    """
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPARK_", "PYSPARK_", "PYTHON", "STREAMS_ON_SPARK_", "_JAVA_OPTIONS",
                                "JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS"))
           and k not in ("VIRTUAL_ENV", "HADOOP_CONF_DIR", "YARN_CONF_DIR")}
    from streams_on_spark.runtime.spark.session import java_options_with_archive
    # a taken port fails the start (and `up` retries with others) instead of silently moving to the next one; the
    # class archive of `make class-archive`, where STREAMS_ON_SPARK_CLASS_ARCHIVE names one, starts them faster
    daemon_opts = java_options_with_archive("-Djava.net.preferIPv4Stack=true -Dspark.port.maxRetries=0")
    env.update({
        "SPARK_HOME": str(home),
        "SPARK_CONF_DIR": str(run / "conf"),
        "SPARK_LOG_DIR": str(run / "logs"),
        "SPARK_PID_DIR": str(run / "pids"),
        "SPARK_WORKER_DIR": str(run / "work"),
        "SPARK_LOCAL_DIRS": str(run / "local"),
        "SPARK_LOCAL_IP": HOST,  # every bind, web UIs included (WebUI.bind uses SPARK_LOCAL_IP, else 0.0.0.0)
        "SPARK_LOCAL_HOSTNAME": HOST,  # advertised addresses: no reverse DNS, never the machine's hostname
        "SPARK_MASTER_HOST": HOST,
        "SPARK_IDENT_STRING": IDENT,
        "SPARK_DAEMON_MEMORY": "512m",
        "SPARK_DAEMON_JAVA_OPTS": daemon_opts,
        # no REST submission server (it would be one more listener); the web UIs stay on SPARK_LOCAL_IP
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false -Dspark.ui.reverseProxy=false",
        "SPARK_WORKER_OPTS": "-Dspark.worker.cleanup.enabled=false -Dspark.shuffle.service.enabled=false",
    })
    return env


def spark_daemon(home: Path, env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``$SPARK_HOME/sbin/spark-daemon.sh ARGS`` (start returns once the JVM runs; stop only signals it)."""
    # A new session: the daemons (nohup'd children of this script) survive the calling make/shell, and a
    # Ctrl-C there does not reach them.
    return subprocess.run(["bash", str(home / "sbin" / "spark-daemon.sh"), *args], env=env, cwd=Path(env["SPARK_WORKER_DIR"]).parent,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout, start_new_session=True)


def master_state(webui: str, timeout_s: float = 3) -> dict | None:
    """The master web UI's JSON (``/json/``): status, workers, cores; None while it does not answer."""
    try:
        with urllib.request.urlopen(f"{webui}/json/", timeout=timeout_s) as response:
            return json.load(response)
    except (OSError, ValueError, urllib.error.URLError):
        return None


def alive_workers(state: dict | None) -> list[dict]:
    return [w for w in (state or {}).get("workers", []) if w.get("state") == "ALIVE"]


PORT_NAMES = ("SPARK_MASTER_PORT", "SPARK_MASTER_WEBUI_PORT", "SPARK_WORKER_PORT", "SPARK_WORKER_WEBUI_PORT")
START_ATTEMPTS = 3  # a picked port can be taken before the daemon binds it: retry with fresh ports


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(taken: set[int]) -> int:
    """A port free on loopback now, picked at random BELOW the kernel's ephemeral range: there the port cannot be
    handed to some process's outgoing connection before our daemon binds it (with many Spark JVMs on the
    machine that race is real). Falls back to an ephemeral port (bind to 0)."""
    low = min(_ephemeral_low(), 32768)
    for _ in range(200):
        port = random.randrange(max(1024, low - 16384), low)
        if port in taken:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((HOST, port))
            except OSError:
                continue
        taken.add(port)
        return port
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((HOST, 0))
            port = s.getsockname()[1]
        if port not in taken:
            taken.add(port)
            return port


def pick_ports() -> dict[str, int]:
    taken: set[int] = set()
    ports = {}
    for name in PORT_NAMES:
        value = os.environ.get(name, "").strip()
        if value:
            if not value.isdigit() or not 0 < int(value) < 65536 or int(value) in taken:
                raise ClusterError(f"{name}={value!r} is not a free port number distinct from the others")
            taken.add(int(value))
            ports[name] = int(value)
    for name in PORT_NAMES:
        ports.setdefault(name, free_port(taken))
    return ports


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return f"({path} does not exist)"


def daemon_logs(run: Path, classes: list[str]) -> str:
    parts = []
    for cls in classes:
        for path in log_files(run, cls)[-1:]:
            parts.append(f"--- {path} (last lines) ---\n{tail(path)}")
    return "\n".join(parts) or f"(no daemon logs in {run / 'logs'})"


def read_cluster(run: Path) -> dict | None:
    try:
        return json.loads((run / "cluster.json").read_text())
    except (FileNotFoundError, ValueError):
        return None


# ----------------------------------------------------------------------------------------------------- commands

def up(run: Path, cores: int, memory: str, timeout_s: float) -> int:
    java = find_java()
    home = spark_home()
    cluster = read_cluster(run)
    master_pid, worker_pid = running_daemon(run, MASTER_CLASS), running_daemon(run, WORKER_CLASS)
    if cluster and master_pid and worker_pid:
        workers = alive_workers(master_state(cluster["master_webui"]))
        if len(workers) == 1 and workers[0].get("cores") == cores:
            log.info("cluster already running (master pid %s, worker pid %s) at %s", master_pid, worker_pid,
                     cluster["master"])
            print(cluster["master"])
            return 0
    if master_pid or worker_pid or executor_pids(run):
        log.warning("a previous cluster of %s is running but is not healthy (or has other cores); restarting", run)
        down(run)
    env = daemon_env(run, home)
    log.info("SPARK_HOME=%s, java=%s", home, java)
    started = time.monotonic()
    deadline = started + timeout_s
    pinned = [name for name in PORT_NAMES if os.environ.get(name, "").strip()]
    for attempt in range(1, START_ATTEMPTS + 1):
        clean(run, keep_logs=True)
        shutil.rmtree(run / "conf", ignore_errors=True)   # an older run's: see the module docstring
        for sub in ("logs", "pids", "work", "local"):
            (run / sub).mkdir(parents=True, exist_ok=True)
        ports = pick_ports()
        launched: list[str] = []  # whose logs to show on failure (the other's log is a previous run's)
        try:
            info = _start_cluster(run, home, env, ports, cores, memory, deadline, launched)
            break
        except ClusterError as e:
            bind_failed = any("java.net.BindException" in tail(path, 200)
                              for cls in launched for path in log_files(run, cls)[-1:])
            down(run)
            if bind_failed and attempt < START_ATTEMPTS and time.monotonic() < deadline and not pinned:
                log.warning("a port was taken before the daemons bound it (%s); retrying with other ports", e)
                continue
            print(f"spark-cluster-up: {e}\n{daemon_logs(run, launched)}", file=sys.stderr)
            if bind_failed and pinned:
                print(f"spark-cluster-up: a port is in use; check {', '.join(pinned)}", file=sys.stderr)
            return 1
    info.update(spark_home=str(home), master_pid=running_daemon(run, MASTER_CLASS),
                worker_pid=running_daemon(run, WORKER_CLASS))
    (run / "cluster.json").write_text(json.dumps(info, indent=2) + "\n")
    (run / "master").write_text(info["master"] + "\n")
    log.info("cluster ready in %.1fs: master %s (pid %s), worker %s (pid %s); web UI %s; logs in %s",
             time.monotonic() - started, info["master"], info["master_pid"], info["worker_id"], info["worker_pid"],
             info["master_webui"], run / "logs")
    print(info["master"])
    return 0


def _start_cluster(run: Path, home: Path, env: dict[str, str], ports: dict[str, int], cores: int, memory: str,
                   deadline: float, launched: list[str]) -> dict:
    """Start the master, wait for its web UI, start the worker, wait until the master lists it ALIVE."""
    started = time.monotonic()
    master = f"spark://{HOST}:{ports['SPARK_MASTER_PORT']}"
    master_webui = f"http://{HOST}:{ports['SPARK_MASTER_WEBUI_PORT']}"
    log.info("starting master %s (web UI %s)", master, master_webui)
    launched.append(MASTER_CLASS)
    _start(run, home, env, MASTER_CLASS, "--host", HOST, "--port", str(ports["SPARK_MASTER_PORT"]),
           "--webui-port", str(ports["SPARK_MASTER_WEBUI_PORT"]))
    _wait(run, deadline, "the master's web UI to report ALIVE", MASTER_CLASS,
          lambda: (master_state(master_webui) or {}).get("status") == "ALIVE")
    log.info("master up in %.1fs; starting the worker (%d cores, %s)", time.monotonic() - started, cores, memory)
    launched.append(WORKER_CLASS)
    _start(run, home, env, WORKER_CLASS, "--host", HOST, "--port", str(ports["SPARK_WORKER_PORT"]),
           "--webui-port", str(ports["SPARK_WORKER_WEBUI_PORT"]), "--cores", str(cores), "--memory", memory,
           "--work-dir", str(run / "work"), master)
    _wait(run, deadline, f"one ALIVE worker with {cores} cores", WORKER_CLASS,
          lambda: [w.get("cores") for w in alive_workers(master_state(master_webui))] == [cores])
    worker = alive_workers(master_state(master_webui))[0]
    return {
        "master": master,
        "master_webui": master_webui,
        "worker_webui": f"http://{HOST}:{ports['SPARK_WORKER_WEBUI_PORT']}",
        "worker_id": worker.get("id"),
        "cores": cores,
        "memory": memory,
        "ports": ports,
    }


def _start(run: Path, home: Path, env: dict[str, str], cls: str, *args: str) -> None:
    result = spark_daemon(home, env, "start", cls, "1", *args)
    if result.returncode != 0 or "failed to launch" in result.stdout:
        raise ClusterError(f"spark-daemon.sh start {cls} failed (exit {result.returncode}):\n{result.stdout.strip()}")
    if running_daemon(run, cls) is None:
        raise ClusterError(f"{cls} is not running after spark-daemon.sh start:\n{result.stdout.strip()}")


def _wait(run: Path, deadline: float, what: str, cls: str, ready) -> None:
    while time.monotonic() < deadline:
        if ready():
            return
        if running_daemon(run, cls) is None:
            raise ClusterError(f"{cls} exited while waiting for {what}")
        time.sleep(0.5)
    raise ClusterError(f"timed out waiting for {what}")


def down(run: Path) -> int:
    stopped = False
    home = None
    try:
        home = spark_home()
    except ClusterError:
        pass  # e.g. `make clean` after the venv is gone: signal the daemons directly
    for cls in (WORKER_CLASS, MASTER_CLASS):  # the worker first: it kills its executors as it stops
        pid = read_pid(run, cls)
        if pid is None:
            continue
        if not is_our_daemon(pid, run, cls):
            log.info("%s pid %s is not running (or is not this cluster's); not signalling it", cls.rsplit(".", 1)[1],
                     pid)
            pid_file(run, cls).unlink(missing_ok=True)
            continue
        stopped = True
        if home is not None:
            result = spark_daemon(home, daemon_env(run, home), "stop", cls, "1", timeout=60)
            log.info("%s", result.stdout.strip())
        else:
            os.kill(pid, signal.SIGTERM)
        _terminate([pid], f"{cls.rsplit('.', 1)[1]} pid", STOP_GRACE_S)
        pid_file(run, cls).unlink(missing_ok=True)
    strays = stray_pids(run) if run.exists() else []
    if strays:
        log.warning("killing executors/workers left behind by %s: %s", run, strays)
        _terminate(strays, "leftover executor processes", 5.0)
        stopped = True
    clean(run, keep_logs=True, keep_work=True)
    log.info("cluster of %s stopped" if stopped else "no cluster of %s running; nothing to stop", run)
    return 0


def clean(run: Path, keep_logs: bool, keep_work: bool = False) -> None:
    """Remove the state files (and, unless kept, the executors' dirs); the logs stay for post-mortems."""
    for name in ("master", "cluster.json"):
        (run / name).unlink(missing_ok=True)
    shutil.rmtree(run / "pids", ignore_errors=True)
    shutil.rmtree(run / "local", ignore_errors=True)
    if not keep_work:
        shutil.rmtree(run / "work", ignore_errors=True)
    if not keep_logs:
        shutil.rmtree(run / "logs", ignore_errors=True)


def status(run: Path) -> int:
    cluster = read_cluster(run)
    master_pid, worker_pid = running_daemon(run, MASTER_CLASS), running_daemon(run, WORKER_CLASS)
    if not (cluster and master_pid):
        print(f"no cluster running (run dir {run})")
        return 1
    state = master_state(cluster["master_webui"])
    workers = alive_workers(state)
    print(f"master {cluster['master']} pid {master_pid} ({(state or {}).get('status', 'not answering')}), "
          f"web UI {cluster['master_webui']}")
    print(f"worker pid {worker_pid or '-'}; alive workers: "
          + (", ".join(f"{w['id']} ({w['cores']} cores, {w['coresused']} used)" for w in workers) or "none"))
    executors = executor_pids(run)
    print(f"executors: {' '.join(map(str, executors)) or 'none'}")
    return 0 if state and len(workers) == 1 and worker_pid else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["up", "down", "status"])
    parser.add_argument("--run-dir", type=Path, default=DEFAULT_RUN)
    parser.add_argument("--cores", type=int, default=2, help="cores the worker offers (default 2)")
    parser.add_argument("--memory", default="2g", help="memory the worker offers to executors (default 2g)")
    parser.add_argument("--timeout", type=float, default=180.0,
                        help="seconds `up` waits for the master and the worker (default 180; busy machines are slow)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format=f"spark-cluster-{args.command}: %(message)s", stream=sys.stderr)
    if args.cores < 1:
        parser.error("--cores must be >= 1")
    run = args.run_dir.resolve()
    try:
        if args.command == "up":
            return up(run, args.cores, args.memory, args.timeout)
        if args.command == "down":
            return down(run)
        return status(run)
    except ClusterError as e:
        print(f"spark-cluster-{args.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

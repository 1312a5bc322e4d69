"""Python workers of a local Spark session forked from a warm process instead of started cold.

Spark starts a fresh ``python -m <module>`` for each streaming query's Python source runner and each
``transformWithStateInPandas`` query's state-schema worker (``PythonWorkerFactory.createSimpleWorker``: no daemon, no
reuse), and each pays the interpreter's start and its imports: pyspark from Spark's ``pyspark.zip``, which holds no
bytecode, so every module is compiled again, then pandas, pyarrow and this library when the worker unpickles our code.
Measured here: 0.3-0.5 s per worker on a quiet machine, 1-1.3 s under load, two workers per query start.

A :class:`ForkServer` is a process that has imported all of that once. Spark's ``pythonExec`` becomes a launcher
(:data:`LAUNCHER`, a few standard-library imports, ~20 ms) that hands its arguments, environment, working directory
and standard streams (``SCM_RIGHTS``) to the server over a Unix socket; the server forks, the child becomes the worker
(``runpy`` on the module, as ``python -m`` does) and the launcher stays as its stand-in for Spark: it forwards
signals to the child and exits with the child's status. The server refuses what a fork cannot reproduce (anything but
``-m module``, an interpreter setting from the environment other than the one it started with) and the launcher then
``exec``s the interpreter itself, so a worker is never started differently from Spark's way, only faster.

Local masters only (:func:`~streams_on_spark.runtime.spark.session.local_session`, or a ``spark-submit --master
'local[...]'`` session made by ``application_session``, where the driver's Python is the workers'); a cluster's
executors start their workers as Spark does.
"""
from __future__ import annotations

import atexit
import gc
import importlib.util
import logging
import marshal
import os
import pkgutil
import runpy
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import traceback
from typing import Optional, Sequence

log = logging.getLogger(__name__)


def _modules_of(package: str) -> tuple[str, ...]:
    """The modules (and subpackages) directly in ``package``, found in its directory without importing them."""
    spec = importlib.util.find_spec(package)
    locations = spec.submodule_search_locations if spec is not None else None
    return tuple(f"{package}.{found.name}" for found in pkgutil.iter_modules(locations or ()))


# What a worker imports, imported once by the server (each is optional: a missing one is imported by the worker).
# Besides the workers' modules, what they import only when they run: the state server's protocol
# (``StateMessage_pb2`` and protobuf, and ``pyspark.testing.utils``, which pyspark's state client imports for a check)
# in every ``transformWithStateInPandas`` worker and state-schema worker; pyarrow's pandas conversion in every task;
# ``rocksdict`` (tasks' local stores); and the DSL's and its operators' modules that a topology's processors unpickle
# from (every one, listed from their packages' directories: a module added or renamed is preloaded without a word
# here). Found in the workers of a 2-subtopology application (sys.modules after a task, against the server's);
# importing them after the rest took 0.2-0.4 s on the loaded 2-core box, paid by every worker, and a state-schema
# worker starts with every query.
PRELOAD = (
    "pyspark.daemon",
    "pyspark.worker",
    "pyspark.sql.streaming.python_streaming_source_runner",
    "pyspark.sql.streaming.transform_with_state_driver_worker",
    "pyspark.sql.streaming.proto.StateMessage_pb2",
    "pyspark.testing.utils",
    "pyspark.sql.worker.create_data_source",
    "pyspark.sql.worker.plan_data_source_read",
    "pyspark.sql.worker.lookup_data_sources",
    "pandas",
    "pyarrow",
    "pyarrow.pandas_compat",
    "rocksdict",
    "streams_on_spark.runtime.spark.embedded_source",
    "streams_on_spark.runtime.spark.task_function",
    *_modules_of("streams_on_spark.dsl"),
    *_modules_of("streams_on_spark.operators"),
    "streams_on_spark.connectors.embedded_connector",
)

# Environment read when the interpreter starts, or by pyspark when a module is imported: a worker whose values differ
# from the server's own is not forked from it (PYTHONPATH's new entries are put in front of sys.path, and
# PYTHONDONTWRITEBYTECODE is set in the child)
STARTUP_ENV = frozenset({
    "PYTHONHASHSEED", "PYTHONUNBUFFERED", "PYTHONOPTIMIZE", "PYTHONDEBUG", "PYTHONINSPECT", "PYTHONIOENCODING",
    "PYTHONNOUSERSITE", "PYTHONUSERBASE", "PYTHONSAFEPATH", "PYTHONWARNINGS", "PYTHONMALLOC", "PYTHONFAULTHANDLER",
    "PYTHONTRACEMALLOC", "PYTHONPROFILEIMPORTTIME", "PYTHONUTF8", "PYTHONDEVMODE", "PYTHONPYCACHEPREFIX",
    "PYTHONWARNDEFAULTENCODING", "PYTHONINTMAXSTRDIGITS", "PYTHONNODEBUGRANGES", "PYTHONPLATLIBDIR", "PYTHONHOME",
    "PYTHONCASEOK", "PYTHONEXECUTABLE", "PYTHONVERBOSE", "PYTHONCOERCECLOCALE", "LC_ALL", "LC_CTYPE", "LANG",
    "PYSPARK_ENABLE_NAMEDTUPLE_PATCH", "SPARK_TESTING",
})

# Thread pools sized when numpy's BLAS loads: the server loads it with one thread (what Spark gives its executors'
# Python workers, OMP_NUM_THREADS = spark.task.cpus), so it forks from a process with no BLAS threads; a worker asked
# to run with more starts its own interpreter
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


_STATUS = struct.Struct("!q")   # the child's pid, then its wait status; -1: refused, start the interpreter yourself

LAUNCHER = r'''
import marshal, os, signal, socket, struct, sys
PYTHON, ADDRESS = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
STATUS = struct.Struct("!q")

def own_interpreter():
    os.execv(PYTHON, [PYTHON] + args)

def read_status(conn):
    data = b""
    while len(data) < STATUS.size:
        chunk = conn.recv(STATUS.size - len(data))
        if not chunk:
            return None
        data += chunk
    return STATUS.unpack(data)[0]

if len(args) < 2 or args[0] != "-m":
    own_interpreter()
try:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(ADDRESS)
    message = marshal.dumps((args, dict(os.environ), os.getcwd()))
    socket.send_fds(conn, [struct.pack("!I", len(message)) + message], [0, 1, 2])
    pid = read_status(conn)
except OSError:
    pid = None
if pid is None or pid < 0:
    own_interpreter()

def forward(signum, frame):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass

for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
    if signal.getsignal(signum) is not signal.SIG_IGN:   # ignored as Spark started it (SIGINT): stays ignored
        signal.signal(signum, forward)
status = read_status(conn)   # a forwarded signal interrupts nothing: Python retries the read (PEP 475)
if status is None:
    sys.exit(1)
code = os.waitstatus_to_exitcode(status)
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
'''


class ForkServer:
    """A warm Python process forking Spark's Python workers; :attr:`launcher` is the ``pythonExec`` that uses it."""

    def __init__(self, python: str = sys.executable, preload: Sequence[str] = PRELOAD,
                 quiet: Sequence[str] = ()) -> None:
        self.directory = tempfile.mkdtemp(prefix="streams-on-spark-workers-")
        self.address = os.path.join(self.directory, "server")
        self.launcher = os.path.join(self.directory, "python")
        with open(os.path.join(self.directory, "launcher.py"), "w") as f:
            f.write(LAUNCHER)
        with open(self.launcher, "w") as f:
            f.write("#!/bin/sh\nexec {} -SE {} {} {} \"$@\"\n".format(
                *(_quote(p) for p in (python, os.path.join(self.directory, "launcher.py"), python, self.address))))
        os.chmod(self.launcher, 0o700)
        # listening from here on: a launcher that comes while the server still imports waits in the backlog
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.address)
        listener.listen(64)
        # the server stops when this process ends: it reads the pipe's other end until end of file
        read_end, self._alive = os.pipe()
        env = {**os.environ, "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0"), "PYTHONUNBUFFERED": "YES",
               **dict.fromkeys(THREAD_ENV, "1")}
        self.process = subprocess.Popen(
            [python, "-m", __name__, str(listener.fileno()), str(read_end), ",".join(quiet), *preload], env=env,
            pass_fds=(listener.fileno(), read_end), stdin=subprocess.DEVNULL)
        listener.close()
        os.close(read_end)
        atexit.register(self.close)

    def close(self) -> None:
        """Stop the server (workers it forked run on, as Spark's do until Spark stops them)."""
        if self._alive >= 0:
            os.close(self._alive)
            self._alive = -1
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.directory, ignore_errors=True)


def _quote(path: str) -> str:
    return "'" + path.replace("'", "'\\''") + "'"


def serve(listener_fd: int, alive_fd: int, preload: Sequence[str], quiet: Sequence[str] = ()) -> None:
    """The server's loop on the listening socket it was given: fork a worker for each launcher, report its pid and,
    when it ends, its status; stop when ``alive_fd`` reaches end of file. Workers of a ``quiet`` module get no
    standard output (one that talks to Spark over its socket and prints only debug lines)."""
    # Ctrl-C in a terminal reaches the whole process group: the server stops with the driver (alive_fd), and its
    # workers ignore SIGINT as the ones Spark starts do (they inherit it ignored from Spark's JVM, which
    # pyspark starts so): no KeyboardInterrupt in a worker, no traceback on the user's console
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    server = _Server(socket.socket(fileno=listener_fd), alive_fd, frozenset(quiet))
    for module in preload:
        try:
            __import__(module)
        except Exception:   # the worker imports it itself, or fails there as it would have
            log.debug("fork server: preloading %s failed", module, exc_info=True)
    gc.collect()
    gc.freeze()   # what the workers inherit stays out of their collections: not traversed, its pages not copied
    server.run()


class _Server:
    """The server's sockets and the workers it forked (pid -> the launcher's connection)."""

    def __init__(self, listener: socket.socket, alive_fd: int, quiet: frozenset = frozenset()) -> None:
        self.quiet = quiet
        self.started_env = _startup_env(dict(os.environ))
        self.listener = listener
        self.alive_fd = alive_fd
        self.wake_read, self.wake_write = os.pipe()   # SIGCHLD wakes the loop through it
        os.set_blocking(self.wake_write, False)
        signal.set_wakeup_fd(self.wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(alive_fd, selectors.EVENT_READ, "alive")
        self.selector.register(self.wake_read, selectors.EVENT_READ, "wake")
        self.children: dict[int, socket.socket] = {}

    def run(self) -> None:
        while True:
            for key, _ in self.selector.select():
                if key.data == "alive":
                    return
                if key.data == "wake":
                    os.read(self.wake_read, 4096)
                elif key.data == "accept":
                    conn, _ = self.listener.accept()
                    pid = self.fork_worker(conn)
                    if pid is None:
                        conn.close()
                    else:
                        self.children[pid] = conn
                        self.selector.register(conn, selectors.EVENT_READ, pid)
                else:   # a launcher went away (Spark killed it): its worker goes too
                    self.selector.unregister(key.fileobj)
                    _kill(key.data)
            self.reap()

    def fork_worker(self, conn: socket.socket) -> Optional[int]:
        """Fork the worker a launcher asks for; its pid (sent to the launcher), or None if refused."""
        try:
            header, fds, _, _ = socket.recv_fds(conn, 4, 3)
            size = struct.unpack("!I", header)[0]
            data = b""
            while len(data) < size:
                chunk = conn.recv(size - len(data))
                if not chunk:
                    raise OSError("launcher went away")
                data += chunk
            args, env, cwd = marshal.loads(data)
        except (OSError, ValueError, EOFError, struct.error):
            return None
        if len(fds) != 3 or not _reproducible(env, self.started_env):
            for fd in fds:
                os.close(fd)
            conn.sendall(_STATUS.pack(-1))
            return None
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:   # the worker: none of the server's files, the launcher's standard streams
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                self.selector.close()
                for sock in [self.listener, conn, *self.children.values()]:
                    sock.close()
                for fd in (self.alive_fd, self.wake_read, self.wake_write):
                    os.close(fd)
                if args[1] in self.quiet:
                    os.close(fds[1])
                    fds[1] = os.open(os.devnull, os.O_WRONLY)
                for target, fd in enumerate(fds):
                    os.dup2(fd, target)
                    os.close(fd)
            except BaseException:
                os._exit(70)
            _run_worker(args, env, cwd)
        for fd in fds:
            os.close(fd)
        conn.sendall(_STATUS.pack(pid))
        return pid

    def reap(self) -> None:
        """Report every ended worker's status to its launcher."""
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            try:
                self.selector.unregister(conn)
            except KeyError:   # its launcher went away first
                pass
            try:
                conn.sendall(_STATUS.pack(status))
            except OSError:
                pass
            conn.close()


def _startup_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if k in STARTUP_ENV}


def _reproducible(env: dict, started_env: dict) -> bool:
    """Whether a worker with ``env`` starts as a fork of the server would: same startup settings, one BLAS thread."""
    return _startup_env(env) == started_env and all(env.get(k, "1") == "1" for k in THREAD_ENV)


def _run_worker(args: list[str], env: dict, cwd: str) -> None:
    """In the forked child: become ``python <args>`` (``-m module ...``) in ``env`` and ``cwd``; never returns."""
    code = 0
    try:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        # as `python -m` starts: the working directory, PYTHONPATH's entries, then the interpreter's own
        rest = sys.path[1:]   # sys.path[0] is the server's working directory
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in rest]
        sys.path[:] = [cwd, *paths, *rest]
        sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
        sys.argv = ["-m", *args[2:]]
        sys.modules.pop(args[1], None)   # preloaded: run afresh as __main__, as `python -m` would
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, int) and e.code is not None:
            print(e.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]), sys.argv[4:], [m for m in sys.argv[3].split(",") if m])

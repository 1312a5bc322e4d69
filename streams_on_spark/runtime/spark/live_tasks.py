"""Tasks kept alive in a Python worker between micro-batches, as Kafka keeps a task from assignment to revocation.

Kafka builds a task's processors once and keeps them while the task stays assigned, so a processor's fields (a
counter, a punctuation handle it cancels later) persist across records. Spark runs each micro-batch of a task in
whichever Python worker of the executor is free; the worker keeps the task it ran, with its processors, stores and
times, and uses it again when it runs the task's next batch and nothing happened in between (the task's state in
Spark is at the version this task committed).

Another worker of the same executor picks the task up from its image: at each commit the task (processors and all)
is pickled into the task's local store, atomically with the version marker, leaving out what the new worker has
itself (the topology, the key-value stores' database, global stores, the clock: pickle persistent ids). So a task
continues wherever it runs on its executor; it is rebuilt from its state in Spark, fields lost as after a Kafka
rebalance, only when the executor's local copy is gone or behind (a new executor, a replayed batch, a restart) or
the task cannot be pickled (a processor holding a lock or a connection: logged once, the task is then rebuilt
every batch, as before this module existed).

The worker also keeps the task's local RocksDB open after the call (opening one costs 15-70 ms, closing 5-100 ms: more
than the rest of a small batch's Python). RocksDB lets one process open it, so when another worker (or a new Python
worker after a crash) takes the task, it asks the keeper to let go: :func:`open_store` finds the keeper's release
socket (an abstract Unix socket named in ``<store>.holder``), and the keeper's release thread closes the store and
drops the task (it is continued from its image) unless it is running it right now. A keeper that died holds no lock
(the OS releases it), and a keeper that does not answer within ``OPEN_WAIT_S`` makes the call fail as before (another
process is running the task; Spark retries it).
"""
from __future__ import annotations

import io
import logging
import os
import pickle
import socket
import struct
import threading
import time
import uuid
from collections import ChainMap, OrderedDict
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from streams_on_spark.runtime.spark.clock import WallClock
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.state.local import LocalStoreLocked, LocalTaskStore

log = logging.getLogger(__name__)

_MAX_LIVE = 64   # tasks one worker process keeps (least recently run dropped first; its image still continues it)
_MAX_OPEN = 16   # local stores one worker process keeps open (least recently used closed first)
OPEN_WAIT_S = 10.0   # how long a worker waits for another process to let go of a task's local store
_LIVE: "OrderedDict[tuple, LiveTask]" = OrderedDict()
_OPEN: "OrderedDict[str, LocalTaskStore]" = OrderedDict()   # path -> open store no call is using
_LOCK = threading.RLock()   # _LIVE and _OPEN, against the release thread


@dataclass
class LiveTask:
    """A task as a worker left it after committing version ``marker`` of its state."""

    marker: str
    task: StreamTask
    local: LocalTaskStore
    clock: WallClock


def discard(task: StreamTask) -> None:
    """Close a task left in an unknown state by a failed batch (Kafka closes it dirty); it is rebuilt next time."""
    try:
        task.close()
    except Exception:
        log.warning("closing task %s failed", task.id, exc_info=True)


def take(key: tuple, marker: Optional[str], local: Optional[LocalTaskStore] = None) -> Optional[LiveTask]:
    """The live task under ``key`` if it is at version ``marker`` (and over ``local``, the store :func:`open_store`
    gave this call, when given); then it is out of the cache until kept again.

    A task at another version is dropped without ``close()``: it went on elsewhere, or is being rebuilt."""
    with _LOCK:
        live = _LIVE.pop(key, None)
    if live is None or marker is None or live.marker != marker or (local is not None and live.local is not local):
        return None
    return live


def keep(key: tuple, live: LiveTask) -> None:
    """Keep a task that committed ``live.marker`` for its next batch, and its store open (:func:`keep_store`)."""
    with _LOCK:
        _LIVE[key] = live
        while len(_LIVE) > _MAX_LIVE:
            _LIVE.popitem(last=False)
        if live.local is not None:
            keep_store(live.local)


def open_store(path: str, store_names: list) -> LocalTaskStore:
    """The task's local store at ``path``, open: the one this process kept open (then out of the cache until kept
    again), or opened, after asking the process that keeps it open to let go (see the module doc)."""
    with _LOCK:
        local = _OPEN.pop(path, None)
        _IN_USE.add(path)
    try:
        if local is not None and local.is_open and sorted(local.stores) == sorted(set(store_names)):
            return local
        if local is not None:
            local.close()
        deadline = time.monotonic() + OPEN_WAIT_S
        while True:
            try:
                local = LocalTaskStore(path, store_names)
                break
            except LocalStoreLocked:
                if time.monotonic() > deadline:
                    raise
                _ask_release(path)
                time.sleep(0.005)
        _announce(path)
        return local
    except BaseException:
        with _LOCK:
            _IN_USE.discard(path)
        raise


def keep_store(local: LocalTaskStore) -> None:
    """Keep ``local`` open for this process's next call of its task (its scans are ended: the call is over)."""
    local.close_scans()
    with _LOCK:
        _IN_USE.discard(local.path)
        _OPEN[local.path] = local
        _OPEN.move_to_end(local.path)
        while len(_OPEN) > _MAX_OPEN:
            _release(next(iter(_OPEN)))


def close_store(local: LocalTaskStore) -> None:
    """Close ``local`` (a failed call: nothing of it is trusted) and forget it."""
    with _LOCK:
        _IN_USE.discard(local.path)
        if _OPEN.get(local.path) is local:
            del _OPEN[local.path]
    local.close()


def _release(path: str) -> bool:
    """Close the store at ``path`` if this process keeps it open and no call is using it, dropping its live task;
    False if a call is using it now. Under ``_LOCK``."""
    local = _OPEN.pop(path, None)
    if local is None:
        return not _in_use(path)
    for key in [k for k, live in _LIVE.items() if live.local is local]:
        del _LIVE[key]
    local.close()
    return True


_IN_USE: set = set()   # paths of stores a call of this process has open now (see open_store / keep_store)


def _in_use(path: str) -> bool:
    return path in _IN_USE


# ---------------------------------------------------------------------------------------------- handing stores over

_server: Optional[str] = None   # this process's release socket (an abstract Unix socket name), once started


def _announce(path: str) -> None:
    """Name this process's release socket in ``<path>.holder``: whoever finds the store locked asks there."""
    name = _serve()
    if name is None:
        return
    holder = path + ".holder"
    try:
        tmp = f"{holder}.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(name)
        os.replace(tmp, holder)
    except OSError:
        log.debug("cannot write %s", holder, exc_info=True)


def _serve() -> Optional[str]:
    """Start this process's release thread (once); its socket's name."""
    global _server
    with _LOCK:
        if _server is not None:
            return _server
        name = f"streams-on-spark-release-{os.getpid()}-{uuid.uuid4().hex}"
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind("\0" + name)
            sock.listen(16)
        except OSError:   # no abstract sockets here: stores are still handed over by waiting for the keeper's exit
            log.debug("no release socket", exc_info=True)
            return None
        threading.Thread(target=_release_loop, args=(sock,), name="streams-on-spark-store-release", daemon=True).start()
        _server = name
        return name


def _release_loop(sock: socket.socket) -> None:
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return
        try:
            with conn:
                conn.settimeout(5.0)
                path = conn.makefile("r", encoding="utf-8").readline().rstrip("\n")
                with _LOCK:
                    released = _release(path)
                conn.sendall(b"1" if released else b"0")
                if released:
                    log.debug("released the local store %s to another process", path)
        except Exception:   # a client gone away: it retries
            log.debug("a release request failed", exc_info=True)


def _ask_release(path: str) -> None:
    """Ask the process named in ``<path>.holder`` to close the store (it answers once it did, or that it uses it)."""
    try:
        with open(path + ".holder", encoding="utf-8") as f:
            name = f.read().strip()
    except OSError:
        return
    if not name or name == _server:
        return
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(2.0)
            conn.connect("\0" + name)
            conn.sendall(path.encode("utf-8") + b"\n")
            conn.recv(1)
    except OSError:   # the keeper is gone (its lock with it) or busy: the caller retries
        pass


def _after_fork_in_child() -> None:
    """A forked child owns none of its parent's open stores, live tasks or release thread."""
    global _LOCK, _server
    _LOCK = threading.RLock()
    _LIVE.clear()
    _OPEN.clear()
    _IN_USE.clear()
    _server = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


_UNPICKLABLE: set[tuple] = set()   # tasks (query, subtopology, partition) whose image failed once: not tried again


def image(key: tuple, task: StreamTask, externals: Mapping[str, Any], run: str = "") -> Optional[bytes]:
    """The task pickled without ``externals`` (tag -> object the reader supplies itself), for the application run
    ``run``; None if it cannot be pickled."""
    if key in _UNPICKLABLE:
        return None
    from pyspark.cloudpickle import Pickler
    by_id = {id(obj): tag for tag, obj in externals.items()}

    class TaskPickler(Pickler):
        dispatch_table = ChainMap({struct.Struct: _reduce_struct}, Pickler.dispatch_table)

        def persistent_id(self, obj: Any) -> Optional[str]:
            return by_id.get(id(obj))

    buffer = io.BytesIO()
    try:
        TaskPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump((run, task))
    except Exception as e:
        _UNPICKLABLE.add(key)
        log.warning("task %s cannot be pickled (%s: %s): on Spark its processors are rebuilt whenever another "
                    "Python worker runs it, so their fields start afresh then", task.id, type(e).__name__, e)
        return None
    return buffer.getvalue()


def _reduce_struct(packer: struct.Struct) -> tuple:
    """``struct.Struct`` (serdes and stores keep some) has no pickle support: rebuild it from its format."""
    return struct.Struct, (packer.format,)


def restore(data: Optional[bytes], externals: Mapping[str, Any], run: str = "") -> Optional[StreamTask]:
    """The task pickled by :func:`image` in the application run ``run``, with ``externals`` put back; None if there
    is none, it is another run's (a restart: possibly other code, and Kafka starts processors afresh too) or it
    cannot be read."""
    if data is None:
        return None

    class TaskUnpickler(pickle.Unpickler):
        def persistent_load(self, tag: str) -> Any:
            return externals[tag]

    try:
        pickled_run, task = TaskUnpickler(io.BytesIO(data)).load()
    except Exception as e:
        log.warning("a task image could not be read back (%s: %s); rebuilding the task", type(e).__name__, e)
        return None
    return task if pickled_run == run and isinstance(task, StreamTask) else None

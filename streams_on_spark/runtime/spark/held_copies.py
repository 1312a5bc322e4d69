"""Tasks' local copies a Python worker keeps open between calls, and their hand-over to another worker.

Opening a task's RocksDB costs 4-90 ms a call (its MANIFEST, OPTIONS and files; more under load), as much as the
task's work on a small batch. A worker that committed a call of a streaming query's task keeps its local copy open
(:func:`hold`; flushed at once by a daemon thread, off the task's way, so that what is on disk is the committed
version as after a close, and a killed worker loses no batch but one whose flush it did not live to finish, which
the version check then rebuilds), and its next call of that task in this worker takes it back (:func:`take`) instead of
opening it. Taking it back changes nothing else: the caller still compares the copy's version marker with Spark's
committed version (``TaskState.sync``) and rebuilds a copy that is ahead or behind from the changelog; a copy whose
directory is no longer the one held (deleted or replaced) is closed and opened anew.

RocksDB lets one process open a database at a time, and Spark runs a task's next call in whichever worker of the
executor is free. A worker that finds a copy locked (:func:`open_copy`) asks its holder to let it go: each holding
worker serves requests on a Unix socket (abstract namespace, named in ``<copy>.holder`` beside the copy) from a
daemon thread, which closes the copy if it is held idle (never one a call of its own is using: that stays locked,
and the asker fails as it did before this module, "another process is running this task") and answers; the asker
then opens it. A worker holds at most :data:`MAX_HELD` copies (least recently used closed first: an open database
keeps its caches) and closes them at exit.
"""
from __future__ import annotations

import atexit
import contextlib
import logging
import os
import queue
import socket
import threading
import uuid
from collections import OrderedDict
from typing import Callable, Optional

from streams_on_spark.files import replace_file
from streams_on_spark.state.local import LocalStoreLocked, LocalTaskStore

log = logging.getLogger(__name__)

MAX_HELD = 8   # each open database keeps its memtables and block caches
HANDOVER_TIMEOUT_S = 10.0
_HOLDER_SUFFIX = ".holder"

_lock = threading.Lock()   # guards _held; a copy is closed by the hand-over thread only while holding it
_held: "OrderedDict[str, tuple[LocalTaskStore, tuple[int, int]]]" = OrderedDict()   # path -> (copy, directory id)
_address: Optional[bytes] = None   # this process' hand-over socket (abstract namespace), once it serves
_address_pid = -1
_to_flush: "queue.Queue[str]" = queue.Queue()   # held copies the flush thread is to make durable


def _directory_id(path: str) -> Optional[tuple[int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def take(path: str) -> Optional[LocalTaskStore]:
    """The copy under ``path`` this process holds open (then no longer held), or None; a held copy whose directory
    was deleted or replaced since is closed and not returned."""
    with _lock:
        entry = _held.pop(path, None)
    if entry is None:
        return None
    local, directory = entry
    if _directory_id(path) != directory:
        _close_quietly(local)
        return None
    return local


def hold(local: LocalTaskStore) -> None:
    """Keep ``local`` (a committed copy) open for this process' next call of its task; flushed right after by a
    daemon thread, off the task's way (made durable as by a close, unless the next call took it first: then that
    call's hold, or its close, flushes it)."""
    directory = _directory_id(local.path)
    if directory is None:
        local.close()
        return
    address = _serve()
    evicted = []
    with _lock:
        _held[local.path] = (local, directory)
        _held.move_to_end(local.path)
        while len(_held) > MAX_HELD:
            evicted.append(_held.popitem(last=False)[1][0])
    _to_flush.put(local.path)
    for old in evicted:
        _close_quietly(old)
    try:
        if _named_holder(local.path) != address:
            replace_file(local.path + _HOLDER_SUFFIX, address)
    except OSError as e:   # without it another worker cannot ask: let the copy go
        log.warning("cannot name the holder of %s (%s); closing it", local.path, e)
        _release(local.path)


def open_copy(path: str, opener: Callable[[], LocalTaskStore]) -> LocalTaskStore:
    """``opener()``, the copy at ``path`` opened; if another worker of this machine holds it idle, that worker is
    asked to release it first (the copy stays locked, :class:`LocalStoreLocked`, while a call there is using it)."""
    holder = _holder(path)
    if holder is not None:   # named while held: ask before a first attempt that would fail on the lock
        _ask_holder(path, holder)
    try:
        return opener()
    except LocalStoreLocked:
        holder = _holder(path)
        if holder is None or not _ask_holder(path, holder):
            raise
    return opener()


def _named_holder(path: str) -> Optional[bytes]:
    """The hand-over address in ``path``'s holder file (the process holding the copy), or None."""
    try:
        with open(path + _HOLDER_SUFFIX, "rb") as f:
            return f.read() or None
    except OSError:
        return None


def _holder(path: str) -> Optional[bytes]:
    """The hand-over address of the other process that holds ``path``, or None."""
    address = _named_holder(path)
    return address if address != _address else None


def _forget_holder(path: str) -> None:
    """The copy at ``path`` is no longer held here: its holder file goes, if it still names this process."""
    if _address is not None and _named_holder(path) == _address:
        with contextlib.suppress(OSError):
            os.unlink(path + _HOLDER_SUFFIX)


def _ask_holder(path: str, address: bytes) -> bool:
    """Ask the process at ``address`` to release the copy at ``path``; whether it released it."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(HANDOVER_TIMEOUT_S)
            conn.connect(address)
            conn.sendall(os.fsencode(path) + b"\n")
            answer = conn.recv(1)
    except OSError as e:
        log.debug("the holder of %s did not answer (%s)", path, e)
        return False
    return answer == b"1"


def _serve() -> bytes:
    """This process' hand-over socket, started on first use (and again in a forked child)."""
    global _address, _address_pid
    if _address is not None and _address_pid == os.getpid():
        return _address
    address = f"\0streams-on-spark-holder-{os.getpid()}-{uuid.uuid4().hex}".encode()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(address)
    server.listen(16)
    threading.Thread(target=_answer, args=(server,), name="streams-on-spark-handover", daemon=True).start()
    threading.Thread(target=_flush_held, name="streams-on-spark-flush", daemon=True).start()
    if _address_pid == -1:
        atexit.register(release_all)
    _address, _address_pid = address, os.getpid()
    return address


def _answer(server: socket.socket) -> None:
    while True:
        conn, _ = server.accept()
        with conn:
            try:
                conn.settimeout(HANDOVER_TIMEOUT_S)
                request = b""
                while not request.endswith(b"\n"):
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    request += chunk
                released = _release(os.fsdecode(request.rstrip(b"\n")))
                conn.sendall(b"1" if released else b"0")
            except Exception:   # a broken request must not end the thread
                log.warning("answering a hand-over request failed", exc_info=True)


def _flush_held() -> None:
    """Flush the copies :func:`hold` was given, while they are still held (RocksDB's flush lets the GIL go)."""
    while True:
        path = _to_flush.get()
        with _lock:
            entry = _held.get(path)
            if entry is not None:
                try:
                    entry[0].flush()
                except Exception as e:   # its directory gone, a full disk: the copy is closed, rebuilt if needed
                    log.warning("flushing the held copy %s failed (%s); closing it", path, e)
                    del _held[path]
                    _close_quietly(entry[0])
        _to_flush.task_done()


def wait_flushed() -> None:
    """Return once every copy held so far has been flushed (or taken back first)."""
    if _address is not None:
        _to_flush.join()


def _release(path: str) -> bool:
    """Close the copy under ``path`` if this process holds it idle (not while a call of its own uses it: that one
    is not held); whether it did."""
    with _lock:   # closed under the lock: a call of this process taking it waits, then opens it anew
        entry = _held.pop(path, None)
        if entry is None:
            return False
        _close_quietly(entry[0])
    return True


def release_all() -> None:
    """Close every held copy (at exit)."""
    with _lock:
        entries = list(_held.values())
        _held.clear()
        for local, _ in entries:
            _close_quietly(local)


def _forget_in_child() -> None:
    """A forked child holds nothing: the copies' locks stay with the parent, and so does the hand-over thread."""
    global _address, _lock, _to_flush
    _held.clear()
    _address, _lock, _to_flush = None, threading.Lock(), queue.Queue()


os.register_at_fork(after_in_child=_forget_in_child)


def _close_quietly(local: LocalTaskStore) -> None:
    try:
        local.close()
    except Exception as e:   # its directory gone: nothing of it is needed (Spark's changelog rebuilds it)
        log.debug("closing the held copy %s failed (%s)", local.path, e)
    _forget_holder(local.path)

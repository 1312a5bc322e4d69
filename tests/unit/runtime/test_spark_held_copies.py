"""A streaming query's task keeps its local copy open in the Python worker between calls (flushed, so durable as
if closed) and takes it back at its next call there, still checked against Spark's version; another worker that
needs the copy asks the holding process to release it. Spark's state variables and its task context are stood in
for (the Spark tests run the real ones)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pandas as pd
import pytest

from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.runtime.spark import held_copies, task_function
from streams_on_spark.runtime.spark.task_state import TaskState
from streams_on_spark.state.local import LocalStoreLocked, RocksTaskStore, open_local_task_store
from tests.unit.runtime.test_spark_live_tasks import Counting, L, function


@pytest.fixture(autouse=True)
def nothing_held():
    held_copies.release_all()
    yield
    held_copies.release_all()


def state_handle():
    value, changelog = [None], []
    return value, changelog, SimpleNamespace(
        getValueState=lambda name, schema: SimpleNamespace(get=lambda: value[0],
                                                          update=lambda row: value.__setitem__(0, tuple(row))),
        getListState=lambda name, schema: SimpleNamespace(get=lambda: iter(list(changelog)),
                                                          appendValue=lambda row: changelog.append(tuple(row)),
                                                          clear=changelog.clear))


def frame(offset, keys):
    batch = RecordBatch("in", 0)
    for key in keys:
        batch.add(0, key.encode(), b"v")
    return pd.DataFrame([("in", 0, offset, batch.ends.tobytes(), bytes(batch.data))],
                        columns=["topic", "partition", "offset", "ends", "data"])


def test_a_query_tasks_copy_stays_open_between_its_calls_and_is_still_checked_against_sparks_version(
        tmp_path, monkeypatch):
    fn = function(Counting)
    fn.state_dir = str(tmp_path)
    value, changelog, handle = state_handle()
    opened = []
    original_open = RocksTaskStore.open
    monkeypatch.setattr(RocksTaskStore, "open", lambda self: opened.append(self.path) or original_open(self))
    batch_ids = iter(range(10))
    monkeypatch.setattr(task_function, "streaming_batch", lambda: ("q", next(batch_ids)))

    def call(offset, keys):
        list(fn.run((0,), iter([frame(offset, keys)]), TaskState(handle)))

    call(0, ["a", "a"])
    after_first = value[0], list(changelog)
    call(2, ["a"])
    assert len(opened) == 1   # the second call took the held copy: no open
    path = opened[0]
    held = held_copies.take(path)
    assert held is not None and held.version() == f"{value[0][0]}:1"
    assert held.stores["counts"].get(b"a") is not None
    held_copies.hold(held)

    value[0], changelog[:] = after_first   # Spark's state went back a batch (a replayed batch): the copy is ahead
    call(2, ["a"])
    assert len(opened) == 1
    held = held_copies.take(path)
    assert held.version() == f"{value[0][0]}:2"
    assert L.deserialize("counts", held.stores["counts"].get(b"a")) == 3   # rebuilt from the changelog: 2 + 1
    held.close()


def test_a_copy_outside_a_query_is_closed_after_the_call(tmp_path):
    fn = function(Counting)
    fn.state_dir = str(tmp_path)
    _, _, handle = state_handle()
    fn.run((0,), iter([frame(0, ["a"])]), TaskState(handle))
    local = open_local_task_store(str(tmp_path / "streams-on-spark-state" / "no-query" / "0"), ["counts"])
    local.close()   # not locked: nothing held it


HOLDER = textwrap.dedent("""
    import sys
    from streams_on_spark.runtime.spark import held_copies
    from streams_on_spark.state.local import open_local_task_store
    local = open_local_task_store(sys.argv[1], ["counts"])
    local.stores["counts"].put(b"k", b"v")
    local.commit("e:1")
    if sys.argv[2] == "hold":
        held_copies.hold(local)
        held_copies.wait_flushed()
    print("ready", flush=True)
    sys.stdin.read()
    print("held" if held_copies.take(sys.argv[1]) is not None else "released", flush=True)
""")


def holder(path, how):
    child = subprocess.Popen([sys.executable, "-c", HOLDER, path, how], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env=os.environ.copy())
    assert child.stdout.readline() == "ready\n"
    return child


def test_a_copy_another_worker_holds_idle_is_handed_over(tmp_path):
    path = str(tmp_path / "task")
    child = holder(path, "hold")
    try:
        local = held_copies.open_copy(path, lambda: open_local_task_store(path, ["counts"]))
        assert local.version() == "e:1" and local.stores["counts"].get(b"k") == b"v"   # flushed when held
        local.close()
        out, _ = child.communicate("", timeout=30)
        assert out == "released\n"
    finally:
        child.kill()


def test_a_copy_another_worker_is_using_is_not_taken_from_it(tmp_path):
    path = str(tmp_path / "task")
    child = holder(path, "use")
    try:
        with pytest.raises(LocalStoreLocked, match="another process is running this task"):
            held_copies.open_copy(path, lambda: open_local_task_store(path, ["counts"]))
    finally:
        child.kill()


def test_a_held_copy_whose_directory_was_replaced_is_closed_not_taken(tmp_path):
    path = str(tmp_path / "task")
    local = open_local_task_store(path, ["counts"])
    local.commit("e:1")
    held_copies.hold(local)
    os.rename(path, path + ".old")
    os.makedirs(path)
    assert held_copies.take(path) is None
    assert local._db is None


def test_the_holder_is_named_while_it_holds_and_asked_before_a_first_open(tmp_path, monkeypatch):
    path = str(tmp_path / "task")
    child = holder(path, "hold")
    try:
        assert os.path.exists(path + ".holder")
        attempts = []

        def opener():
            attempts.append(1)
            return open_local_task_store(path, ["counts"])

        local = held_copies.open_copy(path, opener)
        assert len(attempts) == 1   # asked first: no attempt failed on the lock
        assert not os.path.exists(path + ".holder")   # the holder let it go and said so
        local.close()
    finally:
        child.kill()


def test_a_worker_killed_while_it_holds_a_copy_leaves_the_committed_version(tmp_path):
    path = str(tmp_path / "task")
    child = holder(path, "hold")   # flushed in the background once held
    child.kill()
    child.wait()
    local = open_local_task_store(path, ["counts"])   # no write-ahead log: only what was flushed is there
    assert local.version() == "e:1" and local.stores["counts"].get(b"k") == b"v"
    local.close()

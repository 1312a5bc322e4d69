"""A Python worker keeps a task's local RocksDB open between the task's micro-batches; another process taking the task
(another worker of the executor, or a worker started after a crash) gets it handed over and continues the task.

Spark's task context and state variables are stood in for (the Spark tests run the real ones): ``run`` is called as
``transformWithStateInPandas`` calls it, with the query and batch id a Spark task would see."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from streams_on_spark import Processor, Stores, Topology
from streams_on_spark.config import TaskConfig
from streams_on_spark.connectors.record_batch import RecordBatch, parse_records
from streams_on_spark.runtime.spark import live_tasks
from streams_on_spark.runtime.spark import task_function as task_function_module
from streams_on_spark.runtime.spark.output import ReturnedOutput
from streams_on_spark.runtime.spark.task_function import SubtopologyTaskFunction
from streams_on_spark.runtime.spark.task_state import TaskState
from streams_on_spark.serde import Serdes
from streams_on_spark.state import local as local_module
from streams_on_spark.topology.partitions import TopicLayout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
S, L = Serdes.String(), Serdes.Long()


class Counting(Processor):
    """Counts keys in a store and emits its own field: how many records it has seen."""

    def init(self, context):
        super().init(context)
        self.store = context.get_state_store("counts")
        self.seen = 0

    def process(self, record):
        self.seen += 1
        self.store.put(record.key, (self.store.get(record.key) or 0) + 1)
        self.context.forward(record.with_value(self.seen))


def function():
    topology = (Topology().add_source("src", "in", key_serde=S, value_serde=S)
                .add_processor("p", Counting, "src")
                .add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("counts"), S, L), "p")
                .add_sink("out", "out", "p", key_serde=S, value_serde=L))
    builder = topology.internal_builder
    builder.application_id = "app"
    layout = TopicLayout.of(builder, "app", {"in": 1, "out": 1})
    return SubtopologyTaskFunction(builder, 0, TaskConfig("app"), layout, ReturnedOutput())


class Value:
    def __init__(self, row=None):
        self.row = row

    def get(self):
        return self.row

    def update(self, row):
        self.row = tuple(row)


class ListVar:
    def __init__(self, rows=()):
        self.rows = list(rows)

    def get(self):
        return iter(list(self.rows))

    def appendValue(self, row):
        self.rows.append(tuple(row))

    def appendList(self, rows):
        self.rows.extend(tuple(r) for r in rows)

    def clear(self):
        self.rows = []


class Handle:
    def __init__(self, value=None, changelog=()):
        self.value, self.changelog = Value(value), ListVar(changelog)

    def getValueState(self, name, schema):
        return self.value

    def getListState(self, name, schema):
        return self.changelog


def frame(keys, first_offset):
    batch = RecordBatch("in", 0)
    for i, key in enumerate(keys):
        batch.add(first_offset + i, key.encode(), b"v", ())
    return pd.DataFrame({"topic": ["in"], "partition": [0], "offset": [first_offset], "ends": [batch.ends_bytes()],
                         "data": [bytes(batch.data)]})


def seen(out):
    """The Counting processor's field values the batch emitted (its ``seen`` counter, one per record)."""
    values = []
    for row in out.itertuples(index=False):
        batch = RecordBatch.from_bytes(row.topic, int(row.partition), row.data, row.ends)
        values.extend(L.deserialize("out", v) for v in parse_records(batch.data, len(batch))[2])
    return values


def run_batch(fn, handle, batch_id, keys, first_offset):
    return pd.concat(list(fn.run((0,), iter([frame(keys, first_offset)]), TaskState(handle), None, 1_000)))


@pytest.fixture
def spark_task(monkeypatch, tmp_path):
    """Calls of ``run`` see query ``q`` and the batch id set in ``batch``; the executor's directory is tmp_path."""
    batch = {"id": 0}
    monkeypatch.setattr(task_function_module, "streaming_batch", lambda: ("q", batch["id"]))
    monkeypatch.setattr(task_function_module, "_files_root", lambda: str(tmp_path))
    yield batch
    with live_tasks._LOCK:
        for path in list(live_tasks._OPEN):
            live_tasks._release(path)
        live_tasks._LIVE.clear()


def test_a_worker_running_a_task_again_keeps_its_store_open(spark_task, monkeypatch):
    opens = []
    real_open = local_module.LocalTaskStore.open
    monkeypatch.setattr(local_module.LocalTaskStore, "open", lambda self: (opens.append(self.path), real_open(self)))
    fn, handle = function(), Handle()
    for batch_id, keys in enumerate([["a", "b"], ["a"], ["c"]]):
        spark_task["id"] = batch_id
        out = run_batch(fn, handle, batch_id, keys, sum(len(k) for k in [["a", "b"], ["a"], ["c"]][:batch_id]))
    assert seen(out) == [4]                 # the processor's field carried over: one task, three batches
    assert len(opens) == 1                  # ... over one open of its database


def test_a_failed_batch_closes_the_store_and_the_task_continues_from_spark_state(spark_task, monkeypatch):
    fn, handle = function(), Handle()
    run_batch(fn, handle, 0, ["a"], 0)
    spark_task["id"] = 1
    commit = TaskState.commit
    monkeypatch.setattr(TaskState, "commit", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("boom")))
    with pytest.raises(RuntimeError, match="boom"):
        run_batch(fn, handle, 1, ["b"], 1)
    assert not live_tasks._OPEN and not live_tasks._IN_USE   # closed: nothing of the failed call is trusted
    monkeypatch.setattr(TaskState, "commit", commit)
    assert seen(run_batch(fn, handle, 1, ["b"], 1)) == [2]   # the retry continues from batch 0's image


CHILD = textwrap.dedent("""
    import importlib, json, pickle, sys
    sys.path[:0] = [{root!r}, {here!r}]
    t = importlib.import_module({module!r})   # the name the image refers to the processor's class by
    function = t.function
    from streams_on_spark.runtime.spark import task_function
    task_function.streaming_batch = lambda: ("q", 1)
    task_function._files_root = lambda: {files!r}
    value, changelog = pickle.load(open({state!r}, "rb"))
    fn = function()
    fn.run_id = {run_id!r}
    handle = t.Handle(value, changelog)
    out = t.run_batch(fn, handle, 1, ["b", "b"], 1)
    pickle.dump((handle.value.row, handle.changelog.rows), open({state!r}, "wb"))
    print(json.dumps(t.seen(out)))
""")


def test_another_process_taking_the_task_gets_the_open_store_handed_over(spark_task, tmp_path):
    fn, handle = function(), Handle()
    run_batch(fn, handle, 0, ["a"], 0)
    (path,) = live_tasks._OPEN       # this worker keeps the task's database open (RocksDB's lock held)
    with pytest.raises(local_module.LocalStoreLocked):
        local_module.LocalTaskStore(path, fn.local_store_names()).close()   # nobody else may open it as it is

    state = tmp_path / "state.pickle"
    state.write_bytes(pickle.dumps((handle.value.row, handle.changelog.rows)))
    code = CHILD.format(here=HERE, root=ROOT, module=__name__, files=str(tmp_path), state=str(state), run_id=fn.run_id)
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    assert json.loads(child.stdout.strip().splitlines()[-1]) == [2, 3]   # continued from this worker's image
    assert not live_tasks._OPEN and not live_tasks._LIVE                # let go of, and the task with it

    value, changelog = pickle.loads(state.read_bytes())
    handle.value.row, handle.changelog.rows = value, changelog
    spark_task["id"] = 2
    assert seen(run_batch(fn, handle, 2, ["c"], 3)) == [4]   # and back here: from the other process's image

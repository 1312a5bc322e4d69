"""Tasks move between a Spark executor's Python workers as images: processors keep their fields, the new worker's
stores, clock and topology are put back in; a task that cannot be pickled, or an image of an earlier run of the
application (a restart), means the task is rebuilt instead."""
from __future__ import annotations

import threading

from streams_on_spark import Processor, Serdes, Stores, Topology
from streams_on_spark.config import TaskConfig
from streams_on_spark.runtime.spark import live_tasks
from streams_on_spark.runtime.spark.clock import WallClock
from streams_on_spark.runtime.spark.output import ReturnedOutput
from streams_on_spark.runtime.spark.task_function import SubtopologyTaskFunction
from streams_on_spark.state.local import open_local_task_store
from streams_on_spark.topology.partitions import TopicLayout

S, L = Serdes.String(), Serdes.Long()


class Counting(Processor):
    def init(self, context):
        super().init(context)
        self.store = context.get_state_store("counts")
        self.seen = 0

    def process(self, record):
        self.seen += 1
        self.store.put(record.key, (self.store.get(record.key) or 0) + 1)
        self.context.forward(record.with_value(self.seen))


class Locked(Counting):
    def init(self, context):
        super().init(context)
        self.lock = threading.Lock()


def function(processor):
    topology = (Topology().add_source("src", "in", key_serde=S, value_serde=S)
                .add_processor("p", processor, "src")
                .add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("counts"), S, L), "p")
                .add_sink("out", "out", "p", key_serde=S, value_serde=L))
    builder = topology.internal_builder
    builder.application_id = "app"
    layout = TopicLayout.of(builder, "app", {"in": 1, "out": 1})
    return SubtopologyTaskFunction(builder, 0, TaskConfig("app"), layout, ReturnedOutput())


def feed(task, key, offset):
    task.add_record("in", 0, offset, offset, key.encode(), b"v", ())
    while task.process_one():
        pass
    return [L.deserialize("out", r.value) for r in task.collector.drain()]


def test_an_image_continues_the_task_with_the_new_workers_stores(tmp_path):
    fn = function(Counting)
    first = open_local_task_store(str(tmp_path / "task"), fn.local_store_names())
    clock = WallClock(None)
    task = fn.new_task(0, None, clock, first.stores, {})
    assert feed(task, "a", 0) + feed(task, "a", 1) == [1, 2]
    first.commit("e:1")
    data = live_tasks.image(("q", 0, 0), task, fn._externals(first, {}, clock), "run-1")
    first.close()

    second = open_local_task_store(str(tmp_path / "task"), fn.local_store_names())   # another worker process
    new_clock = WallClock(5)
    assert live_tasks.restore(data, fn._externals(second, {}, new_clock), "run-2") is None   # after a restart
    moved = live_tasks.restore(data, fn._externals(second, {}, new_clock), "run-1")
    assert moved is not task and moved.wall_clock is new_clock
    processor = moved.nodes["p"].processor
    assert processor.seen == 2
    assert processor.store.inner is second.stores["counts"]   # the new worker's database, not a pickled copy
    assert feed(moved, "a", 2) == [3]
    assert processor.store.get("a") == 3
    second.close()


def test_a_task_that_cannot_be_pickled_is_rebuilt_and_said_once(tmp_path, caplog):
    fn = function(Locked)
    local = open_local_task_store(str(tmp_path / "task"), fn.local_store_names())
    clock = WallClock(None)
    task = fn.new_task(0, None, clock, local.stores, {})
    key = ("q-locked", 0, 0)
    assert live_tasks.image(key, task, fn._externals(local, {}, clock)) is None
    assert live_tasks.image(key, task, fn._externals(local, {}, clock)) is None
    assert [r.getMessage() for r in caplog.records].count(next(r.getMessage() for r in caplog.records)) == 1
    assert "cannot be pickled" in caplog.records[0].getMessage()
    assert live_tasks.restore(None, {}) is None
    local.close()


def test_a_live_task_is_taken_only_at_the_version_it_committed():
    live = live_tasks.LiveTask("e:3", object(), None, WallClock(None))
    live_tasks.keep(("q", 0, 1), live)
    assert live_tasks.take(("q", 0, 1), "e:4") is None      # another worker ran it since
    live_tasks.keep(("q", 0, 1), live)
    assert live_tasks.take(("q", 0, 1), "e:3") is live
    assert live_tasks.take(("q", 0, 1), "e:3") is None      # taken out until kept again

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
"""
from __future__ import annotations

import io
import logging
import pickle
import struct
from collections import ChainMap, OrderedDict
from dataclasses import dataclass
from types import FunctionType
from typing import Any, Mapping, Optional

from streams_on_spark.runtime.fused import replanned_forward
from streams_on_spark.runtime.spark.clock import WallClock
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.state.local import LocalTaskStore

log = logging.getLogger(__name__)

_MAX_LIVE = 64   # tasks one worker process keeps (least recently run dropped first; its image still continues it)
_LIVE: "OrderedDict[tuple, LiveTask]" = OrderedDict()


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


def take(key: tuple, marker: Optional[str]) -> Optional[LiveTask]:
    """The live task under ``key`` if it is at version ``marker`` (then it is out of the cache until kept again).

    A task at another version is dropped without ``close()``: it went on elsewhere, or is being rebuilt."""
    live = _LIVE.pop(key, None)
    if live is None or marker is None or live.marker != marker:
        return None
    return live


def keep(key: tuple, live: LiveTask) -> None:
    """Keep a task that committed ``live.marker`` for its next batch."""
    _LIVE[key] = live
    while len(_LIVE) > _MAX_LIVE:
        _LIVE.popitem(last=False)


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

        def reducer_override(self, obj: Any) -> Any:
            """A fused forward (generated code) leaves as what plans it again in the worker that reads it."""
            fused_at = getattr(obj, "fused_at", None) if type(obj) is FunctionType else None
            if fused_at is not None:
                return replanned_forward, fused_at
            return super().reducer_override(obj)

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

"""A copy of every task's stores on the driver, for interactive queries on a running application
(``interactive.queries=true``).

Kafka answers interactive queries from the stores of the instance's own tasks (and, stale, from standby replicas fed
from changelog topics). Here the tasks run in Spark's executors, so the driver keeps a standby copy of each: loaded
once at start from the checkpoint (``SparkRuntime.read_state``, one Spark job), then fed by every micro-batch's commit
rows, where each task's first row carries what it committed (:func:`~streams_on_spark.runtime.spark.task_state.
committed_state`: the batch id, the task's snapshot and the batch's changes of its local stores). A query reads the
copy in memory: no Spark job, a point lookup a dictionary read. An answer reflects, per task, the last micro-batch
whose commit rows reached the driver (exposed as its position), which is at most one batch behind the executors.
"""
from __future__ import annotations

import logging
import pickle
import threading
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator, Mapping, Optional

from streams_on_spark.config import INTERACTIVE_QUERIES
from streams_on_spark.errors import StreamsException
from streams_on_spark.query.iqv2 import Position
from streams_on_spark.query.service import store_position
from streams_on_spark.runtime.task import StreamTask
from streams_on_spark.state.local import apply_changes

log = logging.getLogger(__name__)


class _Copy:
    """One task's copy: its local stores' tables, its snapshot and batch, and the task built over them (lazily)."""

    __slots__ = ("batch", "snapshot", "tables", "task")

    def __init__(self, batch: int, snapshot: Optional[bytes], tables: dict[str, Any]) -> None:
        self.batch, self.snapshot, self.tables = batch, snapshot, tables
        self.task: Optional[StreamTask] = None


class StandbyCopies:
    """The driver's copies of every task of a :class:`SparkRuntime`, by subtopology and partition."""

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime
        self._lock = threading.RLock()
        self._copies: dict[tuple[int, int], _Copy] = {}
        self._store_subtopology: dict[str, int] = {}
        self._global: Optional[dict[str, Any]] = None

    def load(self) -> None:
        """Read every task's state from the checkpoint (before the queries start: later batches reach :meth:`apply`)."""
        for sid, fn in self._runtime.functions.items():
            copies = {(sid, partition): _Copy(batch, snapshot, tables)
                      for partition, (batch, snapshot, tables) in self._runtime.read_state(sid).items()}
            with self._lock:   # a subtopology's copies answer (stale-store queries) once all are read
                self._copies.update(copies)
                for name in fn.spec().store_names:
                    self._store_subtopology[name] = sid
        log.info("interactive queries: a copy of %d tasks' stores on the driver", len(self._copies))

    def apply(self, sid: int, batch_id: int, rows: list) -> None:
        """Apply what each task of query ``sid`` committed in ``batch_id`` (its first commit row's ``state``)."""
        with self._lock:
            for row in rows:
                state = row["state"]
                if state is None:
                    continue
                batch, snapshot, changes = pickle.loads(bytes(state))
                copy = self._copies[(sid, int(row["task"]))]
                if batch <= copy.batch:   # a batch replayed after the copy applied it
                    continue
                apply_changes([changes], copy.tables)
                copy.batch, copy.snapshot, copy.task = batch, snapshot, None

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the copies still while a query reads them."""
        with self._lock:
            yield

    def subtopology_of(self, store_name: str) -> Optional[int]:
        return self._store_subtopology.get(store_name)

    def tasks(self, store_name: str) -> dict[int, StreamTask]:
        """Partition -> the copy of the task holding ``store_name`` (built again after a batch changed it); none while
        its subtopology's copies are still being read at start."""
        out: dict[int, StreamTask] = {}
        with self._lock:
            sid = self._store_subtopology.get(store_name)
            if sid is None:
                return out
            fn = self._runtime.functions[sid]
            for partition in range(fn.task_count()):
                copy = self._copies[(sid, partition)]
                if copy.task is None:
                    copy.task = fn.new_task(partition, copy.snapshot, bytes_stores=fn.bytes_stores(copy.tables),
                                            global_stores=self.global_stores())
                out[partition] = copy.task
        return out

    def batch(self, store_name: str, partition: int) -> int:
        """The micro-batch the copy of ``partition``'s task reflects (-1: none yet)."""
        sid = self._store_subtopology[store_name]
        return self._copies[(sid, partition)].batch

    def global_stores(self) -> dict[str, Any]:
        """The global stores as the driver holds them, caught up with the global topics at each call."""
        if self._runtime.global_reader is None:
            return {}
        fn = next(iter(self._runtime.functions.values()))
        return fn.global_stores()


class ApplicationQueryableState:
    """A running application as interactive queries see it: its lifecycle state (``lifecycle()``), the topology's
    stores, and the driver's copies of its tasks (``runtime()``: the :class:`SparkRuntime`, None before start)."""

    def __init__(self, builder: Any, lifecycle: Callable[[], str], runtime: Callable[[], Any],
                 application_server: Optional[str]) -> None:
        self._builder = builder
        self.lifecycle = lifecycle
        self._runtime = runtime
        self._server = application_server

    def _copies(self) -> StandbyCopies:
        runtime = self._runtime()
        if runtime.standby is None:
            raise StreamsException(f"interactive queries on a running application need '{INTERACTIVE_QUERIES}': "
                                   "true in its config (a copy of every task's stores is then kept on the driver)")
        return runtime.standby

    def store_names(self) -> frozenset:
        return frozenset(self._builder.state_factories) | self.global_store_names()

    def global_store_names(self) -> frozenset:
        return frozenset(g.store_name for g in self._builder.global_stores())

    def global_stores(self) -> Mapping[str, Any]:
        if self._runtime() is None or not self._builder.global_stores():
            return {}
        return self._copies().global_stores()

    def instances(self, store_name: str) -> dict[int, Any]:
        return {p: task.stores[store_name] for p, task in self._copies().tasks(store_name).items()}

    def position(self, store_name: str, partition: int) -> Position:
        """What the copy reflects: the store's position as of the task's last committed micro-batch."""
        return store_position(self._copies().tasks(store_name)[partition], store_name)

    def reflects(self, store_name: str, partition: int) -> str:
        """The micro-batch the copy of ``partition``'s task reflects (an answer's execution info)."""
        copies = self._copies()
        query = self._runtime().query_name(copies.subtopology_of(store_name))
        return f"as of micro-batch {copies.batch(store_name, partition)} of query {query}"

    def reading(self) -> Any:
        return self._copies().reading() if self._runtime() is not None else nullcontext()

    def subtopologies(self) -> list[tuple[frozenset, dict[str, int]]]:
        """The runtime's subtopology queries: their stores and source topics (no copy needed)."""
        runtime = self._runtime()
        specs = [fn.spec() for _, fn in sorted(runtime.functions.items())]
        return [(frozenset(spec.store_names), {t: runtime.layout.partitions_of(t) for t in spec.source_topics})
                for spec in specs]

    def application_server(self) -> Optional[str]:
        return self._server

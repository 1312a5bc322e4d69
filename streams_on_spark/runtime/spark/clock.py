"""Wall clocks of tasks on Spark: an application's (the micro-batch's time, :class:`SystemClock`), or the test
driver's mock clock moved by tick records (:class:`MockClock`)."""
from __future__ import annotations

import struct
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Protocol

if TYPE_CHECKING:
    from streams_on_spark.runtime.task import StreamTask

TICK = struct.Struct(">q")  # a wall-clock tick record's value: the mock time in ms


class WallClock:
    """The wall clock one task reads: a fixed time (``fixed_ms``: the micro-batch's timestamp, or the test driver's
    mock time it was last ticked to), else the system's."""

    __slots__ = ("fixed_ms",)

    def __init__(self, fixed_ms: Optional[int] = None) -> None:
        self.fixed_ms = fixed_ms

    def __call__(self) -> int:
        return int(time.time() * 1000) if self.fixed_ms is None else self.fixed_ms


class Clock(Protocol):
    """How a runtime's tasks keep wall-clock time: what a task's :class:`WallClock` reads in a batch, when the task
    punctuates, and what time it keeps in its state."""

    #: whether a batch's time is Spark's micro-batch timestamp (the task function reads it for each batch)
    reads_batch_time: bool

    def tick_topic(self, query_name: str) -> Optional[str]:
        """The topic query ``query_name`` reads its clock's ticks from (one partition per task); None: no ticks."""
        ...

    def task_clock(self) -> WallClock:
        """The wall clock of a task built afresh (a new task, or one rebuilt outside a query)."""
        ...

    def start_batch(self, clock: WallClock, saved_ms: int, batch_ms: int) -> None:
        """Set a task's ``clock`` for its next batch: ``saved_ms`` is the time the task kept in its state (-1:
        none), ``batch_ms`` the micro-batch's timestamp (-1: unknown)."""
        ...

    def punctuate_before(self, task: "StreamTask", clock: WallClock, ticks: list[int]) -> None:
        """Before the batch's records: move ``clock`` by the batch's ``ticks`` and punctuate if it moved."""
        ...

    def punctuate_after(self, task: "StreamTask") -> None:
        """After the batch's records: punctuate what the batch's time made due."""
        ...

    def saved_ms(self, clock: WallClock) -> int:
        """The time the task keeps in its state (``SavedTask.wall_clock``; -1: none)."""
        ...


class SystemClock:
    """An application's clock: a task reads its micro-batch's timestamp (Spark keeps it in the query's offset log,
    so a replayed batch reads the time its first run read), the system's outside a query; the task punctuates after
    each batch."""

    reads_batch_time = True

    def tick_topic(self, query_name: str) -> Optional[str]:
        return None

    def task_clock(self) -> WallClock:
        return WallClock(None)

    def start_batch(self, clock: WallClock, saved_ms: int, batch_ms: int) -> None:
        clock.fixed_ms = batch_ms if batch_ms >= 0 else None

    def punctuate_before(self, task: "StreamTask", clock: WallClock, ticks: list[int]) -> None:
        """Nothing: the system clock has no ticks."""

    def punctuate_after(self, task: "StreamTask") -> None:
        task.punctuate_wall_clock()

    def saved_ms(self, clock: WallClock) -> int:
        return -1


SYSTEM_CLOCK = SystemClock()


@dataclass(frozen=True)
class MockClock:
    """The test driver's wall clock: tasks start at ``start_ms``, and time moves only when the driver appends a tick
    (the new time) to every task's partition of the query's tick topic; each task punctuates before its batch."""

    start_ms: int

    reads_batch_time = False

    def tick_topic(self, query_name: str) -> Optional[str]:
        """The tick topic of a query (one partition per task)."""
        return f"{query_name}-wall-clock"

    def task_clock(self) -> WallClock:
        return WallClock(self.start_ms)

    def start_batch(self, clock: WallClock, saved_ms: int, batch_ms: int) -> None:
        """The time the task last saw (the batch's timestamp is not read)."""
        clock.fixed_ms = saved_ms if saved_ms >= 0 else self.start_ms

    def punctuate_before(self, task: "StreamTask", clock: WallClock, ticks: list[int]) -> None:
        """The driver advanced its mock clock: punctuate first, as Kafka's driver does."""
        if ticks:
            clock.fixed_ms = max(ticks)
            task.punctuate_wall_clock()

    def punctuate_after(self, task: "StreamTask") -> None:
        """Nothing: time moves only by ticks."""

    def saved_ms(self, clock: WallClock) -> int:
        return -1 if clock.fixed_ms is None else clock.fixed_ms

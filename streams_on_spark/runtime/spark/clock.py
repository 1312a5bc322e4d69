"""Wall clocks of tasks on Spark: the system's, or the test driver's mock clock moved by tick records."""
from __future__ import annotations

import struct
import time
from dataclasses import dataclass
from typing import Optional

TICK = struct.Struct(">q")  # a wall-clock tick record's value: the mock time in ms


class WallClock:
    """The wall clock one task reads: a fixed time (``fixed_ms``: the micro-batch's timestamp, or the test driver's
    mock time it was last ticked to), else the system's."""

    __slots__ = ("fixed_ms",)

    def __init__(self, fixed_ms: Optional[int] = None) -> None:
        self.fixed_ms = fixed_ms

    def __call__(self) -> int:
        return int(time.time() * 1000) if self.fixed_ms is None else self.fixed_ms


@dataclass(frozen=True)
class MockClock:
    """The test driver's wall clock: tasks start at ``start_ms``, and time moves only when the driver appends a tick
    (the new time) to every task's partition of the query's tick topic; each task punctuates before its batch."""

    start_ms: int

    @staticmethod
    def tick_topic(query_name: str) -> str:
        """The tick topic of a query (one partition per task)."""
        return f"{query_name}-wall-clock"

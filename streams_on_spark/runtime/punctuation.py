"""A task's punctuation schedules: one ``PunctuationQueue`` per punctuation type (Kafka's ``PunctuationQueue``).

A queue keeps its schedules in the order they were made, fires the due ones earliest first through the task's
runner (which sets the context and handles errors) and moves each past ``now``. A restored task hands its queues
the times a snapshot saved; the schedules its processors' ``init()`` makes take them, in order.
"""
from __future__ import annotations

import logging
from typing import Callable, Optional

from streams_on_spark.processor.api import Cancellable, PunctuationType, TaskId
from streams_on_spark.runtime.nodes import ProcessorNode

log = logging.getLogger(__name__)


class PunctuationSchedule(Cancellable):
    """One schedule: its node, next time, interval and punctuator."""

    __slots__ = ("node", "time", "interval", "punctuator", "cancelled")

    def __init__(self, node: ProcessorNode, time: int, interval: int, punctuator: Callable[[int], None]) -> None:
        self.node, self.time, self.interval, self.punctuator = node, time, interval, punctuator
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class PunctuationQueue:
    """The schedules of one punctuation type, in the order they were made."""

    def __init__(self, kind: PunctuationType) -> None:
        self.kind = kind
        self.schedules: list[PunctuationSchedule] = []
        # times a snapshot saved, handed to the schedules the processors' init() makes, in order (None: not restored)
        self._saved: Optional[list[int]] = None
        self._saved_count = 0

    def schedule(self, node: ProcessorNode, interval: int, punctuator: Callable[[int], None],
                 first_time: Callable[[], int]) -> PunctuationSchedule:
        """A new schedule, first due at the next saved time if any is left, else at ``first_time()``."""
        saved = self._saved
        sched = PunctuationSchedule(node, saved.pop(0) if saved else first_time(), interval, punctuator)
        self.schedules.append(sched)
        return sched

    def times(self) -> list[int]:
        """Every schedule's next time, in order (what a snapshot saves)."""
        return [s.time for s in self.schedules]

    def restore_times(self, times: list[int]) -> None:
        """Times a snapshot saved, for the schedules made next (the processors' ``init()``)."""
        self._saved = list(times)
        self._saved_count = len(times)

    def check_restored(self, task_id: TaskId) -> None:
        """Schedules are matched to the processors' init() calls, in order: say when the counts differ."""
        if self._saved is None:
            return
        if self._saved_count != len(self.schedules):
            log.warning("task %s: the saved state has %d punctuation schedule(s) where init() made %d; a schedule "
                        "made outside init() does not outlive the task instance", task_id, self._saved_count,
                        len(self.schedules))
        self._saved = None

    def next_due(self) -> Optional[int]:
        """When the next schedule is due (ms), or None if none is scheduled."""
        due = [s.time for s in self.schedules if not s.cancelled]
        return min(due) if due else None

    def maybe_punctuate(self, now: int, run: Callable[[PunctuationSchedule, int], None]) -> bool:
        """Run every schedule due at ``now`` (earliest first) through ``run`` and move it past ``now``; whether any
        fired."""
        schedules = self.schedules
        fired = False
        schedules[:] = [s for s in schedules if not s.cancelled]
        due = sorted((s for s in schedules if s.time <= now), key=lambda s: s.time)
        for sched in due:
            if sched.cancelled:
                continue
            run(sched, now)
            if sched.time + sched.interval <= now:
                missed = (now - sched.time) // sched.interval
                sched.time = sched.time + (missed + 1) * sched.interval
            else:
                sched.time += sched.interval
            fired = True
        return fired

"""Global stores on Spark: kept by each Python worker process and moved forward from the offsets they applied.

Kafka Streams keeps one global state per instance, updated by its global thread as the global topics grow. On Spark
the closest owner is the Python worker process: it keeps a :class:`GlobalStoreFollower` per application run between
micro-batches, and before a task runs, reads only what the global topics gained since (``GlobalReader.read``). A
batch's cost then grows with the new global records, not with the global tables' size. A worker process that has not
seen the application yet (a new executor, a restart) reads the topics from the beginning once, as Kafka restores
global stores on start-up.
"""
from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any, Optional

from streams_on_spark.config import TaskConfig
from streams_on_spark.connectors.base import GlobalReader
from streams_on_spark.runtime.spark.clock import WallClock
from streams_on_spark.topology.builder import InternalTopologyBuilder

log = logging.getLogger(__name__)

_MAX_FOLLOWERS = 8  # application runs one worker process keeps global stores for (least recently used dropped)
_FOLLOWERS: "OrderedDict[tuple, GlobalStoreFollower]" = OrderedDict()


class GlobalStoreFollower:
    """One application's global stores in this process, and the next offset of each global topic-partition."""

    def __init__(self, topology: InternalTopologyBuilder, config: TaskConfig, reader: GlobalReader) -> None:
        self.topology, self.config, self.reader = topology, config, reader
        self.clock = WallClock(None)   # the calling task's clock, set on each catch_up
        self._reset()

    def _reset(self) -> None:
        from streams_on_spark.runtime.global_task import GlobalTask
        self.task = GlobalTask(self.topology, self.config, self._now)
        self.positions: dict[str, dict[int, int]] = {}

    def _now(self) -> int:
        return self.clock()

    def catch_up(self, clock: Optional[WallClock] = None) -> dict[str, Any]:
        """Apply what the global topics gained since the last call; the stores, up to date."""
        self.clock = clock if clock is not None else WallClock(None)
        for topic in list(self.task.topics()):
            positions = self.positions.get(topic, {})
            records, ends = self.reader.read(topic, positions)
            if any(ends.get(p, 0) < offset for p, offset in positions.items()):
                # the topic holds fewer records than were applied (deleted and created again): start over
                log.warning("global topic %s ends before offsets already applied (%s < %s); rebuilding the global "
                            "stores from the beginning", topic, ends, positions)
                self._reset()
                return self.catch_up(clock)
            for record in records:
                self.task.apply(record)
            self.positions[topic] = ends
        return self.task.stores


def global_stores(key: tuple, topology: InternalTopologyBuilder, config: TaskConfig, reader: GlobalReader,
                  clock: Optional[WallClock] = None) -> dict[str, Any]:
    """This process's global stores of the application run identified by ``key`` (its global reader and run id),
    caught up with their topics."""
    follower = _FOLLOWERS.get(key)
    if follower is None:
        follower = _FOLLOWERS[key] = GlobalStoreFollower(topology, config, reader)
        while len(_FOLLOWERS) > _MAX_FOLLOWERS:
            _FOLLOWERS.popitem(last=False)
    else:
        _FOLLOWERS.move_to_end(key)
    return follower.catch_up(clock)

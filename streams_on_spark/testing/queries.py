"""The test driver's tasks as interactive queries see them (a :class:`~streams_on_spark.query.service.QueryableState`).

The driver processes every record to quiescence and commits after each, so an answer reflects every record piped so
far; the driver is RUNNING until closed, then NOT_RUNNING.
"""
from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Mapping, Optional

from streams_on_spark.config import APPLICATION_SERVER
from streams_on_spark.query.iqv2 import Position
from streams_on_spark.query.service import store_position
from streams_on_spark.topology.partitions import driver_subtopologies


class DriverQueryableState:
    """What ``TopologyTestDriver.store()``/``query()`` read: the engine's tasks and their input positions."""

    def __init__(self, driver: Any) -> None:
        self._driver = driver

    def lifecycle(self) -> str:
        return "NOT_RUNNING" if self._driver._closed else "RUNNING"

    def store_names(self) -> frozenset:
        return frozenset(self._driver._topology.internal_builder.state_factories) | self.global_store_names()

    def global_stores(self) -> Mapping[str, Any]:
        return self._driver._engine.global_stores

    def global_store_names(self) -> frozenset:
        return frozenset(self._driver._engine.global_stores)

    def instances(self, store_name: str) -> dict[int, Any]:
        return self._driver._engine.stores(store_name)

    def position(self, store_name: str, partition: int) -> Position:
        """The store's position: the offset of the last record that wrote it, per topic partition."""
        return store_position(self._driver._engine.store_tasks(store_name)[partition], store_name)

    def reflects(self, store_name: str, partition: int) -> str:
        """Every record piped so far (the driver processes each to quiescence and commits)."""
        return "as of every record piped"

    def reading(self) -> Any:
        """Nothing to hold: the driver's tasks change only while it processes, in the caller's thread."""
        return nullcontext()

    def subtopologies(self) -> list[tuple[frozenset, dict[str, int]]]:
        """The driver's tasks' subtopologies (one in single-partition mode, as Kafka's driver runs a topology)."""
        engine = self._driver._engine
        return [(frozenset(sub.store_names), {t: engine.partitions(t) for t in sub.source_topics})
                for sub in driver_subtopologies(self._driver._topology.internal_builder, self._driver.multi_partition)]

    def application_server(self) -> Optional[str]:
        return self._driver._config.streams_config.get(APPLICATION_SERVER) or None

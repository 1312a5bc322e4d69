"""Grouping slots: the value each task's rows are grouped by, so that task ``p`` runs in shuffle partition ``p``."""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def task_slots(tasks: int) -> list[int]:
    """The grouping value of each of ``tasks`` tasks, chosen so that task ``p`` gets shuffle (state) partition ``p``.

    Spark places a group in partition ``pmod(murmur3(key, seed 42), spark.sql.shuffle.partitions)``. Grouping by the
    Kafka partition number itself collides: with 4 tasks, partitions 0, 1 and 3 all hash to shuffle partition 3, so
    three tasks would run one after the other in one Spark task. Slot ``p + k * tasks``, with the smallest ``k`` that
    hashes to ``p``, keeps ``slot % tasks == p`` (the function recovers the partition) and spreads the tasks.
    """
    import mmh3
    slots = []
    for p in range(tasks):
        for k in range(100_000):
            slot = p + k * tasks
            if mmh3.hash(slot.to_bytes(4, "little", signed=True), 42) % tasks == p:
                break
        else:  # pragma: no cover - murmur3 is well spread; a collision only costs parallelism
            slot = p
            log.warning("no grouping slot of task partition %d hashes to shuffle partition %d", p, p)
        slots.append(slot)
    return slots

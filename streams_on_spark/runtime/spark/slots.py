"""A query's state partitions: how many, and the value each task's rows are grouped by so that the tasks spread
evenly over them."""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def state_partitions(tasks: int, limit: int) -> int:
    """How many state (shuffle) partitions a query of ``tasks`` tasks gets when at most ``limit`` may run at once
    (the session's ``spark.sql.shuffle.partitions``).

    A Spark task costs a fixed ~0.1–0.3 s whatever its rows (a Python worker call, the processor's ``init``, Spark's
    state store), and tasks beyond the cores run in a second wave that starts only when the first ends. So the query
    gets the fewest partitions that still finish a batch in as few rounds of task work as one partition per task
    would: a divisor ``n`` of ``tasks`` (each partition then runs ``tasks / n`` tasks, one after the other, and
    :func:`task_slots` spreads them evenly) with ``n * rounds >= tasks``, ``rounds`` being the waves ``tasks``
    partitions need on ``limit`` cores. Where that divisor exceeds ``limit`` (a prime task count, say), one partition
    per task, as before: grouping would add rounds. 4 tasks on 2 cores: 2 partitions of 2 tasks, one wave instead of
    two; 3 tasks on 2 cores: 3 partitions.
    """
    if tasks < 1:
        raise ValueError(f"a query has at least one task, got {tasks}")
    width = max(1, min(tasks, limit))
    rounds = -(-tasks // width)
    n = next(n for n in range(1, tasks + 1) if tasks % n == 0 and n * rounds >= tasks)
    return n if n <= width else tasks


def task_slots(tasks: int) -> list[int]:
    """The grouping value of each of ``tasks`` tasks, chosen so that task ``p`` gets shuffle (state) partition ``p``
    of ``tasks``, and so partition ``p % n`` of any ``n`` that divides ``tasks`` (:func:`state_partitions`).

    Spark places a group in partition ``pmod(murmur3(key, seed 42), spark.sql.shuffle.partitions)``. Grouping by the
    Kafka partition number itself collides: with 4 tasks, partitions 0, 1 and 3 all hash to shuffle partition 3, so
    three tasks would run one after the other in one Spark task. Slot ``p + k * tasks``, with the smallest ``k`` that
    hashes to ``p``, keeps ``slot % tasks == p`` (the function recovers the partition) and spreads the tasks; a hash
    equal to ``p`` modulo ``tasks`` is equal to ``p`` modulo every divisor of ``tasks``. The slots depend on
    ``tasks`` alone: a task's state is kept under its slot, so a checkpoint keeps it whatever its partition count.
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

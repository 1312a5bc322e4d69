"""How many state partitions a query gets, and how its tasks spread over them (no Spark: Spark's own placement is
checked in tests/integration/spark/test_task_slots.py)."""
from __future__ import annotations

import mmh3
import pytest

from streams_on_spark.runtime.spark.slots import state_partitions, task_slots


@pytest.mark.parametrize("tasks, limit, expected", [
    (1, 2, 1), (2, 2, 2), (4, 2, 2), (8, 2, 2), (6, 4, 3), (9, 4, 3), (12, 8, 6), (4, 3, 2), (4, 1, 1),
    (4, 200, 4), (16, 200, 16),
    (3, 2, 3), (5, 2, 5), (5, 4, 5), (10, 4, 10),   # no divisor without an extra round: one partition per task
])
def test_the_fewest_partitions_that_add_no_round(tasks, limit, expected):
    assert state_partitions(tasks, limit) == expected


@pytest.mark.parametrize("tasks", range(1, 25))
@pytest.mark.parametrize("limit", range(1, 10))
def test_never_more_rounds_than_one_partition_per_task(tasks, limit):
    """Each of n partitions runs tasks/n tasks in turn: never more rounds of task work than tasks partitions on
    limit cores, never more partitions than that, and the tasks evenly spread."""
    n = state_partitions(tasks, limit)
    width = min(tasks, limit)
    assert tasks % n == 0
    assert (tasks // n) * -(-n // width) <= -(-tasks // width)
    assert n == tasks or n <= width


@pytest.mark.parametrize("tasks", [1, 2, 3, 4, 6, 8, 12, 16])
def test_the_slots_spread_the_tasks_over_every_divisor(tasks):
    """Spark places a group at pmod(murmur3(slot), n): the slot of task p lands on p % n for every n dividing the
    task count, so each of the n partitions runs the same number of tasks."""
    slots = task_slots(tasks)
    for n in (d for d in range(1, tasks + 1) if tasks % d == 0):
        placed = [mmh3.hash(s.to_bytes(4, "little", signed=True), 42) % n for s in slots]
        assert placed == [p % n for p in range(tasks)]


def test_a_query_has_a_task():
    with pytest.raises(ValueError, match="at least one task"):
        state_partitions(0, 2)

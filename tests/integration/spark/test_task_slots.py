"""Each task of a subtopology gets its own state partition, or shares one evenly, by Spark's own hash placement."""
from __future__ import annotations

import pytest

from streams_on_spark.runtime.spark import task_slots

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("tasks", [1, 2, 3, 4, 5, 8, 16])
def test_spark_places_task_p_in_shuffle_partition_p(spark, tasks):
    """Spark's HashPartitioning puts a group at pmod(murmur3(key, 42), n); the slots must spread the tasks: over
    ``tasks`` partitions one each, over a divisor ``n`` of it task p in partition p % n (state_partitions)."""
    slots = task_slots(tasks)
    assert [s % tasks for s in slots] == list(range(tasks))          # the function recovers the partition
    divisors = [n for n in range(1, tasks + 1) if tasks % n == 0]
    rows = spark.createDataFrame([(s,) for s in slots], "slot int").selectExpr(
        *(f"pmod(hash(slot), {n}) AS p{n}" for n in divisors)).collect()
    for n in divisors:
        assert [r[f"p{n}"] for r in rows] == [p % n for p in range(tasks)]

"""The task snapshot: a task's state between two instances (Spark keeps it in the task's state, so it lives in users'
checkpoints and every version written so far must stay readable).

``TaskSnapshot`` holds it by name; :meth:`TaskSnapshot.to_bytes` writes the current version and
:meth:`TaskSnapshot.from_bytes` reads any version in ``READERS``, one reader per version. The bytes are a pickled
tuple, its first item the version:

- 4 (written): as 3, then the stores' positions ``{store name: {"topic\\0partition": offset}}`` (the offset of the
  last record in process while the store was written: what an interactive query's position reflects);
- 3: ``(3, stream time, {"topic\\0partition": (partition time, next offset)}, stores, stream-time punctuation
  times, wall-clock punctuation times, round-robin counters, (processed, dropped), processor metadata)``; its stores
  start with empty positions (as Kafka's stores without a position checkpoint);
- 2: as 3, but each partition's value is its partition time alone (no position yet: it starts at the next record
  queued);
- 1 (not read): suppression buffer entries of an older layout, which this version cannot read.

A new version adds a reader and moves ``to_bytes`` to its layout; ``SNAPSHOT_VERSION`` and
``READABLE_SNAPSHOT_VERSIONS`` go into the checkpoint manifest's format check.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any, Callable

from streams_on_spark.errors import StreamsException

SNAPSHOT_VERSION = 4


@dataclass
class TaskSnapshot:
    """A task's state without its queued records: stores (but an engine's own), times, schedules, counters."""

    stream_time: int
    # (topic, partition) -> (partition time, next offset), in the order the task first fed the partitions
    positions: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)
    stores: dict[str, Any] = field(default_factory=dict)   # store name -> its bytes-level entries
    stream_time_punctuations: list[int] = field(default_factory=list)
    wall_clock_punctuations: list[int] = field(default_factory=list)
    round_robin: dict[str, int] = field(default_factory=dict)   # the null-key partitioner's counters
    processed: int = 0
    dropped: int = 0
    processor_metadata: dict[str, int] = field(default_factory=dict)
    # store name -> (topic, partition) -> the offset of the last record in process while the store was written
    store_positions: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        """Version :data:`SNAPSHOT_VERSION`'s bytes."""
        state = (SNAPSHOT_VERSION, self.stream_time,
                 {_key(topic, partition): position for (topic, partition), position in self.positions.items()},
                 self.stores, self.stream_time_punctuations, self.wall_clock_punctuations, self.round_robin,
                 (self.processed, self.dropped), self.processor_metadata,
                 {name: {_key(topic, partition): offset for (topic, partition), offset in offsets.items()}
                  for name, offsets in self.store_positions.items()})
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def from_bytes(data: bytes, task: object = "?") -> "TaskSnapshot":
        """A snapshot of any readable version; ``task`` names the task in the error for another version."""
        state = pickle.loads(data)
        reader = READERS.get(state[0])
        if reader is None:
            raise StreamsException(f"task {task}: snapshot version {state[0]} is not supported "
                                   f"(this version reads {sorted(READERS)})")
        return reader(state)


def _key(topic: str, partition: int) -> str:
    return f"{topic}\x00{partition}"


def _partition(key: str) -> tuple[str, int]:
    topic, partition = key.split("\x00")
    return topic, int(partition)


def _read_v2(state: tuple) -> TaskSnapshot:
    """Version 2: partition times only; a position starts from the next record queued (offset 0 until then)."""
    (_, stream_time, partition_times, stores, stream_sched, wall_sched, counters, (processed, dropped),
     processor_metadata) = state
    return TaskSnapshot(stream_time, {_partition(key): (partition_time, 0)
                                      for key, partition_time in partition_times.items()},
                        stores, list(stream_sched), list(wall_sched), dict(counters), processed, dropped,
                        dict(processor_metadata))


def _read_v3(state: tuple) -> TaskSnapshot:
    """Version 3: each partition's time and position."""
    (_, stream_time, positions, stores, stream_sched, wall_sched, counters, (processed, dropped),
     processor_metadata) = state
    return TaskSnapshot(stream_time, {_partition(key): tuple(position) for key, position in positions.items()},
                        stores, list(stream_sched), list(wall_sched), dict(counters), processed, dropped,
                        dict(processor_metadata))


def _read_v4(state: tuple) -> TaskSnapshot:
    """Version 4: version 3 and the stores' positions."""
    snapshot = _read_v3(state[:-1])
    snapshot.store_positions = {name: {_partition(key): offset for key, offset in offsets.items()}
                                for name, offsets in state[-1].items()}
    return snapshot


READERS: dict[int, Callable[[tuple], TaskSnapshot]] = {2: _read_v2, 3: _read_v3, 4: _read_v4}
READABLE_SNAPSHOT_VERSIONS = frozenset(READERS)

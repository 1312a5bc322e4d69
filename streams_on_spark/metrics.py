"""Metrics as Kafka Streams names them: :class:`MetricName` (name, group, tags), a :class:`Metrics` map of values,
and :class:`Sensor`, the sampled statistics behind them (totals, rates, averages, maxima).

Kafka's ``metrics()`` returns ``Map<MetricName, Metric>``; here the map's values are the metrics' current values
(Kafka's ``metricValue()``). Rates, averages and maxima are sampled as Kafka samples them: ``metrics.num.samples``
windows of ``metrics.sample.window.ms`` (2 × 30 s by default); a rate divides by at least all but one full window,
and an average or maximum with no sample in the windows is NaN. Leaf types: nothing else of the library is imported.
"""
from __future__ import annotations

import math
import time
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

# Kafka's groups (org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl and the consumer's)
CLIENT_GROUP = "stream-metrics"
THREAD_GROUP = "stream-thread-metrics"
TASK_GROUP = "stream-task-metrics"
CONSUMER_FETCH_GROUP = "consumer-fetch-manager-metrics"
SAMPLE_WINDOW_S = 30.0
NUM_SAMPLES = 2


@dataclass(frozen=True)
class MetricName:
    """A metric's identity, as Kafka's ``MetricName``: its name, group and tags (e.g. ``thread-id``, ``task-id``)."""

    name: str
    group: str
    tags: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"metric name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.group, str) or not self.group:
            raise ValueError(f"metric group must be a non-empty string, got {self.group!r}")
        if not isinstance(self.tags, Mapping):
            raise ValueError(f"metric tags must be a mapping, got {type(self.tags).__name__}")
        object.__setattr__(self, "tags", types.MappingProxyType({str(k): str(v) for k, v in self.tags.items()}))

    def __hash__(self) -> int:
        return hash((self.name, self.group, frozenset(self.tags.items())))

    def __repr__(self) -> str:
        return f"MetricName(name={self.name!r}, group={self.group!r}, tags={dict(self.tags)!r})"


class Metrics(Mapping):
    """What ``metrics()`` returns: :class:`MetricName` -> value, with look-ups by name.

    ``metrics["process-total"]`` (a name, not a :class:`MetricName`) combines every metric of that name, preferring
    the task-level ones: ``-total`` and ``-rate`` metrics are summed, ``-max`` ones maxed; any other name must be
    unique (else use :meth:`value` with a group and tags).
    """

    def __init__(self, values: Optional[Mapping[MetricName, float]] = None) -> None:
        self._values: dict[MetricName, float] = dict(values or {})

    def __getitem__(self, key: Any) -> float:
        if isinstance(key, MetricName):
            return self._values[key]
        if isinstance(key, str):
            return self._combined(key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[MetricName]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            return any(m.name == key for m in self._values)
        return key in self._values

    def __repr__(self) -> str:
        return f"Metrics({self._values!r})"

    def names(self) -> set[str]:
        """Every metric name present."""
        return {m.name for m in self._values}

    def find(self, name: str, group: Optional[str] = None,
             tags: Optional[Mapping[str, str]] = None) -> dict[MetricName, float]:
        """The metrics named ``name`` (in ``group``, with at least ``tags``, when given)."""
        want = {str(k): str(v) for k, v in (tags or {}).items()}
        return {m: v for m, v in self._values.items() if m.name == name and (group is None or m.group == group)
                and all(m.tags.get(k) == v for k, v in want.items())}

    def value(self, name: str, group: Optional[str] = None, tags: Optional[Mapping[str, str]] = None) -> float:
        """The value of the one metric named ``name`` in ``group`` with ``tags``; KeyError if none or several."""
        found = self.find(name, group, tags)
        if len(found) != 1:
            raise KeyError(f"{len(found)} metrics named {name!r} (group {group}, tags {dict(tags or {})}): "
                           f"{sorted(map(repr, found)) or 'none'}; name the group and tags of one")
        return next(iter(found.values()))

    def _combined(self, name: str) -> float:
        found = self.find(name, TASK_GROUP) or self.find(name)
        if not found:
            raise KeyError(f"no metric named {name!r}; present: {sorted(self.names())}")
        if len(found) == 1:
            return next(iter(found.values()))
        if len({m.group for m in found}) == 1:
            if name.endswith(("-total", "-rate")):
                return sum(found.values())
            if name.endswith("-max"):
                return max(found.values())
        raise KeyError(f"{len(found)} metrics named {name!r}; use value({name!r}, group, tags) for one of "
                       f"{sorted(map(repr, found))}")


class Sensor:
    """Values recorded over time: their cumulative count and sum, and sampled rate, average and maximum."""

    def __init__(self, window_s: float = SAMPLE_WINDOW_S, samples: int = NUM_SAMPLES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if window_s <= 0 or samples < 1:
            raise ValueError(f"sample window must be > 0 s and samples >= 1, got {window_s} s and {samples}")
        self.window_s, self.samples, self.clock = window_s, samples, clock
        self.count = 0
        self.sum = 0.0
        self._last_total = 0.0   # the counter read by the last record_total
        self._samples: list[list[float]] = []  # [start, count, sum, max] per sample window, oldest first

    def record(self, value: float = 1.0, now: Optional[float] = None) -> None:
        """Record one value (a count of records for a rate of records, a latency for an average)."""
        now = self.clock() if now is None else now
        self.count += 1
        self.sum += value
        self._purge(now)
        current = self._samples[-1] if self._samples else None
        if current is None or now - current[0] >= self.window_s:
            self._samples.append([now, 1, value, value])
        else:
            current[1] += 1
            current[2] += value
            current[3] = max(current[3], value)

    def _purge(self, now: float) -> None:
        horizon = now - self.window_s * self.samples
        self._samples = [s for s in self._samples if s[0] + self.window_s > horizon]

    def rate(self, now: Optional[float] = None) -> float:
        """Sum of the recorded values per second over the sample windows (Kafka's ``Rate``)."""
        return self._per_second(2, now)

    def events_rate(self, now: Optional[float] = None) -> float:
        """Recordings per second over the sample windows (Kafka's ``Rate`` of a ``WindowedCount``)."""
        return self._per_second(1, now)

    def _per_second(self, column: int, now: Optional[float]) -> float:
        now = self.clock() if now is None else now
        self._purge(now)
        if not self._samples:
            return 0.0
        elapsed = now - self._samples[0][0]
        full = int(elapsed // self.window_s)
        if full < self.samples - 1:   # as Kafka: at least all but one full window, so a fresh rate is not huge
            elapsed += (self.samples - 1 - full) * self.window_s
        return sum(s[column] for s in self._samples) / elapsed if elapsed > 0 else 0.0

    def avg(self, now: Optional[float] = None) -> float:
        """The average recorded value over the sample windows; NaN without samples."""
        self._purge(self.clock() if now is None else now)
        count = sum(s[1] for s in self._samples)
        return sum(s[2] for s in self._samples) / count if count else math.nan

    def max(self, now: Optional[float] = None) -> float:
        """The largest recorded value over the sample windows; NaN without samples."""
        self._purge(self.clock() if now is None else now)
        return max((s[3] for s in self._samples), default=math.nan)

    def record_total(self, total: float, now: Optional[float] = None) -> None:
        """Record the growth of a cumulative counter since the last call (a rate fed from a counter read lazily)."""
        grown, self._last_total = total - self._last_total, total
        if grown > 0:
            self.record(grown, now)


class TaskSensors:
    """Kafka's task-level metrics (``stream-task-metrics``) of tasks that keep processed and dropped counters.

    Provided: ``process-total``, ``process-rate``, ``dropped-records-total``, ``dropped-records-rate``. Not provided
    (Kafka has them): ``process-latency-avg/max``, ``record-lateness-avg/max``, ``enforced-processing-rate/total``,
    ``active-process-ratio``, ``active-buffer-count``, ``punctuate-*`` and the task's ``commit-*``.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._sensors: dict[tuple[str, str], Sensor] = {}

    def _sensor(self, task_id: str, what: str) -> Sensor:
        sensor = self._sensors.get((task_id, what))
        if sensor is None:
            sensor = self._sensors[(task_id, what)] = Sensor(clock=self.clock)
        return sensor

    def add(self, task_id: str, processed: int, dropped: int, now: Optional[float] = None) -> None:
        """Count records a task processed and dropped (deltas, e.g. one micro-batch's)."""
        now = self.clock() if now is None else now
        for what, n in (("process", processed), ("dropped-records", dropped)):
            sensor = self._sensor(task_id, what)
            if n:
                sensor.record(n, now)

    def observe(self, task_id: str, processed: int, dropped: int, now: Optional[float] = None) -> None:
        """Read a task's cumulative counters (the rates take their growth since the last read)."""
        now = self.clock() if now is None else now
        self._sensor(task_id, "process").record_total(processed, now)
        self._sensor(task_id, "dropped-records").record_total(dropped, now)

    def metrics(self, thread_id: Any, now: Optional[float] = None) -> dict[MetricName, float]:
        """Every task's metrics, tagged with ``thread_id`` (a str, or a function of the task id) and its task id."""
        now = self.clock() if now is None else now
        out: dict[MetricName, float] = {}
        for (task_id, what), sensor in sorted(self._sensors.items()):
            thread = thread_id(task_id) if callable(thread_id) else thread_id
            tags = {"thread-id": thread, "task-id": task_id}
            out[MetricName(f"{what}-total", TASK_GROUP, tags)] = int(sensor.sum)
            out[MetricName(f"{what}-rate", TASK_GROUP, tags)] = sensor.rate(now)
        return out

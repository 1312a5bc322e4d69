"""``Suppressed`` and ``BufferConfig``: hold table updates back, emitting only final (or less frequent) results."""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Optional

from streams_on_spark.dsl.params import validate_name


def _ms(value: int | timedelta, what: str) -> int:
    ms = int(value.total_seconds() * 1000) if isinstance(value, timedelta) else value
    if not isinstance(ms, int) or isinstance(ms, bool):
        raise ValueError(f"{what} must be an int (ms) or a timedelta, got {value!r}")
    if ms < 0:
        raise ValueError(f"{what} cannot be negative, got {ms}")
    return ms


@dataclass(frozen=True)
class BufferConfig:
    """How much a suppression may buffer, and what happens when it is full."""

    max_records: Optional[int] = None
    max_bytes: Optional[int] = None
    emit_early: bool = True
    logging_enabled: bool = True

    @staticmethod
    def unbounded() -> "BufferConfig":
        """No limit (a strict buffer: it never emits early); the one ``until_window_closes`` needs."""
        return BufferConfig(emit_early=False)

    @staticmethod
    def max_records_(n: int) -> "BufferConfig":
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"max_records must be a positive int, got {n!r}")
        return BufferConfig(max_records=n)

    @staticmethod
    def max_bytes_(n: int) -> "BufferConfig":
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"max_bytes must be a positive int, got {n!r}")
        return BufferConfig(max_bytes=n)

    def with_max_records(self, n: int) -> "BufferConfig":
        return replace(self, max_records=BufferConfig.max_records_(n).max_records)

    def with_max_bytes(self, n: int) -> "BufferConfig":
        return replace(self, max_bytes=BufferConfig.max_bytes_(n).max_bytes)

    def emit_early_when_full(self) -> "BufferConfig":
        return replace(self, emit_early=True)

    def shutdown_when_full(self) -> "BufferConfig":
        """Fail the task instead of emitting early when the buffer fills."""
        return replace(self, emit_early=False)

    def with_logging_disabled(self) -> "BufferConfig":
        return replace(self, logging_enabled=False)

    @property
    def is_strict(self) -> bool:
        return not self.emit_early


@dataclass(frozen=True)
class Suppressed:
    """``until_window_closes``: one final result per window; ``until_time_limit``: rate-limit updates per key."""

    final_results: bool
    time_to_wait_ms: int = 0
    buffer_config: BufferConfig = BufferConfig.unbounded()
    name: Optional[str] = None

    def __post_init__(self) -> None:
        validate_name(self.name)

    @staticmethod
    def until_window_closes(buffer_config: BufferConfig) -> "Suppressed":
        if not isinstance(buffer_config, BufferConfig):
            raise ValueError("buffer_config must be a BufferConfig (e.g. BufferConfig.unbounded())")
        if not buffer_config.is_strict:
            raise ValueError("until_window_closes needs a strict buffer: BufferConfig.unbounded() or "
                             "BufferConfig.max_records_(n).shutdown_when_full(), so no result is emitted early")
        return Suppressed(final_results=True, buffer_config=buffer_config)

    @staticmethod
    def until_time_limit(time_to_wait_for_more_events: int | timedelta, buffer_config: BufferConfig) -> "Suppressed":
        if not isinstance(buffer_config, BufferConfig):
            raise ValueError("buffer_config must be a BufferConfig")
        return Suppressed(final_results=False,
                          time_to_wait_ms=_ms(time_to_wait_for_more_events, "time_to_wait_for_more_events"),
                          buffer_config=buffer_config)

    def with_name(self, name: str) -> "Suppressed":
        return replace(self, name=name)

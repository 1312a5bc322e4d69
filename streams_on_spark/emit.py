"""When a windowed aggregation forwards its results: Kafka's ``EmitStrategy`` (KIP-825)."""
from __future__ import annotations

import enum
from dataclasses import dataclass

from streams_on_spark.errors import require_instance


class StrategyType(enum.Enum):
    """Kafka's ``EmitStrategy.StrategyType``, with its codes."""

    ON_WINDOW_UPDATE = 0
    ON_WINDOW_CLOSE = 1


@dataclass(frozen=True, slots=True)
class EmitStrategy:
    """Emit every update of a window (the default) or only its final result once it closes."""

    strategy_type: StrategyType

    def __post_init__(self) -> None:
        require_instance(self.strategy_type, "strategy_type", StrategyType)

    def type(self) -> StrategyType:
        """Kafka's ``type()``."""
        return self.strategy_type

    @staticmethod
    def on_window_close() -> "EmitStrategy":
        """Forward each window once, when stream time passes its end plus grace (``EmitStrategy.onWindowClose()``)."""
        return EmitStrategy(StrategyType.ON_WINDOW_CLOSE)

    @staticmethod
    def on_window_update() -> "EmitStrategy":
        """Forward every update of a window as it happens (``EmitStrategy.onWindowUpdate()``, the default)."""
        return EmitStrategy(StrategyType.ON_WINDOW_UPDATE)


EmitStrategy.StrategyType = StrategyType  # type: ignore[attr-defined]  # Kafka's nested EmitStrategy.StrategyType

__all__ = ["EmitStrategy", "StrategyType"]

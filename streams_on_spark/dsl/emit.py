"""``EmitStrategy`` (KIP-825) for the DSL; it lives in ``streams_on_spark.emit``, where processors read it too."""
from streams_on_spark.emit import EmitStrategy, StrategyType

__all__ = ["EmitStrategy", "StrategyType"]

"""``KeyValue``: a key and a value, unpackable as a tuple."""
from __future__ import annotations

from typing import Any, NamedTuple


class KeyValue(NamedTuple):
    """Kafka's ``KeyValue``; a named tuple so ``for k, v in store.all()`` works."""

    key: Any
    value: Any

    @staticmethod
    def pair(key: Any, value: Any) -> "KeyValue":
        return KeyValue(key, value)

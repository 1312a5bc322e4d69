"""``Change``: a table update's new and old value (Kafka's ``kstream.internals.Change``), a leaf type the serdes,
stores and processors share."""
from __future__ import annotations

from typing import Any


class Change:
    """A table update: the new value and (if requested) the old one."""

    __slots__ = ("new_value", "old_value")

    def __init__(self, new_value: Any, old_value: Any = None) -> None:
        self.new_value = new_value
        self.old_value = old_value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Change) and (self.new_value, self.old_value) == (other.new_value, other.old_value)

    def __repr__(self) -> str:
        return f"Change(new={self.new_value!r}, old={self.old_value!r})"

"""``Change``: a table update's new and old value (Kafka's ``kstream.internals.Change``), a leaf type the serdes,
stores and processors share."""
from __future__ import annotations

from typing import Any


class Change:
    """A table update: the new value and (if requested) the old one."""

    __slots__ = ("new_value", "old_value")
    #: False for an out-of-order update of a versioned table (Kafka's ``isLatest``; see :class:`OutOfOrderChange`)
    is_latest = True

    def __init__(self, new_value: Any, old_value: Any = None) -> None:
        self.new_value = new_value
        self.old_value = old_value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Change) and (self.new_value, self.old_value) == (other.new_value, other.old_value)

    def __repr__(self) -> str:
        return f"Change(new={self.new_value!r}, old={self.old_value!r})"


class OutOfOrderChange(Change):
    """An update of a versioned table older than its key's latest version (Kafka's ``Change`` with ``isLatest``
    false): forwarded, but table-table joins and ``group_by`` skip it (KIP-914)."""

    __slots__ = ()
    is_latest = False


def make_change(new_value: Any, old_value: Any = None, is_latest: bool = True) -> Change:
    """A :class:`Change`, or an :class:`OutOfOrderChange` when it is not the latest."""
    return Change(new_value, old_value) if is_latest else OutOfOrderChange(new_value, old_value)

"""Java collection orders that Kafka's ``TopologyDescription`` text depends on.

Kafka prints sets with ``HashSet.toString()`` and sorts nodes in ``TreeSet``s whose comparator reads sizes
that change while the sets are filled. To print the same bytes we reproduce both: HashMap bucket order and
red-black-tree insertion (``java.util.TreeMap.put`` + ``fixAfterInsertion``).
"""
from __future__ import annotations

from typing import Callable, Generic, Iterable, Iterator, Sequence, TypeVar

T = TypeVar("T")


def java_string_hash(s: str) -> int:
    """``String.hashCode()`` over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    for unit in _utf16_units(s):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _utf16_units(s: str) -> Iterator[int]:
    for ch in s:
        cp = ord(ch)
        if cp < 0x10000:
            yield cp
        else:
            cp -= 0x10000
            yield 0xD800 + (cp >> 10)
            yield 0xDC00 + (cp & 0x3FF)


def _spread(h: int) -> int:
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def hash_set_order(items: Sequence[str], *, from_collection: bool = False) -> list[str]:
    """Iteration order of a ``java.util.HashSet<String>`` filled with ``items`` in this order.

    ``from_collection`` models ``new HashSet<>(collection)`` (initial capacity from the collection size);
    otherwise ``new HashSet<>()`` followed by ``add`` calls. Buckets are visited in index order, entries in a
    bucket in insertion order (resizes keep that order).
    """
    return hash_order(items, java_string_hash, from_collection=from_collection)


def hash_order(items: Sequence[T], hash_of: Callable[[T], int], *, from_collection: bool = False) -> list[T]:
    """Iteration order of a ``java.util.HashSet`` (or a ``HashMap``'s keys) of elements whose ``hashCode()`` is
    ``hash_of``, filled with ``items`` in this order (see :func:`hash_set_order`)."""
    unique = list(dict.fromkeys(items))
    n = len(unique)
    if from_collection:
        capacity = _table_size(max(int(n / 0.75) + 1, 16))
    else:
        capacity = 16
    while n > capacity * 0.75:
        capacity *= 2
    mask = capacity - 1
    indexed = [(_spread(hash_of(item)) & mask, i) for i, item in enumerate(unique)]
    indexed.sort()
    return [unique[i] for _, i in indexed]


def topic_partition_hash(topic_partition: tuple[str, int]) -> int:
    """``TopicPartition.hashCode()``: ``31 * (31 + partition) + topic.hashCode()``, a signed 32-bit int."""
    topic, partition = topic_partition
    h = (31 * (31 + partition) + java_string_hash(topic)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _table_size(cap: int) -> int:
    n = 1
    while n < cap:
        n *= 2
    return n


def java_set_str(items: Iterable[str], *, from_collection: bool = False) -> str:
    """``HashSet.toString()``: ``[a, b]``."""
    return "[" + ", ".join(hash_set_order(list(items), from_collection=from_collection)) + "]"


class _Entry(Generic[T]):
    __slots__ = ("value", "left", "right", "parent", "black")

    def __init__(self, value: T, parent: "_Entry[T] | None") -> None:
        self.value = value
        self.left: _Entry[T] | None = None
        self.right: _Entry[T] | None = None
        self.parent = parent
        self.black = True


class JavaTreeSet(Generic[T]):
    """``java.util.TreeSet`` with a comparator: same tree shape, so the same order when keys drift."""

    def __init__(self, compare: Callable[[T, T], int]) -> None:
        self._compare = compare
        self._root: _Entry[T] | None = None
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(self, value: T) -> bool:
        t = self._root
        if t is None:
            self._compare(value, value)
            self._root = _Entry(value, None)
            self._size = 1
            return True
        while True:
            parent = t
            cmp = self._compare(value, t.value)
            if cmp < 0:
                t = t.left
            elif cmp > 0:
                t = t.right
            else:
                return False
            if t is None:
                break
        entry = _Entry(value, parent)
        if cmp < 0:
            parent.left = entry
        else:
            parent.right = entry
        self._fix_after_insertion(entry)
        self._size += 1
        return True

    def __iter__(self) -> Iterator[T]:
        out: list[T] = []
        stack: list[_Entry[T]] = []
        node = self._root
        while stack or node is not None:
            while node is not None:
                stack.append(node)
                node = node.left
            node = stack.pop()
            out.append(node.value)
            node = node.right
        return iter(out)

    # --- red-black balancing, a transcription of TreeMap's algorithm ---------------------------------
    @staticmethod
    def _color(p: "_Entry[T] | None") -> bool:
        return True if p is None else p.black

    def _rotate_left(self, p: "_Entry[T] | None") -> None:
        if p is None:
            return
        r = p.right
        assert r is not None
        p.right = r.left
        if r.left is not None:
            r.left.parent = p
        r.parent = p.parent
        if p.parent is None:
            self._root = r
        elif p.parent.left is p:
            p.parent.left = r
        else:
            p.parent.right = r
        r.left = p
        p.parent = r

    def _rotate_right(self, p: "_Entry[T] | None") -> None:
        if p is None:
            return
        l = p.left
        assert l is not None
        p.left = l.right
        if l.right is not None:
            l.right.parent = p
        l.parent = p.parent
        if p.parent is None:
            self._root = l
        elif p.parent.right is p:
            p.parent.right = l
        else:
            p.parent.left = l
        l.right = p
        p.parent = l

    def _fix_after_insertion(self, x: "_Entry[T]") -> None:
        x.black = False
        while x is not None and x is not self._root and x.parent is not None and not x.parent.black:
            parent = x.parent
            grand = parent.parent
            if grand is not None and parent is grand.left:
                y = grand.right
                if not self._color(y):
                    parent.black = True
                    y.black = True  # type: ignore[union-attr]
                    grand.black = False
                    x = grand
                else:
                    if x is parent.right:
                        x = parent
                        self._rotate_left(x)
                    parent = x.parent
                    grand = parent.parent if parent else None
                    if parent is not None:
                        parent.black = True
                    if grand is not None:
                        grand.black = False
                        self._rotate_right(grand)
            else:
                y = grand.left if grand is not None else None
                if not self._color(y):
                    parent.black = True
                    y.black = True  # type: ignore[union-attr]
                    if grand is not None:
                        grand.black = False
                    x = grand  # type: ignore[assignment]
                else:
                    if x is parent.left:
                        x = parent
                        self._rotate_right(x)
                    parent = x.parent
                    grand = parent.parent if parent else None
                    if parent is not None:
                        parent.black = True
                    if grand is not None:
                        grand.black = False
                        self._rotate_left(grand)
        assert self._root is not None
        self._root.black = True


def java_compare_strings(a: str, b: str) -> int:
    """``String.compareTo``: UTF-16 code-unit order."""
    ua, ub = list(_utf16_units(a)), list(_utf16_units(b))
    for x, y in zip(ua, ub):
        if x != y:
            return x - y
    return len(ua) - len(ub)

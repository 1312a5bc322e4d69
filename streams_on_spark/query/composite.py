"""Read-only stores spanning every task's instance of a store (Kafka's ``CompositeReadOnly*Store``).

Each read asks the provider for the instances again (a task may have stopped since), then: a point read answers from
the first instance that has the key (a key lives in one partition); a range read returns each instance's entries in
that store's order, instance after instance (partition order), as Kafka's composite iterators do — not one merged
order over all tasks.
"""
from __future__ import annotations

from typing import Any, Callable, ContextManager, Optional, Protocol

from streams_on_spark.errors import require
from streams_on_spark.keyvalue import KeyValue
from streams_on_spark.query.errors import InvalidStateStoreException
from streams_on_spark.state.stores import KeyValueIterator

MIGRATED = ("State store is not available anymore and may have been migrated to another instance; please re-discover "
            "its location from the state metadata.")


class StoreProvider(Protocol):
    """The instances of a store a query may read now, by partition order (Kafka's ``StateStoreProvider``)."""

    def stores(self, store_name: str, store_type: Any) -> list[Any]: ...

    def reading(self) -> ContextManager[Any]:
        """Held while a read looks the instances up and reads them (a copy fed by another thread stays still)."""


class _Composite:
    """The instances of one store, found through ``provider`` at each read."""

    def __init__(self, provider: StoreProvider, store_type: Any, store_name: str) -> None:
        self._provider = provider
        self._store_type = store_type
        self.name = store_name

    def _stores(self) -> list[Any]:
        return self._provider.stores(self.name, self._store_type)

    def _first(self, read: Callable[[Any], Any], key: Any) -> Any:
        """The first non-None answer of ``read`` over the instances (a point read)."""
        require(key, "key")
        with self._provider.reading():
            for store in self._stores():
                try:
                    result = read(store)
                except InvalidStateStoreException as e:
                    raise InvalidStateStoreException(MIGRATED) from e
                if result is not None:
                    return result
        return None

    def _first_nonempty(self, read: Callable[[Any], KeyValueIterator], key: Any) -> KeyValueIterator:
        """The first instance's non-empty iterator (one key's windows or sessions live in one partition)."""
        require(key, "key")
        with self._provider.reading():
            for store in self._stores():
                entries = list(read(store))
                if entries:
                    return KeyValueIterator(entries)
        return KeyValueIterator([])

    def _concat(self, read: Callable[[Any], KeyValueIterator]) -> KeyValueIterator:
        """Every instance's entries, instance after instance."""
        out: list[KeyValue] = []
        with self._provider.reading():
            for store in self._stores():
                out.extend(read(store))
        return KeyValueIterator(out)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class CompositeReadOnlyKeyValueStore(_Composite):
    """Kafka's ``ReadOnlyKeyValueStore`` over every task: ``get``, ``range``, ``all``, ``prefix_scan``..."""

    def get(self, key: Any) -> Any:
        return self._first(lambda s: s.get(key), key)

    def range(self, key_from: Any, key_to: Any) -> KeyValueIterator:
        return self._concat(lambda s: s.range(key_from, key_to))

    def reverse_range(self, key_from: Any, key_to: Any) -> KeyValueIterator:
        return self._concat(lambda s: s.reverse_range(key_from, key_to))

    def all(self) -> KeyValueIterator:
        return self._concat(lambda s: s.all())

    def reverse_all(self) -> KeyValueIterator:
        return self._concat(lambda s: s.reverse_all())

    def prefix_scan(self, prefix: Any, prefix_key_serializer: Any) -> KeyValueIterator:
        require(prefix, "prefix")
        require(prefix_key_serializer, "prefixKeySerializer")
        return self._concat(lambda s: s.prefix_scan(prefix, prefix_key_serializer))

    def approximate_num_entries(self) -> int:
        with self._provider.reading():
            return sum(s.approximate_num_entries() for s in self._stores())


class CompositeReadOnlyWindowStore(_Composite):
    """Kafka's ``ReadOnlyWindowStore`` over every task: ``fetch`` (2, 3 and 4 arguments), ``fetch_all``, ``all``."""

    def fetch(self, *args: Any) -> Any:
        """``fetch(key, window_start)`` → value; ``fetch(key, time_from, time_to)`` → ``KeyValue(start, value)``s;
        ``fetch(key_from, key_to, time_from, time_to)`` → ``KeyValue(Windowed, value)``s."""
        if len(args) == 2:
            return self._first(lambda s: s.fetch(*args), args[0])
        if len(args) == 3:
            return self._first_nonempty(lambda s: s.fetch(*args), args[0])
        if len(args) == 4:
            return self._concat(lambda s: s.fetch(*args))
        raise TypeError(f"fetch() takes 2, 3 or 4 arguments ({len(args)} given)")

    def backward_fetch(self, *args: Any) -> KeyValueIterator:
        if len(args) == 3:
            return self._first_nonempty(lambda s: s.backward_fetch(*args), args[0])
        if len(args) == 4:
            return self._concat(lambda s: s.backward_fetch(*args))
        raise TypeError(f"backward_fetch() takes 3 or 4 arguments ({len(args)} given)")

    def fetch_all(self, time_from: int, time_to: int) -> KeyValueIterator:
        return self._concat(lambda s: s.fetch_all(time_from, time_to))

    def backward_fetch_all(self, time_from: int, time_to: int) -> KeyValueIterator:
        return self._concat(lambda s: s.backward_fetch_all(time_from, time_to))

    def all(self) -> KeyValueIterator:
        return self._concat(lambda s: s.all())

    def backward_all(self) -> KeyValueIterator:
        return self._concat(lambda s: s.backward_all())


class CompositeReadOnlySessionStore(_Composite):
    """Kafka's ``ReadOnlySessionStore`` over every task: ``fetch``, ``fetch_session``, ``find_sessions``."""

    def fetch(self, *args: Any) -> KeyValueIterator:
        """``fetch(key)``: the sessions of ``key``; ``fetch(key_from, key_to)``: of every key in the range."""
        if len(args) == 1:
            return self._first_nonempty(lambda s: s.fetch(*args), args[0])
        if len(args) == 2:
            return self._concat(lambda s: s.fetch(*args))
        raise TypeError(f"fetch() takes 1 or 2 arguments ({len(args)} given)")

    def backward_fetch(self, *args: Any) -> KeyValueIterator:
        if len(args) == 1:
            return self._first_nonempty(lambda s: s.backward_fetch(*args), args[0])
        if len(args) == 2:
            return self._concat(lambda s: s.backward_fetch(*args))
        raise TypeError(f"backward_fetch() takes 1 or 2 arguments ({len(args)} given)")

    def fetch_session(self, key: Any, session_start_time: int, session_end_time: int) -> Optional[Any]:
        return self._first(lambda s: s.fetch_session(key, session_start_time, session_end_time), key)

    def find_sessions(self, *args: Any) -> KeyValueIterator:
        """``find_sessions(key, earliest_session_end_time, latest_session_start_time)`` or the 4-argument key-range
        form."""
        if len(args) == 3:
            return self._first_nonempty(lambda s: s.find_sessions(*args), args[0])
        if len(args) == 4:
            return self._concat(lambda s: s.find_sessions(*args))
        raise TypeError(f"find_sessions() takes 3 or 4 arguments ({len(args)} given)")

    def backward_find_sessions(self, *args: Any) -> KeyValueIterator:
        if len(args) == 3:
            return self._first_nonempty(lambda s: s.backward_find_sessions(*args), args[0])
        if len(args) == 4:
            return self._concat(lambda s: s.backward_find_sessions(*args))
        raise TypeError(f"backward_find_sessions() takes 3 or 4 arguments ({len(args)} given)")

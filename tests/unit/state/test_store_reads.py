"""Reads with an inverted key range (``key_from > key_to``): Kafka's stores read nothing and log its warning, except
Kafka's in-memory session store's ``fetch(key_from, key_to)``, which refuses it (``IllegalArgumentException`` from its
``subMap``). The results themselves are checked against Kafka's driver by the ``store-reads`` goldens."""
from __future__ import annotations

import logging

import pytest

from streams_on_spark import Serdes, Stores
from streams_on_spark.state.stores import INVALID_RANGE_WARNING

S, L = Serdes.String(), Serdes.Long()


def _built(builder):
    store = builder.build()
    store.init(None)
    return store


STORES = {
    "kv": lambda: _built(Stores.key_value_store_builder(Stores.in_memory_key_value_store("kv"), S, L)),
    "kv-rocks": lambda: _built(Stores.key_value_store_builder(Stores.persistent_key_value_store("kv"), S, L)),
    "win": lambda: _built(Stores.window_store_builder(Stores.in_memory_window_store("w", 50, 10, False), S, L)),
    "win-rocks": lambda: _built(Stores.window_store_builder(Stores.persistent_window_store("w", 50, 10, False), S, L)),
    "ses": lambda: _built(Stores.session_store_builder(Stores.in_memory_session_store("s", 50), S, L)),
    "ses-rocks": lambda: _built(Stores.session_store_builder(Stores.persistent_session_store("s", 50), S, L)),
}
INVERTED = [("kv", "range", ("c", "a")), ("kv", "reverse_range", ("c", "a")), ("kv-rocks", "range", ("c", "a")),
            ("win", "fetch", ("c", "a", 0, 10)), ("win", "backward_fetch", ("c", "a", 0, 10)),
            ("win-rocks", "fetch", ("c", "a", 0, 10)), ("ses", "find_sessions", ("c", "a", 0, 10)),
            ("ses", "backward_find_sessions", ("c", "a", 0, 10)), ("ses-rocks", "fetch", ("c", "a")),
            ("ses-rocks", "backward_fetch", ("c", "a"))]


@pytest.mark.parametrize("kind, method, args", INVERTED, ids=[f"{k}-{m}" for k, m, _ in INVERTED])
def test_an_inverted_range_reads_nothing_with_kafkas_warning(kind, method, args, caplog):
    with caplog.at_level(logging.WARNING):
        assert list(getattr(STORES[kind](), method)(*args)) == []
    assert INVALID_RANGE_WARNING in caplog.text
    assert INVALID_RANGE_WARNING.startswith("Returning empty iterator for fetch with invalid key range: from > to.")


@pytest.mark.parametrize("method", ["fetch", "backward_fetch"])
def test_the_in_memory_session_store_refuses_an_inverted_fetch_as_kafkas(method):
    with pytest.raises(ValueError, match="fromKey > toKey"):
        getattr(STORES["ses"](), method)("c", "a")


def test_overloads_take_kafkas_argument_counts():
    window, session = STORES["win"](), STORES["ses"]()
    with pytest.raises(TypeError, match=r"fetch\(\) takes 2, 3 or 4 arguments \(1 given\)"):
        window.fetch("a")
    with pytest.raises(TypeError, match=r"backward_find_sessions\(\) takes 3 or 4 arguments \(2 given\)"):
        session.backward_find_sessions(0, 10)
    with pytest.raises(TypeError, match=r"fetch\(\) takes 1 or 2 arguments \(3 given\)"):
        session.fetch("a", "b", "c")

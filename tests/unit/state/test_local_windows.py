"""Window and session stores over a table (local RocksDB or in memory) answer every read exactly as the stores they
replaced (dicts of segments, kept as the reference in ``reference_window_stores.py``), through expiry, commits,
reopening and rebuilding from the changelog."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import pytest

from streams_on_spark.state.local import LocalTaskStore, open_local_task_store, apply_changes
from streams_on_spark.state.stores import InMemoryKeyValueBytesStore, bytes_store_over, ordered_time
from streams_on_spark.state.session_stores import (
    SessionBytesStore,
    SessionStoreBuilder,
    PersistentSessionBytesStoreSupplier,
    SessionBytesStoreSupplier,
    TimeOrderedSessionBytesStoreSupplier,
)
from streams_on_spark.state.window_stores import (
    WindowBytesStore,
    WindowStoreBuilder,
    PersistentWindowBytesStoreSupplier,
    WindowBytesStoreSupplier,
)
from tests.unit.state.reference_window_stores import reference

# keys that are prefixes of one another, empty, with NUL and 0xff bytes: the escaping must keep their byte order
KEYS = [b"", b"a", b"ab", b"a\x00", b"a\x00\x01", b"b", b"\xff", b"\xff\x00", b"\x00"]
# duplicates are told apart by key bytes + sequence number in the in-memory store: keys without NUL keep one order
DUP_KEYS = [b"a", b"ab", b"abc", b"b", b"\xff", b"c"]

WINDOW_SUPPLIERS = {
    "in-memory": lambda dups: WindowBytesStoreSupplier("w", 180_000, 10_000, dups),
    "persistent": lambda dups: PersistentWindowBytesStoreSupplier("w", 180_000, 10_000, dups),
    "time-ordered": lambda dups: PersistentWindowBytesStoreSupplier("w", 180_000, 10_000, dups, time_first=True),
    "short-retention": lambda dups: PersistentWindowBytesStoreSupplier("w", 20_000, 10_000, dups),
}
SESSION_SUPPLIERS = {
    "in-memory": lambda: SessionBytesStoreSupplier("s", 150_000),
    "persistent": lambda: PersistentSessionBytesStoreSupplier("s", 150_000),
    "time-ordered": lambda: TimeOrderedSessionBytesStoreSupplier("s", 150_000),
}


@dataclass
class Dropped:
    """Counts what a store drops as expired (the typed store's metrics)."""

    count: int = 0

    def record_dropped(self) -> None:
        self.count += 1


@dataclass
class Pair:
    """The reference store and the store over a table, fed the same calls."""

    memory: Any
    local: Any
    supplier: Any
    task_store: Optional[LocalTaskStore] = None
    changelog: list = field(default_factory=list)
    version: int = 0

    def both(self, call: Callable[[Any], Any]) -> Any:
        expected, got = call(self.memory), call(self.local)
        assert got == expected
        return got

    def commit(self) -> None:
        if self.task_store is not None:
            self.version += 1
            self.changelog.append(self.task_store.commit(str(self.version)))

    def reopen(self, rebuild: bool) -> None:
        """A new instance of the store (another process): from the committed table, or rebuilt from the changelog."""
        assert self.task_store is not None
        self.commit()
        meta = self.local.entries()
        self.task_store.close()
        self.task_store.open()
        if rebuild:
            self.task_store.clear()
            self.task_store.load(self.changelog, str(self.version))
        self.local = over(self.supplier, self.task_store.stores[self.supplier.name])
        self.local.restore(meta)
        self.local.metrics = self.memory.metrics


def over(supplier: Any, table: Any) -> Any:
    """The bytes store the engine gives the builder of ``supplier``'s stores, over ``table``."""
    builder = (WindowStoreBuilder if isinstance(supplier, WindowBytesStoreSupplier) else SessionStoreBuilder)(supplier)
    assert builder.engine_kept()
    return bytes_store_over(builder, table)


def pair(supplier: Any, where: str, tmp_path: Any) -> Pair:
    memory = reference(supplier)
    if where == "rocksdb":
        task_store = open_local_task_store(str(tmp_path / "task"), [supplier.name])
        local = over(supplier, task_store.stores[supplier.name])
    elif where == "own":   # the store the supplier makes without an engine: over its own in-memory table
        task_store, local = None, supplier.get()
    else:
        task_store, local = None, over(supplier, InMemoryKeyValueBytesStore(supplier.name))
    memory.metrics = local.metrics = Dropped()
    return Pair(memory, local, supplier, task_store)


def _time(rng: random.Random, now: int) -> int:
    """Mostly near stream time, sometimes late, now and then far ahead or negative."""
    roll = rng.random()
    if roll < 0.03:
        return -rng.randrange(1, 90_000)
    if roll < 0.08:
        return now + rng.randrange(60_000, 400_000)
    return max(0, now + rng.randrange(-200_000, 30_000)) // 1000 * 1000


def _reads_window(p: Pair, rng: random.Random, keys: list[bytes], now: int) -> None:
    key, other = rng.choice(keys), rng.choice(keys)
    lo, hi = sorted([_time(rng, now), _time(rng, now)])
    forward = rng.random() < 0.5
    at = _time(rng, now)
    p.both(lambda s: s.fetch(key, at))
    p.both(lambda s: s.fetch_key(key, lo, hi, forward))
    p.both(lambda s: s.fetch_keys(min(key, other), max(key, other), lo, hi, forward))
    p.both(lambda s: s.fetch_keys(None, key, lo, hi, forward))
    p.both(lambda s: s.fetch_keys(key, None, lo, hi, forward))
    p.both(lambda s: s.fetch_all(lo, hi, forward))
    p.both(lambda s: s.all(forward))
    p.both(lambda s: s.observed_stream_time)
    if p.task_store is None:   # RocksDB's count is an estimate
        p.both(lambda s: s.approximate_num_entries())


@pytest.mark.parametrize("where", ["rocksdb", "in-memory table", "own"])
@pytest.mark.parametrize("dups", [False, True], ids=["unique", "duplicates"])
@pytest.mark.parametrize("kind", sorted(WINDOW_SUPPLIERS))
def test_window_store_over_a_table_answers_as_in_memory(kind, dups, where, tmp_path):
    rng = random.Random(f"{kind}{dups}{where}")
    p = pair(WINDOW_SUPPLIERS[kind](dups), where, tmp_path)
    keys = DUP_KEYS if dups else KEYS
    now = 0
    for step in range(1500):
        start = _time(rng, now)
        now = max(now, start)
        value = None if rng.random() < 0.15 else rng.randbytes(2)
        key = rng.choice(keys)
        p.both(lambda s: s.put(key, value, start))
        if step % 7 == 0:
            _reads_window(p, rng, keys, now)
        if p.task_store is not None and step % 50 == 49:
            p.reopen(rebuild=step % 100 == 99)
        elif step % 20 == 0:
            p.commit()
    _reads_window(p, rng, keys, now)
    assert p.memory.metrics.count > 0   # late records were dropped alike


def _reads_session(p: Pair, rng: random.Random, now: int) -> None:
    key, other = rng.choice(KEYS), rng.choice(KEYS)
    earliest, latest = sorted([_time(rng, now), _time(rng, now)])
    forward = rng.random() < 0.5
    p.both(lambda s: s.find_sessions(key, key, earliest, latest, forward))
    p.both(lambda s: s.find_sessions(min(key, other), max(key, other), earliest, latest, forward))
    p.both(lambda s: s.find_sessions(None, None, earliest, latest, forward))
    p.both(lambda s: s.find_sessions_by_end_time(earliest, latest, forward))
    p.both(lambda s: s.fetch_keys(min(key, other), max(key, other), forward))
    p.both(lambda s: s.fetch_keys(None, None, forward))
    p.both(lambda s: s.observed_stream_time)
    if p.task_store is None:   # RocksDB's count is an estimate
        p.both(lambda s: s.approximate_num_entries())


@pytest.mark.parametrize("where", ["rocksdb", "in-memory table", "own"])
@pytest.mark.parametrize("kind", sorted(SESSION_SUPPLIERS))
def test_session_store_over_a_table_answers_as_in_memory(kind, where, tmp_path):
    rng = random.Random(f"{kind}{where}")
    p = pair(SESSION_SUPPLIERS[kind](), where, tmp_path)
    now = 0
    live: list[tuple[bytes, int, int]] = []
    for step in range(1500):
        if live and rng.random() < 0.2:   # merge or remove a session seen before, as session aggregation does
            key, start, end = live.pop(rng.randrange(len(live)))
            if rng.random() < 0.5:
                p.both(lambda s: s.remove(key, start, end))
            else:
                p.both(lambda s: s.put(key, start, end, None))
        else:
            end = _time(rng, now)
            start = end - rng.choice([0, 0, 1000, 30_000])
            key = rng.choice(KEYS)
            now = max(now, end)
            aggregate = rng.randbytes(2)
            p.both(lambda s: s.put(key, start, end, aggregate))
            live.append((key, start, end))
        if step % 7 == 0:
            key, start, end = rng.choice(live) if live else (b"a", 0, 0)
            p.both(lambda s: s.fetch_session(key, start, end))
            _reads_session(p, rng, now)
        if p.task_store is not None and step % 50 == 49:
            p.reopen(rebuild=step % 100 == 99)
        elif step % 20 == 0:
            p.commit()
    _reads_session(p, rng, now)
    assert p.memory.metrics.count > 0


def test_expired_segments_leave_the_table_with_one_range_deletion(tmp_path):
    supplier = PersistentWindowBytesStoreSupplier("w", 120_000, 10_000, False)
    task_store = open_local_task_store(str(tmp_path / "task"), ["w"])
    store = over(supplier, task_store.stores["w"])
    assert isinstance(store, WindowBytesStore) and store.segmented
    for start in range(0, 60_000, 1000):
        store.put(b"k%d" % (start // 1000), b"v", start)
    task_store.commit("1")
    store.put(b"late", b"v", 500_000)   # stream time moves on: segments before (500 s - 120 s) / 60 s expire
    assert store.all() == [(b"late", 500_000, b"v")]
    changes = task_store.commit("2")
    assert changes["w"][None] == ordered_time(6) and len(changes["w"]) == 2   # the put and one range deletion
    assert task_store.stores["w"].range(None, None) == [(store.schema.to_store_key(b"late", 500_000), b"v")]
    rebuilt = InMemoryKeyValueBytesStore("w")
    apply_changes([{"w": {store.schema.to_store_key(b"a", 1000): b"x"}}, changes], {"w": rebuilt})
    assert rebuilt.range(None, None) == [(store.schema.to_store_key(b"late", 500_000), b"v")]
    task_store.close()


def test_snapshot_holds_stream_time_only_and_takes_an_older_snapshot_in(tmp_path):
    supplier = SessionBytesStoreSupplier("s", 60_000)
    task_store = open_local_task_store(str(tmp_path / "task"), ["s"])
    store = over(supplier, task_store.stores["s"])
    assert isinstance(store, SessionBytesStore)
    # a snapshot written by an older version's in-memory store ({end: {key: {start: aggregate}}}): its sessions move in
    store.restore({"observed_stream_time": 10, "sessions": {10: {b"k": {0: b"agg"}}}})
    assert store.entries() == {"observed_stream_time": 10}
    assert store.fetch_session(b"k", 0, 10) == b"agg"
    assert task_store.commit("1")["s"][store.schema.to_store_key(b"k", 0, 10)] == b"agg"
    task_store.close()

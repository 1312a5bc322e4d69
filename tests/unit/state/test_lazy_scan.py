"""The bytes stores' lazy ordered scan: the entries of the snapshot ``range``, read only as far as the caller goes."""
from __future__ import annotations

import logging
import random

import pytest

from streams_on_spark.change import Change
from streams_on_spark.errors import IllegalStateError
from streams_on_spark.processor.api import Record
from streams_on_spark.serde import Serdes
from streams_on_spark.state.caching import CachingKeyValueBytesStore, TaskCache
from streams_on_spark.state.join_buffer import TimeOrderedJoinBuffer
from streams_on_spark.state.local import open_local_task_store
from streams_on_spark.state.outer_join_store import OuterJoinStore
from streams_on_spark.state.stores import InMemoryKeyValueBytesStore
from streams_on_spark.state.suppression_buffer import SuppressionBuffer

S = Serdes.String()


@pytest.fixture(params=["memory", "local"])
def store_and_commit(request, tmp_path):
    """A bytes store and what commits its batch (nothing for the in-memory store)."""
    if request.param == "memory":
        yield InMemoryKeyValueBytesStore("s"), lambda: None
        return
    local = open_local_task_store(str(tmp_path / "task"), ["s"])
    versions = iter(range(10**6))
    yield local.stores["s"], lambda: local.commit(str(next(versions)))
    local.close()


def _random_key(rng: random.Random, floor: bytes) -> bytes:
    """A short key (many collisions, some prefixes of others) at or above ``floor``."""
    while True:
        key = bytes(rng.randrange(6) for _ in range(rng.randrange(1, 4)))
        if key >= floor:
            return key


def _bounds(rng: random.Random) -> list[tuple]:
    a, b = sorted([bytes([rng.randrange(6)]), bytes([rng.randrange(6), rng.randrange(6)])])
    return [(None, None), (a, b), (a, None), (None, b), (a, a), (b, b)]


def test_scan_is_the_snapshot_range_with_pending_writes_deletions_and_delete_below(store_and_commit):
    store, commit = store_and_commit
    rng = random.Random(11)
    model: dict[bytes, bytes] = {}
    floor = b""
    for step in range(1200):
        op = rng.random()
        if op < 0.6:
            key, value = _random_key(rng, floor), rng.randbytes(2)
            store.put(key, value)
            model[key] = value
        elif op < 0.85:
            key = _random_key(rng, floor)
            store.delete(key)
            model.pop(key, None)
        elif op < 0.88:
            floor = max(floor, bytes([rng.randrange(3), rng.randrange(6)]))   # rising, as window stores expire
            store.delete_below(floor)
            model = {k: v for k, v in model.items() if k >= floor}
        elif op < 0.95:
            commit()
        if step % 20 == 0:
            for lo, hi in _bounds(rng):
                for reverse in (False, True):
                    expected = sorted((k, v) for k, v in model.items()
                                      if (lo is None or k >= lo) and (hi is None or k <= hi))
                    if reverse:
                        expected.reverse()
                    assert list(store.scan(lo, hi, reverse)) == expected, (step, lo, hi, reverse)
                    assert store.range(lo, hi, reverse) == expected, (step, lo, hi, reverse)


def test_a_write_in_the_batch_hides_the_committed_entry_in_both_directions(tmp_path):
    local = open_local_task_store(str(tmp_path / "task"), ["s"])
    store = local.stores["s"]
    for key in (b"a", b"b", b"c", b"d"):
        store.put(key, b"old")
    local.commit("1")
    store.put(b"b", b"new")
    store.delete(b"c")
    store.put(b"bb", b"added")
    expected = [(b"a", b"old"), (b"b", b"new"), (b"bb", b"added"), (b"d", b"old")]
    assert list(store.scan(None, None)) == expected
    assert list(store.scan(None, None, reverse=True)) == expected[::-1]
    assert list(store.scan(b"b", b"c", reverse=True)) == [(b"bb", b"added"), (b"b", b"new")]
    local.close()


def test_committed_entries_below_delete_below_are_gone_before_the_commit(tmp_path):
    local = open_local_task_store(str(tmp_path / "task"), ["s"])
    store = local.stores["s"]
    for key in (b"\x01", b"\x02", b"\x03"):
        store.put(key, b"v")
    local.commit("1")
    store.delete_below(b"\x02")
    assert list(store.scan(None, None)) == [(b"\x02", b"v"), (b"\x03", b"v")]
    assert list(store.scan(None, b"\x02", reverse=True)) == [(b"\x02", b"v")]
    assert store.range(b"\x01", None) == [(b"\x02", b"v"), (b"\x03", b"v")]
    local.commit("2")
    assert list(store.scan(None, None)) == [(b"\x02", b"v"), (b"\x03", b"v")]
    local.close()


class _CountingRows:
    """A column family whose iterators count the rows they hand out (how much a scan read from RocksDB)."""

    def __init__(self, db) -> None:
        self.db, self.read = db, 0

    def items(self, **kwargs):
        for row in self.db.items(**kwargs):
            self.read += 1
            yield row

    def __getattr__(self, name):
        return getattr(self.db, name)


def test_a_scan_stopped_early_reads_only_the_head(tmp_path):
    local = open_local_task_store(str(tmp_path / "task"), ["s"])
    store = local.stores["s"]
    for i in range(5000):
        store.put(b"k%05d" % i, b"v")
    local.commit("1")
    store.put(b"k00001", b"pending")
    counting = store._db = _CountingRows(store._db)
    head = []
    for key, value in store.scan(None, None):
        head.append((key, value))
        if len(head) == 3:
            break
    assert head == [(b"k00000", b"v"), (b"k00001", b"pending"), (b"k00002", b"v")]
    assert counting.read <= 4
    tail = next(store.scan(None, None, reverse=True))
    assert tail == (b"k04999", b"v") and counting.read <= 6
    store._db = counting.db
    local.close()


def test_a_scan_left_open_does_not_keep_the_database_locked_after_close(tmp_path):
    """A live RocksDB iterator keeps its database open: the task's next batch could not open it again."""
    path = str(tmp_path / "task")
    local = open_local_task_store(path, ["s"])
    store = local.stores["s"]
    for i in range(10):
        store.put(b"%02d" % i, b"v")
    local.commit("1")
    store.put(b"05", b"pending")
    abandoned = [store.scan(None, None), store.scan(None, b"03", reverse=True)]
    assert next(abandoned[0]) == (b"00", b"v") and next(abandoned[1]) == (b"03", b"v")
    local.close()
    again = open_local_task_store(path, ["s"])
    assert again.version() == "1" and again.stores["s"].get(b"05") == b"v"
    assert list(abandoned[0]) == []   # ended with the database
    again.close()


@pytest.mark.parametrize("write", [
    lambda store: store.put(b"new", b"v"),
    lambda store: store.delete(b"c"),
    lambda store: store.delete_below(b"b"),
])
def test_adding_or_removing_keys_under_an_open_scan_is_a_clear_error(store_and_commit, write):
    """A scan is not a snapshot: keys added or removed under it would be skipped or read twice, so it fails."""
    store, commit = store_and_commit
    for key in (b"a", b"c", b"d"):
        store.put(key, b"v")
    commit()
    store.put(b"b", b"v")
    rows = store.scan(None, None)
    assert next(rows) == (b"a", b"v")
    write(store)
    with pytest.raises(IllegalStateError, match="store s: keys were added or removed while a scan of it was open"):
        next(rows)
    assert store.range(None, None) == sorted(store.range(None, None))   # a snapshot read is fine


def test_outer_join_store_entries_cannot_be_removed_while_pending_is_read(store_and_commit):
    inner, commit = store_and_commit
    store = OuterJoinStore("outer", S, S, S, inner)
    store.init(None)
    for ts in (1, 2, 3):
        store.add_pending(ts, True, "k", "v")
    commit()
    pending = store.pending()
    ts, left_side, key, _values = next(pending)
    store.remove_pending(ts, left_side, key)
    with pytest.raises(IllegalStateError):
        next(pending)


def test_an_inverted_range_scans_nothing_and_warns(store_and_commit, caplog):
    store, _ = store_and_commit
    store.put(b"a", b"1")
    with caplog.at_level(logging.WARNING):
        assert list(store.scan(b"z", b"a")) == []
    assert "invalid key range" in caplog.text


def test_the_caching_store_scans_what_its_range_returns():
    class Context:
        cache = TaskCache(10_000)
        record = Record("k", "v", 7, ())

    store = CachingKeyValueBytesStore(InMemoryKeyValueBytesStore("s"))
    store.init(Context())
    store.wrapped.put(b"a", b"stored")
    store.wrapped.put(b"c", b"stored")
    store.put(b"b", b"cached")
    store.put(b"c", None)
    assert list(store.scan(None, None)) == store.range(None, None) == [(b"a", b"stored"), (b"b", b"cached")]
    assert list(store.scan(None, None, True)) == store.range(None, None, True)


def test_outer_join_store_pending_is_lazy_and_in_time_side_key_order(store_and_commit):
    inner, commit = store_and_commit
    store = OuterJoinStore("outer", S, S, S, inner)
    store.init(None)
    store.add_pending(5, True, "b", "l1")
    store.add_pending(5, True, "b", "l2")
    store.add_pending(3, False, "a", "r1")
    store.add_pending(5, False, "a", "r2")
    commit()
    store.add_pending(1, True, "z", "l0")
    pending = store.pending()
    assert next(pending) == (1, True, "z", ["l0"])
    assert list(pending) == [(3, False, "a", ["r1"]), (5, False, "a", ["r2"]), (5, True, "b", ["l1", "l2"])]
    store.remove_pending(1, True, "z")
    assert [p[:3] for p in store.pending()] == [(3, False, "a"), (5, False, "a"), (5, True, "b")]


def test_forced_eviction_takes_the_oldest_entries(store_and_commit):
    inner, commit = store_and_commit
    buffer = SuppressionBuffer("buf", S, S, inner)
    buffer.init(None)
    for t, key in enumerate(["d", "a", "c", "b", "e"]):
        buffer.put(10 + t, key, 100 + t, (), Change(key.upper(), None))
        if t == 2:
            commit()
    emitted = []
    buffer.evict(None, lambda key, change, ts, headers: emitted.append((key, change.new_value, ts)), force=2)
    assert emitted == [("d", "D", 100), ("a", "A", 101)]
    assert buffer.size() == 3
    assert SuppressionBuffer("buf", S, S, inner).size() == 3   # counted again from the store
    buffer.evict(None, lambda key, change, ts, headers: emitted.append((key, change.new_value, ts)), force=9)
    assert [e[0] for e in emitted] == ["d", "a", "c", "b", "e"] and buffer.size() == 0


def test_join_buffer_counts_its_records(store_and_commit):
    inner, commit = store_and_commit
    buffer = TimeOrderedJoinBuffer("buf", S, S, 10, inner)
    buffer.init(None)
    for ts in (5, 3, 20):
        assert buffer.put("k", f"v{ts}", ts)
        commit()
    assert buffer.num_records() == 3
    emitted = []
    buffer.evict(lambda key, value, ts, headers: emitted.append((key, value, ts)))
    assert emitted == [("k", "v3", 3), ("k", "v5", 5)]
    assert buffer.num_records() == 1

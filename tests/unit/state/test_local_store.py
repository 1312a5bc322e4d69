"""A task's key-value stores in local RocksDB: the in-memory store's answers, atomic commits, rebuild from changes."""
from __future__ import annotations

import random
import subprocess
import sys
import textwrap

import pytest

from streams_on_spark.errors import StreamsException
from streams_on_spark.state.local import open_local_task_store
from streams_on_spark.state.stores import InMemoryKeyValueBytesStore


def random_ops(rng, n):
    keys = [bytes([rng.randrange(4)]) * rng.randrange(1, 4) + bytes([rng.randrange(256)]) for _ in range(40)]
    for _ in range(n):
        key = rng.choice(keys)
        yield key, (None if rng.random() < 0.2 else rng.randbytes(3))


def test_answers_as_the_in_memory_store_across_commits(tmp_path):
    rng = random.Random(5)
    local = open_local_task_store(str(tmp_path / "task"), ["s"])
    store, memory = local.stores["s"], InMemoryKeyValueBytesStore("s")
    for version in range(5):
        for key, value in random_ops(rng, 60):
            store.put(key, value)
            memory.put(key, value)
            assert store.get(key) == memory.get(key)
        lo, hi = sorted([rng.randbytes(1), rng.randbytes(2)])
        for args in ((None, None), (lo, hi), (lo, None), (None, hi)):
            assert store.range(*args) == memory.range(*args)
            assert store.range(*args, reverse=True) == memory.range(*args, reverse=True)
        if version % 2:
            local.commit(str(version))
    assert store.range(None, None) == sorted(memory.entries().items())
    local.close()


def test_commit_is_atomic_and_uncommitted_writes_are_lost_on_reopen(tmp_path):
    path = str(tmp_path / "task")
    local = open_local_task_store(path, ["a", "b"])
    local.stores["a"].put(b"k", b"1")
    local.stores["b"].put(b"k", b"2")
    assert local.commit("7") == {"a": {b"k": b"1"}, "b": {b"k": b"2"}}
    local.stores["a"].put(b"k", b"3")   # never committed: the process dies
    local.close()
    again = open_local_task_store(path, ["a", "b"])
    assert again.version() == "7"
    assert again.stores["a"].get(b"k") == b"1" and again.stores["b"].get(b"k") == b"2"
    again.close()


def test_rebuilt_from_its_changes_and_dumped_for_compaction(tmp_path):
    source = open_local_task_store(str(tmp_path / "one"), ["s"])
    changes = []
    for version, (key, value) in enumerate([(b"b", b"1"), (b"a", b"2"), (b"b", None), (b"c", b"3")]):
        source.stores["s"].put(key, value)
        changes.append(source.commit(str(version)))
    copy = open_local_task_store(str(tmp_path / "two"), ["s"])
    copy.stores["s"].put(b"stale", b"x")
    copy.commit("old")
    copy.clear()
    assert copy.version() is None
    copy.load(changes, "3")
    assert copy.version() == "3"
    assert copy.stores["s"].range(None, None) == [(b"a", b"2"), (b"c", b"3")]
    assert list(source.dump()) == [("s", b"a", b"2"), ("s", b"c", b"3")]
    with pytest.raises(StreamsException, match="store gone"):
        copy.load([{"gone": {b"k": b"v"}}], "4")
    source.close()
    copy.close()


def test_entry_estimate_survives_reopening(tmp_path):
    """The estimate decides when the changelog is compacted: reading 0 after the per-batch reopen would compact the
    whole store into the changelog every batch."""
    local = open_local_task_store(str(tmp_path / "task"), ["s"])
    for i in range(5000):
        local.stores["s"].put(b"k%d" % i, b"v")
    local.commit("1")
    local.close()
    local.open()
    assert 4000 <= local.stores["s"].approximate_num_entries() <= 6000
    local.close()


def test_a_snapshot_with_the_stores_entries_is_refused_by_name(tmp_path):
    local = open_local_task_store(str(tmp_path / "task"), ["buffer"])
    local.stores["buffer"].restore(None)   # what snapshots of this version hold for it
    with pytest.raises(StreamsException, match="store buffer: the saved task state holds the store's entries"):
        local.stores["buffer"].restore({b"k": b"v"})
    local.close()


def test_an_unreadable_copy_is_deleted_and_starts_empty(tmp_path, caplog):
    path = tmp_path / "task"
    local = open_local_task_store(str(path), ["s"])
    local.stores["s"].put(b"k", b"v")
    local.commit("1")
    local.close()
    (path / "CURRENT").write_bytes(b"MANIFEST-999999\n")   # points at a manifest that does not exist
    again = open_local_task_store(str(path), ["s"])
    assert again.version() is None and again.stores["s"].get(b"k") is None
    assert "cannot be opened" in caplog.text
    again.close()


def test_a_second_process_cannot_open_a_task_in_use(tmp_path):
    local = open_local_task_store(str(tmp_path / "task"), ["s"])
    with pytest.raises(StreamsException, match="another process"):
        open_local_task_store(str(tmp_path / "task"), ["s"])
    local.close()




def _die_after(path: str, steps: str) -> None:
    """Run ``steps`` on the task's store (``local``) in a child process that then dies without closing it."""
    code = textwrap.dedent(f"""
        import os
        from streams_on_spark.state.local import open_local_task_store
        local = open_local_task_store({path!r}, ["a", "b"])
        """) + textwrap.dedent(steps) + "\nos._exit(0)\n"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_crash_loses_the_batches_since_the_last_close_whole_and_the_marker_names_what_is_left(tmp_path):
    """Without a write-ahead log, what a process committed after taking the database is lost if it dies before
    releasing it, all stores and the marker together: the copy is at the version it names, never between."""
    path = str(tmp_path / "task")
    local = open_local_task_store(path, ["a", "b"])
    local.stores["a"].put(b"k", b"1")
    local.stores["b"].put(b"k", b"1")
    local.commit("1")
    local.close()
    _die_after(path, """
        local.stores["a"].put(b"k", b"2")
        local.stores["b"].put(b"k", b"2")
        local.commit("2")
        """)
    again = open_local_task_store(path, ["a", "b"])
    assert again.version() == "1"
    assert again.stores["a"].get(b"k") == b"1" and again.stores["b"].get(b"k") == b"1"
    again.close()


def test_a_crash_while_clearing_leaves_no_marker_over_emptied_stores(tmp_path):
    path = str(tmp_path / "task")
    local = open_local_task_store(path, ["a", "b"])
    local.stores["a"].put(b"k", b"1")
    local.commit("1")
    local.close()
    _die_after(path, "local.clear()\n")
    again = open_local_task_store(path, ["a", "b"])
    assert again.version() is None   # rebuilt from the changelog, not taken as version 1
    again.close()

def test_a_task_without_stores_keeps_its_marker_and_image_in_one_file(tmp_path):
    """A stateless task's copy is no RocksDB (no database files), yet answers as one: marker and image committed
    together, kept across reopening, cleared, marked by a rebuild, held by one process at a time."""
    path = tmp_path / "task"
    local = open_local_task_store(str(path), [])
    assert local.version() is None and local.image() is None
    assert local.commit("1:4", b"image-4") == {}
    assert local.commit("1:5") == {}   # a commit without an image drops the older one
    local.close()
    assert sorted(p.name for p in path.iterdir()) == ["task-copy", "task-copy.lock"]
    again = open_local_task_store(str(path), [])
    assert again.version() == "1:5" and again.image() is None
    again.commit("1:6", b"image-6")
    with pytest.raises(StreamsException, match="another process"):
        open_local_task_store(str(path), [])
    again.close()
    again.open()
    assert again.version() == "1:6" and again.image() == b"image-6"
    again.clear()
    assert again.version() is None and again.image() is None
    assert again.load([{}, {}], "2:0") == 0 and again.version() == "2:0"
    again.close()


def test_an_unreadable_copy_of_a_task_without_stores_starts_from_none(tmp_path, caplog):
    path = tmp_path / "task"
    local = open_local_task_store(str(path), [])
    local.commit("3", b"image")
    local.close()
    (path / "task-copy").write_bytes((path / "task-copy").read_bytes()[:-3])   # torn: the last entry ends early
    again = open_local_task_store(str(path), [])
    assert again.version() is None and again.image() is None
    assert "cannot be read" in caplog.text
    again.close()


def test_a_rebuild_of_a_task_without_stores_refuses_changes_for_a_store(tmp_path):
    local = open_local_task_store(str(tmp_path / "task"), [])
    with pytest.raises(StreamsException, match="store s that this topology does not have"):
        local.load([{"s": {b"k": b"v"}}], "1")
    local.close()

class _Context:
    """What a store's init reads of its task."""
    application_id = "app"
    default_key_serde = default_value_serde = metrics = record = None

    def __init__(self, cache):
        self.cache = cache


@pytest.mark.parametrize("backend", ["in-memory", "local"])
@pytest.mark.parametrize("cached", [False, True])
def test_prefix_scan_returns_the_keys_under_the_prefix_in_byte_order(tmp_path, backend, cached):
    from streams_on_spark import Serdes
    from streams_on_spark.state.caching import CachingKeyValueBytesStore, TaskCache
    from streams_on_spark.state.stores import KeyValueStore

    local = open_local_task_store(str(tmp_path / "task"), ["s"]) if backend == "local" else None
    inner = local.stores["s"] if local else InMemoryKeyValueBytesStore("s")
    if cached:
        inner = CachingKeyValueBytesStore(inner)
    store = KeyValueStore(inner, Serdes.ByteArray(), Serdes.String())
    store.init(_Context(TaskCache(1 << 20 if cached else 0)))
    keys = [b"a", b"a\x00", b"a\xff", b"a\xff\xff", b"ab", b"b", b"\xff", b"\xff\x01", b"", b"`z"]
    for key in keys:
        store.put(key, key.hex())
    if local:
        local.commit("1")
        store.put(b"a\x01", "pending")     # uncommitted writes are seen too
        keys.append(b"a\x01")
    for prefix in (b"a", b"a\xff", b"\xfe", b"c"):
        got = [kv.key for kv in store.prefix_scan(prefix, Serdes.ByteArray())]
        assert got == sorted(k for k in keys if k.startswith(prefix)), prefix
    for prefix in (b"\xff", b"\xff\xff", b""):   # no key above the prefix's keys: Kafka's IndexOutOfBoundsException
        with pytest.raises(IndexError, match="no key is above every key starting with"):
            store.prefix_scan(prefix, Serdes.ByteArray())
    with pytest.raises(ValueError, match="prefix"):
        store.prefix_scan(None, Serdes.ByteArray())
    if local:
        local.close()


def test_many_reads_and_writes_at_once_answer_as_one_by_one(tmp_path):
    """``get_many`` (RocksDB multi-gets in slices) and ``put_many`` (a batch path's flush) against ``get`` and ``put``
    one by one: the same values, the same pending writes in the same order, a range read's sorted keys kept."""
    local = open_local_task_store(str(tmp_path / "t"), ["s"])
    try:
        store = local.stores["s"]
        for i in range(0, 2000, 3):
            store.put(b"k%05d" % i, b"old")
        local.commit("v1")
        store.put(b"k00001", b"pending")
        keys = [b"k%05d" % i for i in range(1500)]
        assert store.get_many(keys) == [store.get(key) for key in keys]   # more keys than one multi-get takes
        assert store.get_many(keys[2:]) == [store.get(key) for key in keys[2:]]   # none of them pending
        local.close()   # written to table files (with their Bloom filters), then read from them
        local.open()
        assert store.get_many(keys) == [None if i % 3 else b"old" for i in range(1500)]
        store.put(b"k00001", b"pending")
        store.range(None, None)   # the pending keys kept sorted from here on
        writes = [(b"k%05d" % i, b"new%d" % i) for i in (7, 3, 1, 7, 2500)]
        other = open_local_task_store(str(tmp_path / "u"), ["s"])
        one_by_one = other.stores["s"]
        one_by_one.put(b"k00001", b"pending")
        for key, value in writes:
            one_by_one.put(key, value)
        before = store._writes
        store.put_many([k for k, _ in writes], [v for _, v in writes])
        assert list(store.pending.items()) == list(one_by_one.pending.items())
        assert store._writes - before == 3 and one_by_one._writes == 4   # keys the batch's writes gained
        assert store._pending_sorted == sorted(store.pending)
        other.close()
    finally:
        local.close()


def test_many_reads_of_a_store_that_holds_nothing_skip_rocksdb_and_see_what_it_holds_after_each_write(tmp_path):
    """``get_many`` of a store with nothing committed (a new store's first batch) answers from the batch's writes
    without a multi-get; once a commit, a rebuild or a clear changed the store, it looks again."""
    from unittest import mock
    path = str(tmp_path / "t")
    keys = [b"k%04d" % i for i in range(1200)]
    local = open_local_task_store(path, ["s", "t"])
    try:
        store = local.stores["s"]
        store.put(b"k0002", b"pending")
        with mock.patch.object(type(store._db), "get", side_effect=AssertionError("a multi-get")):
            assert store.get_many(keys) == [b"pending" if i == 2 else None for i in range(1200)]
        local.commit("v1")
        assert store.get_many(keys[:3]) == [None, None, b"pending"]   # committed: looked up
        local.stores["t"].put(b"k0001", b"t")
        local.commit("v2")
        assert local.stores["t"].get_many(keys[:2]) == [None, b"t"]
        local.close()
        local.open()
        assert store.get_many(keys[:3]) == [None, None, b"pending"]
        local.clear()
        assert store.get_many(keys[:3]) == [None, None, None]
        local.load([{"s": {b"k0000": b"loaded"}}], "v3")
        assert store.get_many(keys[:3]) == [b"loaded", None, None]
        store.put(b"k0000", None)
        store.delete_below(b"k")
        local.commit("v4")
        assert store.get_many(keys[:1]) == [None] and store._empty   # emptied by a commit: no lookup needed
    finally:
        local.close()


def test_a_commit_of_many_keys_in_a_random_order_writes_them_in_key_order_with_the_same_result(tmp_path):
    """A commit's entries go to RocksDB in key order where most are out of it (its memtable takes sorted keys
    several times faster), as they are where they are nearly in order; what the store holds is the same."""
    from streams_on_spark.state.local import _in_write_order
    rng = random.Random(3)
    keys = [b"k%d" % i for i in range(6000)]   # increasing numbers: out of byte order only where they grow longer
    assert list(_in_write_order(dict.fromkeys(keys, b"v"))) == [(k, b"v") for k in keys]
    shuffled = rng.sample(keys, len(keys))
    entries = {key: None if i % 7 == 0 else b"%d" % i for i, key in enumerate(shuffled)}
    entries[None] = b"k1"   # a range deletion's bound (below b"k1"): last, as before
    assert list(_in_write_order(entries)) == [(k, entries[k]) for k in sorted(shuffled)] + [(None, b"k1")]
    assert list(_in_write_order(dict(list(entries.items())[:100]))) == list(entries.items())[:100]   # few: as they are
    local = open_local_task_store(str(tmp_path / "t"), ["s"])
    try:
        store = local.stores["s"]
        store.put(b"k0", b"old")
        local.commit("v1")
        for i, key in enumerate(shuffled):
            store.put(key, entries[key])
        store.delete_below(b"k1")
        local.commit("v2")
        local.close()
        local.open()
        assert store.range(None, None) == sorted((k, v) for k, v in entries.items()
                                                 if k is not None and k >= b"k1" and v is not None)
    finally:
        local.close()

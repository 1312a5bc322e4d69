"""A task's state on Spark: changes appended to a changelog in Spark's state, a local RocksDB copy that is trusted
only at the version Spark holds and otherwise rebuilt from the changelog, compaction. Spark's state variables are
stood in for by plain objects with the same methods (the Spark tests run the real ones)."""
from __future__ import annotations

import random

import pytest

from streams_on_spark.runtime.spark import task_state as module
from streams_on_spark.runtime.spark.task_state import TaskState
from streams_on_spark.state.local import open_local_task_store


class Value:
    def __init__(self):
        self.row = None

    def exists(self):
        return self.row is not None

    def get(self):
        return self.row

    def update(self, row):
        self.row = tuple(row)


class ListVar:
    def __init__(self):
        self.rows = []
        self.appends = 0

    def get(self):
        return iter(list(self.rows))

    def appendValue(self, row):
        self.appends += 1
        self.rows.append(tuple(row))

    def appendList(self, rows):
        self.appends += 1
        self.rows.extend(map(tuple, rows))

    def clear(self):
        self.rows = []


class Handle:
    """Spark's state for one group: committed copies, and the working copies a batch changes."""

    def __init__(self):
        self.value, self.changelog = Value(), ListVar()

    def getValueState(self, name, schema):
        return self.value

    def getListState(self, name, schema):
        return self.changelog


def run_batch(handle, path, batch_id, writes):
    state = TaskState(handle)
    state.load()
    local = open_local_task_store(path, ["counts"])
    try:
        state.sync(local)
        for key, value in writes:
            local.stores["counts"].put(key, value)
        state.commit(local, batch_id, b"snapshot", -1)
        return dict(local.stores["counts"].range(None, None))
    finally:
        local.close()


def test_batches_append_their_changes_and_a_new_executor_rebuilds_the_same_stores(tmp_path):
    handle, rng, expected, changed = Handle(), random.Random(1), {}, 0
    for batch in range(6):
        writes = [(f"k{rng.randrange(30)}".encode(), None if rng.random() < 0.2 else str(batch).encode())
                  for _ in range(20)]
        for key, value in writes:
            if value is None:
                expected.pop(key, None)
            else:
                expected[key] = value
        changed += len({key for key, _ in writes})
        assert run_batch(handle, str(tmp_path / "executor-1"), batch, writes) == expected
    assert handle.changelog.appends == 6 and len(handle.changelog.rows) == 6
    saved = TaskState(handle).load()
    assert (saved.version, saved.changelog_rows, saved.changelog_entries) == (5, 6, changed)
    # another executor (no local copy) continues from Spark's state alone
    assert run_batch(handle, str(tmp_path / "executor-2"), 6, []) == expected


def test_a_local_copy_ahead_of_spark_is_rebuilt(tmp_path):
    handle = Handle()
    run_batch(handle, str(tmp_path / "task"), 0, [(b"a", b"1")])
    committed = (handle.value.row, list(handle.changelog.rows))
    run_batch(handle, str(tmp_path / "task"), 1, [(b"a", b"2"), (b"b", b"2")])
    handle.value.row, handle.changelog.rows = committed[0], committed[1]   # Spark did not commit batch 1
    assert run_batch(handle, str(tmp_path / "task"), 1, [(b"c", b"3")]) == {b"a": b"1", b"c": b"3"}


def test_a_changelog_much_longer_than_the_stores_is_compacted(tmp_path, monkeypatch):
    monkeypatch.setattr(module, "COMPACT_MIN_ENTRIES", 10)
    handle = Handle()
    for batch in range(20):   # the same 5 keys over and over: 100 changes, 5 entries
        run_batch(handle, str(tmp_path / "task"), batch, [(f"k{i}".encode(), str(batch).encode()) for i in range(5)])
    saved = TaskState(handle).load()
    assert saved.changelog_entries <= 2 * 5 + 10 + 5
    assert len(handle.changelog.rows) == saved.changelog_rows < 20
    assert run_batch(handle, str(tmp_path / "elsewhere"), 20, []) == {f"k{i}".encode(): b"19" for i in range(5)}


def test_a_store_that_keeps_its_size_is_not_compacted_again_and_again(tmp_path, monkeypatch):
    monkeypatch.setattr(module, "COMPACT_MIN_ENTRIES", 10)
    handle = Handle()
    run_batch(handle, str(tmp_path / "task"), 0, [(f"k{i}".encode(), b"0") for i in range(1000)])
    for batch in range(1, 11):   # 10 changes a batch against 1000 entries (each batch reopens the local store)
        run_batch(handle, str(tmp_path / "task"), batch, [(f"k{i}".encode(), str(batch).encode()) for i in range(10)])
    saved = TaskState(handle).load()
    assert (saved.changelog_rows, saved.changelog_entries) == (11, 1100)


def test_expired_window_segments_travel_through_the_changelog_in_chunks(tmp_path, monkeypatch):
    from streams_on_spark.state.stores import bytes_store_over
    from streams_on_spark.state.window_stores import PersistentWindowBytesStoreSupplier, WindowStoreBuilder
    monkeypatch.setattr(module, "CHANGELOG_ROW_BYTES", 200)   # rows of ~200 bytes
    builder = WindowStoreBuilder(PersistentWindowBytesStoreSupplier("counts", 120_000, 10_000, False))
    handle, meta = Handle(), None

    def window_batch(path, batch_id, puts):
        nonlocal meta
        state = TaskState(handle)
        state.load()
        local = open_local_task_store(path, ["counts"])
        try:
            state.sync(local)
            store = bytes_store_over(builder, local.stores["counts"])
            if meta is not None:
                store.restore(meta)
            for key, start in puts:
                store.put(key, b"v", start)
            rows = store.all()
            meta = store.entries()
            state.commit(local, batch_id, b"snapshot", -1)
            return rows
        finally:
            local.close()

    window_batch(str(tmp_path / "one"), 0, [(b"k%d" % i, i * 1000) for i in range(60)])
    after = window_batch(str(tmp_path / "one"), 1, [(b"late", 500_000), (b"later", 501_000)])
    assert after == [(b"late", 500_000, b"v"), (b"later", 501_000, b"v")]
    assert len(handle.changelog.rows) > 2
    assert window_batch(str(tmp_path / "elsewhere"), 2, []) == after   # rebuilt: the old segments stay deleted


def test_a_big_batchs_rows_go_to_the_state_server_a_group_at_a_time_and_rebuild_the_same_stores(tmp_path,
                                                                                                 monkeypatch):
    """A big batch's changelog rows are appended ``APPEND_ROWS`` a call (one round trip each), in order; a
    compaction's too."""
    monkeypatch.setattr(module, "CHANGELOG_ROW_BYTES", 200)
    monkeypatch.setattr(module, "APPEND_ROWS", 4)
    handle = Handle()
    writes = [(b"k%03d" % i, b"v" * 20) for i in range(100)]   # ~4,500 bytes: ~23 rows of ~200
    assert run_batch(handle, str(tmp_path / "one"), 0, writes) == dict(writes)
    rows = len(handle.changelog.rows)
    assert rows > 8 and handle.changelog.appends == -(-rows // 4)
    assert TaskState(handle).load().changelog_rows == rows
    assert run_batch(handle, str(tmp_path / "elsewhere"), 1, []) == dict(writes)
    state, local = TaskState(handle), open_local_task_store(str(tmp_path / "one"), ["counts"])
    try:
        state.load()
        state.sync(local)
        handle.changelog.appends = 0
        compacted_rows, compacted_entries = state._compact(local)   # the stores' content, in rows again
    finally:
        local.close()
    assert compacted_entries == 100 and len(handle.changelog.rows) == compacted_rows > 8
    assert handle.changelog.appends == -(-compacted_rows // 4)


def test_a_fills_changelog_rows_are_compressed_and_rebuild_the_same_stores(tmp_path):
    """A changelog row is its changes pickled and compressed (a fill's: counts of new keys, ~10x smaller than the
    pickle every row used to be), and rebuilds the same stores."""
    import pickle
    handle = Handle()
    writes = [(b"key-%07d" % i, (1_700_000_000_000).to_bytes(8, "big") + (1).to_bytes(8, "big"))
              for i in range(100_000)]
    assert run_batch(handle, str(tmp_path / "one"), 0, writes) == dict(writes)
    rows = [row[0] for row in handle.changelog.rows]
    pickled = sum(len(pickle.dumps(module.decode_changes(row), protocol=pickle.HIGHEST_PROTOCOL)) for row in rows)
    assert sum(map(len, rows)) * 5 < pickled
    assert run_batch(handle, str(tmp_path / "elsewhere"), 1, []) == dict(writes)


def test_changelog_rows_written_as_bare_pickles_rebuild_the_same_stores(tmp_path):
    """Rows a checkpoint holds from before rows were compressed (each a pickle of its changes) are read as they
    are, beside compressed ones."""
    import pickle
    handle = Handle()
    run_batch(handle, str(tmp_path / "one"), 0, [(b"a", b"1"), (b"b", b"1")])
    handle.changelog.rows = [(pickle.dumps(module.decode_changes(row[0]), protocol=pickle.HIGHEST_PROTOCOL),)
                             for row in handle.changelog.rows]
    run_batch(handle, str(tmp_path / "one"), 1, [(b"b", None), (b"c", b"2")])
    assert [row[0][:1] for row in handle.changelog.rows] == [b"\x80", b"s"]
    assert run_batch(handle, str(tmp_path / "elsewhere"), 2, []) == {b"a": b"1", b"c": b"2"}


@pytest.mark.parametrize("max_bytes", [1, 200, 5_000, 1 << 20])
def test_a_batchs_changes_are_split_into_rows_of_about_the_row_size_in_their_order(max_bytes):
    rng = random.Random(max_bytes)
    changes = {store: {f"{store}-{i}".encode() * rng.randrange(1, 4): None if rng.random() < 0.1 else b"v" * rng.randrange(30)
                       for i in range(rng.randrange(1, 400))} for store in ("a", "b", "c")}
    changes["b"][None] = b"b-200"   # a window store's delete_below bound travels last with its store's entries
    rows = list(module._split(changes, max_bytes))
    joined: dict = {}
    for row in rows:
        for store, entries in row.items():
            joined.setdefault(store, []).extend(entries.items())
    assert joined == {store: list(entries.items()) for store, entries in changes.items()}
    sizes = [sum(len(k or b"") + len(v or b"") + 16 for entries in row.values() for k, v in entries.items())
             for row in rows]
    assert all(0 < size < max_bytes + 200 for size in sizes)
    assert all(size >= max_bytes / 2 for size in sizes[:-1])


@pytest.mark.spark
def test_the_state_variables_types_are_what_spark_makes_of_their_schemas(spark):
    """The task's state variables are registered with ``StructType``s (a DDL string would cost a round trip to the
    state server per task call, to parse it): the same types Spark parses from the schemas' text."""
    from pyspark.sql.types import _parse_datatype_string
    from streams_on_spark.runtime.spark.task_state import CHANGELOG, TASK_STATE, state_types
    task_schema = ("epoch string, version long, snapshot binary, wall_clock long, changelog_rows long, "
                   "changelog_entries long")
    assert state_types()[TASK_STATE] == _parse_datatype_string(task_schema)
    assert state_types()[CHANGELOG] == _parse_datatype_string("changes binary")
    assert state_types()[TASK_STATE].json() == _parse_datatype_string(task_schema).json()

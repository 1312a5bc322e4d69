"""Window and session stores: Kafka's InMemoryWindowStore / InMemorySessionStore order, retention and snapshots."""
from __future__ import annotations

import pickle

import pytest

from streams_on_spark import Serdes, StreamsException, ValueAndTimestamp
from streams_on_spark.errors import UnsupportedOperationError
from streams_on_spark.dsl.windows import SessionWindow, TimeWindow, Windowed
from streams_on_spark.state.factory import Stores
from streams_on_spark.state.session_stores import SessionBytesStore, SessionStore
from streams_on_spark.state.window_stores import (
    WindowBytesStore,
    TimestampedWindowStore,
    WindowStore,
    WindowStoreFacade,
)


class Metrics:
    def __init__(self) -> None:
        self.dropped = 0

    def record_dropped(self) -> None:
        self.dropped += 1


class Ctx:
    application_id = "app"
    default_key_serde = None
    default_value_serde = None

    def __init__(self) -> None:
        self.metrics = Metrics()


def window_store(retention=100, size=10, dups=False, builder=Stores.window_store_builder,
                 key=Serdes.String(), value=Serdes.Long(), ctx=None):
    supplier = Stores.in_memory_window_store("w", retention, size, dups)
    store = builder(supplier, key, value).build()
    store.init(ctx or Ctx())
    return store


def session_store(retention=100, ctx=None):
    store = Stores.session_store_builder(Stores.in_memory_session_store("s", retention),
                                               Serdes.String(), Serdes.Long()).build()
    store.init(ctx or Ctx())
    return store


def pairs(it):
    return [(str(k), v) for k, v in it]


def plain(obj):
    """True when obj is made only of dicts/lists/tuples of bytes, ints and str (what pickles compactly)."""
    if isinstance(obj, dict):
        return all(plain(k) and plain(v) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return all(plain(x) for x in obj)
    return type(obj) in (bytes, int, str, bool)


# ---------------------------------------------------------------- window store: reads and order


def test_fetch_single_window_and_time_range():
    store = window_store()
    store.put("a", 1, 0)
    store.put("a", 2, 10)
    store.put("a", 3, 20)
    store.put("b", 9, 10)
    assert store.fetch("a", 10) == 2 and store.fetch_window("a", 10) == 2
    assert store.fetch("a", 5) is None and store.fetch("c", 10) is None
    assert list(store.fetch("a", 0, 20)) == [(0, 1), (10, 2), (20, 3)]            # both bounds inclusive
    assert list(store.fetch("a", 1, 19)) == [(10, 2)]
    assert list(store.backward_fetch("a", 0, 20)) == [(20, 3), (10, 2), (0, 1)]
    assert list(store.fetch("a", 20, 0)) == []


def test_iteration_order_is_window_start_then_key_bytes():
    store = window_store()
    store.put("b", 1, 10)
    store.put("a", 2, 10)
    store.put("c", 3, 0)
    store.put("ab", 4, 10)
    expected = [("[c@0/10]", 3), ("[a@10/20]", 2), ("[ab@10/20]", 4), ("[b@10/20]", 1)]
    assert pairs(store.all()) == expected
    assert pairs(store.fetch_all(0, 10)) == expected
    assert pairs(store.fetch_all(5, 10)) == expected[1:]
    assert pairs(store.backward_all()) == expected[::-1]
    assert pairs(store.backward_fetch_all(0, 10)) == expected[::-1]
    assert pairs(store.fetch_range("a", "ab", 0, 100)) == [("[a@10/20]", 2), ("[ab@10/20]", 4)]
    assert pairs(store.fetch("a", "ab", 0, 100)) == [("[a@10/20]", 2), ("[ab@10/20]", 4)]
    assert pairs(store.fetch_range(None, "a", 0, 100)) == [("[a@10/20]", 2)]
    assert pairs(store.fetch_range("b", None, 0, 100)) == [("[c@0/10]", 3), ("[b@10/20]", 1)]
    assert pairs(store.backward_fetch_range("a", "b", 0, 100)) == [("[b@10/20]", 1), ("[ab@10/20]", 4),
                                                                    ("[a@10/20]", 2)]
    assert list(store.fetch_range("b", "a", 0, 100)) == []                       # from > to: empty, warned
    key = next(iter(store.all())).key
    assert type(key.window) is TimeWindow and key.window == TimeWindow(0, 10)


def test_put_none_deletes_and_counts():
    store = window_store()
    store.put("a", 1, 0)
    store.put("b", 2, 0)
    assert store.approximate_num_entries() == 2
    store.put("a", None, 0)
    assert store.fetch("a", 0) is None and store.approximate_num_entries() == 1
    store.put("b", None, 0)
    assert list(store.all()) == [] and store.approximate_num_entries() == 0
    store.put("b", 5, 0)                                                          # segment re-created
    assert list(store.fetch("b", 0, 0)) == [(0, 5)]


def test_fetch_arity_and_null_key():
    store = window_store()
    with pytest.raises(TypeError):
        store.fetch("a")
    with pytest.raises(ValueError, match="key cannot be null"):
        store.put(None, 1, 0)


# ---------------------------------------------------------------- window store: retention


def test_retention_drops_expired_puts_and_evicts_segments():
    ctx = Ctx()
    store = window_store(retention=100, size=10, ctx=ctx)
    store.put("a", 1, 0)
    store.put("a", 2, 50)
    store.put("a", 3, 200)                        # observed stream time 200: live starts are > 100
    assert store.observed_stream_time == 200
    store.put("a", 4, 100)                        # 100 <= 200 - 100: skipped like Kafka
    assert ctx.metrics.dropped == 1
    store.put("a", 5, 101)
    assert ctx.metrics.dropped == 1
    assert list(store.fetch("a", 0, 1000)) == [(101, 5), (200, 3)]
    assert store.fetch("a", 100) is None and store.fetch("a", 50) is None
    assert store.approximate_num_entries() == 2                                   # 0 and 50 were evicted
    assert pairs(store.all()) == [("[a@101/111]", 5), ("[a@200/210]", 3)]


def test_windows_at_or_before_stream_time_minus_retention_are_gone():
    inner = WindowBytesStore("w", 10, 5)
    inner.put(b"k", b"v", 0)
    inner.put(b"k", b"w", 10)                     # observed 10: start 0 <= 10 - 10 is expired
    assert inner.fetch(b"k", 0) is None
    assert inner.fetch_key(b"k", 0, 10) == [(10, b"w")]
    assert inner.all() == [(b"k", 10, b"w")]


# ---------------------------------------------------------------- window store: duplicates


def test_retain_duplicates_keeps_every_put_in_order():
    store = window_store(dups=True)
    store.put("a", 1, 5)
    store.put("a", 2, 5)
    store.put("ab", 7, 5)                         # shares the byte prefix "a": must not leak into fetch("a")
    store.put("b", 3, 5)
    store.put("a", None, 5)                       # a no-op with duplicates, as in Kafka
    store.put("a", 4, 6)
    assert list(store.fetch("a", 0, 10)) == [(5, 1), (5, 2), (6, 4)]
    assert list(store.backward_fetch("a", 0, 10)) == [(6, 4), (5, 2), (5, 1)]
    assert store.fetch("a", 5) is None            # single-window fetch never matches a sequence-numbered key
    assert pairs(store.fetch_all(0, 10)) == [("[a@5/15]", 1), ("[a@5/15]", 2), ("[ab@5/15]", 7),
                                             ("[b@5/15]", 3), ("[a@6/16]", 4)]
    assert pairs(store.fetch_range("ab", "b", 0, 10)) == [("[ab@5/15]", 7), ("[b@5/15]", 3)]
    assert pairs(store.fetch_range("a", "a", 0, 10)) == [("[a@5/15]", 1), ("[a@5/15]", 2), ("[a@6/16]", 4)]
    assert store.approximate_num_entries() == 5
    raw_keys = sorted(store.inner.entries()["table"])
    assert raw_keys[0] == store.inner.schema.to_store_key(b"a", 5, 1)             # key, start, 4-byte seqnum
    assert raw_keys[0].endswith((1).to_bytes(4, "big"))


# ---------------------------------------------------------------- timestamped variant


def test_timestamped_window_store_layout_and_facade():
    store = window_store(builder=Stores.timestamped_window_store_builder)
    assert isinstance(store, TimestampedWindowStore)
    store.put("a", ValueAndTimestamp(7, 42), 0)
    assert store.fetch("a", 0) == ValueAndTimestamp(7, 42)
    assert store.inner.entries()["table"][store.inner.schema.to_store_key(b"a", 0)] == (
        (42).to_bytes(8, "big") + (7).to_bytes(8, "big"))
    assert pairs(store.fetch_all(0, 0)) == [("[a@0/10]", ValueAndTimestamp(7, 42))]
    with pytest.raises(ValueError, match="ValueAndTimestamp"):
        store.put("a", 7, 0)
    facade = WindowStoreFacade(store)
    facade.put("b", 3, 0)
    assert store.fetch("b", 0) == ValueAndTimestamp(3, -1)
    assert facade.fetch("a", 0) == 7
    assert list(facade.fetch("a", 0, 10)) == [(0, 7)]
    assert pairs(facade.all()) == [("[a@0/10]", 7), ("[b@0/10]", 3)]


def test_default_serdes_and_missing_serde():
    class WithDefaults(Ctx):
        default_key_serde = Serdes.String()
        default_value_serde = Serdes.Integer()

    store = window_store(builder=Stores.timestamped_window_store_builder, key=None, value=None,
                         ctx=WithDefaults())
    store.put("a", ValueAndTimestamp(1, 2), 0)
    assert store.inner.fetch(b"a", 0) == (2).to_bytes(8, "big") + (1).to_bytes(4, "big")
    bare = window_store(key=None, value=None)
    with pytest.raises(StreamsException, match="no key serde"):
        bare.put("a", 1, 0)


# ---------------------------------------------------------------- builders and suppliers


def test_suppliers_validate_like_kafka():
    with pytest.raises(ValueError, match="^retentionPeriod cannot be negative$"):
        Stores.in_memory_window_store("w", -1, 0, False)
    with pytest.raises(ValueError, match="^windowSize cannot be negative$"):
        Stores.in_memory_window_store("w", 1, -1, False)
    with pytest.raises(ValueError) as info:
        Stores.in_memory_window_store("w", 10, 20, False)
    assert str(info.value) == ("The retention period of the window store w must be no smaller than its window size. "
                               "Got size=[PT0.02S], retention=[PT0.01S]")
    with pytest.raises(ValueError, match="^retentionPeriod cannot be negative$"):
        Stores.in_memory_session_store("s", -1)
    with pytest.raises(ValueError):
        Stores.window_store_builder(None)


def test_builders_build_named_fresh_stores():
    supplier = Stores.in_memory_window_store("w", 100, 10, True)
    builder = Stores.window_store_builder(supplier, Serdes.String(), Serdes.Long())
    assert builder.name == "w" and builder.logging_enabled and builder.retention_period() == 100
    assert builder.with_logging_disabled() is builder and not builder.logging_enabled
    builder.with_caching_enabled()
    assert not builder.caching_enabled                        # Kafka disables caching for duplicate stores
    first, second = builder.build(), builder.build()
    assert isinstance(first, WindowStore) and first.inner is not second.inner
    assert (first.name, first.retention_period_ms, first.window_size_ms, first.retain_duplicates) == \
        ("w", 100, 10, True)
    sessions = Stores.session_store_builder(Stores.in_memory_session_store("s", 50)).build()
    assert isinstance(sessions, SessionStore) and sessions.name == "s" and sessions.retention_period_ms == 50


# ---------------------------------------------------------------- snapshots


def test_window_store_snapshot_round_trip_keeps_time_and_seqnum():
    store = window_store(retention=100, dups=True)
    store.put("a", 1, 0)
    store.put("a", 2, 150)
    entries = store.inner.entries()
    assert plain(entries)
    blob = pickle.dumps(entries)
    restored = window_store(retention=100, dups=True)
    restored.inner.restore(pickle.loads(blob))
    assert pairs(restored.all()) == [("[a@150/160]", 2)]
    restored.put("a", 3, 40)                       # 40 <= 150 - 100: still expired after restore
    restored.put("a", 4, 150)                      # seqnum continues: does not overwrite value 2
    assert list(restored.fetch("a", 0, 200)) == [(150, 2), (150, 4)]
    assert list(store.fetch("a", 0, 200)) == [(150, 2)]       # the original is untouched


def test_session_store_snapshot_round_trip():
    store = session_store(retention=10)
    store.put(Windowed("a", SessionWindow(0, 5)), 1)
    store.put(Windowed("b", SessionWindow(2, 12)), 2)
    entries = store.inner.entries()
    assert plain(entries)
    restored = session_store(retention=10)
    restored.inner.restore(pickle.loads(pickle.dumps(entries)))
    assert pairs(restored.all()) == [("[a@0/5]", 1), ("[b@2/12]", 2)]
    assert restored.observed_stream_time == 12
    restored.put(Windowed("c", SessionWindow(0, 2)), 3)        # 2 <= 12 - 10: expired
    assert restored.fetch_session("c", 0, 2) is None


# ---------------------------------------------------------------- session store


def test_find_sessions_bounds():
    store = session_store()
    store.put(Windowed("a", SessionWindow(0, 5)), 1)
    store.put(Windowed("a", SessionWindow(10, 20)), 2)
    store.put(Windowed("a", SessionWindow(30, 30)), 3)
    store.put(Windowed("b", SessionWindow(10, 20)), 9)
    # end >= earliest end and start <= latest start, both inclusive
    assert pairs(store.find_sessions("a", 5, 10)) == [("[a@0/5]", 1), ("[a@10/20]", 2)]
    assert pairs(store.find_sessions("a", 6, 9)) == []
    assert pairs(store.find_sessions("a", 20, 30)) == [("[a@10/20]", 2), ("[a@30/30]", 3)]
    assert pairs(store.find_sessions("a", 21, 30)) == [("[a@30/30]", 3)]
    assert pairs(store.backward_find_sessions("a", 0, 100)) == [("[a@30/30]", 3), ("[a@10/20]", 2), ("[a@0/5]", 1)]
    assert pairs(store.find_sessions("a", "b", 20, 10)) == [("[a@10/20]", 2), ("[b@10/20]", 9)]
    assert pairs(store.find_sessions("b", "a", 0, 100)) == []
    assert pairs(store.find_sessions_by_end_time(5, 20)) == [("[a@0/5]", 1), ("[a@10/20]", 2), ("[b@10/20]", 9)]
    assert pairs(store.find_sessions(5, 20)) == pairs(store.find_sessions_by_end_time(5, 20))   # Kafka's overload
    key = next(store.find_sessions("a", 0, 0)).key
    assert type(key.window) is SessionWindow


def test_session_order_end_then_key_then_start_descending():
    store = session_store()
    store.put(Windowed("b", SessionWindow(0, 10)), 1)
    store.put(Windowed("a", SessionWindow(0, 10)), 2)
    store.put(Windowed("a", SessionWindow(5, 10)), 3)
    store.put(Windowed("a", SessionWindow(0, 3)), 4)
    forward = [("[a@0/3]", 4), ("[a@5/10]", 3), ("[a@0/10]", 2), ("[b@0/10]", 1)]
    assert pairs(store.all()) == forward
    assert pairs(store.backward_all()) == forward[::-1]
    assert pairs(store.fetch("a")) == forward[:3]
    assert pairs(store.backward_fetch("a")) == forward[:3][::-1]
    assert pairs(store.fetch("a", "b")) == forward


def test_session_fetch_remove_and_put_none():
    store = session_store()
    store.put(Windowed("a", SessionWindow(0, 5)), 1)
    store.put(Windowed("a", SessionWindow(7, 9)), 2)
    assert store.fetch_session("a", 0, 5) == 1
    assert store.fetch_session("a", 0, 4) is None and store.fetch_session("a", 1, 5) is None
    store.remove(Windowed("a", SessionWindow(0, 5)))
    assert store.fetch_session("a", 0, 5) is None
    store.put(Windowed("a", SessionWindow(7, 9)), None)
    assert list(store.all()) == [] and store.approximate_num_entries() == 0
    store.remove(Windowed("zz", SessionWindow(0, 1)))              # removing what is absent is a no-op
    with pytest.raises(ValueError):
        store.put(None, 1)


def test_session_retention_by_end_time():
    ctx = Ctx()
    store = session_store(retention=10, ctx=ctx)
    store.put(Windowed("a", SessionWindow(0, 5)), 1)
    store.put(Windowed("b", SessionWindow(20, 30)), 2)             # observed 30: live ends are > 20
    store.put(Windowed("c", SessionWindow(0, 20)), 3)              # end 20 <= 30 - 10: skipped
    assert ctx.metrics.dropped == 1
    store.put(Windowed("d", SessionWindow(0, 21)), 4)
    assert store.fetch_session("a", 0, 5) is None
    assert pairs(store.all()) == [("[d@0/21]", 4), ("[b@20/30]", 2)]
    assert store.approximate_num_entries() == 2


def test_session_bytes_store_direct():
    inner = SessionBytesStore("s", 100)
    inner.put(b"k", 1, 4, b"x")
    assert inner.find_sessions(b"k", b"k", 4, 1) == [(b"k", 1, 4, b"x")]
    assert inner.find_sessions(b"k", b"k", 5, 1) == []
    assert inner.find_sessions(b"k", b"k", 4, 0) == []


def test_time_ordered_session_store_expires_by_segment_and_looks_up_by_retention():
    """RocksDbTimeOrderedSessionBytesStore: segment expiry for findSessions(end range), retention for keys."""
    from streams_on_spark.state.session_stores import TimeOrderedSessionBytesStoreSupplier
    store = TimeOrderedSessionBytesStoreSupplier("s", 10).get()
    assert store.time_ordered and store.segmented and store.segment_interval_ms == 60_000
    store.put(b"a", 0, 0, b"1")
    store.put(b"b", 30, 30, b"2")
    assert [row[0] for row in store.find_sessions_by_end_time(0, 29)] == [b"a"]
    assert store.find_sessions(b"a", b"a", 0, 100) == []
    assert [row[0] for row in store.fetch_keys(None, None)] == [b"b"]
    store.put(b"c", 60_020, 60_020, b"3")                 # stream time 60_020: segment [0, 60_000) has expired
    assert store.find_sessions_by_end_time(0, 59_999) == []


def test_time_ordered_session_store_returns_sessions_by_end_start_and_key():
    """TimeFirstSessionKeySchema: [end][start][key], so sessions ending together come out by start, then key."""
    store = SessionBytesStore("s", 100, segmented=True, time_ordered=True)
    for key, start, end in ((b"a", 5, 5), (b"b", 0, 5), (b"c", 0, 5), (b"a", 7, 9)):
        store.put(key, start, end, key)
    assert [(r[0], r[1]) for r in store.find_sessions_by_end_time(0, 9)] == [(b"b", 0), (b"c", 0), (b"a", 5),
                                                                             (b"a", 7)]
    assert [(r[0], r[1]) for r in store.find_sessions_by_end_time(0, 9, False)] == [(b"a", 7), (b"a", 5), (b"c", 0),
                                                                                    (b"b", 0)]


# ---------------------------------------------------------------- persistent stores (Kafka's RocksDB semantics)


def persistent_window_store(retention=100, size=10, dups=False, ctx=None, builder=Stores.window_store_builder):
    supplier = Stores.persistent_window_store("w", retention, size, dups)
    store = builder(supplier, Serdes.String(), Serdes.Long()).build()
    store.init(ctx or Ctx())
    return store


def test_persistent_window_store_reads_key_first_within_a_segment():
    """WindowKeySchema ([key][start]) inside each segment of max(retention / 2, 60 s); segments in time order."""
    store = persistent_window_store()
    for key, value, start in (("b", 1, 10), ("a", 2, 10), ("c", 3, 0), ("ab", 4, 10), ("a", 5, 60_000)):
        store.put(key, value, start)
    store.put("z", 9, 60_050)                     # stream time 60_050: starts 0 and 10 left retention
    expected = [("[a@60000/60010]", 5), ("[z@60050/60060]", 9)]
    assert pairs(store.all()) == expected
    store = persistent_window_store(retention=1_000_000)
    for key, value, start in (("b", 1, 10), ("a", 2, 10), ("c", 3, 0), ("ab", 4, 10), ("a", 5, 600_000)):
        store.put(key, value, start)              # segments of 500 s: [0, 500 s) and [500 s, 1000 s)
    expected = [("[a@10/20]", 2), ("[ab@10/20]", 4), ("[b@10/20]", 1), ("[c@0/10]", 3), ("[a@600000/600010]", 5)]
    assert pairs(store.all()) == expected
    assert pairs(store.fetch_all(0, 10)) == expected[:4]
    assert pairs(store.backward_all()) == expected[::-1]
    assert pairs(store.fetch_range("a", "ab", 0, 1_000_000)) == [expected[0], expected[1], expected[4]]
    assert list(store.fetch("a", 0, 1_000_000)) == [(10, 2), (600_000, 5)]


def test_persistent_window_store_drops_and_counts_only_puts_into_expired_segments():
    """AbstractRocksDBSegmentedBytesStore.put: a put past retention in a live segment is neither counted nor
    readable; one into a segment older than segmentId(stream time - retention) is dropped and counted."""
    ctx = Ctx()
    store = persistent_window_store(retention=20, ctx=ctx)   # segments of 60 s
    store.put("a", 1, 200)
    store.put("a", 2, 96)                                    # 96 <= 200 - 20, but segment 0 is live
    assert ctx.metrics.dropped == 0
    assert list(store.fetch("a", 0, 1000)) == [(200, 1)] and store.fetch("a", 96) is None
    store.put("a", 3, 60_100)                                # stream time 60_100: segment 0 has expired
    store.put("a", 4, 59_999)
    assert ctx.metrics.dropped == 1
    assert list(store.fetch("a", 0, 100_000)) == [(60_100, 3)]


def test_persistent_time_first_window_store_reads_windows_starting_at_stream_time_minus_retention():
    """The time-ordered store of emit-final aggregations: getActualFrom without the +1, time-first order."""
    store = WindowBytesStore("w", 10, 10, segmented=True, time_first=True)
    for key, start in ((b"b", 0), (b"a", 0), (b"a", 10)):
        store.put(key, key, start)
    assert [(k, s) for k, s, _ in store.fetch_all(0, 10)] == [(b"a", 0), (b"b", 0), (b"a", 10)]
    store.put(b"c", b"c", 11)                               # stream time 11: start 1 is the oldest readable
    assert [(k, s) for k, s, _ in store.all()] == [(b"a", 10), (b"c", 11)]
    plain_store = WindowBytesStore("w", 10, 10, segmented=True)
    plain_store.put(b"a", b"a", 0)
    plain_store.put(b"a", b"a", 10)
    assert [s for _, s, _ in plain_store.all()] == [10]     # key-first store: start 0 <= 10 - 10 is gone
    store.put(b"d", b"d", 20)
    assert [s for _, s, _ in store.fetch_all(0, 100)] == [10, 11, 20]


def test_persistent_session_store_orders_by_segment_key_end_start_and_expires_by_segment():
    """SessionKeySchema ([key][end][start]) per segment of session end; lookups see ends > stream time - retention."""
    ctx = Ctx()
    store = Stores.session_store_builder(Stores.persistent_session_store("s", 100), Serdes.String(),
                                               Serdes.Long()).build()
    store.init(ctx)
    for key, start, end in (("b", 0, 5), ("a", 7, 9), ("a", 5, 5), ("c", 0, 5)):
        store.put(Windowed(key, SessionWindow(start, end)), end)
    rows = [(kv.key.key, kv.key.window.start, kv.key.window.end) for kv in store.fetch(None, None)]
    assert rows == [("a", 5, 5), ("a", 7, 9), ("b", 0, 5), ("c", 0, 5)]
    assert list(store.fetch("c", "a")) == []                 # from > to: empty, warned (in memory: ValueError)
    with pytest.raises(UnsupportedOperationError, match="not supported by this implementation of SessionStore"):
        store.find_sessions(0, 100)                          # as Kafka's RocksDB session store
    store.put(Windowed("a", SessionWindow(200, 200)), 1)    # stream time 200: ends <= 100 are past retention
    assert [kv.key.window.end for kv in store.fetch("a")] == [200]
    store.put(Windowed("b", SessionWindow(50, 50)), 1)      # past retention, live segment: not counted
    assert ctx.metrics.dropped == 0
    store.put(Windowed("b", SessionWindow(60_300, 60_300)), 1)
    store.put(Windowed("b", SessionWindow(1, 1)), 1)        # segment 0 expired: dropped and counted
    assert ctx.metrics.dropped == 1

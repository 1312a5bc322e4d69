"""Versioned key-value stores (KIP-889): Kafka's return codes, as-of reads, history retention, tombstones, deletes;
the same answers over the task's local RocksDB across commits; Stores' argument checks."""
from __future__ import annotations

import datetime
import random

import pytest

from streams_on_spark import Serdes, Stores, VersionedRecord
from streams_on_spark.state.local import open_local_task_store
from streams_on_spark.state.versioned import (
    PUT_RETURN_CODE_NOT_PUT,
    PUT_RETURN_CODE_VALID_TO_UNDEFINED,
    VersionedKeyValueStore,
    VersionedKeyValueStoreBuilder,
)

S = Serdes.String()


class Metrics:
    def __init__(self) -> None:
        self.dropped = 0

    def record_dropped(self) -> None:
        self.dropped += 1


class Context:
    application_id = "app"
    default_key_serde = S
    default_value_serde = S

    def __init__(self) -> None:
        self.metrics = Metrics()


def store(history_ms: int = 10, bytes_store=None) -> VersionedKeyValueStore:
    built = Stores.versioned_key_value_store_builder(
        Stores.persistent_versioned_key_value_store("prices", history_ms)).build(bytes_store)
    built.init(Context())
    return built


def test_put_returns_kafkas_codes_and_get_reads_latest_and_as_of():
    s = store()
    assert s.put("a", "p10", 10) == PUT_RETURN_CODE_VALID_TO_UNDEFINED
    assert s.put("a", "p20", 20) == PUT_RETURN_CODE_VALID_TO_UNDEFINED
    assert s.put("a", "p15", 15) == 20                       # out of order: valid until the next version
    assert s.put("a", "p5", 5) == PUT_RETURN_CODE_NOT_PUT    # older than stream time 20 - retention 10
    assert s.metrics.dropped == 1
    assert s.get("a") == VersionedRecord("p20", 20)
    assert s.get("a", 12) == VersionedRecord("p10", 10)
    assert s.get("a", 15) == VersionedRecord("p15", 15)
    assert s.get("a", 19) == VersionedRecord("p15", 15)
    assert s.get("a", 25) == VersionedRecord("p20", 20)
    assert s.get("a", 15).valid_to is None                   # as Kafka's store answers: no valid_to
    assert s.get("a", 9) is None                              # before the first version... and expired
    assert s.get("missing") is None and s.get("missing", 50) is None


def test_same_timestamp_replaces_the_version():
    s = store()
    s.put("a", "x", 10)
    assert s.put("a", "y", 10) == PUT_RETURN_CODE_VALID_TO_UNDEFINED
    s.put("a", "z", 14)
    assert s.put("a", "y2", 10) == 14
    assert s.get("a", 11) == VersionedRecord("y2", 10)


def test_reads_older_than_retention_find_only_the_latest_version():
    s = store()
    s.put("a", "old", 10)
    s.put("b", "b1", 5)
    s.put("a", "new", 30)                  # stream time 30: history before 20 is gone
    assert s.get("a", 15) is None          # expired read: the version is not the latest
    assert s.get("b", 15) == VersionedRecord("b1", 5)   # the latest version never expires
    assert s.get("b", 4) is None


def test_tombstones_end_a_version_and_hide_the_latest():
    s = store()
    s.put("a", "p20", 20)
    assert s.put("a", None, 30) == PUT_RETURN_CODE_VALID_TO_UNDEFINED
    assert s.get("a") is None and s.get("a", 31) is None
    assert s.get("a", 22) == VersionedRecord("p20", 20)
    assert s.put("a", "p25", 25) == 30     # slots in before the tombstone
    assert s.get("a", 27) == VersionedRecord("p25", 25)
    assert s.get("a") is None


def test_delete_returns_the_version_valid_then_and_refuses_expired_times():
    s = store()
    s.put("a", "v1", 10)
    s.put("a", "v2", 20)
    assert s.delete("a", 15) == VersionedRecord("v1", 10)
    assert s.get("a", 16) is None and s.get("a", 20) == VersionedRecord("v2", 20)
    s.put("b", "x", 40)
    assert s.delete("a", 25) is None                        # 25 < stream time 40 - retention 10: expired
    assert s.get("a") == VersionedRecord("v2", 20)          # nothing deleted
    assert s.metrics.dropped == 1


def test_stream_time_is_kept_in_the_bytes_store():
    s = store()
    s.put("a", "v", 7)
    assert s.observed_stream_time() == 7
    again = store(bytes_store=s.inner)      # a new store object over the same bytes (a task rebuilt on Spark)
    assert again.put("a", "old", -5) == PUT_RETURN_CODE_NOT_PUT
    assert again.approximate_num_entries() == 1


def test_matches_an_in_memory_store_over_local_rocksdb_across_commits(tmp_path):
    rng = random.Random(13)
    local = open_local_task_store(str(tmp_path / "task"), ["prices"])
    on_disk, in_memory = store(25, local.stores["prices"]), store(25)
    now = 0
    for version in range(6):
        for _ in range(80):
            now += rng.randrange(3)
            key, ts = rng.choice("abcd"), now - rng.randrange(40)
            if ts < 0:
                continue
            if rng.random() < 0.15:
                assert on_disk.delete(key, ts) == in_memory.delete(key, ts)
            else:
                value = None if rng.random() < 0.1 else f"v{ts}"
                assert on_disk.put(key, value, ts) == in_memory.put(key, value, ts)
            for probe in "abcd":
                assert on_disk.get(probe) == in_memory.get(probe)
                as_of = now - rng.randrange(40)
                assert on_disk.get(probe, as_of) == in_memory.get(probe, as_of)
        local.commit(str(version))
    local.close()


def test_versioned_record_refuses_a_null_value():
    with pytest.raises(ValueError, match="value cannot be null"):
        VersionedRecord(None, 1)


def test_stores_checks_its_arguments_as_kafka():
    supplier = Stores.persistent_versioned_key_value_store("s", datetime.timedelta(minutes=2))
    assert (supplier.history_retention_ms, supplier.segment_interval_ms) == (120_000, 24_000)
    assert Stores.persistent_versioned_key_value_store("s", 10, 7).segment_interval_ms == 7
    with pytest.raises(ValueError, match="historyRetention cannot be negative"):
        Stores.persistent_versioned_key_value_store("s", -1)
    with pytest.raises(ValueError, match="segmentInterval cannot be zero or negative"):
        Stores.persistent_versioned_key_value_store("s", 10, 0)
    with pytest.raises(ValueError, match="name cannot be null"):
        Stores.persistent_versioned_key_value_store(None, 10)
    with pytest.raises(ValueError, match="versioned store supplier"):
        VersionedKeyValueStoreBuilder(Stores.in_memory_key_value_store("kv"))


def test_builder_ignores_caching():
    builder = Stores.versioned_key_value_store_builder(Stores.persistent_versioned_key_value_store("s", 10))
    builder.with_caching_enabled()
    assert builder.caching_enabled is False and builder.engine_kept()

"""Task state needs Spark's RocksDB state store provider: chosen where the user chose none, a clear error where the
user chose another."""
from __future__ import annotations

import pytest

from streams_on_spark import StreamsException
from streams_on_spark.runtime.spark.session import (
    ROCKSDB_PROVIDER,
    STATE_STORE_PROVIDER,
    require_rocksdb_state_store,
)

pytestmark = pytest.mark.spark
HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"


@pytest.fixture
def provider(spark):
    before = spark.conf.get(STATE_STORE_PROVIDER)
    yield spark
    spark.conf.set(STATE_STORE_PROVIDER, before)


def test_spark_default_provider_becomes_rocksdb(provider):
    provider.conf.set(STATE_STORE_PROVIDER, HDFS)   # what Spark answers when nobody set it
    require_rocksdb_state_store(provider)
    assert provider.conf.get(STATE_STORE_PROVIDER) == ROCKSDB_PROVIDER


def test_another_provider_is_refused_naming_the_setting(provider):
    provider.conf.set(STATE_STORE_PROVIDER, "com.example.MyStateStoreProvider")
    with pytest.raises(StreamsException, match="spark.sql.streaming.stateStore.providerClass is set to "
                                               "com.example.MyStateStoreProvider.*RocksDBStateStoreProvider"):
        require_rocksdb_state_store(provider)

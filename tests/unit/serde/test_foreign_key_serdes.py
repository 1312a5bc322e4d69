"""Foreign-key join wire formats against Kafka 4.3.1's own bytes (tests/data/foreign-key-wire-vectors.json, written
by ``streamsonspark.reference.ForeignKeyScenarios`` in deps/kafka-reference): the murmur3 value hash, the
subscription and response wrappers; the combined key's layout; clear errors for bad bytes."""
from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from streams_on_spark.errors import SerializationException
from streams_on_spark.serde import Serdes
from streams_on_spark.serde.foreign_key import (
    CombinedKey,
    CombinedKeySchema,
    Instruction,
    SubscriptionResponseWrapper,
    SubscriptionResponseWrapperSerde,
    SubscriptionWrapper,
    SubscriptionWrapperSerde,
    murmur3_hash128,
)

VECTORS = json.loads((Path(__file__).resolve().parents[2] / "data" / "foreign-key-wire-vectors.json").read_text())
S = Serdes.String()


def _hash(h):
    return None if h is None else tuple(h)


def test_vectors_come_from_kafka():
    assert VECTORS["kafka_version"] == "4.3.1"
    assert len(VECTORS["murmur3_hash128"]) >= 5 and VECTORS["subscriptions"] and VECTORS["responses"]


@pytest.mark.parametrize("vector", VECTORS["murmur3_hash128"], ids=lambda v: f"{len(v['bytes_hex']) // 2}-bytes")
def test_murmur3_hash128_is_kafkas(vector):
    assert murmur3_hash128(bytes.fromhex(vector["bytes_hex"])) == tuple(vector["hash128"])


@pytest.mark.parametrize("vector", VECTORS["subscriptions"], ids=lambda v: v["primary_key"])
def test_subscription_wrapper_bytes_are_kafkas(vector):
    serde = SubscriptionWrapperSerde(S)
    wrapper = SubscriptionWrapper(_hash(vector["hash"]), Instruction(vector["instruction"]), vector["primary_key"],
                                  vector["primary_partition"])
    data = bytes.fromhex(vector["bytes_hex"])
    assert serde.serialize("t", wrapper) == data
    assert serde.deserialize("t", data) == wrapper


@pytest.mark.parametrize("vector", VECTORS["responses"], ids=lambda v: f"{v['hash'] is not None}-{v['foreign_value']}")
def test_response_wrapper_bytes_are_kafkas(vector):
    serde = SubscriptionResponseWrapperSerde(S)
    response = SubscriptionResponseWrapper(_hash(vector["hash"]), vector["foreign_value"])
    data = bytes.fromhex(vector["bytes_hex"])
    assert serde.serialize("t", response) == data
    assert serde.deserialize("t", data) == response


def test_subscription_version_0_has_no_partition():
    serde = SubscriptionWrapperSerde(S)
    v0 = SubscriptionWrapper(None, Instruction.DELETE_KEY_AND_PROPAGATE, "o2", None, version=0)
    data = serde.serialize("t", v0)
    assert data == bytes.fromhex("80" "01" "6f32")
    assert serde.deserialize("t", data) == v0


def test_combined_key_layout_and_prefix():
    schema = CombinedKeySchema(S, Serdes.Integer())
    data = schema.to_bytes("c1", 7)
    assert data == bytes.fromhex("00000002" "6331" "00000007")
    assert data.startswith(schema.prefix_bytes("c1"))
    assert not schema.to_bytes("c10", 7).startswith(schema.prefix_bytes("c1"))  # the length keeps prefixes apart
    assert schema.from_bytes(data) == CombinedKey("c1", 7)


def test_missing_inner_serdes_take_the_defaults_once_set():
    subscriptions, responses, schema = SubscriptionWrapperSerde(None), SubscriptionResponseWrapperSerde(None), \
        CombinedKeySchema(None, None)
    wrapper = SubscriptionWrapper(None, Instruction.DELETE_KEY_AND_PROPAGATE, "o2", 0)
    with pytest.raises(SerializationException, match="primary key serde"):
        subscriptions.serialize("t", wrapper)
    with pytest.raises(SerializationException, match="foreign value serde"):
        responses.serialize("t", SubscriptionResponseWrapper(None, "x"))
    for serde in (subscriptions, responses, schema):
        serde.set_if_unset(S, S)
    assert subscriptions.deserialize("t", subscriptions.serialize("t", wrapper)) == wrapper
    assert responses.serialize("t", SubscriptionResponseWrapper(None, "x")) == b"\x80x"
    assert schema.from_bytes(schema.to_bytes("a", "b")) == CombinedKey("a", "b")
    given = SubscriptionWrapperSerde(Serdes.Integer())
    given.set_if_unset(S, S)
    assert given.primary_key_serde == Serdes.Integer()


def test_bad_bytes_are_typed_errors():
    subscriptions = SubscriptionWrapperSerde(S)
    with pytest.raises(SerializationException, match="Unknown instruction byte value = 9"):
        subscriptions.deserialize("t", bytes.fromhex("8109" "6f3200000000"))
    with pytest.raises(SerializationException, match="at least 2 bytes"):
        subscriptions.deserialize("t", b"\x01")
    with pytest.raises(SerializationException, match="truncated"):
        subscriptions.deserialize("t", bytes.fromhex("0103" "0102"))
    with pytest.raises(SerializationException, match="empty"):
        SubscriptionResponseWrapperSerde(S).deserialize("t", b"")
    with pytest.raises(SerializationException, match="exceeds"):
        CombinedKeySchema(S, S).from_bytes(bytes.fromhex("000000ff" "61"))
    with pytest.raises(SerializationException, match="does not support version 5"):
        SubscriptionWrapper(None, Instruction.DELETE_KEY_AND_PROPAGATE, "k", 0, version=5)
    with pytest.raises(ValueError, match="primaryKey cannot be null"):
        SubscriptionWrapper(None, Instruction.DELETE_KEY_AND_PROPAGATE, None, 0)


def test_serdes_pickle_for_spark():
    serde = pickle.loads(pickle.dumps(SubscriptionWrapperSerde(S, "t-pk")))
    wrapper = SubscriptionWrapper((1, -2), Instruction.PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE, "o1", 3)
    assert serde.deserialize("t", serde.serialize("t", wrapper)) == wrapper

"""Foreign-key table-table join processors (KIP-213), ports of Kafka 4.3.1's ``foreignkeyjoin`` package.

The left table's updates become subscriptions keyed by the foreign key (``SubscriptionSend``), which the foreign
side stores per (foreign key, primary key) (``SubscriptionReceive``) and answers with the foreign value
(``SubscriptionJoin``); each foreign update answers every subscriber (``ForeignTableJoin``). Answers travel back,
keyed by the primary key, to the left row's partition, where ``ResponseJoin`` drops those whose value hash no
longer matches the row (a newer update is on its way) and calls the joiner.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from streams_on_spark.change import Change
from streams_on_spark.errors import SerializationException, StreamsException
from streams_on_spark.operators.shared import drop_record, skip_out_of_order_join_update
from streams_on_spark.processor.api import Processor, ProcessorContext, Record
from streams_on_spark.serde.foreign_key import (
    RESPONSE_VERSION,
    SUBSCRIPTION_VERSION,
    CombinedKeySchema,
    Instruction,
    SubscriptionResponseWrapper,
    SubscriptionWrapper,
    murmur3_hash128,
)
from streams_on_spark.state.stores import ValueAndTimestamp

log = logging.getLogger(__name__)


def _set_defaults(context: ProcessorContext, *serdes: Any) -> None:
    """Kafka's ``setIfUnset``: wrapper serdes without an inner serde take the application's defaults."""
    key_serde = getattr(context, "default_key_serde", None)
    value_serde = getattr(context, "default_value_serde", None)
    for serde in serdes:
        serde.set_if_unset(key_serde, value_serde)


def _serializer(given: Any, context: ProcessorContext, default: str, what: str) -> Any:
    serde = given if given is not None else getattr(context, default, None)
    if serde is None:
        raise StreamsException(f"the foreign-key join needs {what}: give it in Consumed/Materialized or set "
                               f"'{default.replace('_', '.')}'")
    return serde


class ForeignKeyExtractor:
    """The user's ``extractor(value)`` (Kafka's ``Function``) or ``extractor(key, value)`` (``BiFunction``)."""

    def __init__(self, extractor: Callable[..., Any], with_key: bool) -> None:
        self.extractor, self.with_key = extractor, with_key

    def extract(self, key: Any, value: Any) -> Any:
        return self.extractor(key, value) if self.with_key else self.extractor(value)


class SubscriptionSend(Processor):
    """Left table updates → subscriptions keyed by the foreign key (Kafka's ``SubscriptionSendProcessorSupplier``).

    Carries the murmur3 hash of the new value (in the left table's value serde) so that the response can be matched
    against the row's value when it comes back; a foreign key change unsubscribes from the old key first.
    """

    def __init__(self, extractor: ForeignKeyExtractor, foreign_key_serde: Any, value_serde: Any, left_join: bool,
                 fk_topic: str, value_hash_topic: str, wrapper_serde: Any, versioned: bool = False) -> None:
        self.extractor, self.foreign_key_serde, self.value_serde = extractor, foreign_key_serde, value_serde
        self.left_join, self.fk_topic, self.value_hash_topic = left_join, fk_topic, value_hash_topic
        self.wrapper_serde = wrapper_serde
        self.versioned = versioned   # the left table is versioned: its out-of-order updates are skipped (KIP-914)
        self.send_old_values = False

    def init(self, context: ProcessorContext) -> None:
        self.context = context
        _set_defaults(context, self.wrapper_serde)
        self.fk_serde = _serializer(self.foreign_key_serde, context, "default_key_serde", "the foreign key serde")
        self.values = _serializer(self.value_serde, context, "default_value_serde", "the left table's value serde")

    def process(self, record: Record) -> None:
        change: Change = record.value
        if self.versioned and not change.is_latest:
            skip_out_of_order_join_update(self.context)
            return
        old, new = change.old_value, change.new_value
        self._hash: Any = False   # computed once per record, on first use
        old_fk = None if old is None else self.extractor.extract(record.key, old)
        if self.left_join:
            if old is None and new is None:
                return   # no output for idempotent deletes
            new_fk = None if new is None else self.extractor.extract(record.key, new)
            if old_fk is not None and self._changed(new_fk, old_fk):
                self._send(record, old_fk, Instruction.DELETE_KEY_NO_PROPAGATE)
            self._send(record, new_fk, Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE)
            return
        if new is None:
            if old_fk is not None:
                self._send(record, old_fk, Instruction.DELETE_KEY_AND_PROPAGATE)
            return
        new_fk = self.extractor.extract(record.key, new)
        if new_fk is None:
            drop_record(self.context, "null foreign key", record)
            if old_fk is not None:
                self._send(record, old_fk, Instruction.DELETE_KEY_AND_PROPAGATE)
        elif old_fk is None:
            self._send(record, new_fk, Instruction.PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE)
        elif self._changed(new_fk, old_fk):
            self._send(record, old_fk, Instruction.DELETE_KEY_NO_PROPAGATE)
            self._send(record, new_fk, Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE)
        else:
            self._send(record, new_fk, Instruction.PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE)

    def _changed(self, new_fk: Any, old_fk: Any) -> bool:
        """Kafka compares the serialized foreign keys, not the objects."""
        serialize = self.fk_serde.serialize
        return (None if new_fk is None else serialize(self.fk_topic, new_fk)) != serialize(self.fk_topic, old_fk)

    def _value_hash(self, value: Any) -> Optional[tuple[int, int]]:
        if self._hash is False:
            self._hash = None if value is None else murmur3_hash128(self.values.serialize(self.value_hash_topic,
                                                                                          value))
        return self._hash

    def _send(self, record: Record, foreign_key: Any, instruction: Instruction) -> None:
        meta = self.context.record_metadata()
        partition = meta.partition if meta is not None else None
        wrapper = SubscriptionWrapper(self._value_hash(record.value.new_value), instruction, record.key,
                                      partition if partition is not None else -1)
        self.context.forward(Record(foreign_key, wrapper, record.timestamp, record.headers))


class SubscriptionReceive(Processor):
    """Keeps the subscriptions per (foreign key, primary key) in the subscription store (Kafka's
    ``SubscriptionReceiveProcessorSupplier``); forwards ``CombinedKey -> Change(ValueAndTimestamp(wrapper))``."""

    def __init__(self, store_name: str, key_schema: CombinedKeySchema, wrapper_serde: Any) -> None:
        self.store_name, self.key_schema, self.wrapper_serde = store_name, key_schema, wrapper_serde

    def init(self, context: ProcessorContext) -> None:
        self.context = context
        self.store = context.get_state_store(self.store_name)
        _set_defaults(context, self.key_schema, self.wrapper_serde)

    def process(self, record: Record) -> None:
        wrapper: SubscriptionWrapper = record.value
        foreign_key = record.key
        if foreign_key is None and wrapper.instruction is not Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE:
            drop_record(self.context, "null foreign key", record)
            return
        if wrapper.version > SUBSCRIPTION_VERSION:
            raise SerializationException("SubscriptionWrapper is of an incompatible version.")
        new = ValueAndTimestamp(wrapper, record.timestamp)
        old = None
        if foreign_key is not None:
            key = self.key_schema.to_bytes(foreign_key, wrapper.primary_key)
            old = self.store.get(key)
            if wrapper.instruction in (Instruction.DELETE_KEY_AND_PROPAGATE, Instruction.DELETE_KEY_NO_PROPAGATE):
                self.store.delete(key)
            else:
                self.store.put(key, new)
        self.context.forward(Record((foreign_key, wrapper.primary_key), Change(new, old), record.timestamp,
                                    record.headers))


class SubscriptionJoin(Processor):
    """Answers a subscription with the foreign table's current value, as its instruction says (Kafka's
    ``SubscriptionJoinProcessorSupplier``)."""

    def __init__(self, foreign_getter: Any, response_serde: Any) -> None:
        self.foreign_getter_supplier, self.response_serde = foreign_getter, response_serde

    def init(self, context: ProcessorContext) -> None:
        self.forward = context.forward
        self.foreign = self.foreign_getter_supplier(context)
        _set_defaults(context, self.response_serde)

    def process(self, record: Record) -> None:
        foreign_key, primary_key = record.key
        subscription: ValueAndTimestamp = record.value.new_value
        wrapper: SubscriptionWrapper = subscription.value
        foreign = None if foreign_key is None else self.foreign(foreign_key)
        ts = subscription.timestamp if foreign is None else max(subscription.timestamp, foreign.timestamp)
        instruction = wrapper.instruction
        if instruction is Instruction.DELETE_KEY_AND_PROPAGATE:
            value = None
        elif instruction is Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE:
            value = None if foreign is None else foreign.value
        elif instruction is Instruction.PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE and foreign is not None:
            value = foreign.value
        else:
            return
        self.forward(Record(primary_key, SubscriptionResponseWrapper(wrapper.hash, value, wrapper.primary_partition),
                            ts, record.headers))


class ForeignTableJoin(Processor):
    """A foreign table update answers every subscriber of its key: a prefix scan of the subscription store (Kafka's
    ``ForeignTableJoinProcessorSupplier``)."""

    def __init__(self, store_name: str, key_schema: CombinedKeySchema, response_serde: Any,
                 versioned: bool = False) -> None:
        self.store_name, self.key_schema, self.response_serde = store_name, key_schema, response_serde
        self.versioned = versioned   # the foreign table is versioned: its out-of-order updates are skipped (KIP-914)

    def init(self, context: ProcessorContext) -> None:
        self.context, self.forward = context, context.forward
        self.store = context.get_state_store(self.store_name)
        _set_defaults(context, self.key_schema, self.response_serde)

    def process(self, record: Record) -> None:
        if record.key is None:
            drop_record(self.context, "null key", record)
            return
        if self.versioned and not record.value.is_latest:
            skip_out_of_order_join_update(self.context)
            return
        prefix = self.key_schema.prefix_bytes(record.key)
        new_value = record.value.new_value
        for entry in self.store.prefix_scan(prefix, _RAW):
            wrapper: SubscriptionWrapper = entry.value.value
            primary_key = self.key_schema.from_bytes(entry.key).primary_key
            self.forward(record.with_key(primary_key).with_value(
                SubscriptionResponseWrapper(wrapper.hash, new_value, wrapper.primary_partition)))


class ResponseJoin(Processor):
    """Joins a response with the left row it answers, if the row's value still hashes as it did when subscribing
    (Kafka's ``ResponseJoinProcessorSupplier``); forwards the joined value (or a tombstone) to the result table."""

    def __init__(self, getter: Any, value_serde: Any, value_hash_topic: str, joiner: Callable[[Any, Any], Any],
                 left_join: bool, response_serde: Any) -> None:
        self.getter_supplier, self.value_serde, self.value_hash_topic = getter, value_serde, value_hash_topic
        self.joiner, self.left_join, self.response_serde = joiner, left_join, response_serde

    def init(self, context: ProcessorContext) -> None:
        self.context, self.forward = context, context.forward
        _set_defaults(context, self.response_serde)
        self.getter = self.getter_supplier(context)
        self.values = _serializer(self.value_serde, context, "default_value_serde", "the left table's value serde")

    def process(self, record: Record) -> None:
        response: SubscriptionResponseWrapper = record.value
        if response.version != RESPONSE_VERSION:
            raise SerializationException("SubscriptionResponseWrapper is of an incompatible version.")
        current = self.getter(record.key)
        current_hash = None if current is None else murmur3_hash128(
            self.values.serialize(self.value_hash_topic, current.value))
        if response.original_value_hash != current_hash:
            log.debug("Dropping FK-join response due to hash mismatch. Expected %s. Actual %s",
                      response.original_value_hash, current_hash)
            metrics = getattr(self.context, "metrics", None)
            if metrics is not None:
                metrics.record_dropped()
            return
        if response.foreign_value is None and (not self.left_join or current is None):
            result = None
        else:
            result = self.joiner(None if current is None else current.value, response.foreign_value)
        self.forward(record.with_value(result))


class PrimaryPartitioner:
    """The response sink's default partitioner: back to the partition the left row came from."""

    def __call__(self, topic: str, key: Any, value: SubscriptionResponseWrapper, num_partitions: int) -> Optional[int]:
        partition = value.primary_partition
        return None if partition is None or partition < 0 else partition


class KeyOnlyPartitioner:
    """A ``TableJoined`` partitioner ``(topic, key, value, n)`` called as Kafka does, with a null value."""

    def __init__(self, partitioner: Callable[[str, Any, Any, int], Optional[int]]) -> None:
        self.partitioner = partitioner

    def __call__(self, topic: str, key: Any, value: Any, num_partitions: int) -> Optional[int]:
        return self.partitioner(topic, key, None, num_partitions)


class _RawBytes:
    """The identity serializer a prefix scan over already-serialized combined keys uses."""

    @staticmethod
    def serialize(topic: Optional[str], data: bytes) -> bytes:
        return data


_RAW = _RawBytes()

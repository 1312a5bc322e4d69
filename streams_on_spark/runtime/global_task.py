"""``GlobalTask``: feeds global stores from every partition of their topics (Kafka's ``GlobalStreamThread`` task),
in the driver's engine at once and on Spark from each worker's reader."""
from __future__ import annotations

from typing import Any, Iterable

from streams_on_spark.config import TaskConfig
from streams_on_spark.records import ConsumerRecord
from streams_on_spark.errors import StreamsException
from streams_on_spark.processor.api import Record, TaskId
from streams_on_spark.runtime.nodes import ProcessorNode
from streams_on_spark.runtime.state_manager import in_dsl_store_format
from streams_on_spark.runtime.task import TaskContext, TaskMetrics
from streams_on_spark.topology.builder import InternalTopologyBuilder


class _GlobalState:
    """What a global store processor's context reads of its owner (a global task has no queues or schedules)."""

    def __init__(self, subtopology: int, config: TaskConfig, store_name: str, store: Any, wall_clock: Any) -> None:
        self.id = TaskId(subtopology, -1)
        self.config, self.wall_clock = config, wall_clock
        self.metrics = TaskMetrics()
        self.stores: dict[str, Any] = {}
        self.global_stores = {store_name: store}
        self.global_read_only = False   # the global store's processor maintains it
        self.stream_time = -1
        self.processor_metadata: dict[str, int] = {}
        self.cache = None   # global stores are not cached: nothing downstream would see their flushes

    def schedule(self, *args: Any) -> Any:
        raise StreamsException("global store processors cannot schedule punctuations")


class GlobalTask:
    """Feeds global stores from every partition of their topics, immediately (as Kafka's driver does)."""

    def __init__(self, topology: InternalTopologyBuilder, config: TaskConfig, wall_clock: Any) -> None:
        self.stores: dict[str, Any] = {}
        self._by_topic: dict[str, tuple[Any, Any, Any, Any]] = {}
        for spec in topology.global_stores():
            store = in_dsl_store_format(topology.global_state_builders[spec.store_name],
                                        config.dsl_headers_stores).build()
            context = TaskContext(_GlobalState(spec.id, config, spec.store_name, store, wall_clock))
            context.tracks_store_positions = False   # IQv2 does not query global stores (no positions kept)
            store.init(context)
            self.stores[spec.store_name] = store
            processor = spec.processor.supplier()
            node = ProcessorNode(spec.processor.name, processor, [spec.store_name])
            context.current = node
            processor.init(context)
            context.current = None
            key_serde = spec.source.key_serde or config.default_key_serde
            value_serde = spec.source.value_serde or config.default_value_serde
            self._by_topic[spec.topic] = (node, context, key_serde, value_serde)

    def topics(self) -> Iterable[str]:
        return self._by_topic.keys()

    def apply(self, record: ConsumerRecord) -> None:
        node, context, key_serde, value_serde = self._by_topic[record.topic]
        key = key_serde.deserialize(record.topic, record.key) if record.key is not None else None
        value = value_serde.deserialize(record.topic, record.value) if record.value is not None else None
        # record_metadata() reads the topic and partition of ``queue`` (the record has both) and ``offset``, as
        # Kafka's GlobalStateUpdateTask sets the record context before its processor runs
        context.current, context.queue, context.offset = node, record, record.offset
        try:
            node.processor.process(Record(key, value, record.timestamp, record.headers))
        except Exception as e:
            raise StreamsException(f"Exception caught in global store processor {node.name} for topic "
                                   f"{record.topic}, partition {record.partition}, offset {record.offset}: {e}") from e
        finally:
            context.current = context.queue = None

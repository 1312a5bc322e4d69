"""A task's state stores and their record caches (Kafka's ``ProcessorStateManager``).

Builds the stores a subtopology names (over an engine's own bytes store where it keeps one), finds the record
caches in front of them, flushes those on commit, and gives and takes the stores' bytes-level entries for the task
snapshot.
"""
from __future__ import annotations

import logging
from typing import Any, Iterable, Mapping, Optional

from streams_on_spark.errors import StreamsException
from streams_on_spark.processor.api import ProcessorContext, TaskId
from streams_on_spark.state.caching import CachingBytesStore, RecordCached
from streams_on_spark.state.headers_stores import dsl_headers_builder
from streams_on_spark.topology.builder import InternalTopologyBuilder

log = logging.getLogger(__name__)


class ProcessorStateManager:
    """One task's stores by name and the record caches in front of them."""

    def __init__(self, task_id: TaskId, store_names: Iterable[str], topology: InternalTopologyBuilder,
                 context: ProcessorContext, bytes_stores: Optional[Mapping[str, Any]] = None,
                 dsl_headers_stores: bool = False) -> None:
        """Build and initialize the stores; ``bytes_stores``: store name -> the bytes store an engine keeps that
        store's data in (its local stores); ``dsl_headers_stores``: ``dsl.store.format=HEADERS``."""
        self.task_id = task_id
        self.stores: dict[str, Any] = {}
        self.external = frozenset(bytes_stores or ())
        for name in store_names:
            builder = in_dsl_store_format(topology.state_factories[name], dsl_headers_stores)
            store = builder.build() if name not in self.external else builder.build(bytes_stores[name])
            store.init(context)
            self.stores[name] = store
        # the enabled record caches, flushed on commit (a cache written through leaves the list, which is updated in
        # place: the task reads it on its hot path)
        self.caches: list[CachingBytesStore] = [
            store.record_cache for store in self.stores.values()
            if isinstance(store, RecordCached) and store.record_cache is not None]

    def write_through(self, caches: Iterable[CachingBytesStore]) -> None:
        """Let ``caches`` flush each write as it is made; they no longer wait for the commit."""
        through = list(caches)
        for cache in through:
            cache.write_through()
        self.caches[:] = [cache for cache in self.caches if cache not in through]

    def flush_caches(self) -> None:
        """Every cached store forwards its dirty entries downstream (Kafka's commit)."""
        for cache in self.caches:
            cache.flush()

    def entries(self) -> dict[str, Any]:
        """Each store's bytes-level entries for a snapshot; an engine's own store gives what is not in the engine's
        copy, if anything."""
        out = {}
        for name, store in self.stores.items():
            inner = getattr(store, "inner", None)
            if inner is None or not hasattr(inner, "entries"):
                if name in self.external:
                    continue
                raise StreamsException(f"store {name} of task {self.task_id} cannot be snapshotted "
                                       f"({type(store).__name__} has no bytes-level entries)")
            entries = inner.entries()
            if entries is not None:
                out[name] = entries
        return out

    def positions(self) -> dict[str, dict[tuple[str, int], int]]:
        """Each written store's position: (topic, partition) -> the offset of the last record that wrote it (sorted: the
        snapshot's bytes do not depend on the order the partitions first wrote)."""
        return {name: dict(sorted(store.position_offsets.items())) for name, store in self.stores.items()
                if getattr(store, "position_offsets", None)}

    def restore(self, entries: Mapping[str, Any],
                positions: Optional[Mapping[str, Mapping[tuple[str, int], int]]] = None) -> None:
        """Load :meth:`entries` and :meth:`positions` of an earlier instance; a store this topology no longer has
        loses its state."""
        unknown = set(entries) - set(self.stores)
        if unknown:   # KafkaStreams refuses such a change at start unless upgrade.allow.unsafe=true
            log.warning("task %s: the saved state has stores %s that this topology does not have: their state is "
                        "dropped", self.task_id, sorted(unknown))
        for name, store_entries in entries.items():
            if name not in unknown:
                self.stores[name].inner.restore(store_entries)
        for name, offsets in (positions or {}).items():
            if name in self.stores:
                self.stores[name].position_offsets.update(offsets)

    def close(self) -> None:
        for store in self.stores.values():
            store.close()


def in_dsl_store_format(builder: Any, dsl_headers_stores: bool) -> Any:
    """``builder`` as ``dsl.store.format`` builds it: under HEADERS (``dsl_headers_stores``) a DSL operator's store
    is built headers-aware, as Kafka 4.3 builds it; any other store stays as it is."""
    if dsl_headers_stores and getattr(builder, "follows_dsl_store_format", False):   # (not on a custom builder)
        return dsl_headers_builder(builder)
    return builder

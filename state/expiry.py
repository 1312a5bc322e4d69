"""What window and session stores share: their entries in an ordered bytes table under a key schema
(``key_schemas.py``), and expiry by observed stream time, in Kafka's segments or record by record."""
from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from streams_on_spark.state.key_schemas import KeySchema
from streams_on_spark.state.stores import InMemoryKeyValueBytesStore, StateStore, SupplierStoreBuilder

log = logging.getLogger(__name__)

NO_TIMESTAMP = -1


def ordered(rows: list, order: Optional[Callable[[tuple], Any]], forward: bool) -> list:
    """``rows`` (in table order) in a store's read ``order`` (None: table order), reversed when not ``forward``."""
    if order is not None:
        rows.sort(key=order)
    if not forward:
        rows.reverse()
    return rows


class SegmentedBytesStore(StateStore):
    """A window or session store's entries in an ordered bytes ``table`` (in memory when none is given) under a key
    ``schema``. Expiry follows Kafka's stores: a ``segmented`` store (RocksDB's rules, ``AbstractSegments``) drops a
    put only when its segment has expired and keeps data a whole segment at a time; otherwise (the in-memory stores)
    everything at or before ``observedStreamTime - retention`` is gone. Reads see only what is within retention."""

    name: str
    retention_period_ms: int
    schema: KeySchema

    def _init_table(self, name: str, retention_period_ms: int, segmented: bool, table: Any,
                    schema: KeySchema) -> None:
        self.name = name
        self.retention_period_ms = retention_period_ms
        self.segmented = segmented
        self.schema = schema
        self.segment_interval_ms = schema.segment_interval_ms
        self.observed_stream_time = NO_TIMESTAMP
        self.metrics: Any = None             # set by the typed store's init: counts dropped expired records
        self._own_table = table is None
        self._table = InMemoryKeyValueBytesStore(name) if table is None else table
        self._floor: Optional[int] = None   # the lowest live segment this instance has told the table

    # -- expiry
    def _segment_id(self, timestamp: int) -> int:
        """Java's ``timestamp / segmentInterval`` (rounds toward zero)."""
        return self.schema.segment_id(timestamp)

    def _min_live_time(self) -> int:
        """The oldest time still kept: the start of the oldest live segment, or (per record) just after retention."""
        if self.segmented:
            return max(0, self._segment_id(self.observed_stream_time - self.retention_period_ms)
                       * self.segment_interval_ms)
        return max(0, self.observed_stream_time - self.retention_period_ms + 1)

    def _expired(self, timestamp: int) -> bool:
        """Whether a put at ``timestamp`` (window start, session end) comes too late to be stored."""
        cut = self.observed_stream_time - self.retention_period_ms
        if self.segmented:
            return self._segment_id(timestamp) < self._segment_id(cut)
        return timestamp <= cut

    def _record_expired(self) -> None:
        if self.metrics is not None:
            self.metrics.record_dropped()
        log.warning("Skipping record for expired segment.")

    def _admit(self, timestamp: int) -> bool:
        """Before a put at ``timestamp`` (window start, session end): drop expired segments and advance stream time;
        whether the put may be stored (a late one is dropped, logged and counted)."""
        self._remove_expired_segments()
        self.observed_stream_time = max(self.observed_stream_time, timestamp)
        if self._expired(timestamp):
            self._record_expired()
            return False
        return True

    def _remove_expired_segments(self) -> None:
        """Drop the table's segments below the oldest live time's, once per new floor (one range deletion)."""
        segment = self._segment_id(self._min_live_time())
        if self._floor is None or segment > self._floor:
            self._floor = segment
            self._table.delete_below(self.schema.segment_bound(self._min_live_time()))

    def approximate_num_entries(self) -> int:
        """The table's entries less those its oldest segment still holds below the oldest live time (as Kafka's
        in-memory stores, which drop them one by one; in a segmented store, negative times sharing segment 0)."""
        count = self._table.approximate_num_entries()
        if self._floor is None:
            return count
        live = self._min_live_time()
        for composite, _ in self.schema.scan(self._table, None, None, live, live):   # the oldest live segment
            if self._time_of(composite) < live:
                count -= 1
        return max(0, count)

    def _time_of(self, composite: bytes) -> int:
        """The time a composite key expires by (window start, session end)."""
        raise NotImplementedError

    # -- snapshots
    def entries(self) -> dict[str, Any]:
        """Plain-builtin state for the task's snapshot: stream time and, where the table is not the engine's, its
        entries (``{composite key: value}``)."""
        out: dict[str, Any] = {"observed_stream_time": self.observed_stream_time}
        table = self._table.entries()
        if table is not None:
            out["table"] = table
        return out

    def restore(self, entries: dict[str, Any]) -> None:
        """Load what :meth:`entries` returned."""
        self.observed_stream_time = entries["observed_stream_time"]
        if "table" in entries:
            self._table.restore(entries["table"])
        self._floor = None

    def close(self) -> None:
        """Drop the entries of the store's own in-memory table (an engine's table belongs to the task's store)."""
        if self._own_table:
            self._table.restore({})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class SegmentedStoreBuilder(SupplierStoreBuilder):
    """What window and session store builders share: the retention and the store over an engine's table."""

    def retention_period(self) -> int:
        return self.supplier.retention_period_ms

    def bytes_store_over(self, table: Any) -> SegmentedBytesStore:
        """The supplier's bytes store with its entries in an engine's ``table``."""
        return self.supplier.get(table)


def check_store_name(name: Optional[str]) -> str:
    if not name:
        raise ValueError("store name cannot be null or empty")
    return name

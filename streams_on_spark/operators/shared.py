"""What several DSL operators share: a mapper's key-value pair, dropping a record as Kafka does, the table-table
join's skip of an out-of-order versioned update, and forwarding a cached store's updates when its cache flushes."""
from __future__ import annotations

import logging
from typing import Any, Optional

from streams_on_spark.change import Change
from streams_on_spark.errors import StreamsException
from streams_on_spark.processor.api import ProcessorContext, Record

log = logging.getLogger(__name__)


def as_pair(result: Any, node: str) -> tuple[Any, Any]:
    if isinstance(result, tuple) and len(result) == 2:
        return result[0], result[1]
    raise StreamsException(f"mapper of {node} must return a KeyValue or a (key, value) tuple, "
                           f"got {type(result).__name__}")


def drop_record(context: ProcessorContext, what: str, record: Record) -> None:
    """Skip a record as Kafka does: a WARN naming where it came from and a dropped-records count."""
    meta = context.record_metadata()
    where = f" topic=[{meta.topic}] partition=[{meta.partition}] offset=[{meta.offset}]" if meta else ""
    log.warning("Skipping record due to %s.%s", what, where)
    metrics = getattr(context, "metrics", None)
    if metrics is not None:
        metrics.record_dropped()


def skip_out_of_order_join_update(context: ProcessorContext) -> None:
    """A table-table join skips an out-of-order update of a versioned table (KIP-914) as Kafka does: an INFO line and
    a dropped-records count."""
    log.info("Skipping out-of-order record from versioned table while performing table-table join.")
    metrics = getattr(context, "metrics", None)
    if metrics is not None:
        metrics.record_dropped()


def forward_on_flush(processor: Any, store: Any) -> bool:
    """Kafka's ``TimestampedTupleForwarder``: when a record cache sits in front of ``store``, the processor's
    updates go downstream when the cache flushes (``Change(new, old as of the last flush)`` with the writing record's
    headers, stamped with the new value's timestamp, else the writing record's — a session store gives the session
    end), and the processor must not forward them itself: returns True. Key-value, window and session stores."""
    forward = processor.forward

    def flushed(key: Any, new_value: Any, new_timestamp: Optional[int], old_value: Any, timestamp: int,
                headers: Any) -> None:
        forward(Record(key, Change(new_value, old_value), timestamp if new_timestamp is None else new_timestamp,
                       headers))
    return store is not None and store.set_flush_listener(flushed, processor.send_old_values)

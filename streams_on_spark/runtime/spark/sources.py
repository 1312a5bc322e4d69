"""The Spark sources a subtopology's query reads its topics through, giving the rows the task function reads.

A connector says which Spark source reads its topics and with what options (:meth:`Connector.reader_options
<streams_on_spark.connectors.base.Connector.reader_options>`); the sources themselves are Spark code and live here,
with the Spark runtime: the ``embedded-topics`` Python data source over the embedded topics' files
(:mod:`~streams_on_spark.runtime.spark.embedded_source`), registered with the session before a query reads it, and
the packing of Spark's Kafka source rows into the same record batch layout before the shuffle
(:mod:`~streams_on_spark.runtime.spark.kafka_rows`). The connectors, below the runtime, import no Spark.

Every source's rows reach the task function in the ``batches`` layout: topic, partition, offset of the first record,
ends, data (:mod:`streams_on_spark.record_batch`).
"""
from __future__ import annotations

from typing import Any, Sequence

from streams_on_spark.connectors.base import Connector
from streams_on_spark.errors import StreamsException

__all__ = ["EMBEDDED_TOPICS", "KAFKA", "read_topics"]

#: the format of the embedded topics' data source (:class:`~.embedded_source.EmbeddedTopicsDataSource`)
EMBEDDED_TOPICS = "embedded-topics"
#: the format of Spark's Kafka source (``spark-sql-kafka-0-10``)
KAFKA = "kafka"


def read_topics(spark: Any, connector: Connector, topics: list[str], whole_batches: Sequence[str] = ()) -> Any:
    """The streaming DataFrame of ``topics`` through ``connector``'s source, in the ``batches`` layout;
    ``whole_batches`` of them read in their writing query's whole micro-batches (where the source can)."""
    fmt, options = (connector.reader_options(topics, whole_batches) if whole_batches
                    else connector.reader_options(topics))
    if fmt not in (EMBEDDED_TOPICS, KAFKA):
        raise StreamsException(f"{type(connector).__name__} reads its topics through the Spark source {fmt!r}: the "
                               f"Spark runtime reads topics through {EMBEDDED_TOPICS!r} or {KAFKA!r} only")
    if fmt == EMBEDDED_TOPICS:
        from streams_on_spark.runtime.spark.embedded_source import register
        register(spark)
        cores = _cores(spark)
        if cores is not None and "maxPartitions" not in options:   # a batch read in one wave of tasks
            options = {**options, "maxPartitions": str(cores)}
    reader = spark.readStream.format(fmt)
    for key, value in options.items():
        reader = reader.option(key, value)
    try:
        frame = reader.load()
    except Exception as e:
        if "Failed to find data source" in str(e):
            raise StreamsException(
                f"the Spark session has no '{fmt}' data source: for Kafka, pass the connector jars to "
                "spark-submit (--jars, see kafka_jars()) or create the session with local_session(..., "
                "jars=kafka_jars())") from None
        raise
    if fmt == KAFKA:   # one row per record: packed, on the source's partitions, into record batches
        from streams_on_spark.runtime.spark.kafka_rows import PACKED_SCHEMA, pack_kafka_rows, select_kafka_rows
        return select_kafka_rows(frame).mapInArrow(pack_kafka_rows, PACKED_SCHEMA)
    return frame


def _cores(spark: Any) -> int | None:
    """The application's cores (Spark's default parallelism), or None where the session cannot tell (Spark
    Connect has no SparkContext)."""
    from streams_on_spark.runtime.spark.session import is_spark_connect
    if is_spark_connect(spark):
        return None
    return int(spark.sparkContext.defaultParallelism)

"""``interactive.queries=true`` where the tasks' commit rows do not reach the driver's process is refused at once,
naming why (pipeline mode, Spark Connect, the driver's Spark mode), before anything starts."""
from __future__ import annotations

import pytest

from streams_on_spark import Consumed, Serdes, StreamsBuilder
from streams_on_spark.config import TaskConfig
from streams_on_spark.errors import StreamsException
from streams_on_spark.runtime.spark.output import ReturnedOutput
from streams_on_spark.runtime.spark.runtime import SparkRuntime

S = Serdes.String()


class ConnectSession:
    """Stands for a Spark Connect session (only its class's module is looked at before the refusal)."""


ConnectSession.__module__ = "pyspark.sql.connect.session"


@pytest.mark.parametrize("kwargs", [{"pipelines": [object()]}, {"output": ReturnedOutput(print)}, {"spark": ConnectSession()}],
                         ids=["pipeline-mode", "driver-spark-mode", "spark-connect"])
def test_refused_where_the_commit_rows_do_not_reach_the_driver(kwargs):
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).to("out")
    spark = kwargs.pop("spark", None)
    with pytest.raises(StreamsException, match="interactive.queries=true needs the tasks' commit rows on the driver"):
        SparkRuntime(builder.build().internal_builder, TaskConfig("app"), None, None, spark, "/nowhere",
                     interactive_queries=True, **kwargs)

"""The test driver: ``TopologyTestDriver``, its builder, topics and records."""
from streams_on_spark.testing.driver import TopologyTestDriver, TopologyTestDriverBuilder
from streams_on_spark.testing.record import TestRecord
from streams_on_spark.testing.topics import TestInputTopic, TestOutputTopic

__all__ = ["TopologyTestDriver", "TopologyTestDriverBuilder", "TestRecord", "TestInputTopic", "TestOutputTopic"]

"""Where a plain ``python app.py`` finds the Spark Kafka connector jars (``kafka_jars``): Maven's names (``make
deps-spark-kafka``) and Ivy's (``spark-submit --packages`` leaves ``groupId_artifactId-version.jar`` in
``~/.ivy2.5.2/jars``), and an error naming the variable and the path searched when they are not there."""
from __future__ import annotations

import pytest

from streams_on_spark.connectors.kafka import JARS_ENV, kafka_jars
from streams_on_spark.errors import StreamsException

IVY = ["org.apache.spark_spark-sql-kafka-0-10_2.13-4.2.0.jar",
       "org.apache.spark_spark-token-provider-kafka-0-10_2.13-4.2.0.jar",
       "org.apache.kafka_kafka-clients-3.9.2.jar", "org.apache.commons_commons-pool2-2.13.1.jar"]


def touch(folder, *names):
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"")


def test_ivys_jars_directory_is_found_through_the_variable(tmp_path, monkeypatch):
    ivy = tmp_path / ".ivy2.5.2" / "jars"
    # what --packages leaves: the connector's jars among other packages' and Hadoop's
    touch(ivy, *IVY, "org.lz4_lz4-java-1.8.0.jar", "org.apache.hadoop_hadoop-client-runtime-3.4.1.jar",
          "io.delta_delta-spark_2.13-4.0.0.jar")
    monkeypatch.setenv(JARS_ENV, str(ivy))
    assert kafka_jars() == [str(ivy / name) for name in IVY]


def test_of_several_versions_pysparks_connector_and_the_newest_client_are_taken(tmp_path):
    touch(tmp_path, *IVY, "org.apache.spark_spark-sql-kafka-0-10_2.13-4.1.1.jar",
          "org.apache.spark_spark-sql-kafka-0-10_2.13-4.10.0.jar", "org.apache.kafka_kafka-clients-3.10.1.jar")
    assert [p.rsplit("/", 1)[1] for p in kafka_jars(str(tmp_path))] == [
        IVY[0], IVY[1], "org.apache.kafka_kafka-clients-3.10.1.jar", IVY[3]]


def test_mavens_names_are_found_as_before(tmp_path):
    names = ["spark-sql-kafka-0-10_2.13-4.2.0.jar", "spark-token-provider-kafka-0-10_2.13-4.2.0.jar",
             "kafka-clients-3.9.2.jar", "commons-pool2-2.13.1.jar"]
    touch(tmp_path, *names)
    assert kafka_jars(str(tmp_path)) == [str(tmp_path / name) for name in names]


def test_a_directory_missing_a_jar_is_an_error_naming_the_variable_and_the_path_searched(tmp_path, monkeypatch):
    touch(tmp_path, *IVY[:3])
    monkeypatch.setenv(JARS_ENV, str(tmp_path))
    assert kafka_jars() == []
    with pytest.raises(StreamsException) as error:
        kafka_jars(required=True)
    assert str(error.value).startswith(f"the Spark Kafka connector jars were not found: searched {tmp_path} (from "
                                       f"{JARS_ENV}), which has no commons-pool2 jar. Set {JARS_ENV} to a directory")
    monkeypatch.setenv(JARS_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(StreamsException, match=f"searched {tmp_path / 'nowhere'} \\(from {JARS_ENV}\\), which does "
                                               "not exist"):
        kafka_jars(required=True)

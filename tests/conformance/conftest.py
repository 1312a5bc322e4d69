"""Conformance scenarios run on every engine and with 1 and N partitions, with the same assertions.

Only the in-process engine exists so far; the Spark engine joins the ``engine`` parameter when it lands.
"""
from __future__ import annotations

from typing import Callable

import pytest

from streams_on_spark import Topology, TopologyTestDriver, TopologyTestDriverBuilder

ENGINES = ["local"]
PARTITIONS = [1, 4]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=PARTITIONS, ids=lambda n: f"{n}p")
def partitions(request: pytest.FixtureRequest) -> int:
    return request.param


@pytest.fixture
def make_driver(engine: str, partitions: int) -> Callable[..., TopologyTestDriver]:
    """``make_driver(topology, "topic-a", "topic-b", config=...)``: every named topic gets ``partitions``."""
    drivers: list[TopologyTestDriver] = []

    def make(topology: Topology, *topics: str, config: dict | None = None) -> TopologyTestDriver:
        builder = TopologyTestDriverBuilder(topology).with_config({"application.id": "conformance", **(config or {})})
        for topic in topics:
            builder.declare_topic(topic, partitions)
        driver = builder.build()
        drivers.append(driver)
        return driver

    yield make
    for driver in drivers:
        driver.close()

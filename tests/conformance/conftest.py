"""Conformance scenarios run on every engine and with 1 and N partitions, with the same assertions.

``local`` is the in-process engine; ``spark`` runs the same tasks as Structured Streaming queries over embedded
topics (marked ``spark``: seconds per test).
"""
from __future__ import annotations

from typing import Callable

import pytest

from streams_on_spark import Topology, TopologyTestDriver, TopologyTestDriverBuilder

ENGINES = ["local", pytest.param("spark", marks=pytest.mark.spark)]
PARTITIONS = [1, 4]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=PARTITIONS, ids=lambda n: f"{n}p")
def partitions(request: pytest.FixtureRequest) -> int:
    return request.param


@pytest.fixture
def make_driver(engine: str, partitions: int, request: pytest.FixtureRequest) -> Callable[..., TopologyTestDriver]:
    """``make_driver(topology, "topic-a", "topic-b", config=...)``: every named topic gets ``partitions``.

    The mock wall clock starts at ``wall_clock_ms`` (10 s by default), so wall-clock punctuation is deterministic.
    """
    drivers: list[TopologyTestDriver] = []

    def make(topology: Topology, *topics: str, config: dict | None = None,
             wall_clock_ms: int = 10_000) -> TopologyTestDriver:
        builder = (TopologyTestDriverBuilder(topology)
                   .with_config({"application.id": "conformance", **(config or {})})
                   .with_initial_wall_clock_time(wall_clock_ms))
        if engine == "spark":
            builder.with_engine("spark", request.getfixturevalue("spark"))
        for topic in topics:
            builder.declare_topic(topic, partitions)
        driver = builder.build()
        drivers.append(driver)
        return driver

    yield make
    for driver in drivers:
        driver.close()

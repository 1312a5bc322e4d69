"""Conformance scenarios run on every engine and with 1 and N partitions, with the same assertions.

Built on the project's pytest plugin (streams_on_spark.testing.pytest_plugin): every test here runs by default on
both engines (``local``; ``spark``, marked ``spark``: seconds per test) with 1 and 4 partitions, as if run with
``--streams-engine=all --streams-partitions=1,4``; those options, when given, choose instead.
"""
from __future__ import annotations

from typing import Callable

import pytest

from streams_on_spark import Topology, TopologyTestDriver

ENGINE = "all"
PARTITIONS = [1, 4]


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """This directory's defaults for the plugin's parametrization (before the plugin's own hook reads them)."""
    metafunc.definition.add_marker(pytest.mark.streams(engine=ENGINE, partitions=PARTITIONS))


@pytest.fixture
def engine(streams_engine: str) -> str:
    return streams_engine


@pytest.fixture
def partitions(streams_partitions: int) -> int:
    return streams_partitions


@pytest.fixture
def make_driver(topology_driver: Callable[..., TopologyTestDriver],
                partitions: int) -> Callable[..., TopologyTestDriver]:
    """``make_driver(topology, "topic-a", "topic-b", config=...)``: every named topic gets ``partitions``.

    The mock wall clock starts at ``wall_clock_ms`` (10 s by default), so wall-clock punctuation is deterministic.
    """
    def make(topology: Topology, *topics: str, config: dict | None = None,
             wall_clock_ms: int = 10_000) -> TopologyTestDriver:
        return topology_driver(topology, {"application.id": "conformance", **(config or {})},
                               dict.fromkeys(topics, partitions), initial_wall_clock_time_ms=wall_clock_ms)

    return make

"""The pytest plugin (entry point ``pytest11``: ``streams_on_spark``): test a topology on every engine, by fixtures.

Installed with the package, active in every pytest run:

- ``topology_driver(topology, config=None, partitions=None)``: a started ``TopologyTestDriver``, closed at teardown;
  its engine and default partition counts come from the test's parameters (``streams_engine``,
  ``streams_partitions``).
- ``spark_session``: one local SparkSession per test session, created on first use, stopped at the end.
- ``--streams-engine=local|spark|all`` and ``--streams-partitions=1,4``: the engines and partition counts every test
  using ``topology_driver`` runs with (ids ``local-1p``, ``spark-4p``, ...). The marker
  ``@pytest.mark.streams(engine=..., partitions=[...])`` sets them for a test (or, from a conftest's
  ``pytest_generate_tests``, a directory) where the options are not given; a test that parametrizes
  ``streams_engine`` or ``streams_partitions`` itself pins them.
- On Spark, the classes and functions of test modules and conftests are pickled by value: Spark's Python workers
  cannot import a module pytest imported from a test path (the driver's Spark mode ships the modules of its
  topology's code itself, see :func:`~streams_on_spark.runtime.spark.user_code.ship_user_code`; this covers what
  else a test hands to Spark).
"""
from __future__ import annotations

import argparse
import hashlib
import re
from types import ModuleType
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

import pytest

from streams_on_spark.errors import bad_argument, require_instance, require_int
from streams_on_spark.runtime.engine import ENGINES as ENGINE_FACTORIES
from streams_on_spark.runtime.spark.user_code import pickle_by_value
from streams_on_spark.testing.driver import TopologyTestDriver, TopologyTestDriverBuilder
from streams_on_spark.topology.topology import Topology

ENGINES = tuple(ENGINE_FACTORIES)
ENGINE_CHOICES = (*ENGINES, "all")
# what a test runs with when neither an option nor a ``streams`` marker says otherwise
DEFAULT_ENGINE = "local"
SPARK_MARKER = "spark: starts a local Spark session (slow: seconds per test)"
STREAMS_MARKER = ("streams(engine='local'|'spark'|'all', partitions=[1, 4]): the engines and partition counts of a "
                  "test using topology_driver, where --streams-engine / --streams-partitions are not given")
# Kafka's legal characters in an application id (and so in its internal topics' names)
_APP_ID_ILLEGAL = re.compile(r"[^a-zA-Z0-9._-]+")


# ---------------------------------------------------------------------------------------------------- options

def parse_engine(value: str) -> tuple[str, ...]:
    """``local``, ``spark`` or ``all`` as the engines to run."""
    if value not in ENGINE_CHOICES:
        raise bad_argument("streams engine", "'local', 'spark' or 'all'", value)
    return ENGINES if value == "all" else (value,)


def parse_partitions(value: str | Sequence[int]) -> tuple[int, ...]:
    """``"1,4"`` (or a sequence of ints) as distinct partition counts, each at least 1, in the given order."""
    counts = [part.strip() for part in value.split(",")] if isinstance(value, str) else list(value)
    out: list[int] = []
    for count in counts:
        if isinstance(count, str):
            if not count.isdigit():
                raise bad_argument("streams partitions", "a comma-separated list of ints >= 1 (e.g. 1,4)", value)
            count = int(count)
        require_int(count, "streams partitions", minimum=1)
        if count not in out:
            out.append(count)
    if not out:
        raise bad_argument("streams partitions", "at least one partition count", value)
    return tuple(out)


def _option_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse ``type``: a bad value is a usage error that names the option and what was wrong."""
    def convert(value: str) -> Any:
        try:
            return parse(value)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    convert.__name__ = parse.__name__
    return convert


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("streams-on-spark", "streams-on-spark: engines and partitions of topology_driver")
    group.addoption("--streams-engine", dest="streams_engine", type=_option_type(parse_engine), default=None,
                    metavar="local|spark|all",
                    help=f"engine(s) every test using topology_driver runs on (default {DEFAULT_ENGINE}); "
                         "'all' runs it on each, the spark runs marked 'spark'")
    group.addoption("--streams-partitions", dest="streams_partitions", type=_option_type(parse_partitions),
                    default=None, metavar="N[,M...]",
                    help="partition counts every test using topology_driver runs with (e.g. 1,4): the driver "
                         "declares each source, sink and through topic with that count where the test passes none")


def pytest_configure(config: pytest.Config) -> None:
    declared = {line.split(":")[0].split("(")[0].strip() for line in config.getini("markers")}
    for marker in (SPARK_MARKER, STREAMS_MARKER):
        if marker.split(":")[0].split("(")[0] not in declared:
            config.addinivalue_line("markers", marker)


# ---------------------------------------------------------------------------------------------------- parametrizing

def _pinned(metafunc: pytest.Metafunc) -> set[str]:
    """The argument names the test parametrizes itself."""
    names: set[str] = set()
    for mark in metafunc.definition.iter_markers("parametrize"):
        argnames = mark.args[0] if mark.args else mark.kwargs.get("argnames", ())
        if isinstance(argnames, str):
            argnames = argnames.split(",")
        names.update(name.strip() for name in argnames)
    return names


def _matrix(metafunc: pytest.Metafunc) -> tuple[tuple[str, ...], Optional[tuple[int, ...]]]:
    """The engines and partition counts of this test: the options, else its closest ``streams`` marker."""
    marker = metafunc.definition.get_closest_marker("streams")
    marked = marker.kwargs if marker is not None else {}
    if marker is not None and (marker.args or set(marked) - {"engine", "partitions"}):
        given = ", ".join([*map(repr, marker.args), *(f"{k}={v!r}" for k, v in marked.items())])
        raise ValueError(f"the streams marker of {metafunc.definition.nodeid} takes the keywords engine= and "
                         f"partitions= only, got streams({given})")
    engines = metafunc.config.getoption("streams_engine")
    if engines is None:
        engines = parse_engine(marked.get("engine", DEFAULT_ENGINE))
    partitions = metafunc.config.getoption("streams_partitions")
    if partitions is None and marked.get("partitions") is not None:
        partitions = parse_partitions(marked["partitions"])
    return engines, partitions


def _engine_param(engine: str, *values: Any, id: str) -> Any:
    return pytest.param(engine, *values, id=id, marks=[pytest.mark.spark] if engine == "spark" else [])


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run each test that uses ``streams_engine``/``streams_partitions`` (``topology_driver`` does) once per engine
    and partition count, unless the test parametrizes them itself."""
    wanted = [name for name in ("streams_engine", "streams_partitions")
              if name in metafunc.fixturenames and name not in _pinned(metafunc)]
    if not wanted:
        return
    engines, partitions = _matrix(metafunc)
    counts: Sequence[Optional[int]] = partitions or [None]
    if wanted == ["streams_engine", "streams_partitions"]:
        metafunc.parametrize(wanted, [_engine_param(e, n, id=e if n is None else f"{e}-{n}p")
                                      for e in engines for n in counts])
    elif wanted == ["streams_engine"]:
        metafunc.parametrize("streams_engine", [_engine_param(e, id=e) for e in engines])
    elif partitions is not None:
        metafunc.parametrize("streams_partitions", list(partitions), ids=[f"{n}p" for n in partitions])


@pytest.fixture
def streams_engine() -> str:
    """The engine this run of the test drives: ``local`` or ``spark`` (parametrized by the plugin)."""
    return DEFAULT_ENGINE


@pytest.fixture
def streams_partitions() -> Optional[int]:
    """The partition count of this run, or None when none was asked for (parametrized by the plugin)."""
    return None


# ---------------------------------------------------------------------------------------------------- fixtures

def topology_topics(topology: Topology) -> list[str]:
    """The topics of ``topology`` a user names: sources, global topics and sinks (a ``through``/``to`` topic is both),
    in order. Internal (repartition) topics are not among them: the driver gives them their sources' counts."""
    builder = topology.internal_builder
    sinks = [t for t in builder.node_to_sink_topic.values() if isinstance(t, str) and t not in builder.internal_topics]
    return list(dict.fromkeys([*builder.source_topics(), *builder.global_topics, *sinks]))


def unique_application_id(node: pytest.Item, index: int) -> str:
    """A Kafka-legal application id unique to the test (its name and a hash of its node id) and driver ``index``."""
    digest = hashlib.sha1(node.nodeid.encode("utf-8")).hexdigest()[:8]
    name = _APP_ID_ILLEGAL.sub("-", node.name).strip("-.")[:80] or "test"
    return f"{name}-{digest}" + (f"-{index}" if index else "")


@pytest.fixture
def topology_driver(request: pytest.FixtureRequest, streams_engine: str,
                    streams_partitions: Optional[int]) -> Iterator[Callable[..., TopologyTestDriver]]:
    """``topology_driver(topology, config=None, partitions=None, *, initial_wall_clock_time_ms=None)``: a started
    driver on this run's engine, closed at teardown.

    ``partitions`` maps topic -> partition count; without it, every topic of :func:`topology_topics` gets this run's
    ``streams_partitions`` (when the run has one). A config without ``application.id`` gets one unique to the test.
    """
    drivers: list[TopologyTestDriver] = []

    def make(topology: Topology, config: Optional[Mapping[str, Any]] = None,
             partitions: Optional[Mapping[str, int]] = None, *,
             initial_wall_clock_time_ms: Optional[int] = None) -> TopologyTestDriver:
        builder = TopologyTestDriverBuilder(topology)
        config = dict(require_instance(config, "config", Mapping, optional=True) or {})
        config.setdefault("application.id", unique_application_id(request.node, len(drivers)))
        builder.with_config(config)
        if initial_wall_clock_time_ms is not None:
            builder.with_initial_wall_clock_time(initial_wall_clock_time_ms)
        if partitions is None:
            counts = dict.fromkeys(topology_topics(topology), streams_partitions) if streams_partitions else {}
        else:
            counts = dict(require_instance(partitions, "partitions (topic -> partition count)", Mapping))
        for topic, count in counts.items():
            builder.declare_topic(topic, count)
        if streams_engine == "spark":
            builder.with_engine("spark", request.getfixturevalue("spark_session"))
        driver = builder.build()
        drivers.append(driver)
        return driver

    yield make
    errors = []
    for driver in reversed(drivers):
        try:
            driver.close()
        except Exception as e:   # close every driver; report the first failure after
            errors.append(e)
    if errors:
        raise errors[0]


@pytest.fixture(scope="session")
def spark_session() -> Iterator[Any]:
    """One local SparkSession for the test session (loopback, no UI; the Kafka connector's jars when found, see
    ``kafka_jars``), created on first use and stopped at the end."""
    from streams_on_spark.connectors.kafka import kafka_jars
    from streams_on_spark.runtime.spark import local_session
    session = local_session("streams-on-spark-pytest", jars=kafka_jars())
    yield session
    session.stop()


# ---------------------------------------------------------------------------------------------------- pickling

def _uses_spark(item: pytest.Item) -> bool:
    """Whether the test runs Spark: it asks for ``spark_session`` (also through a fixture), or runs on ``spark``."""
    callspec = getattr(item, "callspec", None)
    engine = callspec.params.get("streams_engine") if callspec is not None else None
    return engine == "spark" or "spark_session" in getattr(item, "fixturenames", ())


def _user_modules(item: pytest.Item) -> list[ModuleType]:
    """The test's module and the conftests pytest loaded: what pytest imported from test paths."""
    modules = [item.module] if isinstance(getattr(item, "module", None), ModuleType) else []
    modules += [plugin for plugin in item.config.pluginmanager.get_plugins()
                if isinstance(plugin, ModuleType) and (getattr(plugin, "__file__", None) or "").endswith("conftest.py")]
    return modules


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if _uses_spark(item):
        pickle_by_value(*_user_modules(item))

"""Suite-wide fixtures. The SparkSession is the pytest plugin's (streams_on_spark.testing.pytest_plugin), so the
suite and its users start Spark one way: ``spark`` is ``spark_session``, created only when a test asks for it."""
from __future__ import annotations

import os
from typing import Callable, NoReturn

import pytest

# what `make test` exports: any of them set means the services and files it provides must be there (fail, never skip)
MAKE_TEST_ENV = ("STREAMS_ON_SPARK_KAFKA", "STREAMS_ON_SPARK_SPARK_MASTER", "STREAMS_ON_SPARK_WHEEL")


def _unavailable(reason: str) -> NoReturn:
    """Skip for a developer's plain `pytest` run; fail under `make test` (its variables set) and in CI (``CI=true``):
    CI must never pass with a test silently skipped because what `make test` provides is missing."""
    in_ci = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
    if in_ci or any(os.environ.get(name) for name in MAKE_TEST_ENV):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def unavailable() -> Callable[[str], NoReturn]:
    """``unavailable(reason)``: skip a developer's plain run, fail under `make test` and in CI."""
    return _unavailable


@pytest.fixture(scope="session")
def spark(spark_session):
    """The plugin's ``spark_session``: one local session (with the Kafka connector's jars when `make
    deps-spark-kafka` resolved them), stopped at the end of the run."""
    return spark_session


# the xdist group of the tests that use the test cluster (or, as test_wheel_install.py, run `make dist` in the checkout)
CLUSTER_GROUP = "cluster"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`make test` runs on two pytest-xdist workers (``--dist loadgroup``); the cluster's tests share one worker, so
    one application at a time runs on the test cluster, whose executors they count and kill (test_wheel_install.py
    joins them: it runs `make dist` in the checkout, as README's cluster block does). In a worker, every grouped test
    is then put into its group (:func:`_into_group`)."""
    for item in items:
        if item.get_closest_marker("cluster"):
            item.add_marker(pytest.mark.xdist_group(CLUSTER_GROUP))
    if hasattr(config, "workerinput") and getattr(config.option, "loadgroup", False):
        for item in items:
            _into_group(item)


def xdist_group_of(item: pytest.Item) -> str | None:
    """The group ``--dist loadgroup`` sends ``item`` with (pytest-xdist's rule: its ``xdist_group`` names, sorted,
    joined by ``_``), or None."""
    names = {str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
             for mark in item.iter_markers("xdist_group")}
    return "_".join(sorted(names)) if names else None


def _into_group(item: pytest.Item) -> None:
    """What pytest-xdist 3.8's worker does for ``--dist loadgroup`` (the controller schedules by the ``@group``
    suffix of a test's node id), done again after its hook, which runs before this one (so never saw the marks
    added above) and whose write of ``item._nodeid`` pytest 9.2's structured node ids ignore (pytest-xdist#1386:
    every test was scheduled alone)."""
    group = xdist_group_of(item)
    if group is None or item.nodeid.endswith(f"@{group}"):
        return
    grouped = f"{item.nodeid}@{group}"
    if hasattr(item, "_id"):   # pytest >= 9.2
        from _pytest.nodeid import NodeId
        item._id = NodeId.parse(grouped)
    else:
        item._nodeid = grouped

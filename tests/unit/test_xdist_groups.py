"""`make test` runs on pytest-xdist workers with ``--dist loadgroup``: every test that uses the test cluster (the
``cluster`` mark), and test_wheel_install.py (which runs `make dist` in the checkout), must run in the ``cluster``
group, on one worker, one after the other (tests/conftest.py)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parents[1]
INTEGRATION = TESTS / "integration"


def test_the_cluster_tests_and_the_wheel_install_are_in_the_cluster_group(pytester: pytest.Pytester):
    """The suite's own marks, as tests/conftest.py sees them: nothing of tests/integration/cluster or
    test_wheel_install.py outside the group (another group beside it would make a group of its own)."""
    from tests.conftest import CLUSTER_GROUP, xdist_group_of

    items, _ = pytester.inline_genitems("-p", "no:cacheprovider", str(INTEGRATION / "cluster"),
                                        str(INTEGRATION / "test_wheel_install.py"))
    groups = {item.nodeid: xdist_group_of(item) for item in items}
    assert any("cluster/" in nodeid for nodeid in groups) and any("test_wheel_install" in n for n in groups)
    assert {nodeid: group for nodeid, group in groups.items() if group != CLUSTER_GROUP} == {}
    assert all(item.get_closest_marker("cluster") for item in items if "cluster/" in item.nodeid)


GROUPED = """
import pytest

pytestmark = {mark}


@pytest.mark.parametrize("i", range(4))
def test_{name}(i):
    pass
"""


def test_loadgroup_runs_the_cluster_group_on_one_worker(pytester: pytest.Pytester):
    """Through pytest-xdist itself: tests marked ``cluster`` (the group added by tests/conftest.py) and tests that
    name the group themselves carry the ``@cluster`` node id suffix its scheduler groups by, and run on one worker;
    the others run alone. pytest-xdist 3.8 under pytest 9.2 drops the suffix (pytest-xdist#1386)."""
    pytester.makeconftest((TESTS / "conftest.py").read_text())
    pytester.makeini("[pytest]\nmarkers =\n    cluster: the test cluster\n")
    pytester.makepyfile(test_marked=GROUPED.format(mark="pytest.mark.cluster", name="marked"),
                        test_named=GROUPED.format(mark='pytest.mark.xdist_group("cluster")', name="named"),
                        test_alone=GROUPED.format(mark="[]", name="alone"))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:streams_on_spark", "-n", "2",
                                           "--dist", "loadgroup", "-v")
    result.assert_outcomes(passed=12)
    ran = re.findall(r"^\[(gw\d)\] .*PASSED (\S+)", result.stdout.str(), re.M)
    assert len(ran) == 12
    grouped = {(worker, nodeid) for worker, nodeid in ran if "alone" not in nodeid}
    assert all(nodeid.endswith("@cluster") for _, nodeid in grouped), sorted(grouped)
    assert len({worker for worker, _ in grouped}) == 1
    assert not any("@" in nodeid for _, nodeid in ran if "alone" in nodeid)

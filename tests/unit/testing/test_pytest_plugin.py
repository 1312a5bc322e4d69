"""The pytest plugin (streams_on_spark.testing.pytest_plugin), as a user meets it: installed by the package's
``pytest11`` entry point, its fixtures and options in a pytest run of their own (``pytester``, or a fresh process)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from streams_on_spark import Consumed, Produced, Repartitioned, Serdes, StreamsBuilder
from streams_on_spark.testing.pytest_plugin import parse_engine, parse_partitions, topology_topics

pytest_plugins = ["pytester"]

USER_STYLE = Path(__file__).with_name("test_pytest_plugin_user_style.py")
DOCS = Path(__file__).resolve().parents[3] / "docs"
S = Serdes.String()

# a user's test of a word count: its topology, a test that reads the engine and partitions the plugin chose
WORD_COUNT = '''
from streams_on_spark import Consumed, Grouped, Produced, Serdes, StreamsBuilder

S, L = Serdes.String(), Serdes.Long()


def word_count():
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(S, S)).flat_map_values(str.split)
     .group_by(lambda k, w: w, Grouped.with_(S, S)).count().to_stream().to("counts", Produced.with_(S, L)))
    return builder.build()


def test_counts(topology_driver, streams_engine, streams_partitions):
    driver = topology_driver(word_count())
    driver.create_input_topic("sentences", S, S).pipe_input("k", "a b a")
    assert driver.create_output_topic("counts", S, L).read_key_values_to_map() == {"a": 2, "b": 1}
    assert driver.engine_name == streams_engine
    assert driver.multi_partition == ((streams_partitions or 1) > 1)
    assert len(driver.store_partitions("KSTREAM-AGGREGATE-STATE-STORE-0000000003")) == (streams_partitions or 1)
    print("APP-ID", driver.application_id)
'''


def test_without_options_a_test_runs_once_locally(pytester: pytest.Pytester):
    pytester.makepyfile(test_wc=WORD_COUNT)
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_counts?local? PASSED*"])


def test_the_options_parametrize_over_engines_and_partition_counts(pytester: pytest.Pytester):
    pytester.makepyfile(test_wc=WORD_COUNT)
    result = pytester.runpytest("-v", "-s", "-p", "no:cacheprovider", "--streams-engine=local",
                                "--streams-partitions=1,4")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*test_counts?local-1p? APP-ID test_counts-local-1p-*",
                                 "*test_counts?local-4p? APP-ID test_counts-local-4p-*"])
    # spark runs carry the spark marker: deselecting it leaves the local ones
    collected = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", "--streams-engine=all",
                                   "--streams-partitions=4", "-m", "not spark")
    collected.stdout.fnmatch_lines(["*test_counts?local-4p?", "*1/2 tests collected (1 deselected)*"])


def test_the_streams_marker_sets_defaults_the_options_override(pytester: pytest.Pytester):
    pytester.makepyfile(test_wc="import pytest\npytestmark = pytest.mark.streams(engine='local', partitions=[2, 3])\n"
                        + WORD_COUNT)
    default = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    default.stdout.fnmatch_lines(["*test_counts?local-2p?", "*test_counts?local-3p?"])
    overridden = pytester.runpytest("-v", "-p", "no:cacheprovider", "--streams-partitions=4")
    overridden.assert_outcomes(passed=1)
    overridden.stdout.fnmatch_lines(["*test_counts?local-4p? PASSED*"])


def test_a_bad_streams_marker_is_an_error_naming_the_test(pytester: pytest.Pytester):
    pytester.makepyfile(test_wc="import pytest\npytestmark = pytest.mark.streams(engines='all')\n" + WORD_COUNT)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the streams marker of test_wc.py::test_counts takes the keywords engine= and "
                                 "partitions= only, got streams(engines='all')*"])
    pytester.makepyfile(test_wc="import pytest\npytestmark = pytest.mark.streams(engine='kafka')\n" + WORD_COUNT)
    pytester.runpytest("-p", "no:cacheprovider").stdout.fnmatch_lines(
        ["*streams engine must be 'local', 'spark' or 'all', got 'kafka'*"])


def test_a_test_that_parametrizes_the_engine_itself_is_left_alone(pytester: pytest.Pytester):
    pytester.makepyfile(test_wc="import pytest\n" + WORD_COUNT.replace(
        "def test_counts", "@pytest.mark.parametrize('streams_engine, streams_partitions', [('local', 2)])\n"
                           "def test_counts"))
    result = pytester.runpytest("-v", "-p", "no:cacheprovider", "--streams-engine=all", "--streams-partitions=1,4")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_counts?local-2? PASSED*"])


def test_explicit_partitions_and_config_win_and_drivers_close_at_teardown(pytester: pytest.Pytester):
    pytester.makepyfile(test_wc=WORD_COUNT + '''
import pytest

opened = []


def test_explicit(topology_driver):
    driver = topology_driver(word_count(), {"application.id": "mine"}, {"sentences": 3, "counts": 2},
                             initial_wall_clock_time_ms=5)
    second = topology_driver(word_count())
    opened.extend([driver, second])
    assert driver.application_id == "mine" and second.application_id.startswith("test_explicit-local-4p-")
    assert second.application_id != driver.application_id
    assert len(driver.store_partitions("KSTREAM-AGGREGATE-STATE-STORE-0000000003")) == 3
    assert len(second.store_partitions("KSTREAM-AGGREGATE-STATE-STORE-0000000003")) == 4


def test_closed_after():
    assert opened and all(driver._closed for driver in opened)


@pytest.mark.parametrize("bad, error", [(dict(partitions=[("sentences", 2)]), "partitions .* must be a Mapping"),
                                        (dict(partitions={"sentences": 0}), "partitions of topic sentences"),
                                        (dict(config="x"), "config must be a Mapping"),
                                        (dict(topology="x"), "topology must be a Topology")])
def test_bad_arguments(topology_driver, bad, error):
    args = {"topology": word_count(), **bad}
    with pytest.raises(ValueError, match=error):
        topology_driver(args.pop("topology"), **args)
''')
    result = pytester.runpytest("-v", "-p", "no:cacheprovider", "--streams-partitions=4", "-k",
                                "explicit or closed or bad")
    result.assert_outcomes(passed=6)


def test_bad_option_values_are_usage_errors_naming_the_option(pytester: pytest.Pytester):
    pytester.makepyfile(test_wc=WORD_COUNT)
    for option, what in (("--streams-engine=kafka", "streams engine must be 'local', 'spark' or 'all'"),
                         ("--streams-partitions=1,x", "streams partitions must be a comma-separated list"),
                         ("--streams-partitions=0", "streams partitions must be an int >= 1")):
        result = pytester.runpytest(option)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([f"*argument {option.split('=')[0]}*{what}*"])


def test_parsing_the_options():
    assert parse_engine("all") == ("local", "spark") and parse_engine("spark") == ("spark",)
    assert parse_partitions("4, 1,4") == (4, 1) and parse_partitions([2]) == (2,)
    with pytest.raises(ValueError, match="streams partitions must be at least one partition count"):
        parse_partitions([])


def test_topology_topics_are_the_topics_a_user_names():
    builder = StreamsBuilder()
    builder.global_table("products", Consumed.with_(S, S))
    rekeyed = builder.stream("orders", Consumed.with_(S, S)).select_key(lambda k, v: v)
    rekeyed.group_by_key().count().to_stream().to("counts")
    rekeyed.repartition(Repartitioned.as_("by-value")).to("through")
    builder.stream("through").to("out", Produced.with_(S, S))
    # the repartition topics (count's, by-value's) are internal: the driver sizes them from their sources
    assert topology_topics(builder.build()) == ["orders", "through", "products", "counts", "out"]


def test_the_docs_examples_pass_as_test_files(pytester: pytest.Pytester):
    """docs/testing.md's python examples are test files: each passes with 1 and 4 partitions."""
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "testing.md").read_text(encoding="utf-8"), re.S)
    assert blocks
    for i, block in enumerate(blocks):
        tests = re.findall(r"^def (test_\w+)\(", block, re.M)
        assert tests, f"example {i} of docs/testing.md has no test"
        pytester.makepyfile(**{f"test_doc_example_{i}": block})
        result = pytester.runpytest("-p", "no:cacheprovider", "--streams-partitions=1,4", f"test_doc_example_{i}.py")
        result.assert_outcomes(passed=2 * len(tests))


def junit_outcomes(report: Path) -> dict[str, str]:
    """Test name -> passed/failed/error/skipped, from a junit XML report."""
    out = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        out[case.get("name")] = kinds[0] if kinds else "passed"
    return out


def run_user_style(tmp_path: Path, *options: str) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """Run the user-style test file in a fresh pytest, in a project of its own (its rootdir) run from another
    directory, so nothing on a Spark worker's path can import the test module: it must be pickled by value."""
    project = tmp_path / "user-project"
    (project / "tests").mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\naddopts = --import-mode=importlib\n")
    shutil.copy(USER_STYLE, project / "tests" / "test_clicks.py")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    report = tmp_path / "report.xml"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--rootdir={project}",
                           "-c", str(project / "pytest.ini"), f"--junitxml={report}", *options,
                           str(project / "tests" / "test_clicks.py")],
                          cwd=elsewhere, env=env, capture_output=True, text=True, timeout=570)
    return done, (junit_outcomes(report) if report.exists() else {})


USER_TESTS = ["test_a_processor_and_serde_of_the_test_module_count_per_user",
              "test_a_mapper_of_the_test_module_rekeys_before_counting"]


def test_the_user_style_file_runs_locally_with_one_and_four_partitions(tmp_path):
    done, got = run_user_style(tmp_path, "--streams-engine=local", "--streams-partitions=1,4")
    assert got == {f"{t}[{case}]": "passed" for t in USER_TESTS for case in ("local-1p", "local-4p")}, done.stdout


@pytest.mark.spark
def test_the_user_style_file_runs_on_every_engine_and_partition_count(tmp_path):
    """Must show 1: ``--streams-engine=all --streams-partitions=1,4``; the Processor, the mapper and the Serde of the
    test module run on Spark's workers, which cannot import it."""
    done, got = run_user_style(tmp_path, "--streams-engine=all", "--streams-partitions=1,4")
    assert got == {f"{t}[{case}]": "passed" for t in USER_TESTS
                   for case in ("local-1p", "local-4p", "spark-1p", "spark-4p")}, done.stdout[-5000:]

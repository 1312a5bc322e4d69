"""Every command block of README.md and docs/*.md (a ```bash, ```console or ```sh block, or a bare ``` one) is run as
written by the tests named here (the arguments a test adds after a command, and only the placeholders it lists
filled in), or listed here as a placeholder block, with the words a user must replace and why no test can: a block
added, changed or dropped without its entry fails, and so does a block with a placeholder (``<host>``, ``app.py``,
``/path/to``, ``my_processors``, ...) its entry does not name, so no block goes unrun silently. (```python blocks run
in test_readme.py and test_docs_examples.py; ```text and ```py ones are diagrams and files, not commands.)"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.S | re.M)
COMMAND_LANGUAGES = ("", "bash", "console", "sh", "shell")
#: what stands for a user's own: <host>-style words, an app.py, /path/to/..., a ~/ path, my_... modules, the myapp
#: package, a log4j2.properties
PLACEHOLDER = re.compile(r"<[a-z][\w-]*>|\bapp\.py\b|/path/to/|~/[\w.-]+|\bmy_\w+|\bmyapp\b|\blog4j2\.properties\b")


@dataclass(frozen=True)
class RunBy:
    """The tests (``path::function``) that run the block's commands as written; ``also``: what of the block they
    leave out, and why; ``same_as``: another page's block whose commands it repeats, run by the same tests (the
    commands must stay the same); ``placeholders``: the words of the block the tests replace (they say with what),
    and why the block cannot name something real instead."""

    tests: tuple[str, ...]
    also: str = ""
    same_as: tuple[str, str] = ("", "")
    placeholders: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Placeholder:
    """A block no test runs, because of ``words`` that stand for what only the user has, for ``why``."""

    words: tuple[str, ...]
    why: str


README_KAFKA = ("README.md", "make setup kafka-up     # .venv with the library and pyspark's spark-submit; the broker "
                             "prints its bootstrap address")
README_CLUSTER = ("README.md", "make dist         # dist/streams_on_spark-0.1.0-py3-none-any.whl and "
                               "dist/streams_on_spark-0.1.0.tar.gz")
README_UPGRADE = ("README.md", "streams-on-spark describe myapp.topology:build_topology > topology.txt       # commit "
                               "this file")
KAFKA_JARS = ("docs/kafka.md", "export STREAMS_ON_SPARK_KAFKA=\"$(cat .deps/kafka-run/bootstrap)\"   # that broker's "
                               "address (or another's host:port)")
CLUSTER_PLACEHOLDERS = (
    ("<host>", "the user's Spark master: the test submits to the cluster of `make spark-cluster-up`"),
    ("<address>", "the user's Kafka broker: the test gives the broker of `make kafka-up`"))
MYAPP = (("myapp", "the user's application package: the test writes a myapp/topology.py"),)

#: (page, first line of the block) -> RunBy, or Placeholder
BLOCKS: dict[tuple[str, str], RunBy | Placeholder] = {
    ("README.md", "make run    # the word count below on Spark over embedded 4-partition topics (no Kafka needed)"):
        RunBy(("tests/integration/spark/test_make_run.py::"
               "test_make_run_prints_the_counts_in_a_short_console_without_sparks_python_workers",),
              also="`make test` is the suite itself: what .ci/run runs"),
    README_UPGRADE:
        RunBy(("tests/unit/test_readme.py::test_readme_upgrade_recipe_runs_as_written",), placeholders=MYAPP),
    ("README.md", "make help       # targets"):
        RunBy(("tests/unit/docs/test_setup_blocks.py::test_make_help_lists_every_target_the_development_block_names",),
              also="the other lines are the targets `make help` lists (the test checks it lists each): setup and "
                   "test are how CI runs, the bench targets are benchmarks, minutes each"),
    README_KAFKA:
        RunBy(("tests/integration/kafka/test_examples_on_kafka.py::test_readme_spark_submit_command_runs_as_written",),
              also="`make setup kafka-up`: what `make test` does before pytest"),
    README_CLUSTER:
        RunBy(("tests/integration/cluster/test_readme_on_cluster.py::test_readme_cluster_block_runs_as_written",),
              placeholders=CLUSTER_PLACEHOLDERS),
    ("docs/getting-started.md", "make setup                      # .venv with the pinned pyspark, pyarrow, pandas, "
                                "... and the test tools"):
        RunBy(("tests/unit/docs/test_setup_blocks.py::"
               "test_getting_started_install_block_imports_the_library_with_the_venvs_python",),
              also="`make setup`: how `make test` starts"),
    ("docs/getting-started.md", ".venv/bin/python examples/getting_started.py"):
        RunBy(("tests/integration/spark/test_readme_spark.py::"
               "test_getting_started_command_runs_the_pages_application",),
              also="the script runs in the test's process (runpy, the suite's Spark session), not in a new python: "
                   "test_make_run.py runs the same command shape"),
    KAFKA_JARS:
        RunBy(("tests/integration/kafka/test_spark_submit.py::"
               "test_the_word_count_under_spark_submit_with_the_checkout_jars",
               "tests/integration/kafka/test_spark_submit.py::"
               "test_the_word_count_under_a_plain_python_with_the_jars_variable",
               "tests/integration/kafka/test_examples_on_kafka.py::test_readme_spark_submit_command_runs_as_written"),
              also="its --packages command is README's, run by README's test "
                   "(test_the_kafka_pages_packages_command_is_readmes)"),
    ("docs/logging.md", "PYSPARK_PYTHON=\"$PWD/.venv/bin/python\" .venv/bin/spark-submit --conf spark.log.level=INFO "
                        "examples/wordcount.py"):
        RunBy(("tests/integration/spark/test_logging_blocks.py::test_spark_log_level_info_brings_sparks_info_back",)),
    ("docs/logging.md", "PYSPARK_PYTHON=\"$PWD/.venv/bin/python\" .venv/bin/spark-submit \\"):
        Placeholder(("log4j2.properties",),
                    "the user's own log4j2 configuration (Spark's template with their loggers), which the repository "
                    "does not ship; the JVM reads it only once a Spark session starts, a run of its own"),
    ("docs/running-on-spark.md", "export PYSPARK_PYTHON=\"$PWD/.venv/bin/python\"       # Spark's Python workers: a "
                                 "Python with the library installed"):
        RunBy(("tests/integration/spark/test_spark_submit_session.py::"
               "test_spark_submit_master_and_conf_are_what_the_application_runs_with",)),
    ("docs/running-on-spark.md", "make setup kafka-up     # .venv with the library and pyspark's spark-submit; the "
                                 "broker prints its bootstrap address"):
        RunBy(("tests/integration/kafka/test_examples_on_kafka.py::test_readme_spark_submit_command_runs_as_written",),
              also="`make setup kafka-up`: what `make test` does before pytest", same_as=README_KAFKA),
    ("docs/running-on-spark.md", ".venv/bin/spark-submit --py-files examples/_common.py examples/click_counts.py   # "
                                 ".py, .zip or .egg; a package zipped with its directory at the root"):
        RunBy(("tests/integration/spark/test_spark_submit_session.py::test_the_py_files_block_runs_as_written",),
              also="the example on its in-process engine (--engine local added): no Spark session's start"),
    ("docs/running-on-spark.md", "make dist         # dist/streams_on_spark-0.1.0-py3-none-any.whl and "
                                 "dist/streams_on_spark-0.1.0.tar.gz"):
        RunBy(("tests/integration/cluster/test_readme_on_cluster.py::test_readme_cluster_block_runs_as_written",),
              same_as=README_CLUSTER, placeholders=CLUSTER_PLACEHOLDERS),
    ("docs/upgrades.md", "streams-on-spark describe myapp.topology:build_topology > topology.txt       # commit this "
                         "file"):
        RunBy(("tests/unit/test_readme.py::test_readme_upgrade_recipe_runs_as_written",), same_as=README_UPGRADE,
              placeholders=MYAPP),
    ("docs/your-project.md", "make dist        # dist/streams_on_spark-0.1.0-py3-none-any.whl and "
                             "dist/streams_on_spark-0.1.0.tar.gz"):
        RunBy(("tests/integration/test_wheel_install.py::"
               "test_make_dist_builds_the_wheel_and_an_sdist_with_the_same_modules",)),
    ("docs/your-project.md", "export STREAMS_ON_SPARK_CLONE=~/streams-on-spark   # your clone of the repository, "
                             "where make dist ran"):
        RunBy(("tests/integration/test_wheel_install.py::"
               "test_the_pages_commands_install_the_wheel_and_run_the_project_and_the_examples",),
              placeholders=(("~/streams-on-spark", "where the user cloned the repository: the test gives the "
                                                   "checkout"),)),
    ("docs/your-project.md", ".venv/bin/pytest            # test_clicks_are_counted_per_page[local-1p] and [local-4p]"):
        RunBy(("tests/integration/test_wheel_install.py::"
               "test_the_pages_commands_install_the_wheel_and_run_the_project_and_the_examples",)),
    ("docs/your-project.md", ".venv/bin/python -m zipfile -c clicks.zip src/clicks     # a package: zipped with its "
                             "directory at the root"):
        RunBy(("tests/integration/test_wheel_install.py::"
               "test_the_pages_commands_install_the_wheel_and_run_the_project_and_the_examples",)),
}


def command_blocks() -> dict[tuple[str, str], str]:
    """(page, first line) -> the block's text, for every command block of the pages."""
    found = {}
    for page in PAGES:
        for language, body in FENCE.findall(page.read_text(encoding="utf-8")):
            if language in COMMAND_LANGUAGES:
                first = next(line for line in body.splitlines() if line.strip())
                found[(page.relative_to(ROOT).as_posix(), first)] = body
    return found


def commands(block: str) -> list[str]:
    """A block's commands: comments and spacing dropped, continuation lines joined."""
    joined = block.replace("\\\n", " ")
    return [" ".join(line.split("  #")[0].split()) for line in joined.splitlines() if line.split("  #")[0].strip()]


def test_every_command_block_is_run_by_a_test_or_is_a_placeholder_block():
    found = command_blocks()
    assert sorted(set(found) - set(BLOCKS)) == [], "command blocks without an entry in BLOCKS (which test runs them?)"
    assert sorted(set(BLOCKS) - set(found)) == [], "entries of BLOCKS for blocks that no longer exist"


@pytest.mark.parametrize("key", list(BLOCKS), ids=lambda k: f"{k[0]}:{k[1][:30]}")
def test_a_blocks_placeholders_are_the_ones_its_entry_names_with_why(key):
    entry = BLOCKS[key]
    named = [word for word, _ in entry.placeholders] if isinstance(entry, RunBy) else list(entry.words)
    reasons = [why for _, why in entry.placeholders] if isinstance(entry, RunBy) else [entry.why]
    assert all(reason.strip() for reason in reasons), f"{key}: say why the block cannot name something real"
    block = command_blocks()[key]
    assert sorted(set(PLACEHOLDER.findall(block))) == sorted(set(named)), f"{key[0]}'s block:\n{block}"
    if isinstance(entry, Placeholder):
        assert entry.words, f"{key}: a block no test runs must name the placeholders that keep it from running"


@pytest.mark.parametrize("key", [k for k, v in BLOCKS.items() if isinstance(v, RunBy)],
                         ids=lambda k: f"{k[0]}:{k[1][:30]}")
def test_the_tests_running_a_block_exist_and_a_repeated_block_stays_the_same(key):
    entry = BLOCKS[key]
    for test in entry.tests:
        path, function = test.split("::")
        assert re.search(rf"^def {function}\(", (ROOT / path).read_text(encoding="utf-8"), re.M), test
    if entry.same_as != ("", ""):
        found = command_blocks()
        assert commands(found[key]) == commands(found[entry.same_as]), f"{key[0]} repeats {entry.same_as[0]}'s block"


def test_the_kafka_pages_packages_command_is_readmes():
    """docs/kafka.md's --packages command is run by README's test: it must stay README's command."""
    found = command_blocks()
    packages = [c for c in commands(found[KAFKA_JARS]) if "--packages" in c]
    assert len(packages) == 1 and packages[0] in commands(found[README_KAFKA]), (packages, found[README_KAFKA])

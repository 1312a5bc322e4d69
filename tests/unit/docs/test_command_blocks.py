"""Every command block of README.md and docs/*.md (a ```bash, ```console or ```sh block, or a bare ``` one) is either
run as written by the tests named here, or listed here as not run, with why: a block added, changed or dropped
without its entry fails, so no block goes unrun silently. (```python blocks run in test_readme.py and
test_docs_examples.py.)"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.S | re.M)
COMMAND_LANGUAGES = ("", "bash", "console", "sh", "shell")


@dataclass(frozen=True)
class RunBy:
    """The tests (``path::function``) that run the block's commands as written (placeholders filled in); ``also``:
    what of the block they leave out, and why; ``same_as``: another page's block whose commands it repeats, run by
    the same tests (the commands must stay the same)."""

    tests: tuple[str, ...]
    also: str = ""
    same_as: tuple[str, str] = ("", "")


#: (page, first line of the block) -> RunBy, or the reason the block is not run (a str)
BLOCKS: dict[tuple[str, str], RunBy | str] = {
    ("README.md", "make run    # the word count below on Spark over embedded 4-partition topics (no Kafka needed)"):
        RunBy(("tests/integration/spark/test_make_run.py::"
               "test_make_run_prints_the_counts_in_a_short_console_without_sparks_python_workers",),
              also="`make test` is the suite itself: what .ci/run runs"),
    ("README.md", "streams-on-spark describe myapp.topology:build_topology > topology.txt       # commit this file"):
        RunBy(("tests/unit/test_readme.py::test_readme_upgrade_recipe_runs_as_written",)),
    ("README.md", "make help       # targets"):
        "a list of the Makefile's targets (setup and test run in CI; the bench targets are benchmarks, minutes each)",
    ("README.md", "make setup kafka-up     # .venv with the library and pyspark's spark-submit; the broker prints its "
                  "bootstrap address"):
        RunBy(("tests/integration/kafka/test_examples_on_kafka.py::test_readme_spark_submit_command_runs_as_written",),
              also="`make setup kafka-up`: what `make test` does before pytest"),
    ("README.md", "make dist         # dist/streams_on_spark-0.1.0-py3-none-any.whl and "
                  "dist/streams_on_spark-0.1.0.tar.gz"):
        RunBy(("tests/integration/cluster/test_readme_on_cluster.py::test_readme_cluster_block_runs_as_written",)),
    ("docs/architecture.md", "source + repartition topics (embedded-topics source, layout=batches: one row per record "
                             "batch of a"):
        "a diagram, not commands",
    ("docs/getting-started.md", "make setup                      # .venv with the pinned pyspark, pyarrow, pandas, "
                                "... and the test tools"):
        "not run as a block: `make setup` is how `make test` starts, and the import is every test's",
    ("docs/getting-started.md", ".venv/bin/python app.py"):
        "not run: app.py is the page's ```text block (a Spark application over embedded topics); "
        "tests/integration/spark/test_readme_spark.py runs README's equivalent",
    ("docs/kafka.md", "spark-submit --packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0 \\"):
        "not run: app.py stands for the user's application; README's --packages command runs in "
        "test_examples_on_kafka.py and the jars of a checkout in test_spark_submit.py",
    ("docs/logging.md", "spark-submit --conf spark.log.level=INFO app.py"):
        "not run: app.py stands for the user's application",
    ("docs/performance.md", "default:  sentences -> [query 0: flat_map_values, select_key] -> by-word-repartition -> "
                            "[query 1: count] -> out"):
        "a diagram, not commands",
    ("docs/running-on-spark.md", "export PYSPARK_PYTHON=\"$PWD/.venv/bin/python\"       # Spark's Python workers: a "
                                 "Python with the library installed"):
        RunBy(("tests/integration/spark/test_spark_submit_session.py::"
               "test_spark_submit_master_and_conf_are_what_the_application_runs_with",)),
    ("docs/running-on-spark.md", "make setup kafka-up     # .venv with the library and pyspark's spark-submit; the "
                                 "broker prints its bootstrap address"):
        RunBy(("tests/integration/kafka/test_examples_on_kafka.py::test_readme_spark_submit_command_runs_as_written",),
              also="`make setup kafka-up`: what `make test` does before pytest",
              same_as=("README.md", "make setup kafka-up     # .venv with the library and pyspark's spark-submit; "
                                    "the broker prints its bootstrap address")),
    ("docs/running-on-spark.md", "spark-submit --py-files my_processors.py,serdes.zip app.py      # .py, .zip or .egg; "
                                 "a package zipped with its directory at the root"):
        "not run: my_processors.py, serdes.zip and app.py stand for the user's files",
    ("docs/running-on-spark.md", "make dist         # dist/streams_on_spark-0.1.0-py3-none-any.whl and "
                                 "dist/streams_on_spark-0.1.0.tar.gz"):
        RunBy(("tests/integration/cluster/test_readme_on_cluster.py::test_readme_cluster_block_runs_as_written",),
              same_as=("README.md", "make dist         # dist/streams_on_spark-0.1.0-py3-none-any.whl and "
                                    "dist/streams_on_spark-0.1.0.tar.gz")),
    ("docs/upgrades.md", "streams-on-spark describe myapp.topology:build_topology > topology.txt       # commit this "
                         "file"):
        RunBy(("tests/unit/test_readme.py::test_readme_upgrade_recipe_runs_as_written",),
              same_as=("README.md", "streams-on-spark describe myapp.topology:build_topology > topology.txt       # "
                                    "commit this file")),
    ("docs/your-project.md", "make dist        # dist/streams_on_spark-0.1.0-py3-none-any.whl and "
                             "dist/streams_on_spark-0.1.0.tar.gz"):
        RunBy(("tests/integration/test_wheel_install.py::"
               "test_make_dist_builds_the_wheel_and_an_sdist_with_the_same_modules",)),
    ("docs/your-project.md", "python3.11 -m venv .venv"):
        "not run as written: test_wheel_install.py makes a fresh venv and pip-installs the wheel into it (not the "
        "sdist, nor from /path/to/streams-on-spark)",
    ("docs/your-project.md", ".venv/bin/pytest            # test_clicks_are_counted_per_page[local-1p] and [local-4p]"):
        "not run as written: test_your_project.py runs the sample project's pytest with the library's own venv, "
        "not --streams-engine=all",
    ("docs/your-project.md", "python -m zipfile -c clicks.zip src/clicks               # a package: zipped with its "
                             "directory at the root"):
        "not run: app.py stands for the user's application",
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


def test_every_command_block_is_run_by_a_test_or_says_why_not():
    found = command_blocks()
    assert sorted(set(found) - set(BLOCKS)) == [], "command blocks without an entry in BLOCKS (which test runs them?)"
    assert sorted(set(BLOCKS) - set(found)) == [], "entries of BLOCKS for blocks that no longer exist"


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

"""The README's Spark example runs as written, on its own (as a reader copies it); and so does docs/getting-started.md's
first application, examples/getting_started.py."""
from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
GETTING_STARTED = ROOT / "docs" / "getting-started.md"


@pytest.mark.spark
def test_readme_spark_example_runs_on_its_own(spark):
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
              if "KafkaStreams(" in b]
    assert len(blocks) == 1
    namespace: dict = {"__name__": "readme"}
    exec(compile(blocks[0], str(README), "exec"), namespace)   # a fresh namespace: nothing from the blocks before
    assert namespace["counts"].get("the").value == 1


@pytest.mark.spark
def test_getting_started_command_runs_the_pages_application(spark, capsys):
    """The page's command runs examples/getting_started.py, which holds the page's Spark block as shown. It runs here in
    the test's process, in the suite's Spark session (runpy, as ``python`` runs a script), not as a new python: that
    command shape (``.venv/bin/python examples/wordcount.py``) runs in test_make_run.py, and a new Spark application
    would cost its start again."""
    page = GETTING_STARTED.read_text(encoding="utf-8")
    (command,) = re.findall(r"^```console\n(\.venv/bin/python examples/\S+\.py)\n```", page, re.M)
    script = ROOT / command.split()[1]
    (shown,) = re.findall(r"^```py\n(.*?)^```", page, re.S | re.M)
    assert shown in script.read_text(encoding="utf-8"), f"{script.name} should hold the page's block as shown"
    namespace = runpy.run_path(str(script), run_name="__main__")
    assert namespace["counts"].get("the").value == 1
    assert "word-counts of 'the' in partition 3: 1" in capsys.readouterr().out

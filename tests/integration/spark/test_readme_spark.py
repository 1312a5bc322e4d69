"""The README's Spark example runs as written, on its own (as a reader copies it)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[3] / "README.md"


@pytest.mark.spark
def test_readme_spark_example_runs_on_its_own(spark):
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
              if "KafkaStreams(" in b]
    assert len(blocks) == 1
    namespace: dict = {"__name__": "readme"}
    exec(compile(blocks[0], str(README), "exec"), namespace)   # a fresh namespace: nothing from the blocks before
    assert namespace["counts"].get("the").value == 1

"""The README's Spark example runs as written, after the driver example that defines the topology."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[3] / "README.md"


@pytest.mark.spark
def test_readme_spark_example_runs(spark):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks[:2]:
        exec(compile(block, str(README), "exec"), namespace)
    assert namespace["counts"].get("the").value == 1

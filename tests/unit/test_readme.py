"""The README's example runs as written (keeps the README true to the code)."""
from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "README has no python example"
    namespace: dict = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)  # the example's asserts are the test
    assert "topology" in namespace


def test_readme_first_screen_names_the_two_commands():
    head = README.read_text(encoding="utf-8").splitlines()[:15]
    assert any(line.startswith("make run") for line in head)
    assert any(line.startswith("make test") for line in head)

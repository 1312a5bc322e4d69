"""Every Python example in the pages below runs as written, with its asserts (keeps docs/ true to the code)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[3] / "docs"
PAGES = ["error-handling.md", "testing.md", "upgrades.md"]


@pytest.mark.parametrize("page", PAGES)
def test_python_examples_run(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, f"{page} has no python example"
    for block in blocks:
        exec(compile(block, str(DOCS / page), "exec"), {})

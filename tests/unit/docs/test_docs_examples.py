"""Every ```python block of every docs/*.md page runs as written, with its asserts, on its own (or, when its first
line says ``# continues ...``, after the page's earlier blocks), and every relative link in docs/ and README.md points
at a file that exists: the documentation stays true to the code."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)   # http:, https:, mailto:, ...
CONTINUES = re.compile(r"# continues\b")   # the first line of a block that continues the page's earlier ones


def python_blocks(text: str) -> list[str]:
    """The page's ```python blocks, in order (other languages, ```text and ```console are not run)."""
    return [body for language, body in FENCE.findall(text) if language == "python"]


def relative_links(text: str) -> list[str]:
    """Targets of the Markdown links outside code (fenced blocks and inline code), without their #fragment."""
    prose = INLINE_CODE.sub("", FENCE.sub("", text))
    targets = [t for t in LINK.findall(prose) if not EXTERNAL.match(t) and not t.startswith("#")]
    return [t.split("#", 1)[0] for t in targets]


def test_the_docs_have_pages_and_examples():
    assert len(PAGES) >= 10, [p.name for p in PAGES]
    assert sum(len(python_blocks(p.read_text(encoding="utf-8"))) for p in PAGES) >= 20


def run_blocks(blocks: list[str], filename: str, module: str) -> None:
    """Run ``blocks`` as a reader would: each on its own, in a fresh namespace, unless its first line is a
    ``# continues ...`` comment saying what it continues: then after the earlier blocks, with what they defined."""
    page: dict = {"__name__": module}
    for block in blocks:
        namespace = page if CONTINUES.match(block) else {"__name__": module}
        exec(compile(block, filename, "exec"), namespace)
        if namespace is not page:
            page.update(namespace)


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p.read_text(encoding="utf-8"))],
                         ids=lambda p: p.relative_to(DOCS).as_posix())
def test_python_examples_run(page, tmp_path, monkeypatch):
    """A page's blocks run in order, each on its own unless marked as continuing the ones before it (see
    :func:`run_blocks`), in a scratch directory."""
    monkeypatch.chdir(tmp_path)
    run_blocks(python_blocks(page.read_text(encoding="utf-8")), str(page), f"docs_{page.stem.replace('-', '_')}")


def test_a_block_runs_alone_unless_it_says_what_it_continues():
    run_blocks(["x = 1\n", "# continues the block above: x\nassert x == 1\n"], "page.md", "docs_page")
    with pytest.raises(NameError, match="'x' is not defined"):
        run_blocks(["x = 1\n", "assert x == 1\n"], "page.md", "docs_page")


@pytest.mark.parametrize("page", [*PAGES, ROOT / "README.md"], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_at_files(page):
    missing = [target for target in relative_links(page.read_text(encoding="utf-8"))
               if not (page.parent / target).exists()]
    assert not missing, f"{page.relative_to(ROOT)} links to files that do not exist: {missing}"


def test_relative_paths_in_text_exist():
    """A ``../path`` named in a page, even in code, is a file of the repository (the design notes live outside it:
    pages name them in words, not by a path a reader cannot open)."""
    for page in [*PAGES, ROOT / "README.md"]:
        text = page.read_text(encoding="utf-8")
        missing = [t for t in re.findall(r"(?:\.\./)+[\w./-]*\w", text)
                   if not (page.parent / t).resolve().is_relative_to(ROOT) or not (page.parent / t).exists()]
        assert not missing, f"{page.relative_to(ROOT)} names paths outside the repository or missing: {missing}"


def test_link_checker_sees_links():
    """The checker itself: links in prose count, those in code do not, fragments are dropped."""
    text = ("See [a](a.md#x), ![img](img/b.png) and [c](https://example.com) [d](#top).\n"
            "`[e](e.md)`\n```text\n[f](f.md)\n```\n")
    assert relative_links(text) == ["a.md", "img/b.png"]

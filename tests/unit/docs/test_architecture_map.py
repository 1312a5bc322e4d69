"""docs/architecture.md's module map ("Layers and modules") equals the tree: every module of the library is named
in it, and every module or package it names exists. A module moved, added or removed without the map following
fails here.

The map names modules the way a reader does: a path (``streams_on_spark/runtime/task.py``, ``runtime/spark/``) sets
the folder that the bare names after it in the same row are in (``task_function.py``); a named folder names its
``__init__.py`` too, as does a module of the folder (a subpackage is mapped by its modules); the package's own
``__init__.py``, the public API, is named outright."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "architecture.md"
# the folders that ship the library (pyproject's package-dir)
PACKAGES = ("streams_on_spark", "connectors", "state")


def tree() -> set[Path]:
    """Every module of the library, relative to the repository."""
    return {p.relative_to(ROOT) for package in PACKAGES for p in (ROOT / package).rglob("*.py")
            if "__pycache__" not in p.parts}


def map_rows(text: str) -> list[str]:
    """The rows of the section's table (after its header and rule)."""
    section = text.split("## Layers and modules", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return rows[2:]


def resolve(token: str) -> Path:
    """A path as the map writes it: from the repository (``state/``) or from the package (``runtime/task.py``)."""
    path = token.rstrip("/")
    for base in ("", "streams_on_spark/"):
        if (ROOT / base / path).exists():
            return Path(base + path)
    return Path(path)   # named, but not in the tree


def named_in(rows: list[str]) -> tuple[set[Path], list[str]]:
    """The modules the rows name (a folder names its ``__init__.py``), and the names that are not in the tree."""
    named: set[Path] = set()
    missing: list[str] = []
    for row in rows:
        folder = Path("streams_on_spark")
        for token in re.findall(r"`([^`]+)`", row):
            if not (token.endswith(".py") or token.endswith("/")) or " " in token:
                continue   # a class, a call, a dotted import name
            path = resolve(token) if "/" in token.rstrip("/") or token in ("state/", "connectors/") \
                else folder / token.rstrip("/")
            if not (ROOT / path).exists():
                missing.append(f"{token} (read as {path})")
                continue
            if token.endswith("/"):
                named.add(path / "__init__.py")
                folder = path
            else:
                named.add(path)
                if "/" in token:
                    folder = path.parent
    return named, missing


def unnamed(named: set[Path]) -> list[str]:
    """The modules of the tree that ``named`` leaves out."""
    folders = {p.parent for p in named}
    return sorted(str(p) for p in tree() - named
                  if not (p.name == "__init__.py" and p.parent in folders and p.parent != Path("streams_on_spark")))


def test_the_module_map_names_every_module_of_the_tree_and_nothing_else():
    named, missing = named_in(map_rows(PAGE.read_text(encoding="utf-8")))
    assert not missing, f"docs/architecture.md's module map names what is not in the tree: {missing}"
    left_out = unnamed(named)
    assert not left_out, f"docs/architecture.md's module map does not name: {left_out}"


def test_the_reading_of_the_map_sees_a_moved_module():
    """Not vacuous: a row naming a module that is gone, and a tree module no row names, are both found."""
    named, missing = named_in(["| tasks | `streams_on_spark/runtime/task.py`, `gone.py`, `runtime/spark/`: "
                               "`engine.py` |"])
    assert missing == ["gone.py (read as streams_on_spark/runtime/gone.py)"]
    assert named == {Path("streams_on_spark/runtime/task.py"), Path("streams_on_spark/runtime/spark/__init__.py"),
                     Path("streams_on_spark/runtime/spark/engine.py")}
    left_out = unnamed(named)
    assert "streams_on_spark/runtime/fused.py" in left_out and "streams_on_spark/__init__.py" in left_out
    assert "streams_on_spark/runtime/__init__.py" not in left_out   # its folder's task.py is named

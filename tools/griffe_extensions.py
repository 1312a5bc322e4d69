"""Griffe extensions for the API reference (mkdocs.yml's mkdocstrings handler).

- :class:`PackageDirs`: pyproject.toml's ``package-dir`` installs the repository's ``state/`` and ``connectors/`` as
  ``streams_on_spark.state`` and ``streams_on_spark.connectors``, which Griffe's static analysis cannot find under
  ``streams_on_spark/``. Once it has loaded ``streams_on_spark``, this loads the two directories as its subpackages,
  so the reference documents ``streams_on_spark.state`` (and the package's ``Stores``, ``ValueAndTimestamp``, ...
  that come from it) from source.
- :class:`SphinxRoles`: the docstrings name other objects with Sphinx roles (``:class:`~pkg.Name```); the reference
  renders docstrings as Markdown, where a role would show as its raw text, so each becomes inline code of the name
  Sphinx would print (``Name``, ``name()`` for a function or method).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import griffe

ROOT = Path(__file__).resolve().parents[1]
# the subpackages pyproject.toml maps outside streams_on_spark/ (its [tool.setuptools] package-dir)
MAPPED = {"connectors": ROOT / "connectors", "state": ROOT / "state"}


class PackageDirs(griffe.Extension):
    """Add ``MAPPED``'s directories to the ``streams_on_spark`` package Griffe loaded."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.path != "streams_on_spark":
            return
        for name, directory in MAPPED.items():
            if name not in pkg.members:
                # Griffe's own way of loading a package's submodule (GriffeLoader._load_submodule)
                pkg.set_member(name, loader._load_module(name, directory / "__init__.py", parent=pkg))


# :class:`Name`, :meth:`~pkg.Cls.name`, :py:func:`title <pkg.name>`
ROLE = re.compile(r":(?:py:)?(class|meth|func|attr|mod|data|exc|obj):`([^`]+)`")


def _role_as_code(match: re.Match) -> str:
    """What Sphinx prints for a role, as inline code: the explicit title, else the target (its last part with
    ``~``), with ``()`` after a function or method."""
    role, target = match.group(1), match.group(2).strip()
    title = re.fullmatch(r"(.*?)\s*<[^>]+>", target)
    if title:
        text = title.group(1)
    else:
        text = target.lstrip("~").rsplit(".", 1)[-1] if target.startswith("~") else target
        if role in ("meth", "func") and not text.endswith(")"):
            text += "()"
    return f"``{text}``"


def without_roles(text: str) -> str:
    """``text`` with its Sphinx roles as inline code."""
    return ROLE.sub(_role_as_code, text)


class SphinxRoles(griffe.Extension):
    """Rewrite the Sphinx roles of every docstring Griffe loads (modules, classes, functions, attributes)."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = without_roles(obj.docstring.value)

    def on_module(self, *, mod: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        self.on_object(obj=mod, loader=loader)

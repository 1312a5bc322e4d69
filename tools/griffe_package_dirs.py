"""A Griffe extension for the API reference (mkdocs.yml's mkdocstrings handler): pyproject.toml's ``package-dir``
installs the repository's ``state/`` and ``connectors/`` as ``streams_on_spark.state`` and
``streams_on_spark.connectors``, which Griffe's static analysis cannot find under ``streams_on_spark/``. Once it has
loaded ``streams_on_spark``, this loads the two directories as its subpackages, so the reference documents
``streams_on_spark.state`` (and the package's ``Stores``, ``ValueAndTimestamp``, ... that come from it) from source."""
from __future__ import annotations

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

"""A package's public names loaded on first use (PEP 562): a process that needs one module of the library (one of
the Python workers Spark starts on the driver for a query) does not import the rest."""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``exports`` maps each public name to the module defining it; a name
    is imported when first read and kept in the package from then on."""
    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value
    return __getattr__

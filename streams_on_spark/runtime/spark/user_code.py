"""User code on Spark's Python workers: the modules a worker cannot import travel by value.

Spark's workers unpickle a topology's processors, functions and serdes with pyspark's cloudpickle, which pickles a
class or function *by reference* (module and name) unless its module is registered to travel by value. A worker
imports from its own ``sys.path`` (its environment's ``PYTHONPATH``, the standard library, site-packages), not from
the entries this process added at run time: pytest's rootdir for a test module and a helper module beside it, a
script's own directory. :func:`ship_user_code` finds the modules a pickled object refers to that a worker could
not import, and registers them with :func:`pickle_by_value`.
"""
from __future__ import annotations

import functools
import importlib.machinery
import importlib.metadata
import logging
import os
import pickle
import site
import sys
import sysconfig
from types import FunctionType, ModuleType
from typing import Any, Optional

log = logging.getLogger(__name__)

_PICKLED_BY_VALUE: set[str] = set()


def pickle_by_value(*modules: ModuleType) -> None:
    """Have Spark ship ``modules``' classes and functions by value (pyspark's cloudpickle), so a Python worker that
    cannot import them (a test module, a conftest) still runs them; each module once."""
    from pyspark import cloudpickle
    for module in modules:
        name = module.__name__
        if name in _PICKLED_BY_VALUE or name not in sys.modules:
            continue
        try:
            cloudpickle.register_pickle_by_value(module)
        except ValueError:
            log.debug("cannot pickle module %s by value", name, exc_info=True)
            continue
        _PICKLED_BY_VALUE.add(name)
        log.debug("pickling module %s by value for Spark's workers", name)


@functools.cache
def _installed() -> frozenset[str]:
    """The top-level names of the installed distributions (editable installs included)."""
    return frozenset(importlib.metadata.packages_distributions())


def _worker_path() -> list[str]:
    """Where a fresh interpreter with this process's environment looks for a module: ``PYTHONPATH``, the standard
    library and site-packages (not the current directory, which a worker need not share)."""
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    paths += [sysconfig.get_path(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    paths += site.getsitepackages()
    if site.ENABLE_USER_SITE:
        paths.append(site.getusersitepackages())
    return list(dict.fromkeys(os.path.abspath(p) for p in paths if p))


def _origin(module: Any) -> Optional[str]:
    """Where a module (or module spec) was loaded from: its file, else its package directories."""
    spec = getattr(module, "__spec__", module)
    if spec is None:
        return None
    if spec.origin not in (None, "namespace"):
        return os.path.realpath(spec.origin)
    locations = spec.submodule_search_locations
    return os.path.realpath(next(iter(locations))) if locations else None


def worker_importable(name: str) -> bool:
    """Whether a Spark worker imports the loaded module ``name`` by its name: it is built in, standard, of an
    installed distribution, or found at the same place on the worker's path (:func:`_worker_path`)."""
    top = name.partition(".")[0]
    module = sys.modules.get(top)
    if (top == "__main__" or module is None or top in sys.builtin_module_names or top in sys.stdlib_module_names
            or top in _installed() or _origin(module) is None):
        return True   # ``__main__`` cloudpickle ships by value itself
    spec = importlib.machinery.PathFinder.find_spec(top, _worker_path())
    return spec is not None and _origin(spec) == _origin(module)


class _Discard:
    """A file that forgets what is written to it."""

    def write(self, data: bytes) -> int:
        return len(data)


def referenced_modules(*objects: Any) -> set[str]:
    """The names of the loaded modules whose classes, functions or module objects pickling ``objects`` refers to."""
    from pyspark.cloudpickle import Pickler
    found: set[str] = set()

    class Recorder(Pickler):
        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, ModuleType):
                found.add(obj.__name__)
            elif isinstance(obj, (type, FunctionType)) and isinstance(getattr(obj, "__module__", None), str):
                found.add(obj.__module__)
            return super().reducer_override(obj)

    try:
        Recorder(_Discard(), protocol=pickle.HIGHEST_PROTOCOL).dump(objects)
    except Exception as e:   # Spark reports what cannot be pickled itself, when it pickles the same objects
        log.debug("pickling %d object(s) to find their modules failed (%s: %s)", len(objects), type(e).__name__, e)
    return {name for name in found if name in sys.modules}


def ship_user_code(*objects: Any) -> list[str]:
    """Register to travel by value every module ``objects`` refer to that Spark's workers cannot import (again, until
    none is left: code shipped by value pickles what it refers to); the names registered."""
    shipped: list[str] = []
    while True:
        missing = sorted(name for name in referenced_modules(*objects)
                         if name not in _PICKLED_BY_VALUE and not worker_importable(name))
        if not missing:
            return shipped
        pickle_by_value(*(sys.modules[name] for name in missing))
        missing = [name for name in missing if name in _PICKLED_BY_VALUE]
        if not missing:   # none could be registered: nothing new to follow
            return shipped
        log.info("Spark's workers cannot import %s: pickled by value", ", ".join(missing))
        shipped += missing

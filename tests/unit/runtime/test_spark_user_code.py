"""Which modules of user code Spark's workers cannot import, and that exactly those travel by value."""
from __future__ import annotations

import importlib
import json
import os
import sys
import textwrap

import pytest
from pyspark import cloudpickle

from streams_on_spark import Serdes
from streams_on_spark.runtime.spark import user_code
from streams_on_spark.runtime.spark.user_code import referenced_modules, ship_user_code, worker_importable


@pytest.fixture
def beside(tmp_path, monkeypatch):
    """Two modules importable only through a ``sys.path`` entry this process added (as pytest adds a rootdir):
    ``uc_mapper`` whose class calls ``uc_helper``'s function."""
    (tmp_path / "uc_helper.py").write_text("def shout(word):\n    return word.upper()\n")
    (tmp_path / "uc_mapper.py").write_text(textwrap.dedent("""
        import uc_helper

        class Shout:
            def __call__(self, value):
                return uc_helper.shout(value)
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module("uc_mapper")
    for name in ("uc_mapper", "uc_helper"):
        if name in user_code._PICKLED_BY_VALUE:
            cloudpickle.unregister_pickle_by_value(sys.modules[name])
            user_code._PICKLED_BY_VALUE.discard(name)
        sys.modules.pop(name, None)


def test_standard_installed_and_pythonpath_modules_are_importable_by_workers(beside):
    assert worker_importable("json") and worker_importable("pytest") and worker_importable("streams_on_spark.dsl")
    assert worker_importable("__main__")   # cloudpickle ships it by value itself
    assert not worker_importable("uc_mapper") and not worker_importable("uc_helper")


def test_the_modules_an_object_refers_to(beside):
    found = referenced_modules(beside.Shout(), Serdes.String(), json.dumps)
    assert {"uc_mapper", "json"} <= found and "uc_helper" not in found   # Shout is pickled by reference so far


def test_what_workers_cannot_import_travels_by_value_and_so_does_what_it_refers_to(beside):
    mapper = beside.Shout()
    assert ship_user_code(mapper, Serdes.String()) == ["uc_mapper", "uc_helper"]
    assert {"uc_mapper", "uc_helper"} <= set(cloudpickle.list_registry_pickle_by_value())
    assert "streams_on_spark" not in "".join(cloudpickle.list_registry_pickle_by_value())
    assert ship_user_code(mapper) == []   # once
    # by value: the pickle carries the code; a process that cannot import the modules runs it
    data = cloudpickle.dumps(mapper)
    where = os.path.dirname(beside.__file__)
    loaded = {name: sys.modules.pop(name) for name in ("uc_mapper", "uc_helper")}
    sys.path.remove(where)
    try:
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("uc_helper")
        assert cloudpickle.loads(data)("to be") == "TO BE"
    finally:
        sys.path.insert(0, where)
        sys.modules.update(loaded)

"""docs/name-map.md, the Kafka Streams → streams-on-spark name map, against the code: every Python name it gives
exists, every config constant holds the key it is listed with, and every public method of the classes a Kafka
Streams user calls is on the page (so a method added without its Kafka name fails here)."""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

import streams_on_spark
from streams_on_spark.config import LIBRARY_CONFIG_KEYS, STREAMS_CONFIG_KEYS, StreamsConfig, is_known_config
from streams_on_spark.testing import TestInputTopic, TestOutputTopic

PAGE = Path(__file__).resolve().parents[3] / "docs" / "name-map.md"
CODE = re.compile(r"`([^`]+)`")
# the tables the test reads: header -> the column holding the Python name
NAME_TABLES = {"| Kafka Streams | streams-on-spark | notes |": 1, "| streams-on-spark only | what it is |": 0}
CONFIG_TABLE = "| Kafka Streams | key | streams-on-spark constant |"

# the classes whose every public method the page must list: what a Kafka Streams user calls
CLASSES: list[Any] = [
    streams_on_spark.StreamsBuilder, streams_on_spark.Topology, streams_on_spark.KStream,
    streams_on_spark.BranchedKStream, streams_on_spark.KTable, streams_on_spark.KGroupedStream,
    streams_on_spark.KGroupedTable, streams_on_spark.CogroupedKStream, streams_on_spark.TimeWindowedKStream,
    streams_on_spark.SessionWindowedKStream, streams_on_spark.EmitStrategy, streams_on_spark.TimeWindows,
    streams_on_spark.SlidingWindows, streams_on_spark.SessionWindows, streams_on_spark.JoinWindows,
    streams_on_spark.Suppressed, streams_on_spark.BufferConfig, streams_on_spark.Consumed, streams_on_spark.Produced,
    streams_on_spark.Grouped, streams_on_spark.Materialized, streams_on_spark.Named, streams_on_spark.Repartitioned,
    streams_on_spark.Branched, streams_on_spark.StreamJoined, streams_on_spark.Joined, streams_on_spark.TableJoined,
    streams_on_spark.Processor, streams_on_spark.FixedKeyProcessor, streams_on_spark.ValueTransformerWithKey,
    streams_on_spark.ProcessorContext, streams_on_spark.TopicNameExtractor, streams_on_spark.StreamPartitioner,
    streams_on_spark.Record, streams_on_spark.Stores, streams_on_spark.Serdes, streams_on_spark.Serde,
    streams_on_spark.WindowedSerdes, streams_on_spark.KafkaStreams, streams_on_spark.TopologyTestDriver,
    streams_on_spark.TopologyTestDriverBuilder, TestInputTopic, TestOutputTopic, streams_on_spark.TestRecord,
    streams_on_spark.KeyValue, streams_on_spark.ValueAndTimestamp,
]
# class attributes of the windowed streams that pick their store, processor and serde: hooks of the
# implementation (Kafka's are private), not methods a user calls
NOT_USER_METHODS = {"store_builder", "processor", "windowed_serde"}


def _rows(header: str) -> list[list[str]]:
    """The cells of the rows of every table on the page under ``header``."""
    rows, inside = [], False
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if line.strip() == header:
            inside = True
        elif inside and line.startswith("|"):
            if not line.startswith("|---"):
                rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        else:
            inside = False
    return rows


def mapped_names() -> list[str]:
    """The Python names of the page's name tables (the first code span of their Python column)."""
    names = []
    for header, column in NAME_TABLES.items():
        rows = _rows(header)
        assert rows, f"no table {header!r} on {PAGE.name}"
        for cells in rows:
            code = CODE.findall(cells[column])
            assert code, f"a row without a Python name: {cells}"
            names.append(code[0])
    return names


def _has_attribute(owner: Any, name: str) -> bool:
    """``owner.name`` exists: a class attribute, or a field an instance has (dataclass, named tuple, annotation, or
    an attribute its ``__init__`` sets)."""
    if hasattr(owner, name):
        return True
    if dataclasses.is_dataclass(owner) and name in {f.name for f in dataclasses.fields(owner)}:
        return True
    for klass in getattr(owner, "__mro__", ()):
        if name in getattr(klass, "__annotations__", {}):
            return True
        init = vars(klass).get("__init__")
        try:
            source = inspect.getsource(init) if inspect.isfunction(init) else ""
        except OSError:   # an __init__ made by dataclasses has no source (its fields are checked above)
            source = ""
        if re.search(rf"\bself\.{name}\s*(:[^=]*)?=", source):
            return True
    return False


def resolve(dotted: str) -> Any:
    """The object ``dotted`` names under ``streams_on_spark``: a package name, a module, or attributes of either;
    a field of a class resolves to the class (it exists only on instances)."""
    parts = dotted.split(".")
    obj: Any = streams_on_spark
    for i, part in enumerate(parts):
        if hasattr(obj, part):
            obj = getattr(obj, part)
        elif inspect.ismodule(obj):
            obj = importlib.import_module(f"{obj.__name__}.{part}")
        elif inspect.isclass(obj) and _has_attribute(obj, part) and i == len(parts) - 1:
            return obj
        else:
            raise AttributeError(f"{dotted}: {'.'.join(parts[:i]) or 'streams_on_spark'} has no {part!r}")
    return obj


@pytest.mark.parametrize("name", mapped_names())
def test_every_python_name_exists(name):
    resolve(name)


def test_the_resolver_refuses_a_name_that_does_not_exist():
    with pytest.raises(AttributeError, match="has no 'of_size_with_no_graze'"):
        resolve("TimeWindows.of_size_with_no_graze")
    assert resolve("TimeWindows.of_size_with_no_grace") is streams_on_spark.TimeWindows.of_size_with_no_grace
    assert resolve("state.KeyValueStore.put_if_absent") is streams_on_spark.state.KeyValueStore.put_if_absent


def _public_methods(cls: Any) -> list[str]:
    """The public callables ``cls`` defines or inherits from the library (not from ``object``, ``tuple``, ...)."""
    names = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("streams_on_spark"):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or name in NOT_USER_METHODS or inspect.isclass(value):
                continue
            if isinstance(value, (staticmethod, classmethod)) or inspect.isfunction(value) or isinstance(value, property):
                names.add(name)
            elif callable(getattr(cls, name, None)) and not isinstance(getattr(cls, name), type):
                names.add(name)
    return sorted(names)


def test_every_public_method_of_the_users_classes_is_mapped():
    mapped = set(mapped_names())
    missing = [f"{cls.__name__}.{name}" for cls in CLASSES for name in _public_methods(cls)
               if f"{cls.__name__}.{name}" not in mapped and f"testing.{cls.__name__}.{name}" not in mapped]
    assert not missing, f"public methods missing from docs/name-map.md (add their Kafka names): {missing}"


def test_every_exported_name_is_mapped():
    """Each name of ``streams_on_spark.__all__`` is on the page (itself or one of its attributes)."""
    mapped = {name.split(".")[0] for name in mapped_names()}
    assert sorted(set(streams_on_spark.__all__) - mapped) == []


# the page's rows giving a value, not a key: the key the value is for
CONFIG_VALUES = {"at_least_once": "processing.guarantee", "exactly_once_v2": "processing.guarantee",
                 "all": "topology.optimization", "none": "topology.optimization"}


def test_config_keys_are_known_and_constants_hold_them():
    rows = _rows(CONFIG_TABLE)
    assert len(rows) >= 20
    for cells in rows:
        key, constant = CODE.findall(cells[1])[0], CODE.findall(cells[2])
        if key.endswith('" + key'):                      # a prefix: "consumer." + key
            prefix = key.split('"')[1]
            assert is_known_config(prefix + "max.poll.records"), prefix
            continue
        key = key.strip('"')
        if key in CONFIG_VALUES:                          # a value: the config takes it
            assert StreamsConfig({"application.id": "a", CONFIG_VALUES[key]: key}).get(CONFIG_VALUES[key]) == key
        else:
            assert key in STREAMS_CONFIG_KEYS or key in LIBRARY_CONFIG_KEYS, f"{key} is not a key the library knows"
        if constant:
            assert resolve(constant[0]) == key, f"{constant[0]} is not {key!r}"

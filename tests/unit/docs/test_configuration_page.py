"""docs/configuration.md's key tables are generated from streams_on_spark/config.py, so the reference cannot drift.

``python tests/unit/docs/test_configuration_page.py`` rewrites the generated tables in place after a key changes.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Mapping

from streams_on_spark.config import (
    LIBRARY_CONFIG_KEYS,
    NO_DEFAULT,
    STREAMS_CONFIG_KEYS,
    ConfigKey,
    ListSize,
    Range,
    ValidList,
    ValidString,
)

PAGE = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"
GENERATED = re.compile(r"(<!-- generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)

# what a key does here is config.py's ConfigKey.effect; a key without one does nothing here, and says what does
NO_EFFECT = "No effect here; another value than the default logs a warning: {}."
REFUSED = "Not supported: another value than the default is refused (`ConfigException`): {}."
# config.py's validator functions, in words
FUNCTION_VALIDATORS: Mapping[str, str] = {
    "_topology_optimization": "`none`, `all`, or a comma list of `reuse.ktable.source.topics`, "
                              "`merge.repartition.topics`, `single.store.self.join`",
    "_serde": "a Serde instance",
    "_topic_name": "a non-empty topic name",
}


def _code(value: Any) -> str:
    return f"`{value}`"


def _default(key: ConfigKey) -> str:
    if key.default is NO_DEFAULT:
        return "(required)"
    if key.default is None:
        return ""
    if key.default == "":
        return "(empty)"
    if isinstance(key.default, bool):
        return _code(str(key.default).lower())
    if isinstance(key.default, list):
        return _code(",".join(key.default)) if key.default else "(empty list)"
    return _code(key.default)


def _valid(key: ConfigKey) -> str:
    check = key.validator
    if isinstance(check, Range):
        return " and ".join(part for part in (f"≥ {check.min:g}" if check.min is not None else "",
                                              f"≤ {check.max:g}" if check.max is not None else "") if part)
    if isinstance(check, ValidString):
        values = ", ".join(_code("null" if v is None else v) for v in check.valid)
        return f"one of {values}" + (" (any case)" if check.case_insensitive else "")
    if isinstance(check, ValidList):
        return "a non-empty list" if not check.empty_allowed else "a list without duplicates"
    if isinstance(check, ListSize):
        return f"at most {check.max_size} entries"
    if check is None:
        return ""
    name = getattr(check, "__name__", type(check).__name__)
    assert name in FUNCTION_VALIDATORS, f"config.py has a validator the page cannot describe yet: {name}"
    return FUNCTION_VALIDATORS[name]


def effect(key: ConfigKey) -> str:
    """What the library does with ``key``: its effect, or why it has none and what does its job instead."""
    if key.effect is not None:
        return key.effect
    return (REFUSED if key.refused else NO_EFFECT).format(key.instead)


def render_table(keys: Mapping[str, ConfigKey]) -> str:
    """The Markdown table of ``keys``: key, type, default, valid values, what the library does with it."""
    rows = ["| key | type | default | valid values | effect here |", "|---|---|---|---|---|"]
    for name in sorted(keys):
        key = keys[name]
        cells = [_code(name), key.type.lower(), _default(key), _valid(key), effect(key)]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"


TABLES = {"library-keys": LIBRARY_CONFIG_KEYS, "streams-keys": STREAMS_CONFIG_KEYS}


def rendered_page(text: str) -> str:
    """``text`` with each generated table replaced by what config.py says today."""
    return GENERATED.sub(lambda m: m.group(1) + "\n" + render_table(TABLES[m.group("name")]) + "\n" + m.group(4), text)


def test_generated_tables_match_config():
    text = PAGE.read_text(encoding="utf-8")
    assert sorted(m.group("name") for m in GENERATED.finditer(text)) == sorted(TABLES)
    assert text == rendered_page(text), ("docs/configuration.md is out of date with streams_on_spark/config.py: "
                                         "run `.venv/bin/python tests/unit/docs/test_configuration_page.py`")


def test_every_key_the_library_reads_is_on_the_page():
    text = PAGE.read_text(encoding="utf-8")
    missing = [name for name in [*LIBRARY_CONFIG_KEYS, *STREAMS_CONFIG_KEYS] if f"| `{name}` |" not in text]
    assert not missing, f"keys missing from docs/configuration.md: {missing}"


def test_every_key_says_what_it_does_here():
    keys = [*LIBRARY_CONFIG_KEYS.values(), *STREAMS_CONFIG_KEYS.values()]
    assert [k.name for k in keys if k.effect is None and not k.instead] == [], "a key without effect or instead"
    assert [k.name for k in keys if k.effect is not None and (k.instead or k.refused)] == [], \
        "a key with an effect has nothing to do instead and is never refused"
    assert not [k.name for k in LIBRARY_CONFIG_KEYS.values() if k.effect is None], "the library's keys all act"


if __name__ == "__main__":
    PAGE.write_text(rendered_page(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    sys.exit(0)

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

# What the library does with a key; a Kafka Streams key missing here is accepted and validated, with no effect.
EFFECTS: Mapping[str, str] = {
    "application.id": "Required. Prefixes internal topics (`<application.id>-<name>-repartition`), names the Spark "
                      "queries, is the consumer group under `exactly_once_v2` and the default checkpoint directory.",
    "bootstrap.servers": "The Kafka cluster. Absent: topics are the library's embedded topics.",
    "state.dir": "Where executors keep tasks' local RocksDB stores (default: Spark's per-application files "
                 "directory); and the root of the default `checkpoint.location` (`<tmp>/kafka-streams` if unset).",
    "ensure.explicit.internal.resource.naming": "KIP-1111: building the topology fails when a repartition topic, "
                                                "changelog or store name was generated (else a warning).",
    "cache.max.bytes.buffering": "Kafka's name before 3.4 of `statestore.cache.max.bytes`, read when that is absent.",
    "statestore.cache.max.bytes": "The record cache per task; 0 turns caching off.",
    "client.id": "Passed to the Kafka clients.",
    "default.deserialization.exception.handler": "Kafka's older name of `deserialization.exception.handler`, read "
                                                 "(with a warning) when that is absent.",
    "default.key.serde": "The key serde (an instance, e.g. `Serdes.String()`) where none is given.",
    "default.value.serde": "The value serde (an instance) where none is given.",
    "default.production.exception.handler": "Kafka's older name of `production.exception.handler`, read (with a "
                                            "warning) when that is absent.",
    "default.timestamp.extractor": "The timestamp extractor of sources that set none.",
    "deserialization.exception.handler": "A source record that cannot be deserialized: see Error handling.",
    "errors.dead.letter.queue.topic.name": "KIP-1034's dead letter queue topic: see Error handling.",
    "processing.exception.handler": "A processor or punctuator that raises (KIP-1033): see Error handling.",
    "processing.guarantee": "`at_least_once` or `exactly_once_v2` (one Kafka transaction per task and micro-batch).",
    "production.exception.handler": "A sink record that cannot be serialized: see Error handling.",
    "security.protocol": "Passed to the Kafka clients (with `sasl.*` and `ssl.*`).",
    "request.timeout.ms": "Passed to the Kafka clients.",
    "topology.optimization": "Read by `StreamsBuilder.build(config)`; recorded in the checkpoint's topology.json.",
    # the library's own keys
    "checkpoint.location": "Where the Spark checkpoints live (a path, `hdfs://`, `s3a://`); default "
                           "`<state.dir>/<application.id>`. Starting again on it resumes.",
    "embedded.topics.dir": "The embedded topics' directory (without `bootstrap.servers`); on a cluster, one every "
                           "executor sees. Default: a temporary directory.",
    "trigger.interval": "Spark's processing-time trigger of every query (how often it looks for new data).",
    "upgrade.allow.unsafe": "`true` starts despite a topology change that loses state (see Upgrades).",
}
NO_EFFECT = "Validated as Kafka's; no effect here."
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


def render_table(keys: Mapping[str, ConfigKey]) -> str:
    """The Markdown table of ``keys``: key, type, default, valid values, what the library does with it."""
    rows = ["| key | type | default | valid values | effect here |", "|---|---|---|---|---|"]
    for name in sorted(keys):
        key = keys[name]
        cells = [_code(name), key.type.lower(), _default(key), _valid(key), EFFECTS.get(name, NO_EFFECT)]
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


def test_every_described_key_exists():
    unknown = sorted(set(EFFECTS) - set(LIBRARY_CONFIG_KEYS) - set(STREAMS_CONFIG_KEYS))
    assert not unknown, f"EFFECTS describes keys config.py does not define: {unknown}"


if __name__ == "__main__":
    PAGE.write_text(rendered_page(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    sys.exit(0)

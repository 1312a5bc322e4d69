"""The example behind `make run` works; here on the in-process engine (its Spark path runs in `make run` and,
against Kafka, in tests/integration/kafka/test_spark_submit.py)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "wordcount.py"


def test_wordcount_example_counts_the_bundled_text(capsys):
    spec = importlib.util.spec_from_file_location("wordcount_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--engine", "local", "--repeat", "2", "--partitions", "4", "--describe"]) == 0
    out = capsys.readouterr().out
    assert "Sub-topology: 1" in out
    assert "top 10 words: the=46" in out

"""examples/click_counts.py on the in-process driver: one final count per user and minute, the late click dropped."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "click_counts.py"
EXPECTED = """\
local: final click counts per user and minute
alice  00:00-00:01 clicks=3
alice  00:01-00:02 clicks=1
bob    00:00-00:01 clicks=2
bob    00:01-00:02 clicks=2
carol  00:00-00:01 clicks=1
carol  00:01-00:02 clicks=1
"""


def load():
    spec = importlib.util.spec_from_file_location("click_counts_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("partitions", [1, 4])
def test_final_counts_per_user_and_minute(capsys, partitions):
    assert load().main(["--engine", "local", "--partitions", str(partitions)]) == 0
    assert capsys.readouterr().out.endswith("\n" + EXPECTED)


def test_describe_shows_the_suppression(capsys):
    assert load().main(["--engine", "local", "--describe"]) == 0
    out = capsys.readouterr().out
    assert "Processor: final-counts (stores: [final-counts-store])" in out
    assert "(topic: click-counts)" in out


def test_no_intermediate_updates_and_the_late_click_is_dropped():
    module = load()
    outputs = module.run("", module.Run("local", 2))
    assert len(outputs) == 6                      # one record per closed window, none for [00:03, 00:04)
    windows = {(r.key.key, r.key.window.start) for r in outputs}
    assert len(windows) == 6


def test_a_bad_partition_count_is_named():
    module = load()
    with pytest.raises(ValueError, match="partitions must be a positive int, not 0"):
        module.run("", module.Run("local", 0))


def test_input_for_a_topic_the_example_does_not_declare_is_named():
    module = load()
    clicks, counts = module.topics()
    stray = [[module.Input("clickz", "alice", "/home", module.T0)]]
    with pytest.raises(ValueError, match=r"topics \['clickz'\] are not among the example's topics"):
        module.run_example(module.click_counts_topology(), "stray", [clicks, counts], stray, [counts.name],
                           module.Run("local", 1))

"""The README's examples run as written (keeps the README true to the code)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
CONTINUES = re.compile(r"# continues\b")   # a block's first line saying it continues the blocks before it


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def needs_spark(block: str) -> bool:
    """A block that starts an application on Spark (run by tests/integration/spark/test_readme_spark.py)."""
    return "KafkaStreams(" in block


def test_readme_has_python_examples_and_each_runs_alone_or_says_what_it_continues():
    blocks = python_blocks()
    assert len(blocks) >= 2, "README has no python examples"
    assert not [b for b in blocks if CONTINUES.match(b)], "README's examples are to be copied one at a time"


@pytest.mark.parametrize("index", [i for i, b in enumerate(python_blocks()) if not needs_spark(b)])
def test_readme_python_example_runs_on_its_own(index):
    """Each block as a reader copies it: alone, in a fresh namespace (the block's asserts are the test)."""
    namespace: dict = {"__name__": "readme"}
    exec(compile(python_blocks()[index], str(README), "exec"), namespace)


def test_readme_first_screen_names_the_two_commands():
    head = README.read_text(encoding="utf-8").splitlines()[:15]
    assert any(line.startswith("make run") for line in head)
    assert any(line.startswith("make test") for line in head)


def test_readme_upgrade_recipe_runs_as_written(tmp_path):
    """The "Upgrading a running application" commands, through the installed console script, on an application
    module: the committed description checks safe against itself, and unsafe once a filter shifts a store's name."""
    import os
    import subprocess
    import sys
    text = README.read_text(encoding="utf-8").split("## Upgrading a running application", 1)[1]
    commands = [line.split("#")[0].strip() for line in re.search(r"```\n(.*?)```", text, re.S).group(1).splitlines()]
    assert [c.split()[:2] for c in commands] == [["streams-on-spark", "describe"], ["streams-on-spark", "check-upgrade"]]
    (tmp_path / "myapp").mkdir()
    app = tmp_path / "myapp" / "topology.py"

    def write_app(extra: str) -> None:
        app.write_text("from streams_on_spark import StreamsBuilder\n\n\ndef build_topology():\n"
                       "    builder = StreamsBuilder()\n"
                       f"    builder.stream('clicks'){extra}.group_by_key().count().to_stream().to('total-clicks')\n"
                       "    return builder.build()\n")
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}

    def run(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)
    write_app("")
    described = run(commands[0])
    assert described.returncode == 0, described.stderr
    assert (tmp_path / "topology.txt").read_text().startswith("Topologies:")
    same = run(commands[1])
    assert same.returncode == 0, same.stdout + same.stderr
    write_app(".filter(lambda k, v: v is not None)")
    changed = run(commands[1])
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "store-renamed" in changed.stdout

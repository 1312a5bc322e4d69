"""The set-up command blocks, run as written in the checkout: README's "Development" block starts with ``make help``,
which lists every target the block names; docs/getting-started.md's install block imports the library with the
venv's python (its ``make setup`` is how ``make test`` starts, so the venv is there)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def block_after(page: str, heading: str) -> list[str]:
    """The commands (comments dropped) of the first command block after ``heading`` on ``page``."""
    text = (ROOT / page).read_text(encoding="utf-8").split(f"\n{heading}\n", 1)[1]
    block = re.search(r"^```(?:console|bash)?\n(.*?)^```", text, re.S | re.M).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.split("  #")[0].strip()]


def shell(command: str) -> subprocess.CompletedProcess:
    """``command`` in the checkout, in a shell without the test run's activated venv."""
    venv_bin = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return subprocess.run(["bash", "-e", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_make_help_lists_every_target_the_development_block_names():
    commands = block_after("README.md", "## Development")
    assert commands[0] == "make help"
    result = shell(commands[0])
    assert result.returncode == 0, result.stderr
    listed = {line.split()[0] for line in result.stdout.splitlines()[1:] if line.strip()}
    named = {target for command in commands for target in re.findall(r"(?:^make|/)\s+([\w-]+)", command)}
    assert len(named) == len(commands) + 2, named     # kafka-up / kafka-down, spark-cluster-up / spark-cluster-down
    assert sorted(named - listed) == [], f"README names targets `make help` does not list:\n{result.stdout}"


def test_getting_started_install_block_imports_the_library_with_the_venvs_python():
    make_setup, *after = block_after("docs/getting-started.md", "## Install")
    assert make_setup == "make setup" and after == ['.venv/bin/python -c "import streams_on_spark"'], after
    result = shell("\n".join(after))
    assert result.returncode == 0, result.stderr[-3000:]

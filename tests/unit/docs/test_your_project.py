"""docs/your-project.md's sample project, as a user makes it: its pyproject.toml and its ```py files written into a
directory outside the repository, then pytest run there in a subprocess — the plugin found by its entry point (no
conftest), `pythonpath = ["src"]` importing the project, `--streams-partitions=1,4` running the test twice. (With
the library installed from the wheel, the page's own commands run in tests/integration/test_wheel_install.py, which
writes the project with ``write_project``.)

The page's project files are ```py blocks (not ```python: those run on their own in test_docs_examples, where the
test file could not import the project)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "your-project.md"
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.S | re.M)


def blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(PAGE.read_text(encoding="utf-8")) if lang == language]


def write_project(root: Path) -> None:
    """pyproject.toml, the package (src/clicks), its test and its application (count_clicks.py), from the page."""
    (pyproject,) = blocks("toml")
    topology, test, app = blocks("py")
    (root / "src" / "clicks").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text(pyproject)
    (root / "src" / "clicks" / "__init__.py").write_text("")
    (root / "src" / "clicks" / "topology.py").write_text(topology)
    (root / "tests" / "test_topology.py").write_text(test)
    (root / "count_clicks.py").write_text(app)


def test_the_pyproject_depends_on_the_library_and_configures_pytest():
    (pyproject,) = blocks("toml")
    config = tomllib.loads(pyproject)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert config["project"]["dependencies"] == [f"streams-on-spark=={version}"]
    assert config["tool"]["pytest"]["ini_options"]["pythonpath"] == ["src"]
    assert f"streams_on_spark-{version}-py3-none-any.whl" in PAGE.read_text(encoding="utf-8")


def test_the_sample_project_runs_with_the_plugin(tmp_path):
    project = tmp_path / "clicks"
    project.mkdir()
    write_project(project)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider"], cwd=project, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "test_clicks_are_counted_per_page[local-1p] PASSED" in result.stdout
    assert "test_clicks_are_counted_per_page[local-4p] PASSED" in result.stdout
    assert "2 passed" in result.stdout


def test_without_pythonpath_the_tests_cannot_import_the_project(tmp_path):
    """What `pythonpath` does: without it, the test module's import of the project fails."""
    project = tmp_path / "clicks"
    project.mkdir()
    write_project(project)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('pythonpath = ["src"]\n', ""))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert "No module named 'clicks'" in result.stdout

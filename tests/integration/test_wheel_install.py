"""The wheel as a user gets it: docs/your-project.md's commands run as written in a project directory outside the
checkout (the clone the page's install block names, ``~/streams-on-spark``, replaced by the checkout) — a fresh venv, the wheel and the sdist pip-installed
into it (their pinned dependencies from the package index, through pip's cache), the page's sample project installed
with its test extra, its tests run by the plugin on both engines, its application spark-submitted with the project
zipped for ``--py-files`` — then the examples on the in-process driver from outside the source tree, importing the
library from that venv only.

The page's first block, ``make dist``, builds what the others install (its own test is the one below). Any failure
to build or install fails the test (pip's output in the message), never skips it.
"""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = "docs/your-project.md"
# both tests run `make dist` in the checkout, which replaces dist/'s sdist, as README's cluster block does: they run on
# the cluster tests' worker (tests/conftest.py), one after the other
pytestmark = pytest.mark.xdist_group("cluster")


def write_sample_project(root: Path) -> None:
    """The page's sample project, written by tests/unit/docs/test_your_project.py's ``write_project``."""
    path = ROOT / "tests" / "unit" / "docs" / "test_your_project.py"
    spec = importlib.util.spec_from_file_location("your_project_page", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_project(root)


def succeeded(result: subprocess.CompletedProcess, what: str) -> subprocess.CompletedProcess:
    assert result.returncode == 0, f"{what} failed:\n{result.stdout[-4000:]}\n--- stderr ---\n{result.stderr[-4000:]}"
    return result


@pytest.mark.timeout(2400)
def test_the_pages_commands_install_the_wheel_and_run_the_project_and_the_examples(documented, tmp_path):
    succeeded(subprocess.run(["make", "-s", "dist"], cwd=ROOT, capture_output=True, text=True, timeout=900),
              "`make dist`")
    project = tmp_path / "clicks"
    project.mkdir()

    def run(script: str, what: str, cwd: Path = project) -> subprocess.CompletedProcess:
        # nothing of the checkout on the Python path: the library comes from the project's venv; the clone the
        # install block exported stays in the environment of the commands after it, as in the user's shell
        return succeeded(documented.run(script, timeout_s=1500, cwd=cwd, PYTHONPATH="",
                                        STREAMS_ON_SPARK_CLONE=str(ROOT)), what)

    install = documented.block(PAGE, "## Install the package", "export STREAMS_ON_SPARK_CLONE=~/streams-on-spark")
    run(install.replace("~/streams-on-spark", str(ROOT), 1), "the install block")   # the placeholder: the clone
    venv = project / ".venv"
    where = run('.venv/bin/python -c "import streams_on_spark; print(streams_on_spark.__file__)"', "the import")
    assert Path(where.stdout.strip()).is_relative_to(venv), f"imported from {where.stdout.strip()}, not the venv"

    write_sample_project(project)
    page = (ROOT / PAGE).read_text(encoding="utf-8")
    (install_project,) = re.findall(r"`(\.venv/bin/pip install --find-links .+? -e '\.\[test\]')`", page)
    run(install_project, "the project's install")
    local, both = documented.commands(documented.block(PAGE, "## A project", ".venv/bin/pytest"))
    assert "2 passed" in run(local, local).stdout                   # [local-1p], [local-4p]
    assert "4 passed" in run(both, both).stdout                     # and [spark-1p], [spark-4p]
    shipped = run(documented.block(PAGE, "## Ship your modules to the executors"), "the --py-files block")
    assert "clicks on /home: 2" in shipped.stdout, shipped.stdout[-2000:]

    app = tmp_path / "app"                        # the examples, copied: outside the source tree
    shutil.copytree(ROOT / "examples", app, ignore=shutil.ignore_patterns("__pycache__"))
    python = venv / "bin" / "python"
    counted = run(f"{python} wordcount.py --engine local --repeat 2", "the word count", cwd=app)
    assert "top 10 words: the=46" in counted.stdout, counted.stdout
    deduplicated = run(f"{python} deduplication.py --engine local", "the deduplication", cwd=app)
    assert "local: 7 unique events of 11" in deduplicated.stdout, deduplicated.stdout
    # the command line the wheel declares is on the venv's path
    run(f"{venv / 'bin' / 'streams-on-spark'} --help", "streams-on-spark --help", cwd=app)


def test_make_dist_builds_the_wheel_and_an_sdist_with_the_same_modules():
    built = subprocess.run(["make", "-s", "dist"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, f"`make dist` failed:\n{built.stdout[-3000:]}\n{built.stderr[-3000:]}"
    wheels = sorted((ROOT / "dist").glob("streams_on_spark-*-py3-none-any.whl"))
    sdists = sorted((ROOT / "dist").glob("streams_on_spark-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in (ROOT / "dist").iterdir())
    import tarfile
    import zipfile
    with zipfile.ZipFile(wheels[0]) as whl:
        in_wheel = {n for n in whl.namelist() if n.endswith(".py")}
        # the local file system jar (jvm/local-fs) that local_session() puts on the class path
        assert "streams_on_spark/jars/streams-on-spark-local-fs.jar" in whl.namelist()
    root = sdists[0].name.removesuffix(".tar.gz")
    # the sdist keeps the repository's layout: connectors/ and state/ become streams_on_spark.* when built
    renamed = {"connectors/": "streams_on_spark/connectors/", "state/": "streams_on_spark/state/"}
    with tarfile.open(sdists[0]) as sdist:
        names = sdist.getnames()
        in_sdist = set()
        for name in names:
            path = name.removeprefix(root + "/")
            for source, target in renamed.items():
                if path.startswith(source):
                    path = target + path.removeprefix(source)
            if path.endswith(".py") and path != "setup.py":
                in_sdist.add(path)
        info = sdist.extractfile(f"{root}/PKG-INFO").read().decode()
    assert in_sdist == in_wheel, (sorted(in_sdist - in_wheel), sorted(in_wheel - in_sdist))
    assert f"{root}/streams_on_spark/jars/streams-on-spark-local-fs.jar" in names
    assert "Name: streams-on-spark" in info and f"Version: {root.rsplit('-', 1)[1]}" in info
    assert f"{root}/pyproject.toml" in names and f"{root}/setup.py" in names

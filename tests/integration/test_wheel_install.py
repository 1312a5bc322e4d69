"""The wheel as a user gets it: installed into a fresh venv with pip (its pinned dependencies from the package index,
through pip's cache), then the examples run on the in-process driver from outside the source tree, importing the
library from that venv only.

`make test` builds the wheel first and passes it in ``STREAMS_ON_SPARK_WHEEL``; a plain ``pytest`` builds it with
`make wheel`. Any failure to build or install fails the test (pip's output in the message), never skips it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def the_wheel() -> Path:
    """The wheel `make test` built, else one `make wheel` builds now."""
    given = os.environ.get("STREAMS_ON_SPARK_WHEEL", "").strip()
    if given:
        wheel = Path(given)
        assert wheel.is_file(), f"STREAMS_ON_SPARK_WHEEL={given} is not a file"
        return wheel
    built = subprocess.run(["make", "-s", "wheel"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, f"`make wheel` failed:\n{built.stdout[-3000:]}\n{built.stderr[-3000:]}"
    wheels = sorted((ROOT / "dist").glob("streams_on_spark-*-py3-none-any.whl"))
    assert len(wheels) == 1, f"`make wheel` left {wheels} in dist/"
    return wheels[0]


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.timeout(1800)
def test_the_wheel_installs_into_a_fresh_venv_and_runs_the_examples(tmp_path):
    wheel = the_wheel()
    venv = tmp_path / "venv"
    python = venv / "bin" / "python"
    # the user's shell: no PYTHONPATH or activated venv pointing back at the checkout
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON",
                                                             "PYSPARK_DRIVER_PYTHON")}
    made = run([sys.executable, "-m", "venv", str(venv)], tmp_path, env)
    assert made.returncode == 0 and python.exists(), f"python -m venv failed:\n{made.stderr}"
    installed = run([str(python), "-m", "pip", "install", "--progress-bar", "off", "--disable-pip-version-check",
                     str(wheel)], tmp_path, env, timeout=1500)
    assert installed.returncode == 0, f"pip install {wheel.name} failed:\n{installed.stdout[-4000:]}\n{installed.stderr[-4000:]}"

    app = tmp_path / "app"                        # the examples, copied: outside the source tree
    shutil.copytree(ROOT / "examples", app, ignore=shutil.ignore_patterns("__pycache__"))
    where = run([str(python), "-c", "import streams_on_spark; print(streams_on_spark.__file__)"], app, env)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(venv), f"imported from {where.stdout.strip()}, not the venv"

    counted = run([str(python), "wordcount.py", "--engine", "local", "--repeat", "2"], app, env)
    assert counted.returncode == 0, counted.stdout[-2000:] + counted.stderr[-4000:]
    assert "top 10 words: the=46" in counted.stdout, counted.stdout
    deduplicated = run([str(python), "deduplication.py", "--engine", "local"], app, env)
    assert deduplicated.returncode == 0, deduplicated.stdout[-2000:] + deduplicated.stderr[-4000:]
    assert "local: 7 unique events of 11" in deduplicated.stdout, deduplicated.stdout
    # the command line the wheel declares is on the venv's path
    described = run([str(venv / "bin" / "streams-on-spark"), "--help"], app, env)
    assert described.returncode == 0, described.stderr


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

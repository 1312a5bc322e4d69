"""The documentation site builds with MkDocs in strict mode (no broken link, anchor or nav entry) and renders every
docs/*.md page; `make docs` runs the same build. MkDocs comes with the `docs` extra (`make setup`): its absence fails
here, it is not skipped."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"


def _nav_pages(nav: list) -> list[str]:
    """The page files mkdocs.yml's nav lists, at any depth."""
    pages: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages.extend(_nav_pages(value) if isinstance(value, list) else [value])
    return pages


def _build(root: Path, site: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of ``root``'s mkdocs.yml into ``site`` (not ``--quiet``: it hides the warnings that
    strict mode counts, and the build then passes whatever is broken)."""
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"),
                           "-d", str(site)], cwd=root, capture_output=True, text=True, timeout=300)


def _config() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def test_mkdocs_config_is_strict_over_docs():
    config = _config()
    assert config["docs_dir"] == "docs" and config["strict"] is True
    assert {p.name for p in DOCS.glob("*.md")} == set(_nav_pages(config["nav"])), \
        "mkdocs.yml's nav and docs/*.md differ: list every page in the nav"


def test_site_builds_strict_with_every_page(tmp_path):
    import mkdocs   # the docs extra; a missing mkdocs fails the test

    assert mkdocs.__version__ == "1.6.1"
    site = tmp_path / "site"
    result = _build(ROOT, site)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    for page in DOCS.glob("*.md"):
        html = site / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")
        assert html.is_file(), f"{page.name} was not rendered to {html.relative_to(site)}"
        title = page.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
        assert title.replace("&", "&amp;") in html.read_text(encoding="utf-8"), f"{html} lacks its title {title!r}"
    configuration = (site / "configuration" / "index.html").read_text(encoding="utf-8")
    assert configuration.count("<table>") >= 2 and "<code>checkpoint.location</code>" in configuration


def test_a_broken_anchor_fails_the_build(tmp_path):
    """The strict build is a real check: a link to an anchor that does not exist aborts it."""
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    page = tmp_path / "docs" / "index.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [nowhere](kafka.md#no-such-section).\n",
                    encoding="utf-8")
    result = _build(tmp_path, tmp_path / "site")
    assert result.returncode != 0
    assert "does not contain an anchor '#no-such-section'" in result.stderr + result.stdout

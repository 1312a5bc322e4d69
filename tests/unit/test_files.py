"""Whole-file writes: a reader sees the old content or the new, never part of either."""
from __future__ import annotations

import os

import pytest

from streams_on_spark.files import replace_file


def test_the_new_content_replaces_the_old_whole_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "meta"
    replace_file(str(path), b"old")
    replace_file(str(path), b"new content")
    assert path.read_bytes() == b"new content"
    assert sorted(os.listdir(tmp_path)) == ["meta"]


def test_a_write_that_fails_leaves_the_old_content(tmp_path, monkeypatch):
    path = tmp_path / "meta"
    replace_file(str(path), b"old")

    def full_disk(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError):
        replace_file(str(path), b"new")
    assert path.read_bytes() == b"old"


def test_durable_content_reaches_the_disk_before_it_is_renamed_into_place(tmp_path, monkeypatch):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd)))
    monkeypatch.setattr(os, "replace", lambda a, b: (calls.append("replace"), real_replace(a, b)))
    replace_file(str(tmp_path / "a"), b"x")
    replace_file(str(tmp_path / "b"), b"y", durable=True)
    assert calls == ["replace", "fsync", "replace"]

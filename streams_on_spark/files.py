"""Whole-file writes that a reader, or a crash, sees entirely or not at all."""
from __future__ import annotations

import os


def replace_file(path: str, data: bytes, *, durable: bool = False) -> None:
    """Make ``data`` the whole content of ``path``: written to a hidden temporary file beside it, then renamed over
    it (atomic on POSIX), so a reader or a crash sees the old content or the new one, never part of either.
    ``durable`` syncs the data to disk before the rename (for content that must survive a machine crash)."""
    directory, name = os.path.split(path)
    temporary = os.path.join(directory, f".{name}.tmp")
    with open(temporary, "wb") as f:
        f.write(data)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(temporary, path)

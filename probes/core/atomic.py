"""Crash-safe file writes: write a sibling temp file, fsync it, rename, fsync the dir.

A reader therefore sees either the previous complete file or the new complete file,
never a prefix -- the property this whole project asks of frameworks.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from probes.core.nemesis import park


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        park("atomic-write:before-rename")  # a kill point, so the tests can prove the claim above
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def canonical_json(obj: Any) -> bytes:
    """The one serialisation used for receipts: sorted keys, stable indentation."""
    return (json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, default=str) + "\n").encode()


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, canonical_json(obj))


def remove_stale_temp_files(directory: Path) -> int:
    """Delete temp files a killed writer left behind; they were never renamed into place."""
    removed = 0
    if directory.is_dir():
        for tmp in directory.rglob(".*.tmp"):
            tmp.unlink(missing_ok=True)
            removed += 1
    return removed

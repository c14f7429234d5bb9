"""Atomic file writes: write a temporary file beside the target, then rename it over (nothing half-written)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from judgewise.errors import InputError


def write_text_atomic(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically: the file is either the old one or the complete new one."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise InputError("cannot write: its directory does not exist", file=str(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or exc})", file=str(path)) from None
    try:
        with os.fdopen(fd, "w", encoding=encoding) as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path

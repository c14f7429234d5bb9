"""Atomic file writes: write a temporary file beside the target, then rename it over (nothing half-written)."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from judgewise.errors import InputError


@contextmanager
def atomic_target(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block succeeds it is renamed over ``path``, otherwise
    removed. Whoever writes the temporary file (pandas, a model assembler, ...) never leaves ``path`` half-written,
    and concurrent writers each get their own temporary name."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise InputError("cannot write: its directory does not exist", file=str(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or exc})", file=str(path)) from None
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_text_atomic(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically: the file is either the old one or the complete new one."""
    with atomic_target(path) as tmp:
        with open(tmp, "w", encoding=encoding) as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)

"""Atomic file writes: write a temporary file beside the target, then rename it over (nothing half-written)."""

from __future__ import annotations

import os
import secrets
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from judgewise.errors import InputError


@contextmanager
def atomic_target(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block succeeds it is renamed over ``path``, otherwise
    removed. Whoever writes the temporary file (pandas, a model assembler, ...) never leaves ``path`` half-written,
    and concurrent writers each get their own temporary name.

    The result keeps the mode of the file it replaces; a new file gets the usual ``0666 & ~umask``.
    A ``path`` that is a directory, or whose directory is missing or not writable, is an :class:`InputError`."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise InputError("cannot write: it is a directory, expected a file path", file=str(path))
    if not directory.is_dir():
        what = "is not a directory" if directory.exists() else "does not exist"
        raise InputError(f"cannot write: its directory {what}", file=str(path))
    tmp = _create_beside(path, directory)
    try:
        yield tmp
        _keep_mode(path, tmp)
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise InputError(f"cannot write ({exc.strerror or exc})", file=str(path)) from None
    finally:
        tmp.unlink(missing_ok=True)


def _create_beside(path: Path, directory: Path) -> Path:
    """Create a new empty temporary file in ``directory`` with mode ``0666 & ~umask`` (the kernel applies the
    umask, as for any new file; ``tempfile.mkstemp`` would give 0600)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        tmp = directory / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            os.close(os.open(tmp, flags, 0o666))
            return tmp
        except FileExistsError:
            continue
        except OSError as exc:
            raise InputError(f"cannot write ({exc.strerror or exc})", file=str(path)) from None
    raise InputError("cannot write: no free temporary name beside it", file=str(path))


def _keep_mode(path: Path, tmp: Path) -> None:
    """Give ``tmp`` the permission bits of the existing ``path`` (if any), so a rewrite never changes them."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or exc})", file=str(path)) from None
    os.chmod(tmp, mode)


def write_text_atomic(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically: the file is either the old one or the complete new one."""
    with atomic_target(path) as tmp:
        with open(tmp, "w", encoding=encoding) as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)


def check_output_file(output: Path | None) -> None:
    """Fail before any work when ``--output`` cannot be a file: a directory, or in a folder that does not exist."""
    if output is None:
        return
    if output.is_dir():
        raise InputError("is a directory: --output expects a file name (e.g. ranking.json)", file=str(output))
    if not output.parent.is_dir():
        raise InputError("cannot write: its directory does not exist", file=str(output))

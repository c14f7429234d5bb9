"""Atomic file writes: write a temporary file beside the target, then rename it over (nothing half-written)."""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
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
    path = writable_target(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        what = "is not a directory" if directory.exists() else "does not exist"
        raise InputError(f"cannot write: its directory {what}", file=str(path))
    tmp = _create_beside(path, directory)
    try:
        try:
            yield tmp
            _keep_mode(path, tmp)
            os.replace(tmp, path)
        except OSError as exc:  # EFBIG, ENOSPC, EROFS...: the old file is kept, the partial copy removed
            raise InputError(f"cannot write ({exc.strerror or exc}); nothing was written", file=str(path)) from None
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


def writable_target(path: str | Path) -> Path:
    """The file an atomic write replaces: ``path``, or the file a symbolic link there points to (the link is kept).
    An InputError when that is no regular file: a directory, a FIFO, a device or socket, or a stream such as
    ``/dev/stdout`` (replacing it would put a regular file where the device or link was)."""
    path = Path(path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    if path.is_symlink() and _through_proc(path):
        raise InputError("is a link to a stream (e.g. /dev/stdout), not a file: expected a file name (e.g. "
                         "ranking.json)", file=str(path))
    try:
        mode = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):  # a new file (or a folder that is none: said by the caller)
        return target
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or exc})", file=str(path)) from None
    if stat.S_ISDIR(mode):
        raise InputError("is a directory: expected a file name (e.g. ranking.json)", file=str(path))
    if not stat.S_ISREG(mode):
        what = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise InputError(f"is {what}, not a regular file: expected a file name (e.g. ranking.json)",
                         file=str(path))
    return target


def _through_proc(path: Path) -> bool:
    """Whether a chain of symbolic links from ``path`` passes through ``/proc`` (``/dev/stdout`` →
    ``/proc/self/fd/1``): the file at its end is some process's open stream, not a place to replace."""
    for _ in range(40):
        if not path.is_symlink():
            return False
        path = path.parent / os.readlink(path)
        if Path(os.path.abspath(path)).parts[1:2] == ("proc",):
            return True
    return False  # a loop: the stat of its end says so (too many levels of symbolic links)


def check_output_file(output: Path | None) -> None:
    """Fail before any work when ``--output`` cannot be a file: a directory, a FIFO or device, or in a folder that
    does not exist."""
    if output is None:
        return
    if output.is_dir():
        raise InputError("is a directory: `output` expects a file name (e.g. ranking.json)", file=str(output))
    target = writable_target(output)
    if not target.parent.is_dir():
        raise InputError("cannot write: its directory does not exist", file=str(output))


def check_output_folder(folder: str | Path) -> None:
    """Fail before any work when ``folder`` cannot hold what a command writes into it: a file is there, or it can
    neither be written into nor made (its nearest existing parent is a file, or refuses a new entry: read-only,
    no permission, ``/proc``). Checked by making and removing an empty folder there: nothing is left behind."""
    folder = Path(folder)
    try:
        nearest = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
    except OSError as exc:  # a parent that may not be searched
        raise InputError(f"cannot reach it ({exc.strerror or exc})", file=str(folder)) from None
    if nearest == folder and not folder.is_dir():
        raise InputError("is a file, not a folder: expected a folder to write into (or the name of a new one)",
                         file=str(folder))
    if not nearest.is_dir():
        raise InputError(f"cannot make this folder: {nearest} is a file, not a folder", file=str(folder))
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".judgewise-check-", dir=nearest))
    except OSError as exc:
        where = "write into it" if nearest == folder else f"make it in {nearest}"
        raise InputError(f"cannot {where} ({exc.strerror or exc})", file=str(folder)) from None

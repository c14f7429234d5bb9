"""Inputs that are not regular files: a pipe or FIFO is read once into a temporary copy, devices are refused.

Format detection and the readers open an input more than once (a peek at its first record, then the read, and
``rank`` reads an input for grades before it reads it for judgments). A pipe (``/dev/stdin``, ``<(...)``) or a
FIFO yields its content only once, so :func:`read_once` copies it, on first use, to a temporary regular file
(removed when the process exits) and every later reader opens the copy. Messages and read reports still name the
input as the user gave it (:func:`judgewise.errors.shown_file`). A character or block device (``/dev/zero``, a
terminal) is no input file: it is refused. The readers note each file they read (:func:`note_read`), so a caller
can tell which files under a folder an input was made of (:func:`recording_reads`: the report's fingerprint).
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from judgewise.errors import SHOWN_AS, InputError

_COPIES: dict[str, Path] = {}  # a pipe's path as given → its copy
_READS: ContextVar[list[Path] | None] = ContextVar("judgewise_files_read", default=None)


@contextmanager
def recording_reads() -> Iterator[list[Path]]:
    """A list that every file a reader reads inside the block is added to (:func:`note_read`), in read order."""
    files: list[Path] = []
    token = _READS.set(files)
    try:
        yield files
    finally:
        _READS.reset(token)


def note_read(path: str | Path) -> None:
    """Record that a reader reads ``path`` (for :func:`recording_reads`; nothing outside one)."""
    files = _READS.get()
    if files is not None:
        files.append(Path(path))


def read_once(path: str | Path) -> Path:
    """``path`` itself when it is a regular file, a directory, missing, or a URL; the temporary copy of its content
    when it is a pipe, FIFO or socket (made on the first call, reused after); an InputError for a device."""
    path = Path(path)
    key = str(path)
    if key in _COPIES:
        return _COPIES[key]
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return path  # missing or unreadable: the reader says so
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return path
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise InputError("is a device, not a file: give a file, or pipe the data in (e.g. cat FILE | judgewise "
                         "... /dev/stdin)", file=key)
    _COPIES[key] = copy = _spool(path)
    SHOWN_AS[str(copy)] = key
    return copy


def _spool(path: Path) -> Path:
    """A pipe's whole content copied to a new temporary file named like it (its suffix still tells the format);
    the folder is made once the pipe is open (opening a FIFO waits for its writer) and removed on failure."""
    try:
        src = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read the pipe ({exc.strerror or exc})", file=str(path)) from None
    folder = Path(tempfile.mkdtemp(prefix="judgewise-pipe-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    copy = folder / (path.name or "input")
    try:
        with src, open(copy, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise InputError(f"cannot read the pipe into a temporary copy in {folder.parent} ({exc.strerror or exc})",
                         file=str(path)) from None
    return copy

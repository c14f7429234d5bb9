"""Progress of reading large files: the chunked readers report how far they are; a listener (a bar) shows it.

:func:`judgewise.io.columnar.read_coded` calls :func:`report` after each chunk of a JSONL, CSV or Parquet file with
the bytes read so far and the file's size (Parquet: rows read, as a share of the size). Nothing listens unless a
caller says so with :func:`listening` — the command line does, to draw a bar on stderr — so the library prints
nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Listener = Callable[[str, int, int], None]
"""``listener(file, bytes_done, bytes_total)``."""

_listeners: list[Listener] = []
_lock = threading.Lock()


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Inside the block, ``listener`` hears every chunked read's progress."""
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)


def report(file: str, done: int, total: int) -> None:
    """Tell the listeners that ``done`` of ``total`` bytes of ``file`` are read."""
    for listener in list(_listeners):
        listener(file, done, total)

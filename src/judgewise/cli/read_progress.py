"""A progress bar on stderr while a large input file is read in chunks (the readers report through io.progress).

Shown for files of at least 64 MB when stderr is a terminal; ``JUDGEWISE_PROGRESS=1`` shows it anyway (e.g. under
a terminal multiplexer that hides the terminal), ``JUDGEWISE_PROGRESS=0`` never. Piped or captured runs print
nothing extra, so JSON outputs and logs stay clean.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

LARGE_BYTES = 64 << 20
ENV = "JUDGEWISE_PROGRESS"


def env_setting() -> bool | None:
    """``JUDGEWISE_PROGRESS``: False for 0/false/no (any case), True for any other value, None when unset."""
    setting = os.environ.get(ENV, "").strip().lower()
    return setting not in ("0", "false", "no") if setting else None


def wanted(console) -> bool:
    """Whether to draw bars: the environment's say, else whether the console is a terminal."""
    setting = env_setting()
    return console.is_terminal if setting is None else setting


@contextmanager
def read_progress(console, *, min_bytes: int | None = None, show: bool | None = None):
    """Inside the block, a bar for each file of at least ``min_bytes`` (default LARGE_BYTES) while it is read
    (bytes read / size, speed, time left) on ``console``, left in its final state once the file is read (so that
    what the command prints next comes after it); yields the list of the bars drawn (None when not shown)."""
    if not (wanted(console) if show is None else show):
        yield None
        return
    from judgewise.io.progress import listening

    min_bytes = LARGE_BYTES if min_bytes is None else min_bytes
    drawn, live = [], {}

    def listener(file: str, done: int, total: int) -> None:
        if total < min_bytes:
            return
        if file not in live:
            live[file] = _bar(console, Path(file).name, total)
            drawn.append(live[file])
        bar = live[file]
        bar.update(bar.task_ids[0], completed=done)
        if done >= total:
            live.pop(file).stop()

    try:
        with listening(listener):
            yield drawn
    finally:
        for bar in live.values():  # a read that stopped early (an error): the bar as it got
            bar.stop()


def _bar(console, name: str, total: int):
    """A started rich bar of one file."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    bar = Progress(TextColumn("reading {task.description}", markup=False), BarColumn(), DownloadColumn(),
                   TransferSpeedColumn(), TimeRemainingColumn(), console=console, transient=False)
    bar.add_task(name, total=total)
    bar.start()
    return bar

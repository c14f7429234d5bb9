"""The ``JUDGEWISE_*`` environment settings a command may read, checked together before the command does anything.

Each setting is parsed by the one function that reads it where it is used (:data:`SETTINGS`); the CLI calls
:func:`check_environment` first, so a bad value is one error line before any file is created or any work is done,
whichever command would have read it and however late. ``JUDGEWISE_CACHE`` is a folder, used as given.
"""

from __future__ import annotations

from typing import Callable

from judgewise.commands import progress
from judgewise.judges import eventloop

SETTINGS: dict[str, Callable[[], object]] = {
    progress.ENV: progress.env_setting,            # bar / lines / none
    progress.INTERVAL_ENV: progress.interval_s,    # seconds between progress lines
    eventloop.ENV: eventloop.loop_choice,          # uvloop or asyncio
}


def check_environment() -> None:
    """A ConfigError naming the first ``JUDGEWISE_*`` setting that holds a value its reader refuses."""
    for read in SETTINGS.values():
        read()

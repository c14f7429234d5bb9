"""The CLI's two rich consoles, stdout and stderr, made once per process when first used (what it prints on them:
:mod:`judgewise.commands.display`), and its quiet HTTP logs."""

from __future__ import annotations

import functools
import logging
import sys

from rich.console import Console


@functools.cache
def out() -> Console:
    """Stdout: plain lines (no highlighting, no wrapping) and tables. Made on first use, so that the process's own
    environment (NO_COLOR, COLUMNS, a terminal or a pipe) applies."""
    return Console(highlight=False, soft_wrap=True)


@functools.cache
def err() -> Console:
    """Stderr: errors, warnings, log records and progress bars."""
    return Console(stderr=True)


def piped_width(width: int, *, at_least: bool = False) -> Console:
    """Tables unsqueezed when piped: stdout takes ``width`` columns (``at_least``: at least ``width``) when it is
    not a terminal; returns the stdout console."""
    console = out()
    if at_least and not console.is_terminal:
        console.width = max(console.width, width)
    elif not at_least and not sys.stdout.isatty():
        console.width = width
    return console


def quiet_http_logs() -> None:
    """httpx logs one INFO line per request; keep it for --verbose (DEBUG) only."""
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        for name in ("httpx", "httpx2"):  # openai >= 3 ships its own copy as httpx2
            logging.getLogger(name).setLevel(logging.WARNING)

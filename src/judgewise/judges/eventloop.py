"""The event loop every judging run uses: uvloop's where it is installed, else asyncio's own.

A judging run at high concurrency spends most of its CPU in the event loop and the socket transports (a few hundred
connections, two wake-ups per call); uvloop runs both in C. On the loopback benchmark (``benchmarks/
judge_throughput.py``, 256 calls in flight) it takes ~0.08 ms of CPU off each call and opens 256 connections in
about half the time. It is a dependency on Linux and macOS (not built for Windows, where asyncio's loop runs).
``JUDGEWISE_EVENT_LOOP=asyncio`` chooses asyncio's loop anyway (to compare, or to rule uvloop out of a problem).
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any, Callable, Coroutine

from judgewise.errors import ConfigError

if TYPE_CHECKING:  # asyncio is imported when a loop runs: checking the setting (every command does) needs none
    import asyncio

ENV = "JUDGEWISE_EVENT_LOOP"
LOOPS = ("uvloop", "asyncio")


def loop_choice() -> str:
    """``JUDGEWISE_EVENT_LOOP``: one of :data:`LOOPS` (any case; unset or blank: ``uvloop``), else a ConfigError."""
    text = os.environ.get(ENV, "")
    choice = text.strip().lower() or LOOPS[0]
    if choice not in LOOPS:
        raise ConfigError(f"{ENV}: expected one of {list(LOOPS)}, found {text!r}; unset it for the default")
    return choice


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """What makes a run's loop: uvloop's ``new_event_loop`` when installed and not ruled out, else None (asyncio's
    default loop)."""
    if loop_choice() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(main)`` on the loop :func:`loop_factory` makes."""
    import asyncio

    try:
        factory = loop_factory()
    except ConfigError:
        with warnings.catch_warnings():  # never to run, on purpose: no "coroutine ... was never awaited" (nor for
            warnings.simplefilter("ignore", RuntimeWarning)  # the coroutines it holds, freed as it closes)
            main.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)

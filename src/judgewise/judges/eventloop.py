"""The event loop every judging run uses: uvloop's where it is installed, else asyncio's own.

A judging run at high concurrency spends most of its CPU in the event loop and the socket transports (a few hundred
connections, two wake-ups per call); uvloop runs both in C. On the loopback benchmark (``benchmarks/
judge_throughput.py``, 256 calls in flight) it takes ~0.08 ms of CPU off each call and opens 256 connections in
about half the time. It is a dependency on Linux and macOS (not built for Windows, where asyncio's loop runs).
``JUDGEWISE_EVENT_LOOP=asyncio`` chooses asyncio's loop anyway (to compare, or to rule uvloop out of a problem).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Callable, Coroutine

from judgewise.errors import ConfigError

LOOPS = ("uvloop", "asyncio")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """What makes a run's loop: uvloop's ``new_event_loop`` when installed and not ruled out, else None (asyncio's
    default loop)."""
    choice = os.environ.get("JUDGEWISE_EVENT_LOOP", "uvloop").strip().lower()
    if choice not in LOOPS:
        raise ConfigError(f"JUDGEWISE_EVENT_LOOP: expected one of {list(LOOPS)}, found {choice!r}")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(main)`` on the loop :func:`loop_factory` makes."""
    try:
        factory = loop_factory()
    except ConfigError:
        main.close()  # never to run: closed, not left for the collector to warn about
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)

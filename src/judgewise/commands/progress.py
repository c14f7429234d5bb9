"""How a run shows its progress: the mode (a bar, plain lines or nothing) and the plain lines themselves.

On a terminal the commands draw a bar (``cli.progress``); elsewhere a bar prints nothing useful, so
:class:`ProgressLines` prints one line at most every ``JUDGEWISE_PROGRESS_INTERVAL`` seconds (default
:data:`DEFAULT_INTERVAL_S`), e.g. ``judged 120/960 games (12%), 3.1 games/s, 2 failed, 0:39 elapsed, ETA 4:08``, and
a last line when the run ends if it printed any (a run shorter than the interval prints none). ``--progress`` forces
the bar, ``--no-progress`` silences both; ``JUDGEWISE_PROGRESS=1`` / ``0`` does the same when no flag is given
(and shows or hides the bar of a large file being read).
"""

from __future__ import annotations

import math
import os
import time
from typing import Callable, Literal

from judgewise.errors import ConfigError

ENV = "JUDGEWISE_PROGRESS"
INTERVAL_ENV = "JUDGEWISE_PROGRESS_INTERVAL"
DEFAULT_INTERVAL_S = 30.0
Mode = Literal["bar", "lines"] | None
LINE_WORDS = {"judging": ("judged", "games"), "generating": ("generated", "answers")}  # label → (verb, noun)


def env_setting() -> bool | None:
    """``JUDGEWISE_PROGRESS``: False for 0/false/no (any case), True for any other value, None when unset."""
    setting = os.environ.get(ENV, "").strip().lower()
    return setting not in ("0", "false", "no") if setting else None


def wanted(console) -> bool:
    """Whether to draw bars: the environment's say, else whether the console is a terminal."""
    setting = env_setting()
    return console.is_terminal if setting is None else setting


def progress_mode(flag: bool | None, console) -> Mode:
    """How a run shows its progress on ``console`` (stderr): ``"bar"``, ``"lines"`` or None (nothing).
    ``--progress`` (True): the bar; ``--no-progress`` (False): nothing; no flag: ``JUDGEWISE_PROGRESS`` 1 → the
    bar, 0 → nothing; else the bar on a terminal and lines anywhere else."""
    if flag is not None:
        return "bar" if flag else None
    setting = env_setting()
    if setting is not None:
        return "bar" if setting else None
    return "bar" if console.is_terminal else "lines"


def interval_s() -> float:
    """Seconds between two progress lines: ``JUDGEWISE_PROGRESS_INTERVAL``, else :data:`DEFAULT_INTERVAL_S`."""
    text = os.environ.get(INTERVAL_ENV, "").strip()
    if not text:
        return DEFAULT_INTERVAL_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise ConfigError(f"{INTERVAL_ENV} = {text!r}: must be a number of seconds >= 0 (e.g. 30)")
    return value


def _clock_text(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


class ProgressLines:
    """Plain progress lines on ``console`` for a run of ``noun`` that says ``verb`` (``judged``, ``games``): call
    :meth:`show` after every finished item; use as a context manager so the run's last state is printed at the end
    (when any line was)."""

    def __init__(self, console, verb: str, noun: str, *, interval: float | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.console, self.verb, self.noun = console, verb, noun
        self.interval = interval_s() if interval is None else interval
        self.clock = clock
        self.start = self.last = clock()
        self.printed = 0
        self.pending: str | None = None  # the newest state not printed yet

    def __enter__(self) -> ProgressLines:
        return self

    def __exit__(self, *exc) -> None:
        if self.printed and self.pending is not None:
            self._print(self.pending)

    def show(self, done: int, total: int | None, failed: int, *, cost: float = 0.0, extra: str = "") -> None:
        """Record the run's state; print it when the interval has passed since the last line (or the start)."""
        now = self.clock()
        elapsed = max(now - self.start, 1e-9)
        rate = done / elapsed
        of = f"/{total:,}" if total else ""
        share = f" ({done / total:.0%})" if total else ""
        eta = f", ETA {_clock_text((total - done) / rate)}" if total and rate > 0 and total > done else ""
        money = f", ${cost:.4f}" if cost else ""
        speed = f"{rate:.1f}" if rate >= 0.1 or rate == 0 else f"{rate:.2g}"  # 0.04/s, not 0.0/s, on a slow judge
        self.pending = (f"{self.verb} {done:,}{of} {self.noun}{share}, {speed} {self.noun}/s, {failed:,} failed"
                        f"{money}{extra}, {_clock_text(elapsed)} elapsed{eta}")
        if now - self.last >= self.interval:
            self._print(self.pending)
            self.last = now

    def show_run(self, p) -> None:
        """A judge or generate run's progress ``p`` (done, total, failed, cost)."""
        self.show(p.done, p.total, p.failed, cost=p.cost)

    def show_evaluation(self, p) -> None:
        """An evaluate progress line: games so far against the cap, the expected τ and the games still to the stop."""
        tau = "" if p.expected_tau is None else f", E[τ] {p.expected_tau:.3f}"
        to_go = "" if p.calls_to_stop is None else f", ~{int(p.calls_to_stop):,} to the stop"
        self.show(p.games, None, p.failed, cost=p.cost, extra=f" (cap {p.total:,}){tau}{to_go}")

    def _print(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)
        self.printed += 1
        self.pending = None

"""How a run shows its progress on the console it is given (the CLI's stderr): a bar, plain lines or nothing.

On a terminal the commands draw a rich bar (a run's, an evaluation's); elsewhere a bar prints nothing useful, so
:class:`ProgressLines` prints one line at most every ``JUDGEWISE_PROGRESS_INTERVAL`` seconds (default
:data:`DEFAULT_INTERVAL_S`), e.g. ``judged 120/960 games (12%), 3.1 games/s, 2 failed, 0:39 elapsed, ETA 4:08``, and
a last line when the run ends if it printed any (a run shorter than the interval prints none). ``--progress`` forces
the bar, ``--no-progress`` silences both; ``JUDGEWISE_PROGRESS`` on (``1``, ``true``, ``yes``, ``on``) / off (``0``,
``false``, ``no``, ``off``; any case) does the same when no flag is given, and any other value is refused.
:func:`read_progress` draws a bar while a large input file is read (64 MB and more, on a terminal; the environment
variable shows or hides it too), so piped or captured runs print nothing extra.
"""

from __future__ import annotations

import math
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Literal

from judgewise.errors import ConfigError

ENV = "JUDGEWISE_PROGRESS"
INTERVAL_ENV = "JUDGEWISE_PROGRESS_INTERVAL"
DEFAULT_INTERVAL_S = 30.0
Mode = Literal["bar", "lines"] | None
LINE_WORDS = {"judging": ("judged", "games"), "generating": ("generated", "answers")}  # label → (verb, noun)


SWITCH = {**dict.fromkeys(("1", "true", "yes", "on"), True), **dict.fromkeys(("0", "false", "no", "off"), False)}


def env_setting() -> bool | None:
    """``JUDGEWISE_PROGRESS``: True or False for an on or off spelling of :data:`SWITCH` (any case), None when
    unset or blank; a ConfigError for any other value."""
    text = os.environ.get(ENV, "")
    setting = text.strip().lower()
    if not setting:
        return None
    if setting not in SWITCH:
        raise ConfigError(f"{ENV} = {text!r}: expected 1, true, yes or on (progress shown) or 0, false, no or off "
                          "(none), in any case; unset it for the default")
    return SWITCH[setting]


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
        raise ConfigError(f"{INTERVAL_ENV} = {text!r}: must be a finite number of seconds >= 0 (e.g. 30); unset it "
                          "for the default")
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


LARGE_BYTES = 64 << 20
# rich.progress and judgewise.io (which loads pandas) are imported when a bar is drawn: not for `--help`


def _run_bar(console, total: int, label: str):
    """A rich progress bar on ``console`` (done/total, rate, ETA, cost so far, failures) and its callback."""
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    bar = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[rate]:.1f}/s"), TimeElapsedColumn(), TextColumn("ETA"),
                   TimeRemainingColumn(), TextColumn("${task.fields[cost]:.4f}"),
                   TextColumn("[red]{task.fields[failed]} failed"), console=console, transient=False)
    task = bar.add_task(label, total=total, rate=0.0, cost=0.0, failed=0)

    def update(p) -> None:
        elapsed = bar.tasks[0].elapsed or 1e-9
        bar.update(task, completed=p.done, total=p.total, rate=p.done / elapsed, cost=p.cost, failed=p.failed)

    return bar, update


def _evaluation_bar(console):
    """One rich bar over the whole evaluation: games/cap, rate, ETA to the τ target or the cap, whichever comes
    first (the pipeline's EvaluateProgress.calls_to_stop at the paid-call rate), cost, failures, expected τ."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("evaluating"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]:.1f}/s"),
                   TimeElapsedColumn(), TextColumn("ETA {task.fields[eta]}"),
                   TextColumn("${task.fields[cost]:.4f}"), TextColumn("[red]{task.fields[failed]} failed"),
                   TextColumn("E[τ] {task.fields[tau]}"), console=console, transient=False)
    task = bar.add_task("evaluating", total=1, rate=0.0, cost=0.0, failed=0, tau="—", eta="—")

    def update(p) -> None:
        elapsed = bar.tasks[0].elapsed or 1e-9
        tau = "—" if p.expected_tau is None else f"{p.expected_tau:.3f}"
        rate = p.paid / elapsed
        eta = "—" if p.calls_to_stop is None or rate <= 0 else f"{int(p.calls_to_stop / rate) // 60}:" \
            f"{int(p.calls_to_stop / rate) % 60:02d}"  # to the τ target or the cap, first (pipeline's estimate)
        bar.update(task, completed=p.games, total=p.total, rate=rate, cost=p.cost, failed=p.failed, tau=tau, eta=eta)

    return bar, update


def run_with_progress(console, progress: bool | None, total: int, run, label: str = "judging"):
    """Call ``run(update)`` under a progress bar when ``console`` (stderr) is a terminal, with progress lines when
    it is a log, or with neither (:func:`progress_mode`)."""
    mode = progress_mode(progress, console)
    if mode is None:
        return run(None)
    if mode == "lines":
        with ProgressLines(console, *LINE_WORDS[label]) as lines:
            return run(lines.show_run)
    bar, update = _run_bar(console, total, label)
    with bar:
        return run(update)


def run_evaluation(console, cfg, run, *, progress: bool | None, bootstrap: int, as_json: bool = False):
    """``run`` (:func:`judgewise.evaluate`, or ``add_model`` with its options bound) on a loaded config, with the
    progress bar or lines on ``console`` as ``progress`` says (:func:`run_with_progress`; never the bar with
    ``as_json``)."""
    mode = progress_mode(progress, console)
    if mode is None or (mode == "bar" and as_json):
        return run(cfg, bootstrap=bootstrap)
    if mode == "lines":
        with ProgressLines(console, "evaluated", "games") as lines:
            return run(cfg, progress=lines.show_evaluation, bootstrap=bootstrap)
    bar, update = _evaluation_bar(console)
    with bar:
        return run(cfg, progress=update, bootstrap=bootstrap)


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
            live[file] = _file_bar(console, Path(file).name, total)
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


def _file_bar(console, name: str, total: int):
    """A started rich bar of one file."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    bar = Progress(TextColumn("reading {task.description}", markup=False), BarColumn(), DownloadColumn(),
                   TransferSpeedColumn(), TimeRemainingColumn(), console=console, transient=False)
    bar.add_task(name, total=total)
    bar.start()
    return bar

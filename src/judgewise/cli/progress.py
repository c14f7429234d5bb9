"""The progress bars the CLI draws on stderr (a terminal): a run's, an evaluation's, and a large input file's.

Which one a run shows, and the plain lines it prints instead when stderr is a log, are
:mod:`judgewise.commands.progress`'s. A file's bar is shown for files of at least 64 MB when stderr is a terminal
(``JUDGEWISE_PROGRESS=1``: anyway, ``0``: never), so piped or captured runs print nothing extra.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from judgewise.cli.console import err
from judgewise.commands.progress import LINE_WORDS, ProgressLines, progress_mode, wanted

LARGE_BYTES = 64 << 20
# rich.progress and judgewise.io (which loads pandas) are imported when a bar is drawn: not for `--help`


def _run_bar(total: int, label: str):
    """A rich progress bar on stderr (done/total, rate, ETA, cost so far, failures) and its callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    bar = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[rate]:.1f}/s"), TimeElapsedColumn(), TextColumn("ETA"),
                   TimeRemainingColumn(), TextColumn("${task.fields[cost]:.4f}"),
                   TextColumn("[red]{task.fields[failed]} failed"), console=err(), transient=False)
    task = bar.add_task(label, total=total, rate=0.0, cost=0.0, failed=0)

    def update(p) -> None:
        elapsed = bar.tasks[0].elapsed or 1e-9
        bar.update(task, completed=p.done, total=p.total, rate=p.done / elapsed, cost=p.cost, failed=p.failed)

    return bar, update


def _evaluation_bar():
    """One rich bar over the whole evaluation: games/cap, rate, ETA to the τ target or the cap, whichever comes
    first (the pipeline's EvaluateProgress.calls_to_stop at the paid-call rate), cost, failures, expected τ."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("evaluating"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]:.1f}/s"),
                   TimeElapsedColumn(), TextColumn("ETA {task.fields[eta]}"),
                   TextColumn("${task.fields[cost]:.4f}"), TextColumn("[red]{task.fields[failed]} failed"),
                   TextColumn("E[τ] {task.fields[tau]}"), console=err(), transient=False)
    task = bar.add_task("evaluating", total=1, rate=0.0, cost=0.0, failed=0, tau="—", eta="—")

    def update(p) -> None:
        elapsed = bar.tasks[0].elapsed or 1e-9
        tau = "—" if p.expected_tau is None else f"{p.expected_tau:.3f}"
        rate = p.paid / elapsed
        eta = "—" if p.calls_to_stop is None or rate <= 0 else f"{int(p.calls_to_stop / rate) // 60}:" \
            f"{int(p.calls_to_stop / rate) % 60:02d}"  # to the τ target or the cap, first (pipeline's estimate)
        bar.update(task, completed=p.games, total=p.total, rate=rate, cost=p.cost, failed=p.failed, tau=tau, eta=eta)

    return bar, update


def run_with_progress(progress: bool | None, total: int, run, label: str = "judging"):
    """Call ``run(update)`` under a progress bar on a terminal, with progress lines on any other stderr (a log),
    or with neither (:func:`judgewise.commands.progress.progress_mode`)."""
    mode = progress_mode(progress, err())
    if mode is None:
        return run(None)
    if mode == "lines":
        with ProgressLines(err(), *LINE_WORDS[label]) as lines:
            return run(lines.show_run)
    bar, update = _run_bar(total, label)
    with bar:
        return run(update)


def run_evaluation(cfg, run, *, progress: bool | None, bootstrap: int, as_json: bool = False):
    """``run`` (:func:`judgewise.evaluate`, or ``add_model`` with its options bound) on a loaded config, with the
    progress bar or lines as ``progress`` says (:func:`run_with_progress`; never the bar with ``as_json``)."""
    mode = progress_mode(progress, err())
    if mode is None or (mode == "bar" and as_json):
        return run(cfg, bootstrap=bootstrap)
    if mode == "lines":
        with ProgressLines(err(), "evaluated", "games") as lines:
            return run(cfg, progress=lines.show_evaluation, bootstrap=bootstrap)
    bar, update = _evaluation_bar()
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

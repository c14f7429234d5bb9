"""``judgewise judge --config run.yaml`` (dry run, progress bar or lines, summary; ``--worker`` on a shared store)
and the ``judgewise store`` group (:mod:`judgewise.cli.store_cmd`).

Every command reports failure counts. ``judge`` prints the dry-run estimate before any call; with
``--dry-run`` it stops there. A rerun of the same config makes no call for games already stored; games
stored as failed are judged again only with ``--retry-failed``. With ``--worker`` (a PostgreSQL store) this
process is one of any number of workers of the job; ``--executor ray --workers N`` starts N of them on Ray.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from judgewise.cli.console import err, out
from judgewise.cli.options import (OVERRIDE_FLAGS, Config, DryRun, Json, RetryFailed, ShowProgress,
                                   options_command)
from judgewise.cli.progress_lines import ProgressLines, progress_mode
from judgewise.cli.store_cmd import register as register_store
from judgewise.cli.richtext import quiet_http_logs, say
from judgewise.commands.options import RunOverrides
from judgewise.commands.text import summary_lines

JUDGMENTS_OUTPUT = Annotated[str, typer.Option("--output", "-o", help="Write the judgments (.parquet or .jsonl).")]


def _progress_bar(total: int, label: str = "judging"):
    """A rich progress bar on stderr (done/total, rate, ETA, cost so far, failures) and its callback."""
    bar = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[rate]:.1f}/s"), TimeElapsedColumn(), TextColumn("ETA"),
                   TimeRemainingColumn(), TextColumn("${task.fields[cost]:.4f}"),
                   TextColumn("[red]{task.fields[failed]} failed"), console=err(), transient=False)
    task = bar.add_task(label, total=total, rate=0.0, cost=0.0, failed=0)

    def update(p) -> None:
        elapsed = bar.tasks[0].elapsed or 1e-9
        bar.update(task, completed=p.done, total=p.total, rate=p.done / elapsed, cost=p.cost, failed=p.failed)

    return bar, update


def run_judge(config: Path, overrides: RunOverrides, *, dry_run: bool, progress: bool | None, as_json: bool,
              worker: bool = False, executor: str | None = None, workers: int = 1, address: str | None = None) -> None:
    """The body of ``judgewise judge`` (importable for tests): load the config with the overrides, run it
    (:func:`judgewise.pipeline.run_config`, as a worker with ``worker``), print the plan and the summary."""
    from judgewise.commands import runs  # the commands layer loads pandas (and with it pyarrow)

    quiet_http_logs()
    cfg = runs.load_judge_config(config, overrides, executor=executor, workers=workers)

    def on_plan(plan) -> None:  # before any call
        say(err(), plan.line(dry_run))

    if executor is not None:
        summaries = runs.judge_on_executor(cfg, dry_run=dry_run, executor=executor, workers=workers, address=address,
                                           on_plan=on_plan)
        return None if summaries is None else _print_workers(summaries, as_json)
    outcome = runs.judge_config(cfg, dry_run=dry_run, worker=worker, on_plan=on_plan,
                                with_progress=lambda total, run: run_with_progress(progress, total, run))
    if outcome.dry_run:
        if as_json:
            print(json.dumps(runs.dry_run_dict(outcome)))
        return
    if as_json:
        print(json.dumps(outcome.summary, default=str))
    else:
        for line in summary_lines(outcome, outcome.summary.get("output")):
            out().print(line, markup=False)
    outcome.check()


def _print_workers(summaries: list[dict], as_json: bool) -> None:
    """``--executor ray --workers N``: one summary line per worker and what the store holds."""
    if as_json:
        print(json.dumps(summaries, default=str))
        return
    for i, s in enumerate(summaries, 1):
        out().print(f"worker {i}: {s['judged']} judged, {s['failed']} failed, {s.get('by_others', 0)} by the others, "
                  f"{s['calls_made']} calls, {s['elapsed_s']:.1f}s", markup=False)
    last = summaries[-1]
    out().print(f"store now holds for this job: {last['ok_total']} ok, {last['failed_total']} failed", markup=False)


LINE_WORDS = {"judging": ("judged", "games"), "generating": ("generated", "answers")}  # label → (verb, noun)


def run_with_progress(progress: bool | None, total: int, run, label: str = "judging"):
    """Call ``run(update)`` under a progress bar on a terminal, with progress lines on any other stderr (a log),
    or with neither (:func:`judgewise.cli.progress_lines.progress_mode`)."""
    mode = progress_mode(progress, err())
    if mode is None:
        return run(None)
    if mode == "lines":
        with ProgressLines(err(), *LINE_WORDS[label]) as lines:
            return run(lambda p: lines.show(p.done, p.total, p.failed, cost=p.cost))
    bar, update = _progress_bar(total, label)
    with bar:
        return run(update)


def register(app: typer.Typer) -> None:
    """Add ``judge`` and the ``store`` group to the app."""

    @app.command("judge")
    @options_command(RunOverrides, {**OVERRIDE_FLAGS, "output": JUDGMENTS_OUTPUT, "retry_failed": RetryFailed})
    def judge(config: Config, dry_run: DryRun = False, progress: ShowProgress = None, as_json: Json = False,
              worker: bool = typer.Option(False, "--worker", help="Be one of many workers of this job on a shared "
                                          "PostgreSQL store (any machine); return when every game is stored."),
              executor: str = typer.Option(None, "--executor", help="Start --workers workers there: ray."),
              workers: int = typer.Option(1, "--workers", help="How many workers --executor starts."),
              address: str = typer.Option(None, "--ray-address", help="Ray cluster address (default: local)."),
              *, options: RunOverrides) -> None:
        """Judge the comparisons a config describes; results go to the store as they arrive."""
        run_judge(config, options, dry_run=dry_run, progress=progress, as_json=as_json, worker=worker,
                  executor=executor, workers=workers, address=address)

    register_store(app)

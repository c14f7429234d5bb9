"""``judgewise judge --config run.yaml`` (dry run, progress bar or lines, summary; ``--worker`` on a shared store)
and the ``judgewise store`` group (:mod:`judgewise.cli.store_cmd`).

Every command reports failure counts. ``judge`` prints the dry-run estimate before any call; with
``--dry-run`` it stops there. A rerun of the same config makes no call for games already stored; games
stored as failed are judged again only with ``--retry-failed``. With ``--worker`` (a PostgreSQL store) this
process is one of any number of workers of the job; ``--executor ray --workers N`` starts N of them on Ray.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgewise.cli.console import err, out, quiet_http_logs
from judgewise.cli.options import (OVERRIDE_FLAGS, Config, DryRun, Json, RetryFailed, ShowProgress,
                                   options_command)
from judgewise.cli.store_cmd import register as register_store
from judgewise.commands.display import say
from judgewise.commands.options import RunOverrides
from judgewise.commands.progress import run_with_progress
from judgewise.commands.text import json_text, panel_run_lines, summary_lines, worker_lines

JUDGMENTS_OUTPUT = Annotated[str, typer.Option("--output", "-o", help="Write the judgments (.parquet or .jsonl).")]


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
        if summaries is not None and as_json:
            print(json_text(summaries, indent=None))
        elif summaries is not None:
            _print_lines(worker_lines(summaries))
        return
    outcome = runs.judge_config(cfg, dry_run=dry_run, worker=worker, on_plan=on_plan,
                                with_progress=lambda total, run: run_with_progress(err(), progress, total, run))
    if outcome.dry_run:
        if as_json:
            print(json_text(runs.dry_run_dict(outcome), indent=None))
        return
    if as_json:
        print(json_text(outcome.summary, indent=None))
    elif isinstance(outcome, runs.PanelOutcome):
        _print_lines(panel_run_lines(outcome))
    else:
        _print_lines(summary_lines(outcome, outcome.summary.get("output")))
    outcome.check()


def _print_lines(lines: list[str]) -> None:
    for line in lines:
        out().print(line, markup=False)


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

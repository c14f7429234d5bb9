"""``judgewise judge --config run.yaml`` (dry run, progress bar, summary) and ``judgewise store export|stats``.

Every command reports failure counts. ``judge`` prints the dry-run estimate before any call; with
``--dry-run`` it stops there. A rerun of the same config makes no call for games already stored; games
stored as failed are judged again only with ``--retry-failed``.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from judgewise.cli.richtext import quiet_http_logs, say
from judgewise.pipeline.text import store_stats_lines, summary_lines

err = Console(stderr=True, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)


def _progress_bar(total: int):
    """A rich progress bar on stderr (done/total, rate, ETA, cost so far, failures) and its callback."""
    bar = Progress(TextColumn("judging"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[rate]:.1f}/s"), TimeElapsedColumn(), TextColumn("ETA"),
                   TimeRemainingColumn(), TextColumn("${task.fields[cost]:.4f}"),
                   TextColumn("[red]{task.fields[failed]} failed"), console=err, transient=False)
    task = bar.add_task("judging", total=total, rate=0.0, cost=0.0, failed=0)

    def update(p) -> None:
        elapsed = bar.tasks[0].elapsed or 1e-9
        bar.update(task, completed=p.done, total=p.total, rate=p.done / elapsed, cost=p.cost, failed=p.failed)

    return bar, update


def run_judge(config: Path, *, dry_run: bool, retry_failed: bool, store: str | None, output: str | None,
              max_calls: int | None, max_cost: float | None, concurrency: int | None, progress: bool | None,
              as_json: bool) -> None:
    """The body of ``judgewise judge`` (importable for tests): load the config with the overrides, run it
    (:func:`judgewise.pipeline.run_config`), print the plan and the summary."""
    from judgewise.pipeline import RoundsPlan, load_with_overrides, run_config

    quiet_http_logs()
    cfg = load_with_overrides(config, store=store, output=output, retry_failed=retry_failed, max_calls=max_calls,
                              max_cost=max_cost, concurrency=concurrency)
    outcome = run_config(cfg, dry_run=dry_run, on_plan=lambda plan: say(err, plan.line()),  # before any call
                         with_progress=lambda total, run: run_with_progress(progress, total, run))
    if outcome.dry_run:
        if as_json:
            extra = {} if isinstance(outcome.plan, RoundsPlan) else {"skipped_comparisons": len(outcome.skipped)}
            print(json.dumps({"dry_run": outcome.plan.as_dict(), **extra}))
        return
    if as_json:
        print(json.dumps(outcome.summary, default=str))
    else:
        for line in summary_lines(outcome.summary, outcome.summary.get("output")):
            out.print(line, markup=False)
    outcome.check()


def run_with_progress(progress: bool | None, total: int, run):
    """Call ``run(update)`` under a progress bar when wanted (default: stderr is a terminal)."""
    show = progress if progress is not None else err.is_terminal
    if not show:
        return run(None)
    bar, update = _progress_bar(total)
    with bar:
        return run(update)


def register(app: typer.Typer) -> None:
    """Add ``judge`` and the ``store`` group to the app."""

    @app.command("judge")
    def judge(config: Path = typer.Option(..., "--config", "-c", help="Run config (YAML); see README 'Judging'."),
              dry_run: bool = typer.Option(False, "--dry-run", help="Print calls, tokens, cost and time; call nothing."),
              retry_failed: bool = typer.Option(False, "--retry-failed", help="Judge games stored as failed again."),
              store: str = typer.Option(None, "--store", help="Store file (overrides the config)."),
              output: str = typer.Option(None, "--output", "-o", help="Write the judgments (.parquet or .jsonl)."),
              max_calls: int = typer.Option(None, "--max-calls", help="Stop before exceeding this many calls."),
              max_cost: float = typer.Option(None, "--max-cost", help="Stop before exceeding this cost ($)."),
              concurrency: int = typer.Option(None, "--concurrency", help="Calls in flight (overrides config)."),
              progress: bool = typer.Option(None, "--progress/--no-progress", help="Progress bar (default: on a TTY)."),
              as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout.")) -> None:
        """Judge the comparisons a config describes; results go to the store as they arrive."""
        run_judge(config, dry_run=dry_run, retry_failed=retry_failed, store=store, output=output,
                  max_calls=max_calls, max_cost=max_cost, concurrency=concurrency, progress=progress,
                  as_json=as_json)

    store_app = typer.Typer(help="Inspect and export a judgment store.", no_args_is_help=True)
    app.add_typer(store_app, name="store")

    @store_app.command("export")
    def export(store: Path = typer.Argument(..., help="Store file."),
               output: Path = typer.Option(..., "--output", "-o", help="out.parquet or out.jsonl"),
               only_ok: bool = typer.Option(False, "--only-ok", help="Leave out games stored as failed.")) -> None:
        """Export the store as the canonical judgments table (one row per game, + store columns)."""
        from judgewise.pipeline.inputs import export_store

        info = export_store(store, output, only_ok=only_ok)
        err.print(f"exported {info['rows']} rows to {info['output']} ({info['failed']} failed games in the store"
                  f"{', left out' if only_ok else ', kept with outcome empty and their error'})",
                  highlight=False, markup=False)

    @store_app.command("stats")
    def stats(store: Path = typer.Argument(..., help="Store file."),
              as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
        """Counts ok/failed, calls, tokens and cost, by judge and by model."""
        from judgewise.judges.store import JudgmentStore

        with JudgmentStore.open_readonly(store) as st:  # refuses a file that is not a store, never writes to it
            s = st.stats()
        if as_json:
            print(json.dumps(s))
            return
        for line in store_stats_lines(s):
            out.print(line, markup=False)

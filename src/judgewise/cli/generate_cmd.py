"""``judgewise generate --config gen.yaml``: answers of every configured model to every prompt, stored as they arrive.

Parse the options → :func:`judgewise.pipeline.generate.generate` → print the plan (before any call), progress
(stderr: a bar on a terminal, lines in a log), and the summary. ``--dry-run`` stops after the plan; ``--json``
prints the summary (or the plan) as JSON. A rerun makes no call for answers already stored.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from judgewise.cli.console import err, out
from judgewise.cli.judge_cmd import run_with_progress
from judgewise.cli.progress_lines import PROGRESS_HELP
from judgewise.cli.richtext import quiet_http_logs, say



def generate_command(
    config: Path = typer.Option(..., "--config", "-c", help="Generate config (YAML); see README 'Generating answers'."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the answers, calls and bounds; call nothing."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Generate answers stored as failed again."),
    store: str = typer.Option(None, "--store", help="Store file (overrides the config)."),
    output: str = typer.Option(None, "--output", "-o", help="Answers file (.jsonl/.parquet) or folder (overrides)."),
    format: str = typer.Option(None, "--format", help="responses | arena-hard | mtbench (overrides the config)."),
    max_calls: int = typer.Option(None, "--max-calls", help="Stop before exceeding this many calls."),
    max_cost: float = typer.Option(None, "--max-cost", help="Stop before exceeding this cost ($)."),
    concurrency: int = typer.Option(None, "--concurrency", help="Calls in flight (overrides config)."),
    progress: bool = typer.Option(None, "--progress/--no-progress", help=PROGRESS_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout.")) -> None:
    """Generate the answers a config asks for (single- or multi-turn), through any OpenAI-compatible endpoint or the
    embedded model; write them as a responses table or Arena-Hard / FastChat answer files."""
    from judgewise.pipeline.generate import generate
    from judgewise.pipeline.generate_config import load_generate_with_overrides
    from judgewise.commands.text import generate_lines

    quiet_http_logs()
    cfg = load_generate_with_overrides(config, store=store, output=output, format=format, retry_failed=retry_failed,
                                       max_calls=max_calls, max_cost=max_cost, concurrency=concurrency)
    result = generate(cfg, dry_run=dry_run, on_plan=lambda plan: say(err(), plan.line()),
                      with_progress=lambda total, run: run_with_progress(progress, total, run, "generating"))
    if result.dry_run:
        if as_json:
            print(json.dumps({"dry_run": result.plan.as_dict()}))
        return
    if as_json:
        print(json.dumps({**result.summary, "written": result.written}, default=str))
        return
    for line in generate_lines(result.summary, result.written):
        say(out(), line)


def register(app: typer.Typer) -> None:
    """Add ``generate`` to the app."""
    app.command("generate")(generate_command)

"""``judgewise generate --config gen.yaml``: answers of every configured model to every prompt, stored as they arrive.

Parse the options → :func:`judgewise.pipeline.generate.generate` → print the plan (before any call), progress
(stderr: a bar on a terminal, lines in a log), and the summary. ``--dry-run`` stops after the plan; ``--json``
prints the summary (or the plan) as JSON. A rerun makes no call for answers already stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgewise.cli.console import err, out, quiet_http_logs
from judgewise.cli.options import OVERRIDE_FLAGS, DryRun, Json, RetryFailed, ShowProgress, options_command
from judgewise.commands.display import say
from judgewise.commands.options import RunOverrides
from judgewise.commands.progress import run_with_progress
from judgewise.commands.text import generate_lines, json_text

ANSWERS_OUTPUT = Annotated[str, typer.Option("--output", "-o", help="Answers file (.jsonl/.parquet) or folder "
                                                                     "(overrides).")]


@options_command(RunOverrides, {**OVERRIDE_FLAGS, "retry_failed": RetryFailed, "output": ANSWERS_OUTPUT})
def generate_command(
    config: Path = typer.Option(..., "--config", "-c", help="Generate config (YAML); see README 'Generating answers'."),
    dry_run: DryRun = False,
    format: str = typer.Option(None, "--format", help="responses | arena-hard | mtbench (overrides the config)."),
    progress: ShowProgress = None,
    as_json: Json = False,
    *,
    options: RunOverrides,
) -> None:
    """Generate the answers a config asks for (single- or multi-turn), through any OpenAI-compatible endpoint or the
    embedded model; write them as a responses table or Arena-Hard / FastChat answer files."""
    from judgewise.commands.runs import generate_of  # the commands layer loads pandas (and with it pyarrow)

    quiet_http_logs()
    result = generate_of(config, options, format=format, dry_run=dry_run, on_plan=lambda plan: say(err(), plan.line()),
                         with_progress=lambda total, run: run_with_progress(err(), progress, total, run, "generating"))
    if result.dry_run:
        if as_json:
            print(json_text({"dry_run": result.plan.as_dict()}, indent=None))
        return
    if as_json:
        print(json_text({**result.summary, "written": result.written}, indent=None))
        return
    for line in generate_lines(result.summary, result.written):
        say(out(), line)


def register(app: typer.Typer) -> None:
    """Add ``generate`` to the app."""
    app.command("generate")(generate_command)

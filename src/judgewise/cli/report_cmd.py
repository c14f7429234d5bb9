"""``judgewise report`` (one-file offline HTML or Markdown report) and ``judgewise serve`` (read-only explorer)."""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from judgewise.analysis.panel_text import PANEL_FLAGS
from judgewise.cli.options import Bootstrap, Judge, L2, Output, PoolJudges, Responses, Seed, options_command
from judgewise.report.options import ReportOptions

PANEL = {name: Annotated[str, typer.Option(flag, help=text)] for name, (_, flag, text) in PANEL_FLAGS.items()}
"""``serve``'s panel flags, as ``report`` declares them (analysis.panel_text.PANEL_FLAGS)."""
STUDY = Annotated[Path, typer.Option("--study", help="Saved `judgewise study --json` output to plot.")]
REPORT_FLAGS = {"study": STUDY, "bootstrap": Bootstrap, "seed": Seed, "judge": Judge, "pool_judges": PoolJudges,
                "l2": L2}


def register(app: typer.Typer) -> None:
    """Add ``report`` and ``serve`` to the app."""

    @app.command("report")
    @options_command(ReportOptions, REPORT_FLAGS)
    def report(
        sources: list[Path] = typer.Argument(..., help="Judgments file(s)/dir (anything `rank` reads) or a judging store."),
        output: Output = Path("report.html"),
        format: str = typer.Option("html", "--format", help="html (one self-contained file) or md (Markdown + SVG)."),
        responses: Responses = None,
        input_format: str = typer.Option(None, "--input-format", help="Force the input format (as `rank --format`)."),
        partial: bool = typer.Option(False, "--partial", help="When a section fails, still write the others "
                                                              "(the command exits non-zero all the same)."),
        *,
        options: ReportOptions,
    ) -> None:
        """Write a one-file offline HTML report (or Markdown + figures) of a run."""
        from judgewise.report import write_report

        command = "judgewise " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        path = write_report([str(s) for s in sources], output, replace(options, command=command), format=format,
                            input_format=input_format, responses=responses, partial=partial)
        typer.echo(f"report written: {path} ({path.stat().st_size / 1024:.0f} KB)")

    @app.command("serve")
    def serve_cmd(
        sources: list[Path] = typer.Argument(..., help="A judging store or judgments file(s)/dir."),
        port: int = typer.Option(8765, "--port", help="Port (0 = any free port)."),
        host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (default: this machine only)."),
        responses: Responses = None,
        bootstrap: Bootstrap = None,
        seed: Seed = None,
        judge: Judge = None,
        pool_judges: PoolJudges = False,
        panel: PANEL["panel"] = None,
        panel_rule: PANEL["panel_rule"] = PANEL_FLAGS["panel_rule"][0],
        panel_split: PANEL["panel_split"] = PANEL_FLAGS["panel_split"][0],
        panel_reference: PANEL["panel_reference"] = None,
    ) -> None:
        """Serve a local read-only explorer of a run (leaderboard, prompts, matches, diagnostics)."""
        from judgewise.report.explorer import serve

        def ready(url: str) -> None:
            typer.echo(f"judgewise explorer (read-only) at {url}  — Ctrl+C to stop", err=False)
            sys.stdout.flush()

        serve([str(s) for s in sources], host=host, port=port, responses=responses, bootstrap=bootstrap,
              seed=seed, ready=ready, judge=judge, pool_judges=pool_judges,
              panel={"panel": panel, "panel_rule": panel_rule, "panel_split": panel_split,
                     "panel_reference": panel_reference})

"""``judgewise report`` (one-file offline HTML or Markdown report) and ``judgewise serve`` (read-only explorer)."""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from judgewise.analysis.panel_text import PanelFlags
from judgewise.cli.options import Bootstrap, Judge, L2, Output, PoolJudges, Responses, Seed, options_command
from judgewise.report.options import ReportOptions

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
    @options_command(PanelFlags)
    def serve_cmd(
        sources: list[Path] = typer.Argument(..., help="A judging store or judgments file(s)/dir."),
        port: int = typer.Option(8765, "--port", help="Port (0 = any free port)."),
        host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (default: this machine only)."),
        responses: Responses = None,
        bootstrap: Bootstrap = None,
        seed: Seed = None,
        judge: Judge = None,
        pool_judges: PoolJudges = False,
        *,
        options: PanelFlags,
    ) -> None:
        """Serve a local read-only explorer of a run (leaderboard, prompts, matches, diagnostics)."""
        from judgewise.report.explorer import serve

        serve([str(s) for s in sources], host=host, port=port, responses=responses, bootstrap=bootstrap,
              seed=seed, judge=judge, pool_judges=pool_judges, panel=options, ready=lambda url: (typer.echo(
                  f"judgewise explorer (read-only) at {url}  — Ctrl+C to stop"), sys.stdout.flush()))

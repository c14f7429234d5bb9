"""``judgewise report`` (one-file offline HTML or Markdown report) and ``judgewise serve`` (read-only explorer)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Add ``report`` and ``serve`` to the app."""

    @app.command("report")
    def report(
        sources: list[Path] = typer.Argument(..., help="Judgments file(s)/dir (anything `rank` reads) or a judging store."),
        output: Path = typer.Option(Path("report.html"), "-o", "--output", help="HTML file, or folder for --format md."),
        format: str = typer.Option("html", "--format", help="html (one self-contained file) or md (Markdown + SVG)."),
        gold: Path = typer.Option(None, "--gold", help="Gold ranking (JSON list of {model, score} or a leaderboard "
                                                        "CSV) for the anchor-quality inverted U."),
        study: Path = typer.Option(None, "--study", help="Saved `judgewise study --json` output to plot."),
        responses: Path = typer.Option(None, "--responses", help="Model outputs (prompt_id, model, text) for "
                                                                  "length/echo/gaming diagnostics of a store."),
        method: str = typer.Option("auto", "--method", help="auto (win rate vs the anchor for anchor designs, "
                                                            "else bt), winrate, bt, elo or trueskill."),
        input_format: str = typer.Option(None, "--input-format", help="Force the input format (as `rank --format`)."),
        bootstrap: int = typer.Option(200, "--bootstrap", help="Bootstrap rounds for the intervals."),
        seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
        title: str = typer.Option("judgewise report", "--title"),
        judge: str = typer.Option(None, "--judge", help="Report only this judge's rows (the rest counted as skipped)."),
        pool_judges: bool = typer.Option(False, "--pool-judges", help="Pool several judges into one leaderboard."),
        l2: float = typer.Option(None, "--l2", help="BT ridge (default: the MLE, or l2=0.01, a weak prior, only "
                                                    "on separated data; 0 refuses separated data)."),
        partial: bool = typer.Option(False, "--partial", help="When a section fails, still write the others "
                                                              "(the command exits non-zero all the same)."),
    ) -> None:
        """Write a one-file offline HTML report (or Markdown + figures) of a run."""
        from judgewise.report import write_report

        command = "judgewise " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        srcs = [str(s) for s in sources]
        path = write_report(srcs, output, format=format, gold=gold, study=study, method=method,
                            bootstrap=bootstrap, seed=seed, title=title, command=command,
                            input_format=input_format, responses=responses, judge=judge, pool_judges=pool_judges,
                            l2=l2, partial=partial)
        typer.echo(f"report written: {path} ({path.stat().st_size / 1024:.0f} KB)")

    @app.command("serve")
    def serve_cmd(
        sources: list[Path] = typer.Argument(..., help="A judging store or judgments file(s)/dir."),
        port: int = typer.Option(8765, "--port", help="Port (0 = any free port)."),
        host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (default: this machine only)."),
        responses: Path = typer.Option(None, "--responses", help="Model outputs to show on prompt pages."),
        bootstrap: int = typer.Option(100, "--bootstrap", help="Bootstrap rounds for the leaderboard intervals."),
        seed: int = typer.Option(0, "--seed"),
        judge: str = typer.Option(None, "--judge", help="Show only this judge's rows."),
        pool_judges: bool = typer.Option(False, "--pool-judges", help="Pool several judges into one leaderboard."),
    ) -> None:
        """Serve a local read-only explorer of a run (leaderboard, prompts, matches, diagnostics)."""
        from judgewise.report.explorer import serve

        def ready(url: str) -> None:
            typer.echo(f"judgewise explorer (read-only) at {url}  — Ctrl+C to stop", err=False)
            sys.stdout.flush()

        serve([str(s) for s in sources], host=host, port=port, responses=responses, bootstrap=bootstrap,
              seed=seed, ready=ready, judge=judge, pool_judges=pool_judges)

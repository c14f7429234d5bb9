"""``judgewise demo`` (rank the shipped AlpacaEval slice, then judge a tiny real job offline) and ``version``.

Runs on embedded defaults only: the slice in ``examples/alpacaeval`` and the embedded Gemma 3 270M judge;
nothing from ``../shared`` and no network. The second part's verdicts come from a 270M-parameter model and
are not meaningful (it is strongly position-biased): the point is to show the whole pipeline working.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from judgewise.cli.richtext import plain, say

if TYPE_CHECKING:
    from judgewise.pipeline.demo import DemoRun

out = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 120)  # tables unsqueezed when piped


def _print_leaderboard(title: str, ranking, report) -> None:
    from judgewise.cli.rank_cmd import render_table

    out.rule(plain(title))  # the title carries the user's --slice path
    render_table(ranking, ranking.to_records(), report, out)


def _print_job(demo: DemoRun) -> None:
    from judgewise.io.tables import ReadReport
    from judgewise.pipeline.demo import REAL_JUDGE_HINT, first_shown_win_rate
    from judgewise.pipeline.text import summary_lines

    summary = demo.run.summary()
    out.rule("2 · a tiny real job judged offline by the embedded judge (Gemma 3 270M)")
    for line in summary_lines(summary, None):
        out.print(line, highlight=False, markup=False)
    calls = max(summary["calls_made"], 1)
    out.print(f"embedded judge: {summary['calls_made']} calls in {demo.timings['judge_s']:.1f}s "
              f"({calls / max(demo.timings['judge_s'], 1e-9):.2f} calls/s), parse failures: {summary['failed']}; "
              f"store: {demo.store_path}", highlight=False, markup=False)
    first_wins = first_shown_win_rate(demo.run.judgments)
    if demo.judged is not None:
        report = ReadReport(source=str(demo.store_path), format="judgewise store",
                            rows_read=len(demo.run.judgments), rows_used=summary["ok_total"])
        report.rows_skipped = summary["failed_total"]
        _print_leaderboard("Bradley–Terry ranking of the tiny job (Elo scale)", demo.judged, report)
    say(out, f"The embedded judge is a 270M-parameter model: it chose the response shown first in {first_wins:.0%} "
             "of games (position bias), so this ranking says nothing about the models. It is here to show judging, "
             "storing and ranking working offline.", label="These verdicts are not meaningful.", style="bold yellow")
    out.print(REAL_JUDGE_HINT, highlight=False, markup=False)


def run_demo(*, slice_path: Path | None, out_dir: Path, judge: bool, threads: int, bootstrap: int, seed: int,
             n_prompts: int, max_chars: int, show_progress: bool | None) -> DemoRun:
    """The demo, part by part (library steps in :mod:`judgewise.pipeline.demo`), printing as it goes; returns
    what it made."""
    from judgewise.cli.judge_cmd import run_with_progress
    from judgewise.pipeline.demo import DEMO_MODELS, DemoRun, find_slice, judge_job, pick_job, rank_job, rank_slice
    from judgewise.report.demo_reports import write_demo_report

    start = time.perf_counter()
    demo = DemoRun(slice_path=find_slice(slice_path), out_dir=out_dir)
    demo.leaderboard, demo.slice_table = rank_slice(demo.slice_path, bootstrap=bootstrap, seed=seed)
    demo.timings["rank_slice_s"] = time.perf_counter() - start
    _print_leaderboard(f"1 · AlpacaEval 2.0 slice ({demo.slice_path}): win rate vs "
                       f"{demo.slice_table.extras.get('anchor')}, judged by GPT-4-turbo",
                       demo.leaderboard, demo.slice_table.report)
    if judge:
        comparisons = pick_job(demo.slice_table, models=DEMO_MODELS, n_prompts=n_prompts, max_chars=max_chars,
                               seed=seed)
        demo.store_path = out_dir / "judgments.sqlite"
        t0 = time.perf_counter()
        demo.run = run_with_progress(show_progress, 2 * len(comparisons), lambda update: judge_job(
            comparisons, demo.store_path, threads=threads, progress=update))
        demo.timings["judge_s"] = time.perf_counter() - t0
        demo.judged = rank_job(demo.run, bootstrap=bootstrap, seed=seed)
        _print_job(demo)
    for path in write_demo_report(demo):
        out.print(f"report: {path.resolve()}", highlight=False, markup=False)
    explore = demo.store_path if demo.store_path is not None else demo.slice_path
    extra = f" --responses {demo.slice_path}" if demo.store_path is not None else ""
    out.print(f"explore the run in your browser: judgewise serve {explore}{extra}", highlight=False, markup=False)
    demo.timings["total_s"] = time.perf_counter() - start
    out.print(f"demo finished in {demo.timings['total_s']:.1f}s", highlight=False, markup=False)
    return demo


def register(app: typer.Typer) -> None:
    """Add ``demo`` and ``version`` to the app."""

    @app.command()
    def version() -> None:
        """Print the judgewise version."""
        from judgewise import __version__

        typer.echo(__version__)

    @app.command()
    def demo(
        slice_path: Path = typer.Option(None, "--slice", help="AlpacaEval results dir (default: examples/alpacaeval)."),
        output: Path = typer.Option(Path("demo-output"), "--output", "-o", help="Folder for the store (and report)."),
        judge: bool = typer.Option(True, "--judge/--no-judge", help="Also judge a tiny job with the embedded judge."),
        prompts: int = typer.Option(8, help="Instructions in the tiny job (4 models, all pairs, both orders)."),
        max_chars: int = typer.Option(700, help="Only instructions whose instruction+response fit in this."),
        threads: int = typer.Option(os.cpu_count() or 1, help="CPU threads for the embedded judge."),
        bootstrap: int = typer.Option(1000, help="Bootstrap rounds for the intervals."),
        seed: int = typer.Option(0, help="Seed for the prompt draw and the bootstrap."),
        progress: bool = typer.Option(None, "--progress/--no-progress", help="Progress bar (default: on a TTY)."),
    ) -> None:
        """Rank the shipped AlpacaEval slice, then judge, store and rank a tiny job with the embedded judge."""
        run_demo(slice_path=slice_path, out_dir=output, judge=judge, threads=threads, bootstrap=bootstrap,
                 seed=seed, n_prompts=prompts, max_chars=max_chars, show_progress=progress)

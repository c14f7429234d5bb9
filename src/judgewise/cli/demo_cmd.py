"""``judgewise demo`` (rank the shipped AlpacaEval slice, then ``judgewise evaluate`` a tiny job offline), ``version``.

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


def _evaluate_job(demo: DemoRun, *, threads: int, bootstrap: int, seed: int, n_prompts: int, max_chars: int,
                  show_progress: bool | None) -> None:
    """Part 2: write the tiny evaluation's run config, run it as ``judgewise evaluate`` does, print the same."""
    from judgewise.cli.evaluate_cmd import err, print_result, run_evaluation
    from judgewise.pipeline.config import load_config
    from judgewise.pipeline.demo import DEMO_MODELS, demo_config, pick_prompts, write_demo_config

    prompt_ids = pick_prompts(demo.slice_table, models=DEMO_MODELS, n_prompts=n_prompts, max_chars=max_chars,
                              seed=seed)
    mapping = demo_config(demo.slice_path, demo.out_dir, prompt_ids, threads=threads, seed=seed)
    demo.config_path = write_demo_config(demo.out_dir, mapping)
    demo.store_path = demo.out_dir / mapping["store"]  # the config's paths are relative to its folder
    cfg = load_config(demo.config_path)
    out.rule("2 · a tiny evaluation judged offline by the embedded judge (Gemma 3 270M)")
    out.print(f"run config: {demo.config_path} ({len(DEMO_MODELS)} models × {len(prompt_ids)} instructions, all "
              "pairs, both orders, judge backend: local)", highlight=False, markup=False)
    t0 = time.perf_counter()
    demo.evaluation = run_evaluation(cfg, show_progress=err.is_terminal if show_progress is None else show_progress,
                                     bootstrap=bootstrap)
    demo.timings["judge_s"] = time.perf_counter() - t0
    print_result(demo.evaluation, cfg.seed, out)
    _print_caveats(demo)


def _print_caveats(demo: DemoRun) -> None:
    """The embedded judge's speed, why its verdicts mean nothing, how to rerun, how to use a real judge."""
    from judgewise.pipeline.demo import REAL_JUDGE_HINT

    result, seconds = demo.evaluation, demo.timings["judge_s"]
    paid = result.paid_calls
    out.print(f"embedded judge: {paid} calls in {seconds:.1f}s ({paid / max(seconds, 1e-9):.2f} calls/s), parse "
              f"failures: {result.trust['failed']}; store: {demo.store_path}", highlight=False, markup=False)
    position = result.trust.get("position_bias_first_shown_wins")
    shown = f"{position['estimate']:.0%}" if position else "—"
    say(out, f"The embedded judge is a 270M-parameter model: the response shown first won {shown} of its games "
             "(position bias), so this ranking says nothing about the models. It is here to show judging, storing, "
             "stopping and ranking working offline.", label="These verdicts are not meaningful.", style="bold yellow")
    out.print(f"rerun it (every verdict is stored, so 0 calls): judgewise evaluate --config {demo.config_path}",
              highlight=False, markup=False)
    out.print(REAL_JUDGE_HINT, highlight=False, markup=False)


def run_demo(*, slice_path: Path | None, out_dir: Path, judge: bool, threads: int, bootstrap: int, seed: int,
             n_prompts: int, max_chars: int, show_progress: bool | None) -> DemoRun:
    """The demo, part by part (library steps in :mod:`judgewise.pipeline.demo`; part 2 is ``judgewise
    evaluate``), printing as it goes; returns what it made."""
    from judgewise.pipeline.demo import DemoRun, find_slice, rank_slice
    from judgewise.report.demo_reports import write_demo_report

    start = time.perf_counter()
    demo = DemoRun(slice_path=find_slice(slice_path), out_dir=out_dir)
    demo.leaderboard, demo.slice_table = rank_slice(demo.slice_path, bootstrap=bootstrap, seed=seed)
    demo.timings["rank_slice_s"] = time.perf_counter() - start
    _print_leaderboard(f"1 · AlpacaEval 2.0 slice ({demo.slice_path}): win rate vs "
                       f"{demo.slice_table.extras.get('anchor')}, judged by GPT-4-turbo",
                       demo.leaderboard, demo.slice_table.report)
    if judge:
        _evaluate_job(demo, threads=threads, bootstrap=bootstrap, seed=seed, n_prompts=n_prompts,
                      max_chars=max_chars, show_progress=show_progress)
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
        judge: bool = typer.Option(True, "--judge/--no-judge",
                                   help="Also evaluate a tiny job with the embedded judge."),
        prompts: int = typer.Option(8, help="Instructions in the tiny evaluation (4 models, all pairs, both orders)."),
        max_chars: int = typer.Option(700, help="Only instructions whose instruction+response fit in this."),
        threads: int = typer.Option(os.cpu_count() or 1, help="CPU threads for the embedded judge."),
        bootstrap: int = typer.Option(1000, help="Bootstrap rounds for the intervals."),
        seed: int = typer.Option(0, help="Seed for the prompt draw and the bootstrap."),
        progress: bool = typer.Option(None, "--progress/--no-progress", help="Progress bar (default: on a TTY)."),
    ) -> None:
        """Rank the shipped AlpacaEval slice, then evaluate a tiny job with the embedded judge (writes its run.yaml)."""
        run_demo(slice_path=slice_path, out_dir=output, judge=judge, threads=threads, bootstrap=bootstrap,
                 seed=seed, n_prompts=prompts, max_chars=max_chars, show_progress=progress)

"""``judgewise demo``: the main job on real verdicts (``judgewise evaluate`` with a replay of GPT-4-turbo's AlpacaEval
verdicts), then the embedded judge judging, storing and resuming a tiny job offline; and ``judgewise version``.

Part 1 needs only the base install; part 2 needs ``judgewise[local]`` (``make demo`` builds it between the two
parts). Both run the shipped run configs (``examples/evaluate-replay.yaml``, ``examples/evaluate-embedded.yaml``)
exactly as ``judgewise evaluate --config`` does, with their stores in the output folder. Part 2's verdicts come
from a 270M-parameter model and are not meaningful (it is strongly position-biased).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import os
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import typer

import judgewise
from judgewise.cli.console import out, piped_width
from judgewise.cli.evaluate_cmd import print_result, run_evaluation
from judgewise.cli.options import Output, ShowProgress
from judgewise.cli.richtext import say
from judgewise.commands.text import discordant_text

if TYPE_CHECKING:
    from judgewise.commands.demo import DemoRun


def _line(text: str) -> None:
    out().print(text, highlight=False, markup=False)


def _replay_part(demo: DemoRun, steps, evaluate) -> None:
    """Part 1: ``judgewise evaluate`` on the replay config from an empty store, then the check against every
    recorded verdict and AlpacaEval's own leaderboard (``steps``: :mod:`judgewise.commands.demo`; ``evaluate``:
    a config → its evaluation, with progress)."""
    config = demo.examples / steps.REPLAY_CONFIG
    demo.replay_store = demo.out_dir / "replay.sqlite"
    cfg = steps.fresh_config(config, demo.replay_store)
    out().rule(f"1 · the main job on real verdicts: rank {len(cfg.models)} AlpacaEval models, stop at the target",
             style="bold")
    _line("judge: GPT-4-turbo's recorded AlpacaEval 2.0 preferences, replayed as pairwise verdicts (Anchor §4.3: "
          "on an instruction, the answer GPT-4-turbo preferred more over the shared anchor wins); offline, free")
    _line(f"$ judgewise evaluate --config {config} --store {demo.replay_store}")
    start = time.perf_counter()
    demo.replay = evaluate(cfg)
    demo.timings["replay_s"] = time.perf_counter() - start
    print_result(demo.replay, cfg.seed, out())
    demo.check = check = steps.replay_check(demo.replay, cfg)
    n_pairs = len(check.reference) * (len(check.reference) - 1) // 2
    agree = n_pairs - len(check.discordant)
    say(out(), f"all {check.all_verdicts:,} recorded verdicts rank the models {' > '.join(check.reference)}; this run "
             f"({demo.replay.calls:,} calls, {demo.replay.calls / check.all_verdicts:.1%} of them) orders {agree} of "
             f"{n_pairs} pairs the same way (Kendall τ {check.tau:.3f})"
             + discordant_text(check), label="check (possible here because every verdict is recorded):")
    say(out(), f"{' · '.join(f'{m} {s:.1f}' for m, s in check.published)} (Kendall τ of this run against it: "
             f"{check.tau_published:.3f})", label=f"AlpacaEval's own leaderboard (win rate vs its anchor, all "
                                                    f"{check.published_prompts} instructions):")
    _line(f"part 1 took {demo.timings['replay_s']:.1f}s")


def _embedded_part(demo: DemoRun, steps, evaluate, *, threads: int | None) -> None:
    """Part 2: the embedded judge on a tiny job — stopped by a budget half way, resumed, rerun with 0 new calls."""
    config = demo.examples / steps.EMBEDDED_CONFIG
    demo.embedded_store = store = demo.out_dir / "embedded.sqlite"
    cfg = steps.fresh_config(config, store)
    if threads:
        cfg = dataclasses.replace(cfg, judge={**cfg.judge, "n_threads": int(threads)})
    total = len(cfg.models) * (len(cfg.models) - 1) * len(cfg.prompt_ids)  # all pairs, both orders
    half = total // 4 * 2  # whole comparisons (both orders), about half the games
    out().rule("2 · the embedded judge (Gemma 3 270M), live and offline: judging, storing, resuming", style="bold")
    say(out(), "a 270M-parameter model mostly picks the answer shown first, so the ranking below says nothing about "
             "the models; this part shows the machinery working on your machine.",
        label="Its verdicts mean nothing:", style="bold yellow")
    _line(f"run config: {config} ({len(cfg.models)} models × {len(cfg.prompt_ids)} instructions, all pairs, both "
          f"orders: {total} games); store: {store}")
    budgets = [(f"1. judge until a budget of {half} calls stops it (as Ctrl-C would)",
              {**cfg.budget, "max_calls": half}),
             ("2. run it again: the stored verdicts are reused, only the missing games judged", dict(cfg.budget)),
             ("3. run it once more", dict(cfg.budget))]
    for what, budget in budgets:
        run_cfg = dataclasses.replace(cfg, budget=budget)
        start = time.perf_counter()
        result = evaluate(run_cfg)
        seconds = time.perf_counter() - start
        demo.steps.append((what, result, seconds))
        _line(f"{what}: {result.paid_calls} new calls, {steps.reused(result)} reused from the store, stopped: "
              f"{result.stopped} ({seconds:.1f}s)")
    demo.embedded = result
    print_result(result, cfg.seed, out())
    paid = sum(r.paid_calls for _, r, _ in demo.steps)
    judge_s = sum(s for _, r, s in demo.steps if r.paid_calls)
    _line(f"embedded judge: {paid} calls in {judge_s:.1f}s ({paid / max(judge_s, 1e-9):.2f} calls/s), the answer "
          f"shown first won {steps.position_share(result)} of its games; parse failures: {result.trust['failed']}")
    _line(f"rerun it yourself (0 new calls): judgewise evaluate --config {config} --store {store}")


def run_demo(*, examples: Path | None, out_dir: Path, replay: bool, judge: bool, threads: int | None,
             bootstrap: int, progress: bool | None) -> DemoRun:
    """The demo, part by part (library steps in :mod:`judgewise.commands.demo`; each part is ``judgewise
    evaluate`` on a shipped config), printing as it goes; returns what it made."""
    from judgewise.commands import demo as steps, runs  # the commands layer loads pandas (and with it pyarrow)
    from judgewise.report.demo_reports import write_demo_report  # the report layer loads pandas

    piped_width(120)  # tables unsqueezed when piped
    start = time.perf_counter()
    demo = steps.DemoRun(examples=steps.find_examples(examples), out_dir=out_dir)
    evaluate = partial(run_evaluation, run=runs.evaluate, progress=progress, bootstrap=bootstrap)
    if replay:
        _replay_part(demo, steps, evaluate)
    if judge and importlib.util.find_spec("llama_cpp") is None:
        say(out(), "part 2 (the embedded judge) needs the embedded runtime: pip install 'judgewise[local]' (from a "
                 "checkout, `make demo` builds it), then run `judgewise demo --no-replay`", label="skipped:")
    elif judge:
        _embedded_part(demo, steps, evaluate, threads=threads)
    report_log = logging.getLogger("judgewise.report")
    level = report_log.level
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:  # its INFO on sections that do not apply: --verbose
        report_log.setLevel(logging.WARNING)
    try:
        paths = write_demo_report(demo)
    finally:
        report_log.setLevel(level)
    for path in paths:
        _line(f"report: {path}")
    stores = [s for s in (demo.replay_store, demo.embedded_store) if s is not None]
    if stores:
        _line(f"explore a run in your browser: judgewise serve {stores[-1]} --responses {demo.examples / 'alpacaeval'}")
    if judge:
        _line(steps.REAL_JUDGE_HINT)
    demo.timings["total_s"] = time.perf_counter() - start
    _line(f"demo finished in {demo.timings['total_s']:.1f}s")
    return demo


def register(app: typer.Typer) -> None:
    """Add ``demo`` and ``version`` to the app."""

    @app.command()
    def version() -> None:
        """Print the judgewise version."""
        typer.echo(judgewise.__version__)

    @app.command()
    def demo(
        examples: Path = typer.Option(None, "--examples", help="The shipped examples folder (default: examples/ "
                                      "of the working folder or of the checkout)."),
        output: Output = Path("demo-output"),
        replay: bool = typer.Option(True, "--replay/--no-replay",
                                    help="Part 1: evaluate on replayed GPT-4-turbo verdicts (base install)."),
        judge: bool = typer.Option(True, "--judge/--no-judge",
                                   help="Part 2: the embedded judge judging, storing, resuming (judgewise[local])."),
        threads: int = typer.Option(os.cpu_count() or 1, help="CPU threads for the embedded judge."),
        bootstrap: int = typer.Option(1000, help="Bootstrap rounds for the intervals."),
        progress: ShowProgress = None,
    ) -> None:
        """Show the main job: evaluate 7 AlpacaEval models on replayed GPT-4-turbo verdicts, stopping at the target;
        then judge, store and resume a tiny job with the embedded judge (its verdicts mean nothing)."""
        run_demo(examples=examples, out_dir=output, replay=replay, judge=judge, threads=threads,
                 bootstrap=bootstrap, progress=progress)

"""``judgewise demo``: the main job on real verdicts (``judgewise evaluate`` with a replay of GPT-4-turbo's AlpacaEval
verdicts), then the embedded judge judging, storing and resuming a tiny job offline; and ``judgewise version``.

Part 1 needs only the base install; part 2 needs ``judgewise[local]`` (``make demo`` builds it between the two
parts). Both run the shipped run configs (``examples/evaluate-replay.yaml``, ``examples/evaluate-embedded.yaml``)
exactly as ``judgewise evaluate --config`` does, with their stores in the output folder. Part 2's verdicts come
from a 270M-parameter model and are not meaningful (it is strongly position-biased).
"""

from __future__ import annotations

import logging
import os
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import judgewise
from judgewise.cli.console import err, out, piped_width
from judgewise.cli.options import ShowProgress
from judgewise.commands.display import show
from judgewise.commands.progress import run_evaluation

if TYPE_CHECKING:
    from judgewise.commands.demo import DemoRun

DemoOutput = Annotated[Path, typer.Option("--output", "-o", help="The folder the demo writes its stores and reports "
                                          "to (made if missing; in an existing one, the demo's stores and reports "
                                          "are replaced).")]


def run_demo(*, examples: Path | None, out_dir: Path, replay: bool, judge: bool, threads: int | None,
             bootstrap: int, progress: bool | None) -> DemoRun:
    """The demo, part by part (its steps and lines: :mod:`judgewise.commands.demo`; each part is ``judgewise
    evaluate`` on a shipped config), printing as it goes; returns what it made."""
    from judgewise.commands import demo as steps, runs  # the commands layer loads pandas (and with it pyarrow)

    steps.check_options(out_dir, bootstrap=bootstrap, threads=threads)  # before part 1 makes anything
    piped_width(120)  # tables unsqueezed when piped
    start = time.perf_counter()
    demo = steps.DemoRun(examples=steps.find_examples(examples), out_dir=out_dir)
    evaluate = partial(run_evaluation, err(), run=runs.evaluate, progress=progress, bootstrap=bootstrap)
    if replay:  # each part printed as it runs
        show(out(), steps.replay_part(demo, evaluate))
    if judge:
        show(out(), steps.embedded_part(demo, evaluate, threads=threads))
    report_log = logging.getLogger("judgewise.report")
    level = report_log.level
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:  # its INFO on sections that do not apply: --verbose
        report_log.setLevel(logging.WARNING)
    try:
        paths = steps.write_demo_report(demo)
    finally:
        report_log.setLevel(level)
    demo.timings["total_s"] = time.perf_counter() - start
    show(out(), [*steps.closing_lines(demo, paths, judge=judge), f"demo finished in {demo.timings['total_s']:.1f}s"])
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
        output: DemoOutput = Path("demo-output"),
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

"""``judgewise evaluate --config run.yaml``: rank models at the fewest judge calls and say how far to trust it.

Parse the options → :func:`judgewise.evaluate` → print: the design and why, one progress bar over the whole run
(stderr, on a terminal, never with ``--json``; plain progress lines when stderr is a log), the ranking with 95%
intervals and CI-aware ranks, the trust block. ``--json`` prints ``{"ranking", "calls", "stopped", "design",
"trust"}``; ``--report`` writes the HTML report of the games judged. ``--add-model NEW`` (``--insertion
binary|anchor``, ``--anchor``) places NEW into the leaderboard a previous evaluate stored
(:mod:`judgewise.pipeline.add_model`): the placement's lines before the new ranking, and ``"placement"`` beside the
other keys in ``--json``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from judgewise.cli.console import err, out
from judgewise.cli.options import OVERRIDE_FLAGS, Config, Json, ShowProgress, options_command
from judgewise.cli.progress_lines import ProgressLines, progress_mode
from judgewise.cli.richtext import json_text, quiet_http_logs, say, show
from judgewise.commands.options import RunOverrides
from judgewise.commands.tables import evaluation_blocks


def _progress_bar(total: int):
    """One rich bar over the whole evaluation: games/cap, rate, ETA to the τ target or the cap, whichever comes
    first (the pipeline's EvaluateProgress.calls_to_stop at the paid-call rate), cost, failures, expected τ."""
    bar = Progress(TextColumn("evaluating"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]:.1f}/s"),
                   TimeElapsedColumn(), TextColumn("ETA {task.fields[eta]}"),
                   TextColumn("${task.fields[cost]:.4f}"), TextColumn("[red]{task.fields[failed]} failed"),
                   TextColumn("E[τ] {task.fields[tau]}"), console=err(), transient=False)
    task = bar.add_task("evaluating", total=total, rate=0.0, cost=0.0, failed=0, tau="—", eta="—")

    def update(p) -> None:
        elapsed = bar.tasks[0].elapsed or 1e-9
        tau = "—" if p.expected_tau is None else f"{p.expected_tau:.3f}"
        rate = p.paid / elapsed
        eta = "—" if p.calls_to_stop is None or rate <= 0 else f"{int(p.calls_to_stop / rate) // 60}:" \
            f"{int(p.calls_to_stop / rate) % 60:02d}"  # to the τ target or the cap, first (pipeline's estimate)
        bar.update(task, completed=p.games, total=p.total, rate=rate, cost=p.cost, failed=p.failed, tau=tau, eta=eta)

    return bar, update


def run_evaluation(cfg, run, *, progress: bool | None, bootstrap: int, as_json: bool = False):
    """``run`` (:func:`judgewise.evaluate`, or ``add_model`` with its options bound) on a loaded config,
    with the progress bar (stderr, a terminal) or progress lines (any other stderr) as ``progress`` says
    (:func:`~judgewise.cli.progress_lines.progress_mode`; never the bar with ``as_json``)."""
    mode = progress_mode(progress, err())
    if mode == "bar" and as_json:
        mode = None
    if mode is None:
        return run(cfg, bootstrap=bootstrap)
    if mode == "lines":
        with ProgressLines(err(), "evaluated", "games") as lines:
            return run(cfg, progress=partial(_show_line, lines), bootstrap=bootstrap)
    bar, update = _progress_bar(1)
    with bar:
        return run(cfg, progress=update, bootstrap=bootstrap)


def _show_line(lines: ProgressLines, p) -> None:
    """An evaluate progress line: games so far against the cap, the expected τ and the games still to the stop."""
    tau = "" if p.expected_tau is None else f", E[τ] {p.expected_tau:.3f}"
    to_go = "" if p.calls_to_stop is None else f", ~{int(p.calls_to_stop):,} to the stop"
    lines.show(p.games, None, p.failed, cost=p.cost, extra=f" (cap {p.total:,}){tau}{to_go}")


def print_result(result, seed: int, console: Console | None = None) -> None:
    """What ``judgewise evaluate`` prints (on ``console``, default stdout): ``commands.tables.evaluation_blocks``.
    ``seed``: the config's; unused now that the ranking records the seed of its bootstrap (kept for callers)."""
    show(console or out(), evaluation_blocks(result))


@options_command(RunOverrides, OVERRIDE_FLAGS)
def evaluate_command(
    config: Config,
    bootstrap: int = typer.Option(1000, "--bootstrap", min=0, help="Bootstrap rounds for the intervals."),
    progress: ShowProgress = None,
    as_json: Json = False,
    report: Path = typer.Option(None, "--report", help="Write the HTML report of the games judged."),
    add_model: str = typer.Option(None, "--add-model", help="Place this model into the leaderboard a previous "
                                  "evaluate of the config stored, judging only its games."),
    insertion: str = typer.Option(None, "--insertion", help="With --add-model: binary (Arena-lite Alg. 2, default) "
                                  "or anchor (App. A.6.2)."),
    anchor: str = typer.Option(None, "--anchor", help="With --insertion anchor: the leaderboard model to judge "
                               "against (default: the top model)."),
    *,
    options: RunOverrides,
) -> None:
    """Judge in rounds until the ranking reaches target: (or the budget), then rank it with a trust block; or, with
    --add-model NEW, place NEW into the stored leaderboard."""
    from judgewise.commands.runs import evaluation_of  # the commands layer loads pandas (and with it pyarrow)

    quiet_http_logs()
    cfg, run = evaluation_of(config, options, add=add_model, insertion=insertion, anchor=anchor)
    if add_model is None and (insertion or anchor):
        raise typer.BadParameter("--insertion / --anchor choose how --add-model places a model; give --add-model")
    result = run_evaluation(cfg, run, progress=progress, bootstrap=bootstrap, as_json=as_json)
    if report is not None:
        from judgewise.report import ReportOptions, write_report  # the report layer loads jinja2 and matplotlib

        written = write_report(result.judgments, report, ReportOptions(seed=cfg.seed, title="judgewise evaluate"))
        say(err(), f"report: {written}")
    if as_json:
        print(json_text(result.as_dict()))
        return
    print_result(result, cfg.seed)


def register(app: typer.Typer) -> None:
    """Add ``evaluate`` to the app."""
    app.command("evaluate")(evaluate_command)

"""``judgewise evaluate --config run.yaml``: rank models at the fewest judge calls and say how far to trust it.

Parse the options → :func:`judgewise.evaluate` → print: the design and why, one progress bar over the whole run
(stderr, on a terminal, never with ``--json``; plain progress lines when stderr is a log), the ranking with 95%
intervals and CI-aware ranks, the trust block. ``--json`` prints ``{"ranking", "calls", "stopped", "design",
"trust"}``; ``--report`` writes the HTML report of the games judged. ``--add-model NEW`` (``--insertion
binary|anchor``, ``--anchor``) places NEW into the leaderboard a previous evaluate stored
(:mod:`judgewise.pipeline.add_model`): the placement's lines before the new ranking, and ``"placement"`` beside the
other keys in ``--json``. ``--human LABELS`` adds prediction-powered rank-sets of the games judged
(``commands.human_ranking``; ``"human_anchored"`` in ``--json``).
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgewise.cli.console import err, out, quiet_http_logs
from judgewise.cli.options import OVERRIDE_FLAGS, Alpha, Config, HumanLabels, Json, ShowProgress, options_command
from judgewise.commands.display import say, show
from judgewise.commands.options import RunOverrides
from judgewise.commands.progress import run_evaluation
from judgewise.commands.text import json_text


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
    human: HumanLabels = None,
    alpha: Alpha = 0.05,
    *,
    options: RunOverrides,
) -> None:
    """Judge in rounds until the ranking reaches target: (or the budget), then rank it with a trust block; or, with
    --add-model NEW, place NEW into the stored leaderboard."""
    from judgewise.commands.runs import evaluation_of, evaluation_output, finish_evaluation  # loads pandas

    quiet_http_logs()
    cfg, run = evaluation_of(config, options, add=add_model, insertion=insertion, anchor=anchor, human=human,
                             alpha=alpha)
    if add_model is None and (insertion or anchor):
        raise typer.BadParameter("--insertion / --anchor choose how --add-model places a model; give --add-model")
    result = run_evaluation(err(), cfg, run, progress=progress, bootstrap=bootstrap, as_json=as_json)
    written = finish_evaluation(result, cfg, human=human, alpha=alpha, report=report)
    if written is not None:
        say(err(), f"report: {written}")
    if as_json:
        print(json_text(result.as_dict()))
        return
    show(out(), evaluation_output(result))


def register(app: typer.Typer) -> None:
    """Add ``evaluate`` to the app."""
    app.command("evaluate")(evaluate_command)

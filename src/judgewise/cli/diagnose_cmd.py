"""``judgewise diagnose`` (bias figures with intervals, warnings, judge-gaming flags) and ``judgewise accuracy``.

``diagnose`` reads judgments in any supported format (an AlpacaEval results directory brings the model outputs
with it; JudgeBench outputs bring the responses and the objective labels). ``--json`` prints one object with
``judges`` (figures with intervals), ``warnings``, ``gaming_flags`` ([{"model", "reason", …}]), ``echo`` and
``style``. ``accuracy`` compares pairwise rankings with ground-truth accuracy (Correct-looks-better §5, App. B/C).
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgewise.cli.console import piped_width
from judgewise.cli.options import (Bootstrap, CiLevel, Config, InputFormat, Json, Judge, Responses, Seed,
                                   SkipInvalid, options_command)
from judgewise.commands.display import show
from judgewise.commands.options import AccuracyOptions, DiagnoseOptions, EchoOptions
from judgewise.commands.tables import alignment_blocks, diagnosis_blocks, echo_blocks, report_line
from judgewise.commands.text import json_text


@options_command(DiagnoseOptions, {"responses": Responses, "format": InputFormat, "bootstrap": Bootstrap,
                                   "judge": Judge, "ci_level": CiLevel, "seed": Seed})
def diagnose_command(
    judgments: Path = typer.Argument(..., help="Judgments in any supported format (an AlpacaEval results "
                                               "dir or JudgeBench outputs bring their texts), or a judging "
                                               "store (SQLite file of judgewise judge)."),
    *,
    options: DiagnoseOptions,
    as_json: Json = False,
    skip_invalid: SkipInvalid = False,
) -> None:
    """Bias figures per judge with intervals (position, swap consistency, length, markdown, label
    agreement), echo, judge-gaming flags and warnings."""
    from judgewise.commands.diagnosis import diagnose_with_options  # the commands layer loads pandas (and pyarrow)

    result, table = diagnose_with_options(judgments, options, skip_invalid=skip_invalid)
    if as_json:
        panel = {"panel": table.extras["panel"]} if "panel" in table.extras else {}
        typer.echo(json_text({**result.as_dict(), **panel, "read": table.report.as_dict()}))
    else:
        show(piped_width(160, at_least=True), diagnosis_blocks(result, table.report, options.ci_level,
                                                                table.extras.get("panel")))


ACCURACY_FLAGS = {"bootstrap": Bootstrap, "seed": Seed, "ci_level": CiLevel, "format": InputFormat,
                  "judge": Judge}  # shared flags


@options_command(AccuracyOptions, ACCURACY_FLAGS)
def accuracy_command(
    judgments: Path = typer.Argument(..., help="Pairwise judgments in any supported format, or a judging store "
                                               "(SQLite file of judgewise judge)."),
    correctness: Path = typer.Option(..., "--correctness", help="Ground truth: table of prompt_id, model, "
                                                                "correct (1/0; empty = unparsed)."),
    direct: Path = typer.Option(None, "--direct", help="Direct-judge grades: prompt_id, model, label "
                                                       "(correct / incorrect / not_attempted), or the store of a "
                                                       "judge.mode: single run with template direct_correctness."),
    as_json: Json = False,
    *,
    options: AccuracyOptions,
) -> None:
    """Do pairwise rankings recover accuracy? Each aggregator and the direct judge vs ground truth, on
    all / discriminative / non-discriminative pairs (Correct-looks-better §5, App. B/C)."""
    from judgewise.commands.diagnosis import accuracy_with_options  # the commands layer loads pandas (and pyarrow)

    result, table = accuracy_with_options(judgments, correctness, direct, options)
    if as_json:
        typer.echo(json_text(result.as_dict()))
    else:
        show(piped_width(160, at_least=True), [*alignment_blocks(result), report_line(table.report)])


@options_command(EchoOptions, {"bootstrap": Bootstrap, "seed": Seed})
def echo_test_command(config: Config = ..., *, options: EchoOptions, as_json: Json = False) -> None:
    """Echo intervention (Correct-looks-better App. F.2): judge each pair as is, with echo appended to A, and to
    B; report P(A wins) per condition and the contrast P(A | echo on A) − P(A | echo on B) (the paper's sign) with
    the paper's unpaired Wald intervals beside judgewise's paired bootstrap."""
    from judgewise.commands.diagnosis import echo_with_options  # the commands layer loads pandas (and pyarrow)

    res, run = echo_with_options(config, options)
    if as_json:
        typer.echo(json_text({**res.as_dict(), "games": run.n_games, "echo_text": options.echo_text,
                               "times": options.times}))
        return
    show(piped_width(160, at_least=True), echo_blocks(res, run.n_games, options.echo_text, options.times))


def register(app: typer.Typer) -> None:
    """Add ``diagnose``, ``accuracy`` and ``echo-test`` to the app."""
    app.command("diagnose")(diagnose_command)
    app.command("accuracy")(accuracy_command)
    app.command("echo-test")(echo_test_command)

"""``judgewise diagnose`` (bias figures with intervals, warnings, judge-gaming flags) and ``judgewise accuracy``.

``diagnose`` reads judgments in any supported format (an AlpacaEval results directory brings the model outputs
with it; JudgeBench outputs bring the responses and the objective labels). ``--json`` prints one object with
``judges`` (figures with intervals), ``warnings``, ``gaming_flags`` ([{"model", "reason", …}]), ``echo`` and
``style``. ``accuracy`` compares pairwise rankings with ground-truth accuracy (Correct-looks-better §5, App. B/C).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from judgewise.cli.console import piped_width, show
from judgewise.cli.options import (Bootstrap, CiLevel, Config, InputFormat, Json, Judge, Responses, Seed,
                                   SkipInvalid, options_command)
from judgewise.commands.options import AccuracyOptions
from judgewise.commands.tables import alignment_blocks, diagnosis_blocks, echo_blocks, report_line
from judgewise.commands.text import parse_families


def diagnose_command(
    judgments: Path = typer.Argument(..., help="Judgments in any supported format (an AlpacaEval results "
                                               "dir or JudgeBench outputs bring their texts), or a judging "
                                               "store (SQLite file of judgewise judge)."),
    responses: Responses = None,
    format: InputFormat = None,
    style_control: bool = typer.Option(True, "--style-control/--no-style-control",
                                       help="Fit style-controlled BT and compare rankings (needs texts)."),
    bootstrap: Bootstrap = 0,
    family: list[str] = typer.Option(None, "--family", help="NAME=FAMILY for self-preference (repeatable; "
                                                            "NAME is a model/judge name prefix)."),
    judge: Judge = None,
    ci_level: CiLevel = 0.95,
    seed: Seed = 0,
    as_json: Json = False,
    skip_invalid: SkipInvalid = False,
) -> None:
    """Bias figures per judge with intervals (position, swap consistency, length, markdown, label
    agreement), echo, judge-gaming flags and warnings."""
    from judgewise.commands.diagnosis import diagnose_path  # the commands layer loads pandas (and with it pyarrow)

    result, table = diagnose_path(judgments, responses, format=format, style_control=style_control,
                                 ci_level=ci_level, seed=seed, skip_invalid=skip_invalid, bootstrap=bootstrap,
                                 families=parse_families(family), judge=judge)
    if as_json:
        out = {**result.as_dict(), "read": table.report.as_dict()}
        typer.echo(json.dumps(out, indent=2, default=str))
    else:
        show(piped_width(160, at_least=True), diagnosis_blocks(result, table.report, ci_level))


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
    # the commands layer loads pandas (and with it pyarrow)
    from judgewise.commands.diagnosis import accuracy_with_options

    result, table = accuracy_with_options(judgments, correctness, direct, options)
    if as_json:
        typer.echo(json.dumps(result.as_dict(), indent=2, default=str))
    else:
        show(piped_width(160, at_least=True), [*alignment_blocks(result), report_line(table.report)])


def echo_test_command(
    config: Config = ...,
    echo_text: str = typer.Option("paper", "--echo-text", help="paper = the question and the full answer "
                                  "appended three times (the CLB code); final-answer = 'Question: …/Answer: <final "
                                  "answer line>' blocks."),
    times: int = typer.Option(3, "--times", help="How many echo blocks are appended (the paper: 3)."),
    limit: int = typer.Option(None, "--limit", help="Use the first N base pairs (the paper: 500)."),
    include_echoing: bool = typer.Option(False, "--include-echoing", help="Also use base pairs where a response "
                                         "echoes already (the paper keeps pairs where neither does)."),
    bootstrap: Bootstrap = 2000,
    seed: Seed = 0,
    as_json: Json = False,
) -> None:
    """Echo intervention (Correct-looks-better App. F.2): judge each pair as is, with echo appended to A, and to
    B; report P(A wins) per condition and the contrast P(A | echo on A) − P(A | echo on B) (the paper's sign) with
    the paper's unpaired Wald intervals beside judgewise's paired bootstrap."""
    # the commands layer loads pandas (and with it pyarrow)
    from judgewise.commands.diagnosis import echo_intervention_of_config

    res, run = echo_intervention_of_config(config, text=echo_text, times=times, skip_echoing=not include_echoing,
                                           limit=limit, bootstrap=bootstrap, seed=seed)
    if as_json:
        typer.echo(json.dumps({**res.as_dict(), "games": run.n_games, "echo_text": echo_text, "times": times},
                              indent=2, default=str))
        return
    show(piped_width(160, at_least=True), echo_blocks(res, run.n_games, echo_text, times))


def register(app: typer.Typer) -> None:
    """Add ``diagnose``, ``accuracy`` and ``echo-test`` to the app."""
    app.command("diagnose")(diagnose_command)
    app.command("accuracy")(accuracy_command)
    app.command("echo-test")(echo_test_command)

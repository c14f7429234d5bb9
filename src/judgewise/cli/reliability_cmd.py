"""``judgewise select`` / ``reliability`` / ``study`` / ``label``: which items humans label, the savings, the page.

SCORES and HUMAN are canonical scores tables (``item_id, rater, score`` as CSV/JSONL/JSON/Parquet) or anything
:func:`judgewise.io.readers.read_scores` understands — a JudgeBench outputs folder gives every judge's per-pair
"A is better" score plus the objective label as rater ``human``, so HUMAN can be left out. Without HUMAN the human
is SCORES' rater ``human`` (``--human-rater`` to rename); a store holding ``judgewise label``'s labels is one too. Results go to stdout (``--json`` for machine output);
progress and read counts go to stderr.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, replace
from pathlib import Path

import typer

from judgewise.cli.console import err, piped_width
from judgewise.cli.options import (Candidates, Human, HumanRater, Json, Output, Responses, Seed, Trials,
                                   options_command)
from judgewise.commands.display import say, show
from judgewise.commands.options import LabelOptions, ReliabilityOptions, SelectOptions, StudyOptions
from judgewise.commands.tables import reliability_lines, selection_line, study_blocks
from judgewise.commands.text import json_text, parse_budgets, split_list


def _emit_json(data, output: Path | None = None, write=None) -> None:
    """``data`` as JSON: written to ``output`` with ``write`` (``commands.json_output.write_json_text``) when
    given, else on stdout."""
    text = json_text(data, indent=1)
    if output is not None:
        write(output, text)
        say(err(), f"wrote {output}")
    else:
        typer.echo(text)


@options_command(SelectOptions, {"seed": Seed, "candidates": Candidates})
def select_cmd(
    scores: Path = typer.Argument(..., help="Scores table (item_id, rater, score) or a JudgeBench outputs folder."),
    *,
    options: SelectOptions,
    as_json: Json = False,
    output: Output = None,
) -> None:
    """The items to send to human annotators (Metric Match, Alg. 1, by default); one id per line."""
    from judgewise.commands import human_validation, json_output  # the commands layer loads pandas (and pyarrow)

    record = human_validation.select_items(scores, **asdict(options))
    if as_json or output:
        _emit_json(record, output, json_output.write_json_text)
    if not as_json:
        for item in record["items"]:
            typer.echo(item)
    say(err(), selection_line(record, options))


@options_command(ReliabilityOptions, {"human": Human, "human_rater": HumanRater})
def reliability_cmd(
    scores: Path = typer.Argument(..., help="Scores table or JudgeBench outputs folder."),
    *,
    options: ReliabilityOptions,
    as_json: Json = False,
) -> None:
    """The target judge's reliability against humans: on selected items (estimate) or on all (population)."""
    from judgewise.commands.human_validation import reliability_of_files  # loads pandas (and pyarrow)

    o = options
    record = reliability_of_files(scores, o.target, split_list(o.metric), human=o.human, items=o.items,
                                  human_rater=o.human_rater, estimator=o.estimator)
    if as_json:
        _emit_json(record)
        return
    for line in reliability_lines(record):
        typer.echo(line)


STUDY_FLAGS = {"trials": Trials, "candidates": Candidates, "seed": Seed,
               "human_rater": HumanRater}  # shared flags


@options_command(StudyOptions, STUDY_FLAGS)
def study_cmd(
    scores: Path = typer.Argument(..., help="Scores table or JudgeBench outputs folder."),
    human: Human = None,
    target: list[str] = typer.Option(None, "--target", help="Target judge(s) (repeat; default: every judge)."),
    budgets: str = typer.Option("5:50:5", "--budgets", help="start:stop:step (stop included) or a list."),
    metrics: str = typer.Option("icc,alpha,rho,tau-a", "--metrics", help="Comma-separated metrics; the paper's "
                                "four, its Kendall τ being τ-a (App. A Eq. 3); tau = τ-b, the tie-corrected "
                                "common alternative."),
    methods: str = typer.Option("random,stratified,bias-correction,metric-match,variance-match", "--methods",
                                help="Comma-separated selection methods (random is always included)."),
    as_json: Json = False,
    output: Output = None,
    *,
    options: StudyOptions,
) -> None:
    """Estimation error of each selection method against random over trials × budgets (Metric Match §3.3, §4)."""
    from judgewise.commands import human_validation, json_output  # the commands layer loads pandas (and pyarrow)

    targets = tuple(t for arg in (target or []) for t in split_list(arg))
    options = replace(options, targets=targets, budgets=tuple(parse_budgets(budgets)),
                      metrics=tuple(split_list(metrics)), methods=tuple(split_list(methods)))
    summary = human_validation.study_of_files(scores, options, human=human).as_dict()
    if output is not None:
        _emit_json(summary, output, json_output.write_json_text)
    if as_json:
        _emit_json(summary)
        return
    show(piped_width(160), study_blocks(summary))


@options_command(LabelOptions, {"responses": Responses, "seed": Seed, "human_rater": HumanRater})
def label_cmd(
    scores: Path = typer.Argument(..., help="Scores table (item_id, rater, score) or a JudgeBench outputs folder."),
    *,
    options: LabelOptions,
) -> None:
    """Serve a local labelling page for the items `select` picks (or --items names); labels go to --store."""
    from judgewise.commands.labels import label_task, parse_scale  # loads pandas
    from judgewise.report.labelling import serve_labels

    o = options
    task = label_task(scores, o.store, target=o.target, items=o.items, responses=o.responses, budget=o.budget,
                      method=o.method, metric=o.metric, seed=o.seed, scale=parse_scale(o.scale),
                      human_rater=o.human_rater, stop_width=o.stop_width, order=o.order)
    serve_labels(task, host=o.host, port=o.port, ready=lambda url: (typer.echo(
        f"judgewise label: {len(task.items)} items of {task.target} at {url}  — Ctrl+C to stop"), sys.stdout.flush()))


def register(app: typer.Typer) -> None:
    """Add ``select``, ``reliability``, ``study`` and ``label`` to the app."""
    app.command("select")(select_cmd)
    app.command("reliability")(reliability_cmd)
    app.command("study")(study_cmd)
    app.command("label")(label_cmd)

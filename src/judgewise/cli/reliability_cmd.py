"""``judgewise select`` / ``reliability`` / ``study`` / ``label``: which items humans label, the savings, the page.

SCORES and HUMAN are canonical scores tables (``item_id, rater, score`` as CSV/JSONL/JSON/Parquet) or anything
:func:`judgewise.io.readers.read_scores` understands — a JudgeBench outputs folder gives every judge's per-pair
"A is better" score plus the objective label as rater ``human``, so HUMAN can be left out. Without HUMAN the human
is SCORES' rater ``human`` (``--human-rater`` to rename); a store holding ``judgewise label``'s labels is one too. Results go to stdout (``--json`` for machine output);
progress and read counts go to stderr.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import typer

from judgewise.cli.console import err, piped_width
from judgewise.cli.options import (Candidates, Human, HumanRater, Json, Output, Responses, Seed, Trials, flag,
                                   options_command)
from judgewise.cli.richtext import fmt_num, json_text, say, show, split_list
from judgewise.commands.options import StudyOptions
from judgewise.commands.tables import study_blocks
from judgewise.commands.text import parse_budgets


def _emit_json(data, output: Path | None = None, write=None) -> None:
    """``data`` as JSON: written to ``output`` with ``write`` (``commands.json_output.write_json_text``) when
    given, else on stdout."""
    text = json_text(data, indent=1)
    if output is not None:
        write(output, text)
        say(err(), f"wrote {output}")
    else:
        typer.echo(text)


def select_cmd(
    scores: Path = typer.Argument(..., help="Scores table (item_id, rater, score) or a JudgeBench outputs folder."),
    target: str = typer.Option(..., "--target", help="The judge under test (exact name or unique substring)."),
    budget: int = typer.Option(50, "--budget", help="How many items humans can label."),
    metric: str = typer.Option("icc", "--metric", help="Reliability metric to match (icc, alpha, rho, tau, ...)."),
    method: str = typer.Option("metric-match", "--method", help="random, stratified, bias-correction, "
                               "metric-match, metric-match-avg-labels, variance-match."),
    seed: Seed = 0,
    candidates: Candidates = 20,
    human_rater: str = typer.Option("human", "--human-rater", help="Rater name of the human in SCORES (ignored)."),
    human: Path = typer.Option(None, "--human", help="Human labels so far (scores or store): count labelled."),
    as_json: Json = False,
    output: Output = None,
) -> None:
    """The items to send to human annotators (Metric Match, Alg. 1, by default); one id per line."""
    # the commands layer loads pandas (and with it pyarrow)
    from judgewise.commands import human_validation, json_output

    record = human_validation.select_items(scores, target, budget, metric, method, seed, candidates, human_rater,
                                           human=human)
    if as_json or output:
        _emit_json(record, output, json_output.write_json_text)
    if not as_json:
        for item in record["items"]:
            typer.echo(item)
    match = (f"; inter-model {metric} {fmt_num(record['inter_model_subset'])} on the subset vs "
             f"{fmt_num(record['inter_model_pool'])} on the pool" if "inter_model_pool" in record else "")
    say(err(), f"selected {budget} of {record['n_pool']} items for {record['target']} by {method} "
             f"(seed {seed}){match}"
             + (f"; {len(record['labelled'])} of them labelled already" if "labelled" in record else ""))


def reliability_cmd(
    scores: Path = typer.Argument(..., help="Scores table or JudgeBench outputs folder."),
    human: Human = None,
    target: str = typer.Option(..., "--target", help="The judge under test."),
    metric: str = typer.Option("icc", "--metric", help="Metric(s), comma-separated (icc, alpha, rho, tau, ...)."),
    items: Path = typer.Option(None, "--items", help="Items to use: one id per line or `select --json` output."),
    human_rater: HumanRater = "human",
    estimator: str = typer.Option(None, "--estimator", help="On --items: plain (ρ̂_S on the items) or "
                                  "bias-correction (ρ^IM + ρ̂_S − ρ̂^IM_S, inter-model metric over all items; Metric "
                                  "Match §3.3). Default: the one matching the method `select --json` recorded "
                                  "(bias-correction for --method bias-correction, else plain)."),
    as_json: Json = False,
) -> None:
    """The target judge's reliability against humans: on selected items (estimate) or on all (population)."""
    # the commands layer loads pandas (and with it pyarrow)
    from judgewise.commands.human_validation import reliability_of_files

    record = reliability_of_files(scores, target, split_list(metric), human=human, items=items,
                                  human_rater=human_rater, estimator=estimator)
    if as_json:
        _emit_json(record)
        return
    for name, value in record["values"].items():
        how = ""
        if record["scope"] == "selected":
            how = f"; {record['estimator']} estimate ({record['estimator_source']})"
            if "plain_values" in record:
                how += f", plain ρ̂_S = {fmt_num(record['plain_values'][name], 4)}"
        typer.echo(f"{name}({record['target']}, human) = {fmt_num(value, 4)} on {record['n_items']} items "
                   f"({record['scope']}{how})")


STUDY_FLAGS = {
    "trials": Trials,
    "candidates": Candidates,
    "seed": Seed,
    "human_rater": HumanRater,
    "minutes_per_label": flag("--minutes-per-label", help="Cost model of the savings: minutes an annotator spends "
                              "per item (the paper's MedVAL example: 5)."),
    "cost_per_hour": flag("--cost-per-hour", help="Cost model: annotator cost per hour (the paper's MedVAL example: "
                          "$500, expert clinicians; crowd work is nearer $15)."),
}


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
    # the commands layer loads pandas (and with it pyarrow)
    from judgewise.commands import human_validation, json_output

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


def label_cmd(
    scores: Path = typer.Argument(..., help="Scores table (item_id, rater, score) or a JudgeBench outputs folder."),
    store: str = typer.Option(..., "--store", help="Store file or postgresql:// URL the labels go to."),
    target: str = typer.Option(..., "--target", help="The judge under test (exact name or unique substring)."),
    items: Path = typer.Option(None, "--items", help="Items to label (default: those `select` picks)."),
    responses: Responses = None,
    budget: int = typer.Option(30, "--budget", help="Without --items: how many items `select` picks."),
    method: str = typer.Option("metric-match", "--method", help="Without --items: the selection method."),
    metric: str = typer.Option("icc", "--metric", help="Reliability metric shown as labels arrive."),
    scale: str = typer.Option("1-5", "--scale", help="LOW-HIGH score scale of one-response (pointwise) items."),
    seed: Seed = 0,
    human_rater: HumanRater = "human",
    port: int = typer.Option(8766, "--port", help="Port (0 = any free port)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (default: this machine only)."),
    stop_width: float = typer.Option(None, "--stop-width", help="Say 'enough' once the interval is this narrow."),
) -> None:
    """Serve a local labelling page for the items `select` picks (or --items names); labels go to --store."""
    from judgewise.report.labelling import label_task, parse_scale, serve_labels  # loads pandas

    task = label_task(scores, store, target=target, items=items, responses=responses, budget=budget, method=method,
                      metric=metric, seed=seed, scale=parse_scale(scale), human_rater=human_rater, stop_width=stop_width)
    serve_labels(task, host=host, port=port, ready=lambda url: (typer.echo(
        f"judgewise label: {len(task.items)} items of {task.target} at {url}  — Ctrl+C to stop"), sys.stdout.flush()))


def register(app: typer.Typer) -> None:
    """Add ``select``, ``reliability``, ``study`` and ``label`` to the app."""
    app.command("select")(select_cmd)
    app.command("reliability")(reliability_cmd)
    app.command("study")(study_cmd)
    app.command("label")(label_cmd)

"""``judgewise label``: a local page to label the items a judge is validated on; the labels go to the store."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from judgewise.cli.options import HumanRater, Responses, Seed


def label_cmd(
    scores: Path = typer.Argument(..., help="Scores table (item_id, rater, score) or a JudgeBench outputs folder."),
    store: str = typer.Option(..., "--store", help="Store file or postgresql:// URL the labels go to (table "
                              "human_labels; made when missing)."),
    target: str = typer.Option(..., "--target", help="The judge under test (exact name or unique substring)."),
    items: Path = typer.Option(None, "--items", help="Items to label: one id per line or `select --json` output "
                               "(default: the ones `select` picks with --budget/--method/--metric/--seed)."),
    responses: Responses = None,
    budget: int = typer.Option(30, "--budget", help="Without --items: how many items `select` picks."),
    method: str = typer.Option("metric-match", "--method", help="Without --items: the selection method."),
    metric: str = typer.Option("icc", "--metric", help="Reliability metric shown as labels arrive (and matched "
                               "by select)."),
    scale: str = typer.Option("1-5", "--scale", help="Score scale LOW-HIGH of items with one response "
                              "(pointwise); items with two are labelled 1/2/3 (first, second, tie)."),
    seed: Seed = 0,
    human_rater: HumanRater = "human",
    port: int = typer.Option(8766, "--port", help="Port (0 = any free port)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (default: this machine only)."),
) -> None:
    """Serve a local labelling page for the items `select` picks (or --items names); labels go to --store."""
    from judgewise.commands.labels import label_task, parse_scale  # loads pandas
    from judgewise.report.labelling import serve_labels

    task = label_task(scores, store, target=target, items=items, responses=responses, budget=budget,
                      method=method, metric=metric, seed=seed, scale=parse_scale(scale), human_rater=human_rater)

    def ready(url: str) -> None:
        typer.echo(f"judgewise label: {len(task.items)} items of {task.target} at {url}  — Ctrl+C to stop")
        sys.stdout.flush()

    serve_labels(task, host=host, port=port, ready=ready)


def register(app: typer.Typer) -> None:
    """Add ``label`` to the app."""
    app.command("label")(label_cmd)

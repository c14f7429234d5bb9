"""``judgewise diagnose`` (bias figures with intervals, warnings, judge-gaming flags) and ``judgewise accuracy``.

``diagnose`` reads judgments in any supported format (an AlpacaEval results directory brings the model outputs
with it; JudgeBench outputs bring the responses and the objective labels). ``--json`` prints one object with
``judges`` (figures with intervals), ``warnings``, ``gaming_flags`` ([{"model", "reason", …}]), ``echo`` and
``style``. ``accuracy`` compares pairwise rankings with ground-truth accuracy (Correct-looks-better §5, App. B/C).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table as RichTable

from judgewise.errors import ConfigError


def _fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


def truth_column(frame: pd.DataFrame) -> str | None:
    """Add/locate model_a's true outcome: a ``truth`` column, or JudgeBench's ``label`` (A>B / B>A) on the
    response slots A/B. Returns the column name, or None when the judgments carry no label."""
    if "truth" in frame.columns:
        return "truth"
    if "label" in frame.columns and frame["label"].isin(["A>B", "B>A"]).all():
        a_better = frame["label"] == "A>B"
        frame["truth"] = ((frame["model_a"] == "A") == a_better).astype(float)
        return "truth"
    return None


def run_diagnose(path: Path, responses_path: Path | None, *, format: str | None, style_control: bool,
                 ci_level: float, seed: int, skip_invalid: bool):
    """Read the inputs and diagnose; returns (Diagnosis, judgments Table)."""
    from judgewise.analysis.diagnostics import diagnose
    from judgewise.io import read_any, read_responses

    if not 0 < ci_level < 1:
        raise ConfigError(f"--ci-level must be in (0, 1), got {ci_level}")
    table = read_any(path, format=format, skip_invalid=skip_invalid)
    if table.kind != "judgments":
        raise ConfigError(f"{path} holds a {table.kind} table; diagnose needs pairwise judgments")
    responses = table.extras.get("responses")
    if responses_path is not None:
        responses = read_responses(responses_path, skip_invalid=skip_invalid)
    frame = table.frame.copy()
    result = diagnose(frame, responses.frame if responses is not None else None, truth_col=truth_column(frame),
                      style_control=style_control, level=ci_level, seed=seed)
    return result, table


def render_diagnosis(result, report, level: float, console: Console) -> None:
    """The figures as one rich table (judge, figure, estimate, interval, n), then flags and warnings."""
    from judgewise.cli.rank_cmd import report_line

    table = RichTable(title="judgewise diagnose · judge bias figures", title_justify="left")
    for name, justify in (("judge", "left"), ("figure", "left"), ("estimate", "right"),
                          (f"{level * 100:g}% CI (Wilson)", "right"), ("n", "right")):
        table.add_column(name, justify=justify)
    for jb in result.judges:
        for i, (name, p) in enumerate(jb.figures().items()):
            table.add_row(jb.judge if i == 0 else "", name, _fmt(p.estimate),
                          f"[{_fmt(p.ci_low)}, {_fmt(p.ci_high)}]", f"{p.n:,}")
        table.add_section()
    console.print(table)
    if result.echo is not None:
        e = result.echo
        console.print(f"echo: ρ(echo_a − echo_b, outcome) = {_fmt(e.spearman_rho)}; the non-echoing side wins "
                      f"{_fmt(e.clean_side_wins.estimate)} of {e.n_one_sided:,} judgments where one side echoes")
    if result.gaming is not None:
        n = len(result.gaming.features)
        flagged = result.gaming.flagged_models
        console.print(f"judge gaming: {len(flagged)} of {n} models flagged"
                      + (f" ({', '.join(flagged)})" if flagged else ""))
    for w in result.warnings:
        console.print(f"[yellow]warning:[/] {w}", highlight=False)
    console.print(report_line(report), highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``diagnose`` and ``accuracy`` to the app."""

    @app.command("diagnose")
    def diagnose_command(
        judgments: Path = typer.Argument(..., help="Judgments in any supported format (an AlpacaEval results "
                                                   "dir or JudgeBench outputs bring their texts)."),
        responses: Path = typer.Option(None, "--responses", help="Responses table (prompt_id, model, text) "
                                                                 "for length, markdown, echo and gaming."),
        format: str = typer.Option(None, "--format", help="Force the judgments' format (default: detect)."),
        style_control: bool = typer.Option(True, "--style-control/--no-style-control",
                                           help="Fit style-controlled BT and compare rankings (needs texts)."),
        ci_level: float = typer.Option(0.95, "--ci-level", help="Interval level."),
        seed: int = typer.Option(0, "--seed", help="Seed of the sampled checks."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
        skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Skip and count malformed rows."),
    ) -> None:
        """Bias figures per judge with intervals (position, swap consistency, length, markdown, label
        agreement), echo, judge-gaming flags and warnings."""
        result, table = run_diagnose(judgments, responses, format=format, style_control=style_control,
                                     ci_level=ci_level, seed=seed, skip_invalid=skip_invalid)
        if as_json:
            out = {**result.as_dict(), "read": table.report.as_dict()}
            typer.echo(json.dumps(out, indent=2, default=str))
        else:
            render_diagnosis(result, table.report, ci_level, Console())

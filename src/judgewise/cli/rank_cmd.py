"""``judgewise rank`` (a leaderboard from judgments in any supported format or a judging store) and ``judgewise agree``.

``rank`` prints a rich table by default (CI level labelled; rows read/used/skipped under it). ``--json`` prints
``Ranking.to_records()`` (a JSON list, best first) on stdout and the read report as one line on stderr.
``--output FILE`` writes that same JSON list atomically (temp file + rename) whichever way results are shown.
Input mixing judges is refused unless ``--judge NAME`` keeps one or ``--pool-judges`` pools them (io.provenance).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table as RichTable

from judgewise.cli.richtext import add_row, plain, say
from judgewise.errors import ConfigError, InputError

BOOTSTRAP_UNITS = ("prompt", "battle")
SHOWN_EXTRAS = ("se", "n_wins", "n_draws", "mu", "sigma")


def _fmt(value, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1:
        return f"{value:,.0f}" if digits == 0 else f"{value:,.{digits}f}"
    return f"{value:,.{digits}f}" if isinstance(value, float) else str(value)


def report_line(report) -> str:
    """One line: rows read / used / skipped and where from (with the first skipped reasons when any)."""
    line = (f"read {report.rows_read:,} rows from {report.source} [{report.format}]: used {report.rows_used:,}, "
            f"skipped {report.rows_skipped:,}")
    if report.rows_skipped:
        line += " (first: " + "; ".join(report.skipped_reasons[:3]) + ")"
    return line


def render_table(ranking, records: list[dict], report, console: Console) -> None:
    """The leaderboard as a rich table with the CI level in its header and the read report below."""
    level = f"{ranking.ci_level * 100:g}%"
    table = RichTable(title=plain(f"judgewise rank · method {ranking.method}"), title_justify="left")
    table.add_column("rank", justify="right")
    table.add_column("model", no_wrap=True, min_width=max((len(r["model"]) for r in records), default=5))
    table.add_column("score", justify="right")
    table.add_column(f"{level} CI", justify="right", no_wrap=True)
    extras = [k for k in SHOWN_EXTRAS if records and k in records[0]]
    for key in extras:
        table.add_column(key, justify="right")
    table.add_column("n", justify="right")
    for rec in records:
        ci = "—" if rec["ci_low"] is None else f"[{_fmt(rec['ci_low'])}, {_fmt(rec['ci_high'])}]"
        cells = [str(rec["rank"]), rec["model"], _fmt(rec["score"]), ci]
        cells += [_fmt(rec.get(k), 0 if k.startswith("n_") else 2) for k in extras] + [f"{rec['n']:,}"]
        add_row(table, *cells)
    console.print(table)
    for line in [*info_lines(ranking), report_line(report)]:
        say(console, line)


def info_lines(ranking) -> list[str]:
    """How the intervals were made and, for style control, the fitted coefficients."""
    level = f"{ranking.ci_level * 100:g}%"
    boot = ranking.info.get("bootstrap")
    if boot:
        lines = [f"{level} intervals: percentile bootstrap, {boot['rounds']} rounds over {boot['unit']}s "
                 f"(seed {boot['seed']}); rank = 1 + models whose lower bound exceeds this upper bound"]
    else:
        lines = ["no intervals (pass --bootstrap 1000 for bootstrap CIs and CI-aware ranks)"]
    coefficients = ranking.info.get("coefficients")
    if coefficients:
        units = ranking.info.get("coefficient_units", "")
        lines.append("style coefficients" + (f" ({units})" if units else "") + ": "
                     + ", ".join(f"{name} {value:+.3f}" for name, value in coefficients.items()))
    if ranking.info.get("pooled_judges"):
        lines.append(ranking.info["pooled_judges"])
    return lines


def check_output_file(output: Path | None) -> None:
    """Fail before any work when ``--output`` cannot be a file: a directory, or in a folder that does not exist."""
    if output is None:
        return
    if output.is_dir():
        raise InputError("is a directory: --output expects a file name (e.g. ranking.json)", file=str(output))
    if not output.parent.is_dir():
        raise InputError("cannot write: its directory does not exist", file=str(output))


def _check_options(bootstrap: int, bootstrap_unit: str, ci_level: float) -> None:
    if bootstrap < 0:
        raise ConfigError(f"--bootstrap must be ≥ 0, got {bootstrap}")
    if bootstrap_unit not in BOOTSTRAP_UNITS:
        raise ConfigError(f"--bootstrap-unit must be one of {', '.join(BOOTSTRAP_UNITS)}, got {bootstrap_unit!r}")
    if not 0 < ci_level < 1:
        raise ConfigError(f"--ci-level must be in (0, 1), got {ci_level}")


def read_store(path: Path, *, skip_invalid: bool):
    """A judging store (``judgewise judge``'s SQLite file) as a canonical judgments table, read through the
    report's read-only store export; failed games are counted as skipped with their errors, as for any file.
    (Here, not in io: io may not import judges.)"""
    from judgewise.io.canonical import from_dataframe
    from judgewise.report.inputs import is_store
    from judgewise.report.store_adapter import load_store

    if not is_store(path):  # --format store on something else
        found = "no such file or directory" if not path.exists() else "not an SQLite file"
        raise InputError(f"{found}: expected a judging store (the SQLite file judgewise judge writes)", file=str(path))
    table = from_dataframe(load_store(path).judgments, kind="judgments", skip_invalid=skip_invalid, name=str(path))
    table.report.format = "store"
    return table


def rated_rows(frame):
    """The judgments to rate: a reader may keep failed games (``error`` set, no outcome; JudgeBench's unparseable
    outputs), which its report already counts as skipped."""
    from judgewise.io.validate import missing_text

    if "error" not in frame.columns:
        return frame
    failed = frame["outcome"].isna().to_numpy() & ~missing_text(frame["error"])
    return frame[~failed].reset_index(drop=True) if failed.any() else frame


def read_ranked(path: Path, *, format: str | None, skip_invalid: bool, judge: str | None, pool_judges: bool):
    """Read ``path`` (any format or a store) and keep the rows to rate: failed games out, one judge chosen
    (``--judge``, the other judges' rows counted as skipped) or several pooled only on request (``--pool-judges``);
    returns (frame, table)."""
    from judgewise.io import read_judgments
    from judgewise.io.provenance import note_dropped, select_judge
    from judgewise.report.inputs import is_store

    if format == "store" or (format is None and is_store(path)):
        table = read_store(path, skip_invalid=skip_invalid)
    else:
        table = read_judgments(path, format=format, skip_invalid=skip_invalid)
    frame, dropped = select_judge(rated_rows(table.frame), judge, pool_judges)
    note_dropped(table.report, dropped, judge)
    return frame, table


def note_unused(ranking, report) -> None:
    """Rows the method read but did not use (win rate: rows without the anchor) are counted as skipped."""
    unused = int(ranking.info.get("rows_not_used") or 0)
    if unused:
        report.rows_used = max(report.rows_used - unused, 0)
        report.rows_skipped += unused
        report.skipped_reasons.insert(0, f"{unused:,} rows do not compare a model with the anchor "
                                         f"{ranking.info.get('anchor')} (win rate uses only those)")


def run_rank(path: Path, *, format: str | None, method: str, anchor: str | None, style_control: bool,
             bootstrap: int, bootstrap_unit: str, seed: int, ci_level: float, skip_invalid: bool,
             judge: str | None = None, pool_judges: bool = False):
    """Read ``path`` and rank its models; returns (ranking, read table)."""
    _check_options(bootstrap, bootstrap_unit, ci_level)
    frame, table = read_ranked(path, format=format, skip_invalid=skip_invalid, judge=judge, pool_judges=pool_judges)
    from judgewise.ratings import rank  # after reading: bad input fails fast, before scipy is imported
    responses = table.extras.get("responses")
    if style_control and responses is None:
        raise ConfigError(f"--style-control needs the responses' texts, and {path} carries none "
                          "(an AlpacaEval results dir with model_outputs.json does)")
    if anchor is None and method == "winrate":
        anchor = table.extras.get("anchor")  # the importer knows it (AlpacaEval's generator_1)
    ranking = rank(frame, method, anchor=anchor, bootstrap=bootstrap, bootstrap_unit=bootstrap_unit,
                   seed=seed, ci_level=ci_level, style_control=style_control, pool_judges=pool_judges,
                   responses=responses.frame if responses is not None else None)
    note_unused(ranking, table.report)
    if pool_judges:
        from judgewise.io.provenance import pooled_line

        ranking.info["pooled_judges"] = pooled_line(frame)
    return ranking, table


def agreement_of_files(a: Path, b: Path, key: str | None = None) -> dict:
    """Rank agreement of two score files over their common models, plus the models found in only one."""
    from judgewise.io.scoremaps import read_score_map
    from judgewise.ratings.agreement import agreement

    try:
        scores_a = read_score_map(a, key)
        scores_b = read_score_map(b, key, models=scores_a)
    except InputError:  # A may be the ambiguous one: read B first and let it guide the choice in A
        scores_b = read_score_map(b, key)
        scores_a = read_score_map(a, key, models=scores_b)
    common = [m for m in scores_a if m in scores_b]
    if len(common) < 2:
        raise InputError(f"{a} and {b} share {len(common)} model(s); need at least 2 to compare rankings",
                         file=str(b))
    result = agreement([scores_a[m] for m in common], [scores_b[m] for m in common]).as_dict()
    result["only_in_a"] = sorted(set(scores_a) - set(scores_b))
    result["only_in_b"] = sorted(set(scores_b) - set(scores_a))
    return result


def register(app: typer.Typer) -> None:
    """Add ``rank`` and ``agree`` to the app."""

    @app.command("rank")
    def rank_command(
        path: Path = typer.Argument(..., help="Judgments: AlpacaEval results dir, Arena-Hard battles, JudgeBench "
                                              "outputs, a canonical JSONL/CSV/Parquet table, or a "
                                              "judging store (SQLite file of judgewise judge)."),
        format: str = typer.Option(None, "--format", help="Force the input format, or 'store' (default: detect)."),
        method: str = typer.Option("bt", "--method", help="winrate | bt | elo | trueskill"),
        anchor: str = typer.Option(None, "--anchor", help="Anchor model (win rate) / model pinned (BT)."),
        style_control: bool = typer.Option(False, "--style-control", help="Style-controlled BT (needs texts)."),
        bootstrap: int = typer.Option(0, "--bootstrap", help="Bootstrap rounds for intervals (0 = none)."),
        bootstrap_unit: str = typer.Option("prompt", "--bootstrap-unit", help="Resample prompts or battles."),
        seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
        ci_level: float = typer.Option(0.95, "--ci-level", help="Interval level."),
        as_json: bool = typer.Option(False, "--json", help="Print a JSON list (one object per model)."),
        output: Path = typer.Option(None, "--output", help="Also write the JSON list to this file (atomically)."),
        skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Skip and count malformed rows."),
        judge: str = typer.Option(None, "--judge", help="Rank only this judge's rows (the others are counted "
                                                        "as skipped); needed when the input holds several judges."),
        pool_judges: bool = typer.Option(False, "--pool-judges", help="Pool the rows of several judges into one "
                                                                      "ranking on purpose (said in the output)."),
    ) -> None:
        """Rank models from pairwise judgments (format detected; --format to force)."""
        from judgewise.io.atomic import write_text_atomic

        check_output_file(output)
        ranking, table = run_rank(path, format=format, method=method, anchor=anchor, style_control=style_control,
                                  bootstrap=bootstrap, bootstrap_unit=bootstrap_unit, seed=seed,
                                  ci_level=ci_level, skip_invalid=skip_invalid, judge=judge,
                                  pool_judges=pool_judges)
        records = ranking.to_records()
        text = json.dumps(records, indent=2)
        if output is not None:
            write_text_atomic(output, text + "\n")
        if as_json:
            typer.echo(text)
            err = Console(stderr=True)
            for line in [*info_lines(ranking)[1:], report_line(table.report)]:
                say(err, line)
        else:
            render_table(ranking, records, table.report, Console(width=None if sys.stdout.isatty() else 120))

    @app.command("agree")
    def agree_command(
        a: Path = typer.Argument(..., help="A rank --json output or a {model: score} JSON file."),
        b: Path = typer.Argument(..., help="The other one."),
        key: str = typer.Option(None, "--key", help="Read the {model: score} map under this key (both files)."),
        as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
    ) -> None:
        """Agreement of two rankings over their common models: Kendall τ-b, Spearman ρ, Pearson r, distance."""
        result = agreement_of_files(a, b, key=key)
        if as_json:
            typer.echo(json.dumps(result, indent=2))
            return
        console = Console()
        for name in ("kendall_tau_b", "spearman_rho", "pearson_r", "kendall_distance"):
            say(console, f"{name:<17} {_fmt(result[name], 4)}")
        say(console, f"{result['n_items']} common models; only in A: {result['only_in_a'] or '-'}; "
                     f"only in B: {result['only_in_b'] or '-'}")

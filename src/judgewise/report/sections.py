"""Report sections: each builder reads the run and calls the same library function the CLI uses.

``SECTIONS`` is the registry (key → (title, builder)), in report order; add an entry to add a section.
A builder whose library piece is missing (ImportError) yields a marked "not available yet" slot; one whose
input is absent (no gold ranking, no study) a "not applicable" slot; an error is shown, never hidden: a "failed"
slot, which makes ``write_report`` stop non-zero naming the section (its traceback is logged at debug level).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from judgewise.analysis.panel_text import panel_lines
from judgewise.errors import JudgewiseError
from judgewise.ratings.coverage import interval_line
from judgewise.report import analysis_sections, charts
from judgewise.report.context import ReportContext
from judgewise.report.head_to_head import win_matrix
from judgewise.report.document import (FAILED, NOT_APPLICABLE, UNAVAILABLE, Figure, NotApplicable, Omitted, Section,
                                    TableBlock, fmt_num)

log = logging.getLogger(__name__)


def build_sections(ctx: ReportContext, keys: list[str] | None = None) -> list[Section]:
    """Run every registered builder (or those in ``keys``), turning failures into marked slots."""
    out = []
    for key in keys or list(SECTIONS):
        title, builder = SECTIONS[key]
        section = Section(key=key, title=title)
        try:
            builder(ctx, section)
        except Omitted:
            continue
        except ImportError as exc:
            _slot(section, UNAVAILABLE, f"{exc.name or exc} is not available yet in this build of judgewise.")
        except NotApplicable as exc:
            _slot(section, NOT_APPLICABLE, str(exc))
        except JudgewiseError as exc:
            _slot(section, NOT_APPLICABLE, f"cannot be computed for this run: {exc}")
        except Exception as exc:  # noqa: BLE001 — a broken section must not hide the others
            log.debug("report section %s failed: %s", key, exc, exc_info=True)  # the traceback with --verbose
            _slot(section, FAILED, f"{type(exc).__name__}: {exc}")
        out.append(section)
    return out


def _slot(section: Section, status: str, note: str) -> None:
    section.status, section.note = status, note
    section.facts, section.tables, section.figures, section.paragraphs = [], [], [], []


# --- run summary -------------------------------------------------------------------------------------------

def summary_section(ctx: ReportContext, s: Section) -> None:
    run, df = ctx.run, ctx.run.judgments
    n_failed = len(df) - len(ctx.valid)  # not usable (io.schema's one rule)
    s.source = "judgewise.io.read_any / judging store export"
    s.facts = [
        ("Source", ", ".join(run.sources)),
        ("Judge", ", ".join(sorted(df["judge"].dropna().astype(str).unique())) or "—"),
        ("Design", ctx.design + (f" (anchor: {ctx.anchor})" if ctx.anchor else "")),
        ("Models", fmt_num(len(ctx.models))),
        ("Prompts", fmt_num(df["prompt_id"].nunique())),
        ("Judgments", f"{fmt_num(len(df))} ({fmt_num(len(ctx.valid))} with a verdict, {fmt_num(n_failed)} failed)"),
    ]
    if "first" in df.columns and df["first"].notna().any():
        s.facts.append(("Answer orders", _orders_fact(df)))
    if run.panel:  # the judgments are a panel's derived verdicts (--panel): what they rest on, as `rank` prints it
        s.paragraphs += ["This report shows the verdicts of a panel of judges, derived from its members' verdicts "
                         "(--panel):", *(line.strip() for line in panel_lines(run.panel))]
    for rep in run.read_reports:
        s.facts.append((f"Rows of {rep.source}", f"read {fmt_num(rep.rows_read)}, used {fmt_num(rep.rows_used)}, "
                                                 f"skipped {fmt_num(rep.rows_skipped)}"))
    s.facts += _call_facts(ctx)


def _orders_fact(df) -> str:
    n_orders = df.astype({c: str for c in ("prompt_id", "model_a", "model_b")}).groupby(
        ["prompt_id", "model_a", "model_b"])["first"].nunique()
    return f"{fmt_num((n_orders >= 2).sum())} of {fmt_num(len(n_orders))} comparisons judged in both orders"


def _call_facts(ctx: ReportContext) -> list[tuple[str, str]]:
    """Calls, tokens, cost and time: the store's own summary, else the columns a file carries."""
    summary = ctx.run.store_summary
    if summary:
        return [(k, fmt_num(v, 4) if isinstance(v, (int, float)) else str(v))
                for k, v in summary.items() if k != "design" and not isinstance(v, (dict, list))]
    df, facts = ctx.run.judgments, []
    for col, label in (("cost", "Cost (USD)"), ("price_per_example", "Cost (USD)"),
                       ("tokens_in", "Tokens in"), ("tokens_out", "Tokens out"),
                       ("latency_s", "Judge time (s)"), ("time_per_example", "Judge time (s)")):
        if col in df.columns and label not in dict(facts):
            facts.append((label, fmt_num(float(df[col].fillna(0).astype(float).sum()), 4)))
    return facts or [("Calls, cost, time", "not recorded in this input (a judging store records them)")]


# --- leaderboard -------------------------------------------------------------------------------------------

def leaderboard_section(ctx: ReportContext, s: Section) -> None:
    r = ctx.ranking
    s.source = f"judgewise.ratings.rank(method={ctx.method!r}, bootstrap={ctx.bootstrap}, seed={ctx.seed}" + \
        "".join(f", {k}={v!r}" for k, v in sorted(ctx.recorded.items()) if k not in ("method", "bootstrap", "seed")) \
        + ")"
    records = r.to_records()
    level = f"{round(100 * r.ci_level)}%"
    extras = [k for k in ("se", "n_wins", "n_draws", "discrete_win_rate", "mu", "sigma") if k in r.extra]
    intervals = interval_line(r)  # as `rank` and `evaluate` print it: the interval, and its measured coverage
    s.tables.append(TableBlock(
        caption=f"Leaderboard ({ctx.method}; {intervals})",
        columns=["rank", "model", "score", f"{level} CI", "n", *extras],
        rows=[[rec["rank"], rec["model"], fmt_num(rec["score"], 4),
               f"[{fmt_num(rec['ci_low'], 4)}, {fmt_num(rec['ci_high'], 4)}]", fmt_num(rec["n"]),
               *[fmt_num(rec.get(k), 4) for k in extras]] for rec in records],
        css_class="leaderboard sortable"))
    s.figures.append(Figure("leaderboard", f"Scores with {level} intervals, best first", charts.interval_chart(
        [rec["model"] for rec in records], [rec["score"] for rec in records],
        [_nan(rec["ci_low"]) for rec in records], [_nan(rec["ci_high"]) for rec in records],
        xlabel=f"{ctx.method} score", ranks=[rec["rank"] for rec in records])))
    info = {k: v for k, v in (r.info or {}).items() if isinstance(v, (int, float, str))}
    if info:
        s.paragraphs.append("Settings: " + " · ".join(
            f"{k.replace('_', ' ')} {fmt_num(v, 4) if not isinstance(v, str) else v}" for k, v in info.items()))


def _nan(x):
    return float("nan") if x is None else float(x)


# --- head-to-head ------------------------------------------------------------------------------------------

def head_to_head_section(ctx: ReportContext, s: Section) -> None:
    order = ctx.order
    rates, counts = win_matrix(ctx.valid, order)
    s.source = "judgewise.report.head_to_head.win_matrix (mean outcome of the row model, ties = 0.5)"
    s.figures.append(Figure("head_to_head", "Head-to-head: row model's mean outcome against the column model "
                            "(blue = row wins, red = row loses, grey = never met; numbers are %)",
                            charts.heatmap(order, rates, counts)))
    if len(order) <= 12:
        s.tables.append(TableBlock("Head-to-head win rate of row vs column (n in parentheses)", ["", *order],
                                   [[m, *[_cell(rates[i][j], counts[i][j]) for j in range(len(order))]]
                                    for i, m in enumerate(order)], css_class="matrix"))


def _cell(rate: float, n: int) -> str:
    return "—" if not np.isfinite(rate) else f"{rate:.2f} ({int(n)})"


SECTIONS: dict[str, tuple[str, Callable[[ReportContext, Section], None]]] = {
    "summary": ("Run summary", summary_section),
    "leaderboard": ("Leaderboard", leaderboard_section),
    "head_to_head": ("Head-to-head win matrix", head_to_head_section),
}


def register_section(key: str, title: str, builder: Callable[[ReportContext, Section], None]) -> None:
    """Add (or replace) a report section; it is rendered in insertion order."""
    SECTIONS[key] = (title, builder)


def _register_analysis_sections() -> None:
    for key, title, builder in analysis_sections.ANALYSIS_SECTIONS:
        register_section(key, title, builder)


_register_analysis_sections()

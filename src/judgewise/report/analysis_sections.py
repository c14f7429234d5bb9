"""Report sections backed by ``judgewise.analysis`` (anchors, power, diagnostics, reliability) and the
reproduction recipe. Each calls the analysis function its CLI command calls; numbers are never recomputed here.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata

import numpy as np

from judgewise.errors import JudgewiseError
from judgewise.report import charts
from judgewise.report.context import ReportContext
from judgewise.report.model import Figure, NotApplicable, Section, TableBlock, fmt_num


def anchors_section(ctx: ReportContext, s: Section) -> None:
    import judgewise.analysis.anchors  # noqa: F401  (slot until the anchor study lands)

    raise ImportError(name="judgewise.analysis.anchors (report adapter)")


def inverted_u_section(ctx: ReportContext, s: Section) -> None:
    import judgewise.analysis.anchors  # noqa: F401

    raise ImportError(name="judgewise.analysis.anchors (report adapter)")


POWER_WIN_RATES = tuple(round(0.52 + 0.01 * i, 2) for i in range(29))  # 0.52 … 0.80
TABLE2_WIN_RATES = (0.55, 0.6, 0.65, 0.7, 0.75)  # Anchor Table 2 rows


def observed_tie_rate(ctx: ReportContext) -> tuple[float, str]:
    """Tie rate of this run = 1 − informativeness (Anchor §4.3), from the anchor study's own function."""
    from judgewise.analysis.anchors import informativeness_of_run

    return informativeness_of_run(ctx)


def power_section(ctx: ReportContext, s: Section) -> None:
    from judgewise.analysis.power import sign_test_sample_size

    tie_rate, how = _tie_rate(ctx)
    s.source = "judgewise.analysis.power.sign_test_sample_size (Anchor §4.3, Table 2) — as `judgewise power sign`"
    s.facts = [("Observed tie rate", f"{tie_rate:.3f} ({how})"), ("Test", "one-sided sign test, α = 0.05, power 0.8")]
    if tie_rate >= 1:
        raise NotApplicable("every comparison is a tie: no sample size reaches any power")
    curves = {m: [sign_test_sample_size(w, tie_rate, method=m).n_total for w in POWER_WIN_RATES]
              for m in ("normal", "exact")}
    series = {f"{m} (total prompts)": (list(POWER_WIN_RATES), curves[m]) for m in curves}
    s.figures.append(Figure("power", f"Prompts needed (ties included) to detect a win rate among discordant pairs, "
                            f"at tie rate {tie_rate:.2f}", charts.line_chart(
                                series, xlabel="win rate among discordant pairs", ylabel="prompts needed (log10)",
                                log_y=True)))
    rows = []
    for w in TABLE2_WIN_RATES:
        res = {m: sign_test_sample_size(w, tie_rate, method=m) for m in ("normal", "exact")}
        rows.append([f"{w:.2f}", res["normal"].n_informative, res["normal"].n_total,
                     res["exact"].n_informative, res["exact"].n_total])
    s.tables.append(TableBlock(f"Sample sizes at the observed tie rate {tie_rate:.3f} (normal approximation as in "
                               "Anchor Table 2, and exact binomial)",
                               ["win rate", "base (normal)", "total (normal)", "base (exact)", "total (exact)"], rows))


def _tie_rate(ctx: ReportContext) -> tuple[float, str]:
    try:
        return observed_tie_rate(ctx)
    except ImportError:
        from judgewise.analysis.bias import proportion

        ties = proportion(np.isclose(ctx.valid["outcome"].to_numpy(float), 0.5).astype(float))
        return ties.estimate, "share of judgments with outcome exactly 0.5"


def diagnostics_section(ctx: ReportContext, s: Section) -> None:
    from judgewise.analysis import bias

    df, responses = ctx.valid, ctx.run.responses
    s.source = ("judgewise.analysis.bias (position_bias, swap_consistency, length_bias, markdown_bias), "
                "analysis.echo, analysis.gaming — as `judgewise diagnose`")
    checks = {"P(shown first wins)": lambda d: bias.position_bias(d),
              "swap consistency": lambda d: bias.swap_consistency(d)}
    if responses is not None:
        checks["P(longer wins)"] = lambda d: bias.length_bias(d, responses)
        checks["P(more markdown wins)"] = lambda d: bias.markdown_bias(d, responses)
    rows = []
    for judge, d in df.groupby(df["judge"].astype(str)):
        rows.append([judge, *[_proportion_cell(fn, d) for fn in checks.values()]])
    s.tables.append(TableBlock("Bias figures per judge (95% Wilson intervals; 0.5 = no bias; swap consistency: "
                               "share of both-order pairs whose decisions agree)", ["judge", *checks], rows))
    if responses is None:
        s.paragraphs.append("Length, markdown, echo and gaming checks need the model outputs: not in this input "
                            "(pass --responses).")
        return
    _echo_block(ctx, s)
    _gaming_block(ctx, s)
    _self_preference_block(ctx, s)


def _proportion_cell(fn, d) -> str:
    try:
        p = fn(d)
    except JudgewiseError as exc:
        return f"n/a ({exc.detail if hasattr(exc, 'detail') else exc})"
    if not p.n:
        return "n/a (no data)"
    return f"{p.estimate:.3f} [{p.ci_low:.3f}, {p.ci_high:.3f}] n={p.n}"


def _echo_block(ctx: ReportContext, s: Section) -> None:
    from judgewise.analysis.echo import echo_flags, echo_win_correlation

    flagged = echo_flags(ctx.run.responses)
    share = flagged.groupby(flagged["model"].astype(str))["echo"].mean().sort_values(ascending=False)
    wins = echo_win_correlation(ctx.valid, flagged)
    s.facts.append(("Echo (CLB App. F)", f"{int(flagged['echo'].sum())} of {len(flagged)} outputs echo; "
                    f"Spearman ρ(echo difference, outcome) = {wins.spearman_rho:.3f} "
                    f"(p = {wins.spearman_pvalue:.3g}, n = {wins.n_judgments}); non-echoing side wins "
                    f"{_prop(wins.clean_side_wins)} when exactly one side echoes"))
    top = share[share > 0].head(10)
    if len(top):
        s.tables.append(TableBlock("Models whose outputs echo (share of outputs)", ["model", "echo share"],
                                   [[m, f"{v:.3f}"] for m, v in top.items()]))


def _prop(p) -> str:
    return "n/a" if not p.n else f"{p.estimate:.3f} [{p.ci_low:.3f}, {p.ci_high:.3f}] (n={p.n})"


def _gaming_block(ctx: ReportContext, s: Section) -> None:
    from judgewise.analysis.gaming import detect_gaming, win_rates_from

    report = detect_gaming(ctx.run.responses, ctx.run.prompts or None, win_rates_from(ctx.valid),
                           seed=ctx.options.seed)
    rows = [[f.model, f.check, f.reason] for f in report.flags]
    s.tables.append(TableBlock(f"Judge-gaming flags: {len(report.flagged_models)} of {len(report.features)} "
                               "models flagged", ["model", "check", "reason"],
                               rows or [["—", "—", "no model flagged"]], css_class="flags"))


def _self_preference_block(ctx: ReportContext, s: Section) -> None:
    from judgewise.ratings import rank

    try:
        styled = rank(ctx.valid, method="bt", style_control=True, responses=ctx.run.responses, bootstrap=0,
                      seed=ctx.options.seed)
    except (JudgewiseError, TypeError, ValueError) as exc:
        s.paragraphs.append(f"Style control / self-preference coefficients: not available ({exc}).")
        return
    coefs = styled.info.get("style_coefficients") or styled.info.get("coefficients") or {}
    if coefs:
        s.tables.append(TableBlock("Style-controlled BT coefficients (length, markdown, self-preference)",
                                   ["feature", "coefficient"], [[k, fmt_num(v, 4)] for k, v in coefs.items()]))


def study_section(ctx: ReportContext, s: Section) -> None:
    import judgewise.analysis.study  # noqa: F401

    raise ImportError(name="judgewise.analysis.study (report adapter)")


VERSIONED = ("judgewise", "numpy", "scipy", "pandas", "pyarrow", "trueskill", "jinja2", "openai", "llama_cpp_python")


def reproduce_section(ctx: ReportContext, s: Section) -> None:
    s.source = "the command line and installed package versions"
    s.paragraphs.append("Run this command with the same inputs and package versions to get the same numbers "
                        "(bootstrap and sampling are seeded).")
    s.tables.append(TableBlock("Command", ["command"], [[ctx.options.command_line()]], css_class="command"))
    rows = [["python", sys.version.split()[0]], ["platform", platform.platform()]]
    for name in VERSIONED:
        try:
            rows.append([name, metadata.version(name.replace("_", "-"))])
        except metadata.PackageNotFoundError:
            continue
    s.tables.append(TableBlock("Versions", ["package", "version"], rows))
    s.facts = [("Seed", str(ctx.options.seed)), ("Bootstrap rounds", str(ctx.options.bootstrap)),
               ("Rating method", ctx.method)]


ANALYSIS_SECTIONS = (
    ("anchors", "Anchor informativeness and win-count histograms", anchors_section),
    ("inverted_u", "Anchor quality against a gold ranking (inverted U)", inverted_u_section),
    ("power", "Power and sample size at the observed tie rate", power_section),
    ("diagnostics", "Judge diagnostics", diagnostics_section),
    ("study", "Reliability study", study_section),
    ("reproduce", "Reproduce", reproduce_section),
)

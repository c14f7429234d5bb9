"""The tables and lines the commands print, as data: a :class:`TextTable` (title, columns, rows of cells), a
:class:`Note` (a line after a styled label), a :class:`Rule` or a plain line; the CLI only prints them
(``commands.display.show``).

:func:`fmt_num` is the one number format of every command's tables and lines, :func:`clip` the one way a table
shortens a long model name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from judgewise.analysis.panel_text import panel_lines
from judgewise.commands.options import SelectOptions
from judgewise.commands.text import add_model_lines, pair_counts_line, ranking_info_lines, study_lines
from judgewise.commands.text import trust_lines

NAME_WIDTH = 60
"""The most characters of a model name (or group value) a table shows: a longer one is cut, ending in ``…``, on
screen only (JSON and ``--output`` files keep it whole), so that it cannot push the score columns off the table."""

SHOWN_EXTRAS = ("winrate_vs_anchor", "se", "n_wins", "n_draws", "mu", "sigma", "turn_1", "turn_2")


@dataclass(frozen=True)
class TextTable:
    """A table a command prints: ``columns`` as ``(name, justify)`` or ``(name, justify, {options})``, ``rows`` as
    cell lists shown exactly as written (a ``None`` row starts a new section); ``wrap_title``: a title longer than
    the table wraps at its width (else it stays one line)."""

    title: str
    columns: list
    rows: list
    wrap_title: bool = False
    column_options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Note:
    """A line after a styled fixed label (``warning:`` in yellow)."""

    text: str
    label: str
    style: str | None = None


@dataclass(frozen=True)
class Rule:
    """A rule across the screen with a bold title: the start of a part of the demo."""

    title: str


def clip(name, width: int = NAME_WIDTH) -> str:
    """``name`` as a table shows it: whole when at most ``width`` characters, else cut to ``width``, ending in
    ``…``."""
    text = str(name)
    return text if len(text) <= width else text[:width - 1] + "…"


def fmt_num(value, digits: int = 3, *, grouping: bool = False) -> str:
    """A number for a table cell or a line: ``—`` for None/NaN, floats to ``digits`` decimals (``grouping``:
    with thousands separators, and non-floats such as counts as written)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if grouping and not isinstance(value, float):
        return str(value)
    return f"{value:{',' if grouping else ''}.{digits}f}"


def num(value, digits: int = 2) -> str:
    """A leaderboard number: :func:`fmt_num` with thousands separators."""
    return fmt_num(value, digits, grouping=True)


def agreement_lines(result: dict) -> list[str]:
    """``agree``: each agreement statistic of two rankings, then the models they share and do not."""
    lines = [f"{name:<17} {num(result[name], 4)}"
             for name in ("kendall_tau_b", "spearman_rho", "pearson_r", "kendall_distance")]
    return lines + [f"{result['n_items']} common models; only in A: {result['only_in_a'] or '-'}; "
                    f"only in B: {result['only_in_b'] or '-'}"]


def selection_line(record: dict, o: SelectOptions) -> str:
    """``select``: how many items were chosen for which judge, and the matched metric on the subset vs the pool."""
    match = (f"; inter-model {o.metric} {fmt_num(record['inter_model_subset'])} on the subset vs "
             f"{fmt_num(record['inter_model_pool'])} on the pool" if "inter_model_pool" in record else "")
    return (f"selected {o.budget} of {record['n_pool']} items for {record['target']} by {o.method} "
            f"(seed {o.seed}){match}"
            + (f"; {len(record['labelled'])} of them labelled already" if "labelled" in record else ""))


def reliability_lines(record: dict) -> list[str]:
    """``reliability``: each metric of the target judge against the human, on the selected items or on all."""
    lines = []
    for name, value in record["values"].items():
        how = ""
        if record["scope"] == "selected":
            how = f"; {record['estimator']} estimate ({record['estimator_source']})"
            if "plain_values" in record:
                how += f", plain ρ̂_S = {fmt_num(record['plain_values'][name], 4)}"
        lines.append(f"{name}({record['target']}, human) = {fmt_num(value, 4)} on {record['n_items']} items "
                     f"({record['scope']}{how})")
    return lines


def report_line(report) -> str:
    """One line: rows read / used / skipped and where from (with the first skipped reasons when any)."""
    line = (f"read {report.rows_read:,} rows from {report.source} [{report.format}]: used {report.rows_used:,}, "
            f"skipped {report.rows_skipped:,}")
    if report.rows_skipped:
        line += " (first: " + "; ".join(report.skipped_reasons[:3]) + ")"
    return line


def input_lines(read) -> list[str]:
    """The read report of a Table (with several inputs, each input's report first, then their sum) or a
    ReadReport."""
    if not hasattr(read, "extras"):
        return [report_line(read)]
    return [*map(report_line, read.extras.get("reports") or []), report_line(read.report)]


def ranking_blocks(ranking, read, group: str | None = None) -> list:
    """``rank``'s leaderboard: a table with the CI level in its header, then the ranking's notes and the read
    report (a ``group``'s table, ``by = value``, has neither: they come once, under the overall table)."""
    records = ranking.to_records()
    extras = [k for k in SHOWN_EXTRAS if records and k in records[0]]
    model_width = max((len(clip(r["model"])) for r in records), default=5)
    columns = [("rank", "right"), ("model", "left", {"no_wrap": True, "min_width": model_width}), ("score", "right"),
               (f"{ranking.ci_level * 100:g}% CI", "right", {"no_wrap": True}), *[(k, "right") for k in extras],
               ("n", "right")]
    rows = []
    for rec in records:
        ci = "—" if rec["ci_low"] is None else f"[{num(rec['ci_low'])}, {num(rec['ci_high'])}]"
        cells = [str(rec["rank"]), clip(rec["model"]), num(rec["score"]), ci]
        rows.append(cells + [num(rec.get(k), 0 if k.startswith("n_") else 2) for k in extras] + [f"{rec['n']:,}"])
    title = f"judgewise rank · method {ranking.method}" + (f" · {group}" if group else "")
    table = TextTable(title, columns, rows, wrap_title=True)
    return [table] if group else [table, *ranking_info_lines(ranking), *input_lines(read)]


def grouped_blocks(grouped) -> list:
    """``rank --by``: one leaderboard per group (``by = value``), then the groups not ranked and why."""
    from judgewise.ratings.grouped import MISSING  # numpy: not loaded for --help

    board = lambda label: f"no {clip(grouped.by)} value" if label is MISSING else \
        f"{clip(grouped.by)} = {clip(label)}"  # noqa: E731
    blocks = [b for label, ranking in grouped.groups.items() for b in ranking_blocks(ranking, None, board(label))]
    blocks += [Note(f"{board(label)} ({grouped.rows[label]:,} rows) not ranked: {why}", "note:")
               for label, why in grouped.skipped.items()]
    return [*blocks, f"overall (all {grouped.by} values):"]


def evaluation_blocks(result) -> list:
    """What ``evaluate`` prints: the design and why, the placement of an added model, the ranking with its
    intervals and CI-aware ranks (or that it has none), the trust block."""
    from judgewise.ratings.coverage import interval_line  # on use: importing judgewise.ratings loads pandas

    level = f"{result.ranking.ci_level * 100:g}%"
    rows = []
    added = (result.placement or {}).get("model")
    for rec in result.ranking.to_records():
        ci = "—" if rec["ci_low"] is None else f"[{fmt_num(rec['ci_low'], 1, grouping=True)}, " \
                                               f"{fmt_num(rec['ci_high'], 1, grouping=True)}]"
        name = clip(rec["model"]) + ("  ← added" if rec["model"] == added else "")
        rows.append([str(rec["rank"]), name, fmt_num(rec["score"], 1, grouping=True), ci, f"{rec['n']:,}"])
    table = TextTable(f"judgewise evaluate · design {result.design} · Bradley–Terry (Elo scale)",
                      [("rank", "right"), ("model", "left"), ("score", "right"), (f"{level} CI", "right"),
                       ("n", "right")], rows, column_options={"no_wrap": True})
    return [*(f"design {result.design}: {reason}" for reason in result.reasons),
            *(add_model_lines(result.placement) if result.placement else []), table, interval_line(result.ranking),
            *trust_lines(result)]


def diagnosis_blocks(result, report, level: float, panel: dict | None = None) -> list:
    """``diagnose``: the figures as one table (judge, figure, estimate, interval, n), then style control, echo,
    judge gaming, warnings, the panel whose verdicts were diagnosed (``--panel``) and the read report."""
    rows = []
    for jb in result.judges:
        for i, (name, p) in enumerate(jb.figures().items()):
            rows.append([jb.judge if i == 0 else "", name, fmt_num(p.estimate),
                         f"[{fmt_num(p.ci_low)}, {fmt_num(p.ci_high)}]", f"{p.n:,}"])
        rows.append(None)  # a section per judge
    columns = [("judge", "left"), ("figure", "left"), ("estimate", "right"),
               (f"{level * 100:g}% CI (Wilson)", "right"), ("n", "right")]
    blocks = [TextTable("judgewise diagnose · judge bias figures", columns, rows, wrap_title=True)]
    if result.style is not None:
        blocks += style_blocks(result.style)
    if result.echo is not None:
        e = result.echo
        blocks.append(f"echo: ρ(echo_a − echo_b, outcome) = {fmt_num(e.spearman_rho)}; the non-echoing side wins "
                      f"{fmt_num(e.clean_side_wins.estimate)} of {e.n_one_sided:,} judgments where one side echoes")
    if result.gaming is not None:
        flagged = result.gaming.flagged_models
        blocks.append(f"judge gaming: {len(flagged)} of {len(result.gaming.features)} models flagged"
                      + (f" ({', '.join(flagged)})" if flagged else ""))
    return [*blocks, *(Note(w, "warning:", "yellow") for w in result.warnings),
            *(panel_lines(panel) if panel else []), report_line(report)]


def _ci(row: dict, name: str) -> str:
    return f"{fmt_num(row[name])} [{fmt_num(row[name + '_low'])}, {fmt_num(row[name + '_high'])}]"


def alignment_blocks(result) -> list:
    """``accuracy``: the comparison table, the settings, per-model accuracy, the filter report and what was
    skipped."""
    level, st = result.settings["level"], result.settings
    title = (f"judgewise accuracy · rankings vs ground-truth accuracy "
             f"({level * 100:g}% normal bootstrap CI over prompts, {st['bootstrap']} rounds)")
    names = ("source", "pairs", "judgments", "Kendall τ", "Spearman ρ", "Pearson r", "Kendall distance", "note")
    comparison = TextTable(title, [(n, "left" if n in ("source", "pairs", "note") else "right") for n in names],
                           [[row["source"], row["subset"], f"{row['n_judgments']:,}", _ci(row, "kendall_tau_b"),
                             _ci(row, "spearman_rho"), _ci(row, "pearson_r"), _ci(row, "kendall_distance"),
                             row["note"]] for row in result.table.to_dict(orient="records")], wrap_title=True)
    ridge = "auto" if st["bt_l2"] is None else f"{st['bt_l2']:g}"
    settings = (f"settings: Elo k={st['elo_k']:g}, BT ridge l2={ridge}, unparsed answers: {st['unparsed']} "
                f"(the paper's code: k=32, l2=1, exclude)")
    bt = result.scores.get(("bt", "all"))
    direct = result.direct["accuracy"] if result.direct is not None else None
    rows = [[model, fmt_num(row["accuracy"]), fmt_num(row["parse_rate"]),
             fmt_num(direct.get(model)) if direct is not None else "—",
             fmt_num(bt.get(model), 1) if bt is not None else "—", "yes" if row["kept"] else "no"]
            for model, row in result.accuracy.sort_values("accuracy", ascending=False).iterrows()]
    names = ("model", "accuracy", "parse rate", "direct judge", "BT score", "kept")
    per_model = TextTable("accuracy per model (ground truth; direct judge = correct / attempted)",
                          [(n, "left" if n == "model" else "right") for n in names], rows, wrap_title=True)
    return [comparison, settings, per_model, pair_counts_line(result.pair_counts),
            *(f"filtered ({d['step']}): {d['model']} — {d['reason']}" for d in result.filter.dropped),
            *(Note(why, f"skipped {method}:", "yellow") for method, why in result.skipped.items())]


def style_blocks(style: dict) -> list:
    """Style-control coefficients per judge (with intervals when bootstrapped) and self-preference."""
    features = ("length", "headers", "lists", "bold")
    rows = []
    for judge, entry in style["per_judge"].items():
        if "skipped" in entry:
            rows.append([judge, *["—"] * len(features), "—"])
            continue
        agree = entry.get("ranking_agreement")
        rows.append([judge, *[_coef(entry["coefficients"].get(f)) for f in features],
                     fmt_num(agree["kendall_tau_b"]) if agree else "— (< 3 models)"])
    blocks = [TextTable("style control · BT coefficients (log-odds of winning per SD of the a−b difference)",
                        [(n, "left" if n == "judge" else "right") for n in ("judge", *features, "τ plain vs styled")],
                        rows, wrap_title=True)]
    sp = style["self_preference"]
    blocks.append(f"self-preference: not estimable — {sp['skipped']}" if "skipped" in sp else
                  f"self-preference coefficient: {_coef(sp['coefficients']['self_preference'])}")
    if not style["bootstrap"]:
        blocks.append("coefficients without intervals: pass --bootstrap 50 for percentile intervals over prompts")
    return blocks


def _coef(c: dict | None) -> str:
    if not c:
        return "—"
    if c.get("ci_low") is None:
        return fmt_num(c["estimate"])
    return f"{fmt_num(c['estimate'])} [{fmt_num(c['ci_low'])}, {fmt_num(c['ci_high'])}]"


def echo_blocks(res, n_games: int, echo_text: str, times: int) -> list:
    """``echo-test``: P(A wins) per condition, the paper's Wald contrasts and the paired bootstrap contrast."""
    rows = [[c, fmt_num(res.p_a[c].estimate), f"[{fmt_num(res.p_a[c].ci_low)}, {fmt_num(res.p_a[c].ci_high)}]",
             f"[{fmt_num(res.wald[c]['ci_low'])}, {fmt_num(res.wald[c]['ci_high'])}]", f"{res.wald[c]['n']:,}"]
            for c in ("original", "echo_a", "echo_b")]
    table = TextTable(f"echo intervention · P(A wins) per condition ({res.n_base:,} base pairs, {n_games:,} games, "
                      f"echo text: {echo_text} ×{times})",
                      [("condition", "left"), ("P(A wins)", "right"), ("95% Wilson", "right"),
                       ("95% Wald (paper)", "right"), ("n", "right")], rows, wrap_title=True)
    contrasts = [f"contrast echo={name}: {w['estimate']:+.3f}, 95% Wald [{w['ci_low']:+.3f}, {w['ci_high']:+.3f}]"
                 for name, w in ((name, res.wald[name]) for name in ("+1 vs 0", "-1 vs 0", "+1 vs -1"))]
    paired = (f"paired contrast P(A | echo on A) − P(A | echo on B) = {res.contrast:+.3f}, 95% paired bootstrap "
              f"[{res.ci_low:+.3f}, {res.ci_high:+.3f}] over {res.n_base:,} base pairs (CLB: −0.52 for o3 on "
              "non-discriminative BBH pairs)")
    return [table, *contrasts, paired]


def study_blocks(summary: dict) -> list:
    """``study``: per target × metric table, the headline lines, and App. D's pairwise table."""
    pops = {(p["target"], p["metric"]): p["population"] for p in summary["population"]}
    method = summary["headline"]["method"]
    columns = [(col, "left" if col in ("target", "metric") else "right")
               for col in ("target", "metric", "population", "err random", f"err {method}", "Δ err", "macro win",
                           "micro win", "savings")]
    rows = [[r.target, r.metric, fmt_num(pops[(r.target, r.metric)]), fmt_num(r.error_random),
             fmt_num(r.error_method), f"{-100 * r.improvement:+.1f}%", fmt_num(r.macro_win, 2),
             fmt_num(r.micro_win, 2), f"{100 * r.savings:.1f}%" if not math.isnan(r.savings) else "—"]
            for r in _frame(summary["per_target"]).itertuples(index=False)]
    table = TextTable(f"{method} vs random, per target judge and metric (mean over budgets)", columns, rows)
    return [table, *study_lines(summary), *pairwise_blocks(summary)]


def _frame(records):
    import pandas as pd  # lazily: the command line starts without it (``--help``)

    return pd.DataFrame(records)


def pairwise_blocks(summary: dict) -> list:
    """Metric Match App. D: every method against every other, error and classification macro win rates."""
    pairs = _frame(summary["pairwise"])
    if pairs.empty:
        return []
    methods = list(dict.fromkeys(pairs["method"]))
    cell = {(r.method, r.versus): r for r in pairs.itertuples(index=False)}
    rows = [[m] + ["—" if m == v else f"{fmt_num(cell[(m, v)].error_macro, 2)} / "
                   f"{fmt_num(cell[(m, v)].classification_macro, 2)}" for v in methods] for m in methods]
    return [TextTable("App. D: macro win rate of the row method against the column method, on estimation error / "
                      "on threshold classification (mean over metrics and budgets)",
                      [("method", "left")] + [(v, "right") for v in methods], rows)]

"""Report sections backed by ``judgewise.analysis`` (anchors, power, diagnostics, reliability) and the
reproduction recipe. Each calls the analysis function its CLI command calls; numbers are never recomputed here.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.analysis import anchor_selection
from judgewise.analysis.anchor_experiments import anchor_quality
from judgewise.analysis.bias import proportion
from judgewise.analysis.diagnostics import diagnose, with_truth
from judgewise.analysis.human_anchored import human_anchored_labels, rank_set_text as span
from judgewise.analysis.human_pairs import store_label_frame
from judgewise.analysis.labelling import judge_scores_per_item, labeller_agreement, reliability_so_far
from judgewise.analysis.power import sign_test_sample_size
from judgewise.errors import InputError
from judgewise.store.labels import current_labels, labels_as_scores
from judgewise.report import charts
from judgewise.report.context import ReportContext
from judgewise.report.inputs import read_gold
from judgewise.report.document import Figure, NotApplicable, Omitted, Section, TableBlock, fmt_num


def anchors_section(ctx: ReportContext, s: Section) -> None:
    s.source = "judgewise.analysis.anchor_selection (informativeness, win_count_histogram, anchor_report; Anchor §4.2–4.3)"
    if ctx.anchor:
        reports = [ctx.memo(("anchor", ctx.anchor), lambda: anchor_selection.report_from_judgments(ctx.valid, ctx.anchor))]
        s.paragraphs.append(f"Every model was compared with the anchor {ctx.anchor}. A comparison is informative for "
                            "a pair of models when their verdicts against the anchor differ (Anchor §4.3).")
    else:
        qd = _quadratic(ctx)
        order = [m for m in ctx.order if m in qd.models]
        reports = [anchor_selection.anchor_report(m, qd.anchor_verdicts(qd.models.index(m))) for m in order]
        s.paragraphs.append("No single anchor in this run: every model is evaluated as a candidate anchor on the "
                            "all-pairs judgments (leaderboard order). Mid-ranked anchors are usually the most "
                            "informative (Anchor §4.1, §5.3).")
    s.tables.append(TableBlock(
        "Anchor informativeness I (share of model pairs the anchor's verdicts tell apart), budget wasted (1 − I), "
        "prompts where the anchor beat every model, prompts where every model got the same verdict",
        ["anchor", "I (collapsed)", "I (5-way)", "wasted", "anchor beats all", "no signal", "prompts", "models"],
        [[r.anchor, fmt_num(r.informativeness), fmt_num(r.informativeness_5way), fmt_num(r.wasted_share),
          fmt_num(r.anchor_wins_all_share), fmt_num(r.no_signal_share), fmt_num(r.n_prompts), fmt_num(r.n_models)]
         for r in reports]))
    for r in reports[:12]:
        s.figures.append(Figure(f"hist-{len(s.figures)}", f"{r.anchor}: prompts by number of models that beat it "
                                f"(I = {r.informativeness:.2f})", charts.bar_chart(
                                    list(range(len(r.histogram))), r.histogram, xlabel="models beating the anchor",
                                    ylabel="prompts", title=f"anchor {r.anchor}", width=300, height=200)))


def _quadratic(ctx: ReportContext):
    """The run's all-pairs outcome tensor, built once for the anchors and inverted-U sections."""
    return ctx.memo("quadratic", lambda: anchor_selection.QuadraticData(ctx.valid))


def inverted_u_section(ctx: ReportContext, s: Section) -> None:
    if ctx.anchor:
        raise NotApplicable(f"anchor quality needs all-pairs judgments (every model against every other); this run "
                            f"compares every model with the one anchor {ctx.anchor}")
    qd = _quadratic(ctx)
    gold, label = None, "quadratic Bradley–Terry on these judgments (the paper's π_quad; pass --gold for another)"
    if ctx.options.gold is not None:
        by_model = read_gold(ctx.options.gold)
        missing = [m for m in qd.models if m not in by_model]
        if missing:
            raise InputError(f"the gold ranking lacks models of this run: {missing[:10]}", file=str(ctx.options.gold))
        gold, label = np.array([by_model[m] for m in qd.models]), f"the gold ranking in {ctx.options.gold}"
    table = anchor_quality(qd, gold)
    s.source = "judgewise.analysis.anchor_experiments.anchor_quality (Anchor §2 Eq. 1, §4.1)"
    s.paragraphs.append(f"For every model used as the only anchor: Kendall τ between the anchor-based ranking and "
                        f"{label}, against the anchor's rank in that ranking. Mid-ranked anchors usually give the best "
                        "rankings (an inverted U).")
    s.figures.append(Figure("inverted_u", "Anchor quality τ against the anchor's gold rank (1 = best model)",
                            charts.scatter_chart(table["gold_rank"].tolist(), table["tau"].tolist(),
                                                 table["anchor"].astype(str).tolist(), xlabel="anchor's gold rank",
                                                 ylabel="Kendall τ with gold", connect=True)))
    s.tables.append(TableBlock("Anchor quality per anchor", ["gold rank", "anchor", "Kendall τ", "informativeness"],
                               [[int(r.gold_rank), r.anchor, fmt_num(r.tau), fmt_num(r.informativeness)]
                                for r in table.itertuples()]))


POWER_WIN_RATES = tuple(round(0.52 + 0.01 * i, 2) for i in range(29))  # 0.52 … 0.80
TABLE2_WIN_RATES = (0.55, 0.6, 0.65, 0.7, 0.75)  # Anchor Table 2 rows


def power_section(ctx: ReportContext, s: Section) -> None:
    tie_rate, how = _tie_rate(ctx)
    s.source = "judgewise.analysis.power.sign_test_sample_size (Anchor §4.3, Table 2) — as `judgewise power sign`"
    s.facts = [("Observed tie rate", f"{tie_rate:.3f} ({how})"), ("Test", "one-sided sign test, α = 0.05, power 0.8")]
    if tie_rate >= 1:
        raise NotApplicable("every comparison is a tie: no sample size reaches any power")
    curves = {m: [sign_test_sample_size(w, tie_rate, method=m).n_total for w in POWER_WIN_RATES]
              for m in ("normal", "exact")}
    names = {"normal": "normal approx.", "exact": "exact binomial"}
    series = {names[m]: (list(POWER_WIN_RATES), curves[m]) for m in curves}
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
    """The share of comparisons that carry no signal for the sign test: 1 − I against the anchor for an anchor
    design (Anchor §4.3), else the share of tied direct comparisons."""
    if ctx.anchor:
        r = ctx.memo(("anchor", ctx.anchor), lambda: anchor_selection.report_from_judgments(ctx.valid, ctx.anchor))
        return r.wasted_share, f"1 − informativeness of anchor {ctx.anchor}"
    ties = proportion(np.isclose(ctx.valid["outcome"].to_numpy(float), 0.5).astype(float))
    return ties.estimate, "share of judgments that are ties"


def diagnostics_section(ctx: ReportContext, s: Section) -> None:
    s.source = "judgewise.analysis.diagnostics.diagnose — as `judgewise diagnose`"
    judgments, truth = with_truth(ctx.run.judgments)
    d = diagnose(judgments, ctx.run.responses, truth_col=truth, prompts=ctx.run.prompts or None,
                 seed=ctx.seed)
    _bias_block(d, s)
    s.paragraphs += [f"⚠ {w}" for w in d.warnings]
    if ctx.run.responses is None:
        s.paragraphs.append("Length, markdown, style-control, self-preference, echo and gaming checks need the "
                            "model outputs, which this input does not carry (pass --responses).")
        return
    if d.echo is not None:
        e = d.echo
        s.facts.append(("Echo (CLB App. F)", f"Spearman ρ(echo difference, outcome) = {fmt_num(e.spearman_rho)} "
                        f"(p = {fmt_num(e.spearman_pvalue)}, n = {e.n_judgments}); when exactly one side echoes "
                        f"({e.n_one_sided} judgments) the clean side wins {_prop(e.clean_side_wins)}"))
    if d.gaming is not None:
        rows = [[f.model, f.check, f.reason] for f in d.gaming.flags]
        s.tables.append(TableBlock(f"Judge-gaming flags: {len(d.gaming.flagged_models)} of {len(d.gaming.features)}"
                                   " models flagged", ["model", "check", "reason"],
                                   rows or [["—", "—", "no model flagged"]], css_class="flags"))
    if d.style:
        _style_block(d.style, s)


def _bias_block(d, s: Section) -> None:
    names = list(dict.fromkeys(k for jb in d.judges for k in jb.figures()))
    rows, labels, est, lo, hi = [], [], [], [], []
    for jb in d.judges:
        figs = jb.figures()
        rows.append([jb.judge, fmt_num(jb.n_judgments), fmt_num(jb.n_errors),
                     *[_prop(figs[n]) if n in figs else "—" for n in names]])
        for n, p in figs.items():
            labels.append(f"{n} · {jb.judge}" if len(d.judges) > 1 else n)
            est.append(p.estimate), lo.append(p.ci_low), hi.append(p.ci_high)
    s.tables.append(TableBlock("Bias figures per judge (95% Wilson intervals; 0.5 = no bias for the P(…) figures)",
                               ["judge", "judgments", "no verdict", *names], rows))
    if labels:
        s.figures.append(Figure("bias", "Bias figures with 95% intervals (0.5 = no preference)",
                                charts.interval_chart(labels, est, lo, hi, xlabel="probability")))


STYLE_FEATURES = ("length", "headers", "lists", "bold")


def _style_block(style: dict, s: Section) -> None:
    """Per-judge style-control coefficients and τ plain vs styled, and the self-preference coefficient, as
    :func:`judgewise.analysis.diagnostics.style_effects` returns them (the table `judgewise diagnose` prints)."""
    rows = []
    for judge, entry in style["per_judge"].items():
        if "skipped" in entry:
            rows.append([judge, *["—"] * len(STYLE_FEATURES), f"skipped: {entry['skipped']}"])
            continue
        agree = entry.get("ranking_agreement")
        rows.append([judge, *[_coef(entry["coefficients"].get(f)) for f in STYLE_FEATURES],
                     fmt_num(agree["kendall_tau_b"]) if agree else "— (< 3 models)"])
    s.tables.append(TableBlock("Style-controlled Bradley–Terry coefficients (log-odds of winning per SD of the a−b "
                               "feature difference; bootstrap intervals over prompts when --bootstrap is given) and "
                               "Kendall τ between the rankings with and without style control (CLB §3.2.1, §5.3)",
                               ["judge", *STYLE_FEATURES, "τ plain vs styled"], rows))
    sp = style["self_preference"]
    s.facts.append(("Self-preference coefficient", f"not estimable — {sp['skipped']}" if "skipped" in sp
                    else _coef(sp["coefficients"]["self_preference"])))


def _coef(c: dict | None) -> str:
    if not c:
        return "—"
    if c.get("ci_low") is None:
        return fmt_num(c["estimate"], 4)
    return f"{fmt_num(c['estimate'], 4)} [{fmt_num(c['ci_low'], 4)}, {fmt_num(c['ci_high'], 4)}]"


def _prop(p) -> str:
    return "n/a" if not p.n else f"{p.estimate:.3f} [{p.ci_low:.3f}, {p.ci_high:.3f}] (n={fmt_num(p.n)})"


def study_section(ctx: ReportContext, s: Section) -> None:
    data = study_data(ctx.options.study)
    s.source = ("judgewise.analysis.study.StudyResult.as_dict (error_table, annotation_savings, per_target_summary, "
                "win_rates) — as `judgewise study --json`")
    settings = data.get("settings", {})
    s.facts = [(k.replace("_", " "), ", ".join(map(str, v)) if isinstance(v, list) else str(v))
               for k, v in settings.items()]
    errors = pd.DataFrame(data["errors"])
    for metric, g in errors.groupby("metric", sort=False):
        curve = g.groupby(["method", "budget"], sort=False)["mean_error"].mean()
        series = {m: (list(c.index.get_level_values("budget")), list(c.to_numpy()))
                  for m, c in curve.groupby(level="method", sort=False)}
        s.figures.append(Figure(f"study-{metric}", f"{metric}: mean estimation error |ρ̂ − ρ| against the human-label "
                                "budget, per selection method (averaged over target judges)",
                                charts.line_chart(series, xlabel="human labels (budget)", ylabel="mean error")))
    savings = pd.DataFrame(data.get("savings", []))
    if len(savings):
        method = data.get("headline", {}).get("method", "metric-match")
        s.tables.append(TableBlock(f"Annotation savings of {method}: budget E_m(R) that matches random's error at "
                                   "budget R, relative savings (R − E_m)/R and cost C(R) (Metric Match §4.1.2–4.1.3)",
                                   list(savings.columns), [[fmt_num(v, 4) for v in row] for row in
                                                           savings.itertuples(index=False)]))
    per_target = pd.DataFrame(data.get("per_target", []))
    if len(per_target):
        s.tables.append(TableBlock("Per target judge and metric", list(per_target.columns),
                                   [[fmt_num(v, 3) for v in row] for row in per_target.itertuples(index=False)]))


def study_data(study) -> dict:
    """The study summary: a StudyResult, or the JSON file `judgewise study --json` wrote."""
    if study is None:
        raise NotApplicable("no reliability study given: run `judgewise study … --json > study.json` and pass "
                            "`--study study.json`")
    if hasattr(study, "as_dict"):
        return study.as_dict()
    try:
        data = json.loads(Path(study).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise InputError(f"cannot read the study summary ({type(exc).__name__}: {exc})", file=str(study)) from None
    if not isinstance(data, dict) or "errors" not in data:
        raise InputError('expected the JSON of `judgewise study --json` (with an "errors" list)', file=str(study))
    return data


def human_labels_section(ctx: ReportContext, s: Section) -> None:
    """The store's human labels (``judgewise label``): how many, agreement between labellers, and the judge's
    reliability against them on the labelled prompts it judged (ICC with a 95% bootstrap interval). Left out of
    reports of runs without labels."""
    rows = ctx.run.human_labels
    if rows is None or rows.empty:
        raise Omitted("no human labels in this run's store")
    labels = current_labels(rows)
    s.source = "judgewise.analysis.labelling (labeller_agreement, reliability_so_far)"
    s.facts = [("Labels", fmt_num(len(labels))), ("Labellers", fmt_num(labels["labeller"].nunique())),
               ("Items labelled", fmt_num(labels["item_id"].nunique()))]
    agreement = labeller_agreement(rows)
    if agreement:
        value = "not yet defined" if agreement["value"] is None else fmt_num(agreement["value"], 3)
        s.facts.append((f"{agreement['statistic']} between labellers", f"{value} on {agreement['n_items']} items"))
    judges = sorted(ctx.valid["judge"].dropna().astype(str).unique()) if "judge" in ctx.valid else []
    so_far = reliability_so_far(judge_scores_per_item(ctx.valid), rows, "icc", seed=ctx.seed)
    if so_far["reliability"] is not None:
        low, high = so_far["interval"] or (float("nan"), float("nan"))
        s.facts.append((f"ICC({', '.join(judges) or 'judge'}, human)",
                        f"{fmt_num(so_far['reliability'], 3)} [{fmt_num(low, 3)}, {fmt_num(high, 3)}] on "
                        f"{so_far['labelled']} items"))
    s.tables.append(TableBlock("Labels per labeller", ["labeller", "labels"],
                               [[str(k), fmt_num(v)] for k, v in labels["labeller"].value_counts().items()]))


HUMAN_ALPHA = 0.05  # the report's rank-sets hold the human ranking with probability ≥ 95%


def human_anchored_section(ctx: ReportContext, s: Section) -> None:
    """Prediction-powered rank-sets (``rank --human`` with the store's labels): the judge's verdicts corrected by
    the human labels on the prompts both saw (:func:`judgewise.analysis.human_anchored.human_anchored_labels`). Left out
    of reports of runs without labels."""
    rows = ctx.run.human_labels
    if rows is None or rows.empty:
        raise Omitted("no human labels in this run's store")
    human = store_label_frame(labels_as_scores(rows), ctx.valid)
    result = human_anchored_labels(ctx.valid, human, HUMAN_ALPHA, "the store's human labels")
    counts = result.labels
    s.source = "judgewise.analysis.human_anchored (prediction-powered ranking, Chatzi et al. 2024)"
    s.facts = [("Human labels used", f"{fmt_num(counts['matched'])} of {fmt_num(counts['given'])} "
                                     f"labelled items ({fmt_num(counts['unmatched'])} on no judged pair)"),
               ("Comparisons judged only", fmt_num(result.n_judge)),
               ("Rectifier (largest correction of a win probability)", fmt_num(result.rectifier_size, 3)),
               ("Judge weight λ (PPI++)", fmt_num(result.lam, 2))]
    s.paragraphs.append(f"Each model's rank-set holds the rank humans would give it; all hold together with "
                        f"probability ≥ {1 - HUMAN_ALPHA:g}.")
    index = {m: i for i, m in enumerate(result.models)}
    table = []
    for model in (m for m in ctx.order if m in index):
        i = index[model]
        table.append([model, span(result.lo[i], result.hi[i]),
                      span(result.human_only["lo"][i], result.human_only["hi"][i]),
                      span(result.judge_only["lo"][i], result.judge_only["hi"][i]),
                      fmt_num(result.theta[i], 3)])
    s.tables.append(TableBlock("Rank-sets (leaderboard order)", ["model", "rank-set", "humans only", "judge only",
                                                                 "P(preferred)"], table))


VERSIONED = ("judgewise", "numpy", "scipy", "pandas", "pyarrow", "trueskill", "jinja2", "openai", "llama_cpp_python")


HASH_CHUNK = 1 << 20  # bytes hashed at a time: a fingerprint never holds a file whole


def _fingerprint(path: Path, read: list[Path]) -> tuple[str, str]:
    """(size, first 16 hex digits of SHA-256) of a file, or of a folder's files the readers read (``read``: the
    run's :attr:`RunData.files_read`; unrelated files beside them are not inputs), in name order; each file
    hashed in chunks as ``name\\0size\\0bytes``."""
    if path.is_dir():
        root = path.resolve()
        files = sorted({f.resolve() for f in read if f.resolve().is_relative_to(root) and f.is_file()})
    else:
        root, files = None, [path]
    digest, size = hashlib.sha256(), 0
    for f in files:
        with open(f, "rb") as fh:
            length = os.fstat(fh.fileno()).st_size
            digest.update(f"{f.relative_to(root) if root else f.name}\0{length}\0".encode())
            while chunk := fh.read(HASH_CHUNK):
                digest.update(chunk)
        size += length
    return fmt_num(size) + " bytes", digest.hexdigest()[:16]


def reproduce_section(ctx: ReportContext, s: Section) -> None:
    s.source = "the command line and installed package versions"
    s.paragraphs.append("Run this command with the same inputs and package versions to get the same numbers "
                        "(bootstrap and sampling are seeded).")
    s.tables.append(TableBlock("Command", ["command"], [[ctx.options.command_line()]], css_class="command"))
    inputs = [[src, *_fingerprint(Path(src), ctx.run.files_read)] for src in ctx.run.sources if Path(src).exists()]
    if inputs:
        s.tables.append(TableBlock("Inputs (SHA-256 of a file's bytes; of the names, sizes and bytes of the files "
                                   "read from a folder)",
                                   ["input", "size", "sha256"], inputs))
    rows = [["python", sys.version.split()[0]], ["platform", platform.platform()]]
    for name in VERSIONED:
        try:
            rows.append([name, metadata.version(name.replace("_", "-"))])
        except metadata.PackageNotFoundError:
            continue
    s.tables.append(TableBlock("Versions", ["package", "version"], rows))
    s.facts = [("Seed", str(ctx.seed)), ("Bootstrap rounds", str(ctx.bootstrap)),
               ("Rating method", ctx.method)]


ANALYSIS_SECTIONS = (
    ("anchors", "Anchor informativeness and win-count histograms", anchors_section),
    ("inverted_u", "Anchor quality against a gold ranking (inverted U)", inverted_u_section),
    ("power", "Power and sample size at the observed tie rate", power_section),
    ("diagnostics", "Judge diagnostics", diagnostics_section),
    ("study", "Reliability study", study_section),
    ("human_labels", "Human labels", human_labels_section),
    ("human_anchored", "Human-anchored rank-sets", human_anchored_section),
    ("reproduce", "Reproduce", reproduce_section),
)

"""Result objects as lines of plain text, and option strings parsed: what the commands print, without printing.

Each function reads one result (a run summary, an evaluation, a ranking, a store's stats, a study summary) and
returns the lines a command shows; the CLI prints them and a notebook user can too; :func:`json_text` is the strict
JSON a command prints. The parsers turn the command line's compact option strings (``5:50:5``, ``gpt=openai``,
``a, b``) into values, raising ``ConfigError``.
"""

from __future__ import annotations

import json
import math
import sys
from typing import TYPE_CHECKING

from judgewise.analysis.panel_text import panel_lines
from judgewise.errors import ConfigError

if TYPE_CHECKING:  # the CLI imports this module for every command: no pandas at import
    from judgewise.judges.run_result import RunResult
    from judgewise.pipeline.run import JudgeOutcome


def call_totals(s: dict) -> str:
    """What a run paid: calls, retries, tokens, cost and time (the judge, grade and generate summaries)."""
    cached = f" ({s['tokens_cached']:,} cached)" if s.get("tokens_cached") else ""
    return (f"{s['calls_made']} calls, {s['retries']} retries, {s['tokens_in']:,} tokens in{cached} / "
            f"{s['tokens_out']:,} out, ${s['cost']:.4f}{s.get('price_note', '')}, {s['elapsed_s']:.1f}s")


def batch_line(b: dict) -> str:
    """What the batches of a run did (``RunResult.batch_counts``)."""
    resumed = f" (+{b['resumed']} open batches of an earlier run polled)" if b["resumed"] else ""
    return (f"batches: {b['batches']} submitted{resumed}, {b['lines']} calls sent in them; {b['answered']} answered "
            f"at the batch price, {b['failed']} failed ({b['unreadable']} unreadable), {b['expired']} expired — "
            "those sent live or in a new batch (judge.batch_retry)"
            + (f"; {b['duplicates']} output lines answered a call already answered ({b['conflicting']} with a "
               "different answer): the first answer of each call kept" if b.get("duplicates") else ""))


def summary_lines(outcome: JudgeOutcome, output: str | None) -> list[str]:
    """A judging run's summary: games, calls, cost, failures (from its counters, ``outcome.totals``, a
    :class:`~judgewise.judges.runner.RunResult`), design and placement (from ``outcome.summary``)."""
    t, s = outcome.totals, outcome.summary
    if s.get("mode") == "single":  # pointwise grading (judges.pointwise)
        return grading_lines(t, s, output)
    lines = [f"{t.n_games} games from {t.n_comparisons} comparisons: {t.judged} judged, {t.failed} failed, "
             f"{t.cached} already stored (no call); {run_call_totals(t, s)}",
             f"store now holds for this job: {t.ok_total} ok, {t.failed_total} failed"
             + ("" if not t.failed_total else " (rerun with --retry-failed to judge failed games again)")]
    if t.maybe_charged_timeouts:
        lines.append(f"{t.maybe_charged_timeouts} calls timed out after being sent (may have been charged; "
                     "their answers never arrived)")
    if t.batches or t.batches_resumed:
        lines.append(batch_line(t.batch_counts()))
    if t.by_others:
        lines.append(f"{t.by_others} games of this job were judged by other workers while this one ran")
    if t.duplicates:
        lines.append(f"{t.duplicates} planned games repeated an earlier one (same prompt, pair and order): "
                     "judged once")
    if s.get("design"):  # a multi-round design
        stopped = (s.get("design_info") or {}).get("stopped")
        lines.append(f"design {s['design']}: {s.get('rounds', 0)} rounds"
                     + (f", stopped: {stopped}" if stopped else ""))
        lines += placement_lines(s.get("design_info") or {})
    swap = t.swap_consistency
    if swap is not None:
        lines.append(f"swap consistency (both orders name the same winner): {swap:.1%}")
    if output:
        lines.append(f"judgments written to {output}")
    return lines


def run_call_totals(t: RunResult, summary: dict | None = None) -> str:
    """:func:`call_totals` of a judging run's counters (cost and time rounded as its summary rounds them), with the
    summary's note when the judge's model has no known price."""
    return call_totals({**t.counts(), "price_note": (summary or {}).get("price_note", "")})


def grading_lines(t: RunResult, s: dict, output: str | None) -> list[str]:
    """A pointwise grading run's summary: grades, parse failures, calls, cost (the counters ``t``), the mean score
    (``s``: :func:`judgewise.judges.pointwise.grading_counts`)."""
    mean = "—" if s.get("mean_score") is None else f"{s['mean_score']:.2f}"
    lines = [f"{t.n_games} grades: {t.judged} graded, {t.failed} failed ({s['no_rating']} with no parsable "
             f"rating after a re-ask), {t.cached} already stored (no call); {run_call_totals(t, s)}",
             f"store now holds for this job: {t.ok_total} ok, {t.failed_total} failed"
             + ("" if not t.failed_total else " (rerun with --retry-failed to grade them again)")
             + f"; mean score of the {s['scored']} scored grades: {mean}"]
    if s.get("skipped_turns"):
        lines.append(f"{s['skipped_turns']} conversations lack answer turns (those turns are not graded)")
    if output:
        lines.append(f"grades written to {output}")
    return lines


def placement_lines(info: dict) -> list[str]:
    """A multi-round design's own information: where an insertion design placed the new model and each probe,
    or how often each model won a tournament bracket (empty for other designs)."""
    if info.get("champion_counts"):
        counts = sorted(info["champion_counts"].items(), key=lambda kv: -kv[1])
        return ["tournament champions (brackets won, one bracket per prompt; Arena-lite Alg. 1): "
                + ", ".join(f"{m} {c}" for m, c in counts)]
    if not info.get("new_model") or "rank" not in info:
        return []
    how = (f"{info['win_rate']:.1%} against the anchor {info['anchor']}, Elo {info['elo']:,.0f}"
           if info.get("anchor") else f"{info.get('n_probes', 0)} binary-search probes"
           + (", tied at the last probe" if info.get("tie") else "")
           + (", prompts ran out" if info.get("prompts_exhausted") else ""))
    lines = [f"placement: {info['new_model']} enters the leaderboard at rank {info['rank']} ({how})"]
    lines += [f"  probe {k}: vs {p['against']}: {p['wins']:g} of {p['matches']} won"
              for k, p in enumerate(info.get("probes") or [], 1)]
    return lines


def add_model_lines(p: dict) -> list[str]:
    """``evaluate --add-model``'s placement (:func:`judgewise.pipeline.add_model.placement_of`): the leaderboard it
    was placed into, each probe, where it landed, what it cost."""
    lines = [f"leaderboard before (BT of this judge's stored games): {' > '.join(p['leaderboard_before'])}"]
    for k, probe in enumerate(p["probes"], 1):
        wins, n = probe["wins"], probe["matches"]
        if p.get("anchor"):
            lines.append(f"{p['model']} vs the anchor {probe['against']} on {n} prompts: {wins:g} won (win rate "
                         f"{p['win_rate']:.1%}, Elo {p['elo']:,.0f} by A.6.2)")
            continue
        step = ("above it: search higher" if wins > n / 2 else "below it: search lower" if wins < n / 2
                else "even: probed again on fresh prompts")
        lines.append(f"probe {k}: {p['model']} vs {probe['against']} on {n} prompts: {wins:g} won → {step}")
    cost = (f"{p['games']:,} games judged for it, {p['calls']:,} calls paid by this run, {p['failed']:,} failed")
    if not p["complete"]:
        return lines + [f"placement: none — the budget stopped the insertion ({cost}); raise budget.max_calls and "
                        "rerun (stored games are not paid again)"]
    near = [f"below {p['above']}" if p["above"] else "at the top", f"above {p['below']}" if p["below"] else "at the bottom"]
    lines.append(f"placement: {p['model']} enters the leaderboard at rank {p['rank']} of {p['of']}, {' and '.join(near)}"
                 + (" (even with it at the last probe)" if p["tie"] else "") + f" ({cost}); the new BT ranking "
                 f"below puts it at {p['bt_rank']}")
    if p.get("anchor") and not 0.1 <= p["win_rate"] <= 0.9:
        lines.append(f"note: a win rate of {p['win_rate']:.0%} against {p['anchor']} is near the end of the scale, "
                     "where the A.6.2 conversion tells the models on that side apart poorly; --anchor a model closer "
                     "to it (Anchor §4.3: a mediocre anchor is more informative)")
    return lines


def _all_pairs(trust: dict) -> str:
    """"N for all pairs in both orders (x%)", or in one order with the both-orders count beside it."""
    share = "—" if trust["share_of_all_pairs"] is None else f"{trust['share_of_all_pairs']:.1%}"
    if trust.get("orders", "both") == "both":
        return f"{trust['all_pairs_both_orders_calls']:,} for all pairs in both orders ({share})"
    return (f"{trust['all_pairs_calls']:,} for all pairs in one order ({share}; "
            f"{trust['all_pairs_both_orders_calls']:,} in both orders)")


def _billed(trust: dict) -> str:
    """How the trust block's cost was billed (prompt tokens read from the cache) and what a batch would cost."""
    if not trust.get("cost"):
        return ""
    cached = trust.get("billed_tokens_cached") or 0
    share = (f"{cached:,} of {trust.get('billed_tokens_in', 0):,} prompt tokens from the prompt cache, " if cached
             else "")
    return f" as billed ({share}from the usage the API returned; by batch ~${trust.get('cost_if_batch', 0):.4f})"


def _tau_line(t: dict, tau: str) -> str:
    """The stated certainty: P(τ_m ≥ target) (the stop's rule) and the expected τ_m, what they assume."""
    margin = t["target"].get("margin_elo")
    probability = t.get("tau_probability")
    said = (f"P(Kendall τ ≥ {t['target']['kendall_tau']:g}) = {probability:.2f}, expected τ {tau}"
            if probability is not None else f"posterior-expected Kendall τ {tau}")
    return (f"at the stop: {said} (pairs within ±{margin:g} Elo count as agreeing; ridge BT fit, l2 = "
            f"{t['bt_l2']:g}, covariance clustered by prompt; it assumes the judge's verdicts follow BT, not that "
            "the judge is right)")


def _record_lines(t: dict) -> list[str]:
    """The likely ties, and the stopping rule's measured record for runs like this one (and a warning)."""
    lines = []
    if t.get("likely_ties"):
        lines.append("likely tied (within the margin; their order is not vouched for): "
                     + ", ".join(f"{a} ~ {b}" for a, b in t["likely_ties"]))
    record = t.get("calibration") or {}
    if record.get("measured"):
        lines.append(f"record: {record['measured']}")
    if record.get("warning"):
        lines.append(f"warning: {record['warning']}")
    return lines


def trust_lines(result) -> list[str]:
    """An :class:`~judgewise.pipeline.evaluation.EvaluateResult`'s trust block: the stop, expected τ, calls, biases."""
    t = result.trust
    tau = "—" if t["expected_kendall_tau"] is None else f"{t['expected_kendall_tau']:.3f}"
    lines = [f"stopped: {result.stopped} (target: {t['target_meaning']}"
             + (f"; the design's own stop: {t['design_stop']}" if t.get("design_stop") else "") + ")",
             _tau_line(t, tau),
             f"calls: {t['calls']:,} of {_all_pairs(t)}; paid by this run: {t['paid_calls_this_run']:,}; failed: "
             f"{t['failed']:,}; cost ${t['cost']:.4f}{_billed(t)}{t.get('price_note', '')}; {t['rounds']} rounds"]
    lines += _record_lines(t)
    if t.get("panel"):
        lines += panel_evaluation_lines(t["panel"])
    for key, what in (("swap_consistency", "swap consistency (both orders name the same winner)"),
                      ("position_bias_first_shown_wins", "position bias: P(first shown wins)")):
        p = t.get(key)
        if p:
            lines.append(f"{what}: {p['estimate']:.1%} [{p['ci_low']:.1%}, {p['ci_high']:.1%}] over {p['n']:,}")
    for anchor, value in (t.get("anchor_informativeness") or {}).items():
        lines.append(f"anchor {anchor}: informativeness {value:.2f} (Anchor §4.3)")
    pilot = t.get("anchor_pilot")
    if pilot:
        lines.append(pilot["reason"])
    flags = t.get("judge_gaming")
    if flags is not None:
        shown = [f"{f['model']} {f['check']} {f['value']:.0%}"
                 + ("" if f["win_rate"] is None else f" (wins {f['win_rate']:.0%})") for f in flags]
        lines.append("judge-gaming flags on the answers judged: " + (", ".join(shown) if shown else "none")
                     + (" — reasons in --json trust.judge_gaming" if shown else ""))
    pw = t.get("power_at_observed_ties")
    if pw:
        lines.append(f"power at the observed tie rate ({pw['tie_rate']:.0%}): the closest adjacent pair "
                     f"{pw['closest_pair'][0]} > {pw['closest_pair'][1]} (BT P(win) {pw['win_rate']:.2f}) needs "
                     f"{pw['prompts_needed']:,} prompts for {pw['power']:.0%} power at α={pw['alpha']:g} "
                     f"(sign test, Anchor §4.3); its {pw['games_judged_for_pair']:,} games give power "
                     f"{pw['power_as_run']:.0%}")
    return lines


def panel_evaluation_lines(panel: dict) -> list[str]:
    """``evaluate`` with a panel: what its verdicts rest on (:func:`panel_lines`) and each member's calls."""
    calls = ", ".join(f"{m} {panel['member_calls'][m]:,} ({panel['member_paid_calls'][m]:,} paid by this run)"
                      for m in panel["members"])
    return panel_lines(panel) + [f"  calls per member: {calls}"]


def ranking_info_lines(ranking) -> list[str]:
    """How a ranking's intervals were made and, for style control, the fitted coefficients; BT separation; pooling."""
    from judgewise.ratings.coverage import interval_line  # on use: importing judgewise.ratings loads pandas

    lines = [interval_line(ranking)]
    coefficients = ranking.info.get("coefficients")
    if coefficients:
        units = ranking.info.get("coefficient_units", "")
        lines.append("style coefficients" + (f" ({units})" if units else "") + ": "
                     + ", ".join(f"{name} {value:+.3f}" for name, value in coefficients.items()))
    lines += arena_hard_lines(ranking)
    if ranking.info.get("separated"):
        lines.append(f"BT: data separated ({ranking.info['separated']}), so the MLE does not exist; fitted with "
                     f"l2={ranking.info['l2']:g} (a weak N(0, {ranking.info['l2'] ** -0.5:g}²) prior on log-odds); "
                     f"pass --l2 0 to refuse instead")
    if ranking.info.get("pooled_judges"):
        lines.append(ranking.info["pooled_judges"])
    if ranking.info.get("panel"):
        lines += panel_lines(ranking.info["panel"])
    if ranking.info.get("lc_path"):
        lines.append(lc_line(ranking.info))
    if ranking.info.get("grade_pairs"):
        lines.append(grade_pairs_line(ranking.info["grade_pairs"]))
    return lines + soft_lines(ranking)


def grade_pairs_line(counts: dict) -> str:
    """What a pairwise method ranked when it was given pointwise grades (``ratings.pointwise.grade_pairs``)."""
    return (f"outcomes from grades: {counts['pairs']:,} pairs of models graded on the same prompt and turn from "
            f"{counts['grades']:,} scored grades (the higher grade wins; {counts['ties']:,} equal grades tie); "
            "n counts a model's pairs")


def panel_run_lines(outcome) -> list[str]:
    """``judge`` on a panel config: each member's summary (its own judge and stored calls), then the panel's."""
    lines = []
    for member, label in zip(outcome.members, outcome.panel.members):
        lines += [f"member {label}:", *("  " + line for line in summary_lines(member, None))]
    lines += panel_lines(outcome.panel.as_dict())
    if outcome.output:
        lines.append(f"members' judgments written to {outcome.output} (rank them as a panel: judgewise rank "
                     f"{outcome.output} --panel {','.join(outcome.panel.members)})")
    return lines


def soft_lines(ranking) -> list[str]:
    """Whether outcomes were the judge's soft preferences (``rank --soft``), or could have been."""
    soft = ranking.info.get("soft") or {}
    n, rows = soft.get("available", 0), soft.get("rows", 0)
    if soft.get("used"):
        thresholded = " (TrueSkill rounds them to win/draw/loss)" if ranking.method == "trueskill" else ""
        return [f"outcomes: soft — {n:,} of {rows:,} judgments rated by the judge's expected outcome from logprobs "
                f"(a fractional win){thresholded}" + (f"; {rows - n:,} without logprobs keep their verdict"
                                                       if rows > n else "")]
    if n:
        return [f"outcomes: hard verdicts; {n:,} of {rows:,} judgments also carry a soft preference from logprobs "
                "(--soft rates them as fractional wins)"]
    return []


def arena_hard_lines(ranking) -> list[str]:
    """The Arena-Hard conventions a ranking used: the 3× weighting, the pinned baseline, the style definition."""
    info, lines = ranking.info, []
    if info.get("weighting") == "arena_hard":
        lines.append("weighting: arena-hard (a strong verdict, A>>B or B>>A, counts as 3 games, as Arena-Hard-Auto's "
                     "show_result.py does; --weighting none counts each game once)")
    if ranking.method == "bt" and info.get("anchor") is not None and "winrate_vs_anchor" in ranking.extra:
        lines.append(f"Elo pinned at {info['anchor']} = {info.get('anchor_rating', 1000):g}; winrate_vs_anchor = "
                     f"predicted win rate (%) against it (Arena-Hard-Auto's leaderboard score)")
    style = info.get("style")
    if style:
        lines.append(f"style definition: {style['definition']} (counts: {style['counts']}; ridge l2 {info['l2']:.4g}"
                     f" on strengths, {style['l2_features']:g} on coefficients); --style-definition to change")
    return lines


def lc_line(info: dict) -> str:
    """Which length control ``lc_winrate`` applied: self-fitted, or AlpacaEval's GLM from the given inputs."""
    if info["lc_path"] == "self-fit":
        slope = info.get("shared_length_coef")
        return ("length control: self-fitted on this table (instruction difficulty and "
                + (f"one length slope {slope:+.3f} per tanh unit" if slope is not None else "per-model slopes")
                + "); AlpacaEval's exact LC: --lc-difficulty [--lc-weights]")
    sources = list(info.get("lc_source", {}).values())
    gamed = f", {info['lc_gamed_rows']:,} gamed-baseline rows" if info.get("lc_gamed_rows") else ""
    line = f"length control: AlpacaEval length_controlled_v1, difficulty {info['lc_difficulty']}{gamed}; "
    if info.get("lc_weights"):
        line += (f"{sources.count('weights')} models from weights {info['lc_weights']} (fixed: no bootstrap "
                 "width), ")
    return line + f"{sources.count('fit')} fitted (L1, C by 5-fold CV)"


def store_stats_lines(s: dict) -> list[str]:
    """A store's :meth:`JudgmentStore.stats`: totals, then per judge, per model and per failure reason."""
    cached = f" ({s['tokens_cached']:,} cached)" if s.get("tokens_cached") else ""
    lines = [f"{s['store']}: {s['games']} games, {s['ok']} ok, {s['failed']} failed, {s['calls']} calls, "
             f"{s['tokens_in']:,} tokens in{cached} / {s['tokens_out']:,} out, ${s['cost']:.4f}"]
    if s.get("in_flight_claims") or s.get("queued"):  # a run (or workers, PostgreSQL) judging it now
        lines.append(f"  in flight: {s.get('in_flight_claims', 0)} claimed games"
                     + (f", {s['queued']} games queued for workers" if "queued" in s else ""))
    lines += [f"  judge {name}: {t['ok']} ok, {t['failed']} failed, ${t['cost']:.4f}"
              for name, t in s["by_judge"].items()]
    lines += [f"  model {model}: {t['games']} games, {t['ok']} ok, {t['failed']} failed"
              for model, t in s["by_model"].items()]
    return lines + [f"  failed x{n}: {reason}" for reason, n in s["failure_reasons"].items()]


def study_lines(summary: dict) -> list[str]:
    """A human-validation study's win rates per metric, the other methods, and the headline next to the paper's."""
    head = summary["headline"]
    method = head["method"]
    lines = [f"{m['metric']}: error {-100 * head['improvement_by_metric'][m['metric']]:+.1f}% vs random, "
             f"macro win {m['macro']:.3f} [{m['macro_lo']:.3f}, {m['macro_hi']:.3f}], micro win "
             f"{m['micro']:.3f} [{m['micro_lo']:.3f}, {m['micro_hi']:.3f}]"
             for m in summary["win_rates"][method]["by_metric"]]
    lines += [f"{k} vs random: macro win {v['overall']['macro']:.3f}, micro win {v['overall']['micro']:.3f}"
              for k, v in summary["win_rates"].items() if k != method]
    lines.append(f"error reduction with per-cell median errors (robust to ICC's heavy tails at tiny budgets): "
                 f"{100 * head['improvement_median_errors']:.1f}%")
    lines += _classification_lines(summary)

    def paper(text: str) -> str:  # the Metric Match paper's figure, shown next to Metric Match's only
        return f" (paper {text})" if method == "metric-match" else ""

    lines += _savings_lines(summary)
    lines.append(f"{method} vs random: error {-100 * head['improvement']:+.1f}%{paper('−18.7%')}, macro win rate "
                 f"{head['macro']:.3f} [{head['macro_lo']:.3f}, {head['macro_hi']:.3f}]{paper('0.838')}, micro "
                 f"{head['micro']:.3f}{paper('0.538')}, "
                 f"annotation savings {100 * head['savings']:+.1f}% of random's budget{paper('32.5%')}")
    return lines


def _savings_lines(summary: dict) -> list[str]:
    """The annotation savings (Metric Match §4.1.2) and what they are worth in the cost model (§4.1.3), over the
    same budget × metric cells: the headline's share of random's budget R saved, (R − E_m(R))/R averaged over the
    cells, and the labels R − E_m(R) and dollars C(R) averaged over them. A share weighs a small budget as much as a
    large one, labels and dollars do not, so their signs can differ: both are shown, named, side by side."""
    head, settings = summary["headline"], summary["settings"]
    rows = [r for r in summary.get("savings", []) if r["cost_savings"] == r["cost_savings"]]  # NaN: never reached
    if not rows or "minutes_per_label" not in settings:
        return []
    labels = sum(r["budget"] - r["matching_budget"] for r in rows) / len(rows)
    dollars = sum(r["cost_savings"] for r in rows) / len(rows)
    return [f"annotation savings over the {len(rows)} of {len(summary['savings'])} (budget, metric) cells where "
            f"{head['method']} reaches random's error at budget R: {100 * head['savings']:+.1f}% of R on average, "
            f"{labels:+.1f} labels on average = {'-' if dollars < 0 else '+'}${abs(dollars):,.2f} (cost model: "
            f"{settings['minutes_per_label']:g} min per label at ${settings['cost_per_hour']:,.0f}/h); the % weighs "
            f"small budgets as much as large ones; negative = more labels than random"]


def _classification_lines(summary: dict) -> list[str]:
    """Threshold classification win rates per metric (Metric Match §4.3)."""
    settings = summary["settings"]
    by_metric: dict[str, list] = {}
    for row in summary.get("classification", []):
        by_metric.setdefault(row["metric"], []).append((row["macro"], row["micro"]))
    thresholds = ", ".join(f"{t:g}" for t in settings.get("thresholds", []))
    lines = [f"classification 1[ρ̂ > t] vs 1[ρ > t] (t ∈ {{{thresholds}}}), {summary['headline']['method']} vs "
             f"random: " + "; ".join(f"{m} macro {sum(v[0] for v in vals) / len(vals):.3f} micro "
                                    f"{sum(v[1] for v in vals) / len(vals):.3f}" for m, vals in by_metric.items())]
    return lines


def pair_counts_line(counts: dict) -> str:
    """An accuracy study's pairs: discriminative or not, and why the others were left out (Correct-looks-better §5)."""
    return (f"pairs: {counts['discriminative']:,} discriminative (exactly one correct), "
            f"{counts['non-discriminative']:,} non-discriminative, "
            + (f"{counts['unparsed']:,} with an unparsed answer (in 'all' only), " if counts.get('unparsed') else "")
            + f"{counts['unknown']:,} without correctness; "
            f"left out: {counts['no_outcome']:,} without an outcome, "
            f"{counts['filtered_models']:,} with a filtered model")


def parse_budgets(text: str) -> list[int]:
    """``5:50:5`` (start:stop:step, stop included) or ``10,20,50``."""
    try:
        if ":" in text:
            start, stop, step = (int(v) for v in text.split(":"))
            if step <= 0:
                raise ValueError
            return list(range(start, stop + 1, step))
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ConfigError(f"--budgets {text!r}: expected start:stop:step (e.g. 5:50:5) or a list (10,20,50)") from None


def parse_families(pairs: list[str] | None) -> dict[str, str] | None:
    """``["gpt=openai", "o1=openai"]`` → ``{"gpt": "openai", "o1": "openai"}`` (name prefixes → family)."""
    if not pairs:
        return None
    out = {}
    for pair in pairs:
        name, sep, family = pair.partition("=")
        if not sep or not name.strip() or not family.strip():
            raise ConfigError(f'--family expects NAME=FAMILY (e.g. "gpt=openai"), got "{pair}"')
        out[name.strip()] = family.strip()
    return out


def generate_lines(s: dict, written: list[str]) -> list[str]:
    """A generate run's summary (:func:`judgewise.pipeline.generate.generate`): answers, calls, cost, failures, files."""
    lines = [f"{s['answers']} answers: {s['generated']} generated, {s['failed']} failed, {s['cached']} already stored "
             f"(no call); {call_totals(s)}",
             f"store {s['store']} holds for this job: {s['stored_ok']} ok, {s['stored_failed']} failed"
             + ("" if not s["stored_failed"] else " (rerun with --retry-failed to generate them again)")
             + f"; {s['complete']} of {s['conversations']} conversations complete"]
    if s.get("blocked"):
        lines.append(f"{s['blocked']} later turns not asked: an earlier turn of their conversation failed")
    if s.get("truncated"):
        lines.append(f"{s['truncated']} answers stopped at max_tokens (finish_reason length)")
    if s.get("maybe_charged_timeouts"):
        lines.append(f"{s['maybe_charged_timeouts']} calls timed out after being sent (may have been charged; their "
                     "answers never arrived)")
    if s.get("reused_answers"):
        lines.append(f"{s['reused_answers']} answers received before a stop were taken from the store's journal "
                     "(not paid again)")
    if s.get("batch"):
        lines.append(batch_line(s["batch"]))
    for path in written:
        lines.append(f"written: {path} ({s['format']})")
    if not written:
        lines.append("no output written (set output: or --output); `responses:` of evaluate/judge can name this "
                     "generate config directly")
    return lines


def discordant_text(check) -> str:
    """The demo's pairs this run orders the other way round than all recorded verdicts (``check``: a
    ``commands.demo.ReplayCheck``): "; the other way round: a / b, c / d — …intervals overlap…" or nothing."""
    if not check.discordant:
        return ""
    pairs = [f"{a} / {b}" + ("" if overlap else " (95% intervals apart)")
             for (a, b), overlap in zip(check.discordant, check.overlapping)]
    note = ("their 95% intervals overlap, so the table does not claim their order" if all(check.overlapping) else
            "unmarked pairs: 95% intervals overlap, so the table does not claim their order")
    return f"; the other way round: {', '.join(pairs)} — {note}"


def worker_lines(summaries: list[dict]) -> list[str]:
    """``judge --executor ray --workers N``: one summary line per worker, then what the store holds."""
    lines = [f"worker {i}: {s['judged']} judged, {s['failed']} failed, {s.get('by_others', 0)} by the others, "
             f"{s['calls_made']} calls, {s['elapsed_s']:.1f}s" for i, s in enumerate(summaries, 1)]
    last = summaries[-1]
    return lines + [f"store now holds for this job: {last['ok_total']} ok, {last['failed_total']} failed"]


def export_line(info: dict, only_ok: bool) -> str:
    """``store export``: the rows written and what became of the failed games."""
    return (f"exported {info['rows']} rows to {info['output']} ({info['failed']} failed games in the store"
            f"{', left out' if only_ok else ', kept with outcome empty and their error'})")


def copy_line(info: dict) -> str:
    """``store copy``: the games and answers copied, and what the target holds now."""
    return (f"copied {info['games']} games and {info['answers']} journaled answers from {info['source']} to "
            f"{info['target']}; it now holds {info['target_games']} games ({info['target_ok']} ok; "
            f"{info['target_games_before']} before)"
            + (f"; {info['open_batches']} open batch(es) copied with the batch ledger: run judge on one of the "
               "two stores to read them" if info.get("open_batches") else ""))


def split_list(text: str) -> list[str]:
    """``"a, b,,c"`` → ``["a", "b", "c"]``: a comma-separated option."""
    return [v.strip() for v in text.split(",") if v.strip()]


def jsonable(value):
    """NaN/inf → None, numpy scalars and arrays → Python, recursively (strict JSON)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    np = sys.modules.get("numpy")  # a numpy value exists only once numpy is loaded: not imported for --help
    if isinstance(value, (list, tuple)) or (np is not None and isinstance(value, np.ndarray)):
        return [jsonable(v) for v in value]
    if np is not None and isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_text(value, indent: int | None = 2) -> str:
    """``value`` as strict JSON text (see :func:`jsonable`; other objects, e.g. paths, as their text): never
    ``NaN`` or ``Infinity``, which JSON does not have (every ``--json`` output goes through here)."""
    return json.dumps(jsonable(value), indent=indent, default=str, allow_nan=False)

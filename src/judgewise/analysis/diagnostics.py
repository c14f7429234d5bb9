"""Per-judge bias diagnosis: every bias figure with its interval, plus plain-language warnings.

Assembles :mod:`judgewise.analysis.bias` (position, swap consistency, length, markdown, agreement with a
label), :mod:`judgewise.analysis.gaming` (outputs that win without answering), :mod:`judgewise.analysis.echo`
(repetition after the final answer, CLB App. F) and, through :func:`judgewise.ratings.rank`, the style-control
coefficients and the ranking with and without style control (CLB §3.2.1, §5.3).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgewise.analysis import bias
from judgewise.analysis.bias import Proportion
from judgewise.analysis.echo import EchoWins, echo_flags, echo_win_correlation
from judgewise.analysis.gaming import GamingReport, detect_gaming, win_rates_from
from judgewise.errors import JudgewiseError
from judgewise.io.schema import usable_mask
from judgewise.ratings import rank
from judgewise.ratings.agreement import agreement
from judgewise.ratings.bootstrap import check_bootstrap, draw_units, percentile_interval, rng_from_seed

log = logging.getLogger(__name__)

# Warning thresholds (a user may change them): swap consistency below this is low.
LOW_SWAP_CONSISTENCY = 0.8


@dataclass
class JudgeBias:
    """All bias figures of one judge (a figure is None when its inputs are absent)."""

    judge: str
    n_judgments: int
    n_errors: int
    position: Proportion | None = None
    swap_consistency: Proportion | None = None
    first_wins_both_orders: Proportion | None = None
    longer_wins: Proportion | None = None
    more_markdown_wins: Proportion | None = None
    label: dict[str, Proportion] | None = None

    def figures(self) -> dict[str, Proportion]:
        """Name → figure for every figure computed (table and JSON order)."""
        out = {"position (P first wins)": self.position, "swap consistency": self.swap_consistency,
               "first wins in both orders": self.first_wins_both_orders, "P(longer wins)": self.longer_wins,
               "P(more markdown wins)": self.more_markdown_wins}
        for key, value in (self.label or {}).items():
            out[f"label agreement ({key.replace('_', ' ')})"] = value
        return {k: v for k, v in out.items() if v is not None and v.n > 0}

    def as_dict(self) -> dict:
        return {"judge": self.judge, "n_judgments": self.n_judgments, "n_errors": self.n_errors,
                "figures": {k: v.as_dict() for k, v in self.figures().items()}}


@dataclass
class Diagnosis:
    """Everything ``judgewise diagnose`` reports."""

    judges: list[JudgeBias]
    warnings: list[str] = field(default_factory=list)
    gaming: GamingReport | None = None
    echo: EchoWins | None = None
    style: dict | None = None

    def as_dict(self) -> dict:
        gaming_flags = [f.as_dict() for f in self.gaming.flags] if self.gaming else []
        return {"judges": [j.as_dict() for j in self.judges], "warnings": self.warnings,
                "gaming_flags": gaming_flags,
                "gaming_checked_models": int(len(self.gaming.features)) if self.gaming else 0,
                "echo": self.echo.as_dict() if self.echo else None, "style": self.style}


def _has_both_orders(frame: pd.DataFrame) -> bool:
    return "first" in frame.columns and frame["first"].notna().any()


def with_truth(frame: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """The judgments with model_a's true outcome in a ``truth`` column, and that column's name (None when the
    judgments carry no label): an existing ``truth`` column, or JudgeBench's ``label`` (A>B / B>A) on the
    response slots A/B."""
    if "truth" in frame.columns:
        return frame, "truth"
    if "label" in frame.columns and frame["label"].isin(["A>B", "B>A"]).all():
        a_better = frame["label"] == "A>B"
        return frame.assign(truth=((frame["model_a"] == "A") == a_better).astype(float)), "truth"
    return frame, None


def judge_bias(frame: pd.DataFrame, judge: str, responses: pd.DataFrame | None = None,
               truth_col: str | None = None, level: float = 0.95) -> JudgeBias:
    """Every figure :mod:`bias` can compute for one judge's judgments."""
    errors = int((~usable_mask(frame)).sum())  # failed or without an outcome (io.schema)
    out = JudgeBias(judge, int(len(frame)), errors)
    if _has_both_orders(frame):
        out.position = bias.position_bias(frame, level)
        out.swap_consistency = bias.swap_consistency(frame, level)
        out.first_wins_both_orders = bias.first_wins_both_orders(frame, level)
    if responses is not None and len(responses):
        out.longer_wins = bias.length_bias(frame, responses, level)
        out.more_markdown_wins = bias.markdown_bias(frame, responses, level)
    if truth_col and truth_col in frame.columns:
        out.label = bias.label_agreement(frame, truth_col, level)
    return out


def _bias_warnings(jb: JudgeBias) -> list[str]:
    """Plain-language warnings for figures whose interval excludes 'no bias'."""
    out = []
    p = jb.position
    if p is not None and p.n and not (p.ci_low <= 0.5 <= p.ci_high):
        side = "first" if p.estimate > 0.5 else "second"
        out.append(f"{jb.judge}: position bias — the {side}-shown response wins {_fmt(p)}; judge both orders "
                   "(or alternate them) and average")
    s = jb.swap_consistency
    if s is not None and s.n and s.estimate < LOW_SWAP_CONSISTENCY:
        out.append(f"{jb.judge}: only {_fmt(s)} of both-order pairs get the same verdict in both orders")
    for name, fig in (("longer", jb.longer_wins), ("more-markdown", jb.more_markdown_wins)):
        if fig is not None and fig.n and not (fig.ci_low <= 0.5 <= fig.ci_high):
            out.append(f"{jb.judge}: the {name} response wins {_fmt(fig)} (0.5 = no preference); "
                       "consider style control")
    if jb.n_errors:
        out.append(f"{jb.judge}: {jb.n_errors} of {jb.n_judgments} judgments have no verdict (left out)")
    return out


def _echo_warning(p: Proportion) -> list[str]:
    """A warning when echo sways verdicts: P(non-echoing side wins) with an interval excluding 0.5."""
    if not p.n or p.ci_low <= 0.5 <= p.ci_high:
        return []
    side = "non-echoing" if p.estimate > 0.5 else "echoing"
    shown = p if p.estimate > 0.5 else Proportion(1 - p.estimate, 1 - p.ci_high, 1 - p.ci_low, p.n)
    return [f"echo (CLB App. F): where exactly one side repeats itself after its answer, the {side} side wins "
            f"{_fmt(shown)} of {p.n} judgments"]


def _fmt(p: Proportion) -> str:
    return f"{p.estimate:.3f} [{p.ci_low:.3f}, {p.ci_high:.3f}]"


def diagnose(judgments: pd.DataFrame, responses: pd.DataFrame | None = None, *, truth_col: str | None = None,
             prompts: dict[str, str] | None = None, style_control: bool = True, families: dict | None = None,
             bootstrap: int = 0, level: float = 0.95, seed: int = 0) -> Diagnosis:
    """Diagnose every judge in ``judgments`` (canonical table); ``responses`` enables length, markdown,
    echo, gaming and style-control figures; ``truth_col`` names a column with model_a's true outcome.
    ``bootstrap`` rounds give intervals to the style and self-preference coefficients (proportions always
    have Wilson intervals); ``families`` maps model/judge names to families for self-preference."""
    check_bootstrap(bootstrap, seed)
    judges = [judge_bias(g, str(name), responses, truth_col, level)
              for name, g in judgments.groupby(judgments["judge"].astype(str), sort=True)]
    warnings = [w for jb in judges for w in _bias_warnings(jb)]
    if not _has_both_orders(judgments):
        warnings.append("no 'first' column: position bias and swap consistency need the shown order")
    out = Diagnosis(judges, warnings)
    if responses is not None and len(responses):
        out.gaming = detect_gaming(responses, prompts, win_rates_from(judgments), seed=seed)
        out.warnings += [f"judge gaming? {f.model}: {f.reason}" for f in out.gaming.flags]
        out.echo = echo_win_correlation(judgments, echo_flags(responses))
        out.warnings += _echo_warning(out.echo.clean_side_wins)
        if style_control:
            out.style = _jsonable(style_effects(judgments, responses, families=families, bootstrap=bootstrap,
                                                level=level, seed=seed))
    return out


def _prompt_resample(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """One bootstrap replicate: prompts drawn with replacement, each bringing all its judgments."""
    groups = list(frame.groupby(frame["prompt_id"].astype(str)).indices.values())
    draw = draw_units(rng, len(groups))
    return frame.iloc[np.concatenate([groups[k] for k in draw])]


def coefficient_intervals(fit, frame: pd.DataFrame, rounds: int, level: float, seed: int) -> dict:
    """Coefficients of ``fit(frame) -> dict`` with percentile bootstrap intervals over prompts (``rounds`` refits;
    a replicate that cannot be fitted is counted, not used)."""
    point = fit(frame)
    reps, failed = {k: [] for k in point}, 0
    rng = rng_from_seed(seed)
    for _ in range(rounds):
        try:
            values = fit(_prompt_resample(frame, rng))
        except JudgewiseError:
            failed += 1
            continue
        for k in point:
            reps[k].append(values.get(k, np.nan))
    out = {}
    for k, v in point.items():
        r = np.asarray(reps[k], dtype=float)
        r = r[np.isfinite(r)]
        lo, hi = percentile_interval(r, level)
        out[k] = {"estimate": float(v), "ci_low": _num(lo), "ci_high": _num(hi), "rounds": int(len(r))}
    return {"coefficients": out, "failed_replicates": failed}


def _num(x) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def style_effects(judgments: pd.DataFrame, responses: pd.DataFrame, *, families: dict | None = None,
                  bootstrap: int = 0, level: float = 0.95, seed: int = 0) -> dict:
    """Per judge: style-control coefficients (length, headers, lists, bold; log-odds per SD) with bootstrap
    intervals, and the BT ranking with vs without style control (CLB §3.2.1, §5.3); pooled over judges: the
    self-preference coefficient (feature +1/−1/0, 0 when neither or both sides share the judge's family).
    All fits go through :func:`judgewise.ratings.rank`; a fit that is impossible is reported with its reason.
    """
    def style_fit(frame):
        return rank(frame, method="bt", style_control=True, responses=responses).info["coefficients"]

    def self_fit(frame):
        info = rank(frame, method="bt", self_preference=True, families=families,
                    pool_judges=True).info["coefficients"]  # pooled over judges by design (see docstring)
        return {"self_preference": info["self_preference"]}

    per_judge = {}
    for judge, frame in judgments[usable_mask(judgments)].groupby(judgments["judge"].astype(str)):
        try:
            entry = coefficient_intervals(style_fit, frame, bootstrap, level, seed)
            entry["ranking_agreement"] = _plain_vs_styled(frame, responses)
        except JudgewiseError as exc:
            entry = {"skipped": str(exc)}
        per_judge[judge] = entry
    try:
        self_pref = coefficient_intervals(self_fit, judgments[usable_mask(judgments)], bootstrap, level, seed)
    except JudgewiseError as exc:
        self_pref = {"skipped": str(exc)}
    return {"per_judge": per_judge, "self_preference": self_pref, "bootstrap": bootstrap, "level": level}


def _plain_vs_styled(frame: pd.DataFrame, responses: pd.DataFrame) -> dict | None:
    """Rank agreement of BT with and without style control (None with fewer than 3 models)."""
    plain = rank(frame, method="bt")
    styled = rank(frame, method="bt", style_control=True, responses=responses)
    if len(plain.models) < 3:
        return None
    y = dict(zip(styled.models, styled.scores))
    return {**agreement(plain.scores, [y[m] for m in plain.models]).as_dict(),
            "plain": plain.to_records(), "style_controlled": styled.to_records()}


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    return obj

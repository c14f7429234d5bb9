"""The echo intervention (CLB App. F.2): append an echo to one side, re-judge, report the contrast.

For each base comparison (neither side echoing) three conditions are judged through the engine
(:func:`judgewise.judges.runner.run_judging`, both answer orders by default): ``original``, ``echo_a`` (the
question–answer sequence appended three times to response A) and ``echo_b``. The effect is the contrast
``P(A wins | echo on B) − P(A wins | echo on A)`` (CLB reports +0.52 for o3 on non-discriminative BBH pairs),
with a paired bootstrap interval over base comparisons.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from judgewise.analysis.bias import Proportion, proportion
from judgewise.analysis.echo import ANSWER_MARKERS, detect_echo
from judgewise.io.schema import usable_mask
from judgewise.judges.base import Comparison
from judgewise.ratings.bootstrap import draw_units, percentile_interval

CONDITIONS = ("original", "echo_a", "echo_b")
SEPARATOR = "::"  # prompt_id of a condition's comparison = base prompt_id + SEPARATOR + condition


def final_answer_line(text: str) -> str:
    """The response's final-answer statement (first marker match), else its last non-empty line."""
    found = [m for p in ANSWER_MARKERS.values() for m in [p.search(text)] if m]
    if found:
        return min(found, key=lambda m: m.start()).group().strip()
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def echo_suffix(question: str, response: str, times: int = 3) -> str:
    """The echo CLB App. F.2 appends: the question–answer sequence repeated ``times`` times."""
    block = f"\n\nQuestion: {question.strip()}\nAnswer: {final_answer_line(response)}"
    return block * times


def echo_conditions(comparisons: list[Comparison], times: int = 3) -> list[Comparison]:
    """The three conditions of every base comparison, tagged in ``prompt_id`` (``<id>::<condition>``)."""
    out = []
    for c in comparisons:
        out.append(replace(c, prompt_id=f"{c.prompt_id}{SEPARATOR}original"))
        out.append(replace(c, prompt_id=f"{c.prompt_id}{SEPARATOR}echo_a",
                           response_a=c.response_a + echo_suffix(c.prompt, c.response_a, times)))
        out.append(replace(c, prompt_id=f"{c.prompt_id}{SEPARATOR}echo_b",
                           response_b=c.response_b + echo_suffix(c.prompt, c.response_b, times)))
    return out


def echo_free(comparisons: list[Comparison], detector=detect_echo) -> list[Comparison]:
    """Base comparisons where neither response echoes already (CLB App. F.2's baseline pairs)."""
    return [c for c in comparisons if not detector(c.response_a).echo and not detector(c.response_b).echo]


@dataclass
class EchoIntervention:
    """P(A wins) per condition (Wilson intervals), the contrast with its paired bootstrap interval, and
    the per-base-comparison outcomes it was computed from (columns = conditions)."""

    p_a: dict[str, Proportion]
    contrast: float
    ci_low: float
    ci_high: float
    n_base: int
    per_base: pd.DataFrame

    def as_dict(self) -> dict:
        return {"p_a": {k: v.as_dict() for k, v in self.p_a.items()}, "contrast": self.contrast,
                "ci_low": self.ci_low, "ci_high": self.ci_high, "n_base": self.n_base}


def echo_contrast(judgments: pd.DataFrame, *, bootstrap: int = 2000, level: float = 0.95,
                  seed: int = 0) -> EchoIntervention:
    """Contrast ``P(A | echo_b) − P(A | echo_a)`` from judgments of :func:`echo_conditions` comparisons.

    Outcomes are averaged over the judged orders per (base comparison, condition); the interval resamples
    base comparisons (paired: a base keeps its three conditions together).
    """
    ok = judgments[usable_mask(judgments)]
    parts = ok["prompt_id"].astype(str).str.rsplit(SEPARATOR, n=1, expand=True)
    frame = ok.assign(base=parts[0] + "|" + ok["model_a"].astype(str) + "|" + ok["model_b"].astype(str),
                      condition=parts[1])
    per_base = frame.pivot_table(index="base", columns="condition", values="outcome", aggfunc="mean")
    per_base = per_base.reindex(columns=list(CONDITIONS)).dropna(subset=["echo_a", "echo_b"])
    p_a = {c: proportion(frame.loc[frame["condition"] == c, "outcome"], level) for c in CONDITIONS}
    diff = (per_base["echo_b"] - per_base["echo_a"]).to_numpy(dtype=float)
    if not len(diff):
        return EchoIntervention(p_a, float("nan"), float("nan"), float("nan"), 0, per_base)
    rng = np.random.default_rng(seed)
    reps = diff[draw_units(rng, len(diff), bootstrap)].mean(axis=1)
    low, high = percentile_interval(reps, level)
    return EchoIntervention(p_a, float(diff.mean()), float(low), float(high), len(diff), per_base)


def run_echo_intervention(comparisons: list[Comparison], judge, store, *, times: int = 3,
                          skip_echoing: bool = True, bootstrap: int = 2000, seed: int = 0,
                          **run_options) -> tuple[EchoIntervention, object]:
    """Build the three conditions, judge them through the engine, and return (contrast, RunResult).

    ``store`` is a JudgmentStore or path (every game is stored, so a rerun only judges what is missing);
    ``run_options`` go to :func:`run_judging` (``orders``, ``concurrency``, …).
    """
    from judgewise.judges.runner import run_judging

    base = echo_free(comparisons) if skip_echoing else list(comparisons)
    result = run_judging(echo_conditions(base, times), judge, store, seed=seed, **run_options)
    return echo_contrast(result.judgments, bootstrap=bootstrap, seed=seed), result

"""The echo intervention (CLB App. F.2): append an echo to one side, re-judge, report the contrast.

For each base comparison (neither side echoing) three conditions are judged through the engine
(:func:`judgewise.judges.runner.run_judging`, both answer orders by default): ``original``, ``echo_a`` (the
question–answer sequence appended three times to response A) and ``echo_b``.

The paper's conventions are the defaults (from the CLB code's intervention scripts):

* the echo text (:data:`ECHO_TEXTS`): ``"paper"`` appends "\n\n<question>\n<full answer>" three times;
  ``"final-answer"`` (judgewise's earlier text) appends "Question: …\nAnswer: <final-answer line>" instead;
* the sign: the contrast is echo = +1 vs echo = −1, ``P(A wins | echo on A) − P(A wins | echo on B)`` (CLB:
  0.29 − 0.81 = −0.52 for o3 on non-discriminative BBH pairs: echo hurts the side that echoes);
* intervals: the paper's unpaired Wald intervals (z = 1.96 at 95%; per condition and for the three contrasts
  +1 vs 0, −1 vs 0, +1 vs −1, over judged rows) are reported beside judgewise's paired percentile bootstrap over
  base comparisons.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import stats

from judgewise.analysis.bias import Proportion, proportion
from judgewise.analysis.echo import detect_echo, first_final_answer
from judgewise.errors import ConfigError
from judgewise.io.schema import usable_mask
from judgewise.judges.base import Comparison
from judgewise.judges.runner import run_judging
from judgewise.ratings.bootstrap import draw_units, percentile_interval

CONDITIONS = ("original", "echo_a", "echo_b")
SEPARATOR = "::"  # prompt_id of a condition's comparison = base prompt_id + SEPARATOR + condition


def final_answer_line(text: str) -> str:
    """The response's first final-answer statement (:func:`~judgewise.analysis.echo.first_final_answer`), else its
    last non-empty line."""
    first = first_final_answer(text)
    if first is not None:
        return first.group().strip()
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


ECHO_TEXTS = {
    "paper": lambda question, response: f"\n\n{question}\n{response}",
    "final-answer": lambda question, response: (f"\n\nQuestion: {question.strip()}\n"
                                                f"Answer: {final_answer_line(response)}"),
}
"""One repeated block of echo text by name (module docstring): the paper's full question and answer, or the
labelled final-answer line."""


def echo_suffix(question: str, response: str, times: int = 3, text: str = "paper") -> str:
    """The echo CLB App. F.2 appends: a question–answer block (:data:`ECHO_TEXTS`) repeated ``times`` times."""
    if text not in ECHO_TEXTS:
        raise ConfigError(f"unknown echo text {text!r}; known: {sorted(ECHO_TEXTS)}")
    return ECHO_TEXTS[text](question, response) * times


def echo_conditions(comparisons: list[Comparison], times: int = 3, text: str = "paper") -> list[Comparison]:
    """The three conditions of every base comparison, tagged in ``prompt_id`` (``<id>::<condition>``)."""
    out = []
    for c in comparisons:
        out.append(replace(c, prompt_id=f"{c.prompt_id}{SEPARATOR}original"))
        out.append(replace(c, prompt_id=f"{c.prompt_id}{SEPARATOR}echo_a",
                           response_a=c.response_a + echo_suffix(c.prompt, c.response_a, times, text)))
        out.append(replace(c, prompt_id=f"{c.prompt_id}{SEPARATOR}echo_b",
                           response_b=c.response_b + echo_suffix(c.prompt, c.response_b, times, text)))
    return out


def echo_free(comparisons: list[Comparison], detector=detect_echo) -> list[Comparison]:
    """Base comparisons where neither response echoes already (CLB App. F.2's baseline pairs)."""
    return [c for c in comparisons if not detector(c.response_a).echo and not detector(c.response_b).echo]


WALD_CONTRASTS = {"+1 vs 0": ("echo_a", "original"), "-1 vs 0": ("echo_b", "original"),
                  "+1 vs -1": ("echo_a", "echo_b")}
"""The paper's contrasts of P(A wins): echo = +1 (on A), 0 (original), −1 (on B)."""


def wald(values, other=None, level: float = 0.95) -> dict:
    """The paper's Wald interval (CLB intervention analysis): of a proportion ``mean(values)``, or with ``other``
    of the unpaired difference ``mean(values) − mean(other)``, se² = Σ p(1 − p)/n."""
    z = float(stats.norm.ppf(0.5 + level / 2))
    groups = [np.asarray(values, float)] + ([] if other is None else [np.asarray(other, float)])
    if any(len(g) == 0 for g in groups):
        return {"estimate": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "n": 0}
    p = [float(g.mean()) for g in groups]
    est = p[0] - (p[1] if other is not None else 0.0)
    se = float(np.sqrt(sum(q * (1 - q) / len(g) for q, g in zip(p, groups))))
    return {"estimate": est, "ci_low": est - z * se, "ci_high": est + z * se, "n": int(sum(len(g) for g in groups))}


@dataclass
class EchoIntervention:
    """P(A wins) per condition (Wilson intervals), the contrast echo = +1 vs −1 (P(A | echo on A) − P(A | echo on
    B), the paper's sign) with its paired bootstrap interval, the paper's unpaired Wald intervals (``wald``:
    per condition and per contrast), and the per-base-comparison outcomes (columns = conditions)."""

    p_a: dict[str, Proportion]
    contrast: float
    ci_low: float
    ci_high: float
    n_base: int
    per_base: pd.DataFrame
    wald: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"p_a": {k: v.as_dict() for k, v in self.p_a.items()}, "contrast": self.contrast,
                "contrast_sign": "P(A | echo on A) - P(A | echo on B) (CLB: echo=+1 vs echo=-1)",
                "ci_low": self.ci_low, "ci_high": self.ci_high, "interval": "paired percentile bootstrap",
                "n_base": self.n_base, "wald": self.wald}


def echo_contrast(judgments: pd.DataFrame, *, bootstrap: int = 2000, level: float = 0.95,
                  seed: int = 0) -> EchoIntervention:
    """Contrast ``P(A | echo_a) − P(A | echo_b)`` from judgments of :func:`echo_conditions` comparisons.

    Outcomes are averaged over the judged orders per (base comparison, condition); the interval resamples
    base comparisons (paired: a base keeps its three conditions together). Beside it, the paper's unpaired
    Wald intervals over the judged rows (:func:`wald`).
    """
    ok = judgments[usable_mask(judgments)]
    parts = ok["prompt_id"].astype(str).str.rsplit(SEPARATOR, n=1, expand=True)
    frame = ok.assign(base=parts[0] + "|" + ok["model_a"].astype(str) + "|" + ok["model_b"].astype(str),
                      condition=parts[1])
    per_base = frame.pivot_table(index="base", columns="condition", values="outcome", aggfunc="mean")
    per_base = per_base.reindex(columns=list(CONDITIONS)).dropna(subset=["echo_a", "echo_b"])
    p_a = {c: proportion(frame.loc[frame["condition"] == c, "outcome"], level) for c in CONDITIONS}
    rows = {c: frame.loc[frame["condition"] == c, "outcome"].to_numpy(float) for c in CONDITIONS}
    walds = {**{c: wald(rows[c], level=level) for c in CONDITIONS},
             **{name: wald(rows[x], rows[y], level) for name, (x, y) in WALD_CONTRASTS.items()}}
    diff = (per_base["echo_a"] - per_base["echo_b"]).to_numpy(dtype=float)
    if not len(diff):
        return EchoIntervention(p_a, float("nan"), float("nan"), float("nan"), 0, per_base, walds)
    rng = np.random.default_rng(seed)
    reps = diff[draw_units(rng, len(diff), bootstrap)].mean(axis=1)
    low, high = percentile_interval(reps, level)
    return EchoIntervention(p_a, float(diff.mean()), float(low), float(high), len(diff), per_base, walds)


def run_echo_intervention(comparisons: list[Comparison], judge, store, *, times: int = 3, text: str = "paper",
                          skip_echoing: bool = True, bootstrap: int = 2000, seed: int = 0,
                          **run_options) -> tuple[EchoIntervention, object]:
    """Build the three conditions, judge them through the engine, and return (contrast, RunResult).

    ``store`` is a JudgmentStore or path (every game is stored, so a rerun only judges what is missing);
    ``run_options`` go to :func:`run_judging` (``orders``, ``concurrency``, …).
    """
    if isinstance(times, bool) or not isinstance(times, int) or times < 1:
        raise ConfigError(f"`times` must be a whole number ≥ 1 (echo blocks appended), got {times!r}")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
        raise ConfigError(f"`bootstrap` must be a whole number ≥ 0, got {bootstrap!r}")
    base = echo_free(comparisons) if skip_echoing else list(comparisons)
    result = run_judging(echo_conditions(base, times, text), judge, store, seed=seed, **run_options)
    return echo_contrast(result.judgments, bootstrap=bootstrap, seed=seed), result

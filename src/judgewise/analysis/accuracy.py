"""Accuracy alignment (Correct-looks-better, "CLB"): do pairwise rankings recover ground-truth accuracy?

Inputs are three tables keyed by ``(prompt_id, model)``:

* pairwise **judgments** (canonical);
* **correctness**: ``prompt_id, model, correct`` (1/0/true/false; empty = the answer could not be parsed, which
  counts as incorrect for accuracy and lowers the parse rate, CLB App. B step 1; a pair with an unparsed side is
  left out of both pair subsets by default, as the CLB code does — :data:`UNPARSED_RULES`);
* optional **direct** judge grades: ``prompt_id, model, label`` ∈ {correct, incorrect, not_attempted}
  (CLB §3.2.2; empty = no verdict). Direct accuracy = correct / attempted ("correct given attempted", CLB §3.1.1).

The accuracy ranking is compared with each aggregator's ranking (win share, Bradley–Terry, Elo, TrueSkill;
CLB App. C) and with the direct judge's, on all pairs and on discriminative / non-discriminative pairs
(exactly one answer correct vs both or neither; CLB §5.4), by Kendall τ-b, Spearman ρ, Pearson r and Kendall
distance (CLB §4.3) with normal bootstrap intervals over prompts (estimate ± z·SD of the prompt-resampled
figures, clipped to the figure's range: ``alignment._intervals`` says why not percentile).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.io.schema import require_columns
from judgewise.io.validate import show
from judgewise.ratings.bootstrap import rng_from_seed

DIRECT_LABELS = ("correct", "incorrect", "not_attempted")
SUBSETS = ("all", "discriminative", "non-discriminative")
FIGURES = ("kendall_tau_b", "spearman_rho", "pearson_r", "kendall_distance")
FIGURE_RANGES = {"kendall_tau_b": (-1.0, 1.0), "spearman_rho": (-1.0, 1.0), "pearson_r": (-1.0, 1.0),
                 "kendall_distance": (0.0, 1.0)}  # what each figure can be: its intervals are clipped to it


def _as_correct(values: pd.Series) -> pd.Series:
    """1.0 / 0.0 / NaN from booleans, numbers or strings (true/false/correct/incorrect/1/0)."""
    mapping = {"true": 1.0, "false": 0.0, "1": 1.0, "0": 0.0, "1.0": 1.0, "0.0": 0.0, "correct": 1.0,
               "incorrect": 0.0, "yes": 1.0, "no": 0.0}
    text = values.astype("string").str.strip().str.lower()
    out = text.map(mapping).astype(float)
    bad = values.notna() & (values.astype(str).str.strip() != "") & out.isna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"expected a correctness value (1/0, true/false), found {show(values.iloc[row])}",
                         row=row + 1, field="correct")
    return out


def refuse_repeated_answers(table: pd.DataFrame, what: str) -> None:
    """InputError at the first row repeating a (prompt_id, model) of an earlier row (one grade per answer; per judge
    when the table has a ``judge`` column)."""
    keys = pd.DataFrame({"p": table["prompt_id"].astype(str).str.strip(), "m": table["model"].astype(str).str.strip()})
    if "judge" in table.columns:
        keys["j"] = table["judge"].astype(str)
    again = np.flatnonzero(keys.duplicated().to_numpy())
    if len(again):
        row = int(again[0])
        first = int(np.flatnonzero((keys == keys.iloc[row]).all(axis=1).to_numpy())[0])
        raise InputError(f"a second {what} of model {show(keys['m'].iloc[row])} on prompt {show(keys['p'].iloc[row])} "
                         f"(first at row {first + 1}); one per answer", row=row + 1, field="model")


def ground_truth_accuracy(correctness: pd.DataFrame) -> pd.DataFrame:
    """Per model: ``n``, ``parsed``, ``parse_rate``, ``correct``, ``accuracy`` = correct / n (CLB §3.1.1)."""
    require_columns(correctness, ("prompt_id", "model", "correct"), what="ground-truth correctness table")
    c = correctness.assign(model=correctness["model"].astype(str), value=_as_correct(correctness["correct"]))
    g = c.groupby("model")["value"]
    out = pd.DataFrame({"n": g.size(), "parsed": g.count(), "correct": g.sum()})
    out["parse_rate"] = out["parsed"] / out["n"]
    out["accuracy"] = out["correct"] / out["n"]
    return out


def direct_accuracy(direct: pd.DataFrame) -> pd.DataFrame:
    """Per model direct-judge counts and ``accuracy`` = correct / attempted (CLB §3.2.2, "correct given
    attempted"); rows without a verdict are counted as ``no_verdict``."""
    require_columns(direct, ("prompt_id", "model", "label"), what="direct-judge grades table")
    label = direct["label"].astype("string").str.strip().str.lower().str.replace(r"[ \-]", "_", regex=True)
    bad = label.notna() & ~label.isin(DIRECT_LABELS) & (label != "")
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"expected one of {list(DIRECT_LABELS)}, found {show(direct['label'].iloc[row])}",
                         row=row + 1, field="label")
    d = pd.DataFrame({"model": direct["model"].astype(str), "label": label.fillna("")})
    counts = pd.crosstab(d["model"], d["label"])
    out = pd.DataFrame({k: counts[k] if k in counts else 0 for k in DIRECT_LABELS}, index=counts.index)
    out["no_verdict"] = counts[""] if "" in counts else 0
    out["attempted"] = out["correct"] + out["incorrect"]
    out["accuracy"] = out["correct"] / out["attempted"].replace(0, np.nan)
    return out


UNPARSED_RULES = ("exclude", "incorrect")
"""How a pair with an unparsed side (empty ``correct``) is split (CLB §5.4): ``"exclude"`` — in neither the
discriminative nor the non-discriminative subset (only in "all"), as the CLB code's pair filters, which keep a
side only when it was graded correct or incorrect; ``"incorrect"`` — the unparsed side counts as incorrect, as it
does for accuracy (App. B step 1)."""


def pair_kinds(judgments: pd.DataFrame, correctness: pd.DataFrame, unparsed: str = "exclude") -> np.ndarray:
    """Per judgment: ``discriminative`` (exactly one side correct), ``non-discriminative`` (both or neither),
    ``unparsed`` (a side whose answer could not be parsed, under the rule ``unparsed="exclude"``; see
    :data:`UNPARSED_RULES`) or ``unknown`` (a side without correctness) — CLB §5.4."""
    if unparsed not in UNPARSED_RULES:
        raise ConfigError(f"unparsed rule must be one of {list(UNPARSED_RULES)}, got {unparsed!r}")
    value = _as_correct(correctness["correct"])
    c = correctness.assign(value=value.fillna(-1.0))  # -1: present but unparsed
    lookup = dict(zip(zip(c["prompt_id"].astype(str), c["model"].astype(str)), c["value"]))
    pid = judgments["prompt_id"].astype(str)
    ca = np.array([lookup.get(k, np.nan) for k in zip(pid, judgments["model_a"].astype(str))], dtype=float)
    cb = np.array([lookup.get(k, np.nan) for k in zip(pid, judgments["model_b"].astype(str))], dtype=float)
    unparsed_side = (ca == -1) | (cb == -1)
    if unparsed == "incorrect":
        ca, cb = np.where(ca == -1, 0.0, ca), np.where(cb == -1, 0.0, cb)
    kind = np.where(ca != cb, "discriminative", "non-discriminative")
    if unparsed == "exclude":
        kind = np.where(unparsed_side, "unparsed", kind)
    return np.where(np.isnan(ca) | np.isnan(cb), "unknown", kind)


# -- model filtering (CLB App. B) ---------------------------------------------------------------------

@dataclass
class ModelFilter:
    """Which models App. B's filters kept, and every dropped model with the step and reason."""

    kept: list[str]
    dropped: list[dict] = field(default_factory=list)  # {"model", "step", "reason"}
    settings: dict = field(default_factory=dict)

    def dropped_at(self, step: str) -> list[str]:
        return [d["model"] for d in self.dropped if d["step"] == step]


def _check_filters(**values: float | None) -> None:
    """ConfigError unless every given filter value is a number in [0, 1] (rates, accuracies, gaps)."""
    for name, value in values.items():
        if value is not None and not 0 <= value <= 1:  # NaN fails too
            raise ConfigError(f"--{name.replace('_', '-')} must be in [0, 1], got {value}")


def filter_models(acc: pd.DataFrame, *, min_parse_rate: float | None = None, baseline: float | None = None,
                  min_gap: float | None = None, seed: int = 0) -> ModelFilter:
    """CLB App. B's three filters, in order, on a :func:`ground_truth_accuracy` table; None skips a step.

    1. parse rate ≥ ``min_parse_rate``; 2. accuracy > ``baseline`` (chance level); 3. every two kept models
    differ in accuracy by at least ``min_gap``: walking the models sorted by accuracy, of two closer than the
    gap the one with the lower parse rate goes, else the one with lower accuracy, else a seeded coin.
    """
    _check_filters(min_parse_rate=min_parse_rate, baseline=baseline, min_gap=min_gap)
    rng = rng_from_seed(seed)
    out = ModelFilter(kept=sorted(acc.index), settings={"min_parse_rate": min_parse_rate, "baseline": baseline,
                                                        "min_gap": min_gap, "seed": seed})
    if min_parse_rate is not None:
        for m in [m for m in out.kept if acc.loc[m, "parse_rate"] < min_parse_rate]:
            out.dropped.append({"model": m, "step": "parse_rate",
                                "reason": f"parse rate {acc.loc[m, 'parse_rate']:.3f} < {min_parse_rate}"})
    if baseline is not None:
        for m in [m for m in _still(out) if acc.loc[m, "accuracy"] <= baseline]:
            out.dropped.append({"model": m, "step": "baseline",
                                "reason": f"accuracy {acc.loc[m, 'accuracy']:.3f} ≤ baseline {baseline}"})
    if min_gap is not None:
        out.dropped += _gap_filter(acc, _still(out), min_gap, rng)
    out.kept = _still(out)
    return out


def _still(f: ModelFilter) -> list[str]:
    gone = {d["model"] for d in f.dropped}
    return [m for m in f.kept if m not in gone]


def _gap_filter(acc: pd.DataFrame, models: list[str], gap: float, rng: np.random.Generator) -> list[dict]:
    kept = sorted(models, key=lambda m: -acc.loc[m, "accuracy"])
    dropped = []
    i = 0
    while i < len(kept) - 1:
        hi, lo = kept[i], kept[i + 1]
        diff = acc.loc[hi, "accuracy"] - acc.loc[lo, "accuracy"]
        if diff >= gap:
            i += 1
            continue
        pr_hi, pr_lo = acc.loc[hi, "parse_rate"], acc.loc[lo, "parse_rate"]
        if pr_hi != pr_lo:
            loser, why = (hi, "lower parse rate") if pr_hi < pr_lo else (lo, "lower parse rate")
        elif diff > 0:
            loser, why = lo, "lower accuracy"
        else:
            loser, why = (hi, lo)[int(rng.integers(2))], "tie broken at random"
        other = lo if loser == hi else hi
        dropped.append({"model": loser, "step": "min_gap",
                        "reason": f"within {gap} accuracy of {other} ({diff:.3f}); {why}"})
        kept.remove(loser)
        i = max(i - 1, 0)
    return dropped

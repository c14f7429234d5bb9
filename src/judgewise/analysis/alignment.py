"""The accuracy-alignment comparison (CLB §5.1–5.4, App. B/C): each ranking vs the accuracy ranking, with
bootstrap intervals over prompts. Inputs and formulas are described in :mod:`judgewise.analysis.accuracy`.

Aggregators (CLB App. C) live in ``AGGREGATORS`` (name → function(judgments, **options) → pd.Series of scores by
model); ``winrate`` is the share of comparisons won (ties half) over all of a model's games, the others
call :func:`judgewise.ratings.rank`. A method that is not registered in ``judgewise.ratings`` is an error; one
that cannot be fitted on a subset (e.g. an unpenalised BT on separated data) gets a row with null figures and the
reason in its ``note`` and in ``skipped`` — never silently dropped.

The paper's settings are the defaults (:data:`PAPER_SETTINGS`, from the CLB code's aggregators): Elo with
k = 32 from 1000 in the order of the judgments (Chatbot Arena uses k = 4); BT as a logistic regression with an
L2 ridge of strength 1 (scikit-learn's ``C = 1``: penalty ½‖θ‖² on summed log-losses; ``bt_l2=None`` is
judgewise's ``rank`` default: the exact MLE, a weak ridge only when the data separate); TrueSkill μ − 3σ with the
package defaults; pairs with an unparsed side in neither pair subset (``unparsed="exclude"``).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from judgewise.analysis.accuracy import (
    FIGURE_RANGES,
    FIGURES,
    SUBSETS,
    ModelFilter,
    direct_accuracy,
    filter_models,
    ground_truth_accuracy,
    pair_kinds,
    refuse_repeated_answers,
)
from judgewise.analysis.gaming import win_rates_from
from judgewise.errors import ConfigError, InputError, JudgewiseError
from judgewise.io.schema import usable_mask
from judgewise.ratings import rank
from judgewise.ratings.agreement import agreement
from judgewise.ratings.bootstrap import check_bootstrap, draw_units, normal_interval

log = logging.getLogger(__name__)


def _ranked(method: str) -> Callable[..., pd.Series]:
    def scores(judgments: pd.DataFrame, **options) -> pd.Series:
        r = rank(judgments, method=method, **options)
        out = pd.Series(np.asarray(r.scores, dtype=float), index=list(r.models))
        if r.info.get("separated"):  # bt with l2=None: the weak ridge was used; say so in the row
            out.attrs["note"] = f"separated ({r.info['separated']}): fitted with the weak ridge l2={r.info['l2']:g}"
        return out

    scores.__name__ = f"rank_{method}"
    return scores


AGGREGATORS: dict[str, Callable[..., pd.Series]] = {
    "winrate": lambda j, **_: pd.Series(win_rates_from(j)),
    "bt": _ranked("bt"),
    "elo": _ranked("elo"),
    "trueskill": _ranked("trueskill"),
}
PAPER_SETTINGS = {"elo_k": 32.0, "bt_l2": 1.0, "unparsed": "exclude"}
"""The CLB code's aggregator settings (module docstring), the defaults of :func:`accuracy_alignment`."""


def method_options(elo_k: float = 32.0, bt_l2: float | None = 1.0) -> dict[str, dict]:
    """Options passed to each aggregator: Elo's k and BT's ridge (None = the MLE with a weak ridge only on
    separated data, :func:`judgewise.ratings.bradley_terry.bradley_terry`)."""
    if not (elo_k > 0 and math.isfinite(elo_k)):  # NaN fails too
        raise ConfigError(f"`elo_k` must be a finite number > 0, got {elo_k}")
    if bt_l2 is not None and not (bt_l2 >= 0 and math.isfinite(bt_l2)):
        raise ConfigError(f"`bt_l2` must be a finite number >= 0 (or auto), got {bt_l2}")
    return {"elo": {"k": float(elo_k)}, "bt": {"l2": bt_l2}}


DIRECT = "direct"


@dataclass
class AccuracyAlignment:
    """The comparison table (one row per source × subset: figures with ``_low``/``_high`` bounds), the
    accuracy tables, the scores behind each row, App. B's filter report and what could not be computed."""

    table: pd.DataFrame
    accuracy: pd.DataFrame
    direct: pd.DataFrame | None
    scores: dict[tuple[str, str], pd.Series]
    filter: ModelFilter
    pair_counts: dict[str, int]  # judgments per pair kind, plus those left out: no outcome, filtered model
    skipped: dict[str, str] = field(default_factory=dict)
    settings: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        table = self.table.replace({np.nan: None}).to_dict(orient="records")
        acc = self.accuracy.reset_index().rename(columns={"index": "model"})
        return {"table": table, "accuracy": acc.replace({np.nan: None}).to_dict(orient="records"),
                "direct": (None if self.direct is None else
                           self.direct.reset_index().rename(columns={"index": "model"})
                           .replace({np.nan: None}).to_dict(orient="records")),
                "filter": {"kept": self.filter.kept, "dropped": self.filter.dropped,
                           "settings": self.filter.settings},
                "pair_counts": self.pair_counts, "skipped": self.skipped, "settings": self.settings}


def _figures(accuracy: pd.Series, scores: pd.Series | None) -> dict[str, float]:
    if scores is None:
        return dict.fromkeys(FIGURES, np.nan)
    common = [m for m in accuracy.index if m in scores.index and np.isfinite(scores[m])]
    if len(common) < 3:
        return dict.fromkeys(FIGURES, np.nan)
    return {k: v for k, v in agreement(accuracy[common].to_numpy(), scores[common].to_numpy()).as_dict().items()
            if k in FIGURES}


def _all_scores(judgments, kinds, direct, methods, subsets, skipped, options,
                failures: dict | None = None) -> dict[tuple[str, str], pd.Series | None]:
    """Scores of every (source, subset) on one (possibly resampled) data set; a fit that fails gives None and
    its reason in ``failures[(method, subset)]``."""
    out = {}
    for subset in subsets:
        part = judgments if subset == "all" else judgments[kinds == subset]
        for method in methods:
            if method in skipped:
                continue
            try:
                out[(method, subset)] = AGGREGATORS[method](part, **options.get(method, {})) if len(part) else None
                if not len(part) and failures is not None:
                    failures[(method, subset)] = f"no {subset} pairs"
            except JudgewiseError as exc:
                out[(method, subset)] = None
                if failures is not None:
                    failures[(method, subset)] = str(exc)
    if direct is not None:
        out[(DIRECT, "all")] = direct_accuracy(direct)["accuracy"]
    return out


def check_methods(methods, option: str = "methods") -> None:
    """ConfigError naming ``option`` (the setting that listed them) when a method is not a known aggregator."""
    unknown = [m for m in methods if m not in AGGREGATORS]
    if unknown or not len(methods):
        found = f"unknown aggregator {unknown[0]!r}" if unknown else "no aggregator"
        raise ConfigError(f"{option}: {found}; known: {', '.join(sorted(AGGREGATORS))}")


def _check_methods(methods, judgments, skipped: dict, options: dict) -> None:
    """Refuse unknown methods (:func:`check_methods`); record those not fittable on the full data in ``skipped``."""
    check_methods(methods)
    for method in methods:
        try:
            AGGREGATORS[method](judgments, **options.get(method, {}))
        except JudgewiseError as exc:
            skipped[method] = str(exc)
            log.warning("accuracy alignment: %s skipped (%s)", method, exc)


def _restrict(frame: pd.DataFrame | None, models: list[str], cols: tuple[str, ...]) -> pd.DataFrame | None:
    if frame is None:
        return None
    keep = np.ones(len(frame), dtype=bool)
    for c in cols:
        keep &= frame[c].astype(str).isin(models).to_numpy()
    return frame[keep].reset_index(drop=True)


def _check_common_models(judged: pd.DataFrame, truth_models) -> None:
    """InputError when fewer than 2 judged models have ground truth (nothing to compare; was a silent table)."""
    judged_models = set(judged["model_a"].astype(str)) | set(judged["model_b"].astype(str))
    common = judged_models & set(map(str, truth_models))
    if len(common) < 2:
        shown = ", ".join(sorted(judged_models)[:5])
        raise InputError(f"expected ground truth for at least 2 judged models ({shown}, ...), found it for "
                         f"{len(common)}: check the model names", field="model")


def accuracy_alignment(judgments: pd.DataFrame, correctness: pd.DataFrame, direct: pd.DataFrame | None = None, *,
                       methods=("winrate", "bt", "elo", "trueskill"), subsets=SUBSETS, bootstrap: int = 100,
                       level: float = 0.95, seed: int = 0, filters: dict | None = None,
                       elo_k: float = PAPER_SETTINGS["elo_k"], bt_l2: float | None = PAPER_SETTINGS["bt_l2"],
                       unparsed: str = PAPER_SETTINGS["unparsed"]) -> AccuracyAlignment:
    """Compare every aggregator's ranking (and the direct judge's) with the accuracy ranking.

    ``filters``: keyword arguments of :func:`filter_models` (CLB App. B; default none). ``bootstrap``
    resamples prompts (judgments, correctness and direct grades of a prompt together), seeded by ``seed``.
    ``elo_k``, ``bt_l2``: :func:`method_options` (defaults: the paper's, :data:`PAPER_SETTINGS`); ``unparsed``:
    :data:`judgewise.analysis.accuracy.UNPARSED_RULES`.
    """
    check_bootstrap(bootstrap, seed)
    options = method_options(elo_k, bt_l2)
    refuse_repeated_answers(correctness, "correctness value")
    if direct is not None:
        refuse_repeated_answers(direct, "direct-judge grade")
    full_acc = ground_truth_accuracy(correctness)
    filt = filter_models(full_acc, seed=seed, **(filters or {}))
    models = filt.kept
    judged = judgments[usable_mask(judgments)]
    _check_common_models(judged, full_acc.index)
    j = _restrict(judged, models, ("model_a", "model_b"))
    c = _restrict(correctness, models, ("model",))
    d = _restrict(direct, models, ("model",))
    kinds = pair_kinds(j, c, unparsed)
    skipped: dict[str, str] = {}
    _check_methods(methods, j, skipped, options)
    failures: dict[tuple[str, str], str] = {}
    point = _all_scores(j, kinds, d, methods, subsets, skipped, options, failures)
    for method in list(skipped):  # not fittable on the full data: a row per subset all the same
        for subset in subsets:
            point[(method, subset)], failures[(method, subset)] = None, skipped[method]
    for (method, subset), why in failures.items():
        skipped[f"{method} ({subset} pairs)"] = f"not estimable: {why}"
    acc = ground_truth_accuracy(c)["accuracy"]
    reps = _bootstrap(j, c, d, kinds, methods, subsets, skipped, bootstrap, np.random.default_rng(seed), options)
    rows = [_row(source, subset, scores, acc, j, d, kinds, failures, reps, level)
            for (source, subset), scores in point.items()]
    counts = {s: int((kinds == s).sum()) for s in ("discriminative", "non-discriminative", "unparsed", "unknown")}
    counts["no_outcome"] = int(len(judgments) - len(judged))  # failed calls: not verdicts
    counts["filtered_models"] = int(len(judged) - len(j))  # a side dropped by App. B's filters
    settings = {"methods": list(methods), "subsets": list(subsets), "bootstrap": bootstrap, "level": level,
                "seed": seed, "unit": "prompt", "elo_k": options["elo"]["k"], "bt_l2": bt_l2, "unparsed": unparsed}
    return AccuracyAlignment(pd.DataFrame(rows), full_acc.assign(kept=full_acc.index.isin(models)),
                             direct_accuracy(d) if d is not None else None, point, filt, counts, skipped, settings)


def _row(source, subset, scores, acc, j, d, kinds, failures, reps, level) -> dict:
    """One table row: sizes, figures, intervals, and a note (not estimable, or how it was fitted)."""
    n_judgments = int(len(d)) if source == DIRECT else int(len(j) if subset == "all" else (kinds == subset).sum())
    note = (f"not estimable: {failures[(source, subset)]}" if (source, subset) in failures
            else (scores.attrs.get("note", "") if scores is not None else ""))
    row = {"source": source, "subset": subset, "n_models": 0 if scores is None else int(scores.size),
           "n_judgments": n_judgments, "note": note}
    figures = _figures(acc, scores)
    row.update(figures)
    boot = reps.get((source, subset))
    row.update(_intervals(figures, boot, level))
    row["bootstrap_failed"] = int(np.isnan(boot).all(axis=1).sum()) if boot is not None else 0
    return row


def _bootstrap(j, c, d, kinds, methods, subsets, skipped, rounds, rng,
               options: dict) -> dict[tuple[str, str], np.ndarray]:
    """Figures of every (source, subset) on ``rounds`` prompt-resampled replicates: (rounds × figures)."""
    if rounds <= 0:
        return {}
    prompts = np.array(sorted(set(j["prompt_id"].astype(str)) | set(c["prompt_id"].astype(str))))
    groups = [_groups(t, prompts) if t is not None else None for t in (j, c, d)]
    out: dict[tuple[str, str], list] = {}
    for _ in range(rounds):
        draw = draw_units(rng, len(prompts))
        jj, cc, dd = (None if g is None else t.iloc[_rows(g, draw)] for g, t in zip(groups, (j, c, d)))
        kk = kinds[_rows(groups[0], draw)]
        acc = ground_truth_accuracy(cc)["accuracy"]
        for key, scores in _all_scores(jj, kk, dd, methods, subsets, skipped, options).items():
            out.setdefault(key, []).append([_figures(acc, scores)[f] for f in FIGURES])
    return {k: np.array(v, dtype=float) for k, v in out.items()}


def _groups(frame: pd.DataFrame, prompts: np.ndarray) -> list[np.ndarray]:
    """Row indices of ``frame`` per prompt, aligned with ``prompts``."""
    idx = frame.groupby(frame["prompt_id"].astype(str)).indices
    empty = np.array([], dtype=int)
    return [idx.get(p, empty) for p in prompts]


def _rows(groups: list[np.ndarray], draw: np.ndarray) -> np.ndarray:
    parts = [groups[k] for k in draw]
    return np.concatenate(parts) if parts else np.array([], dtype=int)


def _intervals(figures: dict[str, float], reps: np.ndarray | None, level: float) -> dict[str, float]:
    """Each figure's normal bootstrap interval (:func:`~judgewise.ratings.bootstrap.normal_interval`, clipped to
    :data:`FIGURE_RANGES`). Not percentile: every replicate re-estimates both the accuracy ranking and the judge's,
    and the added noise only lowers their agreement, so the replicates sit below the estimate (at τ = 1 all of
    them) and a percentile interval can exclude it (``1.000 [0.843, 0.979]``); the normal interval is centred on
    the estimate with the replicates' spread."""
    out = {}
    for k, name in enumerate(FIGURES):
        values = reps[:, k] if reps is not None and len(reps) else np.array([])
        lo, hi = normal_interval(figures[name], values, level, FIGURE_RANGES[name])
        out[f"{name}_low"], out[f"{name}_high"] = lo, hi
    return out

"""The Metric Match study: trials × budgets → estimation error, win rates, classification, savings and cost.

Paper: Metric Match (../shared/papers/metric-match.md) §3.3 (evaluation procedure), §4.1 (error, savings, cost
model), §4.2 (macro/micro win rates), §4.3 (threshold classification).

A *context* is one target judge on one item pool (the paper's dataset/axis/judge). For every context, metric, budget
and method the study draws ``trials`` subsets, estimates the target's reliability against the human on each and
records the estimation error |ρ̂ − ρ| against the population value ρ = T(target, human) on the whole pool.

Undefined estimates (e.g. a subset where the human labels are all equal, so ρ is 0/0) keep error NaN: mean errors
skip them (``undefined`` counts them) and in a trial-level comparison an undefined error loses to a defined one.
"""

from __future__ import annotations

import logging
import math
import warnings
import zlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgewise.analysis.reliability import get_metric
from judgewise.analysis.selection import check_budget, get_strategy, inter_model
from judgewise.errors import ConfigError, InputError
from judgewise.io.schema import SCORES_REQUIRED, require_columns
from judgewise.ratings.bootstrap import percentile_interval, rng_from_seed

log = logging.getLogger(__name__)

DEFAULT_METHODS = ("random", "stratified", "bias-correction", "metric-match", "variance-match")
DEFAULT_METRICS = ("icc", "alpha", "rho", "tau-a")  # the paper's four; its τ is τ-a (App. A Eq. 3)
DEFAULT_THRESHOLDS = (0.6, 0.7, 0.8)
BASELINE = "random"


# ---------------------------------------------------------------------------------------------------------------
# The item pool
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ScorePool:
    """Judges' and the human's scores on one common set of items (integer positions; ids kept for output)."""

    item_ids: np.ndarray          # (n,)
    judges: tuple[str, ...]       # (R,)
    scores: np.ndarray            # (R, n)
    human: np.ndarray | None      # (n,) or None when no human scores are known
    human_outside: int = 0        # human scores on items outside the pool (left out)

    def judge_index(self, name: str) -> int:
        """Position of judge ``name`` (exact, else a unique case-insensitive substring); InputError otherwise."""
        return self.judges.index(resolve_judge(name, self.judges))

    def split(self, target: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """(target scores, other judges' scores, other judges' names) for ``target``."""
        i = self.judge_index(target)
        rest = [j for j in range(len(self.judges)) if j != i]
        return self.scores[i], self.scores[rest], [self.judges[j] for j in rest]


def resolve_judge(name: str, judges) -> str:
    """The judge called ``name``: exact match, else the one judge whose name contains it (case-insensitive)."""
    judges = list(judges)
    if name in judges:
        return name
    hits = [j for j in judges if name.lower() in j.lower()]
    if len(hits) == 1:
        return hits[0]
    what = "matches several judges" if hits else "is not a judge in these scores"
    raise InputError(f"target {name!r} {what}; judges: {', '.join(hits or judges)}")


def refuse_repeated_targets(targets: list[str]) -> None:
    """ConfigError naming the judges that ``targets`` lists more than once."""
    twice = sorted({t for t in targets if targets.count(t) > 1})
    if twice:
        raise ConfigError(f"`targets` names judge(s) {', '.join(map(repr, twice))} more than once")


def pool_from_scores(scores: pd.DataFrame, human: pd.DataFrame | None = None, *, target: str | None = None,
                     human_rater: str = "human", source: str = "scores",
                     human_source: str = "human scores", warn_outside: bool = True) -> ScorePool:
    """Build a pool from a canonical scores table (``item_id, rater, score``) and optional human scores.

    The human is ``human`` (its ``rater`` column is ignored) or, when None, the rows of rater ``human_rater``.
    With ``target`` the pool is the target's items; judges that scored none of them are left out (logged, e.g. a
    JudgeBench judge on another pair set); a judge missing some of them is an InputError. Duplicated
    (item, rater) rows, non-numeric scores and constant judges are InputErrors. Human scores on items outside the
    pool are left out, counted in ``human_outside`` and logged as a warning (``warn_outside=False``: the caller
    tells once for several pools).
    """
    frame = _validated(scores, source)
    if human is None:
        is_human = frame["rater"] == human_rater
        human_frame, frame = frame[is_human], frame[~is_human]
    else:
        human_frame = _validated(human.assign(rater=human_rater) if "rater" not in human else human, human_source)
    wide = frame.pivot(index="item_id", columns="rater", values="score")
    if wide.shape[1] == 0:
        raise InputError(f"{source}: no judge scores (only the human rater {human_rater!r})")
    if target is not None:
        name = resolve_judge(target, wide.columns)
        wide = _restrict_to(wide, wide.index[wide[name].notna()], source)
    _check_complete(wide, source)
    human_values, outside = None, 0
    if len(human_frame):
        h = human_frame.drop_duplicates("item_id").set_index("item_id")["score"]
        human_values = h.reindex(wide.index).to_numpy(float)
        outside = int((~h.index.isin(wide.index)).sum())
        if outside and warn_outside:
            warn_human_outside(source if human is None else human_source, outside, len(wide))
    return ScorePool(item_ids=wide.index.to_numpy(), judges=tuple(map(str, wide.columns)),
                     scores=wide.to_numpy(float).T, human=human_values, human_outside=outside)


def warn_human_outside(source: str, outside: int, pool_size: int, targets: list[str] | None = None) -> None:
    """The one warning that human scores outside a pool were left out (``targets``: the pools it holds for)."""
    log.warning("%s: %d human score(s) on items outside the pool of %d items (no judge or target score) left out%s",
                source, outside, pool_size, f" (targets {', '.join(targets)})" if targets else "")


def _validated(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    require_columns(frame, SCORES_REQUIRED, file=source, what="scores table")
    out = frame[["item_id", "rater", "score"]].copy()
    out["item_id"], out["rater"] = out["item_id"].astype(str), out["rater"].astype(str)
    numeric = pd.to_numeric(out["score"], errors="coerce")
    bad = numeric.isna() | ~np.isfinite(numeric.fillna(0))
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"= {frame['score'].iloc[row]!r} is not a finite number", file=source, row=row + 1,
                         field="score")
    out["score"] = numeric.astype(float)
    dup = out.duplicated(["item_id", "rater"], keep="first")
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(f"item {out['item_id'].iloc[row]!r} scored twice by rater {out['rater'].iloc[row]!r}",
                         file=source, row=row + 1, field="item_id")
    return out


def _restrict_to(wide: pd.DataFrame, items, source: str) -> pd.DataFrame:
    wide = wide.loc[items]
    unrelated = [c for c in wide.columns if wide[c].isna().all()]
    if unrelated:
        log.debug("%s: judges with no score on the target's %d items are left out: %s", source, len(items),
                 ", ".join(map(str, unrelated)))
    return wide.drop(columns=unrelated)


def _check_complete(wide: pd.DataFrame, source: str) -> None:
    for rater in wide.columns:
        missing = wide.index[wide[rater].isna()]
        if len(missing):
            raise InputError(f"rater {rater!r} has no score for {len(missing)} of {len(wide)} items (e.g. "
                             f"{', '.join(map(repr, missing[:3]))}); every judge must score every item of the pool",
                             file=source, field="score")


def check_population(pool: ScorePool, target: str) -> None:
    """InputError when the study cannot be defined: missing human scores or a constant judge/human."""
    if pool.human is None:
        raise InputError("no human scores: pass human scores (or a rater named 'human') to measure reliability")
    missing = np.flatnonzero(np.isnan(pool.human))
    if len(missing):
        raise InputError(f"human scores missing for {len(missing)} of {len(pool.human)} items of the pool (e.g. "
                         f"{', '.join(map(repr, pool.item_ids[missing[:3]]))})", field="score")
    if np.ptp(pool.human) == 0:
        raise InputError(f"human scores are constant ({pool.human[0]:g}) on all {len(pool.human)} items: "
                         "reliability is undefined")
    for name, row in zip(pool.judges, pool.scores):
        if np.ptp(row) == 0:
            raise InputError(f"judge {name!r} gives the same score ({row[0]:g}) to every item: reliability and "
                             "the inter-model metrics are undefined; drop this judge")


# ---------------------------------------------------------------------------------------------------------------
# Running the trials
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class StudyResult:
    """Per-trial estimates and the population values, plus the settings; summaries are computed from them."""

    trials: pd.DataFrame        # target, metric, budget, method, trial, estimate, error, population
    population: pd.DataFrame    # target, metric, population, inter_model
    settings: dict = field(default_factory=dict)

    def errors(self) -> pd.DataFrame:
        return error_table(self.trials)

    def win_rates(self, method: str = "metric-match", n_boot: int = 1000) -> dict:
        return win_rates(self.trials, method, n_boot=n_boot, seed=self.settings.get("seed", 0))

    def cost_model(self) -> dict:
        """The annotation cost model of the savings (§4.1.3): hours per label and cost per hour, from settings."""
        return {"hours_per_label": self.settings.get("minutes_per_label", 5.0) / 60,
                "cost_per_hour": self.settings.get("cost_per_hour", 500.0)}

    def summarised_method(self, method: str = "metric-match") -> str:
        """``method`` when the study ran it, else the first method run besides random (the one the summaries
        compare with random); ConfigError when random was the only method."""
        if method in self.settings["methods"]:
            return method
        others = [m for m in self.settings["methods"] if m != BASELINE]
        if not others:
            raise ConfigError(f"a study summary compares a selection method with {BASELINE}; only {BASELINE} was run")
        return others[0]

    def as_dict(self, method: str = "metric-match") -> dict:
        """JSON-ready summary: settings, population values, error table, win rates, classification, savings
        (of :meth:`summarised_method` against random)."""
        method = self.summarised_method(method)
        return {"settings": self.settings, "population": self.population.to_dict("records"),
                "errors": self.errors().to_dict("records"),
                "win_rates": {m: self.win_rates(m) for m in self.settings["methods"] if m != BASELINE},
                "classification": classification_win_rates(self.trials, self.population, method,
                                                           self.settings["thresholds"]).to_dict("records"),
                "savings": annotation_savings(self.trials, method, **self.cost_model()).to_dict("records"),
                "pairwise": pairwise_win_rates(self.trials, self.population,
                                               self.settings["thresholds"]).to_dict("records"),
                "per_target": per_target_summary(self.trials, method).to_dict("records"),
                "headline": headline(self.trials, method, seed=self.settings.get("seed", 0))}


def run_study(pool: ScorePool, *, targets=None, metrics=DEFAULT_METRICS, budgets=range(5, 55, 5), trials: int = 40,
              methods=DEFAULT_METHODS, n_candidates: int = 20, seed: int = 0,
              thresholds=DEFAULT_THRESHOLDS, minutes_per_label: float = 5.0,
              cost_per_hour: float = 500.0) -> StudyResult:
    """Run the study (Paper §3.3) with each of ``targets`` (default: every judge) as the judge under test.
    ``minutes_per_label`` and ``cost_per_hour``: the cost model of the savings (§4.1.3; the paper's MedVAL example:
    5 min, $500/h)."""
    if not (0 < minutes_per_label < math.inf and 0 <= cost_per_hour < math.inf):  # NaN fails too
        raise ConfigError(f"`minutes_per_label` must be a finite number > 0 and `cost_per_hour` a finite number "
                          f"≥ 0, got {minutes_per_label} and {cost_per_hour}")
    targets = list(pool.judges) if targets is None else [resolve_judge(t, pool.judges) for t in targets]
    refuse_repeated_targets(targets)
    budgets = sorted(int(b) for b in budgets)
    if not budgets:
        raise ConfigError("`budgets`: no budget to study (e.g. 10:5:1 is empty; use start:stop:step with "
                          "start ≤ stop)")
    methods = list(dict.fromkeys([BASELINE, *methods]))
    if trials < 1:
        raise ConfigError(f"trials must be ≥ 1, got {trials}")
    rng_from_seed(seed)  # a negative seed is a ConfigError here, not a numpy error deep in a trial
    for b in budgets:
        check_budget(len(pool.item_ids), b)
    strategies = {m: get_strategy(m, **({"n_candidates": n_candidates} if "match" in m else {})) for m in methods}
    rows, pops = [], []
    for name in targets:
        check_population(pool, name)
        target, others, _ = pool.split(name)
        if len(others) == 0:
            raise InputError(f"target {name!r} is the only judge: Metric Match needs other judges' scores")
        for metric_name in metrics:
            metric = get_metric(metric_name)
            population = float(metric(target, pool.human))
            pops.append({"target": name, "metric": metric_name, "population": population,
                         "inter_model": float(inter_model(metric, target, others))})
            for budget in budgets:
                for method, strategy in strategies.items():
                    rng = np.random.default_rng([seed, _key(name), _key(metric_name), budget, _key(method)])
                    idx = strategy.select(target, others, budget, metric, rng, n_draws=trials)
                    est = np.asarray(strategy.estimate(target, pool.human, others, idx, metric), float)
                    rows.append(pd.DataFrame({"target": name, "metric": metric_name, "budget": budget,
                                              "method": method, "trial": np.arange(trials), "estimate": est,
                                              "error": np.abs(est - population), "population": population}))
    settings = {"targets": targets, "metrics": list(metrics), "budgets": budgets, "trials": trials,
                "methods": methods, "n_candidates": n_candidates, "seed": seed, "thresholds": list(thresholds),
                "n_items": int(len(pool.item_ids)), "minutes_per_label": float(minutes_per_label),
                "cost_per_hour": float(cost_per_hour)}
    return StudyResult(pd.concat(rows, ignore_index=True), pd.DataFrame(pops), settings)


def _key(name: str) -> int:
    """A stable integer for a name, so each (target, metric, budget, method) cell has its own random stream that does
    not depend on which other targets, metrics or methods are in the run."""
    return zlib.crc32(name.encode("utf-8"))


# ---------------------------------------------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------------------------------------------

def error_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Mean |ρ̂ − ρ| per target, metric, budget and method (§4.1.1), with its spread and undefined count."""
    g = trials.groupby(["target", "metric", "budget", "method"], sort=False)["error"]
    out = g.agg(mean_error="mean", median_error="median", sd_error="std", defined="count").reset_index()
    out["undefined"] = g.size().to_numpy() - out["defined"]
    return out


def _paired_errors(trials: pd.DataFrame, method: str, baseline: str = BASELINE):
    """Errors of ``method`` and ``baseline`` (random) as arrays (metric → (contexts, budgets, trials)), NaN kept."""
    cube = trials[trials["method"].isin([method, baseline])].set_index(
        ["metric", "method", "target", "budget", "trial"])["error"].sort_index()
    out = {}
    for metric in trials["metric"].unique():
        arrays = []
        for m in (method, baseline):
            s = cube.loc[(metric, m)]
            shape = tuple(len(level) for level in s.index.remove_unused_levels().levels)
            arrays.append(s.to_numpy().reshape(shape))
        out[metric] = tuple(arrays)
    return out


def _wins(err_m: np.ndarray, err_r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Macro (1[mean ε_m < mean ε_r]) and micro (mean of 1[ε_m < ε_r]) wins over the last (trial) axis (§3.3)."""
    with warnings.catch_warnings():  # a cell with no defined trial: NaN mean, no win (counted in error_table)
        warnings.simplefilter("ignore", RuntimeWarning)
        macro = (np.nanmean(err_m, axis=-1) < np.nanmean(err_r, axis=-1)).astype(float)
    m = np.where(np.isnan(err_m), np.inf, err_m)
    r = np.where(np.isnan(err_r), np.inf, err_r)
    return macro, (m < r).mean(axis=-1)


def win_rates(trials: pd.DataFrame, method: str = "metric-match", n_boot: int = 1000, seed: int = 0,
              level: float = 0.95) -> dict:
    """Macro and micro win rates of ``method`` against random (Paper §4.2), per metric × budget, per metric and
    overall, with percentile-bootstrap intervals (contexts = target judges resampled; for micro also trials)."""
    rng = np.random.default_rng([seed, 7])
    out = {"method": method, "by_budget": [], "by_metric": [], "level": level}
    boots, draws = [], None
    for metric, (err_m, err_r) in _paired_errors(trials, method).items():
        macro, micro = _wins(err_m, err_r)                        # (contexts, budgets)
        if draws is None:  # the same resampled contexts and trials for every metric, so "overall" is coherent
            n_ctx, _, n_trials = err_m.shape
            draws = (rng.integers(0, n_ctx, size=(n_boot, n_ctx)),
                     rng.integers(0, n_trials, size=(n_boot, n_ctx, 1, n_trials)))
        b_macro, b_micro = _bootstrap_wins(err_m, err_r, *draws)  # (n_boot, budgets)
        budgets = sorted(trials.loc[trials["metric"] == metric, "budget"].unique())
        for j, budget in enumerate(budgets):
            out["by_budget"].append({"metric": metric, "budget": int(budget), "macro": macro[:, j].mean(),
                                     "micro": micro[:, j].mean(), **_ci("macro", b_macro[:, j], level),
                                     **_ci("micro", b_micro[:, j], level)})
        out["by_metric"].append({"metric": metric, "macro": macro.mean(), "micro": micro.mean(),
                                 **_ci("macro", b_macro.mean(axis=1), level),
                                 **_ci("micro", b_micro.mean(axis=1), level)})
        boots.append((macro.mean(), micro.mean(), b_macro.mean(axis=1), b_micro.mean(axis=1)))
    out["overall"] = {"macro": float(np.mean([b[0] for b in boots])), "micro": float(np.mean([b[1] for b in boots])),
                      **_ci("macro", np.mean([b[2] for b in boots], axis=0), level),
                      **_ci("micro", np.mean([b[3] for b in boots], axis=0), level)}
    return out


def _bootstrap_wins(err_m, err_r, ctx, tri):
    """Bootstrap draws of the macro and micro win rates per budget, shape (n_boot, budgets), for resampled context
    indices ``ctx`` (n_boot, n_ctx) and trial indices ``tri`` (n_boot, n_ctx, 1, n_trials).

    Macro wins are per context, so contexts are resampled; micro wins are per trial, so trials are resampled within
    the resampled contexts too (resampling trials for the macro indicator would bias it towards 0.5)."""
    n_budget = err_m.shape[1]
    macro_ctx, _ = _wins(err_m, err_r)                               # (n_ctx, n_budget)
    pick = (ctx[:, :, None, None], np.arange(n_budget)[None, None, :, None], tri)
    _, micro = _wins(err_m[pick], err_r[pick])                       # (n_boot, n_ctx, n_budget)
    return macro_ctx[ctx].mean(axis=1), micro.mean(axis=1)


def _ci(name: str, draws: np.ndarray, level: float) -> dict:
    lo, hi = percentile_interval(draws, level)
    return {f"{name}_lo": float(lo), f"{name}_hi": float(hi)}


def relative_improvement(trials: pd.DataFrame, method: str = "metric-match", stat: str = "mean") -> pd.DataFrame:
    """Per metric, 1 − ε̄_method / ε̄_random where ε̄ averages each (target, budget) cell's ``stat`` of the error
    over cells (Paper §4.1.1 with ``stat="mean"``: 18.7% is the mean of the four per-metric figures).
    ``stat="median"`` is a robust companion: ICC on tiny subsets has unbounded negative estimates whose few huge
    errors can dominate a mean."""
    pair = trials[trials["method"].isin([method, BASELINE])]
    cells = pair.groupby(["metric", "target", "budget", "method"])["error"].agg(stat)
    e = cells.groupby(["metric", "method"]).mean().unstack()
    return pd.DataFrame({"metric": e.index, "improvement": 1 - e[method] / e[BASELINE]}).reset_index(drop=True)


def classification_win_rates(trials: pd.DataFrame, population: pd.DataFrame, method: str = "metric-match",
                             thresholds=DEFAULT_THRESHOLDS, baseline: str = BASELINE) -> pd.DataFrame:
    """Threshold classification 1[ρ̂ > t] vs 1[ρ > t] (Paper §4.3), win rates against ``baseline`` (random;
    App. D compares with the others too) averaged over t.

    Micro: per trial 1 when only the method classifies correctly, 0.5 when both are right or both wrong.
    Macro: per context 1[acc_method > acc_baseline], 0.5 on equal accuracy. Undefined estimates count as wrong.
    """
    pair = trials[trials["method"].isin([method, baseline])]
    wide = pair.pivot_table(index=["target", "metric", "budget", "trial"], columns="method",
                            values="estimate", dropna=False).reset_index()
    population_of = population.set_index(["target", "metric"])["population"]
    rho = population_of.reindex(pd.MultiIndex.from_frame(wide[["target", "metric"]])).to_numpy()
    est_m, est_r = wide[method].to_numpy(), wide[baseline].to_numpy()
    rows = []
    for t in thresholds:
        right_m = ((est_m > t) == (rho > t)) & ~np.isnan(est_m)
        right_r = ((est_r > t) == (rho > t)) & ~np.isnan(est_r)
        frame = wide[["target", "metric", "budget"]].assign(
            micro=np.where(right_m == right_r, 0.5, right_m.astype(float)), acc_m=right_m, acc_r=right_r)
        ctx = frame.groupby(["target", "metric", "budget"]).agg(micro=("micro", "mean"), acc_m=("acc_m", "mean"),
                                                                  acc_r=("acc_r", "mean")).reset_index()
        ctx["macro"] = np.where(ctx["acc_m"] == ctx["acc_r"], 0.5, (ctx["acc_m"] > ctx["acc_r"]).astype(float))
        rows.append(ctx.assign(threshold=t))
    per_ctx = pd.concat(rows, ignore_index=True)
    return (per_ctx.groupby(["metric", "budget"])[["macro", "micro"]].mean().reset_index()
            .assign(method=method))


def matching_budget(budgets: np.ndarray, err_method: np.ndarray, target_error: float) -> float:
    """E_m(R): the smallest budget at which the method's mean-error curve reaches ``target_error`` (Paper §4.1.2),
    linearly interpolated between budgets; the smallest budget when it is already there (conservative: no
    extrapolation below the grid); NaN when it never gets there within the grid."""
    reached = np.flatnonzero(err_method <= target_error)
    if len(reached) == 0:
        return float("nan")
    j = int(reached[0])
    if j == 0:
        return float(budgets[0])
    e0, e1, b0, b1 = err_method[j - 1], err_method[j], budgets[j - 1], budgets[j]
    return float(b0 + (e0 - target_error) / (e0 - e1) * (b1 - b0))


def annotation_savings(trials: pd.DataFrame, method: str = "metric-match", hours_per_label: float = 5 / 60,
                       cost_per_hour: float = 500.0, by: tuple[str, ...] = ("metric",)) -> pd.DataFrame:
    """For each random budget R: E_m(R), relative savings (R − E_m(R))/R and cost C(R) = (R − E_m(R))·t·c
    (Paper §4.1.2–4.1.3; defaults t = 5 min, c = $500/h as in the paper's MedVAL example). Curves are mean errors
    averaged over the other keys (over contexts for ``by=("metric",)``, like the paper's Figure 3)."""
    curves = (trials[trials["method"].isin([method, BASELINE])]
              .groupby([*by, "budget", "method"])["error"].mean().unstack("method").reset_index())
    rows = []
    for key, g in curves.groupby(list(by)):
        g = g.sort_values("budget")
        budgets, err_m, err_r = g["budget"].to_numpy(float), g[method].to_numpy(), g[BASELINE].to_numpy()
        for R, target_error in zip(budgets, err_r):
            e_m = matching_budget(budgets, err_m, target_error)
            rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,))), "budget": int(R),
                         "matching_budget": e_m, "relative_savings": (R - e_m) / R,
                         "cost_savings": (R - e_m) * hours_per_label * cost_per_hour})
    return pd.DataFrame(rows)


def per_target_summary(trials: pd.DataFrame, method: str = "metric-match") -> pd.DataFrame:
    """Per target judge and metric: mean error of random and the method (over budgets and trials), relative
    improvement, micro and macro win rates over budgets, and mean relative annotation savings."""
    e = error_table(trials)
    e = e[e["method"].isin([method, BASELINE])].pivot_table(index=["target", "metric", "budget"],
                                                            columns="method", values="mean_error").reset_index()
    paired = _paired_errors(trials, method)
    targets = list(dict.fromkeys(trials["target"]))
    order = sorted(targets)
    rows = []
    savings = annotation_savings(trials, method, by=("target", "metric"))
    for metric, (err_m, err_r) in paired.items():
        macro, micro = _wins(err_m, err_r)
        for name in targets:
            i = order.index(name)
            sub = e[(e["target"] == name) & (e["metric"] == metric)]
            sav = savings[(savings["target"] == name) & (savings["metric"] == metric)]["relative_savings"]
            rows.append({"target": name, "metric": metric, "error_random": sub[BASELINE].mean(),
                         "error_method": sub[method].mean(),
                         "improvement": 1 - sub[method].mean() / sub[BASELINE].mean(),
                         "macro_win": macro[i].mean(), "micro_win": micro[i].mean(),
                         "savings": sav.mean(), "savings_defined": int(sav.notna().sum())})
    return pd.DataFrame(rows)


def pairwise_win_rates(trials: pd.DataFrame, population: pd.DataFrame,
                       thresholds=DEFAULT_THRESHOLDS) -> pd.DataFrame:
    """Metric Match App. D: every method against every other (not only against random) — macro and micro win rates
    on estimation error (§3.3, :func:`_wins`) and on threshold classification (:func:`classification_win_rates`),
    each the mean over metrics of the mean over (target, budget) cells. One row per ordered pair (method, versus)."""
    methods = list(dict.fromkeys(trials["method"]))
    rows = []
    for method in methods:
        for versus in methods:
            if method == versus:
                continue
            wins = [_wins(err_m, err_v) for err_m, err_v in _paired_errors(trials, method, versus).values()]
            cls = classification_win_rates(trials, population, method, thresholds, baseline=versus)
            by_metric = cls.groupby("metric")[["macro", "micro"]].mean()
            rows.append({"method": method, "versus": versus,
                         "error_macro": float(np.mean([w[0].mean() for w in wins])),
                         "error_micro": float(np.mean([w[1].mean() for w in wins])),
                         "classification_macro": float(by_metric["macro"].mean()),
                         "classification_micro": float(by_metric["micro"].mean())})
    return pd.DataFrame(rows)


PAPER_HEADLINE = {"improvement": 0.187, "macro": 0.838, "micro": 0.538, "savings": 0.325}  # Paper abstract, §4


def headline(trials: pd.DataFrame, method: str = "metric-match", n_boot: int = 1000, seed: int = 0) -> dict:
    """The study's headline figures next to the paper's: mean over metrics of the relative error reduction (and its
    median-error companion), the overall macro/micro win rates (with CIs) and the mean relative annotation savings
    over budgets and metrics."""
    improvement = relative_improvement(trials, method)
    wins = win_rates(trials, method, n_boot=n_boot, seed=seed)["overall"]
    savings = annotation_savings(trials, method)["relative_savings"]
    robust = relative_improvement(trials, method, stat="median")
    return {"method": method, "improvement": float(improvement["improvement"].mean()),
            "improvement_by_metric": dict(zip(improvement["metric"], improvement["improvement"].astype(float))),
            "improvement_median_errors": float(robust["improvement"].mean()),
            "improvement_median_errors_by_metric": dict(zip(robust["metric"], robust["improvement"].astype(float))),
            **{k: float(v) for k, v in wins.items()}, "savings": float(savings.mean()),
            "savings_defined": int(savings.notna().sum()), "paper": PAPER_HEADLINE}

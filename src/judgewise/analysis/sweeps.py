"""Sweeps of the Arena-lite §4.2 simulator over designs, n_model, |X| and P_judge, run serially, on a local
process pool or on a Ray cluster (``executor="ray"``, needs ``judgewise[ray]``; see :mod:`judgewise.executors`).

Every trial draws its true ratings from (seed, trial) only, so all designs of a sweep are compared on the
same truths (common random numbers); the design's own randomness comes from (seed, trial, point).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from judgewise.analysis.simulation import TrialSpec, run_trial
from judgewise.designs.catalog import make_design
from judgewise.errors import ConfigError
from judgewise.executors import EXECUTORS, run_tasks
from judgewise.judges.simulated import response_quality, verdict_fn
from judgewise.ratings.agreement import kendall_tau_b, spearman_rho
from judgewise.ratings.bootstrap import rng_from_seed
from judgewise.registry import Registry


def uniform_truth(n: int, rng: np.random.Generator, span: float = 500.0) -> np.ndarray:
    """Leaderboard-like truth: n Elo ratings uniform over ``span`` points (irregular gaps), best first."""
    return np.sort(1000.0 + rng.uniform(0.0, span, n))[::-1]


def even_truth(n: int, rng: np.random.Generator, span: float = 500.0) -> np.ndarray:
    """Evenly spaced truth: n Elo ratings ``span/n`` apart, best first (every adjacent pair equally hard)."""
    return 1000.0 + span - (span / n) * np.arange(n)


TRUTHS: Registry[Callable[..., np.ndarray]] = Registry("truth", {"uniform": uniform_truth, "even": even_truth})


@dataclass
class SweepPoint:
    """One configuration of a sweep; ``label`` names the design variant in tables."""

    label: str
    design: str
    n_model: int
    n_prompts: int
    p_judge: float
    options: dict = field(default_factory=dict)
    scoring: str = "bt"
    truth: str = "uniform"
    span: float = 500.0
    external_anchor_elo: float | None = None  # add an anchor outside the pool at this Elo (Arena-lite §4.2)
    response_sd: float = 0.0

    def key(self) -> int:
        digest = hashlib.blake2b(json.dumps(asdict(self), sort_keys=True, default=str).encode(), digest_size=6)
        return int.from_bytes(digest.digest(), "little")


def _truth(point: SweepPoint, seed: int, trial: int) -> np.ndarray:
    if point.truth not in TRUTHS:
        raise ConfigError(f"unknown truth {point.truth!r}; known: {sorted(TRUTHS)}")
    rng = np.random.default_rng([seed, trial, point.n_model])
    return TRUTHS[point.truth](point.n_model, rng, point.span)


INSERTIONS = ("insert-binary", "insert-anchor")  # Arena-lite §5.3 / App. A.6: one newcomer into a leaderboard


def _insertion_trial(point: SweepPoint, elo: np.ndarray, seed: int, trial: int) -> dict:
    """One insertion trial: a newcomer drawn from (seed, trial) — the same for both insertion designs — is placed
    into the leaderboard of the other models (best first by the truth; insert-anchor gets their true ratings, as a
    published leaderboard's). Scored by its placement error against its true position and by the Spearman /
    Kendall of the whole ranking (the leaderboard in true order with the newcomer where it was placed)."""
    n = len(elo)
    models, prompts = [f"m{i}" for i in range(n)], [f"x{i}" for i in range(point.n_prompts)]
    new = int(np.random.default_rng([seed, trial, n, 17]).integers(n))
    board = [models[i] for i in np.argsort(-elo, kind="stable") if i != new]
    truth_pos = int(np.sum(np.delete(elo, new) > elo[new]))
    given = ({"leaderboard": board} if point.design == "insert-binary"
             else {"ratings": {m: float(elo[models.index(m)]) for m in board}})
    rng = np.random.default_rng([seed, trial, point.key()])
    quality = response_quality(elo, point.n_prompts, point.response_sd, rng)
    run = make_design(point.design, **{**point.options, **given, "new_model": models[new]}).run(
        models, prompts, verdict_fn(quality, point.p_judge, rng), rng)
    placed = board[:run.info["position"]] + [models[new]] + board[run.info["position"]:]
    scores = np.empty(n)
    scores[[models.index(m) for m in placed]] = -np.arange(n)  # best first
    return {"calls": run.n_calls, "spearman": spearman_rho(scores, elo), "kendall": kendall_tau_b(scores, elo),
            "placement_error": float(abs(run.info["position"] - truth_pos)),
            "placed_exactly": float(run.info["position"] == truth_pos)}


def run_point(point: SweepPoint, seed: int, trials: list[int]) -> list[dict]:
    """All requested trials of one point (a top-level function, so process pools and Ray can ship it)."""
    rows = []
    for trial in trials:
        elo = _truth(point, seed, trial)
        if point.design in INSERTIONS:
            row = _insertion_trial(point, elo, seed, trial)
            rows.append({**{k: v for k, v in asdict(point).items() if k != "options"}, "trial": trial, **row})
            continue
        options = dict(point.options)
        if point.external_anchor_elo is not None:
            elo_all = np.append(elo, point.external_anchor_elo)
            options["anchors"] = [f"m{point.n_model}"]
        else:
            elo_all = elo
        spec = TrialSpec(elo_all, point.n_prompts, point.p_judge, point.design, options, point.scoring,
                         point.response_sd)
        row = run_trial(spec, np.random.default_rng([seed, trial, point.key()]))
        if point.external_anchor_elo is not None:  # score only the pool, not the external anchor
            row.update(_pool_agreement(row.pop("scores"), elo))
        row.pop("scores", None)
        rows.append({**{k: v for k, v in asdict(point).items() if k != "options"}, "trial": trial, **row})
    return rows


def _pool_agreement(scores: np.ndarray, elo: np.ndarray) -> dict:
    pool = scores[: len(elo)]
    return {"spearman": spearman_rho(pool, elo), "kendall": kendall_tau_b(pool, elo)}


MAX_MODELS, MAX_PROMPTS, MAX_CELLS = 1_000, 100_000, 10_000_000  # a sweep point runs in memory, in minutes


def check_sweep(points: list[SweepPoint], trials: int, seed: int, workers: int | None) -> None:
    """ConfigError for a sweep that cannot run or would not finish: no points, < 1 trial, a negative seed, < 1
    worker, a point with < 2 or too many models, < 1 or too many prompts, or p_judge outside [0, 1]."""
    if not points:
        raise ConfigError("`designs`: no design to simulate")
    if isinstance(trials, bool) or not isinstance(trials, int) or not 1 <= trials <= 100_000:
        raise ConfigError(f"`trials` must be an integer in [1, 100,000], got {trials!r}")
    rng_from_seed(seed)
    if workers is not None and workers < 1:
        raise ConfigError(f"`workers` must be ≥ 1, got {workers}")
    for p in points:
        if not 2 <= p.n_model <= MAX_MODELS:
            raise ConfigError(f"`n_model` must be in [2, {MAX_MODELS:,}], got {p.n_model:,}")
        if not 1 <= p.n_prompts <= MAX_PROMPTS or p.n_model * p.n_prompts > MAX_CELLS:
            raise ConfigError(f"`n_prompts` must be in [1, {MAX_PROMPTS:,}] with n_model × prompts ≤ {MAX_CELLS:,}, "
                              f"got {p.n_prompts:,} prompts for {p.n_model:,} models")
        if not 0 <= p.p_judge <= 1:
            raise ConfigError(f"`p_judge` must be in [0, 1], got {p.p_judge}")


def run_sweep(points: list[SweepPoint], trials: int, seed: int = 0, executor: str = "process",
              workers: int | None = None, address: str | None = None, chunk: int = 4) -> pd.DataFrame:
    """Run ``trials`` trials of every point on ``executor``; one row per (point, trial)."""
    EXECUTORS.get(executor)  # an unknown executor is an error before anything else
    check_sweep(points, trials, seed, workers)
    tasks = [(p, seed, list(range(s, min(s + chunk, trials)))) for p in points for s in range(0, trials, chunk)]
    results = run_tasks(run_point, tasks, executor, workers, address)
    return pd.DataFrame([row for rows in results for row in rows])


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean (and sd) Spearman and Kendall and mean calls per label and configuration; for insertion designs also
    the mean placement error (positions) and the share placed exactly."""
    keys = ["label", "n_model", "n_prompts", "p_judge"]
    extra = ({"placement_error": ("placement_error", "mean"), "placed_exactly": ("placed_exactly", "mean")}
             if "placement_error" in frame.columns else {})
    out = frame.groupby(keys, sort=False).agg(calls=("calls", "mean"), spearman=("spearman", "mean"),
                                              spearman_sd=("spearman", "std"), kendall=("kendall", "mean"),
                                              kendall_sd=("kendall", "std"), trials=("trial", "count"), **extra)
    return out.reset_index()


def first_crossing(calls, values, target: float) -> float:
    """Calls at which a curve of mean values first reaches ``target`` (linear interpolation between grid
    points; NaN when it never does)."""
    calls, values = np.asarray(calls, float), np.asarray(values, float)
    order = np.argsort(calls)
    calls, values = calls[order], values[order]
    hit = np.flatnonzero(values >= target)
    if not hit.size:
        return float("nan")
    k = hit[0]
    if k == 0:
        return float(calls[0])
    c0, c1, v0, v1 = calls[k - 1], calls[k], values[k - 1], values[k]
    return float(c0 + (target - v0) * (c1 - c0) / (v1 - v0))


def smooth_crossing(calls, values, target: float, window: float = 0.05) -> float:
    """Calls at which a noisy mean curve reaches ``target``, from a least-squares line of value against
    log(calls) over the grid points within ``window`` of the target (less sensitive to one noisy grid point
    than :func:`first_crossing`; NaN when fewer than two points are in the window or the line is flat)."""
    calls, values = np.asarray(calls, float), np.asarray(values, float)
    near = np.abs(values - target) <= window
    if near.sum() < 2:
        return float("nan")
    slope, intercept = np.polyfit(np.log(calls[near]), values[near], 1)
    return float(np.exp((target - intercept) / slope)) if slope > 0 else float("nan")


def trajectory_curve(frame: pd.DataFrame, grid) -> pd.DataFrame:
    """Mean Kendall τ of sequential (adaptive) runs at each budget in ``grid``: the τ of each trial's last
    fit made with at most that many calls."""
    rows = []
    for label, group in frame.groupby("label", sort=False):
        for budget in grid:
            taus = [max(((c, k) for c, k in traj if c <= budget), default=(0, np.nan))[1]
                    for traj in group["trajectory"]]
            rows.append({"label": label, "calls": int(budget), "kendall": float(np.nanmean(taus))})
    return pd.DataFrame(rows)

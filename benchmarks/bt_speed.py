"""Benchmark (issue 2, acceptance 5): Bradley–Terry fit and 1,000 battle-bootstrap rounds on 2,000,000 battles.

Synthetic, seeded table: 150 models with skills s ~ N(0, 1); model_a uniform, model_b uniform among the others;
P(a wins) = 0.95·σ(s_a − s_b), P(tie) = 0.05, P(b wins) = 0.95·σ(s_b − s_a). Times ``rank(df, "bt")`` (encoding +
aggregation + fit; median of 3 runs, all printed) and then 1,000 battle-bootstrap rounds (multinomial over
aggregated counts, all replicates fitted
by batched Newton warm-started at the estimate). Checks that the aggregated estimate equals a plain per-row fit
(FastChat-style L-BFGS over the 2M rows) and that warm-started batched replicates equal cold L-BFGS fits.

With ``--fastchat FILE`` (FastChat's ``fastchat/serve/monitor/rating_systems.py``, taken from a FastChat checkout;
no FastChat code ships here) it also times FastChat's ``compute_bt`` on the same table, side by side (median of
3 runs), with the outcome given as FastChat's ``winner`` column of the same dtype as the model columns, and prints
the largest Elo difference between the two fits (FastChat stops at gtol 1e-6, so they agree to ~1e-2 Elo).

Run: ``.venv/bin/python benchmarks/bt_speed.py [--rounds 1000] [--battles 2000000] [--fastchat FILE]``.
Last line: ``fit_s=<seconds> bootstrap_s=<seconds> rounds=<rounds> peak_mb=<MB>``, followed by
`` fastchat_fit_s=<seconds> ratio=<fit_s / fastchat_fit_s>`` with ``--fastchat``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import types
import resource
import time

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.special import expit

from judgewise.ratings import rank
from judgewise.ratings.aggregate import pair_counts
from judgewise.ratings.bootstrap import bootstrap
from judgewise.ratings.bradley_terry import ELO_SCALE, bradley_terry, fit_lbfgs
from judgewise.ratings.encode import encode
from judgewise.ratings.method import RatingData


def synthetic_battles(n_battles: int, n_models: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """The seeded synthetic judgments table (module docstring) and the true skills."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(size=n_models)
    a = rng.integers(0, n_models, n_battles)
    b = (a + rng.integers(1, n_models, n_battles)) % n_models  # uniform over the other models
    p_win = 0.95 * expit(skill[a] - skill[b])
    u = rng.random(n_battles)
    outcome = np.where(u < p_win, 1.0, np.where(u < p_win + 0.05, 0.5, 0.0))
    names = [f"model-{i:03d}" for i in range(n_models)]
    frame = pd.DataFrame({
        "prompt_id": pd.Categorical.from_codes(rng.integers(0, 5000, n_battles), [f"p{i}" for i in range(5000)]),
        "model_a": pd.Categorical.from_codes(a, names),
        "model_b": pd.Categorical.from_codes(b, names),
        "judge": "synthetic",
        "outcome": outcome,
    })
    return frame, skill


def per_row_fit(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, n_models: int) -> np.ndarray:
    """Plain BT fit over every row (no aggregation), FastChat style: L-BFGS, exact gradient, ties half a win."""
    n = len(a)

    def fun(theta):
        d = theta[a] - theta[b]
        loss = np.sum(np.logaddexp(0.0, d) - outcome * d) / n
        g = (expit(d) - outcome) / n
        return loss, np.bincount(a, g, n_models) - np.bincount(b, g, n_models)

    res = optimize.minimize(fun, np.zeros(n_models), jac=True, method="L-BFGS-B",
                            options={"maxiter": 10_000, "gtol": 1e-12, "ftol": 1e-16})
    return res.x - res.x.mean()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=2_000_000)
    parser.add_argument("--models", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fastchat", type=str, default=None,
                        help="path to FastChat's fastchat/serve/monitor/rating_systems.py, to time compute_bt beside")
    args = parser.parse_args()

    frame, skill = synthetic_battles(args.battles, args.models, args.seed)
    print(f"table: {len(frame):,} battles among {args.models} models")

    rank(synthetic_battles(1000, 5, args.seed)[0], "bt")  # warm-up: lazy imports, BLAS thread-pool discovery
    fits = []
    for _ in range(3):
        t0 = time.perf_counter()
        ranking = rank(frame, "bt")
        fits.append(time.perf_counter() - t0)
    fit_s = float(np.median(fits))
    print(f"BT fit via rank() (encode + aggregate + Newton from zero), 3 runs: "
          f"{', '.join(f'{t:.3f}' for t in fits)} s (first run includes first-touch of fresh memory); "
          f"median {fit_s:.3f} s")

    data = RatingData(encode(frame), frame)
    result = bradley_terry(data)
    print(f"aggregated to {data.cats.n_categories:,} battle categories, {pair_counts(data.cats).n_pairs:,} pairs")

    enc = data.enc
    row_theta = per_row_fit(enc.a, enc.b, enc.outcome, enc.n_models)
    diff = np.abs(ELO_SCALE * row_theta + 1000.0 - ranking.extra["elo"]).max()
    print(f"aggregated vs plain per-row fit: max |Δ Elo| = {diff:.2e}")
    true = skill[[int(m[6:]) for m in enc.models]]
    print(f"recovery: corr(θ̂, true skill) = {np.corrcoef(result.extra['theta'], true)[0, 1]:.4f}")

    rng = np.random.default_rng(args.seed)
    t0, cpu0 = time.perf_counter(), time.process_time()
    boot = bootstrap(data, result, args.rounds, unit="battle", rng=rng)
    bootstrap_s, bootstrap_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    print(f"{args.rounds} battle-bootstrap rounds: {bootstrap_s:.3f} s wall, "
          f"{bootstrap_cpu:.3f} s CPU over all threads "
          f"({1000 * bootstrap_s / args.rounds:.2f} ms/round); "
          f"mean 95% CI width {np.mean(boot.ci_high - boot.ci_low):.2f} Elo")
    print(f"load average while running: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (2 cores)")

    check = _check_replicates(data, result, rounds=3, seed=args.seed + 1)
    print(f"batched warm-started replicates vs cold L-BFGS fits: max |Δ Elo| = {check:.2e}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    headline = f"fit_s={fit_s:.3f} bootstrap_s={bootstrap_s:.3f} rounds={args.rounds} peak_mb={peak_mb:.0f}"
    if args.fastchat:
        fastchat_s = _time_fastchat(args.fastchat, frame, ranking.extra["elo"], enc.models)
        headline += f" fastchat_fit_s={fastchat_s:.3f} ratio={fit_s / fastchat_s:.3f}"
    print(headline)


def _load_fastchat(path: str):
    """FastChat's rating_systems module from ``path``; tqdm (used only by its bootstrap) stubbed when absent."""
    if importlib.util.find_spec("tqdm") is None:
        sys.modules["tqdm"] = types.SimpleNamespace(tqdm=lambda it, **_: it)
    spec = importlib.util.spec_from_file_location("fastchat_rating_systems", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _time_fastchat(path: str, frame: pd.DataFrame, elo: np.ndarray, models) -> float:
    """Median of 3 timed ``compute_bt`` runs on the same battles; prints the runs and the largest Elo gap."""
    fastchat = _load_fastchat(path)
    codes = np.select([frame["outcome"] == 1.0, frame["outcome"] == 0.0], [0, 1], 2)
    winner = pd.Categorical.from_codes(codes, ["model_a", "model_b", "tie"])
    battles = pd.DataFrame({"model_a": frame["model_a"], "model_b": frame["model_b"], "winner": winner})
    fastchat.compute_bt(battles.head(1000))  # warm-up, as for ours
    runs, ratings = [], None
    for _ in range(3):
        t0 = time.perf_counter()
        ratings = fastchat.compute_bt(battles)
        runs.append(time.perf_counter() - t0)
    gap = np.abs(ratings.reindex(list(models)).to_numpy() - np.asarray(elo)).max()
    median = float(np.median(runs))
    print(f"FastChat compute_bt on the same table, 3 runs: {', '.join(f'{t:.3f}' for t in runs)} s; "
          f"median {median:.3f} s; max |Δ Elo| vs ours = {gap:.2e}")
    return median


def _check_replicates(data: RatingData, result, rounds: int, seed: int) -> float:
    """Max |Δ Elo| between batched replicates and independent cold fits of the same resampled counts."""
    cats = data.cats
    draws = np.random.default_rng(seed).multinomial(int(cats.count.sum()), cats.count / cats.count.sum(), rounds)
    stats = (result.stats.matrix.T @ draws.T).T
    batched = result.stats.from_stats(np.asarray(stats, dtype=float))
    worst = 0.0
    base = pair_counts(cats)
    p = base.n_pairs
    for r in range(rounds):
        base.wins, base.total = stats[r, :p].astype(float), stats[r, p:].astype(float)
        cold = ELO_SCALE * fit_lbfgs(base) + 1000.0
        worst = max(worst, float(np.abs(cold - batched[r]).max()))
    return worst


if __name__ == "__main__":
    main()

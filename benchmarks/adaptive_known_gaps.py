"""How far could any allocation of judge calls go? A reference for the adaptive design (issue 4, acceptance 3).

An allocation that *knows the true ratings* (not the judge's draws) spends calls greedily, 10 at a time, on the
pair whose calls most reduce the expected number of discordant pairs Σ Φ(−|Δ|/σ) (Δ: true log-odds gap, σ²:
its variance from the Fisher information of the calls so far, with the exact per-call information of the
Eq. 3 judge with ties). Its comparisons are then judged by the simulated judge and scored like every design in
``designs_simulation.py`` (BT fit, Kendall τ-b against the truth), on the same truths (uniform over 500 Elo,
n_model = 20, P_judge = 0.8, ``--seed``/trial as there). The last line gives the calls to mean τ ≥ 0.9 (same
log-linear read-off as the designs benchmark).

Run: ``.venv/bin/python benchmarks/adaptive_known_gaps.py [--seed 2026] [--trials 40]``.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.special import ndtr

from judgewise.ratings.bradley_terry import fit_bt_arrays
from judgewise.analysis.sweeps import first_crossing, smooth_crossing, uniform_truth
from judgewise.judges.simulated import ELO_SCALE, sample_verdicts
from judgewise.ratings.agreement import kendall_tau_b

N_MODEL, P_JUDGE, STEP = 20, 0.8, 10
GRID = np.arange(600, 3601, 300)


def eq3_information(gap: np.ndarray) -> np.ndarray:
    """Fisher information about the true log-odds gap of one Eq. 3 verdict (ties: remainder 1 − P_judge)."""
    p = 1.0 / (1.0 + np.exp(-gap))
    mean = P_JUDGE * p + (1 - P_JUDGE) / 2
    var = P_JUDGE * p + (1 - P_JUDGE) / 4 - mean**2
    return (P_JUDGE * p * (1 - p)) ** 2 / var


def known_gap_counts(theta: np.ndarray, grid) -> list[np.ndarray]:
    """Calls per pair (triu order) of the greedy known-gaps allocation at each total in ``grid``."""
    n = len(theta)
    lo, hi = np.triu_indices(n, k=1)
    u = np.zeros((n, len(lo)))
    u[lo, np.arange(len(lo))], u[hi, np.arange(len(lo))] = 1.0, -1.0
    gap, info = np.abs(theta[lo] - theta[hi]), eq3_information(theta[lo] - theta[hi])
    cov = np.linalg.inv((u * 0.3 * info) @ u.T + 1e-6 * np.eye(n))  # a weak start: every pair 0.3 calls
    counts, out = np.zeros(len(lo), dtype=int), []
    for total in grid:
        while counts.sum() < total:
            s = u.T @ cov @ u
            var, m = np.diag(s), STEP * info
            after = np.maximum(var[:, None] - m[None, :] * s**2 / (1 + m * var)[None, :], 1e-12)
            gain = (ndtr(-gap / np.sqrt(var))[:, None] - ndtr(-gap[:, None] / np.sqrt(after))).sum(axis=0)
            k = int(np.argmax(gain))
            su = cov @ u[:, k]
            cov -= m[k] * np.outer(su, su) / (1 + m[k] * (u[:, k] @ su))
            counts[k] += STEP
        out.append(counts.copy())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--trials", type=int, default=40)
    args = parser.parse_args()
    lo, hi = np.triu_indices(N_MODEL, k=1)
    taus = []
    for trial in range(args.trials):
        elo = uniform_truth(N_MODEL, np.random.default_rng([args.seed, trial, N_MODEL]))
        rng = np.random.default_rng([args.seed, trial, 99])
        row = []
        for counts in known_gap_counts(elo * np.log(10.0) / ELO_SCALE, GRID):
            a, b = np.repeat(lo, counts), np.repeat(hi, counts)
            outcome, _ = sample_verdicts(elo[a], elo[b], P_JUDGE, rng)
            row.append(kendall_tau_b(fit_bt_arrays(a, b, outcome, N_MODEL)[0], elo))
        taus.append(row)
    mean = np.mean(taus, axis=0)
    print(f"known-gaps allocation, seed {args.seed}, {args.trials} trials: mean τ by calls "
          + " ".join(f"{c}:{t:.3f}" for c, t in zip(GRID, mean)))
    print(f"first crossing {first_crossing(GRID, mean, 0.9):.0f}")
    print(f"known_gaps_calls={smooth_crossing(GRID, mean, 0.9):.0f}")


if __name__ == "__main__":
    main()

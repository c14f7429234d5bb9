"""Issue 12 acceptance: ``judgewise.evaluate`` with the simulated judge stops by itself near the target.

Setup (defaults): 16 models 20 Elo apart, 300 prompts, p_judge 0.8, position bias 0.2, ``orders: one``,
``target: {kendall_tau: 0.9}``, ``design: auto`` (adaptive), a fresh SQLite store per seed, 20 seeds (judge seed
and run seed = the seed). Each run goes through the real engine (store, scheduler, rounds). Realised τ is Kendall
τ-b between the final BT scores and the true ratings. Goal: mean realised τ ≥ 0.9, mean calls ≤ 4,500, and the
mean realised τ within 0.02 of the mean posterior-expected τ at the stop.

    .venv/bin/python benchmarks/evaluate_simulated.py [--seeds 20] [--models 16] [--gap 20] [--prompts 300]

Last line: ``mean_tau=<x> worst_tau=<x> mean_calls=<n> mean_expected_tau_at_stop=<x>``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from judgewise import evaluate


def setup(n_models: int, gap: float, n_prompts: int) -> tuple[pd.DataFrame, dict[str, float]]:
    """Responses (one short text per model and prompt, with the prompt text) and the true Elo ratings."""
    models = [f"model-{i:02d}" for i in range(n_models)]
    ratings = {m: 1000.0 + gap * i for i, m in enumerate(models)}
    rows = [(f"p{p:04d}", m, f"answer of {m} to prompt {p}", f"prompt {p}") for p in range(n_prompts) for m in models]
    return pd.DataFrame(rows, columns=["prompt_id", "model", "text", "instruction"]), ratings


def one_run(seed: int, responses: pd.DataFrame, ratings: dict, args, folder: Path) -> dict:
    """One evaluation; returns its realised τ, calls, stop reason and expected τ at the stop."""
    config = {"responses": responses, "orders": "one", "seed": seed, "store": str(folder / f"store-{seed}.sqlite"),
              "judge": {"backend": "simulated", "ratings": ratings, "p_judge": args.p_judge,
                        "position_bias": args.position_bias, "seed": seed},
              "target": {"kendall_tau": args.target}}
    if args.max_calls:
        config["budget"] = {"max_calls": args.max_calls}
    result = evaluate(config, bootstrap=0)
    scores = dict(zip(result.ranking.models, result.ranking.scores))
    models = sorted(ratings)
    tau = kendalltau([scores[m] for m in models], [ratings[m] for m in models]).statistic
    return {"seed": seed, "tau": float(tau), "calls": result.calls, "stopped": result.stopped,
            "expected_tau": result.expected_tau, "design": result.design}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--models", type=int, default=16)
    parser.add_argument("--gap", type=float, default=20.0)
    parser.add_argument("--prompts", type=int, default=300)
    parser.add_argument("--p-judge", type=float, default=0.8)
    parser.add_argument("--position-bias", type=float, default=0.2)
    parser.add_argument("--target", type=float, default=0.9)
    parser.add_argument("--max-calls", type=int, default=0, help="budget.max_calls (0: none)")
    args = parser.parse_args()
    responses, ratings = setup(args.models, args.gap, args.prompts)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            start = time.perf_counter()
            runs.append(one_run(seed, responses, ratings, args, Path(tmp)))
            r = runs[-1]
            print(f"seed {seed:2d}: design {r['design']}, stopped {r['stopped']}, {r['calls']:,} calls, "
                  f"realised tau {r['tau']:.3f}, expected tau at stop {r['expected_tau']:.3f} "
                  f"({time.perf_counter() - start:.1f}s)", flush=True)
    tau = np.array([r["tau"] for r in runs])
    calls = np.array([r["calls"] for r in runs])
    expected = np.array([r["expected_tau"] for r in runs])
    stops = pd.Series([r["stopped"] for r in runs]).value_counts().to_dict()
    print(f"{args.seeds} seeds, {args.models} models {args.gap:g} Elo apart, {args.prompts} prompts: stops {stops}; "
          f"calls min {calls.min():,} max {calls.max():,}; realised - expected tau: {tau.mean() - expected.mean():+.3f}")
    print(f"mean_tau={tau.mean():.3f} worst_tau={tau.min():.3f} mean_calls={calls.mean():.0f} "
          f"mean_expected_tau_at_stop={expected.mean():.3f}")


if __name__ == "__main__":
    main()

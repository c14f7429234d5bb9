"""How far ``judgewise.add_model`` places a newcomer from where it belongs (Arena-lite Table 6's |Δrank|).

Setup (defaults): 8 models 60 Elo apart, 100 prompts, p_judge 0.8, position bias 0.2, ``orders: one``; per seed a
newcomer with a uniform rating inside the board's range (a quarter gap from each end), a fresh SQLite store, an
``evaluate`` to ``kendall_tau: 0.9`` (the stored leaderboard), then each insertion on a copy of that store: binary
search (Alg. 2), anchored on the top model (A.6.2, Table 4's "comp. to 1st") and anchored on a mid-table model.
Everything goes through the real engine. |Δrank| = |placed rank − true rank| (true rank = 1 + board models rated
higher); ``bt`` is the same for the newcomer's rank in the new BT ranking.

    .venv/bin/python benchmarks/add_model_simulated.py [--seeds 12] [--models 8] [--gap 60] [--prompts 100]

Last lines: per insertion ``mean_abs_rank_error=<x> within_one=<share> bt_mean_abs_rank_error=<x> mean_games=<n>``.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise import add_model, evaluate


def one_seed(seed: int, args, folder: Path) -> list[dict]:
    """The stored leaderboard of one seed, then each insertion on a copy of its store."""
    models = [f"m{i}" for i in range(args.models)]
    rng = np.random.default_rng(1000 + seed)
    new = 1000.0 + args.gap * rng.uniform(0.25, args.models - 1.25)
    ratings = {**{m: 1000.0 + args.gap * i for i, m in enumerate(models)}, "new": float(new)}
    truth = 1 + sum(r > new for m, r in ratings.items() if m != "new")
    rows = [(f"p{p:03d}", m, f"answer of {m} to prompt {p}", f"prompt {p}") for p in range(args.prompts)
            for m in models + ["new"]]
    store = folder / f"store-{seed}.sqlite"
    config = {"responses": pd.DataFrame(rows, columns=["prompt_id", "model", "text", "instruction"]),
              "models": models, "orders": "one", "seed": seed, "store": str(store),
              "judge": {"backend": "simulated", "ratings": ratings, "p_judge": args.p_judge,
                        "position_bias": args.position_bias, "seed": seed}, "target": {"kendall_tau": 0.9}}
    evaluate(config, bootstrap=0)
    out = []
    for label, insertion, anchor in (("binary", "binary", None), ("anchor-top", "anchor", None),
                                     ("anchor-mid", "anchor", models[len(models) // 2])):
        copy = folder / f"copy-{seed}-{label}.sqlite"
        shutil.copy(store, copy)
        p = add_model({**config, "store": str(copy)}, "new", insertion=insertion, anchor=anchor, bootstrap=0).placement
        out.append({"seed": seed, "insertion": label, "error": abs(p["rank"] - truth),
                    "bt_error": abs(p["bt_rank"] - truth), "games": p["games"]})
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--gap", type=float, default=60.0)
    parser.add_argument("--prompts", type=int, default=100)
    parser.add_argument("--p-judge", type=float, default=0.8)
    parser.add_argument("--position-bias", type=float, default=0.2)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        runs = pd.DataFrame([r for seed in range(args.seeds) for r in one_seed(seed, args, Path(tmp))])
    for label, g in runs.groupby("insertion", sort=False):
        print(f"{label}: mean_abs_rank_error={g['error'].mean():.2f} within_one={(g['error'] <= 1).mean():.2f} "
              f"bt_mean_abs_rank_error={g['bt_error'].mean():.2f} mean_games={g['games'].mean():.1f}")


if __name__ == "__main__":
    main()

"""Benchmark (issue 11): online-Elo bootstrap, compiled and batched over replicates vs the per-replicate Python loop.

Data: the Arena-Hard v0.1 battles (PATH, default ``../shared/data/arenahard/battles.jsonl``). Times 1,000
prompt-bootstrap rounds of ``rank(..., method="elo")`` (the compiled pass over all replicates, draws batched; best
of 3 after a warm-up that loads numba's cache) against the former path — a Python loop of Elo updates per
replicate, replicate by replicate (``online_elo_reference``) — on the same multiplicities, and checks that both give
the same replicate ratings. Timings depend on the machine's load: compare the two figures of one run.

Run: ``.venv/bin/python benchmarks/elo_bootstrap.py [PATH] [--rounds 1000]``.
Last line: ``elo_bootstrap_s=<s> python_loop_s=<s> speedup=<x> max_abs_diff=<d>``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from judgewise.io import read_judgments
from judgewise.ratings.bootstrap import row_multiplicities
from judgewise.ratings.elo import online_elo_reference, online_elo_replicates
from judgewise.ratings.encode import encode
from judgewise.ratings.method import RatingData
from judgewise.ratings.ranking import rank

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "arenahard" / "battles.jsonl"


def best_of(runs: int, fn) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(DEFAULT))
    parser.add_argument("--rounds", type=int, default=1000)
    args = parser.parse_args()
    frame = read_judgments(args.path).frame
    rank(frame, method="elo", bootstrap=10, seed=0)  # warm-up: numba cache
    compiled = best_of(3, lambda: rank(frame, method="elo", bootstrap=args.rounds, seed=0))
    enc = encode(frame)
    mult = row_multiplicities(RatingData(enc, frame), "prompt", np.random.default_rng(0), args.rounds)  # rounds × rows

    def python_loop():
        return np.stack([online_elo_reference(*(x[np.repeat(np.arange(enc.n_rows), m)] for x in
                                                (enc.a, enc.b, enc.outcome, enc.weight)), enc.n_models)
                         for m in mult])

    start = time.perf_counter()
    loop = python_loop()
    loop_s = time.perf_counter() - start
    diff = float(np.abs(loop - online_elo_replicates(enc.a, enc.b, enc.outcome, enc.weight, enc.n_models,
                                                     mult)).max())
    print(f"{len(frame):,} battles, {enc.n_models} models, {args.rounds} prompt-bootstrap rounds")
    print(f"elo_bootstrap_s={compiled:.3f} python_loop_s={loop_s:.3f} speedup={loop_s / compiled:.1f} "
          f"max_abs_diff={diff:.3g}")


if __name__ == "__main__":
    main()

"""Benchmark (issue 35): do prediction-powered rank-sets cover the human ranking, narrower than humans alone?

``judgewise rank --human`` combines n human pairwise labels with a judge's verdicts on N more comparisons into
rank-sets (:mod:`judgewise.analysis.human_anchored`, Chatzi et al. 2024). For each setting this prints

* ``coverage``: the share of runs whose rank-sets contain the human ranking (every model's true rank inside its
  rank-set; goal ≥ 1 − α), for the prediction-powered sets (``ppr``), the human-only sets from the same n labels
  and the judge-only sets from all its verdicts;
* ``size``: the mean rank-set size (hi − lo + 1, averaged over models and runs), and ``ppr/human``, the ratio of
  the prediction-powered sets' mean size to the human-only sets'.

Simulation: 8 models with known Elo ratings (1200 … 900, equal steps); every comparison is a fresh prompt whose two
responses have a latent quality elo + N(0, 150²) shared by the human and the judge (so their verdicts correlate per
comparison, as on real prompts). Humans: BT on that quality (``judges.simulated.sample_verdicts``, p_judge 1, 10%
ties). The judge says what the human said on 60% of comparisons (70% for the control judge) and otherwise draws
from the same simulator with p_judge 0.9, position bias 0.2, length bias 0.3 (models 7 and 8 write longer answers)
and +500 Elo for "its own family" (models 5 and 6): agreeing with humans on ~78% of verdicts, its ranking puts
model 5 above model 4, confidently (its own rank-sets miss the human ranking). The control judge has no bias.
N = 40,000 comparisons spread evenly over pairs, n of them labelled. The human ranking is the order of the
ratings (θ_m is monotone in the rating: the jitter is symmetric).

Chatbot Arena (``../shared/data/chatbot-arena-ppr``: 26,919 battles of 20 models with the human vote and the
verdicts of GPT-4 and GPT-3.5 on each): the human ranking is the ranking by the win shares of all human votes;
each run labels a random subset of n battles with their human votes and gives the judge's verdicts on the rest.

Measured (200 seeds, 200 subsets; 2 min 20 s on one core): every prediction-powered, human-only and unbiased-judge
rank-set covered the human ranking in every run (coverage 1.000 at α 0.05 and 0.1: the paper's χ²_k projection is
conservative); the biased judge's own rank-sets covered it in 3.0% (α 0.05) / 0.5% (α 0.1) of runs. Mean size
against human-only sets from the same labels: 0.84–0.89 (biased judge, n 500–2,000; λ ≈ 0.56–0.58), 0.72–0.78
(control). Arena with GPT-4 (λ ≈ 0.34–0.40): 0.949–0.975 of the human-only size for n 5,000 … 500 (e.g. 18.4 vs
18.8 ranks of 20 at n 500, 10.9 vs 11.5 at n 5,000); GPT-4 alone covers too (its sets of ~5 ranks hold the
all-human ranking), and GPT-3.5 agrees too little with the voters to help (λ ≈ 0.07, size ratio ≈ 1.00).

Run: ``.venv/bin/python benchmarks/human_anchored.py [--seeds 200] [--subsets 200] [--quick]``. Last line:
``ppr_coverage_min=… ppr_size_vs_human=… arena_coverage=… arena_size_vs_human=…`` (coverage: the smallest over
settings and α; size: the largest ppr/human ratio over settings, GPT-4 as the Arena judge).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.analysis.human_anchored import (covers, ppr_estimate, rank_sets, true_ranks, win_share_estimate)
from judgewise.analysis.human_pairs import match_labels
from judgewise.io import read_judgments
from judgewise.judges.simulated import sample_verdicts

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ARENA = SHARED / "chatbot-arena-ppr"
ALPHAS = (0.05, 0.1)
ELO = np.linspace(1200.0, 900.0, 8)
FAMILY_BOOST = np.array([0, 0, 0, 0, 500.0, 500.0, 0, 0])
LENGTH = np.array([0, 0, 0, 0, 0, 0, 1.0, 1.0])  # models 7 and 8 write longer answers
JUDGES = {"biased": {"agree": 0.6, "p_judge": 0.9, "position_bias": 0.2, "length_bias": 0.3, "boost": FAMILY_BOOST},
          "unbiased": {"agree": 0.7, "p_judge": 0.9, "position_bias": 0.0, "length_bias": 0.0,
                       "boost": 0 * FAMILY_BOOST}}


def simulate(rng: np.random.Generator, n_total: int, judge: dict) -> tuple:
    """One simulated study: (a, b, human y, judge y) on ``n_total`` comparisons spread evenly over the pairs."""
    k = len(ELO)
    pairs = np.array([(i, j) for i in range(k) for j in range(i + 1, k)])
    pick = pairs[np.arange(n_total) % len(pairs)]
    swap = rng.random(n_total) < 0.5
    a, b = np.where(swap, pick[:, 1], pick[:, 0]), np.where(swap, pick[:, 0], pick[:, 1])
    qa, qb = ELO[a] + 150 * rng.standard_normal(n_total), ELO[b] + 150 * rng.standard_normal(n_total)
    human = sample_verdicts(qa, qb, 1.0, rng, tie_rate=0.1)[0]
    longer = np.sign(LENGTH[a] + 0.5 * rng.standard_normal(n_total) - LENGTH[b] - 0.5 * rng.standard_normal(n_total))
    boost = judge["boost"]
    verdict = sample_verdicts(qa + boost[a], qb + boost[b], judge["p_judge"], rng, tie_rate=0.1,
                              position_bias=judge["position_bias"], length_bias=judge["length_bias"],
                              longer=longer.astype(int))[0]
    return a, b, human, np.where(rng.random(n_total) < judge["agree"], human, verdict)


def one_run(a, b, human, judge, labelled: np.ndarray, k: int, truth: np.ndarray) -> dict:
    """Coverage and mean size of the ppr, human-only and judge-only rank-sets of one run, per α."""
    rest = ~labelled
    theta, cov, lam = ppr_estimate((a[labelled], b[labelled], human[labelled], judge[labelled]),
                                   (a[rest], b[rest], judge[rest]), k)
    h = win_share_estimate(a[labelled], b[labelled], human[labelled], k)
    j = win_share_estimate(a, b, judge, k)
    out = {"lambda": lam}
    for alpha in ALPHAS:
        for name, (t, c) in {"ppr": (theta, cov), "human": h, "judge": j}.items():
            lo, hi = rank_sets(t, c, alpha)
            out[f"{name}_cover_{alpha}"] = bool(covers(lo, hi, truth))
            out[f"{name}_size_{alpha}"] = float(np.mean(hi - lo + 1))
    return out


def summarise(runs: list[dict], **setting) -> list[dict]:
    """One row per α: the runs' coverage and mean sizes."""
    frame = pd.DataFrame(runs)
    rows = []
    for alpha in ALPHAS:
        row = dict(setting, alpha=alpha, runs=len(frame), mean_lambda=frame["lambda"].mean())
        for name in ("ppr", "human", "judge"):
            row[f"{name}_coverage"] = frame[f"{name}_cover_{alpha}"].mean()
            row[f"{name}_size"] = frame[f"{name}_size_{alpha}"].mean()
        row["ppr/human"] = row["ppr_size"] / row["human_size"]
        rows.append(row)
    return rows


def simulation_table(seeds: int, sizes=(500, 1000, 2000), n_total: int = 40_000) -> pd.DataFrame:
    """Coverage and sizes on simulated studies, per judge, labelled size n and α."""
    truth = true_ranks(ELO)
    rows = []
    for judge_name, judge in JUDGES.items():
        for n in sizes:
            runs = []
            for seed in range(seeds):
                rng = np.random.default_rng([35, seed])
                a, b, human, verdict = simulate(rng, n_total, judge)
                labelled = np.zeros(n_total, bool)
                labelled[rng.choice(n_total, n, replace=False)] = True
                runs.append(one_run(a, b, human, verdict, labelled, len(ELO), truth))
            rows += summarise(runs, data="simulated", judge=judge_name, n=n)
    return pd.DataFrame(rows)


def arena_arrays(judge_file: str) -> tuple:
    """Every Arena battle with its human vote and the judge's verdict: (a, b, human y, judge y, models)."""
    human = read_judgments(ARENA / "human.jsonl").frame
    judge = read_judgments(ARENA / judge_file).frame
    matched = match_labels(judge, human, source=str(ARENA / "human.jsonl"))
    a, b, h, j = matched.labelled
    return a, b, h, j, matched.models


def arena_table(subsets: int, sizes=(500, 1000, 2000, 5000),
                judges=("gpt-4-0125-preview", "gpt-3.5-turbo")) -> pd.DataFrame:
    """Coverage of the all-human ranking and sizes on random subsets of n Arena human votes, per judge."""
    rows = []
    for judge_name in judges:
        a, b, human, verdict, models = arena_arrays(f"{judge_name}.jsonl")
        k, total = len(models), len(a)
        truth = true_ranks(win_share_estimate(a, b, human, k)[0])
        for n in sizes:
            rng = np.random.default_rng([35, n])
            runs = []
            for _ in range(subsets):
                labelled = np.zeros(total, bool)
                labelled[rng.choice(total, n, replace=False)] = True
                runs.append(one_run(a, b, human, verdict, labelled, k, truth))
            rows += summarise(runs, data="arena", judge=judge_name, n=n)
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200, help="Simulated studies per setting.")
    parser.add_argument("--subsets", type=int, default=200, help="Random label subsets per Arena setting.")
    parser.add_argument("--quick", action="store_true", help="A smoke test: 10 seeds, 10 subsets, GPT-4 only.")
    args = parser.parse_args(argv)
    seeds, subsets = (10, 10) if args.quick else (args.seeds, args.subsets)
    pd.set_option("display.width", 200, "display.max_columns", 30, "display.precision", 3)
    start = time.perf_counter()
    sim = simulation_table(seeds)
    print(f"simulated: {seeds} seeds per row, N = 40,000 comparisons, 8 models ({time.perf_counter() - start:.1f} s)")
    print(sim.to_string(index=False))
    start = time.perf_counter()
    arena = arena_table(subsets, judges=("gpt-4-0125-preview",) if args.quick else
                        ("gpt-4-0125-preview", "gpt-3.5-turbo"))
    print(f"\nChatbot Arena: {subsets} label subsets per row, 20 models ({time.perf_counter() - start:.1f} s)")
    print(arena.to_string(index=False))
    biased = sim[sim["judge"] == "biased"]
    gpt4 = arena[arena["judge"] == "gpt-4-0125-preview"]
    print(f"\njudge-only coverage (biased simulated judge): {biased['judge_coverage'].max():.3f} at most; "
          f"GPT-4 alone on Arena: {gpt4['judge_coverage'].max():.3f} at most")
    print(f"ppr_coverage_min={biased['ppr_coverage'].min():.3f} ppr_size_vs_human={biased['ppr/human'].max():.3f} "
          f"arena_coverage={gpt4['ppr_coverage'].min():.3f} arena_size_vs_human={gpt4['ppr/human'].max():.3f}")


if __name__ == "__main__":
    main()

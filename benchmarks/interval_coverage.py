"""Benchmark (issue 31): do the 95% intervals ``judgewise rank`` prints cover the all-prompts value?

Data: AlpacaEval 2 (``../shared/data/alpacaeval``, 28 models against the anchor ``gpt4_1106_preview``, read with
``judgewise.io.alpacaeval.read_alpacaeval``) and, with ``--arena-hard``, the Arena-Hard v0.1 battles
(``../shared/data/arenahard/battles.jsonl``, 5 models). For each rating method (win rate vs the anchor, BT on the
Elo scale, online Elo) and each subset size, draw ``--subsets`` seeded random prompt subsets; rank each subset
with :func:`judgewise.ratings.rank` exactly as ``judgewise rank`` does (``commands.ranking.rating_fit``: the
anchor for win rate, none for BT/Elo on AlpacaEval, ``--bootstrap`` prompt-bootstrap rounds, level 95%) and count

* ``score``: the share of (subset, model) intervals [ci_low, ci_high] that contain the model's score on all
  prompts (the same call on every prompt, no bootstrap);
* ``rank``: the share of CI-aware rank ranges that contain the model's rank on all prompts. The printed rank
  (:func:`judgewise.ratings.result.ci_aware_rank`) is 1 + the number of models clearly better (whose lower bound
  is above this model's upper bound): the best rank the intervals allow. Its range runs to the worst rank they
  allow, n − the number of models clearly worse; the all-prompts rank is its competition rank
  (:func:`judgewise.ratings.result.competition_rank`).

Rounds: 1,000 by default, as ``evaluate`` uses. Fewer understate BCa's coverage, whose tail quantiles move with the
Monte Carlo error: 200 rounds gave 84.4% for BT at 50 prompts where 1,000 give 86.8% (50 subsets, se ≈ 2 points);
``--bootstrap 200`` is a quick look (a minute), not the figure to quote.

The subset's rows keep the input's order (online Elo depends on it). Coverage of intervals of one subset is
correlated across models; ``se`` below is the standard error over subsets (the subset means' spread / √subsets).

Run: ``.venv/bin/python benchmarks/interval_coverage.py [--subsets 50] [--bootstrap 1000] [--sizes 50 100 200 400]
[--methods winrate bt elo] [--intervals bca percentile] [--arena-hard] [--write]``
(``--write``: the AlpacaEval figures into ``src/judgewise/ratings/coverage.json``, which ``rank``, ``evaluate``,
the report and the explorer quote where an interval falls short of its level). Last line: ``ci_coverage_min=<x>`` (the smallest score or rank
coverage over methods, sizes and data sets, of the first interval asked: the default, BCa; online Elo, whose output
says its interval is a spread and not a confidence interval, is printed on the line before).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.io import read_judgments
from judgewise.io.alpacaeval import read_alpacaeval
from judgewise.ratings import rank
from judgewise.ratings.coverage import SPREAD_NOT_CONFIDENCE
from judgewise.ratings.result import competition_rank

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
COVERAGE_FILE = ROOT / "src" / "judgewise" / "ratings" / "coverage.json"
SIZES = (50, 100, 200, 400)
METHODS = ("winrate", "bt", "elo")
LEVEL = 0.95


def alpacaeval_rows(path: Path = SHARED / "alpacaeval") -> pd.DataFrame:
    """AlpacaEval 2's judgments as ``judgewise rank`` reads them (``read_alpacaeval``)."""
    return read_alpacaeval(path).frame


def arenahard_rows(path: Path = SHARED / "arenahard" / "battles.jsonl") -> pd.DataFrame:
    """Arena-Hard v0.1's judged battles as ``judgewise rank`` reads them."""
    return read_judgments(path).frame


def _anchor(method: str, rows: pd.DataFrame) -> str | None:
    """The anchor ``judgewise rank`` passes: the detected one for win rate, none otherwise (AlpacaEval/battles)."""
    if method != "winrate":
        return None
    return rank(rows, "winrate").info.get("anchor")


def rank_range(ci_low: np.ndarray, ci_high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(best, worst) rank the intervals allow: 1 + #models clearly better, n − #models clearly worse."""
    low, high = np.asarray(ci_low, float), np.asarray(ci_high, float)
    better = (low[None, :] > high[:, None]).sum(axis=1)
    worse = (high[None, :] < low[:, None]).sum(axis=1)
    return 1 + better, len(low) - worse


def _subset_hits(rows, prompts, truth, truth_rank, method, anchor, bootstrap, seed, interval):
    """(score hits, rank hits, interval widths) of one subset's ranking, aligned with ``truth``'s models."""
    sub = rows[rows["prompt_id"].isin(prompts)]
    r = rank(sub, method, anchor=anchor, bootstrap=bootstrap, seed=seed, ci_level=LEVEL, interval=interval)
    idx = pd.Index(r.models).get_indexer(truth.index)
    low, high = r.ci_low[idx], r.ci_high[idx]
    best, worst = rank_range(r.ci_low, r.ci_high)
    covered = (low <= truth.values) & (truth.values <= high)
    if anchor is not None:  # the anchor's own score is fixed by definition (50%): not an interval
        covered = covered[truth.index != anchor]
    ranks_ok = (best[idx] <= truth_rank) & (truth_rank <= worst[idx])
    return covered, ranks_ok, high - low


def coverage_table(rows: pd.DataFrame | None = None, *, methods=METHODS, sizes=SIZES, subsets: int = 50,
                   bootstrap: int = 1000, seed: int = 0, data: str = "alpacaeval",
                   interval: str = "bca") -> pd.DataFrame:
    """One row per (method, size): the share of 95% score intervals and of CI-aware rank ranges that contain the
    all-prompts value, their standard errors over subsets, the mean interval width and the seconds taken."""
    rows = alpacaeval_rows() if rows is None else rows
    prompts = np.asarray(sorted(rows["prompt_id"].unique()))
    out = []
    for method in methods:
        anchor = _anchor(method, rows)
        full = rank(rows, method, anchor=anchor)
        truth = pd.Series(full.scores, index=full.models)
        truth_rank = competition_rank(full.scores)
        for size in sizes:
            start, rng = time.perf_counter(), np.random.default_rng([seed, size])
            hits = [_subset_hits(rows, rng.choice(prompts, size, replace=False), truth, truth_rank, method,
                                 anchor, bootstrap, seed + k, interval) for k in range(subsets)]
            score = np.array([h[0].mean() for h in hits])
            ranks = np.array([h[1].mean() for h in hits])
            out.append({"data": data, "method": method, "interval": interval, "prompts": size, "subsets": subsets, "bootstrap": bootstrap,
                        "score_coverage": score.mean(), "score_se": score.std(ddof=1) / np.sqrt(subsets),
                        "rank_coverage": ranks.mean(), "rank_se": ranks.std(ddof=1) / np.sqrt(subsets),
                        "mean_width": float(np.mean([np.nanmean(h[2]) for h in hits])),
                        "seconds": time.perf_counter() - start})
    return pd.DataFrame(out)


def coverage_min(table: pd.DataFrame, interval: str = "bca") -> float:
    """The smallest score or rank coverage of ``interval``'s rows of a :func:`coverage_table` among the methods
    whose intervals claim to be confidence intervals: the benchmark's ``ci_coverage_min``. Online Elo's interval
    says what it is instead (``ratings.coverage.SPREAD_NOT_CONFIDENCE``) and is reported on its own."""
    rows = table[(table["interval"] == interval) & ~table["method"].isin(list(SPREAD_NOT_CONFIDENCE))]
    return float(np.nanmin(rows[["score_coverage", "rank_coverage"]].to_numpy()))


def write_coverage(table: pd.DataFrame, args) -> None:
    """The figures ``judgewise.ratings.coverage`` quotes in every output (``ratings/coverage.json``)."""
    keep = ["method", "interval", "prompts", "score_coverage", "rank_coverage", "subsets", "bootstrap"]
    data = {"level": LEVEL, "source": "AlpacaEval 2 prompt subsets, docs/ratings.md",
            "measured_by": f"benchmarks/interval_coverage.py --subsets {args.subsets} --bootstrap {args.bootstrap}",
            "rows": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in rec.items()}
                     for rec in table[keep].to_dict("records")]}
    COVERAGE_FILE.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subsets", type=int, default=50)
    parser.add_argument("--bootstrap", type=int, default=1000, help="rounds per interval (evaluate's default)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--intervals", nargs="+", default=["bca", "percentile"],
                        help="bootstrap intervals to measure (ratings.bootstrap.INTERVALS)")
    parser.add_argument("--write", action="store_true",
                        help=f"write the AlpacaEval figures to {COVERAGE_FILE.relative_to(ROOT)} (what outputs quote)")
    parser.add_argument("--arena-hard", action="store_true", help="also the Arena-Hard v0.1 battles (5 models)")
    args = parser.parse_args(argv)
    common = dict(methods=args.methods, subsets=args.subsets, bootstrap=args.bootstrap, seed=args.seed)
    rows, tables = alpacaeval_rows(), []
    battles = arenahard_rows() if args.arena_hard else None
    for interval in args.intervals:
        tables.append(coverage_table(rows, sizes=args.sizes, interval=interval, **common))
        if battles is not None:  # 120 prompts: subsets of at most half of them, or the subset is nearly the whole
            sizes = [s for s in args.sizes if 2 * s <= battles["prompt_id"].nunique()]
            tables.append(coverage_table(battles, sizes=sizes, data="arenahard", interval=interval, **common))
    table = pd.concat(tables, ignore_index=True)
    if args.write:
        write_coverage(table[table["data"] == "alpacaeval"], args)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table.round(3).to_string(index=False))
    for rec in table.to_dict("records"):
        print(f"{rec['data']} {rec['method']} {rec['interval']} {rec['prompts']} prompts: score {rec['score_coverage']:.3f} "
              f"(se {rec['score_se']:.3f}) rank {rec['rank_coverage']:.3f}")
    low = coverage_min(table, args.intervals[0])  # the default interval (bca) unless told otherwise
    spread = table[(table["interval"] == args.intervals[0]) & table["method"].isin(list(SPREAD_NOT_CONFIDENCE))]
    if len(spread):
        print(f"not confidence intervals (the output says so): online Elo covers "
              f"{spread['score_coverage'].min():.3f}–{spread['score_coverage'].max():.3f}")
    print(f"ci_coverage_min={low:.3f}")
    return table


if __name__ == "__main__":
    main()

"""Anchor experiments on quadratic judgments: pilot (§5.3), anchor quality and its inverted U (§2 Eq. 1, §4.1),
sample size (§5.1) and number of anchors (App. E) — each a function returning a table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgewise.analysis.anchor_selection import QuadraticData, informativeness
from judgewise.analysis.planning import PILOT_PROMPTS
from judgewise.errors import ConfigError
from judgewise.ratings.agreement import kendall_tau_b

EDGE = 3  # the strongest / weakest few models of a pool are "extreme" (§5.3 bottom-three finding)


@dataclass
class PilotResult:
    """Every candidate anchor's informativeness on a few prompts, and the recommendation with its reason."""

    table: pd.DataFrame  # anchor, informativeness, pilot_rank (by pilot BT score, 1 = best), position
    recommended: str
    reason: str
    n_prompts: int


def _position(rank: int, n: int) -> str:
    if rank <= min(EDGE, n // 3):
        return "strong"
    if rank > n - min(EDGE, n // 3):
        return "weak"
    return "mediocre"


def pilot(data: QuadraticData, n_prompts: int = PILOT_PROMPTS, rng: np.random.Generator | None = None) -> PilotResult:
    """Anchor §5.3: estimate every candidate's informativeness from ``n_prompts`` random prompts of all-pairs
    judgments and recommend the most informative one; its rank in the pool says why ("mediocre")."""
    rng = rng if rng is not None else np.random.default_rng(0)
    n_all = len(data.prompts)
    if n_all < 1 or len(data.models) < 3:
        raise ConfigError("a pilot needs all-pairs judgments of at least 3 models on at least 1 prompt")
    prompts = np.sort(rng.choice(n_all, size=min(n_prompts, n_all), replace=False))
    scores = data.bt_scores(prompts)
    rank = np.empty(len(scores), dtype=int)
    rank[np.argsort(-scores, kind="stable")] = np.arange(1, len(scores) + 1)
    info = [informativeness(np.sign(data.anchor_verdicts(k, prompts))) for k in range(len(data.models))]
    n = len(data.models)
    table = pd.DataFrame({"anchor": data.models, "informativeness": info, "pilot_rank": rank,
                          "position": [_position(r, n) for r in rank]})
    table = table.sort_values("informativeness", ascending=False, kind="stable").reset_index(drop=True)
    best = table.iloc[0]
    reason = (f"{best.anchor} has the highest pilot informativeness ({best.informativeness:.2f}; lowest: "
              f"{table.iloc[-1].anchor} {table.iloc[-1].informativeness:.2f}) and ranks {best.pilot_rank}/{n} in the "
              f"pool — {best.position} relative to the pool"
              + (", as Anchor §4.3 predicts: an anchor near the middle splits the models most often"
                 if best.position == "mediocre" else "; check it is not an outlier with more pilot prompts"))
    return PilotResult(table, str(best.anchor), reason, len(prompts))


def anchor_quality(data: QuadraticData, gold: np.ndarray | None = None, prompts=None) -> pd.DataFrame:
    """Anchor §2 Eq. 1 / §4.1: for every anchor, Kendall τ between its anchor-based BT ranking and the gold
    (quadratic BT on the same prompts when ``gold`` is None), with the anchor's gold rank and informativeness —
    plotted against gold rank this is the inverted U."""
    gold = data.bt_scores(prompts) if gold is None else np.asarray(gold, float)
    gold_rank = np.empty(len(gold), dtype=int)
    gold_rank[np.argsort(-gold, kind="stable")] = np.arange(1, len(gold) + 1)
    rows = []
    for k, name in enumerate(data.models):
        scores = data.bt_scores(prompts, anchors=[k])
        rows.append({"anchor": name, "gold_rank": int(gold_rank[k]), "tau": kendall_tau_b(scores, gold),
                     "informativeness": informativeness(np.sign(data.anchor_verdicts(k, prompts)))})
    return pd.DataFrame(rows).sort_values("gold_rank").reset_index(drop=True)


def sample_size_experiment(data: QuadraticData, sizes, repeats: int = 10, gold: np.ndarray | None = None,
                           rng: np.random.Generator | None = None) -> pd.DataFrame:
    """Anchor §5.1: for each number of prompts, mean Kendall τ against the gold, over random prompt subsets, of
    the quadratic ranking, of the anchor-based rankings averaged over all anchors, and of the best and the worst
    single anchor (the anchors with the highest and lowest mean τ over those subsets)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    gold = data.bt_scores() if gold is None else np.asarray(gold, float)
    n_models, n_all = len(data.models), len(data.prompts)
    rows = []
    for size in sizes:
        if size > n_all:
            raise ConfigError(f"sample size {size} exceeds the {n_all} prompts available")
        quad, anchor_mean, per_anchor = [], [], np.zeros(n_models)
        for _ in range(repeats):
            prompts = rng.choice(n_all, size=size, replace=False)
            quad.append(kendall_tau_b(data.bt_scores(prompts), gold))
            taus = np.array([kendall_tau_b(data.bt_scores(prompts, [k]), gold) for k in range(n_models)])
            anchor_mean.append(taus.mean())
            per_anchor += taus / repeats
        rows.append({"n_prompts": size, "quadratic_tau": float(np.mean(quad)), "quadratic_sd": float(np.std(quad)),
                     "anchor_mean_tau": float(np.mean(anchor_mean)), "best_anchor_tau": float(per_anchor.max()),
                     "worst_anchor_tau": float(per_anchor.min())})
    return pd.DataFrame(rows)


def number_of_anchors_experiment(data: QuadraticData, permutations: int = 40, gold: np.ndarray | None = None,
                                 rng: np.random.Generator | None = None) -> pd.DataFrame:
    """Anchor App. E: add random anchors one at a time (BT on every comparison touching an anchor) and
    average Kendall τ with the gold over ``permutations`` random orders; k = n is the quadratic design."""
    rng = rng if rng is not None else np.random.default_rng(0)
    gold = data.bt_scores() if gold is None else np.asarray(gold, float)
    n = len(data.models)
    taus = np.zeros((permutations, n))
    for r in range(permutations):
        order = rng.permutation(n)
        for k in range(1, n + 1):
            taus[r, k - 1] = kendall_tau_b(data.bt_scores(anchors=list(order[:k])), gold)
    return pd.DataFrame({"n_anchors": np.arange(1, n + 1), "mean_tau": taus.mean(axis=0), "sd_tau": taus.std(axis=0)})


def multi_anchor_scores(data: QuadraticData, anchors: list[str], prompts=None) -> pd.Series:
    """Anchor App. E aggregation: one BT fit over every comparison that involves any of ``anchors``."""
    missing = [a for a in anchors if a not in data.models]
    if missing:
        raise ConfigError(f"anchors {missing} are not among the models {data.models[:20]}")
    ids = [data.models.index(a) for a in anchors]
    return pd.Series(data.bt_scores(prompts, anchors=ids), index=data.models, name="bt")

"""Anchor experiments on quadratic judgments: pilot (§5.3), anchor quality and its inverted U (§2 Eq. 1, §4.1),
sample size (§5.1) and number of anchors (App. E) — each a function returning a table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgewise.analysis.anchor_selection import QuadraticData, informativeness, verdict_matrix
from judgewise.analysis.planning import PILOT_PROMPTS
from judgewise.errors import ConfigError
from judgewise.ratings.agreement import kendall_tau_b
from judgewise.ratings.encode import encode
from judgewise.ratings.result import competition_rank
from judgewise.ratings.winrate import anchor_win_rates

EDGE = 3  # the strongest / weakest few models of a pool are "extreme" (§5.3 bottom-three finding)


@dataclass
class PilotResult:
    """Every candidate anchor's informativeness on a few prompts, and the recommendation with its reason."""

    table: pd.DataFrame  # anchor, informativeness (collapsed), informativeness_5way, pilot_rank, position
    recommended: str
    reason: str
    n_prompts: int
    scale: str = "collapsed verdicts"  # the scale the choice was made on
    tied: list[str] | None = None  # candidates tied with the recommended one on informativeness


def _position(rank: int, n: int) -> str:
    if rank <= min(EDGE, n // 3):
        return "strong"
    if rank > n - min(EDGE, n // 3):
        return "weak"
    return "mediocre"


def pilot_ranks(scores: np.ndarray) -> np.ndarray:
    """Rank (1 = best) of each model in the pilot's BT ranking; models with equal scores (to 1e-9, fit noise)
    share the better rank, so the ranks do not depend on the order the models were first seen in."""
    return competition_rank(scores)


def pick_anchor(candidates: list[dict], key: str) -> tuple[dict, list[str]]:
    """The Anchor §5.3 pilot's choice, the one rule for ``anchors`` and ``evaluate``: the highest informativeness
    ``candidates[i][key]`` (§4.3); ties (equal to 1e-12) broken towards the middle of the pilot's BT ranking
    (``pilot_rank``; §4.3 expects a mediocre anchor to be the most informative), then by name — nothing depends on
    which side of a judgment a model was shown or on row order. Returns (chosen, names of all tied candidates,
    chosen first; one name when there is no tie)."""
    n = len(candidates)
    middle = (n + 1) / 2
    top = max(round(c[key], 12) for c in candidates)
    tied = sorted((c for c in candidates if round(c[key], 12) == top),
                  key=lambda c: (abs(c["pilot_rank"] - middle), str(c["anchor"])))
    return tied[0], [str(c["anchor"]) for c in tied]


def tie_text(tied: list[str], value: float) -> str:
    """How a pilot tie was broken, for the reason line ("" without a tie)."""
    if len(tied) < 2:
        return ""
    return (f"; tied at {value:.3f} with {', '.join(tied[1:])}: broken towards the middle of the pilot's BT "
            "ranking, then by name")


def _pilot_verdicts5(judgments: pd.DataFrame | None, prompt_ids: list) -> pd.DataFrame | None:
    """The pilot prompts' rows when every one carries a 5-way verdict (margins kept, Anchor §2), else None."""
    if judgments is None or "verdict" not in judgments.columns:
        return None
    rows = judgments[judgments["prompt_id"].astype(str).isin({str(p) for p in prompt_ids})]
    verdict = pd.to_numeric(rows["verdict"], errors="coerce")
    return rows if len(rows) and verdict.notna().all() else None


def pilot(data: QuadraticData, n_prompts: int = PILOT_PROMPTS, rng: np.random.Generator | None = None,
          judgments: pd.DataFrame | None = None) -> PilotResult:
    """Anchor §5.3: estimate every candidate's informativeness from ``n_prompts`` random prompts of all-pairs
    judgments and recommend the most informative one (:func:`pick_anchor`); its rank in the pool says why
    ("mediocre"). With ``judgments`` whose pilot rows all carry 5-way verdicts, informativeness is computed on
    them (margins kept, as the paper's pilot), else on the collapsed verdicts."""
    rng = rng if rng is not None else np.random.default_rng(0)
    n_all = len(data.prompts)
    if n_all < 1 or len(data.models) < 3:
        raise ConfigError("a pilot needs all-pairs judgments of at least 3 models on at least 1 prompt")
    prompts = np.sort(rng.choice(n_all, size=min(n_prompts, n_all), replace=False))
    rank = pilot_ranks(data.bt_scores(prompts))
    five = _pilot_verdicts5(judgments, [data.prompts[p] for p in prompts])
    n = len(data.models)
    table = pd.DataFrame({"anchor": data.models,
                          "informativeness": [informativeness(np.sign(data.anchor_verdicts(k, prompts)))
                                              for k in range(n)],
                          "informativeness_5way": [None if five is None else
                                                   informativeness(verdict_matrix(five, m, "verdict")[0])
                                                   for m in data.models],
                          "pilot_rank": rank, "position": [_position(r, n) for r in rank]})
    key = "informativeness" if five is None else "informativeness_5way"
    best, tied = pick_anchor(table.to_dict(orient="records"), key)
    table = table.sort_values([key, "anchor"], ascending=[False, True], kind="stable").reset_index(drop=True)
    scale = "collapsed verdicts" if five is None else "5-way verdicts"
    low = table.iloc[-1]
    reason = (f"{best['anchor']} has the highest pilot informativeness on {scale} ({best[key]:.2f}; lowest: "
              f"{low.anchor} {low[key]:.2f}){tie_text(tied, best[key])} and ranks {best['pilot_rank']}/{n} in the "
              f"pool — {best['position']} relative to the pool"
              + (", as Anchor §4.3 predicts: an anchor near the middle splits the models most often"
                 if best["position"] == "mediocre" else "; check it is not an outlier with more pilot prompts"))
    return PilotResult(table, str(best["anchor"]), reason, len(prompts), scale, tied)


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


def several_anchor_estimates(judgments: pd.DataFrame, anchors: list[str]) -> dict:
    """Anchor §5 / App. E with several anchors: each model's win rate (%) against each anchor — that anchor's own
    ranking (:func:`judgewise.ratings.winrate.anchor_win_rates`) — and the pooled BT θ over every comparison
    involving any anchor (:func:`multi_anchor_scores`), with Kendall τ-b between each anchor's ranking and the
    pooled one over the models that anchor met (the anchor itself left out).

    Returns a dict: ``anchors``, ``models``, ``win_rates`` (anchor → list per model, None where not compared),
    ``pooled_bt`` (list per model), ``tau_vs_pooled`` (anchor → τ-b)."""
    data = QuadraticData(judgments)
    pooled = multi_anchor_scores(data, anchors)
    enc = encode(judgments)
    order = [enc.models.index(m) for m in data.models]
    win_rates, taus = {}, {}
    for anchor in anchors:
        rates = anchor_win_rates(enc.a, enc.b, enc.outcome, enc.n_models, enc.models.index(anchor))[order]
        met = np.isfinite(rates) & (np.array(data.models) != anchor)
        win_rates[anchor] = [float(r) if np.isfinite(r) else None for r in rates]
        taus[anchor] = kendall_tau_b(rates[met], pooled.to_numpy()[met]) if met.sum() >= 2 else None
    return {"anchors": list(anchors), "models": list(data.models), "win_rates": win_rates,
            "pooled_bt": [float(v) for v in pooled], "tau_vs_pooled": taus}

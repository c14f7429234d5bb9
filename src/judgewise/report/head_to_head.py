"""What the report and explorer display: the head-to-head matrix (``ratings.winrate.pairwise_win_rates``) and
tournament bracket rounds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgewise.io.schema import name_ordered, usable_mask
from judgewise.ratings.winrate import pairwise_win_rates


def win_matrix(judgments: pd.DataFrame, models: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Mean outcome of row model against column model (ties 0.5, soft outcomes as given) and match counts.

    Each judgment counts for (a, b) with ``outcome`` and for (b, a) with ``1 - outcome``; cells of pairs
    that never met are NaN. Rows whose models are not in ``models`` are ignored (callers pass all models).
    """
    index = {m: i for i, m in enumerate(models)}
    a = judgments["model_a"].astype(str).map(index)
    b = judgments["model_b"].astype(str).map(index)
    keep = a.notna() & b.notna() & usable_mask(judgments)  # io.schema's one rule
    y = judgments.loc[keep, "outcome"].to_numpy(float)
    return pairwise_win_rates(a[keep].to_numpy(int), b[keep].to_numpy(int), y, len(models))


def tournament_rounds(judgments: pd.DataFrame, by_prompt: dict | None = None) -> np.ndarray | None:
    """Bracket round of every game: the ``round`` column, else inferred when every prompt with three or more
    models is a single-elimination bracket (a tournament run, rows in play order); None otherwise."""
    df = judgments
    if "round" in df.columns:
        return pd.to_numeric(df["round"], errors="coerce").to_numpy(float)
    if by_prompt is None:
        by_prompt = df.groupby(df["prompt_id"].astype(str), sort=False).indices
    lo, hi, lo_outcome = name_ordered(df)
    rounds = np.full(len(df), np.nan)
    for idx in by_prompt.values():
        if len({*lo[idx], *hi[idx]}) < 3:
            return None
        r = infer_rounds(lo[idx], hi[idx], lo_outcome[idx])
        if r is None:
            return None
        rounds[idx] = r
    return rounds if len(df) else None


def infer_rounds(lo: np.ndarray, hi: np.ndarray, lo_outcome: np.ndarray) -> np.ndarray | None:
    """Rounds of a single-elimination bracket on one prompt (Arena-lite Alg. 1), from its games in play order.

    A match's round is 1 + the later of its two entrants' previous rounds (a bye skips rounds). Returns one
    round per game (both answer orders of a match share it), or None when the games are not a bracket: not
    n − 1 matches for n models, or a model that lost a match plays again. A tied match eliminates whichever
    of the two does not play again (the tie-break is not recorded).
    """
    keys = list(dict.fromkeys(zip(lo, hi)))
    if len(keys) != len({*lo, *hi}) - 1:
        return None
    mean = {k: [] for k in keys}
    for k, o in zip(zip(lo, hi), lo_outcome):
        mean[k].append(o)
    last, round_of, out, tied = {}, {}, set(), {}
    for a, b in keys:
        if a in out or b in out:
            return None
        for m in (a, b):  # a model that plays on after a tie won it: its partner is out
            if m in tied:
                partner = tied.pop(m)
                tied.pop(partner, None)
                out.add(partner)
        r = 1 + max(last.get(a, 0), last.get(b, 0))
        round_of[(a, b)] = last[a] = last[b] = r
        o = float(np.nanmean(mean[(a, b)])) if np.isfinite(mean[(a, b)]).any() else 0.5
        if o != 0.5:
            out.add(b if o > 0.5 else a)
        else:
            tied[a], tied[b] = b, a
    return np.array([round_of[k] for k in zip(lo, hi)])

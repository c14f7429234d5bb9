"""Win rate against an anchor, exactly as AlpacaEval computes it (Anchor §2 "Win-Rate" aggregation).

For each model, take its judgments against the anchor, oriented so the outcome is the model's (o ∈ [0, 1]; for
AlpacaEval o = preference − 1). Then, with frequency weights w (all 1 unless a weighting is chosen):

* ``win_rate`` = 100 · Σw·o / Σw                        (AlpacaEval ``win_rate``)
* ``se``       = 100 · sd(o, ddof=1) / √n               (AlpacaEval ``standard_error``; n = Σw)
* ``n_wins`` = Σw·[o > ½], ``n_draws`` = Σw·[o = ½], ``n_losses`` = Σw·[o < ½]
* ``discrete_win_rate`` = 100 · (n_wins + n_draws / 2) / n

With ``weighting="arena_hard"`` (see ``encode``) a strong verdict counts as 3 games, as in Arena-Hard-Auto.

The anchor's own position (Anchor §2). Two conventions exist and both are offered by ``anchor_score``:

* ``"self"`` (default): the anchor compared with itself ties every time, so it scores exactly 50 with se 0 —
  what AlpacaEval publishes for its anchor (``gpt4_1106_preview``: 50.0, 0.0 in leaderboard.csv).
* ``"complement"``: Anchor §2's formula s_A = 1 − Σ_{j≠A} s_j / (M − 1), i.e. 100 − the mean win rate of the
  other models (its se is NaN; the bootstrap gives its interval).
"""

from __future__ import annotations

import logging

import numpy as np

from judgewise.errors import ConfigError, RatingError
from judgewise.io import schema
from judgewise.ratings.encode import EncodedJudgments
from judgewise.ratings.method import MethodResult, RatingData, StatsForm
from judgewise.ratings.record_interval import record_rate_bounds

log = logging.getLogger(__name__)

ANCHOR_SCORES = ("self", "complement")


def require_anchor(enc: EncodedJudgments) -> int:
    """Id of the one model that takes part in every row, as :func:`judgewise.io.schema.detect_anchor` (the one
    definition, on columns, ``None`` when there is none) finds it; ConfigError asking for ``anchor`` otherwise."""
    anchor = schema.detect_anchor(enc.a, enc.b)
    if anchor is not None:
        return int(anchor)
    candidates = schema.anchor_candidates(enc.a, enc.b)
    found = "no model is" if len(candidates) == 0 else f"{len(candidates)} models are"
    raise ConfigError(f"cannot detect the anchor: {found} in every judgment; pass anchor=<model> (CLI: --anchor), "
                      f"or use method winshare (the share of all games won, any design)")


def oriented_arrays(a: np.ndarray, b: np.ndarray, outcome: np.ndarray,
                    anchor: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row index, model, outcome from that model's side) for each row between a non-anchor model and the anchor
    (``outcome`` is model ``a``'s)."""
    vs_b = (b == anchor) & (a != anchor)
    vs_a = (a == anchor) & (b != anchor)
    rows = np.concatenate([np.flatnonzero(vs_b), np.flatnonzero(vs_a)])
    model = np.concatenate([a[vs_b], b[vs_a]])
    oriented = np.concatenate([outcome[vs_b], 1.0 - outcome[vs_a]])
    return rows, model, oriented


def oriented_rows(enc: EncodedJudgments, anchor: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`oriented_arrays` of encoded judgments."""
    return oriented_arrays(enc.a, enc.b, enc.outcome, anchor)


def anchor_win_rates(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, n_models: int, anchor: int,
                     anchor_score: str = "self", weight: np.ndarray | None = None) -> np.ndarray:
    """Win rate (percent) of every model id against ``anchor`` from plain arrays, the anchor placed by
    :func:`anchor_position`; NaN for a model never compared with the anchor. :func:`winrate` computes the same."""
    rows, model, oriented = oriented_arrays(np.asarray(a), np.asarray(b), np.asarray(outcome, dtype=float), anchor)
    w = np.ones(len(rows)) if weight is None else np.asarray(weight, dtype=float)[rows]
    rates = win_rate_table(model, oriented, w, n_models)["win_rate"]
    rates[anchor] = anchor_position(rates, anchor, anchor_score)
    return rates


def share_won(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, n_models: int,
              weight: np.ndarray | None = None) -> np.ndarray:
    """Share (0–1) of its judgments each model id won, ties as half, over both sides of every judgment (NaN for a
    model in none): the win rate of each model against all opponents pooled (CLB App. C "WinRate")."""
    a, b, outcome = np.asarray(a), np.asarray(b), np.asarray(outcome, dtype=float)
    model = np.concatenate([a, b])
    oriented = np.concatenate([outcome, 1.0 - outcome])
    w = np.ones(len(a)) if weight is None else np.asarray(weight, dtype=float)
    return win_rate_table(model, oriented, np.concatenate([w, w]), n_models)["win_rate"] / 100.0


def pairwise_win_rates(a: np.ndarray, b: np.ndarray, outcome: np.ndarray,
                       n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """(rates, counts): mean outcome of row model against column model (ties 0.5) and games per pair; each
    judgment counts for (a, b) with ``outcome`` and for (b, a) with ``1 - outcome``; NaN where a pair never met."""
    a, b, y = np.asarray(a, dtype=int), np.asarray(b, dtype=int), np.asarray(outcome, dtype=float)
    wins, counts = np.zeros((n_models, n_models)), np.zeros((n_models, n_models))
    np.add.at(wins, (a, b), y)
    np.add.at(wins, (b, a), 1.0 - y)
    np.add.at(counts, (a, b), 1.0)
    np.add.at(counts, (b, a), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(counts > 0, wins / counts, np.nan)
    return rates, counts


def win_rate_table(model: np.ndarray, outcome: np.ndarray, weight: np.ndarray, n_models: int) -> dict:
    """AlpacaEval's win-rate figures per model id from oriented rows (formulas in the module docstring)."""
    def total(values):
        return np.bincount(model, weights=weight * values, minlength=n_models)

    n = total(np.ones_like(outcome))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total(outcome) / n
        var = total((outcome - mean[model]) ** 2) / (n - 1)
        n_wins, n_draws = total(outcome > 0.5), total(outcome == 0.5)
        return {"win_rate": 100.0 * mean, "se": 100.0 * np.sqrt(var) / np.sqrt(n), "n_wins": n_wins,
                "n_draws": n_draws, "n_losses": total(outcome < 0.5),
                "discrete_win_rate": 100.0 * (n_wins + n_draws / 2.0) / n, "n_games": n}


def anchor_position(win_rates: np.ndarray, anchor: int, anchor_score: str) -> float:
    """The anchor's own score (module docstring, Anchor §2); works along the last axis of a batch."""
    if anchor_score == "self":
        return 50.0
    others = np.delete(win_rates, anchor, axis=-1)
    return 100.0 - np.nanmean(others, axis=-1)


def _anchor_matrix(data: RatingData, anchor: int):
    """Sparse (categories × 2·models) map from one occurrence of a category to [Σw·o | Σw] of its model against
    the anchor."""
    from scipy import sparse  # on use (a bootstrap): its import is a fifth of a second of every command

    cats, m = data.cats, data.enc.n_models
    use_lo = (cats.hi == anchor) & (cats.lo != anchor)
    use_hi = (cats.lo == anchor) & (cats.hi != anchor)
    k = np.concatenate([np.flatnonzero(use_lo), np.flatnonzero(use_hi)])
    model = np.concatenate([cats.lo[use_lo], cats.hi[use_hi]])
    o = np.concatenate([cats.o_lo[use_lo], 1.0 - cats.o_lo[use_hi]])
    w = cats.weight[k]
    rows, cols = np.concatenate([k, k]), np.concatenate([model, m + model])
    return sparse.csr_matrix((np.concatenate([w * o, w]), (rows, cols)), shape=(cats.n_categories, 2 * m))


def _stats_form(data: RatingData, anchor: int, anchor_score: str) -> StatsForm:
    """Category → [Σw·o | Σw] per model (:func:`_anchor_matrix`, built if a bootstrap runs), so bootstrap
    replicates are one sparse product."""
    m = data.enc.n_models

    def from_stats(stats: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = 100.0 * stats[:, :m] / stats[:, m:]
        rates[:, anchor] = anchor_position(rates, anchor, anchor_score)
        return rates

    return StatsForm(lambda: _anchor_matrix(data, anchor), from_stats)


def winrate(data: RatingData, *, anchor_score: str = "self") -> MethodResult:
    """Win rate of every model against the anchor (auto-detected when one model is in every row)."""
    if anchor_score not in ANCHOR_SCORES:
        raise ConfigError(f'anchor_score must be one of {ANCHOR_SCORES}, got "{anchor_score}"')
    enc = data.enc
    anchor = enc.model_id(data.anchor) if data.anchor is not None else require_anchor(enc)
    rows, model, outcome = oriented_rows(enc, anchor)
    table = win_rate_table(model, outcome, enc.weight[rows], enc.n_models)
    missing = [enc.models[i] for i in range(enc.n_models) if i != anchor and table["n_games"][i] == 0]
    if missing:
        raise RatingError(f'models never compared with the anchor "{enc.models[anchor]}": {missing[:10]}')
    table["win_rate"][anchor] = anchor_position(table["win_rate"], anchor, anchor_score)
    table["se"][anchor] = 0.0 if anchor_score == "self" else np.nan
    for key in ("n_wins", "n_draws", "n_losses", "discrete_win_rate", "n_games"):
        table[key][anchor] = np.nan
    unused = int(enc.n_rows - len(model))
    if unused:
        log.warning("winrate: %d of %d rows do not compare a model with the anchor %s and were not used",
                    unused, enc.n_rows, enc.models[anchor])
    n = np.bincount(model, minlength=enc.n_models)
    n[anchor] = len(model)
    scores = table.pop("win_rate")
    info = {"anchor": enc.models[anchor], "anchor_score": anchor_score, "rows_used": int(len(model)),
            "rows_not_used": unused, "scale": "percent"}
    return MethodResult(scores, table, info, n=n, stats=_stats_form(data, anchor, anchor_score),
                        record_bounds=_record_bounds(enc, rows, model, outcome, anchor))


def _record_bounds(enc: EncodedJudgments, rows: np.ndarray, model: np.ndarray, outcome: np.ndarray, anchor: int):
    """(level, unit) → each model's win-rate bounds (percent) from its record against the anchor, games
    clustered by prompt or each its own (``unit`` "battle") (:func:`judgewise.ratings.record_interval.
    record_rate_bounds`); the anchor's own score has none."""
    def bounds(level: float, unit: str = "prompt") -> tuple[np.ndarray, np.ndarray, None]:
        cluster = enc.prompt[rows] if unit == "prompt" else rows
        low, high = record_rate_bounds(model, cluster, outcome, enc.weight[rows], enc.n_models, level)
        low[anchor] = high[anchor] = np.nan
        return 100.0 * low, 100.0 * high, None  # each model's rate is its own: no coupling

    return bounds


def _share_matrix(data: RatingData):
    """Sparse (categories × 2·models) map from one occurrence of a category to [Σw·o | Σw] of both its models."""
    from scipy import sparse  # on use (a bootstrap): its import is a fifth of a second of every command

    cats, m = data.cats, data.enc.n_models
    k = np.arange(cats.n_categories)
    ok = cats.lo != cats.hi
    k = k[ok]
    w, o = cats.weight[k], cats.o_lo[k]
    rows = np.concatenate([k, k, k, k])
    cols = np.concatenate([cats.lo[k], cats.hi[k], m + cats.lo[k], m + cats.hi[k]])
    vals = np.concatenate([w * o, w * (1.0 - o), w, w])
    return sparse.csr_matrix((vals, (rows, cols)), shape=(cats.n_categories, 2 * m))


def _share_stats_form(data: RatingData) -> StatsForm:
    """Category → [Σw·o | Σw] per model over both sides of every game (bootstrap of :func:`winshare`;
    :func:`_share_matrix`, built if a bootstrap runs)."""
    m = data.enc.n_models

    def from_stats(stats: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return 100.0 * stats[:, :m] / stats[:, m:]

    return StatsForm(lambda: _share_matrix(data), from_stats)


def winshare(data: RatingData) -> MethodResult:
    """Share (percent) of all its games each model won, ties half, against whoever it met — no anchor, any design
    (CLB App. C "WinRate"; :func:`share_won`). Unlike :func:`winrate` it does not correct for who a model met:
    on a design where models meet different opponents, prefer BT."""
    enc = data.enc
    own = enc.a != enc.b
    scores = 100.0 * share_won(enc.a[own], enc.b[own], enc.outcome[own], enc.n_models, enc.weight[own])
    n = np.bincount(np.concatenate([enc.a[own], enc.b[own]]), minlength=enc.n_models)
    info = {"rows_used": int(own.sum()), "rows_not_used": int((~own).sum()), "scale": "percent"}
    return MethodResult(scores, {}, info, n=n, stats=_share_stats_form(data))

"""Prediction-powered rank-sets: a few human pairwise labels correct many judge verdicts (Chatzi et al., NeurIPS 2024).

*Prediction-Powered Ranking of Large Language Models* (Chatzi, Straitouri, Thejaswi, Gomez-Rodriguez) ranks models
by θ_m, the probability that model m is preferred in a pairwise comparison it takes part in (here a tie counts ½ to
each side; the paper's code counts a tie as a loss for both — a different estimand, the same method). From n
comparisons with a human verdict w and a judge verdict ŵ, and N more with the judge's verdict only, it forms the
prediction-powered estimate θ̂ and its covariance Σ̂ (§3, after PPI / PPI++), the confidence ellipsoid
{θ : (θ − θ̂)ᵀ Σ̂⁻¹ (θ − θ̂) ≤ χ²_{k,1−α}}, and from it each model's *rank-set* [lo, hi] (§3, Alg. 1): the ranks
the model can hold for some θ in the region. The rank-sets of all models hold the human ranking together with
probability ≥ 1 − α (asymptotically).

Everything here is arrays in, arrays or a result out: comparisons are integer model codes ``a``, ``b`` and
``y`` = model a's result (1 win, ½ tie, 0 loss), the form :func:`judgewise.ratings.winrate.share_won` takes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from judgewise.analysis.human_pairs import match_labels
from judgewise.errors import ConfigError
from judgewise.ratings.winrate import share_won


def win_share_influence(a: np.ndarray, b: np.ndarray, y: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """θ̂ (each model's share won, ties ½: :func:`share_won`) and its influence rows R (n × k), Σ̂ = RᵀR.

    The paper's sample average (§3, "θ̂ = (1/n) Σ w_i") normalised per model: θ̂_m = Σ_{i∋m} w_{i,m} / n_m over the
    n_m comparisons that involve m, so that a design that does not sample every pair equally still estimates the
    win probability of each model. Its covariance is the delta method (sandwich) for these ratios:
    R[i, m] = (w_{i,m} − θ̂_m)·1[m ∈ i] / n_m, Σ̂ = Σ_i R[i]ᵀR[i]. (With equal pair counts the authors' code uses
    the same residuals but divides by n² instead of n_m n_m'.) A model in no comparison has θ̂ NaN and a NaN
    row/column in Σ̂.
    """
    a, b, y = np.asarray(a, int), np.asarray(b, int), np.asarray(y, float)
    theta = share_won(a, b, y, k)
    counts = np.bincount(a, minlength=k) + np.bincount(b, minlength=k)
    rows = np.arange(len(a))
    influence = np.zeros((len(a), k))
    with np.errstate(invalid="ignore", divide="ignore"):
        influence[rows, a] = (y - theta[a]) / counts[a]
        influence[rows, b] = ((1.0 - y) - theta[b]) / counts[b]
    influence[:, counts == 0] = np.nan
    return theta, influence


def win_share_estimate(a, b, y, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(θ̂, Σ̂) from one set of verdicts (:func:`win_share_influence`): the human-only and judge-only estimates."""
    theta, influence = win_share_influence(a, b, y, k)
    return theta, influence.T @ influence


def optimal_lambda(human_rows: np.ndarray, judge_rows: np.ndarray, unlabelled_rows: np.ndarray) -> float:
    """PPI++'s power-tuning weight of the judge, in [0, 1]: the λ minimising tr Var(θ̂_λ).

    Var(θ̂_λ) = λ²(Σ_N(ŵ) + Σ_n(ŵ)) − 2λ Cov_n(w, ŵ) + Σ_n(w), so λ* = tr Cov_n(w, ŵ) / tr(Σ_N(ŵ) + Σ_n(ŵ)),
    clipped to [0, 1]: the paper's choice (its code, ``lhat_opt``: tr cov_n / ((1 + n/N) tr cov_N), the same under
    equal pair counts). Arguments are influence rows (:func:`win_share_influence`) of the human and judge verdicts
    on the n labelled comparisons and of the judge on the N unlabelled ones. Models without labels are left out.
    """
    keep = ~(np.isnan(human_rows).any(axis=0) | np.isnan(unlabelled_rows).any(axis=0))
    h, j, u = human_rows[:, keep], judge_rows[:, keep], unlabelled_rows[:, keep]
    denominator = float((u * u).sum() + (j * j).sum())
    if denominator <= 0:
        return 0.0
    return float(np.clip((h * j).sum() / denominator, 0.0, 1.0))


def ppr_estimate(labelled: tuple, unlabelled: tuple, k: int, lam: float | None = None) -> tuple:
    """The prediction-powered estimate (§3, PPI++ form): θ̂ = λ·θ̂_N(ŵ) + θ̂_n(w) − λ·θ̂_n(ŵ), where θ̂_N is the
    judge's win shares on the N comparisons without a human label and the last two terms are the *rectifier*, the
    human-minus-judge correction measured on the n labelled ones; Σ̂ = λ²Σ̂_N(ŵ) + Σ̂_n(w − λŵ).

    ``labelled`` = (a, b, human y, judge y) on the same n comparisons; ``unlabelled`` = (a, b, judge y). ``lam``
    None = :func:`optimal_lambda`; 1 = plain PPI. Returns (θ̂, Σ̂, λ).
    """
    a, b, human, judge = labelled
    theta_n, rows_h = win_share_influence(a, b, human, k)
    theta_j, rows_j = win_share_influence(a, b, judge, k)
    theta_N, rows_N = win_share_influence(*unlabelled, k)
    if lam is None:
        lam = optimal_lambda(rows_h, rows_j, rows_N)
    rect = rows_h - lam * rows_j
    theta = lam * theta_N + theta_n - lam * theta_j
    cov = lam ** 2 * (rows_N.T @ rows_N) + rect.T @ rect
    return theta, cov, float(lam)


def rank_sets(theta: np.ndarray, cov: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Each model's rank-set [lo, hi] (1 = best) from the ellipsoid (θ − θ̂)ᵀΣ̂⁻¹(θ − θ̂) ≤ χ²_{k,1−α} (§3, Alg. 1).

    m is surely above m' when θ̂_m − θ̂_m' > sqrt(χ²_{k,1−α} · (e_m − e_m')ᵀΣ̂(e_m − e_m')) — the paper's test
    (its ``find_ranksets``: |Δ|/√2 > sqrt(Var Δ · χ²/2)); lo_m = 1 + #{surely above m}, hi_m = k − #{surely below m}.
    Works on the last two axes, so a stack of (θ̂, Σ̂) gives a stack of rank-sets. A NaN entry (a model without
    data) is surely above or below no one: its rank-set is [1, k] and it narrows no other.
    """
    from scipy import stats  # on use: a plain ``rank`` (which imports this module) loads no scipy

    theta, cov = np.asarray(theta, float), np.asarray(cov, float)
    k = theta.shape[-1]
    var = np.diagonal(cov, axis1=-2, axis2=-1)
    diff_var = var[..., :, None] + var[..., None, :] - 2.0 * cov
    radius = np.sqrt(stats.chi2.ppf(1.0 - alpha, k) * np.clip(diff_var, 0.0, None))
    with np.errstate(invalid="ignore"):
        above = (theta[..., :, None] - theta[..., None, :]) > radius  # above[m, m']: m surely above m'
    return 1 + above.sum(axis=-2), k - above.sum(axis=-1)


def rank_set_text(lo, hi) -> str:
    """A rank-set as a table shows it: ``[lo, hi]``, or the one rank when lo = hi."""
    return f"{int(lo)}" if lo == hi else f"[{int(lo)}, {int(hi)}]"


def true_ranks(theta: np.ndarray) -> np.ndarray:
    """The ranks (1 = best) of ``theta`` along its last axis, ties broken by position."""
    order = np.argsort(-np.asarray(theta, float), axis=-1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, order.shape[-1] + 1), axis=-1)
    return ranks


def covers(lo: np.ndarray, hi: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """True where every model's rank lies in its rank-set (the paper's coverage event), along the last axis."""
    return ((lo <= ranks) & (ranks <= hi)).all(axis=-1)


@dataclass
class HumanAnchored:
    """Prediction-powered rank-sets of one input and what made them (``rank --human``).

    Attributes
    ----------
    models : list of str
    theta, cov : ndarray
        θ̂ (human-anchored win probability, ties ½) and Σ̂.
    lo, hi : ndarray
        Rank-sets (1 = best) at level 1 − ``alpha``.
    human_only, judge_only : dict
        The same from the n human labels alone and from the judge's verdicts alone (all of its comparisons):
        ``theta``, ``lo``, ``hi``.
    n_human, n_judge : int
        Labelled comparisons used, and comparisons with only the judge's verdict.
    lam : float
        The judge's weight λ (PPI++; 1 = plain PPI, 0 = humans only).
    rectifier : ndarray
        Per model, θ̂_n(w) − θ̂_n(ŵ): how far the judge is from the humans on the labelled comparisons.
    disagreement : float
        Mean |w − ŵ| over the labelled comparisons (0: the judge said what the humans said).
    labels : dict
        ``given``, ``matched``, ``unmatched`` label rows (and ``unmatched_examples``).
    """

    models: list
    theta: np.ndarray
    cov: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    human_only: dict
    judge_only: dict
    n_human: int
    n_judge: int
    lam: float
    rectifier: np.ndarray
    disagreement: float
    alpha: float
    labels: dict = field(default_factory=dict)

    @property
    def rectifier_size(self) -> float:
        """max_m |rectifier_m|: the largest correction the human labels make to a model's win probability."""
        finite = self.rectifier[np.isfinite(self.rectifier)]
        return float(np.abs(finite).max()) if len(finite) else float("nan")

    def as_dict(self) -> dict:
        """Plain JSON-ready values (NaN as None)."""
        def num(x):
            return None if x is None or not np.isfinite(x) else float(x)

        per_model = []
        for i, m in enumerate(self.models):
            per_model.append({"model": m, "theta": num(self.theta[i]), "se": num(np.sqrt(self.cov[i, i])),
                              "rank_set": [int(self.lo[i]), int(self.hi[i])],
                              "human_only_rank_set": [int(self.human_only["lo"][i]), int(self.human_only["hi"][i])],
                              "judge_only_theta": num(self.judge_only["theta"][i]),
                              "judge_only_rank_set": [int(self.judge_only["lo"][i]), int(self.judge_only["hi"][i])],
                              "rectifier": num(self.rectifier[i])})
        return {"method": "prediction-powered ranking (Chatzi et al. 2024)", "alpha": self.alpha,
                "n_human": self.n_human, "n_judge": self.n_judge, "lambda": self.lam,
                "rectifier_size": num(self.rectifier_size), "disagreement": num(self.disagreement),
                "labels": self.labels, "models": per_model}


def check_alpha(alpha: float) -> None:
    """ConfigError unless ``alpha`` (``--alpha``) is in (0, 1)."""
    if not 0 < alpha < 1:
        raise ConfigError(f"--alpha must be in (0, 1) (the rank-sets miss the human ranking with probability at "
                          f"most alpha), got {alpha}")


def human_anchored(labelled: tuple, unlabelled: tuple, models: list, alpha: float = 0.05,
                   lam: float | None = None) -> HumanAnchored:
    """Rank-sets of ``models`` from n labelled comparisons ``(a, b, human y, judge y)`` and N judge-only ones
    ``(a, b, judge y)``: the prediction-powered ones (:func:`ppr_estimate`, :func:`rank_sets`) beside the
    human-only ones (the n labels alone) and the judge-only ones (all n + N judge verdicts)."""
    check_alpha(alpha)
    k = len(models)
    a, b, human, judge = (np.asarray(x) for x in labelled)
    theta, cov, lam = ppr_estimate((a, b, human, judge), unlabelled, k, lam)
    lo, hi = rank_sets(theta, cov, alpha)
    h_theta, h_cov = win_share_estimate(a, b, human, k)
    all_a, all_b = np.concatenate([a, unlabelled[0]]), np.concatenate([b, unlabelled[1]])
    j_theta, j_cov = win_share_estimate(all_a, all_b, np.concatenate([judge, unlabelled[2]]), k)
    h_lo, h_hi = rank_sets(h_theta, h_cov, alpha)
    j_lo, j_hi = rank_sets(j_theta, j_cov, alpha)
    rectifier = h_theta - share_won(a, b, judge, k)
    return HumanAnchored(list(models), theta, cov, lo, hi, {"theta": h_theta, "lo": h_lo, "hi": h_hi},
                         {"theta": j_theta, "lo": j_lo, "hi": j_hi}, int(len(a)), int(len(unlabelled[0])), lam,
                         rectifier, float(np.mean(np.abs(human - judge))) if len(a) else float("nan"), alpha)


def human_anchored_labels(judgments, human, alpha: float = 0.05, source: str = "labels") -> HumanAnchored:
    """:func:`human_anchored` of a judgments table and a table of human pairwise verdicts (both ``prompt_id,
    model_a, model_b, outcome``), each label matched to the judge's verdict on its comparison
    (:func:`judgewise.analysis.human_pairs.match_labels`, which names ``source`` when none matches); ``labels`` says
    how many were given, matched and unmatched."""
    matched = match_labels(judgments, human, source=source)
    result = human_anchored(matched.labelled, matched.unlabelled, matched.models, alpha)
    result.labels = matched.labels
    return result

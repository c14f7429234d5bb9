"""Bradley–Terry maximum likelihood on aggregated pair counts: one L-BFGS fit, or many fits at once by batched Newton.

Model (Anchor §2, Bradley & Terry 1952; Chatbot Arena / FastChat ``compute_bt``): P(i beats j) = σ(θ_i − θ_j).
A judgment with outcome o ∈ [0, 1] for i contributes o·log σ(θ_i − θ_j) + (1 − o)·log σ(θ_j − θ_i), so a tie counts
as half a win for each side (FastChat convention) and soft preferences are fractional wins. The log-likelihood
only depends on, per unordered pair, the weighted wins of one side and the total weight (:class:`PairCounts`).
An optional ridge penalty ½·l2·‖θ‖² is added. Without it θ is identified up to a constant; we report θ centred on
mean 0 (the natural scale) and the Elo scale 400·log10-odds + 1000 (:func:`elo_scale`).

Existence: without l2 the MLE is finite iff the comparison graph is connected and every model has both some
win-share and some loss-share against the rest in every cut (the directed "beat" graph is strongly connected,
Zermelo/Ford). We raise :class:`RatingError` naming the models when it is not (choice: a clear error rather than a
per-component fit; scores from separate components are not comparable). ``l2 > 0`` always has a finite optimum.

Separation (default ``l2=None``): when the graph is connected but the MLE does not exist (a model won, or lost, every
comparison across some cut — e.g. the top model won every game), :func:`bradley_terry` does not fail: it fits with
the weak ridge ``SEPARATION_L2`` = 0.01, i.e. a N(0, 10²) prior on each θ (prior sd 10 log-odds ≈ 1,737 Elo, the
same ridge as the array fit of ``evaluate``), the posterior mode. It reports that in ``info["separated"]`` (the
groups) and ``info["l2"]``. The ridge is applied *only* when the MLE does not exist, so every ranking whose MLE
exists is the exact, unpenalised MLE (AlpacaEval / Arena-Hard matches unchanged). Choice: a separated model's
strength is only bounded below by the data, so any finite score is the prior's; a prior this weak changes nothing
else and says so, rather than failing a leaderboard. ``l2=0`` refuses instead (RatingError); ``l2 > 0`` always
fits with that ridge.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from judgewise.errors import ConfigError, RatingError
from judgewise.ratings.aggregate import PairCounts, pair_counts, pair_stats_matrix
from judgewise.ratings.contextual_bt import contextual_features, contextual_result
from judgewise.ratings.features import has_style_metadata
from judgewise.ratings.features import style_definition as style_spec
from judgewise.ratings.graph import components, describe_components, is_connected, require_connected
from judgewise.ratings.logistic import expit
from judgewise.ratings.method import MethodResult, StatsForm
from judgewise.ratings.record_interval import bt_record_bounds

log = logging.getLogger(__name__)

ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per natural-log odds unit
ELO_CENTRE = 1000.0


def neg_log_likelihood(theta: np.ndarray, pc: PairCounts, l2: float = 0.0) -> tuple[float, np.ndarray]:
    """Negative log-likelihood of θ and its exact gradient, on pair counts (Anchor §2 BT likelihood)."""
    d = theta[pc.lo] - theta[pc.hi]
    loss = float(np.sum(pc.total * np.logaddexp(0.0, d) - pc.wins * d)) + 0.5 * l2 * float(theta @ theta)
    g_pair = pc.total * expit(d) - pc.wins
    grad = np.bincount(pc.lo, g_pair, pc.n_models) - np.bincount(pc.hi, g_pair, pc.n_models) + l2 * theta
    return loss, grad


def _beat_graph(pc: PairCounts) -> tuple[np.ndarray, np.ndarray]:
    """Edges (rows → cols) of the "beat" graph: i→j when i took some win-share from j."""
    lo_won, hi_won = pc.wins > 0, pc.total - pc.wins > 0
    return np.concatenate([pc.lo[lo_won], pc.hi[hi_won]]), np.concatenate([pc.hi[lo_won], pc.lo[hi_won]])


WEAK_PRIOR_L2 = 1e-2  # the one weak ridge: N(0, 10²) prior on each log-odds score (module docstring)
SEPARATION_L2 = WEAK_PRIOR_L2  # used by default only when the MLE does not exist


def separation(pc: PairCounts, models: list[str]) -> str | None:
    """None when the BT MLE exists on connected counts; else the groups that never lost/won across (described)."""
    rows, cols = _beat_graph(pc)
    if is_connected(rows, cols, pc.n_models, directed=True):
        return None
    n, groups = components(rows, cols, pc.n_models, directed=True)
    return describe_components(groups, n, models) if n > 1 else None


def check_identifiable(pc: PairCounts, models: list[str], l2: float = 0.0) -> None:
    """Raise RatingError when the comparison graph is disconnected (the one check of ``ratings.graph``), or
    (l2 = 0) when the MLE is infinite."""
    keep = pc.total > 0
    require_connected(pc.lo[keep], pc.hi[keep], models)
    if l2 > 0:
        return
    groups = separation(pc, models)
    if groups is not None:
        raise RatingError(f"the Bradley–Terry MLE is infinite: some models won (or lost) every comparison "
                          f"against the rest (groups that never lost/won across: {groups}). Pass l2 > 0 "
                          f"(e.g. --l2 0.01 on rank/report, --bt-l2 0.01 on accuracy), or leave l2 unset for the default weak prior.")


def choose_l2(pc: PairCounts, models: list[str], l2: float | None) -> tuple[float, str | None]:
    """(ridge to fit with, separated groups or None): ``l2`` as given (checked), or by default (None) 0 where the
    MLE exists and :data:`SEPARATION_L2` where it does not (module docstring)."""
    if l2 is not None:
        check_identifiable(pc, models, l2)
        return l2, None
    check_identifiable(pc, models, 1.0)  # connectivity only
    groups = separation(pc, models)
    if groups is None:
        return 0.0, None
    log.debug("Bradley–Terry: data separated (%s); fitted with l2=%g (a weak prior)", groups, SEPARATION_L2)
    return SEPARATION_L2, groups


def fit_mle(pc: PairCounts, l2: float = 0.0) -> np.ndarray:
    """θ maximising the BT likelihood (− l2/2·|θ|²) on pair counts, centred on mean 0 when l2 = 0: Newton's method
    from θ = 0 (exact Hessian, steps capped at 3 log-odds units) to steps below 1e-12 — the objective is strictly
    concave on the gauge once separation is ruled out or l2 > 0 (:func:`choose_l2`), so it converges in a few
    steps; :func:`fit_lbfgs` should it not within 100. (Newton needs no scipy.optimize, whose import is a
    quarter of a second of every ``rank``.)"""
    theta, converged = newton_batch(pc, np.zeros((1, pc.n_models)), pc.wins[None, :], pc.total[None, :], l2,
                                    max_iter=100, chord_iter=0, tol=1e-12)
    if not converged[0]:
        return fit_lbfgs(pc, l2)
    theta = theta[0]
    return theta - theta.mean() if l2 == 0 else theta


def fit_lbfgs(pc: PairCounts, l2: float = 0.0, theta0: np.ndarray | None = None, tol: float = 1e-10) -> np.ndarray:
    """θ maximising the BT likelihood on pair counts by L-BFGS with the exact gradient, centred on mean 0."""
    from scipy import optimize

    x0 = np.zeros(pc.n_models) if theta0 is None else np.asarray(theta0, dtype=np.float64)
    scale = max(float(pc.total.sum()), 1.0)  # scale the objective so the gradient tolerance is relative

    def fun(theta):
        loss, grad = neg_log_likelihood(theta, pc, l2)
        return loss / scale, grad / scale

    res = optimize.minimize(fun, x0, jac=True, method="L-BFGS-B",
                            options={"maxiter": 10_000, "gtol": tol, "ftol": 1e-15})
    if not res.success and np.abs(res.jac).max() > 1e-7:  # ABNORMAL line searches at the optimum are harmless
        log.warning("Bradley–Terry L-BFGS stopped before convergence: %s", res.message)
    # Newton polish: L-BFGS stops at ~1e-5 Elo; a few Newton steps reach machine precision.
    theta, converged = newton_batch(pc, res.x[None, :], pc.wins[None, :], pc.total[None, :], l2,
                                    max_iter=5, chord_iter=0, tol=1e-12)
    theta = theta[0] if converged[0] else res.x
    return theta - theta.mean() if l2 == 0 else theta


class Incidence:
    """The (models × pairs) matrix with +1 at each pair's lo and ``sign`` at its hi, applied to a batch of per-pair
    values: ``incidence(x)`` = (matrix @ xᵀ)ᵀ for x (B × pairs), per model the sum over its pairs.

    One row (the point fit of every ``rank``) is summed by ``np.bincount`` over the entries in pair order — the
    additions of scipy's sparse product in its order, so the same numbers without importing scipy.sparse (a fifth
    of a second); a batch (the bootstrap's replicates) by that sparse product, the matrix built on first use.
    """

    def __init__(self, pc: PairCounts, sign: float):
        self.pc, self.sign = pc, sign
        self.ends = np.column_stack([pc.lo, pc.hi]).ravel()  # pair 0's lo, its hi, pair 1's lo, ...
        self.signs = np.tile([1.0, sign], pc.n_pairs)
        self.matrix = None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if x.shape[0] == 1:
            return np.bincount(self.ends, self.signs * np.repeat(x[0], 2), self.pc.n_models)[None, :]
        if self.matrix is None:
            from scipy import sparse

            p = self.pc.n_pairs
            self.matrix = sparse.csr_matrix((self.signs, (self.ends, np.repeat(np.arange(p), 2))),
                                            shape=(self.pc.n_models, p))
        return (self.matrix @ x.T).T


def _hessians(h: np.ndarray, pc: PairCounts, l2: float, ends: Incidence) -> np.ndarray:
    """Batch of BT Hessians (weighted graph Laplacians, + l2·I) from per-pair curvatures ``h`` (B × pairs)."""
    m = pc.n_models
    hess = np.zeros((h.shape[0], m * m))
    hess[:, pc.lo * m + pc.hi] = -h
    hess[:, pc.hi * m + pc.lo] = -h
    diag = ends(h)
    hess = hess.reshape(-1, m, m)
    idx = np.arange(m)
    # + a tiny ridge: keeps separated replicates (p(1 − p) underflowing to 0) solvable; a fixed point is unchanged
    hess[:, idx, idx] = diag + l2 + 1e-9 * (diag.mean(axis=1, keepdims=True) + 1.0)
    if l2 == 0:  # gauge fix: + c·11ᵀ makes the Laplacian definite and keeps steps orthogonal to 1
        hess += (diag.mean(axis=1) / m)[:, None, None] + 1e-12
    return hess


def _gradients(theta, wins, total, pc: PairCounts, l2: float, signed: Incidence) -> tuple[np.ndarray, np.ndarray]:
    """Batch gradients of the negative log-likelihood (B × models) and win probabilities (B × pairs)."""
    p = expit(theta[:, pc.lo] - theta[:, pc.hi])
    return signed(total * p - wins) + l2 * theta, p


def _capped(step: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Steps scaled down to at most 3 log-odds units per model; also returns each step's size."""
    big = np.abs(step).max(axis=1)
    return step * np.minimum(1.0, 3.0 / np.maximum(big, 1e-300))[:, None], big


def chord_inverse(pc: PairCounts, theta: np.ndarray, l2: float = 0.0) -> np.ndarray:
    """Inverse of the (gauge-fixed) BT Hessian of the counts ``pc`` at ``theta``."""
    p = expit(theta[pc.lo] - theta[pc.hi])
    return np.linalg.inv(_hessians((pc.total * p * (1 - p))[None, :], pc, l2, Incidence(pc, 1.0))[0])


def newton_batch(pc: PairCounts, theta0: np.ndarray, wins: np.ndarray, total: np.ndarray, l2: float = 0.0,
                 max_iter: int = 50, tol: float = 1e-10, chord_iter: int | None = None,
                 inverse: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Fit B BT models at once, warm-started at ``theta0`` (1 × models or B × models).

    ``wins``/``total`` are B × pairs statistics on the pairs of ``pc``. First chord iterations: Newton steps with
    the one Hessian of ``pc`` at ``theta0`` (inverted once), which converge linearly and fast for bootstrap
    replicates close to the original data, at the cost of one gradient per step; replicates not converged after
    ``chord_iter`` steps continue with full Newton (a Hessian solve each). ``inverse``: that Hessian's inverse
    (:func:`chord_inverse`); chord steps are used by default (40) only when it is given — a cold start
    (e.g. from zeros) is better served by plain Newton. Steps are capped at 3 log-odds units,
    which keeps fits on (near-)separated replicates finite. Returns (θ: B × models, converged: B).
    """
    theta = np.array(np.broadcast_to(theta0, (wins.shape[0], pc.n_models)), dtype=np.float64)
    signed, ends = Incidence(pc, -1.0), Incidence(pc, 1.0)
    active = np.ones(len(theta), dtype=bool)
    if chord_iter is None:
        chord_iter = 40 if inverse is not None else 0
    if inverse is None and chord_iter > 0:
        inverse = chord_inverse(pc, theta[0], l2)
    for it in range(chord_iter + max_iter):
        idx = np.flatnonzero(active)
        if len(idx) == 0:
            break
        if len(idx) == len(theta):
            idx = slice(None)
        grad, p = _gradients(theta[idx], wins[idx], total[idx], pc, l2, signed)
        if it < chord_iter:
            step = -grad @ inverse
        else:
            step = np.linalg.solve(_hessians(total[idx] * p * (1 - p), pc, l2, ends), -grad[..., None])[..., 0]
        step, size = _capped(step)
        theta[idx] += step
        active[idx] = size > tol
    return theta, ~active


ARRAY_FIT_L2 = WEAK_PRIOR_L2  # default ridge of the array fit: finite on sparse or separated data


def pair_counts_from_arrays(a, b, outcome, n_models: int) -> PairCounts:
    """BT sufficient statistics over all C(n, 2) pairs (zeros where unobserved) from judgment arrays of model ids
    and model_a's outcomes; self-comparisons and missing outcomes (NaN: a failed game) are left out."""
    a, b, outcome = np.asarray(a, int), np.asarray(b, int), np.asarray(outcome, float)
    keep = (a != b) & np.isfinite(outcome)
    a, b, outcome = a[keep], b[keep], outcome[keep]
    lo_all, hi_all = np.triu_indices(n_models, k=1)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    code = lo * n_models + hi - (lo + 1) * (lo + 2) // 2  # index of (lo, hi) in triu order
    o_lo = np.where(a == lo, outcome, 1.0 - outcome)
    n_pairs = len(lo_all)
    return PairCounts(lo_all, hi_all, np.bincount(code, o_lo, n_pairs),
                      np.bincount(code, None, n_pairs).astype(float), n_models)


def bt_covariance(theta: np.ndarray, pc: PairCounts, l2: float = ARRAY_FIT_L2) -> np.ndarray:
    """Inverse Fisher information of the ridge BT fit at θ: the asymptotic covariance of θ (natural scale).
    Needs ``l2 > 0`` (without a ridge the information matrix is singular: θ is defined up to a constant)."""
    if not l2 > 0:
        raise ConfigError(f"the BT covariance needs a ridge l2 > 0, got {l2}")
    p = expit(theta[pc.lo] - theta[pc.hi])
    h = pc.total * p * (1 - p)
    m = pc.n_models
    hess = np.zeros((m, m))
    np.add.at(hess, (pc.lo, pc.hi), -h)
    np.add.at(hess, (pc.hi, pc.lo), -h)
    hess[np.arange(m), np.arange(m)] = -hess.sum(axis=1) + l2
    return np.linalg.inv(hess)


def fit_bt_arrays(a, b, outcome, n_models: int, l2: float = ARRAY_FIT_L2) -> tuple[np.ndarray, np.ndarray]:
    """BT scores θ (natural log-odds) and their covariance from judgment arrays (model ids ``a``, ``b`` and
    model_a's ``outcome`` in [0, 1]; NaN outcomes are left out), by Newton on the pair counts with ridge ``l2``
    (Anchor §2 BT likelihood). The plain-array fit used by the simulator, the anchor study and as the adaptive
    design's default ``fit``; :func:`bradley_terry` is the same likelihood on a judgments table."""
    pc = pair_counts_from_arrays(a, b, outcome, n_models)
    theta = newton_batch(pc, np.zeros((1, n_models)), pc.wins[None, :], pc.total[None, :], l2)[0][0]
    return theta, bt_covariance(theta, pc, l2)


def bt_cluster_covariance(theta: np.ndarray, cov: np.ndarray, a, b, outcome, cluster) -> np.ndarray:
    """Covariance of the ridge BT fit θ̂ that respects clustering (games sharing a prompt are not independent):
    the cluster-robust **sandwich** H⁻¹ B H⁻¹ (Liang & Zeger 1986; Cameron & Miller 2015, §II), with H = ``cov``⁻¹
    the penalised information and B = G/(G − 1) · Σ_c s_c s_cᵀ the outer products of each cluster's summed score
    s_c = Σ_games (y − σ(θ̂_a − θ̂_b))(e_a − e_b) over G clusters, **floored at the model-based** ``cov`` in every
    direction: with C = H^(−½) B H^(−½) = W diag(c) Wᵀ the result is H^(−½) W diag(max(c, 1)) Wᵀ H^(−½). The floor
    keeps a sandwich from few clusters (noisy, and biased low) from claiming more certainty than independent
    verdicts would; the sandwich takes over where verdicts on one prompt move together — both answer orders of one
    comparison, or "i vs j" and "i vs k" both riding on how good i's answer was. ``a``, ``b``, ``outcome`` and
    ``cluster`` are per game (NaN outcomes left out), ``theta`` and ``cov`` from :func:`fit_bt_arrays`."""
    a, b, outcome = np.asarray(a, int), np.asarray(b, int), np.asarray(outcome, float)
    ok = np.isfinite(outcome)
    a, b, outcome = a[ok], b[ok], outcome[ok]
    _, group = np.unique(np.asarray(cluster)[ok], return_inverse=True)
    n, g = len(theta), int(group.max()) + 1 if len(group) else 0
    if g < 2:
        return cov
    residual = outcome - expit(theta[a] - theta[b])
    score = np.zeros((g, n))
    np.add.at(score, (group, a), residual)
    np.add.at(score, (group, b), -residual)
    meat = score.T @ score * (g / (g - 1))
    w, v = np.linalg.eigh(np.linalg.inv(cov))
    root_inv = (v / np.sqrt(w)) @ v.T  # H^(−½)
    c, basis = np.linalg.eigh(root_inv @ meat @ root_inv)
    floored = (basis * np.maximum(c, 1.0)) @ basis.T
    out = root_inv @ floored @ root_inv
    return (out + out.T) / 2


def elo_scale(theta: np.ndarray, anchor: int | None = None, anchor_rating: float = ELO_CENTRE) -> np.ndarray:
    """Elo scale: 400·log10-odds, centred so ratings average 1000, or shifted so ``anchor`` sits at its rating.

    Works on one θ vector or a batch (B × models). Same scale as FastChat's ``compute_bt`` (base 10, scale 400).
    """
    elo = ELO_SCALE * (theta - theta.mean(axis=-1, keepdims=True)) + ELO_CENTRE
    if anchor is not None:
        elo = elo + (anchor_rating - elo[..., [anchor]])
    return elo


SCALES = ("elo", "natural")


def winrate_vs(theta: np.ndarray, anchor: int) -> np.ndarray:
    """Predicted win rate (%) of every model against ``anchor``: 100·σ(θ − θ_anchor) (BT, module docstring)."""
    return 100.0 * expit(theta - theta[..., [anchor]])


def style_info(spec, responses) -> dict:
    """What a style-controlled fit used: the definition, where the counts came from, the ridges."""
    counts = "answer metadata (token_len, markdown counts)" if spec.use_metadata and has_style_metadata(responses) \
        else "counted from the texts (length: n_tokens or words)"
    return {"definition": spec.name, "counts": counts, "l2_features": spec.l2_features}


def _bt_stats_form(data, pc: PairCounts, theta: np.ndarray, l2: float, to_scale) -> "StatsForm":
    """Bootstrap form: category counts → pair [wins | total] (the pairs of ``pc``) → batched Newton warm-started
    at the point θ."""
    p = pc.n_pairs
    inverse = []  # computed on first use, i.e. only when a bootstrap runs

    def from_stats(stats: np.ndarray) -> np.ndarray:
        if not inverse:
            inverse.append(chord_inverse(pc, theta, l2))
        fits, converged = newton_batch(pc, theta[None, :], stats[:, :p], stats[:, p:], l2, inverse=inverse[0])
        form.failures.append(int((~converged).sum()))  # e.g. a replicate where some model never lost
        return to_scale(fits)

    form = StatsForm(lambda: pair_stats_matrix(data.cats)[0], from_stats)
    return form


def bradley_terry(data, *, l2: float | None = None, scale: str = "elo", anchor_rating: float = ELO_CENTRE,
                  style_control: bool = False, self_preference: bool = False, families: dict | None = None,
                  feature_columns: tuple | list = (), style_definition: str = "judgewise"):
    """Bradley–Terry ratings (module docstring): scores on the Elo scale (default) or natural log-odds scale.

    With ``data.anchor`` set, the Elo scale is shifted so that model sits at ``anchor_rating``; otherwise the
    ratings average 1000. ``extra`` holds ``theta`` (natural, mean 0) and ``elo``. With ``style_control``,
    ``self_preference`` (judge families: ``families``) or ``feature_columns`` the contextual BT of
    ``ratings.contextual_bt`` is fitted instead and its coefficients are reported in ``info``; style features and
    the ridges follow ``style_definition`` (``ratings.features.STYLE_DEFINITIONS``: ``"arena-hard"`` reproduces
    Arena-Hard-Auto's / FastChat's fit, whose penalty on θ is used unless ``l2`` is given).
    With an anchor, ``extra["winrate_vs_anchor"]`` is each model's predicted win rate (%) against it,
    100 / (1 + 10^((Elo_anchor − Elo) / 400)), Arena-Hard-Auto's leaderboard score.
    ``l2``: None (default) = the MLE, or the weak prior ``SEPARATION_L2`` when the data are separated
    (``info["separated"]``); 0 = the MLE or a RatingError; > 0 = that ridge (module docstring).
    """
    if scale not in SCALES:
        raise ConfigError(f'scale must be one of {SCALES}, got "{scale}"')
    if l2 is not None and not (l2 >= 0 and math.isfinite(l2)):
        raise ConfigError(f"l2 (--l2, the BT ridge) must be a finite number >= 0, got {l2}")
    enc = data.enc
    pc = pair_counts(data.cats)
    spec = style_spec(style_definition) if style_control else None
    if spec is not None and l2 is None and spec.l2 is not None:
        l2 = spec.l2
    l2, separated = choose_l2(pc, enc.models, l2)
    anchor = enc.model_id(data.anchor) if data.anchor is not None else None

    def to_scale(t: np.ndarray) -> np.ndarray:
        return elo_scale(t, anchor, anchor_rating) if scale == "elo" else t - t.mean(axis=-1, keepdims=True)

    if style_control or self_preference or feature_columns:
        x, names = contextual_features(data.judgments, data.responses, style=style_control,
                                       self_pref=self_preference, families=families, columns=list(feature_columns),
                                       style_definition=style_definition, weight=enc.weight)
        result = contextual_result(data, x, names, l2, to_scale, spec.l2_features if spec else 0.0)
        if spec is not None:
            result.info["style"] = style_info(spec, data.responses)
    else:
        theta = fit_mle(pc, l2)
        result = MethodResult(to_scale(theta), {"theta": theta - theta.mean()},
                              stats=_bt_stats_form(data, pc, theta, l2, to_scale),
                              record_bounds=lambda level, unit="prompt": bt_record_bounds(
                                  enc.a, enc.b, enc.outcome, enc.prompt if unit == "prompt" else np.arange(enc.n_rows),
                                  enc.weight, theta, to_scale, level))
    result.extra["elo"] = elo_scale(result.extra["theta"], anchor, anchor_rating)
    if anchor is not None:
        result.extra["winrate_vs_anchor"] = winrate_vs(result.extra["theta"], anchor)
    self_rows = int(np.sum(enc.a == enc.b))
    result.info.update({"l2": l2, "separated": separated, "scale": scale, "n_pairs": pc.n_pairs, "n_categories": data.cats.n_categories,
                        "rows_used": enc.n_rows - self_rows, "rows_not_used": self_rows, "anchor": data.anchor,
                        "anchor_rating": anchor_rating if anchor is not None else None})
    return result

"""``rank()``: one entry point from a judgments table to a :class:`Ranking`, via the RATING_METHODS registry."""

from __future__ import annotations

import inspect
import logging
from typing import Callable

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError, RatingError
from judgewise.registry import Registry
from judgewise.io.provenance import select_judge
from judgewise.io.schema import soft_count, soft_outcomes, usable_games
from judgewise.ratings.bootstrap import bootstrap as run_bootstrap
from judgewise.ratings.bootstrap import check_bootstrap, check_interval, rng_from_seed
from judgewise.ratings.bradley_terry import bradley_terry
from judgewise.ratings.coverage import measured_coverage
from judgewise.ratings.elo import elo
from judgewise.ratings.encode import ARENA_HARD_STRONG_WEIGHT, encode
from judgewise.ratings.graph import require_connected
from judgewise.ratings.lc_winrate import lc_winrate
from judgewise.ratings.method import MethodResult, RatingData
from judgewise.ratings.record_interval import widen
from judgewise.ratings.result import Ranking, ci_aware_rank
from judgewise.ratings.threads import single_blas_thread
from judgewise.ratings.true_skill import trueskill_rating
from judgewise.ratings.winrate import winrate, winshare

log = logging.getLogger(__name__)

RatingMethod = Callable[..., MethodResult]

#: name → method(data: RatingData, **options) -> MethodResult. Add your own: ``RATING_METHODS["mine"] = fn``.
RATING_METHODS: Registry[RatingMethod] = Registry("rating method", {
    "winrate": winrate,
    "winshare": winshare,
    "bt": bradley_terry,
    "elo": elo,
    "trueskill": trueskill_rating,
    "lc_winrate": lc_winrate,
})


def _call(fn: RatingMethod, name: str, data: RatingData, opts: dict) -> MethodResult:
    """Call a method, turning an unknown option into a ConfigError that lists the accepted ones."""
    params = inspect.signature(fn).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        unknown = [k for k in opts if k not in params or k == "data"]
        if unknown:
            known = [k for k in params if k != "data"]
            raise ConfigError(f'rating method "{name}" has no option(s) {unknown} (options: {known})')
    return fn(data, **opts)


@single_blas_thread
def rank(judgments: pd.DataFrame, method: str = "bt", *, anchor: str | None = None, bootstrap: int = 0,
         bootstrap_unit: str = "prompt", seed: int | np.random.Generator = 0, ci_level: float = 0.95,
         style_control: bool = False, responses: pd.DataFrame | None = None, weighting: str | None = None,
         weight_column: str | None = None, strong_weight: float = ARENA_HARD_STRONG_WEIGHT, judge: str | None = None,
         pool_judges: bool = False, soft: bool = False, interval: str = "bca", **opts) -> Ranking:
    """Rate the models of a canonical judgments table (``io.tables``) with ``method`` from RATING_METHODS.

    ``anchor``: the anchor model (win rate; auto-detected when one model is in every row) or, for BT, the model
    pinned at ``anchor_rating``. ``bootstrap``: number of replicates (0 = none), resampling ``bootstrap_unit``
    ("prompt" clusters, default, or "battle"), seeded by ``seed``; intervals at ``ci_level`` are BCa intervals
    (``interval="bca"``, default: ``ratings.bootstrap.bca_interval``, which covers where the percentile interval
    does not — benchmarks/interval_coverage.py) or percentile intervals (``interval="percentile"``, FastChat's
    and Arena-Hard-Auto's). ``weighting="arena_hard"`` / ``weight_column``: sample weights (see ``ratings.encode``).
    ``style_control``/``responses``: style-controlled BT. Other ``opts`` go to the method.

    A table holding several judges (``judge`` values, templates or store identities; ``io.provenance``) is refused
    with a ConfigError listing them: pass ``judge=`` to rate one judge's rows (``info["judge_rows_dropped"]`` counts
    the others) or ``pool_judges=True`` to pool them on purpose. ``self_preference=True`` (BT) models the judges
    (a judge-vs-model family feature), so it pools them by design.

    Failed games (``io.schema.failed_mask``: a store frame's ``status`` "failed", or an ``error`` without an
    outcome, as ``judgewise store export`` writes them) are not rated: they are dropped here and counted in
    ``info["failed_games_skipped"]``, their reasons in ``info["failed_game_reasons"]``.

    ``soft=True`` rates each judgment's soft preference (the expected outcome from the judge's verdict-token
    logprobs, ``soft`` column) as a fractional win where it has one (:func:`judgewise.io.schema.soft_outcomes`);
    ``info["soft"]`` says how many rows carry one (``available``) and whether they were used.
    """
    judgments, dropped = select_judge(judgments, judge, pool_judges or bool(opts.get("self_preference")))
    judgments, n_failed, reasons = usable_games(judgments)
    if n_failed and not len(judgments):
        raise RatingError(f"nothing to rate: all {n_failed} games failed (reasons: {reasons})")
    judgments, soft_info = _soft(judgments, soft)
    check_interval(interval)
    ranking = _rank(judgments, method, anchor, bootstrap, (bootstrap_unit, interval), seed, ci_level, style_control,
                    responses, dict(weighting=weighting, weight_column=weight_column, strong_weight=strong_weight),
                    opts)
    ranking.info["judge_rows_dropped"] = dropped
    ranking.info.update(failed_games_skipped=n_failed, failed_game_reasons=reasons, soft=soft_info)
    return ranking


def _soft(judgments: pd.DataFrame, soft: bool) -> tuple[pd.DataFrame, dict]:
    """The judgments to rate and what ``info["soft"]`` says: with ``soft``, outcomes replaced by the soft
    preferences (:func:`judgewise.io.schema.soft_outcomes`; none at all is a ConfigError); ``available`` counts
    the rows that carry one either way."""
    available = soft_count(judgments)
    if not soft:
        return judgments, {"used": False, "available": available, "rows": len(judgments)}
    if not available:
        raise ConfigError("soft outcomes asked (`soft=True`), but no judgment carries a soft preference: judge with "
                          "judge.logprobs: true and a template whose verdict is one token (e.g. llmbar_binary); "
                          "AlpacaEval's preference is already an expected outcome")
    judgments, n = soft_outcomes(judgments)
    return judgments, {"used": True, "available": n, "rows": len(judgments)}


def _rank(judgments, method, anchor, bootstrap, resampling, seed, ci_level, style_control, responses,
          weights: dict, opts: dict) -> Ranking:
    fn = RATING_METHODS.get(method)
    check_bootstrap(bootstrap or 0, seed)
    enc = encode(judgments, **weights)
    require_connected(enc.a, enc.b, enc.models)  # one check for every method (Elo/TrueSkill had none)
    if anchor is not None:
        enc.model_id(anchor)  # an anchor not in the judgments is an error for every method, not ignored
    data = RatingData(enc, judgments, anchor=anchor, responses=responses, style_control=style_control)
    if style_control and "style_control" not in inspect.signature(fn).parameters:
        raise ConfigError(f'rating method "{method}" does not support style control (use `method="bt"`)')
    if style_control:
        opts = {**opts, "style_control": True}
    result = _call(fn, method, data, opts)
    low = high = np.full(enc.n_models, np.nan)
    extra, boot_info = dict(result.extra), None
    if bootstrap and bootstrap > 0:
        low, high, extra["median"], boot_info = _intervals(data, result, int(bootstrap), resampling, seed, ci_level)
        n_prompts = int(np.count_nonzero(np.bincount(enc.prompt, minlength=len(enc.prompts))))
        boot_info["coverage"] = measured_coverage(method, resampling[1], n_prompts, ci_level, resampling[0])
    n = result.n if result.n is not None else enc.rows_per_model()
    info = {"method": method, "rows": enc.n_rows, **enc.info, **result.info, "options": opts,
            "bootstrap": boot_info, "ci_level": ci_level}
    return Ranking(method=method, models=list(enc.models), scores=np.asarray(result.scores, dtype=float),
                   ci_low=np.asarray(low, dtype=float), ci_high=np.asarray(high, dtype=float),
                   rank=ci_aware_rank(result.scores, low, high), n=np.asarray(n), ci_level=ci_level,
                   extra=extra, info=info)


def _intervals(data: RatingData, result: MethodResult, rounds: int, resampling: tuple[str, str], seed,
               ci_level: float):
    """(ci_low, ci_high, median, facts) of a seeded bootstrap of ``result`` (``resampling``: unit, interval)."""
    unit, interval = resampling
    rng = rng_from_seed(seed)
    boot = run_bootstrap(data, result, rounds, unit=unit, rng=rng, ci_level=ci_level, interval=interval)
    facts = {"rounds": rounds, "unit": unit, "seed": seed if isinstance(seed, int) else None,
             "ci_level": ci_level, "interval": boot.interval,
             "acceleration": None if interval != "bca" else "jackknife" if boot.accelerated else "0",
             "failed_replicates": int(np.isnan(boot.replicates).any(axis=1).sum()),
             "nonconverged_replicates": int(sum(result.stats.failures)) if result.stats else None}
    low, high = boot.ci_low, boot.ci_high
    if interval == "bca" and result.record_bounds is not None:  # percentile stays the peers' interval, as is
        low, high, facts["widened_to_record"] = widen(low, high, *result.record_bounds(ci_level, unit))
    return low, high, boot.median, facts

"""Rank models by their mean pointwise grade (MT-bench's score), with a cluster bootstrap over prompts.

MT-bench's leaderboard (FastChat ``show_result.py``, single mode) is the mean of a model's 1–10 grades over every
(question, turn), failed grades (score −1) left out; the per-turn means are shown beside it. :func:`mean_scores`
computes the same from a grades table and adds what MT-bench does not give: percentile intervals from resampling
whole prompts (both turns of a question travel together), all replicates in one sparse product over per-prompt
sums (``ratings.bootstrap.multinomial`` counts, as for every other method). :func:`grade_pairs` turns the same grades
into pairwise outcomes (the higher grade wins, equal grades tie), for any pairwise rating method.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from judgewise.errors import RatingError
from judgewise.io.provenance import select_judge
from judgewise.io.schema import GRADES_REQUIRED, failed_mask, failure_reasons, require_columns
from judgewise.ratings.bootstrap import check_bootstrap, multinomial, rng_from_seed, summarise
from judgewise.ratings.result import Ranking, ci_aware_rank

METHOD = "mean_score"


def _usable(grades: pd.DataFrame) -> tuple[pd.DataFrame, int, dict, int]:
    """(rows with a score, failed grades, their reasons, ok grades without a score such as not_attempted)."""
    score = pd.to_numeric(grades["score"], errors="coerce")
    failed = failed_mask(grades, value="score")  # io.schema's one rule: status failed, or an error and no score
    reasons = failure_reasons(grades.assign(status=np.where(failed, "failed", "ok")))
    unscored = int((score.isna().to_numpy() & ~failed).sum())
    keep = score.notna().to_numpy() & ~failed
    return grades[keep].assign(score=score[keep]).reset_index(drop=True), int(failed.sum()), reasons, unscored


def _sums(frame: pd.DataFrame, models: list[str]) -> tuple:
    """Per (prompt, model): the sum of scores and the number of grades, as prompts × models sparse matrices."""
    from scipy import sparse  # heavy: only when grades are ranked, not at every `rank`'s start

    prompt_codes, prompts = pd.factorize(frame["prompt_id"].astype(str), sort=True)
    model_codes = pd.Categorical(frame["model"].astype(str), categories=models).codes
    shape = (len(prompts), len(models))
    total = sparse.csr_matrix((frame["score"].to_numpy(float), (prompt_codes, model_codes)), shape=shape)
    count = sparse.csr_matrix((np.ones(len(frame)), (prompt_codes, model_codes)), shape=shape)
    return total, count, list(prompts)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


def _turn_means(frame: pd.DataFrame, models: list[str]) -> dict[str, np.ndarray]:
    if "turn" not in frame.columns:
        return {}
    turns = pd.to_numeric(frame["turn"], errors="coerce")
    if turns.nunique() < 2:
        return {}
    means = frame.assign(turn=turns).pivot_table(index="model", columns="turn", values="score", aggfunc="mean")
    return {f"turn_{int(t)}": means[t].reindex(models).to_numpy(float) for t in sorted(means.columns)}


def mean_scores(grades: pd.DataFrame, *, bootstrap: int = 0, seed: int | np.random.Generator = 0,
                ci_level: float = 0.95, judge: str | None = None, pool_judges: bool = False) -> Ranking:
    """Per model: the mean score over its scored grades (every prompt and turn), with percentile intervals from
    ``bootstrap`` cluster-bootstrap replicates over prompts (0 = none), seeded by ``seed``.

    ``grades`` is a grades table (``io.schema.GRADES_REQUIRED``: ``prompt_id, model, judge, score``; ``turn``
    optional). Failed grades (an ``error`` and no score, or ``status`` failed) are left out and counted in
    ``info["failed_grades_skipped"]``; ok grades without a score (a direct judge's ``not_attempted``) in
    ``info["unscored_grades"]``. Several judges are refused unless ``judge`` picks one or ``pool_judges``.
    ``extra`` holds ``turn_k`` means (multi-turn data) and ``median`` (with a bootstrap).
    """
    require_columns(grades, GRADES_REQUIRED, what="the grades table")
    check_bootstrap(bootstrap, seed)
    grades, dropped = select_judge(grades, judge, pool_judges)
    frame, n_failed, reasons, unscored = _usable(grades)
    if not len(frame):
        raise RatingError(f"nothing to rank: none of the {len(grades)} grades has a score"
                          + (f" ({n_failed} failed: {reasons})" if n_failed else ""))
    models = sorted(frame["model"].astype(str).unique())
    total, count, prompts = _sums(frame, models)
    n = np.asarray(count.sum(axis=0)).ravel()
    scores = np.asarray(total.sum(axis=0)).ravel() / n
    low = high = np.full(len(models), np.nan)
    extra = _turn_means(frame, models)
    boot = None
    if bootstrap:
        draws = multinomial(rng_from_seed(seed), len(prompts), np.full(len(prompts), 1.0 / len(prompts)), bootstrap)
        reps = _ratio(np.asarray((total.T @ draws.T).T), np.asarray((count.T @ draws.T).T))
        result = summarise(reps, ci_level, "prompt")
        low, high, extra["median"] = result.ci_low, result.ci_high, result.median
        boot = {"rounds": bootstrap, "unit": "prompt", "seed": seed if isinstance(seed, int) else None,
                "ci_level": ci_level, "interval": "percentile",
                "failed_replicates": int(np.isnan(reps).any(axis=1).sum())}
    info = {"method": METHOD, "rows": len(frame), "prompts": len(prompts), "failed_grades_skipped": n_failed,
            "failed_grade_reasons": reasons, "unscored_grades": unscored, "judge_rows_dropped": dropped,
            "bootstrap": boot, "ci_level": ci_level}
    return Ranking(method=METHOD, models=models, scores=scores, ci_low=np.asarray(low, float),
                   ci_high=np.asarray(high, float), rank=ci_aware_rank(scores, low, high), n=n.astype(int),
                   ci_level=ci_level, extra=extra, info=info)


def grade_pairs(grades: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Pairwise outcomes from grades: for every two models graded on the same prompt (and turn) by the same judge,
    model_a wins (outcome 1) when its score is higher, loses (0) when lower and ties (0.5) when equal — a rubric's
    absolute grades read as a comparison design of all pairs. Failed and unscored grades take part in no pair.

    Returns the judgments table (``prompt_id, model_a, model_b, judge, outcome``, ``turn`` when graded by turn;
    model_a before model_b alphabetically) and counts: ``grades`` used, ``failed_grades_skipped``, ``pairs``,
    ``ties``.
    """
    require_columns(grades, GRADES_REQUIRED, what="the grades table")
    frame, n_failed, reasons, _ = _usable(grades)
    keys = ["prompt_id", "judge", *(["turn"] if "turn" in frame.columns else [])]
    side = frame[[*keys, "model", "score"]].assign(model=frame["model"].astype(str),
                                                    prompt_id=frame["prompt_id"].astype(str))
    pairs = side.merge(side, on=keys, suffixes=("_a", "_b"))
    pairs = pairs[pairs["model_a"] < pairs["model_b"]]
    outcome = 0.5 + 0.5 * np.sign(pairs["score_a"].to_numpy(float) - pairs["score_b"].to_numpy(float))
    out = pairs[["prompt_id", "model_a", "model_b", "judge", *keys[2:]]].assign(outcome=outcome)
    out = out.sort_values(["prompt_id", *keys[2:], "model_a", "model_b"], kind="stable").reset_index(drop=True)
    counts = {"grades": len(frame), "failed_grades_skipped": n_failed, "failed_grade_reasons": reasons,
              "pairs": len(out), "ties": int((out["outcome"] == 0.5).sum())}
    return out, counts


def grade_item_ids(grades: pd.DataFrame) -> pd.Series:
    """The item a grade rates, as a scores table names it: ``prompt_id/model``, and ``/turn k`` when graded by
    turn (``q81/gpt-4/turn 2``): the id a human's scores of the same answers use."""
    ids = grades["prompt_id"].astype(str) + "/" + grades["model"].astype(str)
    if "turn" not in grades.columns:
        return ids
    turn = pd.to_numeric(grades["turn"], errors="coerce")
    return ids.where(turn.isna(), ids + "/turn " + turn.astype("Int64").astype(str))


def grades_as_scores(grades: pd.DataFrame) -> pd.DataFrame:
    """A grades table as a scores table (``item_id, rater, score``) for the reliability commands: one row per
    scored grade, the item :func:`grade_item_ids`, the rater the grade's ``judge`` (judge model and template, so
    two rubrics are two raters); failed and unscored grades left out."""
    require_columns(grades, GRADES_REQUIRED, what="the grades table")
    frame = _usable(grades)[0]
    return pd.DataFrame({"item_id": grade_item_ids(frame), "rater": frame["judge"].astype(str),
                         "score": frame["score"].astype(float)})

"""Prediction-powered rank-sets (analysis.human_anchored) and the matching of human labels to judge verdicts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgewise.analysis.human_anchored import (covers, human_anchored, ppr_estimate, rank_sets, true_ranks,
                                               win_share_estimate)
from judgewise.analysis.human_pairs import match_labels, store_label_frame
from judgewise.errors import ConfigError, InputError
from judgewise.judges.simulated import sample_verdicts
from judgewise.ratings.winrate import share_won


def _radius_variance(radius: float, k: int, alpha: float) -> float:
    """The per-model variance s² (Σ = s²·I) whose rank-set test has this radius: sqrt(χ²·2s²) = radius."""
    return radius ** 2 / (2 * stats.chi2.ppf(1 - alpha, k))


def test_rank_sets_separate_exactly_the_differences_beyond_the_ellipsoid_radius():
    theta = np.array([0.60, 0.55, 0.10, 0.58])
    cov = _radius_variance(0.1, 4, 0.05) * np.eye(4)
    lo, hi = rank_sets(theta, cov, 0.05)
    # 0, 1 and 3 are within 0.1 of each other; all three are more than 0.1 above model 2
    assert lo.tolist() == [1, 1, 4, 1] and hi.tolist() == [3, 3, 4, 3]
    lo, hi = rank_sets(theta, cov * 1e-6, 0.05)  # tiny variance: the ranks themselves
    assert lo.tolist() == hi.tolist() == true_ranks(theta).tolist() == [1, 3, 4, 2]
    lo, hi = rank_sets(theta, cov * 1e6, 0.05)  # huge variance: every rank possible
    assert lo.tolist() == [1] * 4 and hi.tolist() == [4] * 4


def test_a_model_without_data_may_hold_any_rank_and_narrows_no_other():
    theta = np.array([0.9, np.nan, 0.1])
    cov = 1e-6 * np.eye(3)
    cov[1, :] = cov[:, 1] = np.nan
    lo, hi = rank_sets(theta, cov, 0.1)
    assert (lo.tolist(), hi.tolist()) == ([1, 1, 2], [2, 3, 3])


def test_rank_sets_of_a_stack_are_the_rank_sets_of_each():
    rng = np.random.default_rng(3)
    thetas = rng.random((5, 4))
    covs = np.stack([np.diag(rng.random(4) * 0.01) for _ in range(5)])
    lo, hi = rank_sets(thetas, covs, 0.1)
    for i in range(5):
        one = rank_sets(thetas[i], covs[i], 0.1)
        assert lo[i].tolist() == one[0].tolist() and hi[i].tolist() == one[1].tolist()
    assert covers(lo, hi, true_ranks(thetas)).all()  # the estimate's own ranking is always inside


def test_win_shares_are_the_ratings_share_won_and_their_variance_the_binomial_one():
    a, b = np.array([0, 0, 0, 1, 2, 2]), np.array([1, 2, 1, 2, 0, 1])
    y = np.array([1.0, 0.5, 0.0, 1.0, 1.0, 0.0])
    theta, cov = win_share_estimate(a, b, y, 3)
    np.testing.assert_allclose(theta, share_won(a, b, y, 3))
    won_by_0 = np.array([1.0, 0.5, 0.0, 0.0])  # model 0's results in its four comparisons
    assert cov[0, 0] == pytest.approx(((won_by_0 - won_by_0.mean()) ** 2).sum() / 4 ** 2)
    assert np.allclose(cov, cov.T)


def test_estimates_do_not_depend_on_which_model_is_called_a():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 4, 300), rng.integers(0, 4, 300)
    keep = a != b
    a, b, h, j = a[keep], b[keep], rng.integers(0, 3, keep.sum()) / 2, rng.integers(0, 3, keep.sum()) / 2
    half = len(a) // 2
    one = ppr_estimate((a[:half], b[:half], h[:half], j[:half]), (a[half:], b[half:], j[half:]), 4)
    two = ppr_estimate((b[:half], a[:half], 1 - h[:half], 1 - j[:half]), (b[half:], a[half:], 1 - j[half:]), 4)
    for x, y in zip(one, two):
        np.testing.assert_allclose(x, y)


def _study(rng, n_total, agree, boost):
    """Simulated comparisons of 6 models (Elo 1150 … 900): human BT verdicts, and a judge that repeats the human on
    a share ``agree`` of them and otherwise favours models by ``boost`` Elo."""
    elo = np.linspace(1150, 900, 6)
    a = rng.integers(0, 6, n_total)
    b = (a + rng.integers(1, 6, n_total)) % 6
    qa, qb = elo[a] + 150 * rng.standard_normal(n_total), elo[b] + 150 * rng.standard_normal(n_total)
    human = sample_verdicts(qa, qb, 1.0, rng, tie_rate=0.1)[0]
    biased = sample_verdicts(qa + boost[a], qb + boost[b], 0.9, rng, tie_rate=0.1)[0]
    return a, b, human, np.where(rng.random(n_total) < agree, human, biased), true_ranks(elo)


def test_a_judge_that_says_what_humans_say_gets_almost_all_the_weight_and_shrinks_the_sets():
    rng = np.random.default_rng(1)
    a, b, human, judge, truth = _study(rng, 20_000, 1.0, np.zeros(6))
    n = 1_000
    result = human_anchored((a[:n], b[:n], human[:n], judge[:n]), (a[n:], b[n:], judge[n:]), list("abcdef"), 0.05)
    assert result.lam > 0.9  # ≈ N / (n + N) = 0.95: the judge's verdicts count as human ones
    assert result.rectifier_size == 0 and result.disagreement == 0
    ppr_size, human_size = (result.hi - result.lo).mean(), (result.human_only["hi"] - result.human_only["lo"]).mean()
    assert ppr_size < 0.5 * human_size
    assert np.trace(result.cov) < 0.2 * np.trace(win_share_estimate(a[:n], b[:n], human[:n], 6)[1])


def test_a_judge_unrelated_to_humans_gets_almost_no_weight():
    rng = np.random.default_rng(2)
    a, b, human, _, _ = _study(rng, 20_000, 0.0, np.zeros(6))
    coin = rng.integers(0, 2, len(a)).astype(float)
    n = 1_000
    theta, _, lam = ppr_estimate((a[:n], b[:n], human[:n], coin[:n]), (a[n:], b[n:], coin[n:]), 6)
    assert lam < 0.1


def test_a_biased_judges_rank_sets_miss_the_human_ranking_and_the_anchored_ones_cover_it():
    boost = np.array([0, 0, 0, 500.0, 0, 0])  # model 4 (of 6) favoured: the judge ranks it above model 3
    hits, judge_hits = [], []
    for seed in range(12):
        rng = np.random.default_rng([35, seed])
        a, b, human, judge, truth = _study(rng, 30_000, 0.6, boost)
        n = 1_500
        res = human_anchored((a[:n], b[:n], human[:n], judge[:n]), (a[n:], b[n:], judge[n:]), list("abcdef"), 0.1)
        hits.append(covers(res.lo, res.hi, truth))
        judge_hits.append(covers(res.judge_only["lo"], res.judge_only["hi"], truth))
        assert res.rectifier[3] < -0.03  # the labels pull the favoured model back down
    assert sum(hits) >= 11 and sum(judge_hits) <= 2


def test_alpha_outside_the_unit_interval_is_refused():
    z = np.zeros(0, int)
    with pytest.raises(ConfigError, match="--alpha"):
        human_anchored((z, z, z * 1.0, z * 1.0), (z, z, z * 1.0), ["a", "b"], alpha=1.0)


def _judgments(rows):
    return pd.DataFrame(rows, columns=["prompt_id", "model_a", "model_b", "outcome"])


def test_labels_match_judge_verdicts_in_either_order_and_unmatched_ones_are_counted():
    judge = _judgments([("p1", "x", "y", 1.0), ("p1", "y", "x", 0.5), ("p2", "y", "z", 0.0), ("p3", "x", "z", 1.0)])
    human = _judgments([("p1", "y", "x", 1.0), ("p2", "z", "y", 1.0), ("p9", "x", "y", 1.0), ("p3", "x", "y", 1.0)])
    m = match_labels(judge, human)
    assert m.models == ["x", "y", "z"]
    assert m.labels["given"] == 4 and m.labels["matched"] == 2 and m.labels["unmatched"] == 2
    a, b, h, j = m.labelled
    got = {(m.models[i], m.models[k]): (hv, jv) for i, k, hv, jv in zip(a, b, h, j)}
    # p1: judge says x wins, then a tie in the other order → 0.75 for x; the human (y shown first) says y wins → 0
    assert got == {("x", "y"): (0.0, 0.75), ("y", "z"): (0.0, 0.0)}
    assert len(m.unlabelled[0]) == 1  # p3 (x, z): the judge's only


def test_labels_on_no_judged_comparison_are_refused_naming_the_source():
    judge = _judgments([("p1", "x", "y", 1.0)])
    with pytest.raises(InputError, match="none of its 1 human labels"):
        match_labels(judge, _judgments([("p2", "x", "y", 1.0)]), source="labels.jsonl")


def test_store_labels_take_the_two_models_of_their_prompt_in_name_order():
    judge = _judgments([("p1", "y", "x", 1.0), ("p2", "x", "y", 0.0), ("p2", "x", "z", 0.0)])
    labels = pd.DataFrame({"item_id": ["p1", "p2"], "rater": "human", "score": [1.0, 0.0]})
    frame = store_label_frame(labels, judge)
    assert frame.to_dict("records") == [
        {"prompt_id": "p1", "model_a": "x", "model_b": "y", "outcome": 1.0},
        {"prompt_id": "p2", "model_a": "", "model_b": "", "outcome": 0.0}]  # p2 compares three models

"""The anchor study: informativeness (Anchor §4.3), win-count histograms (§4.2), pilot (§5.3), quality (§4.1)."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from judgewise.analysis.anchor_experiments import (anchor_quality, multi_anchor_scores, number_of_anchors_experiment,
                                             pilot, sample_size_experiment)
from judgewise.analysis.anchor_selection import (QuadraticData, anchor_report, informativeness, report_from_judgments,
                                        verdict_matrix, win_count_histogram)
from judgewise.designs import make_design
from judgewise.judges.simulated import response_quality, verdict_fn
from tests.support import cli_json


@settings(max_examples=80, deadline=None)
@given(arrays(float, st.tuples(st.integers(1, 6), st.integers(2, 6)), elements=st.sampled_from([-2., -1., 0., 1., 2.])))
def test_informativeness_is_the_share_of_pairs_with_different_verdicts(v):
    brute = np.mean([v[i, a] != v[i, b] for i in range(v.shape[0]) for a, b in combinations(range(v.shape[1]), 2)])
    assert informativeness(v) == pytest.approx(brute)


def test_binary_informativeness_peaks_when_the_anchor_splits_the_pool_in_half():
    m = 10
    for k in range(m + 1):  # k models beat the anchor on every prompt
        v = np.where(np.arange(m) < k, 1.0, -1.0)[None, :].repeat(5, axis=0)
        assert informativeness(v) == pytest.approx(k * (m - k) / (m * (m - 1) / 2))
    assert informativeness(np.where(np.arange(m) < 5, 1.0, -1.0)[None, :]) == max(
        informativeness(np.where(np.arange(m) < k, 1.0, -1.0)[None, :]) for k in range(m + 1))


def test_histogram_counts_prompts_by_models_beating_the_anchor():
    v = np.array([[1, -1, 0], [1, 1, 1], [-1, -1, -1], [0.2, -0.1, np.nan]])
    assert win_count_histogram(v).tolist() == [1, 2, 0, 1]  # 0, 1, 1 (0.2 > 0) and 3 winners
    report = anchor_report("A", v)
    assert report.anchor_wins_all_share == 0.25 and report.wasted_share == pytest.approx(1 - report.informativeness)


def simulated_quadratic(n=10, n_prompts=120, seed=0):
    rng = np.random.default_rng(seed)
    elo = np.linspace(1400, 1000, n)
    q = response_quality(elo, n_prompts, 120.0, rng)
    run = make_design("quadratic").run([f"m{i}" for i in range(n)], [f"x{i}" for i in range(n_prompts)],
                                       verdict_fn(q, 0.85, rng), rng)
    return run.to_judgments(), elo


def test_pilot_recommends_a_mediocre_anchor_and_ranks_extremes_last():
    frame, _ = simulated_quadratic()
    result = pilot(QuadraticData(frame), n_prompts=10, rng=np.random.default_rng(1))
    assert result.n_prompts == 10
    assert result.table.iloc[0].position == "mediocre" and "mediocre" in result.reason
    worst = set(result.table.anchor.iloc[-3:])
    assert worst & {"m0", "m9"}


def test_anchor_quality_is_an_inverted_u_in_the_anchor_rank():
    frame, elo = simulated_quadratic(n=10, n_prompts=300, seed=2)
    table = anchor_quality(QuadraticData(frame), gold=elo)
    middle = table[table.gold_rank.between(4, 7)]
    edges = table[table.gold_rank.isin([1, 10])]
    assert middle.tau.mean() > edges.tau.mean()
    assert middle.informativeness.mean() > edges.informativeness.mean()


def test_experiments_return_tables_and_more_anchors_help():
    frame, elo = simulated_quadratic(n=8, n_prompts=80, seed=3)
    data = QuadraticData(frame)
    sizes = sample_size_experiment(data, [10, 80], repeats=3, gold=elo, rng=np.random.default_rng(0))
    assert list(sizes.n_prompts) == [10, 80] and sizes.quadratic_tau.iloc[1] >= sizes.quadratic_tau.iloc[0] - 0.1
    anchors = number_of_anchors_experiment(data, permutations=4, gold=elo, rng=np.random.default_rng(0))
    assert len(anchors) == 8 and anchors.mean_tau.iloc[-1] >= anchors.mean_tau.iloc[0]
    scores = multi_anchor_scores(data, ["m3", "m4"])
    assert scores.idxmax() in {"m0", "m1", "m2"}


@pytest.mark.slow
def test_alpacaeval_anchor_wastes_most_comparisons(alpacaeval_full):
    frame = alpacaeval_full.frame
    report = report_from_judgments(frame, "gpt4_1106_preview")
    v, prompts, models = verdict_matrix(frame, "gpt4_1106_preview")
    assert report.n_models == 28 and report.n_prompts == 805 == len(prompts)
    assert sum(report.histogram) == 805
    # the strong AlpacaEval anchor is less informative than the paper's worst anchor o3 (45.5%, Table 9)
    assert report.informativeness < 0.455
    assert report.wasted_share > 0.55
    assert report.informativeness_5way is None  # AlpacaEval preferences are continuous, not 5-way


def test_cli_anchors_runs_a_pilot_on_all_pairs_judgments(tmp_path):
    frame, _ = simulated_quadratic(n=6, n_prompts=30, seed=4)
    path = tmp_path / "pilot.jsonl"
    frame.to_json(path, orient="records", lines=True)
    out = cli_json("anchors", str(path), "--json")
    assert out["anchors"] == [] and out["pilot"]["n_prompts"] == 10
    assert out["pilot"]["recommended"] in {c["anchor"] for c in out["pilot"]["candidates"]}
    assert out["read"]["rows_used"] == len(frame) and out["read"]["rows_skipped"] == 0  # rows are accounted for


def test_no_signal_share_counts_complete_prompts_where_every_model_got_the_same_verdict():
    v = np.array([[1, 1, 1], [1, -1, 0], [np.nan, 1, 1], [-1, -1, -1], [0, 0, 0]], dtype=float)
    report = anchor_report("x", v)
    assert report.no_signal_share == 3 / 4  # the prompt with a missing verdict is not counted
    assert report.anchor_wins_all_share == 2 / 5 and report.histogram == [2, 1, 1, 1]

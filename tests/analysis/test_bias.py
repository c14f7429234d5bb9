"""Bias diagnostics: position, swap consistency, length — recovered from simulated judges with known bias,
and measured on JudgeBench against JudgeBench's own decisions."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgewise.analysis import bias
from judgewise.judges.base import Comparison
from judgewise.judges.runner import run_judging
from judgewise.judges.simulated import SimulatedJudge

RATINGS = {"m0": 1000.0, "m1": 1050.0, "m2": 1100.0, "m3": 1150.0}


def _comparisons(n_prompts: int, seed: int = 0) -> tuple[list[Comparison], pd.DataFrame]:
    """All model pairs on n prompts, each response a random length independent of the model's strength."""
    rng = np.random.default_rng(seed)
    models = sorted(RATINGS)
    texts = {(p, m): "x" * int(rng.integers(20, 400)) for p in range(n_prompts) for m in models}
    comps = [Comparison(f"p{p}", "q", a, b, texts[p, a], texts[p, b])
             for p in range(n_prompts) for i, a in enumerate(models) for b in models[i + 1:]]
    responses = pd.DataFrame([{"prompt_id": f"p{p}", "model": m, "text": t} for (p, m), t in texts.items()])
    return comps, responses


def _judged(tmp_path, judge, n_prompts=150):
    comps, responses = _comparisons(n_prompts)
    result = run_judging(comps, judge, tmp_path / "store.sqlite", orders="both", concurrency=4)
    return result.judgments, responses


@pytest.mark.parametrize("position", [0.0, 0.3])
def test_position_bias_recovers_the_simulated_judges_known_value(tmp_path, position):
    judge = SimulatedJudge(RATINGS, p_judge=0.9, seed=1, position_bias=position)
    judgments, _ = _judged(tmp_path, judge)
    est = bias.position_bias(judgments)
    expected = 0.5 + position / 2  # simulated.py step 3: over both orders, ties as half
    assert est.n == len(judgments) == 1800
    assert est.ci_low <= expected <= est.ci_high
    assert abs(est.estimate - expected) < 0.035


def test_swap_consistency_and_first_wins_both_orders_match_the_simulated_judges_model(tmp_path):
    """A decisive judge (P_judge = 1) draws each order independently: for a pair whose stronger side wins
    with p, consistency = p² + (1 − p)²; with position bias b = 0.5, each order is position-decided half the
    time, giving 0.25 + 0.25·(p² + (1 − p)²); first-wins-in-both goes from p(1 − p) to (1 + p)(2 − p)/4."""
    from judgewise.judges.simulated import p_gt

    models = sorted(RATINGS)
    p = np.array([p_gt(RATINGS[a], RATINGS[b]) for i, a in enumerate(models) for b in models[i + 1:]])
    consistent, flip = p**2 + (1 - p) ** 2, p * (1 - p)
    j_fair, _ = _judged(tmp_path / "a", SimulatedJudge(RATINGS, p_judge=1.0, seed=2), n_prompts=40)
    j_biased, _ = _judged(tmp_path / "b", SimulatedJudge(RATINGS, p_judge=1.0, seed=2, position_bias=0.5),
                          n_prompts=40)
    for judgments, expected_consistent, expected_flip in [
            (j_fair, consistent.mean(), flip.mean()),
            (j_biased, (0.25 + 0.25 * consistent).mean(), ((1 + p) * (2 - p) / 4).mean())]:
        est = bias.swap_consistency(judgments)
        assert est.ci_low <= expected_consistent <= est.ci_high
        est = bias.first_wins_both_orders(judgments)
        assert est.ci_low <= expected_flip <= est.ci_high
    assert bias.swap_consistency(j_biased).estimate < bias.swap_consistency(j_fair).estimate < 1.0
    assert bias.first_wins_both_orders(j_biased).estimate > bias.first_wins_both_orders(j_fair).estimate


@pytest.mark.parametrize("length", [0.0, 0.4])
def test_length_bias_recovers_the_simulated_judges_known_value(tmp_path, length):
    judge = SimulatedJudge(RATINGS, p_judge=0.9, seed=3, length_bias=length)
    judgments, responses = _judged(tmp_path, judge)
    est = bias.length_bias(judgments, responses)
    expected = 0.5 + length / 2  # simulated.py step 4: lengths independent of strength, ties as half
    assert est.ci_low <= expected <= est.ci_high
    assert abs(est.estimate - expected) < 0.04


def _toy(outcomes, firsts):
    return pd.DataFrame({"prompt_id": [f"p{i // 2}" for i in range(len(outcomes))], "model_a": "x",
                         "model_b": "y", "judge": "j", "outcome": outcomes, "first": firsts})


def test_position_bias_counts_ties_as_half_and_reads_the_shown_order():
    frame = _toy([1.0, 0.0, 0.5, 0.5], ["x", "y", "x", "y"])
    # x first and wins; y first and x loses (first wins); two ties
    assert bias.position_bias(frame).estimate == pytest.approx((1 + 1 + 0.5 + 0.5) / 4)


def test_swap_consistency_maps_both_orders_to_one_view():
    # p0: x wins in both orders (consistent); p1: the first shown wins each time (inconsistent)
    frame = _toy([1.0, 1.0, 1.0, 0.0], ["x", "y", "x", "y"])
    assert bias.swap_consistency(frame).estimate == 0.5
    assert bias.first_wins_both_orders(frame).estimate == 0.5


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.booleans()), min_size=2, max_size=40))
def test_position_bias_is_invariant_to_swapping_the_model_labels(rows):
    outcomes = [o for o, _ in rows]
    firsts = ["x" if f else "y" for _, f in rows]
    frame = _toy(outcomes, firsts)
    relabelled = frame.assign(model_a="y", model_b="x", outcome=1.0 - frame["outcome"])
    assert bias.position_bias(frame).estimate == pytest.approx(bias.position_bias(relabelled).estimate)
    assert bias.swap_consistency(frame).estimate == bias.swap_consistency(relabelled).estimate or (
        np.isnan(bias.swap_consistency(frame).estimate))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 500), st.integers(1, 500))
def test_wilson_interval_contains_the_estimate_and_stays_in_0_1(k, n):
    k = min(k, n)
    lo, hi = bias.wilson_interval(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def _judgebench_oracle(path):
    """Per-judge pair accuracy from JudgeBench's own ``decision`` strings (their aggregation: the two orders'
    decisions are added, the swapped one flipped back; a pair is right when the sum points to the label)."""
    flip = {"A>B": "B>A", "B>A": "A>B", "A=B": "A=B"}
    out = {}
    for file in sorted(path.glob("*.jsonl")):
        right = total = 0
        for line in file.read_text().splitlines():
            rec = json.loads(line)
            d1, d2 = [(j.get("decision") or "").strip("'") for j in rec["judgments"]]
            votes = [d1, flip.get(d2, d2)]
            score = votes.count(rec["label"]) - votes.count(flip[rec["label"]])
            right += score > 0
            total += 1
        out[file.name] = right / total
    return out


def test_judgebench_label_agreement_matches_judgebench_own_decisions(shared):
    from judgewise.io.judgebench import read_judgebench

    path = shared / "data" / "judgebench" / "outputs"
    table = read_judgebench(path)
    frame = table.frame.assign(truth=table.frame["label"].map({"A>B": 1.0, "B>A": 0.0}))
    ours = {file: bias.label_agreement(g, "truth")["per_pair"].estimate for file, g in frame.groupby("file")}
    oracle = _judgebench_oracle(path)
    assert ours.keys() == oracle.keys()
    for file, value in oracle.items():
        assert ours[file] == pytest.approx(value, abs=0.01), file


def test_o1_mini_agrees_with_labels_far_more_than_the_2b_reward_model_per_game(shared):
    from judgewise.io.judgebench import read_judgebench

    frame = read_judgebench(shared / "data" / "judgebench" / "outputs").frame
    frame = frame.assign(truth=frame["label"].map({"A>B": 1.0, "B>A": 0.0}))
    acc = {j: bias.label_agreement(g, "truth") for j, g in frame.groupby("judge")}
    o1, rm2b = acc["o1-mini-2024-09-12"], acc["Ray2333/GRM-Gemma-2B-rewardmodel-ft"]
    assert o1["per_judgment"].ci_low > rm2b["per_judgment"].ci_high
    # ...but its pair-level lead is smaller: reward models score each response alone (swap-consistent),
    # while o1-mini's order flips turn pairs into splits that JudgeBench counts as wrong.
    pos = {j: bias.swap_consistency(g).estimate for j, g in frame.groupby("judge")}
    assert pos["Ray2333/GRM-Gemma-2B-rewardmodel-ft"] == 1.0 and pos["o1-mini-2024-09-12"] < 0.75

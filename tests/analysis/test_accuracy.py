"""Accuracy alignment (CLB): direct accuracy = correct / attempted, App. B filters, discriminative pairs, and
rankings from a judge with a known accuracy signal vs the ground-truth accuracy ranking."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgewise.analysis.accuracy import (
    direct_accuracy,
    filter_models,
    ground_truth_accuracy,
    pair_kinds,
)
from judgewise.analysis.alignment import accuracy_alignment
from judgewise.errors import InputError

from tests.support.clb import simulate


def test_direct_accuracy_is_correct_given_attempted():
    direct = pd.DataFrame({"prompt_id": list("abcdef"), "model": ["x"] * 4 + ["y"] * 2,
                           "label": ["correct", "incorrect", "not_attempted", "correct", "Not attempted", None]})
    acc = direct_accuracy(direct)
    assert acc.loc["x", "accuracy"] == pytest.approx(2 / 3)
    assert acc.loc["y", "attempted"] == 0 and np.isnan(acc.loc["y", "accuracy"])
    assert acc.loc["y", "not_attempted"] == 1 and acc.loc["y", "no_verdict"] == 1


def test_a_bad_direct_label_names_row_and_field():
    direct = pd.DataFrame({"prompt_id": ["a", "b"], "model": ["x", "x"], "label": ["correct", "maybe"]})
    with pytest.raises(InputError, match=r'row 2 field "label".*"maybe"'):
        direct_accuracy(direct)


def test_unparsed_answers_count_as_wrong_and_lower_the_parse_rate():
    corr = pd.DataFrame({"prompt_id": list("abcd"), "model": "x", "correct": [1, "true", None, 0]})
    acc = ground_truth_accuracy(corr)
    assert acc.loc["x", "accuracy"] == 0.5 and acc.loc["x", "parse_rate"] == 0.75


def test_pairs_are_discriminative_when_exactly_one_side_is_correct():
    corr = pd.DataFrame({"prompt_id": ["p"] * 3, "model": ["x", "y", "z"], "correct": [1, 0, 1]})
    judgments = pd.DataFrame({"prompt_id": ["p", "p", "p"], "model_a": ["x", "x", "x"],
                              "model_b": ["y", "z", "w"], "judge": "j", "outcome": 1.0})
    assert list(pair_kinds(judgments, corr)) == ["discriminative", "non-discriminative", "unknown"]


def test_app_b_filters_report_every_dropped_model_with_its_step():
    acc = pd.DataFrame({"parse_rate": [0.99, 0.5, 1.0, 0.97, 1.0], "accuracy": [0.80, 0.70, 0.05, 0.795, 0.40]},
                       index=["good", "unparseable", "chance", "close_low_parse", "mid"])
    f = filter_models(acc, min_parse_rate=0.9, baseline=0.1, min_gap=0.01)
    assert f.dropped_at("parse_rate") == ["unparseable"]
    assert f.dropped_at("baseline") == ["chance"]
    assert f.dropped_at("min_gap") == ["close_low_parse"]  # within 1 point of "good", lower parse rate
    assert f.kept == ["good", "mid"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=12), st.floats(0.005, 0.2))
def test_min_gap_filter_leaves_every_kept_pair_at_least_the_gap_apart(accs, gap):
    acc = pd.DataFrame({"parse_rate": 1.0, "accuracy": accs}, index=[f"m{i}" for i in range(len(accs))])
    kept = filter_models(acc, min_gap=gap).kept
    values = np.sort(acc.loc[kept, "accuracy"].to_numpy())
    assert len(kept) >= 1 and np.all(np.diff(values) >= gap - 1e-12)


@pytest.fixture(scope="module")
def alignment():
    judgments, corr, direct = simulate(nondisc_signal=0.2)
    return accuracy_alignment(judgments, corr, direct, methods=("winrate", "bt"), bootstrap=20, seed=1)


def test_pairwise_rankings_recover_the_accuracy_ranking_of_a_correctness_driven_judge(alignment):
    table = alignment.table.set_index(["source", "subset"])
    for method in ("winrate", "bt"):
        row = table.loc[(method, "all")]
        assert row["spearman_rho"] >= 0.9 and row["kendall_distance"] <= 0.1
        assert row["kendall_tau_b_low"] <= row["kendall_tau_b"] <= row["kendall_tau_b_high"]
    assert table.loc[("direct", "all"), "n_judgments"] == 150 * 6
    assert alignment.pair_counts["discriminative"] + alignment.pair_counts["non-discriminative"] == 900


def test_alignment_table_has_every_source_and_subset_and_is_json_ready(alignment):
    keys = set(zip(alignment.table["source"], alignment.table["subset"]))
    assert keys == {(m, s) for m in ("winrate", "bt") for s in ("all", "discriminative", "non-discriminative")} | {
        ("direct", "all")}
    out = alignment.as_dict()
    assert len(out["table"]) == 7 and out["settings"]["bootstrap"] == 20


def test_non_discriminative_pairs_carry_signal_only_when_the_judge_has_a_cue():
    with_cue = accuracy_alignment(*simulate(nondisc_signal=0.3, seed=2)[:2], methods=("bt",), bootstrap=0)
    no_cue = accuracy_alignment(*simulate(nondisc_signal=0.0, seed=2)[:2], methods=("bt",), bootstrap=0)
    tau = {name: r.table.set_index(["source", "subset"]).loc[("bt", "non-discriminative"), "kendall_tau_b"]
           for name, r in (("cue", with_cue), ("none", no_cue))}
    assert tau["cue"] >= 0.85 and tau["none"] < tau["cue"]


def test_a_weak_direct_judge_ranks_worse_than_pairwise_comparisons():
    # CLB §5.2: a direct judge that flips 45% of its grades is close to noise; pairwise BT is not
    judgments, corr, direct = simulate(direct_flip=0.45, seed=3)
    table = accuracy_alignment(judgments, corr, direct, methods=("bt",), bootstrap=0).table
    rho = table.set_index(["source", "subset"])["spearman_rho"]
    assert rho[("bt", "all")] > rho[("direct", "all")]


def test_every_aggregator_of_app_c_is_compared_or_reported_as_skipped():
    judgments, corr, _ = simulate(n_prompts=40, seed=4)
    res = accuracy_alignment(judgments, corr, methods=("winrate", "bt", "elo", "trueskill"), bootstrap=0,
                             subsets=("all",))
    compared = set(res.table["source"])
    assert compared | set(res.skipped) == {"winrate", "bt", "elo", "trueskill"}


def test_judgments_left_out_of_the_alignment_are_counted():
    judgments, corr, _ = simulate(n_prompts=40, seed=3)
    judgments.loc[:4, "outcome"] = np.nan  # five failed calls
    out = accuracy_alignment(judgments, corr, methods=("winrate",), bootstrap=0, filters={"baseline": 0.2})
    assert out.filter.dropped_at("baseline") == ["m0"]
    with_m0 = judgments["outcome"].notna() & ((judgments["model_a"] == "m0") | (judgments["model_b"] == "m0"))
    counts = out.pair_counts
    assert counts["no_outcome"] == 5 and counts["filtered_models"] == int(with_m0.sum())
    used = counts["discriminative"] + counts["non-discriminative"] + counts["unknown"]
    assert used + counts["no_outcome"] + counts["filtered_models"] == len(judgments)


def test_an_unknown_method_is_a_config_error_naming_the_setting_not_an_input_file_error():
    from judgewise.errors import ConfigError

    judgments, corr, _ = simulate(nondisc_signal=0.2)
    with pytest.raises(ConfigError, match=r"^methods: unknown aggregator 'bogus'; known: bt, elo, trueskill, winrate"):
        accuracy_alignment(judgments, corr, methods=("bt", "bogus"), bootstrap=0)

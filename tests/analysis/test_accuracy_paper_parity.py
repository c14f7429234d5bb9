"""``accuracy`` reproduces the Correct-looks-better figures with the paper's own settings (Elo k = 32, BT ridge
l2 = 1, pairs with an unparsed side in neither subset) against direct re-implementations of its formulas, and never
drops a method silently."""

from __future__ import annotations

import pytest

from judgewise.analysis.alignment import accuracy_alignment
from tests.support.clb import ORACLES, clb_data, oracle_accuracy, oracle_figures, oracle_subsets
from tests.support import cli_json

FIGS = ("kendall_tau_b", "spearman_rho", "pearson_r")


@pytest.fixture(scope="module")
def data():
    return clb_data(seed=11)


def _expected(judgments, corr, unparsed="exclude", **opts):
    acc = oracle_accuracy(corr)
    out = {}
    for subset, part in oracle_subsets(judgments, corr, unparsed).items():
        for method, fn in ORACLES.items():
            kw = {"k": opts["elo_k"]} if method == "elo" and "elo_k" in opts else {}
            out[(method, subset)] = oracle_figures(acc, fn(part, **kw))
    return out


def _table(rows):
    return {(r["source"], r["subset"]): r for r in rows}


@pytest.mark.slow
def test_accuracy_defaults_equal_the_papers_formulas_on_every_subset(data, tmp_path):
    judgments, corr = data
    expected = _expected(judgments, corr)
    jp, cp = tmp_path / "j.jsonl", tmp_path / "c.csv"
    judgments.to_json(jp, orient="records", lines=True)
    corr.to_csv(cp, index=False)
    out = cli_json("accuracy", str(jp), "--correctness", str(cp), "--bootstrap", "0", "--json")
    got = _table(out["table"])
    assert out["settings"]["elo_k"] == 32 and out["settings"]["bt_l2"] == 1 and out["settings"]["unparsed"] == "exclude"
    for key, figs in expected.items():
        for f in FIGS:
            assert got[key][f] == pytest.approx(figs[f], abs=1e-9), (key, f)
    assert out["pair_counts"]["unparsed"] == len(judgments) - sum(
        len(p) for s, p in oracle_subsets(judgments, corr).items() if s != "all")


@pytest.mark.slow
def test_accuracy_options_reach_chatbot_arenas_elo_and_the_unparsed_as_incorrect_rule(data):
    judgments, corr = data
    expected = _expected(judgments, corr, unparsed="incorrect", elo_k=4.0)
    res = accuracy_alignment(judgments, corr, bootstrap=0, elo_k=4.0, unparsed="incorrect")
    got = _table(res.table.to_dict(orient="records"))
    for key in [("elo", s) for s in ("all", "discriminative", "non-discriminative")] + [("bt", "discriminative")]:
        for f in FIGS:
            assert got[key][f] == pytest.approx(expected[key][f], abs=1e-9), (key, f)


def test_a_separated_subset_is_fitted_with_the_ridge_or_reported_never_dropped():
    # a judge that always picks the correct answer: on discriminative pairs the most accurate model can win
    # every game it plays -> the plain BT MLE does not exist there.
    judgments, corr = clb_data(n_models=6, n_questions=12, seed=1, p_correct_wins=1.0, unparsed=0.0)
    ridge = _table(accuracy_alignment(judgments, corr, bootstrap=0).table.to_dict(orient="records"))
    assert ridge[("bt", "discriminative")]["n_models"] == 6
    assert ridge[("bt", "discriminative")]["kendall_tau_b"] is not None
    plain = accuracy_alignment(judgments, corr, bootstrap=0, bt_l2=0.0)
    row = _table(plain.table.to_dict(orient="records"))[("bt", "discriminative")]
    assert row["note"].startswith("not estimable") and "infinite" in row["note"]
    assert "bt (discriminative pairs)" in plain.skipped
    auto = _table(accuracy_alignment(judgments, corr, bootstrap=0, bt_l2=None).table.to_dict(orient="records"))
    assert "separated" in auto[("bt", "discriminative")]["note"]


def test_rank_winshare_is_the_papers_winrate_on_all_pairs_and_needs_no_anchor(data, tmp_path):
    # CLB App. C WinRate: share of all games won; on an all-pairs set no model is in every row, so the anchor
    # win rate cannot run, and before winshare `rank` had no way to compute it.
    from tests.support.clb import oracle_winshare

    judgments, _ = data
    judgments = judgments.copy()
    judgments.loc[judgments.index[::17], "outcome"] = 0.5  # a few ties: half a win each
    path = tmp_path / "j.jsonl"
    judgments.to_json(path, orient="records", lines=True)
    out = cli_json("rank", str(path), "--method", "winshare", "--bootstrap", "30", "--json")
    expected = oracle_winshare(judgments)
    rows = {r["model"]: r for r in out}
    assert set(rows) == set(expected)
    for m, share in expected.items():
        assert rows[m]["score"] == pytest.approx(100 * share, abs=1e-9)
        assert rows[m]["ci_low"] <= rows[m]["score"] <= rows[m]["ci_high"]

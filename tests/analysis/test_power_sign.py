"""The sign-test sample sizes reproduce Anchor Table 2 (normal approximation) and the exact binomial is labelled."""

import math

import pytest

from judgewise.analysis.power import (sign_test_n_exact, sign_test_power_exact, sign_test_sample_size,
                                      total_with_ties)
from tests.support import cli_json

WIN_RATES = [0.55, 0.60, 0.65, 0.70, 0.75]
# Anchor Table 2, as printed (the 341 is discussed in the test below).
TABLE2_BASE = [617, 153, 67, 37, 23]
TABLE2_TIES39 = [1012, 251, 110, 61, 38]
TABLE2_TIES55 = [1372, 340, 149, 83, 52]


@pytest.mark.parametrize("k", range(5))
def test_normal_approximation_reproduces_table2(k):
    w = WIN_RATES[k]
    assert sign_test_sample_size(w, 0.0).n_informative == TABLE2_BASE[k]
    assert sign_test_sample_size(w, 0.39).n_total == TABLE2_TIES39[k]
    assert sign_test_sample_size(w, 0.55).n_total == TABLE2_TIES55[k]


def test_paper_341_is_a_floating_point_artefact_and_true_value_is_340():
    # Table 2 prints 341 for 153 informative prompts at 55% ties: ceil(153 / (1 - 0.55)) in floating point,
    # because 1 - 0.55 = 0.44999999999999996 < 0.45. Exactly, 153 / 0.45 = 340.
    assert 1 - 0.55 < 0.45
    assert math.ceil(153 / (1 - 0.55)) == 341
    assert 153 * 100 % 45 == 0 and 153 * 100 // 45 == 340
    assert total_with_ties(153, 1 - 0.55) == 340


def test_exact_binomial_size_is_the_first_n_reaching_the_power():
    for w in WIN_RATES:
        n = sign_test_n_exact(w)
        assert sign_test_power_exact(n, w)[0] >= 0.8
        assert all(sign_test_power_exact(m, w)[0] < 0.8 for m in range(max(1, n - 30), n))
        res = sign_test_sample_size(w, method="exact")
        assert res.n_informative == n and res.method == "exact"


def test_exact_test_respects_alpha_under_the_null():
    assert all(p <= 0.05 for p in sign_test_power_exact(range(5, 400), 0.5))


def test_cli_power_sign_json_reports_both_methods_labelled():
    out = cli_json("power", "sign", "--win-rate", "0.55", "--tie-rate", "0.39", "--json")
    assert (out["n_informative"], out["n_total"]) == (617, 1012)
    assert "normal approximation" in out["label"]
    assert "exact binomial" in out["exact"]["label"] and out["exact"]["n_informative"] >= 617
    exact = cli_json("power", "sign", "--win-rate", "0.6", "--tie-rate", "0.55", "--exact", "--json")
    assert exact["method"] == "exact" and exact["normal"]["n_total"] == 340


def test_cli_power_sign_rejects_win_rate_at_or_below_half(cli):
    res = cli("power", "sign", "--win-rate", "0.5")
    assert res.returncode == 2 and "win_rate" in res.stderr

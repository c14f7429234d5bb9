"""Issue 12: ``judgewise evaluate`` / ``judgewise.evaluate`` — rounds through the real engine (simulated judge,
SQLite store), stops at the target or the budget, reruns pay nothing, the CLI's one-line errors and JSON shape."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

import judgewise
from judgewise.errors import ConfigError
from judgewise.designs.ranking_posterior import adjacent_separation, expected_kendall_tau
from judgewise.pipeline.targets import DEFAULT_MARGIN_ELO, parse_target
from judgewise.ratings.bradley_terry import ELO_SCALE
from tests.support import cli_json, run_cli
from tests.support.evaluating import evaluate_config as _config, evaluate_yaml as _yaml_config
from tests.support.evaluating import realised_tau as _realised_tau


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """The default simulated evaluate (8 models, 100 prompts, a Kendall τ 0.9 target) run once to its stop: its
    folder (``_config(folder)`` is its config again) and its result."""
    folder = tmp_path_factory.mktemp("finished")
    return folder, judgewise.evaluate(_config(folder), bootstrap=50)


def test_evaluate_stops_by_itself_on_the_kendall_tau_target_and_ranks_close_to_the_truth(finished):
    result = finished[1]
    assert result.stopped == "target" and result.design == "adaptive"
    assert result.expected_tau >= 0.9
    assert result.calls < 8 * 7 // 2 * 100  # far fewer than all pairs on all prompts
    assert _realised_tau(result, 8) >= 0.6  # loose: one seed of a noisy judge
    assert result.trust["bt_l2"] > 0 and result.trust["calls"] == result.calls
    assert any("plan" in reason for reason in result.reasons)  # design: auto says why


def test_a_rerun_of_a_finished_evaluate_makes_zero_calls_and_gives_the_same_ranking(finished):
    folder, first = finished
    again = judgewise.evaluate(_config(folder), bootstrap=50)
    assert first.paid_calls == first.calls > 0
    assert again.paid_calls == 0 and again.calls == first.calls and again.stopped == first.stopped
    assert again.ranking.models == first.ranking.models
    np.testing.assert_allclose(again.ranking.scores, first.ranking.scores)


def test_the_budget_stops_an_evaluate_and_says_budget(tmp_path):
    result = judgewise.evaluate(_config(tmp_path, budget={"max_calls": 40}, target={"kendall_tau": 0.99}),
                                bootstrap=0)
    assert result.stopped == "budget" and 0 < result.calls <= 40


def test_a_single_shot_design_is_judged_in_prompt_chunks_and_stops_at_the_target(tmp_path):
    cfg = _config(tmp_path, n_models=4, gap=150.0, design={"name": "all_pairs"}, orders="both")
    result = judgewise.evaluate(cfg, bootstrap=0)
    assert result.stopped == "target" and result.design == "all_pairs"
    assert 0 < result.calls < 2 * 6 * 100 and result.calls % 2 == 0  # both orders of whole comparisons
    assert result.trust["swap_consistency"]["n"] > 0  # both orders exist, so swap consistency is reported


def test_without_a_target_a_single_shot_design_runs_to_exhaustion(tmp_path):
    cfg = _config(tmp_path, n_models=3, n_prompts=10, design={"name": "quadratic"})
    del cfg["target"]
    result = judgewise.evaluate(cfg, bootstrap=0)
    assert result.stopped == "exhausted" and result.calls == 3 * 10


def test_an_anchor_design_reports_the_anchors_informativeness(tmp_path):
    result = judgewise.evaluate(_config(tmp_path, n_prompts=40, design={"name": "anchor", "anchor": "m3"}),
                                bootstrap=0)
    assert result.design == "anchor" and result.calls <= 7 * 40
    assert 0 < result.trust["anchor_informativeness"]["m3"] < 1


def test_design_auto_with_three_models_compares_all_pairs_and_says_why(tmp_path):
    result = judgewise.evaluate(_config(tmp_path, n_models=3, n_prompts=30, gap=200.0), bootstrap=0)
    assert result.design == "all_pairs" and "all pairs" in result.reasons[0]


def test_the_separated_target_stops_when_adjacent_pairs_are_separated(tmp_path):
    cfg = _config(tmp_path, n_models=4, gap=250.0, target={"separated": 0.9})
    result = judgewise.evaluate(cfg, bootstrap=0)
    assert result.stopped == "target"
    assert result.ranking.models[int(np.argmax(result.ranking.scores))] == "m3"


def test_expected_kendall_tau_is_one_when_certain_and_zero_when_the_fit_knows_nothing():
    theta = np.array([3.0, 2.0, 1.0, 0.0])
    assert expected_kendall_tau(theta, np.eye(4) * 1e-8) == pytest.approx(1.0)
    assert expected_kendall_tau(np.zeros(4), np.eye(4)) == pytest.approx(0.0)
    tied = adjacent_separation(np.zeros(2), np.eye(2) * 1e-6, 0.95, 10.0 / ELO_SCALE)
    assert tied.tolist() == [2]  # tied within ±10 Elo


@pytest.mark.parametrize("target, words", [({"kendal_tau": 0.9}, "did you mean 'kendall_tau'"),
                                           ({"kendall_tau": 1.5}, "target.kendall_tau = 1.5"),
                                           ({"separated": 0.3}, "target.separated = 0.3"),
                                           ("tau", "target")])
def test_bad_target_keys_are_one_line_errors(tmp_path, target, words):
    cfg = _yaml_config(tmp_path, target=target)
    res = run_cli("evaluate", "-c", cfg, "--json", cwd=tmp_path, timeout=120)
    assert res.returncode != 0 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], res.stderr


def test_parse_target_takes_a_margin_for_either_target_and_refuses_an_empty_target():
    assert parse_target({"kendall_tau": 0.9, "margin": 5}).margin == 5.0
    assert parse_target({"kendall_tau": 0.9}).margin == DEFAULT_MARGIN_ELO
    with pytest.raises(ConfigError, match="names no target"):
        parse_target({"margin": None})


def test_evaluate_json_has_the_documented_shape_and_a_rerun_pays_nothing(tmp_path):
    cfg = _yaml_config(tmp_path)
    out = cli_json("evaluate", "-c", cfg, "--json", "--bootstrap", "100", cwd=tmp_path, timeout=300)
    assert set(out) == {"ranking", "calls", "stopped", "design", "trust"}
    assert [set(r) for r in out["ranking"]] == [{"model", "score", "ci_low", "ci_high", "rank", "n"}] * 6
    assert out["stopped"] == "target" and out["design"] == "adaptive" and out["calls"] > 0
    assert out["trust"]["paid_calls_this_run"] == out["calls"]
    again = cli_json("evaluate", "-c", cfg, "--json", "--bootstrap", "100", cwd=tmp_path, timeout=300)
    assert again["trust"]["paid_calls_this_run"] == 0 and again["ranking"] == out["ranking"]


def test_evaluate_prints_the_ranking_and_the_trust_block_and_writes_the_report(tmp_path):
    cfg = _yaml_config(tmp_path)
    res = run_cli("evaluate", "-c", cfg, "--bootstrap", "50", "--report", tmp_path / "out.html", cwd=tmp_path,
                  timeout=300)
    assert res.returncode == 0, res.stderr
    for words in ("design adaptive:", "95% CI", "stopped: target", "P(Kendall τ ≥ 0.85) = ",
                  "for all pairs in one order", "position bias"):
        assert words in res.stdout, res.stdout
    assert (tmp_path / "out.html").stat().st_size > 1000
    assert "evaluating" not in res.stderr  # no progress bar when stderr is not a terminal


@pytest.mark.slow
@pytest.mark.local
def test_the_embedded_judge_runs_evaluate_end_to_end_offline(tmp_path):
    """Plumbing only: the 270M judge's verdicts mean nothing (it picks the first-shown answer)."""
    pytest.importorskip("llama_cpp", reason="embedded judge extra not installed: pip install 'judgewise[local]'")
    from tests.support import REPO

    cfg = {"responses": str(REPO / "examples" / "alpacaeval"), "models": ["claude-2", "alpaca-7b", "falcon-7b-instruct"],
           "max_prompts": 2, "judge": {"backend": "local"}, "store": str(tmp_path / "local.sqlite"),
           "target": {"kendall_tau": 0.9}}
    result = judgewise.evaluate(cfg, bootstrap=20)
    assert result.design == "all_pairs" and result.stopped in ("target", "exhausted")
    assert result.calls == result.paid_calls == 2 * 3 * 2 and len(result.ranking.models) == 3
    assert result.trust["position_bias_first_shown_wins"]["n"] > 0


def test_all_pairs_total_of_the_trust_line_counts_every_turn_with_turns_all(tmp_path):
    """turns: all judges each user turn of a multi-turn prompt: all pairs in both orders is 2 × pairs × Σ turns, and
    a run of all of them is 100% of it (not 200%, as a total of one game per prompt said)."""
    from judgewise.commands.text import trust_lines

    n_turns = {f"p{p}": 1 + p % 3 for p in range(6)}  # 1, 2 or 3 user turns
    models = ["m0", "m1", "m2"]
    rows = [{"prompt_id": p, "model": m, "text": f"{m} on {p} turn 1",
             "turns": [f"{m} on {p} turn {t + 1}" for t in range(k)],
             "prompt_turns": [f"question {p} turn {t + 1}" for t in range(k)]}
            for p, k in n_turns.items() for m in models]
    cfg = {**_config(tmp_path, n_models=3), "responses": pd.DataFrame(rows), "design": {"name": "all_pairs"},
           "orders": "both"}
    del cfg["target"]
    pairs = len(models) * (len(models) - 1) // 2
    for turns, per_prompt in (("all", sum(n_turns.values())), ("first", len(n_turns))):
        result = judgewise.evaluate({**cfg, "turns": turns}, bootstrap=0)
        assert result.stopped == "exhausted" and result.calls == 2 * pairs * per_prompt
        assert result.trust["all_pairs_both_orders_calls"] == result.calls
        line = next(x for x in trust_lines(result) if x.startswith("calls:"))
        assert f"calls: {result.calls} of {result.calls} for all pairs in both orders (100.0%)" in line

"""Issue 12: ``design: {name: anchor, anchor: auto}`` — evaluate's Anchor §5.3 pilot through the real engine and
store (simulated judge, SQLite): all pairs on a few prompts, counted in the calls, the most informative anchor
chosen (Anchor §4.3 on 5-way verdicts, margins kept) with its reason, then the anchor design on the other prompts."""

from __future__ import annotations

import pytest

import judgewise
from judgewise.analysis.anchor_selection import report_from_judgments
from judgewise.analysis.planning import PILOT_PROMPTS
from judgewise.errors import ConfigError
from tests.support.evaluating import evaluate_config as _config

N_MODELS, N_PROMPTS = 6, 40


def _pilot_config(tmp_path, **design):
    cfg = _config(tmp_path, n_models=N_MODELS, n_prompts=N_PROMPTS, design={"name": "anchor", "anchor": "auto",
                                                                              **design})
    del cfg["target"]  # run the anchor design to the end: every count below is then exact
    return cfg


def test_anchor_auto_pilots_all_pairs_then_runs_the_anchor_design_on_the_other_prompts(tmp_path):
    result = judgewise.evaluate(_pilot_config(tmp_path, pilot_prompts=5), bootstrap=0)
    pilot = result.trust["anchor_pilot"]
    pairs = N_MODELS * (N_MODELS - 1) // 2
    assert pilot["n_prompts"] == 5 and pilot["calls"] == 5 * pairs
    assert result.calls == result.paid_calls == 5 * pairs + (N_PROMPTS - 5) * (N_MODELS - 1)
    assert result.design == "anchor" and result.design_options["anchor"] == pilot["anchor"]
    assert any(reason.startswith("anchor pilot:") and pilot["anchor"] in reason for reason in result.reasons)
    assert pilot["anchor"] in result.trust["anchor_informativeness"]


def test_the_pilot_chooses_the_candidate_with_the_highest_5way_informativeness_on_its_games(tmp_path):
    result = judgewise.evaluate(_pilot_config(tmp_path), bootstrap=0)
    pilot = result.trust["anchor_pilot"]
    assert pilot["n_prompts"] == PILOT_PROMPTS  # the plan's pilot size by default
    judged = result.judgments
    pilot_games = judged[judged["prompt_id"].map(judged["prompt_id"].value_counts()) > N_MODELS - 1]
    oracle = {m: report_from_judgments(pilot_games, m).informativeness_5way for m in result.ranking.models}
    assert pilot["scale"] == "5-way verdicts"  # the simulated judge gives 5-way verdicts: margins are kept
    assert oracle[pilot["anchor"]] == pytest.approx(max(oracle.values()))
    assert {c["anchor"]: c["informativeness_5way"] for c in pilot["candidates"]} == pytest.approx(oracle)


def test_a_rerun_of_an_anchor_auto_evaluate_pays_nothing_and_picks_the_same_anchor(tmp_path):
    first = judgewise.evaluate(_pilot_config(tmp_path, pilot_prompts=4), bootstrap=0)
    again = judgewise.evaluate(_pilot_config(tmp_path, pilot_prompts=4), bootstrap=0)
    assert again.paid_calls == 0 and again.calls == first.calls
    assert again.design_options["anchor"] == first.design_options["anchor"]


def test_a_budget_smaller_than_the_pilot_stops_in_the_pilot_and_says_budget(tmp_path):
    cfg = _pilot_config(tmp_path, pilot_prompts=5)
    cfg["budget"] = {"max_calls": 20}
    with pytest.raises(ConfigError, match="judged no game"):
        judgewise.evaluate(cfg, bootstrap=0)


@pytest.mark.parametrize("bad, words", [({"pilot_prompts": 0}, "pilot_prompts"),
                                        ({"pilot_prompts": "ten"}, "pilot_prompts"),
                                        ({"piloot": 3}, "unknown option")])
def test_bad_pilot_options_are_one_line_errors_naming_the_key(tmp_path, bad, words):
    with pytest.raises(ConfigError, match=words):
        judgewise.evaluate(_pilot_config(tmp_path, **bad), bootstrap=0)


def test_the_pilot_pays_what_plan_says_its_pilot_costs(tmp_path):
    from judgewise.analysis.planning import PlanInputs, plan

    result = judgewise.evaluate(_pilot_config(tmp_path), bootstrap=0)  # orders: one, the default pilot size
    assert result.trust["anchor_pilot"]["calls"] == plan(PlanInputs(n_models=N_MODELS)).pilot_calls

"""Issue 33: ``evaluate`` with a panel of judges — every round judged by each member (its own judge identity,
stored calls and cost cap), the panel's derived verdicts read by the design, the fit and the stop, the trust block's
panel part; a rerun pays nothing, and a SIGKILLed panel evaluate resumes paying nothing twice."""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest
import yaml

import judgewise
import judgewise.pipeline.target_rounds as target_rounds
from judgewise.analysis.panel import panel_verdicts
from judgewise.errors import ConfigError
from judgewise.pipeline.config import load_config
from judgewise.pipeline.job import load_pool
from judgewise.pipeline.panel_rounds import panel_engine, panel_job
from judgewise.store.opening import open_store
from tests.support import cli_json
from tests.support.evaluating import simulated_responses
from tests.support.fault_server import FaultServer
from tests.support.judging import MODEL, sigkill_mid_run, write_responses

RATINGS = {f"m{i}": 1000.0 + 80 * i for i in range(5)}


def _panel_config(tmp_path, rule: str = "majority", **extra) -> dict:
    """Three simulated judges with different biases, each its own seed, on 5 models and 40 prompts."""
    members = [{"backend": "simulated", "name": name, "ratings": RATINGS, "seed": seed, "p_judge": 0.85, **bias}
               for name, seed, bias in (("pos", 1, {"position_bias": 0.2}), ("len", 2, {"length_bias": 0.2}),
                                        ("hedge", 3, {"tie_rate": 0.2}))]
    return {"responses": simulated_responses(len(RATINGS), 40), "store": str(tmp_path / "s.sqlite"),
            "judge": {"panel": members, "rule": rule}, "target": {"kendall_tau": 0.9}, **extra}


def _games_by_judge(store) -> dict:
    with sqlite3.connect(store) as db:
        return dict(db.execute("SELECT judge, COUNT(*) FROM games GROUP BY judge").fetchall())


def test_a_panel_evaluate_judges_every_game_with_each_member_and_ranks_the_derived_verdicts(tmp_path):
    cfg = _panel_config(tmp_path, output=str(tmp_path / "members.jsonl"))
    result = judgewise.evaluate(cfg, bootstrap=0)
    panel = result.trust["panel"]
    assert panel["members"] == ["pos", "len", "hedge"] and panel["kappa"] is not None
    per_member = panel["member_calls"]["pos"]
    assert per_member > 0 and set(panel["member_calls"].values()) == {per_member}  # each member judged every game
    assert _games_by_judge(tmp_path / "s.sqlite") == {"pos": per_member, "len": per_member, "hedge": per_member}
    assert result.calls == result.trust["calls"] == 3 * per_member == result.paid_calls  # every member's call
    assert panel["member_paid_calls"] == panel["member_calls"]
    members = pd.read_json(tmp_path / "members.jsonl", lines=True)  # output: the members' judgments
    derived = panel_verdicts(members, ["pos", "len", "hedge"])
    assert len(result.judgments) == derived.n_comparisons == panel["n_comparisons"] == per_member
    assert result.judgments["outcome"].tolist() == derived.judgments["outcome"].tolist()
    again = judgewise.rank(derived.judgments, "bt", bootstrap=0, l2=result.l2)
    assert dict(zip(again.models, again.scores)) == pytest.approx(dict(zip(result.ranking.models,
                                                                           result.ranking.scores)))


@pytest.mark.slow
def test_a_rerun_of_a_panel_evaluate_pays_nothing_and_stops_at_the_same_place(tmp_path):
    cfg = _panel_config(tmp_path)
    first = judgewise.evaluate(cfg, bootstrap=0)
    again = judgewise.evaluate(cfg, bootstrap=0)
    assert first.paid_calls == first.calls > 0 and again.paid_calls == 0
    assert set(again.trust["panel"]["member_paid_calls"].values()) == {0}
    assert again.calls == first.calls and again.stopped == first.stopped
    assert again.ranking.models == first.ranking.models


def test_each_round_of_a_panel_is_one_bt_fit_of_the_panels_verdicts(tmp_path, monkeypatch):
    fitted = []
    real = target_rounds.fit_bt_arrays

    def counted(a, b, outcome, *args, **kwargs):
        fitted.append(len(outcome))
        return real(a, b, outcome, *args, **kwargs)

    monkeypatch.setattr(target_rounds, "fit_bt_arrays", counted)
    result = judgewise.evaluate(_panel_config(tmp_path, design={"name": "adaptive"}), bootstrap=0)
    assert result.summary["rounds"] > 3 and len(fitted) == result.summary["rounds"]  # one fit per round
    usable = int(result.judgments["outcome"].notna().sum())
    assert fitted[-1] == usable  # the last fit: the panel's verdicts, not the 3x as many members' rows
    assert fitted[-1] * 3 == result.calls


def test_a_round_of_the_panel_answers_the_design_with_the_derived_outcome_either_way_round(tmp_path):
    cfg = load_config({**_panel_config(tmp_path, rule="mean"), "design": {"name": "adaptive"}})
    pool = load_pool(cfg)
    job = panel_job(cfg, pool)
    prompt, a, b = np.array([0, 0, 1, 2]), np.array([0, 3, 1, 4]), np.array([3, 0, 2, 1])
    with open_store(cfg.store) as store:
        engine = panel_engine(job, pool, store)
        engine.run_options.update(orders="both")
        got = engine(prompt, a, b)
        members, labels = engine.member_judgments()
    assert labels == ["pos", "len", "hedge"] and len(members) == 4 * 2 * 3  # 4 comparisons, both orders
    for p, i, j, outcome in zip(prompt, a, b, got):
        x, y = pool.models[i], pool.models[j]
        rows = members[(members["prompt_id"] == pool.prompt_ids[p])
                       & (members["model_a"].isin([x, y])) & (members["model_b"].isin([x, y]))]
        as_x = np.where(rows["model_a"] == x, rows["outcome"], 1.0 - rows["outcome"])
        assert outcome == pytest.approx(as_x.mean())  # rule mean: every member's verdict, in x's view
    assert got[0] == pytest.approx(1.0 - got[1])  # the same pair asked the other way round


def test_a_panel_member_that_grades_alone_is_refused_before_any_call(tmp_path):
    cfg = _panel_config(tmp_path)
    cfg["judge"]["panel"][1] = {"backend": "openai", "model": MODEL, "base_url": "http://127.0.0.1:9/v1",
                                "mode": "single"}  # nothing listens there: a call would fail the test
    with pytest.raises(ConfigError, match=r"judge\.panel\[1\]\.mode single"):
        judgewise.evaluate(cfg)
    assert not (tmp_path / "s.sqlite").exists()


def test_the_cost_cap_holds_for_each_member_and_a_rerun_pays_no_call_twice(tmp_path):
    with FaultServer(seed=1) as one, FaultServer(seed=2) as two:
        cfg = _http_panel(tmp_path, one, two, n_prompts=20, budget={"max_cost": 3.0}, target={"kendall_tau": 0.99},
                          prices=[{"input_per_mtok": 500.0, "output_per_mtok": 500.0},
                                  {"input_per_mtok": 50.0, "output_per_mtok": 50.0}])
        args = ["evaluate", "-c", str(cfg), "--json", "--bootstrap", "0"]
        first = cli_json(*args, cwd=tmp_path, timeout=300)
        again = cli_json(*args, cwd=tmp_path, timeout=300)
        paid = [dict(one.successes), dict(two.successes)]
    cost = first["trust"]["panel"]["member_cost"]
    assert first["stopped"] == again["stopped"] == "budget" and 2.5 <= cost["judge-one"] <= 3.5  # started games end
    assert cost["judge-two"] < 0.5  # the cheap member is not stopped by the other's dollars
    assert first["trust"]["cost"] == pytest.approx(sum(cost.values()), abs=1e-5)
    assert all(set(p.values()) == {1} for p in paid)  # no call paid twice
    assert first["trust"]["paid_calls_this_run"] == sum(len(p) for p in paid)  # the first run paid every call
    # the rerun counts the cut round's stored games against each member's cap: same place, nothing paid
    assert again["calls"] == first["calls"] and again["trust"]["paid_calls_this_run"] == 0


def _http_panel(folder, one, two, *, n_prompts: int, prices=None, **extra):
    """A run.yaml: two OpenAI-compatible judges, one fake server each (so each counts one member's calls)."""
    write_responses(folder, n_prompts, ["m1", "m2", "m3", "m4"])
    members = [{"backend": "openai", "model": MODEL, "name": name, "base_url": srv.url, "template": "arena_hard_5way"}
               for name, srv in (("judge-one", one), ("judge-two", two))]
    for member, price in zip(members, prices or []):
        member["prices"] = price
    cfg = {"responses": "responses.jsonl", "store": "store.sqlite", "judge": {"panel": members},
           "limits": {"concurrency": 4, "timeout_s": 5, "base_delay_s": 0.01, "max_delay_s": 0.2}, **extra}
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_sigkilled_panel_evaluate_resumes_paying_nothing_twice(tmp_path):
    """The process is SIGKILLed while the second member judges a round (calls in flight); the rerun finishes the
    run, no call answered before is asked again, and a third run makes no call."""
    with FaultServer(latency_s=0.0, seed=1) as one, FaultServer(latency_s=0.02, seed=2) as two:
        cfg = _http_panel(tmp_path, one, two, n_prompts=30, target={"kendall_tau": 0.99}, budget={"max_calls": 120})
        args = ["evaluate", "-c", str(cfg), "--json", "--bootstrap", "50"]
        sigkill_mid_run(two, args, tmp_path, tmp_path / "store.sqlite", after_successes=20, timeout_s=120,
                        judge="judge-two")  # killed while the second member judges a round
        before = {"judge-one": one.total_successes(), "judge-two": two.total_successes()}
        two.thaw()
        resumed = cli_json(*args, cwd=tmp_path, timeout=300)
        again = cli_json(*args, cwd=tmp_path, timeout=300)
        paid = {"judge-one": dict(one.successes), "judge-two": dict(two.successes)}
    assert 0 < before["judge-two"] < 120 and resumed["stopped"] == "budget"
    for member in paid:
        assert set(paid[member].values()) == {1}  # no answered call of either member paid twice
        assert len(paid[member]) == resumed["trust"]["panel"]["member_calls"][member] <= 120
    assert resumed["trust"]["paid_calls_this_run"] == resumed["calls"] - sum(before.values())
    assert again["trust"]["paid_calls_this_run"] == 0 and again["calls"] == resumed["calls"]
    assert again["ranking"] == resumed["ranking"]




def test_a_members_failed_calls_leave_its_comparisons_to_the_others_and_are_counted(tmp_path):
    """One member's endpoint answers some calls with garbage (one attempt each): those games are stored as failed,
    the comparisons they leave are decided by the other member and counted as judged by some members only."""
    with FaultServer(seed=1) as one, FaultServer(rates={"garbage": 0.3}, seed=4) as two:
        cfg = _http_panel(tmp_path, one, two, n_prompts=10, design={"name": "all_pairs"})
        data = yaml.safe_load(cfg.read_text())
        data["limits"]["max_attempts"] = 1
        cfg.write_text(yaml.safe_dump(data), encoding="utf-8")
        out = cli_json("evaluate", "-c", str(cfg), "--json", "--bootstrap", "0", cwd=tmp_path, timeout=300,
                       env={"OPENAI_API_KEY": "x"})
    panel = out["trust"]["panel"]
    assert out["trust"]["failed"] > 0 and panel["n_incomplete"] == panel["missing_by_member"]["judge-two"] > 0
    assert panel["member_rows"]["judge-two"] == panel["member_calls"]["judge-two"] - out["trust"]["failed"]
    assert panel["n_comparisons"] == panel["member_calls"]["judge-one"] == 6 * 10 * 2  # every comparison decided

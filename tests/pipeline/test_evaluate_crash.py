"""Issue 12: an ``evaluate`` killed with SIGKILL mid-run resumes from the store — no call paid twice, the same
final ranking as an uninterrupted rerun — and a rerun of the finished evaluate makes zero calls."""

from __future__ import annotations


import pytest

from tests.support import cli_json
from tests.support.fault_server import FaultServer
from tests.support.judging import sigkill_mid_run, write_config


@pytest.mark.slow
def test_a_sigkilled_evaluate_resumes_without_paying_any_call_twice(tmp_path):
    models = ["m1", "m2", "m3", "m4"]
    with FaultServer(latency_s=0.02, seed=5) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=30, models=models, design="auto",
                              target={"kendall_tau": 0.99}, budget={"max_calls": 160}, limits={"concurrency": 4})
        args = ["evaluate", "-c", str(config), "--json", "--bootstrap", "50"]
        sigkill_mid_run(srv, args, tmp_path, tmp_path / "store.sqlite", after_successes=40, timeout_s=120)
        paid_before = srv.total_successes()
        srv.thaw()
        resumed = cli_json(*args, cwd=tmp_path, timeout=300)
        again = cli_json(*args, cwd=tmp_path, timeout=300)
        successes = dict(srv.successes)
    assert paid_before < 160 and resumed["stopped"] == "budget" and resumed["calls"] <= 160
    assert set(successes.values()) == {1}  # no successful call repeated across the kill and the reruns
    assert resumed["trust"]["paid_calls_this_run"] == resumed["calls"] - paid_before  # stored games not repaid
    assert again["trust"]["paid_calls_this_run"] == 0 and again["calls"] == resumed["calls"]
    assert again["ranking"] == resumed["ranking"]


def test_the_cost_budget_stops_an_evaluate_and_a_rerun_stops_at_the_same_place_for_free(tmp_path):
    with FaultServer(latency_s=0.0, seed=2) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=20, models=["m1", "m2", "m3", "m4"], design="auto",
                              target={"kendall_tau": 0.99}, budget={"max_cost": 0.05},
                              judge={"prices": {"input_per_mtok": 500.0, "output_per_mtok": 500.0}})
        args = ["evaluate", "-c", str(config), "--json", "--bootstrap", "0"]
        first = cli_json(*args, cwd=tmp_path, timeout=300)
        again = cli_json(*args, cwd=tmp_path, timeout=300)
    assert first["stopped"] == "budget" and first["trust"]["cost"] > 0
    assert first["calls"] <= 8  # one burn-in round (4 comparisons, both orders) passes the tiny cap, then it stops
    assert again["stopped"] == "budget" and again["calls"] == first["calls"]
    assert again["trust"]["paid_calls_this_run"] == 0


def test_a_cost_cap_reached_inside_a_round_stops_there_with_what_finished_counted(tmp_path):
    with FaultServer(latency_s=0.0, seed=2) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=20, models=["m1", "m2", "m3", "m4"], design="auto",
                              target={"kendall_tau": 0.99}, budget={"max_cost": 3.0},
                              judge={"prices": {"input_per_mtok": 500.0, "output_per_mtok": 500.0}})
        args = ["evaluate", "-c", str(config), "--json", "--bootstrap", "0"]
        out = cli_json(*args, cwd=tmp_path, timeout=300)
        again = cli_json(*args, cwd=tmp_path, timeout=300)
    assert out["stopped"] == "budget" and 8 < out["calls"] < 16  # the second round was cut by the cap
    assert out["trust"]["cost"] <= 3.0 + 0.5  # a started game always finishes and is stored
    # the rerun counts the cut round's stored games against the cap: it stops at the same place, paying nothing
    assert again["stopped"] == "budget" and again["calls"] == out["calls"]
    assert again["trust"]["paid_calls_this_run"] == 0 and again["trust"]["cost"] == pytest.approx(out["trust"]["cost"])

"""``judge: {panel: [...]}``: each member runs as its own judge through the engine (own stored calls, resumable,
never paid twice), the panel's verdicts are derived after; configs that cannot make a panel are refused."""

from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest
import yaml

from judgewise.analysis.panel import panel_verdicts
from judgewise.errors import ConfigError
from judgewise.pipeline.config import load_config
from judgewise.pipeline.run import PanelOutcome, run_config
from tests.support import run_cli
from tests.support.fault_server import FaultServer
from tests.support.judging import MODEL, sigkill_mid_run, write_responses

RATINGS = {"m0": 1000, "m1": 1100, "m2": 1200, "m3": 1300}


def _simulated_panel(tmp_path, **extra) -> dict:
    write_responses(tmp_path, 6, list(RATINGS))
    members = [{"backend": "simulated", "name": name, "ratings": RATINGS, "seed": seed, "p_judge": 0.8, **bias}
               for name, seed, bias in (("pos", 1, {"position_bias": 0.2}), ("len", 2, {"length_bias": 0.2}),
                                        ("hedge", 3, {"tie_rate": 0.2}))]
    return {"responses": str(tmp_path / "responses.jsonl"), "store": str(tmp_path / "s.sqlite"),
            "judge": {"panel": members, "rule": "majority"}, **extra}


def test_a_panel_runs_each_member_as_its_own_judge_and_a_rerun_pays_nothing(tmp_path):
    cfg = _simulated_panel(tmp_path, output=str(tmp_path / "members.jsonl"))
    first = run_config(cfg)
    assert isinstance(first, PanelOutcome) and first.panel.members == ["pos", "len", "hedge"]
    assert [m.summary["calls_made"] for m in first.members] == [72, 72, 72]  # 6 pairs x 6 prompts x 2 orders
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        assert db.execute("SELECT judge, COUNT(*) FROM games GROUP BY judge ORDER BY judge").fetchall() == [
            ("hedge", 72), ("len", 72), ("pos", 72)]  # the panel's verdicts are derived, never stored as calls
    members = pd.read_json(tmp_path / "members.jsonl", lines=True)
    again = panel_verdicts(members, ["pos", "len", "hedge"])
    assert again.judgments["outcome"].tolist() == first.panel.judgments["outcome"].tolist()
    assert first.panel.n_complete == 72 and first.panel.n_incomplete == 0
    rerun = run_config(cfg)
    assert [m.summary["calls_made"] for m in rerun.members] == [0, 0, 0]
    assert rerun.panel.judgments.equals(first.panel.judgments)


def test_a_panel_run_killed_mid_way_resumes_paying_nothing_twice(tmp_path):
    """Two HTTP judges (one endpoint each, so each endpoint counts one member's calls); the process is SIGKILLed
    while the second member is judging; the rerun finishes both and no call is answered twice."""
    models = ["m1", "m2", "m3"]
    write_responses(tmp_path, 20, models)
    with FaultServer(latency_s=0.0, seed=1) as one, FaultServer(latency_s=0.02, rates={"500": 0.05}, seed=2) as two:
        members = [{"backend": "openai", "model": MODEL, "name": name, "base_url": srv.url,
                    "template": "arena_hard_5way"} for name, srv in (("judge-one", one), ("judge-two", two))]
        cfg = {"responses": "responses.jsonl", "store": "store.sqlite", "design": "all_pairs",
               "judge": {"panel": members}, "limits": {"concurrency": 4, "timeout_s": 5, "base_delay_s": 0.01,
                                                       "max_delay_s": 0.2}}
        (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
        sigkill_mid_run(two, ["judge", "-c", "run.yaml", "--no-progress"], tmp_path, tmp_path / "store.sqlite",
                        after_successes=30, timeout_s=60, judge="judge-two")
        with sqlite3.connect(tmp_path / "store.sqlite") as db:
            by_judge = dict(db.execute("SELECT judge, COUNT(*) FROM games GROUP BY judge").fetchall())
        assert by_judge.get("judge-one") == 120 and 0 < by_judge.get("judge-two", 0) < 120  # killed in member 2
        two.thaw()
        res = run_cli("judge", "-c", "run.yaml", "--no-progress", "--json", cwd=tmp_path, timeout=120)
        assert res.returncode == 0, res.stderr
        paid_one, paid_two = dict(one.successes), dict(two.successes)
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert [m["calls_made"] for m in summary["members"]][0] == 0  # the first member was done: nothing asked again
    assert set(paid_one.values()) == {1} and set(paid_two.values()) == {1}  # no answered call paid twice
    assert len(paid_one) == len(paid_two) == 120
    assert summary["panel"]["n_complete"] == 120 and summary["panel"]["member_rows"] == {"judge-one": 120,
                                                                                        "judge-two": 120}




def test_a_bad_member_is_named_by_its_place_in_the_panel(tmp_path):
    cfg = _simulated_panel(tmp_path)
    cfg["judge"]["panel"][1]["p_judge"] = 2
    with pytest.raises(ConfigError, match=r"judge\.panel\[1\]\.p_judge = 2"):
        load_config(cfg)
    cfg = _simulated_panel(tmp_path)
    cfg["judge"]["panel"][2]["model"] = "gpt-4o"
    with pytest.raises(ConfigError, match=r"judge\.panel\[2\]\.model"):
        load_config(cfg)


@pytest.mark.parametrize("change, message", [
    (lambda c: c["judge"].update(panel=c["judge"]["panel"][:1]), "at least 2"),
    (lambda c: c["judge"]["panel"].append(dict(c["judge"]["panel"][0])), r"judge\.panel\[3\] repeats judge\.panel\[0\]"),
    (lambda c: c["judge"].update(rule="median"), "judge.rule"),
    (lambda c: c["judge"].update(quorum=2), "unknown key"),
])
def test_configs_that_make_no_panel_are_refused_before_any_call(tmp_path, change, message):
    cfg = _simulated_panel(tmp_path)
    change(cfg)
    with pytest.raises(ConfigError, match=message):
        run_config(cfg)
    assert not (tmp_path / "s.sqlite").exists()


def test_a_panel_needs_a_single_shot_design_and_evaluate_add_model_takes_one_judge(tmp_path):
    with pytest.raises(ConfigError, match="single-shot design"):
        run_config(_simulated_panel(tmp_path, design={"name": "tournament"}))
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(_simulated_panel(tmp_path)), encoding="utf-8")
    res = run_cli("evaluate", "-c", "run.yaml", "--add-model", "m3", cwd=tmp_path)
    assert res.returncode == 2 and "--add-model places a model into one judge's stored leaderboard" in res.stderr
    assert not (tmp_path / "s.sqlite").exists()

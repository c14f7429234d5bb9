"""``judge --dry-run`` of a multi-round design gives an upper-bound call, token and cost estimate (issue 12)."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.support import run_cli
from tests.support.judging import write_responses

MODELS = ["m0", "m1", "m2", "m3"]
JUDGE = {"base_url": "http://127.0.0.1:9/v1", "model": "gpt-x", "api_key_env": "NO_SUCH_KEY_JW",
         "prices": {"input_per_mtok": 1.0, "output_per_mtok": 4.0}}


@pytest.mark.parametrize("design, comparisons", [
    ({"name": "adaptive", "budget": 30}, 30),
    ({"name": "insert-binary", "leaderboard": ["m0", "m1", "m2"], "new_model": "m3"}, None),
    ({"name": "tournament"}, None),
])
def test_multi_round_dry_run_estimates_calls_tokens_and_cost_as_an_upper_bound(tmp_path, design, comparisons):
    write_responses(tmp_path, 10, MODELS)
    cfg = {"responses": "responses.jsonl", "store": "s.sqlite", "design": design, "judge": JUDGE}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg))
    res = run_cli("judge", "--config", "run.yaml", "--dry-run", "--json", cwd=tmp_path, env={"NO_SUCH_KEY_JW": "k"})
    assert res.returncode == 0, res.stderr
    plan = json.loads(res.stdout)["dry_run"]
    assert plan["upper_bound"] is True and plan["calls"] == plan["games"] == 2 * plan["comparisons"] > 0
    assert comparisons is None or plan["comparisons"] == comparisons
    assert plan["tokens_in"] > 0 and plan["tokens_out"] > 0 and plan["cost"] > 0
    assert "upper bound" in res.stderr and "calls" in res.stderr and "$" in res.stderr
    assert not (tmp_path / "s.sqlite").exists()  # a dry run creates no store


@pytest.mark.parametrize("design", [{"name": "all_pairs"}, {"name": "tournament"}])
def test_a_real_judge_run_prints_its_plan_not_a_dry_run_line(tmp_path, design):
    """The plan line before a real run says ``plan:``; ``dry run:`` only when --dry-run calls nothing."""
    write_responses(tmp_path, 6, MODELS)
    cfg = {"responses": "responses.jsonl", "store": "s.sqlite", "design": design, "orders": "both",
           "judge": {"backend": "simulated", "ratings": {m: 1000.0 + 50 * i for i, m in enumerate(MODELS)}}}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg))
    dry = run_cli("judge", "--config", "run.yaml", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stderr.startswith("dry run: ") and not (tmp_path / "s.sqlite").exists()
    real = run_cli("judge", "--config", "run.yaml", "--no-progress", cwd=tmp_path)
    assert real.returncode == 0, real.stderr
    assert "dry run" not in real.stdout + real.stderr
    plan = [line for line in real.stderr.splitlines() if line.startswith("plan: ")]
    assert len(plan) == 1 and plan[0].removeprefix("plan: ") == dry.stderr.strip().removeprefix("dry run: ")
    assert "judged" in real.stdout and (tmp_path / "s.sqlite").exists()


@pytest.mark.parametrize("design", [{"name": "all_pairs"}, {"name": "tournament"}])
def test_the_simulated_judges_plan_counts_the_calls_its_run_makes(tmp_path, design):
    """The simulated judge calls no model, but its run counts one call per game: the plan says as many (was 0)."""
    write_responses(tmp_path, 4, MODELS)
    judge = {"backend": "simulated", "ratings": {m: 1000 + 50 * i for i, m in enumerate(MODELS)}, "seed": 1}
    cfg = {"responses": "responses.jsonl", "store": "s.sqlite", "design": design, "judge": judge}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg))
    dry = run_cli("judge", "--config", "run.yaml", "--dry-run", "--json", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)["dry_run"]
    run = run_cli("judge", "--config", "run.yaml", "--json", "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    made = json.loads(run.stdout)["calls_made"]
    assert plan["calls"] == plan["games"] > 0 and (plan["calls"] == made if design["name"] == "all_pairs"
                                                   else plan["calls"] >= made > 0)
    assert (plan["tokens_in"], plan["cost"], plan["seconds"]) == (0, 0.0, 0.0) and "no model" in plan["basis"]

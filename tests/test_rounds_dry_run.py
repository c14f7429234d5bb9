"""``judge --dry-run`` of a multi-round design gives an upper-bound call, token and cost estimate (issue 12)."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import run_cli
from tests.judge_support import write_responses

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

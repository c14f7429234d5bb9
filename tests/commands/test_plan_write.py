"""``plan --write``, ``plan --informativeness`` and ``plan`` / ``anchors`` reading a judging store (issue 12)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from judgewise.pipeline import load_config
from tests.support import cli_json, run_cli
from tests.support.judging import write_responses

MODELS = ["m0", "m1", "m2", "m3", "m4"]


def _store(folder: Path) -> Path:
    """An all-pairs judging store made by ``judgewise judge`` with the simulated judge."""
    write_responses(folder, 12, MODELS)
    cfg = {"responses": "responses.jsonl", "store": "s.sqlite", "design": "all_pairs", "orders": "one",
           "judge": {"backend": "simulated", "ratings": {m: 1000 + 100 * i for i, m in enumerate(MODELS)},
                     "p_judge": 0.8, "seed": 3}}
    (folder / "run.yaml").write_text(yaml.safe_dump(cfg))
    res = run_cli("judge", "--config", "run.yaml", "--no-progress", cwd=folder)
    assert res.returncode == 0, res.stderr
    return folder / "s.sqlite"


def test_plan_write_writes_a_run_config_that_load_config_accepts(tmp_path):
    res = run_cli("plan", "--models", "8", "--write", "run.yaml", "--responses", "answers.jsonl", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    cfg = load_config(tmp_path / "run.yaml")
    plan = cli_json("plan", "--models", "8", "--json")
    assert cfg.design == {"name": "adaptive", "budget": plan["judge_calls"] + plan["pilot_calls"]}
    assert cfg.max_prompts == plan["n_prompts"] and cfg.target == {"kendall_tau": 0.9}
    assert cfg.responses.endswith("answers.jsonl") and "run config written" in res.stdout
    run_cli("plan", "--models", "6", "--natural-baseline", "gpt4", "--write", "b.yaml", cwd=tmp_path)
    assert load_config(tmp_path / "b.yaml").design == {"name": "anchor", "anchor": "gpt4"}


def test_plan_takes_a_measured_informativeness(tmp_path):
    default = cli_json("plan", "--models", "8", "--json")
    low = cli_json("plan", "--models", "8", "--informativeness", "0.3", "--json")
    assert low["informativeness"] == 0.3 and low["n_prompts"] > default["n_prompts"]


def test_anchors_and_plan_read_a_judging_store(tmp_path):
    store = _store(tmp_path)
    anchors = cli_json("anchors", store, "--json")
    assert anchors["pilot"]["recommended"] in MODELS
    res = run_cli("plan", store, "--write", "next.yaml", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    plan = json.loads(res.stdout)
    assert plan["measured"]["anchor"] == anchors["pilot"]["recommended"] and plan["written"].endswith("next.yaml")
    assert plan["informativeness"] == plan["measured"]["informativeness"]
    cfg = load_config(tmp_path / "next.yaml")
    assert cfg.design == {"name": "anchor", "anchor": anchors["pilot"]["recommended"]}
    text = run_cli("plan", store, cwd=tmp_path).stdout
    assert f"measured from {store}: 5 models" in text and "informativeness" in text

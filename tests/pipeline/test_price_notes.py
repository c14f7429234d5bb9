"""Costs a user can trust (issue 32): a model no price table names shows "no price known" wherever a cost is shown
(judge --dry-run and its summary, generate's plan and summary, --json), and a ``prices.file`` is the file beside the
config that names it, wherever the command runs."""

from __future__ import annotations

import json

import pytest

from judgewise.pipeline.generate_config import build_generator, load_generate_config
from tests.support import cli_json, run_cli
from tests.support.fault_server import FaultServer
from tests.support.generation import server, write_gen_config, write_questions
from tests.support.judging import write_config

TABLE = "as_of: 2026-01-31\nmodels:\n  {model}: {{input_per_mtok: {rate}, output_per_mtok: {rate}}}\n"


def test_judge_dry_run_and_summary_say_the_judges_model_has_no_price(tmp_path):
    with FaultServer() as srv:  # its model, judge-model, is in no price table
        config = write_config(tmp_path, srv.url, n_prompts=2, models=["a", "b"])
        dry = run_cli("judge", "-c", str(config), "--dry-run", cwd=tmp_path)
        as_json = cli_json("judge", "-c", str(config), "--dry-run", "--json", cwd=tmp_path)
        run = run_cli("judge", "-c", str(config), cwd=tmp_path)
        summary = cli_json("judge", "-c", str(config), "--json", cwd=tmp_path)
    assert dry.returncode == 0 and "~$0.0000 (no price known for judge-model: counted as $0" in dry.stderr
    assert as_json["dry_run"]["price_known"] is False
    assert run.returncode == 0 and "$0.0000 (no price known for judge-model" in run.stdout
    assert summary["no_price_known"] == ["judge-model"] and "counted as $0" in summary["price_note"]


def test_a_priced_judge_shows_no_such_note(tmp_path):
    (tmp_path / "p.yaml").write_text(TABLE.format(model="judge-model", rate=1.0))
    with FaultServer() as srv:
        config = write_config(tmp_path, srv.url, n_prompts=2, models=["a", "b"], judge={"prices": {"file": "p.yaml"}})
        as_json = cli_json("judge", "-c", str(config), "--dry-run", "--json", cwd=tmp_path)
        summary = cli_json("judge", "-c", str(config), "--json", cwd=tmp_path)
    assert as_json["dry_run"]["price_known"] is True and as_json["dry_run"]["cost"] > 0
    assert "no_price_known" not in summary and summary["cost"] > 0


def test_generate_plan_and_summary_name_the_models_without_a_price(tmp_path):
    write_questions(tmp_path, 2, turns=1)
    with server() as srv:
        config = write_gen_config(tmp_path, srv.url)
        dry = run_cli("generate", "-c", str(config), "--dry-run", cwd=tmp_path)
        dry_json = cli_json("generate", "-c", str(config), "--dry-run", "--json", cwd=tmp_path)
        summary = cli_json("generate", "-c", str(config), "--json", cwd=tmp_path)
    assert dry.returncode == 0 and "no price known for alpha, beta: counted as $0" in dry.stderr
    assert dry_json["dry_run"]["no_price_known"] == summary["no_price_known"] == ["alpha", "beta"]


def test_a_generate_configs_prices_file_is_read_beside_the_config_wherever_it_runs(tmp_path, monkeypatch):
    folder = tmp_path / "cfg"
    folder.mkdir()
    (folder / "p.yaml").write_text(TABLE.format(model="m", rate=2.0))
    (tmp_path / "p.yaml").write_text(TABLE.format(model="m", rate=900.0))  # a decoy in the working folder
    config = folder / "gen.yaml"
    config.write_text("prompts: q.jsonl\nmodels:\n  - {name: m, model: m, base_url: 'http://127.0.0.1:9/v1', "
                      "prices: {file: p.yaml}}\n")
    monkeypatch.chdir(tmp_path)
    cfg = load_generate_config(config)
    assert cfg.models[0]["prices"]["file"] == str(folder / "p.yaml")
    assert build_generator(cfg.models[0]).backend.prices.input_per_mtok == 2.0


def test_plan_prices_an_unlisted_model_at_nothing_and_says_so():
    out = cli_json("plan", "--models", "5", "--tokens-in", "1000", "--judge-model", "o3-pro", "--json")
    assert out["cost"]["price_known"] is False and out["cost"]["live"] == 0.0
    text = run_cli("plan", "--models", "5", "--tokens-in", "1000", "--judge-model", "o3-pro")
    assert "no price known for o3-pro: counted as $0" in text.stdout and "[prices:" not in text.stdout


@pytest.mark.parametrize("flag", ["--tokens-in", "--tokens-out", "--shared-tokens"])
def test_plan_refuses_a_token_count_beyond_any_context_window(flag):
    args = {"--tokens-in": "100", "--tokens-out": "1", "--shared-tokens": "0", flag: str(10**9 + 1)}
    res = run_cli("plan", "--models", "5", *[x for kv in args.items() for x in kv])
    assert res.returncode == 2 and f"{flag} must be 0 to 1,000,000,000" in res.stderr and not res.stdout


def test_every_json_of_a_priced_dry_run_is_strict(tmp_path):
    (tmp_path / "p.yaml").write_text(TABLE.format(model="judge-model", rate=10_000.0))  # the largest price
    with FaultServer() as srv:
        config = write_config(tmp_path, srv.url, n_prompts=2, models=["a", "b"], judge={"prices": {"file": "p.yaml"}})
        res = run_cli("judge", "-c", str(config), "--dry-run", "--json", cwd=tmp_path)
    json.loads(res.stdout, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))


def test_evaluate_trust_block_says_the_judges_model_has_no_price(tmp_path):
    with FaultServer() as srv:
        config = write_config(tmp_path, srv.url, n_prompts=3, models=["m1", "m2", "m3"])
        out = cli_json("evaluate", "-c", str(config), "--json", "--bootstrap", "0", cwd=tmp_path, timeout=300)
        text = run_cli("evaluate", "-c", str(config), "--bootstrap", "0", cwd=tmp_path, timeout=300)
    assert out["trust"]["no_price_known"] == ["judge-model"]
    assert text.returncode == 0 and "cost $0.0000 (no price known for judge-model: counted as $0" in text.stdout


def test_a_cost_cap_on_a_model_without_a_price_is_refused_before_any_call(tmp_path):
    write_questions(tmp_path, 2, turns=1)
    with FaultServer() as srv, server() as gen_srv:
        config = write_config(tmp_path, srv.url, n_prompts=2, models=["a", "b"], budget={"max_cost": 1.0})
        judged = run_cli("judge", "-c", str(config), cwd=tmp_path)
        gen_config = write_gen_config(tmp_path, gen_srv.url, budget={"max_cost": 1.0})
        generated = run_cli("generate", "-c", str(gen_config), cwd=tmp_path)
        capped = run_cli("judge", "-c", str(config), "--max-cost", "2", cwd=tmp_path)
        assert sum(srv.requests.values()) == 0 and sum(gen_srv.requests.values()) == 0
    assert judged.returncode == 2 and "budget.max_cost = 1 cannot stop this run: no price known for judge-model" \
        in judged.stderr
    assert generated.returncode == 2 and "no price known for alpha, beta" in generated.stderr
    assert capped.returncode == 2 and "budget.max_cost = 2" in capped.stderr
    assert not (tmp_path / "store.sqlite").exists() and not (tmp_path / "gens.sqlite").exists()

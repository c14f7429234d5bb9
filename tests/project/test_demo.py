"""`judgewise demo` and the shipped run configs of the main job: evaluate on replayed GPT-4-turbo verdicts stops at its
target with fewer calls than all pairs; the simulated config recovers its true order's top; the embedded judge judges,
stores and resumes (local mark)."""

from __future__ import annotations

import importlib.util
import json
import re
import sqlite3

import pandas as pd
import pytest
import yaml

from judgewise.pipeline.config import load_config
from judgewise.commands.demo import EMBEDDED_CONFIG, REAL_JUDGE_HINT, REPLAY_CONFIG, find_examples

from tests.support import REPO, run_cli

EXAMPLES = REPO / "examples"
pytestmark = pytest.mark.skipif(not (EXAMPLES / "alpacaeval" / "results").is_dir(),
                                reason="examples/alpacaeval slice not in the repo")


def evaluate_json(config: str, store, *extra: str) -> dict:
    res = run_cli("evaluate", "--config", config, "--store", str(store), "--bootstrap", "0", "--json", *extra,
                  cwd=REPO)  # from the repo root, as the configs' comments say
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_the_pairwise_verdicts_file_is_what_its_script_makes_from_the_slice():
    spec = importlib.util.spec_from_file_location("make_pairwise", EXAMPLES / "make_alpacaeval_pairwise.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    shipped = pd.read_parquet(EXAMPLES / "alpacaeval-pairwise.parquet")
    pd.testing.assert_frame_equal(shipped, script.pairwise_rows(), check_categorical=False)
    one_order = shipped[shipped["first"] == shipped["model_a"]]
    other = shipped[shipped["first"] == shipped["model_b"]]
    assert len(one_order) == len(other) and one_order["outcome"].to_list() == other["outcome"].to_list()


@pytest.mark.slow
def test_evaluate_replay_config_stops_at_its_target_with_fewer_calls_than_all_pairs(tmp_path):
    cfg = load_config(EXAMPLES / REPLAY_CONFIG)
    result = evaluate_json("examples/evaluate-replay.yaml", tmp_path / "replay.sqlite")
    trust = result["trust"]
    n = len(cfg.models)
    assert result["stopped"] == "target" and trust["expected_kendall_tau"] >= cfg.target["kendall_tau"]
    assert trust["all_pairs_calls"] == n * (n - 1) // 2 * 805 and trust["orders"] == "one"
    assert 0 < result["calls"] < trust["all_pairs_calls"] and trust["failed"] == 0
    assert sorted(r["model"] for r in result["ranking"]) == sorted(cfg.models)


@pytest.mark.slow
def test_evaluate_simulated_config_stops_at_its_target_and_puts_the_truest_best_model_on_top(tmp_path):
    cfg = load_config(EXAMPLES / "evaluate-simulated.yaml")
    result = evaluate_json("examples/evaluate-simulated.yaml", tmp_path / "sim.sqlite")
    assert result["stopped"] == "target" and result["calls"] < result["trust"]["all_pairs_calls"]
    ratings = cfg.judge["ratings"]
    best, worst = max(ratings, key=ratings.get), min(ratings, key=ratings.get)
    order = [r["model"] for r in sorted(result["ranking"], key=lambda r: -r["score"])]
    assert order.index(best) < 2 and order.index(worst) >= len(order) - 2


def test_the_embedded_config_judges_all_pairs_of_its_prompts_in_both_orders_with_the_local_backend():
    from judgewise.pipeline.job import build_job

    cfg = load_config(EXAMPLES / EMBEDDED_CONFIG)
    assert cfg.judge == {"backend": "local"} and cfg.orders == "both" and cfg.target
    job = build_job(cfg)  # reads the slice; the judge loads nothing until called
    assert {c.prompt_id for c in job.comparisons} == set(cfg.prompt_ids)
    assert len(job.comparisons) == len(cfg.prompt_ids) * len(cfg.models) * (len(cfg.models) - 1) // 2


@pytest.mark.slow  # ~30 s: run with SLOW=1, as CI runs the suite
def test_demo_part_1_is_evaluate_on_the_replayed_verdicts_with_its_check(tmp_path):
    res = run_cli("demo", "--no-judge", "--bootstrap", "50", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert "judgewise evaluate · design adaptive" in text and "stopped: target" in text
    calls = int(re.search(r"calls: ([\d,]+) of ([\d,]+) for all pairs in one order", text).group(1).replace(",", ""))
    check = re.search(r"all ([\d,]+) recorded verdicts rank the models (.+?); this run \(([\d,]+) calls, .*?orders "
                      r"(\d+) of 21 pairs the same way \(Kendall τ ([\d.]+)\)", text)
    assert check and int(check.group(3).replace(",", "")) == calls
    assert set(check.group(2).split(" > ")) == set(load_config(EXAMPLES / REPLAY_CONFIG).models)
    assert float(check.group(5)) == pytest.approx(1 - 2 * (21 - int(check.group(4))) / 21, abs=1e-3)
    assert "AlpacaEval's own leaderboard" in text and "NullModel 76.9" in text
    out = tmp_path / "demo-output"
    assert "report: demo-output/replay-report.html" in text
    assert "NullModel" in (out / "replay-report.html").read_text(encoding="utf-8")
    assert not (out / "embedded.sqlite").exists()  # --no-judge: part 2 not run
    rerun = evaluate_json("examples/evaluate-replay.yaml", out / "replay.sqlite")  # the command it prints
    assert rerun["calls"] == calls


def test_demo_refuses_a_folder_without_the_examples_in_one_line(tmp_path):
    res = run_cli("demo", "--no-judge", "--examples", str(tmp_path), cwd=tmp_path)
    assert res.returncode != 0
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "evaluate-replay.yaml" in errors[0]


def test_the_real_judge_hint_is_a_valid_evaluate_config():
    lines = REAL_JUDGE_HINT.splitlines()
    body = "\n".join(line for line in lines[1:] if line.startswith("  "))
    cfg = load_config(yaml.safe_load(body))
    assert cfg.target and cfg.judge["base_url"].startswith("https://")
    assert "judgewise evaluate --config run.yaml" in lines[0]


def test_the_examples_are_found_from_the_repo_root(monkeypatch):
    monkeypatch.chdir(REPO)
    assert str(find_examples(None)) == "examples"


@pytest.mark.slow
@pytest.mark.local
def test_demo_part_2_judges_stores_and_resumes_with_the_embedded_judge(tmp_path):
    pytest.importorskip("llama_cpp", reason="embedded judge extra not installed: pip install 'judgewise[local]'")
    cfg = load_config(EXAMPLES / EMBEDDED_CONFIG)
    games = len(cfg.prompt_ids) * len(cfg.models) * (len(cfg.models) - 1)
    res = run_cli("demo", "--no-replay", "--bootstrap", "50", "--threads", "1", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    steps = re.findall(r"^(\d)\. .*?: (\d+) new calls, (\d+) reused from the store, stopped: (\w+)", res.stdout, re.M)
    half = games // 4 * 2
    assert [(int(a), int(b)) for _, a, b, _ in steps] == [(half, 0), (games - half, half), (0, games)]
    assert steps[0][3] == "budget"
    assert "Its verdicts mean nothing:" in res.stdout
    store = tmp_path / "demo-output" / "embedded.sqlite"
    with sqlite3.connect(store) as db:
        assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
    assert (tmp_path / "demo-output" / "embedded-report.html").is_file()
    rerun = run_cli("evaluate", "--config", str(EXAMPLES / EMBEDDED_CONFIG), "--store", str(store), "--json",
                    "--bootstrap", "50", cwd=tmp_path)  # `judgewise evaluate <config>` as the demo prints it
    assert rerun.returncode == 0, rerun.stderr
    result = json.loads(rerun.stdout)
    assert result["trust"]["paid_calls_this_run"] == 0 and result["calls"] == games

"""`judgewise demo`: ranks the shipped AlpacaEval slice exactly, then runs a tiny `judgewise evaluate` offline."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
import yaml

from judgewise.pipeline.config import load_config
from judgewise.pipeline.demo import (DEMO_MODELS, REAL_JUDGE_HINT, demo_config, find_slice, pick_prompts, rank_slice,
                                     write_demo_config)

from .conftest import REPO, run_cli

SLICE = REPO / "examples" / "alpacaeval"
pytestmark = pytest.mark.skipif(not (SLICE / "results").is_dir(), reason="examples/alpacaeval slice not in the repo")


def test_demo_leaderboard_reproduces_the_published_win_rates_of_the_slice():
    ranking, table = rank_slice(find_slice(None), bootstrap=0, seed=0)
    published = pd.read_csv(SLICE / "leaderboard.csv")
    published = published.set_index(published.columns[0])["win_rate"]
    scores = dict(zip(ranking.models, ranking.scores))
    judged = [m for m in published.index if m in scores and m != table.extras.get("anchor")]
    assert len(judged) == 7
    for model in judged:
        assert scores[model] == pytest.approx(published[model], abs=1e-6)


def test_demo_prompts_are_drawn_among_short_instructions_every_demo_model_answered():
    _, table = rank_slice(find_slice(None), bootstrap=0, seed=0)
    chosen = pick_prompts(table, models=DEMO_MODELS, n_prompts=8, max_chars=700, seed=0)
    assert len(chosen) == len(set(chosen)) == 8 and chosen == sorted(chosen)
    responses = table.extras["responses"].frame
    for prompt in chosen:
        rows = responses[(responses["prompt_id"] == prompt) & responses["model"].isin(DEMO_MODELS)]
        assert set(rows["model"]) == set(DEMO_MODELS)
        longest = max(len(text) for text in rows["text"])
        assert len(rows["instruction"].iloc[0]) + longest <= 700
    assert pick_prompts(table, models=DEMO_MODELS, n_prompts=8, max_chars=700, seed=0) == chosen


def test_demo_config_is_an_evaluate_config_of_all_pairs_on_the_drawn_prompts(tmp_path, monkeypatch):
    from judgewise.pipeline.job import build_job

    monkeypatch.chdir(tmp_path)  # the slice lies outside the working folder: the config names it absolutely
    _, table = rank_slice(find_slice(None), bootstrap=0, seed=0)
    chosen = pick_prompts(table, n_prompts=3, seed=1)
    path = write_demo_config(tmp_path / "out", demo_config(find_slice(None), tmp_path / "out", chosen, threads=1))
    assert path == tmp_path / "out" / "run.yaml"
    assert "judgewise evaluate --config" in path.read_text(encoding="utf-8")
    cfg = load_config(path)
    assert Path(cfg.responses) == SLICE.resolve() and cfg.judge == {"backend": "local", "n_threads": 1}
    assert cfg.target and cfg.design == {"name": "all_pairs"} and cfg.orders == "both"
    assert Path(cfg.store) == tmp_path / "out" / "judgments.sqlite"
    job = build_job(cfg)  # reads the slice, chooses models and prompts; the judge loads nothing until called
    assert sorted({c.prompt_id for c in job.comparisons}) == chosen
    assert {c.model_a for c in job.comparisons} | {c.model_b for c in job.comparisons} == set(DEMO_MODELS)
    assert len(job.comparisons) == 3 * len(list(itertools.combinations(DEMO_MODELS, 2)))


def test_demo_config_names_a_slice_beside_its_folder_relatively(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples" / "slice").mkdir(parents=True)
    mapping = demo_config(Path("examples/slice"), Path("demo-output"), ["p1"])
    assert mapping["responses"] == "../examples/slice" and mapping["store"] == "judgments.sqlite"
    assert Path("demo-output", mapping["responses"]).resolve() == (tmp_path / "examples" / "slice").resolve()


def test_the_real_judge_hint_is_a_valid_evaluate_config():
    lines = REAL_JUDGE_HINT.splitlines()
    body = "\n".join(line for line in lines[1:] if line.startswith("  "))
    cfg = load_config(yaml.safe_load(body))
    assert cfg.target and cfg.judge["base_url"].startswith("https://") and list(cfg.models) == list(DEMO_MODELS)
    assert "judgewise evaluate --config run.yaml" in lines[0]


def test_demo_without_judging_prints_the_slice_leaderboard(tmp_path):
    res = run_cli("demo", "--no-judge", "--bootstrap", "100", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    for model in ("NullModel", "claude-2", "falcon-7b-instruct", "gpt4_1106_preview"):
        assert model in res.stdout
    assert "95% intervals: percentile bootstrap, 100 rounds" in res.stdout
    report = tmp_path / "demo-output" / "report.html"
    assert f"report: {report.resolve()}" in res.stdout
    html = report.read_text(encoding="utf-8")
    assert "NullModel" in html and "<svg" in html
    assert not (tmp_path / "demo-output" / "judgments.sqlite").exists()  # --no-judge: nothing judged
    assert not (tmp_path / "demo-output" / "run.yaml").exists()


@pytest.mark.slow
@pytest.mark.local
def test_demo_evaluates_a_tiny_job_with_the_embedded_judge_and_prints_what_evaluate_prints(tmp_path):
    pytest.importorskip("llama_cpp", reason="embedded judge extra not installed: pip install 'judgewise[local]'")
    res = run_cli("demo", "--prompts", "2", "--bootstrap", "50", "--threads", "1", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = tmp_path / "demo-output"
    with sqlite3.connect(out / "judgments.sqlite") as db:
        assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
    config = yaml.safe_load((out / "run.yaml").read_text(encoding="utf-8"))
    assert config["judge"]["backend"] == "local" and len(config["prompt_ids"]) == 2 and config["target"]
    all_games = 2 * 2 * len(list(itertools.combinations(DEMO_MODELS, 2)))
    assert f"of {all_games} for all pairs in both orders" in res.stdout
    assert "not meaningful" in res.stdout and "judgewise evaluate --config run.yaml" in res.stdout
    assert "rerun it (every verdict is stored, so 0 calls): judgewise evaluate --config demo-output/run.yaml" \
        in res.stdout
    assert (out / "judged-report.html").is_file() and "judgewise serve" in res.stdout
    # the command the demo prints: 0 calls, and the ranking block exactly as the demo printed it
    rerun = run_cli("evaluate", "--config", "demo-output/run.yaml", "--bootstrap", "50", cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert "paid by this run: 0;" in rerun.stdout
    block = rerun.stdout[rerun.stdout.index("judgewise evaluate · design"):rerun.stdout.index("stopped:")]
    assert block.count("\n") > 6 and block in res.stdout
    again = run_cli("evaluate", "--config", "demo-output/run.yaml", "--json", cwd=tmp_path)
    assert json.loads(again.stdout)["trust"]["paid_calls_this_run"] == 0


def test_the_slice_in_the_working_folder_is_named_relatively(monkeypatch):
    monkeypatch.chdir(REPO)  # as `make demo` runs: demo-output/run.yaml then names ../examples/alpacaeval
    assert find_slice(None) == Path("examples") / "alpacaeval"
    assert demo_config(find_slice(None), Path("demo-output"), ["p"])["responses"] == "../examples/alpacaeval"

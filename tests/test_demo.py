"""`judgewise demo`: ranks the shipped AlpacaEval slice exactly, then judges, stores and ranks a tiny job offline."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from judgewise.pipeline.demo import find_slice, first_shown_win_rate, pick_job, rank_slice

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


def test_demo_job_is_all_pairs_of_four_models_on_drawn_short_instructions():
    _, table = rank_slice(find_slice(None), bootstrap=0, seed=0)
    models = ("claude-2", "gpt-3.5-turbo-1106", "alpaca-7b", "falcon-7b-instruct")
    job = pick_job(table, models=models, n_prompts=8, max_chars=700, seed=0)
    assert len(job) == 8 * 6 and len({c.prompt_id for c in job}) == 8
    assert {c.model_a for c in job} | {c.model_b for c in job} == set(models)
    assert all(len(c.prompt) + max(len(c.response_a), len(c.response_b)) <= 700 for c in job)
    again = pick_job(table, models=models, n_prompts=8, max_chars=700, seed=0)
    assert [(c.prompt_id, c.model_a, c.model_b) for c in again] == [(c.prompt_id, c.model_a, c.model_b) for c in job]


def test_first_shown_win_rate_reads_the_first_column():
    games = pd.DataFrame({"status": ["ok", "ok", "ok", "failed"], "model_a": ["x", "x", "x", "x"],
                          "first": ["x", "y", "y", "x"], "outcome": [1.0, 0.0, 0.5, None]})
    assert first_shown_win_rate(games) == pytest.approx(2 / 3)


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


@pytest.mark.slow
@pytest.mark.local
def test_demo_judges_stores_and_ranks_a_tiny_job_with_the_embedded_judge(tmp_path):
    pytest.importorskip("llama_cpp", reason="embedded judge extra not installed: pip install 'judgewise[local]'")
    res = run_cli("demo", "--prompts", "2", "--bootstrap", "50", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    store = Path(tmp_path) / "demo-output" / "judgments.sqlite"
    with sqlite3.connect(store) as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
    assert tables
    assert "24 games from 12 comparisons" in res.stdout
    assert "not meaningful" in res.stdout and "judgewise judge --config" in res.stdout
    assert "Bradley–Terry ranking of the tiny job" in res.stdout
    assert (Path(tmp_path) / "demo-output" / "judged-report.html").is_file()
    assert "judgewise serve" in res.stdout

"""``judgewise evaluate`` end to end offline with the embedded judge (``judge: {backend: local}``, Gemma 3 270M).

Real subprocesses of the CLI, real SQLite stores. Checks format, plumbing and determinism — never whether the
judge is right (a 270M model's verdicts are not meaningful). Skipped with a visible reason without llama_cpp.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.support import run_cli

try:
    import llama_cpp  # noqa: F401
    LLAMA_CPP = None
except ImportError as exc:  # the optional extra judgewise[local]
    LLAMA_CPP = f"import llama_cpp failed ({exc}): the embedded judge needs pip install 'judgewise[local]'"

pytestmark = [pytest.mark.slow, pytest.mark.local,
              pytest.mark.skipif(LLAMA_CPP is not None, reason=LLAMA_CPP or "")]

PROMPTS = {"q1": "What is the capital of France?", "q2": "Give one use of a paperclip."}
ANSWERS = {"alpha": {"q1": "Paris.", "q2": "Holding sheets of paper together."},
           "beta": {"q1": "The capital of France is Paris.", "q2": "Eating it."},
           "gamma": {"q1": "Berlin.", "q2": "Resetting a router through its pinhole."}}
RANKING_KEYS = {"model", "score", "ci_low", "ci_high", "rank", "n"}


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    """A tiny evaluate config: 3 models × 2 prompts, all pairs, both orders, the embedded judge, a τ target."""
    folder = tmp_path_factory.mktemp("evaluate_local")
    rows = [{"prompt_id": p, "model": m, "text": ANSWERS[m][p], "instruction": q}
            for p, q in PROMPTS.items() for m in ANSWERS]
    pd.DataFrame(rows).to_json(folder / "responses.jsonl", orient="records", lines=True)
    config = {"responses": "responses.jsonl", "judge": {"backend": "local", "n_threads": 1},
              "design": {"name": "all_pairs"}, "target": {"kendall_tau": 0.9}, "orders": "both", "seed": 0,
              "store": "first.sqlite"}
    (folder / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return folder / "run.yaml"


def evaluate_json(config: Path, *extra: str) -> dict:
    res = run_cli("evaluate", "--config", config, "--json", "--bootstrap", "50", *extra, cwd=config.parent)
    assert res.returncode == 0, f"exit {res.returncode}\nstderr:\n{res.stderr}\nstdout:\n{res.stdout[:2000]}"
    return json.loads(res.stdout)


def verdicts(store: Path) -> dict:
    """(prompt, model_a, model_b, first shown) → (status, raw answer, outcome) of every game in a store, read with
    plain SQL."""
    with sqlite3.connect(store) as db:
        assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
        rows = db.execute("select prompt_id, model_a, model_b, first, status, raw, outcome from games").fetchall()
    return {row[:4]: row[4:] for row in rows}


@pytest.fixture(scope="module")
def first_run(job) -> dict:
    return evaluate_json(job)


def test_evaluate_with_the_embedded_judge_prints_the_documented_json(first_run):
    assert set(first_run) == {"ranking", "calls", "stopped", "design", "trust"}
    assert first_run["design"] == "all_pairs"
    assert first_run["stopped"] in ("target", "exhausted")
    assert {r["model"] for r in first_run["ranking"]} == set(ANSWERS)
    for row in first_run["ranking"]:
        assert set(row) == RANKING_KEYS
        assert isinstance(row["rank"], int) and 1 <= row["rank"] <= len(ANSWERS)
        assert isinstance(row["n"], int) and row["n"] > 0
        assert row["ci_low"] <= row["score"] <= row["ci_high"]
    all_games = 2 * len(PROMPTS) * len(list(itertools.combinations(ANSWERS, 2)))
    trust = first_run["trust"]
    assert trust["all_pairs_both_orders_calls"] == all_games
    assert 0 < first_run["calls"] <= all_games
    if first_run["stopped"] == "exhausted":
        assert first_run["calls"] == all_games
    assert trust["paid_calls_this_run"] == first_run["calls"]  # a fresh store: every game is a call
    assert sum(r["n"] for r in first_run["ranking"]) == 2 * (first_run["calls"] - trust["failed"])


def test_evaluate_with_the_embedded_judge_stores_every_game_once(job, first_run):
    games = verdicts(job.parent / "first.sqlite")
    assert len(games) == first_run["calls"]
    assert {status for status, _, _ in games.values()} <= {"ok", "failed"}
    assert {outcome for status, _, outcome in games.values() if status == "ok"} <= {0.0, 0.5, 1.0}
    assert all(first in (a, b) for _, a, b, first in games)  # both orders: each pair shown each way round
    assert {(p, a, b) for p, a, b, _ in games} == {(p, a, b) for p, a, b, first in games if first == b}


def test_evaluate_with_the_embedded_judge_gives_the_same_verdicts_on_a_fresh_store(job, first_run):
    again = evaluate_json(job, "--store", str(job.parent / "second.sqlite"))
    assert again["trust"]["paid_calls_this_run"] == again["calls"] > 0
    assert verdicts(job.parent / "second.sqlite") == verdicts(job.parent / "first.sqlite")
    assert again["ranking"] == first_run["ranking"]
    assert again["stopped"] == first_run["stopped"]


def test_evaluate_rerun_on_the_same_store_makes_no_call(job, first_run):
    before = verdicts(job.parent / "first.sqlite")
    rerun = evaluate_json(job)
    assert rerun["trust"]["paid_calls_this_run"] == 0
    assert rerun["calls"] == first_run["calls"]
    assert rerun["ranking"] == first_run["ranking"]
    assert verdicts(job.parent / "first.sqlite") == before
    text = run_cli("evaluate", "--config", job, "--bootstrap", "50", cwd=job.parent)
    assert text.returncode == 0, text.stderr
    assert "judgewise evaluate · design all_pairs" in text.stdout
    assert "paid by this run: 0;" in text.stdout

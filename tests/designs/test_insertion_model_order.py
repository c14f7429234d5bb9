"""Insertion designs judge the leaderboard's models, whatever the order of ``models:`` (issue 12), via the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.support import run_cli
from tests.support.judging import write_responses

BOARD = ["claude-2", "gpt-3.5", "qwen", "alpaca", "falcon"]  # best first
RATINGS = {"claude-2": 2000, "gpt-3.5": 1600, "qwen": 1200, "alpaca": 800, "falcon": 400, "new": 1400}


def _judge(folder: Path, models: list[str], design: dict) -> tuple[set, dict, str]:
    """Run ``judgewise judge`` with ``models:`` in the given order; (judged pairs, design_info, text output)."""
    folder.mkdir()
    write_responses(folder, 24, BOARD + ["new"])
    cfg = {"responses": "responses.jsonl", "store": "s.sqlite", "output": "out.jsonl", "models": models,
           "orders": "one", "design": design,
           "judge": {"backend": "simulated", "ratings": RATINGS, "p_judge": 1.0, "seed": 1}}
    (folder / "run.yaml").write_text(yaml.safe_dump(cfg))
    res = run_cli("judge", "--config", "run.yaml", "--no-progress", cwd=folder)
    assert res.returncode == 0, res.stderr
    games = pd.read_json(folder / "out.jsonl", lines=True)
    info = json.loads(run_cli("judge", "--config", "run.yaml", "--json", "--no-progress", cwd=folder).stdout)
    return set(map(frozenset, zip(games.model_a, games.model_b))), info["design_info"], res.stdout


@pytest.mark.parametrize("design", [
    {"name": "insert-binary", "leaderboard": BOARD, "new_model": "new"},
    {"name": "insert-anchor", "ratings": {m: RATINGS[m] for m in BOARD}, "new_model": "new", "anchor": "qwen"},
])
def test_insertion_judges_the_same_pairs_and_places_the_same_when_models_are_shuffled(tmp_path, design):
    in_order, info_a, text = _judge(tmp_path / "a", BOARD + ["new"], design)
    shuffled, info_b, _ = _judge(tmp_path / "b", ["falcon", "new", "qwen", "claude-2", "alpaca", "gpt-3.5"], design)
    assert in_order == shuffled and all("new" in pair for pair in in_order)
    assert info_a["rank"] == info_b["rank"] == 3  # between claude-2/gpt-3.5 (above) and qwen (below)
    assert "placement: new enters the leaderboard at rank 3" in text


def test_insertion_without_a_leaderboard_takes_its_order_from_the_stored_ranking_not_from_models(tmp_path):
    folder = tmp_path / "w"
    folder.mkdir()
    write_responses(folder, 24, BOARD + ["new"])
    judge = {"backend": "simulated", "ratings": RATINGS, "p_judge": 1.0, "seed": 1}
    shuffled = ["falcon", "qwen", "claude-2", "alpaca", "gpt-3.5"]
    base = {"responses": "responses.jsonl", "store": "s.sqlite", "orders": "one", "judge": judge}
    (folder / "board.yaml").write_text(yaml.safe_dump({**base, "models": shuffled, "design": "all_pairs"}))
    assert run_cli("judge", "--config", "board.yaml", "--no-progress", cwd=folder).returncode == 0
    (folder / "insert.yaml").write_text(yaml.safe_dump({**base, "models": ["new", *shuffled], "output": "o.jsonl",
                                                         "design": {"name": "insert-binary", "new_model": "new"}}))
    res = run_cli("judge", "--config", "insert.yaml", "--no-progress", cwd=folder)
    assert res.returncode == 0, res.stderr
    assert "placement: new enters the leaderboard at rank 3" in res.stdout

"""Simulated evaluate runs the evaluate tests share: responses, run configs and the realised Kendall τ."""

from __future__ import annotations

import numpy as np
import pandas as pd
import yaml
from scipy.stats import kendalltau


def simulated_responses(n_models: int, n_prompts: int) -> pd.DataFrame:
    """Responses of m0..m{n_models-1} to ``n_prompts`` numbered questions (an instruction column included)."""
    rows = [(f"p{p:03d}", f"m{i}", f"answer of m{i} to {p}", f"question {p}")
            for p in range(n_prompts) for i in range(n_models)]
    return pd.DataFrame(rows, columns=["prompt_id", "model", "text", "instruction"])


def evaluate_config(tmp_path, n_models=8, n_prompts=100, gap=60.0, **extra) -> dict:
    """An evaluate run config: a simulated judge whose true Elo rises ``gap`` per model, a Kendall τ 0.9 target."""
    ratings = {f"m{i}": 1000.0 + gap * i for i in range(n_models)}
    return {"responses": simulated_responses(n_models, n_prompts), "orders": "one",
            "store": str(tmp_path / "store.sqlite"),
            "judge": {"backend": "simulated", "ratings": ratings, "p_judge": 0.8, "position_bias": 0.2},
            "target": {"kendall_tau": 0.9}, **extra}


def realised_tau(result, n_models: int) -> float:
    """Kendall τ of a result's ranking against the true order m0 < m1 < …"""
    scores = dict(zip(result.ranking.models, result.ranking.scores))
    return kendalltau([scores[f"m{i}"] for i in range(n_models)], np.arange(n_models)).statistic


def evaluate_yaml(tmp_path, **extra):
    """A run.yaml (and its responses.jsonl) in ``tmp_path``: 6 simulated models, a Kendall τ 0.85 target."""
    simulated_responses(6, 40).to_json(tmp_path / "responses.jsonl", orient="records", lines=True)
    cfg = {"responses": "responses.jsonl", "store": "store.sqlite", "orders": "one",
           "judge": {"backend": "simulated", "ratings": {f"m{i}": 1000 + 80 * i for i in range(6)}},
           "target": {"kendall_tau": 0.85}, **extra}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path

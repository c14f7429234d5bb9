"""The pairwise judge derived from anchor verdicts (Anchor §4.3) and one engine run of the AlpacaEval benchmark."""

from __future__ import annotations

import argparse
import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from judgewise.analysis.anchor_pairwise import derived_pairwise
from judgewise.errors import ConfigError
from judgewise.io.alpacaeval import prompt_id_of, read_alpacaeval
from judgewise.store.judgments import JudgmentStore

from tests.support import REPO

ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
ANCHOR = "anchor-model"
BENCHMARKS = REPO / "benchmarks"


def _preferences(n_models: int, n_prompts: int, seed: int = 0) -> np.ndarray:
    """(models × prompts) preferences in [1, 2] on a 0.25 grid (so equal preferences, i.e. derived ties, occur);
    model 0 is best on average."""
    rng = np.random.default_rng(seed)
    quality = np.linspace(0.8, 0.2, n_models)[:, None]
    raw = np.clip(quality + rng.normal(0, 0.25, (n_models, n_prompts)), 0, 1)
    return 1.0 + np.round(raw * 4) / 4


def make_folder(root: Path, prefs: np.ndarray, missing: tuple[int, int] | None = None) -> list[str]:
    """An AlpacaEval-shaped results folder: results/<model>/<annotator>/annotations.json (anchor = output_1) and
    every model's (and the anchor's) model_outputs.json. ``missing`` = (model, prompt) left out of annotations."""
    models = [f"model-{k}" for k in range(prefs.shape[0])]
    instructions = [f"Instruction number {p}: say something." for p in range(prefs.shape[1])]
    for name in [*models, ANCHOR]:
        folder = root / "results" / name
        folder.mkdir(parents=True)
        outputs = [{"dataset": "tiny", "instruction": text, "output": f"{name} answers {p}", "generator": name}
                   for p, text in enumerate(instructions)]
        (folder / "model_outputs.json").write_text(json.dumps(outputs))
    for k, name in enumerate(models):
        rows = [{"instruction": text, "output_1": f"{ANCHOR} answers {p}", "generator_1": ANCHOR, "dataset": "tiny",
                 "output_2": f"{name} answers {p}", "generator_2": name, "annotator": ANNOTATOR,
                 "preference": float(prefs[k, p]), "price_per_example": 0.0, "time_per_example": 0.0}
                for p, text in enumerate(instructions) if missing != (k, p)]
        (root / "results" / name / ANNOTATOR).mkdir()
        (root / "results" / name / ANNOTATOR / "annotations.json").write_text(json.dumps(rows))
    return models


def oracle(prefs: np.ndarray, models: list[str], missing=None) -> dict[tuple[str, str, str], float]:
    """Independent computation from the raw preferences: i beats j on a prompt when its preference is higher."""
    out = {}
    for p in range(prefs.shape[1]):
        pid = prompt_id_of(f"Instruction number {p}: say something.")
        for i, j in combinations(range(len(models)), 2):
            if missing in ((i, p), (j, p)):
                continue
            out[(pid, models[i], models[j])] = 1.0 if prefs[i, p] > prefs[j, p] else (
                0.0 if prefs[i, p] < prefs[j, p] else 0.5)
    return out


def test_derived_judge_beats_when_higher_ties_when_equal(tmp_path):
    prefs = _preferences(4, 9)
    models = make_folder(tmp_path, prefs, missing=(2, 5))
    derived = derived_pairwise(read_alpacaeval(tmp_path).frame, ANCHOR)
    got = {(r.prompt_id, r.model_a, r.model_b): r.outcome for r in derived.itertuples()}
    expected = oracle(prefs, models, missing=(2, 5))
    assert got == expected
    assert 0.5 in got.values() and 1.0 in got.values() and 0.0 in got.values()  # the grid forces every kind
    assert set(derived["judge"]) == {f"{ANNOTATOR} via {ANCHOR}"}


def test_derived_judge_takes_a_subset_of_models_and_refuses_unknown_ones(tmp_path):
    prefs = _preferences(4, 5, seed=1)
    models = make_folder(tmp_path, prefs)
    frame = read_alpacaeval(tmp_path).frame
    subset = [models[3], models[1]]
    derived = derived_pairwise(frame, ANCHOR, models=subset)
    assert set(zip(derived["model_a"], derived["model_b"])) == {(models[3], models[1])}
    flipped = {k: v for k, v in oracle(prefs[[1, 3]], [models[1], models[3]]).items()}
    assert {(r.prompt_id, r.model_b, r.model_a): 1 - r.outcome for r in derived.itertuples()} == flipped
    with pytest.raises(ConfigError, match="no verdicts against the anchor"):
        derived_pairwise(frame, ANCHOR, models=[models[0], "not-there"])


def test_benchmark_runs_each_design_through_the_engine_on_the_derived_judge(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import designs_alpacaeval as bench

    prefs = _preferences(5, 30, seed=2)
    make_folder(tmp_path / "data", prefs)
    data = bench.load(tmp_path / "data")
    win_rate = dict(zip([f"model-{k}" for k in range(5)], (prefs - 1).mean(axis=1)))
    assert sorted(data.leaderboard) == sorted(win_rate)
    assert np.all(np.diff([win_rate[m] for m in data.leaderboard]) <= 0)  # best first by AlpacaEval's win rate
    expected = oracle(prefs, [f"model-{k}" for k in range(5)])
    args = argparse.Namespace(seeds=1, step=7, max_calls=300, prompts=0)
    job, reference, anchor = bench.prepare_half("T", data.leaderboard, data, args, tmp_path)
    for name in bench.DESIGNS:
        run = bench.run_design(name, job, reference, 0, args, tmp_path, anchor)
        calls = [c for c, _ in run["trajectory"]]
        assert calls == sorted(calls) and calls[-1] <= args.max_calls
        hits = [c for c, tau in run["trajectory"] if tau >= bench.TARGET]
        assert run["reached"] == bool(hits) and run["calls"] == (hits[0] if hits else args.max_calls)
        with JudgmentStore.open_readonly(tmp_path / f"{name}-0.sqlite") as store:
            games = store.frame()
        assert len(games) == calls[-1]  # every counted call is a game the engine stored
        for g in games.itertuples():  # and each replays the derived verdict, whichever model was shown first
            key = (g.prompt_id, g.model_a, g.model_b)
            want = expected[key] if key in expected else 1 - expected[(g.prompt_id, g.model_b, g.model_a)]
            assert g.outcome == want

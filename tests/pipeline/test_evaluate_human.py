"""Issue 35: ``evaluate --human LABELS`` — the games an evaluate judged, anchored to human labels as
prediction-powered rank-sets (the library's numbers, a rerun paying nothing), and bad ``--human`` input refused before
any judging."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgewise.analysis.human_anchored import human_anchored
from judgewise.analysis.human_pairs import match_labels
from judgewise.io import read_judgments
from judgewise.store.reading import read_rated
from tests.support import cli_json, run_cli
from tests.support.evaluating import evaluate_yaml

HUMAN_RATINGS = {f"m{i}": 1000 + 80 * i for i in range(6)}


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """A finished simulated evaluate (its folder and config) and a file of human votes on 120 of the comparisons
    it judged: humans following the true ratings, so their verdicts differ from the judge's on some."""
    folder = tmp_path_factory.mktemp("evaluate-human")
    config = evaluate_yaml(folder)
    first = cli_json("evaluate", "-c", config, "--bootstrap", "0", "--json", cwd=folder, timeout=300)
    judged = read_rated(folder / "store.sqlite")[0]
    rng = np.random.default_rng(7)
    rows = judged.drop_duplicates(["prompt_id", "model_a", "model_b"]).sample(120, random_state=3)
    with open(folder / "human.jsonl", "w") as fh:
        for r in rows.itertuples():
            p_a = 1 / (1 + 10 ** ((HUMAN_RATINGS[r.model_b] - HUMAN_RATINGS[r.model_a]) / 400))
            winner = "model_a" if rng.random() < p_a else "model_b"
            fh.write(json.dumps({"question_id": r.prompt_id, "model_a": r.model_a, "model_b": r.model_b,
                                 "winner": winner}) + "\n")
    return folder, config, first


def test_evaluate_human_prints_the_librarys_rank_sets_of_the_games_judged_and_pays_nothing_again(evaluated):
    folder, config, first = evaluated
    out = cli_json("evaluate", "-c", config, "--bootstrap", "0", "--human", folder / "human.jsonl", "--alpha",
                   "0.1", "--json", cwd=folder, timeout=300)
    assert out["calls"] == first["calls"] and out["ranking"] == first["ranking"]
    got = out["human_anchored"]
    judged = read_rated(folder / "store.sqlite")[0]
    matched = match_labels(judged, read_judgments(folder / "human.jsonl").frame)
    want = human_anchored(matched.labelled, matched.unlabelled, matched.models, 0.1)
    assert got["alpha"] == 0.1 and got["n_human"] == want.n_human == 120 and got["labels"]["unmatched"] == 0
    assert [m["rank_set"] for m in got["models"]] == [[int(lo), int(hi)] for lo, hi in zip(want.lo, want.hi)]
    assert [m["theta"] for m in got["models"]] == pytest.approx(want.theta.tolist(), abs=1e-12)


def test_evaluate_human_prints_the_rank_set_table_under_the_trust_block(evaluated):
    folder, config, _ = evaluated
    res = run_cli("evaluate", "-c", config, "--bootstrap", "0", "--human", folder / "human.jsonl", cwd=folder,
                  env={"COLUMNS": "160"}, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "rank-set 95%" in res.stdout and "human labels used: 120 (of 120 given; 0 unmatched)" in res.stdout
    assert res.stdout.index("rank-set 95%") > res.stdout.index("judgewise evaluate · design")


@pytest.mark.parametrize("args, words", [(["--alpha", "1.5"], "--alpha must be in (0, 1)"),
                                         (["--human", "no-such-labels.jsonl"], "no such file or folder")])
def test_bad_human_input_is_refused_before_any_judging(tmp_path, args, words):
    config = evaluate_yaml(tmp_path)
    labels = ["--human", str(tmp_path / "labels.jsonl")] if "--human" not in args else []
    res = run_cli("evaluate", "-c", config, *labels, *args, "--json", cwd=tmp_path, timeout=120)
    assert res.returncode != 0 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], res.stderr
    assert not (tmp_path / "store.sqlite").exists()  # nothing judged, nothing paid

"""``judgewise rank JUDGMENTS --human LABELS``: prediction-powered rank-sets end to end, from a file of human votes
(Chatbot Arena battles) and from a real SQLite store's ``human_labels``, and the refusals of bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgewise.analysis.human_anchored import human_anchored
from judgewise.analysis.human_pairs import match_labels
from judgewise.io import read_judgments
from judgewise.io.battles import winner_outcome
from judgewise.store.labels import HumanLabel
from judgewise.store.opening import open_store
from tests.support import cli_json, run_cli

N_JUDGED, N_LABELLED = 3000, 600


def _battles(path, count):
    with open(path) as fh:
        return [json.loads(line) for _, line in zip(range(count), fh)]


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def arena(shared, tmp_path):
    """(judgments.jsonl: GPT-4 on the first 3,000 battles, labels.jsonl: the human vote on 600 battles whose prompt
    the judgments compare one pair on, plus 3 votes on battles the judgments lack, the 600 human records)."""
    folder = shared / "data" / "chatbot-arena-ppr"
    judge = _battles(folder / "gpt-4-0125-preview.jsonl", N_JUDGED)
    human = _battles(folder / "human.jsonl", N_JUDGED + 3)
    counts = pd.Series([r["question_id"] for r in judge]).value_counts()
    single = [r for r in human[:N_JUDGED] if counts[r["question_id"]] == 1]
    picked = [single[i] for i in np.random.default_rng(5).choice(len(single), N_LABELLED, replace=False)]
    labels = _write(tmp_path / "labels.jsonl", picked + human[N_JUDGED:])
    return _write(tmp_path / "judgments.jsonl", judge), labels, picked


def test_rank_human_gives_the_library_rank_sets_and_counts_the_unmatched_labels(arena):
    judgments, labels, _ = arena
    out = cli_json("rank", judgments, "--human", labels, "--alpha", "0.1", "--json")
    got = out["human_anchored"]
    assert got["labels"]["given"] == N_LABELLED + 3 and got["labels"]["unmatched"] == 3
    assert got["n_human"] == N_LABELLED and got["alpha"] == 0.1
    matched = match_labels(read_judgments(judgments).frame, read_judgments(labels).frame)
    expected = human_anchored(matched.labelled, matched.unlabelled, matched.models, 0.1)
    assert got["n_judge"] == expected.n_judge == len(matched.unlabelled[0])
    assert [m["model"] for m in got["models"]] == expected.models
    assert [m["rank_set"] for m in got["models"]] == [[int(lo), int(hi)] for lo, hi in zip(expected.lo, expected.hi)]
    np.testing.assert_allclose([m["theta"] for m in got["models"]], expected.theta)
    assert 0 <= got["lambda"] <= 1 and got["rectifier_size"] > 0
    assert [r["model"] for r in out["ranking"]] == [r["model"] for r in cli_json("rank", judgments, "--json")]


def test_rank_human_prints_the_rank_sets_beside_the_judges_ranks_and_the_label_lines(arena):
    judgments, labels, _ = arena
    res = run_cli("rank", judgments, "--human", labels, env={"COLUMNS": "200"})
    assert res.returncode == 0, res.stderr
    assert "prediction-powered rank-sets (alpha 0.05)" in res.stdout and "rank-set 95%" in res.stdout
    assert f"human labels used: {N_LABELLED:,} (of {N_LABELLED + 3:,} given; 3 unmatched" in res.stdout
    assert "rectifier:" in res.stdout and "lambda =" in res.stdout


def test_labels_in_a_store_give_the_same_rank_sets_as_the_same_votes_in_a_file(arena, tmp_path):
    judgments, labels, picked = arena
    store = tmp_path / "labels.sqlite"
    with open_store(store) as st:
        for k, r in enumerate(picked):
            first = min(r["model_a"], r["model_b"])
            vote = winner_outcome(r["winner"])
            value = vote if r["model_a"] == first else 1.0 - vote  # the A view: responses in model-name order
            st.add_label(HumanLabel("s1", "ann", r["question_id"], value, shown="AB"))
            if k % 50 == 0:  # a second labeller who withdraws: the item keeps ann's label
                st.add_label(HumanLabel("s1", "bob", r["question_id"], 1.0 - value, shown="BA"))
                st.add_label(HumanLabel("s1", "bob", r["question_id"], None, shown="BA"))
    from_store = cli_json("rank", judgments, "--human", store, "--json")["human_anchored"]
    from_file = cli_json("rank", judgments, "--human", labels, "--json")["human_anchored"]
    assert from_store["labels"]["given"] == N_LABELLED and from_store["labels"]["unmatched"] == 0
    assert from_store["models"] == from_file["models"] and from_store["lambda"] == from_file["lambda"]


@pytest.mark.parametrize("case", ["alpha", "missing", "empty", "no-overlap", "store-without-labels"])
def test_bad_human_input_stops_with_one_error_line(arena, tmp_path, case):
    judgments, labels, picked = arena
    args = {"alpha": ["--human", labels, "--alpha", "1"],
            "missing": ["--human", tmp_path / "nope.jsonl"],
            "empty": ["--human", _write(tmp_path / "empty.jsonl", [])],
            "no-overlap": ["--human", _write(tmp_path / "other.jsonl",
                                             [dict(r, question_id="q-" + r["question_id"]) for r in picked[:5]])],
            "store-without-labels": ["--human", tmp_path / "bare.sqlite"]}[case]
    if case == "store-without-labels":
        open_store(tmp_path / "bare.sqlite").close()
    expected = {"alpha": "--alpha must be in (0, 1)", "missing": "no such file", "empty": "empty",
                "no-overlap": "none of its 5 human labels", "store-without-labels": "no human labels"}[case]
    res = run_cli("rank", judgments, *args)
    assert res.returncode != 0
    lines = [line for line in res.stderr.strip().splitlines() if line.strip()]
    assert lines[0].startswith("error:") and expected in res.stderr, res.stderr
    assert "Traceback" not in res.stderr


def test_the_shipped_arena_slice_is_what_its_script_makes_from_the_papers_data(shared):
    import importlib.util

    from tests.support import REPO

    spec = importlib.util.spec_from_file_location("make_human_anchored", REPO / "examples" / "make_human_anchored.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    judge, human = script.slice_rows(shared / "data" / "chatbot-arena-ppr")
    folder = REPO / "examples" / "chatbot-arena"
    assert (folder / "gpt-4.jsonl").read_text(encoding="utf-8") == script.jsonl_text(judge)
    assert (folder / "human-votes.jsonl").read_text(encoding="utf-8") == script.jsonl_text(human)
    battles = {(j["question_id"], j["model_a"], j["model_b"]) for j in judge}
    assert len(judge) == 3000 and len(human) == 600
    assert all((h["question_id"], h["model_a"], h["model_b"]) in battles for h in human)  # votes on judged battles

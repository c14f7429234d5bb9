"""``rank --by``: a missing value is a group apart from any text (a cell reading "(missing)" is that text), the
overall leaderboard is marked by the ``board`` column of ``--output`` (a group named "(overall)" is a group), and
a column of more distinct values than ``MAX_GROUPS`` is refused before any fit (100,000 ids do not hang)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgewise.ratings.grouped import MAX_GROUPS, MISSING, group_labels, rank_groups
from tests.support import run_cli

PAIRS = (("m0", "m1", 1.0), ("m1", "m2", 0.5), ("m0", "m2", 0.0), ("m2", "m0", 1.0), ("m1", "m0", 0.0))


def _write(path, tags: list) -> None:
    """Each tag's rows: every pair of PAIRS on 4 prompts (a connected, rankable group)."""
    rows = [{"prompt_id": f"{k}-{i}", "model_a": a, "model_b": b, "judge": "j", "outcome": o, "topic": tag}
            for k, tag in enumerate(tags) for i in range(4) for a, b, o in PAIRS]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _json(res) -> dict:
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_a_missing_value_and_the_text_missing_are_two_groups(tmp_path):
    _write(tmp_path / "t.jsonl", ["(missing)", None, "x"])
    out = _json(run_cli("rank", "t.jsonl", "--by", "topic", "--json", cwd=tmp_path, timeout=120))
    assert list(out["groups"]) == ["(missing)", "x"]
    assert out["missing"]["rows"] == 4 * len(PAIRS) == sum(r["n"] for r in out["missing"]["records"]) // 2
    assert sum(r["n"] for r in out["groups"]["(missing)"]) == 2 * 4 * len(PAIRS)


def test_a_group_named_overall_is_a_group_and_the_overall_board_is_marked_by_its_column(tmp_path):
    _write(tmp_path / "t.jsonl", ["(overall)", "", "y"])
    res = run_cli("rank", "t.jsonl", "--by", "topic", "--output", "r.csv", cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    frame = pd.read_csv(tmp_path / "r.csv", keep_default_na=False)
    boards = frame.groupby("board", sort=False)["group"].agg(lambda g: sorted(set(g)))
    assert boards.to_dict() == {"group": ["(overall)", "y"], "missing": [""], "overall": [""]}
    assert list(dict.fromkeys(frame["board"])) == ["group", "missing", "overall"]
    overall = frame[frame["board"] == "overall"]
    assert overall["n"].sum() == 2 * 3 * 4 * len(PAIRS)  # every row, the missing ones too
    text = " ".join(run_cli("rank", "t.jsonl", "--by", "topic", cwd=tmp_path, timeout=120).stdout.split())
    assert "method bt · no topic value" in text


def test_parquet_output_keeps_the_missing_and_overall_groups_empty(tmp_path):
    _write(tmp_path / "t.jsonl", ["a", None])
    res = run_cli("rank", "t.jsonl", "--by", "topic", "--output", "r.parquet", cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    frame = pd.read_parquet(tmp_path / "r.parquet")
    assert frame[frame["board"] != "group"]["group"].isna().all()
    assert set(frame[frame["board"] == "group"]["group"]) == {"a"}


def test_a_column_of_100000_distinct_values_is_refused_before_any_fit(tmp_path):
    rng = np.random.default_rng(0)
    n = 100_000
    a = rng.integers(0, 4, n)
    rows = pd.DataFrame({"prompt_id": [f"p{i % 500}" for i in range(n)], "model_a": [f"m{i}" for i in a],
                         "model_b": [f"m{i}" for i in (a + 1) % 4], "judge": "j",
                         "outcome": rng.choice([0.0, 0.5, 1.0], n), "uid": [f"u{i}" for i in range(n)]})
    rows.to_parquet(tmp_path / "t.parquet")
    res = run_cli("rank", "t.parquet", "--by", "uid", cwd=tmp_path, timeout=300)
    assert res.returncode == 2 and res.stderr.strip() == (
        f"error: --by uid: the column has 100,000 distinct values; at most {MAX_GROUPS:,} groups are ranked (each "
        "is a fit of its own): group by a coarser column")


def test_up_to_max_groups_are_ranked_each_as_its_rows_alone():
    labels = np.array([f"g{i % 7}" for i in range(70)] + [None] * 5, dtype=object)
    frame = pd.DataFrame({"row": range(len(labels))})
    seen = []
    result = rank_groups(frame, labels, lambda rows: seen.append(rows["row"].tolist()) or _fake(rows), "g")
    assert list(result.groups) == [f"g{i}" for i in range(7)] + [MISSING]
    assert seen[0] == list(range(75))
    for k, rows in enumerate(seen[1:8]):
        assert rows == [i for i in range(70) if i % 7 == k]
    assert seen[8] == list(range(70, 75))
    with pytest.raises(Exception, match="at most"):
        rank_groups(pd.DataFrame({"row": range(MAX_GROUPS + 1)}), np.arange(MAX_GROUPS + 1), _fake, "g")


def _fake(rows):
    from judgewise.ratings.result import Ranking

    n = np.array([len(rows), len(rows)])
    return Ranking("fake", ["a", "b"], np.zeros(2), np.zeros(2), np.zeros(2), np.array([1, 1]), n)


def test_group_labels_keep_blank_and_null_apart_from_text():
    labels = group_labels(["(missing)", None, float("nan"), "  ", " a ", 3])
    assert labels[0] == "(missing)" and labels[4] == "a" and labels[5] == "3"
    assert all(labels[i] is MISSING for i in (1, 2, 3))

"""A 10,000-character model name (or ``--by`` value) is cut on screen only: the text table keeps its score, CI and
count columns; ``--json`` and ``--output`` keep the name whole."""

from __future__ import annotations

import json

import pandas as pd

from judgewise.commands.tables import NAME_WIDTH, clip
from tests.support.bad_inputs.inputs import jsonl, judgments
from tests.support import run_cli

LONG = "x" * 9_990 + "0123456789"


def _rows():
    rows = judgments(n_prompts=6)
    for r in rows:
        r["model_a"], r["model_b"] = [LONG if m == "alpha" else m for m in (r["model_a"], r["model_b"])]
        r["topic"] = LONG if r["prompt_id"] in ("p1", "p2", "p3") else "short"
    return rows


def test_the_text_table_keeps_every_score_column_beside_a_10000_character_name(tmp_path):
    (tmp_path / "long.jsonl").write_text(jsonl(_rows()))
    res = run_cli("rank", "long.jsonl", "--output", "r.csv", cwd=tmp_path, timeout=60)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    header = next(ln for ln in lines if "model" in ln and "score" in ln)
    assert "95% CI" in header and header.rstrip().endswith("n ┃")
    body = [ln for ln in lines if ln.startswith("│")]
    assert len(body) == 3 and all(ln.count("│") == 6 for ln in body)  # rank, model, score, CI, n
    assert any(clip(LONG) in ln for ln in body) and all(LONG not in ln for ln in body)
    assert len(clip(LONG)) == NAME_WIDTH and clip(LONG).endswith("…")
    assert LONG in set(pd.read_csv(tmp_path / "r.csv")["model"])


def test_json_keeps_the_whole_name_and_by_titles_are_cut(tmp_path):
    (tmp_path / "long.jsonl").write_text(jsonl(_rows()))
    res = run_cli("rank", "long.jsonl", "--json", cwd=tmp_path, timeout=60)
    assert res.returncode == 0 and LONG in {r["model"] for r in json.loads(res.stdout)}
    res = run_cli("rank", "long.jsonl", "--by", "topic", cwd=tmp_path, timeout=60)
    assert res.returncode == 0, res.stderr
    assert LONG not in res.stdout and f"topic = {clip(LONG)}" in " ".join(res.stdout.split())


def test_clip_keeps_short_names_whole():
    assert clip("gpt-4o") == "gpt-4o" and clip("a" * NAME_WIDTH) == "a" * NAME_WIDTH

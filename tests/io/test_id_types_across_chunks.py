"""Ids typed one way across chunks: a float id equal to an integer (``3.0``) is that integer (``"3"``), whether the
whole file is read at once or chunk by chunk (integers in one chunk, floats in the next), in JSONL and Parquet."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from judgewise.io import chunks, read_judgments
from judgewise.ratings import rank

from tests.support import run_cli
from tests.support.oracles import row_by_row

N = 6000
MODELS = [f"m{i}" for i in range(6)]


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 64 << 10)
    monkeypatch.setattr(chunks, "CHUNK_ROWS", 1500)


def rows(float_from: int, seed: int = 3) -> list[dict]:
    """N judgments on 40 prompts with integer ids; from row ``float_from`` on, the same ids written as floats."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(N):
        a, b = rng.choice(len(MODELS), 2, replace=False)
        pid = int(rng.integers(0, 40))
        out.append({"prompt_id": float(pid) if k >= float_from else pid, "model_a": MODELS[a], "model_b": MODELS[b],
                    "judge": "j", "outcome": float(rng.choice([0.0, 0.5, 1.0]))})
    return out


def test_float_ids_in_a_later_jsonl_chunk_are_the_integer_ids_of_the_first(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows(float_from=N // 2)))
    chunked = read_judgments(path).frame
    whole = row_by_row(path, battles=False).frame
    assert sorted(chunked["prompt_id"].astype(str).unique()) == sorted(str(p) for p in range(40))
    assert chunked["prompt_id"].astype(str).tolist() == whole["prompt_id"].astype(str).tolist()
    fast = rank(chunked, method="bt", bootstrap=20, seed=1)
    slow = rank(whole, method="bt", bootstrap=20, seed=1)
    assert fast.models == slow.models
    np.testing.assert_allclose(fast.scores, slow.scores)
    np.testing.assert_allclose(fast.ci_low, slow.ci_low)
    np.testing.assert_allclose(fast.ci_high, slow.ci_high)


def test_float_ids_in_a_parquet_file_are_integer_ids(tmp_path):
    data = rows(float_from=0)
    ints = tmp_path / "ints.parquet"
    floats = tmp_path / "floats.parquet"
    pq.write_table(pa.Table.from_pylist([{**r, "prompt_id": int(r["prompt_id"])} for r in data]), ints)
    pq.write_table(pa.Table.from_pylist(data), floats)
    assert read_judgments(floats).frame["prompt_id"].astype(str).tolist() == \
        read_judgments(ints).frame["prompt_id"].astype(str).tolist()


def test_a_fractional_float_id_stays_its_own_id():
    from judgewise.io.validate import name_text
    import pandas as pd

    assert name_text(pd.Series([3, 3.0, 2.5, 1e20, "a "], dtype=object)).tolist() == ["3", "3", "2.5", "1e+20", "a"]


def test_rank_by_prompt_of_a_file_mixing_3_and_3_0_names_each_prompt_once_as_an_integer(tmp_path):
    mixed = rows(float_from=N // 2)[:400]
    (tmp_path / "mixed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mixed))
    res = run_cli("rank", "mixed.jsonl", "--by", "prompt_id", "--json", cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    groups = set(json.loads(res.stdout)["groups"])
    assert groups and groups <= {str(int(r["prompt_id"])) for r in mixed}  # small groups may be left out


def test_a_prompts_table_with_float_ids_groups_judgments_with_integer_ids(tmp_path):
    mixed = rows(float_from=0)[:400]  # ids written 3.0 in the judgments
    (tmp_path / "j.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mixed))
    prompts = [{"question_id": float(p), "category": f"c{p % 2}"} for p in range(40)]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in prompts))
    res = run_cli("rank", "j.jsonl", "--by", "category", "--prompts", "q.jsonl", "--json", cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert set(out["groups"]) == {"c0", "c1"} and out["missing"] is None

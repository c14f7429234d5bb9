"""The judging store read in batches of columns (store.sqlite.query_frame) gives what pandas.read_sql_query gave.

The oracle is pandas.read_sql_query on the same SQLite file: the same columns, values and dtypes, for stores whose
nullable columns are empty, full, or empty in some batches only (batches made tiny here), and for a column that
pyarrow cannot type (text and numbers mixed), which falls back to read_sql_query itself.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest

from judgewise.store import sqlite as store_module
from judgewise.store.judgments import GAME_COLUMNS, GameRecord, JudgmentStore
from judgewise.store.sqlite import concat_frames, query_frame
from judgewise.store.reading import read_store_table


def games(n: int, seed: int) -> list[GameRecord]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        failed = rng.random() < 0.2
        v5 = int(rng.integers(-2, 3))
        out.append(GameRecord(
            key=f"k{i:05d}", prompt_id=f"q{rng.integers(0, 40)}", model_a=f"m{i % 5}", model_b=f"m{(i % 5) + 1}",
            first="a", swapped=bool(i % 2), judge="j", template="pairwise", judge_identity="{}",
            status="failed" if failed else "ok", raw="" if failed else f"[[{v5}]] é",
            verdict5=None if failed else v5, label=None if failed else str(v5),
            outcome=None if failed else (v5 > 0) + 0.5 * (v5 == 0), soft=None if i < n // 2 else rng.random(),
            error="timeout" if failed else None, tokens_in=int(rng.integers(0, 999)), created_at=1000.0 + i))
    return out


def stored(path, records) -> JudgmentStore:
    with JudgmentStore(path) as s:
        for rec in records:
            s.record(rec)
    return JudgmentStore.open_readonly(path)


def oracle(path) -> pd.DataFrame:
    with sqlite3.connect(path) as db:
        return pd.read_sql_query(f"SELECT {', '.join(GAME_COLUMNS)} FROM games ORDER BY created_at, key", db)


@pytest.mark.parametrize("batch", [3, 16, 1 << 16])
def test_the_store_frame_equals_read_sql_query_in_values_and_dtypes(tmp_path, monkeypatch, batch):
    monkeypatch.setattr(store_module, "FETCH_ROWS", batch)
    path = tmp_path / "s.sqlite"
    with stored(path, games(60, batch)) as s:
        frame = s.frame()
    pd.testing.assert_frame_equal(frame, oracle(path))
    assert frame["soft"].isna().sum() == 30 and frame["outcome"].dtype == np.float64


def test_a_column_pyarrow_cannot_type_falls_back_to_read_sql_query(tmp_path):
    path = tmp_path / "mixed.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (a, b)")
        db.executemany("INSERT INTO t VALUES (?, ?)", [("x", 1), (2, 2.5), (None, None)])
    with sqlite3.connect(path) as db:
        got, expected = query_frame(db, "SELECT a, b FROM t"), pd.read_sql_query("SELECT a, b FROM t", db)
        pd.testing.assert_frame_equal(got, expected)
        pd.testing.assert_frame_equal(query_frame(db, "SELECT a FROM t WHERE 0"),
                                      pd.read_sql_query("SELECT a FROM t WHERE 0", db))


def test_a_store_ranks_from_the_batched_read_as_from_the_whole_query(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    stored(path, games(80, 7)).close()
    monkeypatch.setattr(store_module, "FETCH_ROWS", 5)
    table = read_store_table(path)
    monkeypatch.setattr(store_module, "query_frame", lambda db, sql, params=(): pd.read_sql_query(sql, db))
    before = read_store_table(path)
    pd.testing.assert_frame_equal(table.frame, before.frame)
    assert table.report.as_dict() == before.report.as_dict()


def test_the_generation_store_frame_equals_read_sql_query_as_before_the_shared_base(tmp_path):
    from judgewise.store.generations import ANSWER_COLUMNS, AnswerRecord, GenerationStore

    path = tmp_path / "g.sqlite"
    with GenerationStore(path) as store:
        for i in range(30):
            store.record(AnswerRecord(key=f"a{i:03d}", model=f"m{i % 3}", prompt_id=f"q{i % 7}", turn=1 + i % 2,
                                      settings="s", identity="{}", question="why?", status="failed" if i % 5 else "ok",
                                      text=None if i % 5 else f"answer {i}", error="timeout" if i % 5 else None,
                                      tokens_out=i, latency_s=0.5 * i, created_at=1000.0 + i))
    with GenerationStore.open_readonly(path) as store:
        whole, some = store.frame(), store.frame([f"a{i:03d}" for i in range(0, 30, 3)])
    with sqlite3.connect(path) as db:
        cols = ", ".join(ANSWER_COLUMNS)
        expected = pd.read_sql_query(f"SELECT {cols} FROM generations ORDER BY model, prompt_id, turn, created_at", db)
    pd.testing.assert_frame_equal(whole, expected)
    pd.testing.assert_frame_equal(some.sort_values("key", ignore_index=True),
                                  expected[expected["key"].isin(some["key"])].sort_values("key", ignore_index=True))


@pytest.mark.parametrize("split", [1, 12, 30, 59])
def test_rows_read_in_two_parts_one_in_a_thread_equal_one_read_of_them_all(tmp_path, split):
    """A run reads back the rows stored before its last wave in a thread (``frame_in_thread``), then the others
    (``concat_frames``): the same values and dtypes as one read, even where a column is empty in one part only
    (the first 30 games have no ``soft``; the failed ones no verdict)."""
    path = tmp_path / "s.sqlite"
    records = games(60, split)
    with stored(path, records) as s:
        keys = [r.key for r in records]
        whole = s.frame(keys)
        first = s.frame_in_thread(keys[:split]).result()
        both = concat_frames([first, s.frame(keys[split:])], GAME_COLUMNS)
    pd.testing.assert_frame_equal(both, whole)
    assert first["soft"].isna().all() or split > 30

"""A Parquet file naming one column twice is refused by that name; a store holding a BLOB where a name or any text
belongs is refused naming the game and the column (``rank``, ``store export``, ``store stats``, ``store copy``);
each is one clean ``error:`` line and writes nothing."""

from __future__ import annotations

import sqlite3

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.bad_inputs.inputs import judgments, store
from tests.support.bad_inputs.outcomes import classify, snapshot
from tests.support import run_cli


def _duplicated_parquet(path, column: str):
    table = pa.Table.from_pylist(judgments())
    names = table.column_names + [column]
    pq.write_table(pa.table(table.columns + [table[column]], names=names), path)


@pytest.mark.parametrize("column", ["model_a", "outcome", "prompt_id"])
@pytest.mark.parametrize("forced", [False, True])
def test_a_parquet_column_named_twice_is_refused_by_name(tmp_path, column, forced):
    _duplicated_parquet(tmp_path / "dup.parquet", column)
    before = snapshot(tmp_path)
    res = run_cli("rank", "dup.parquet", *(["--format", "parquet"] if forced else []), cwd=tmp_path, timeout=60)
    kind, line = classify(res, before, snapshot(tmp_path))
    assert kind == "clean", line
    assert line == (f"error: dup.parquet: column '{column}' appears 2 times in the Parquet file: each column must "
                    "be named once (rename or drop the copies)")


def test_arena_battles_in_parquet_with_a_column_named_twice_are_refused_by_name(tmp_path):
    rows = [{"question_id": r["prompt_id"], "model_a": r["model_a"], "model_b": r["model_b"], "winner": "tie"}
            for r in judgments()]
    table = pa.Table.from_pylist(rows)
    pq.write_table(pa.table(table.columns + [table["winner"]], names=table.column_names + ["winner"]),
                   tmp_path / "b.parquet")
    res = run_cli("rank", "b.parquet", cwd=tmp_path, timeout=60)
    assert res.returncode == 2 and "column 'winner' appears 2 times" in res.stderr, res.stderr


def _blob_store(root, column: str):
    path = store(root)
    db = sqlite3.connect(path)
    with db:
        db.execute(f"UPDATE games SET {column} = CAST({column} AS BLOB) WHERE key = 'k2'")
    db.close()  # its WAL checkpointed: the commands see a settled file
    return path


COMMANDS = {"rank": ["rank", "s.sqlite"], "export": ["store", "export", "s.sqlite", "-o", "out.jsonl"],
            "stats": ["store", "stats", "s.sqlite"], "copy": ["store", "copy", "s.sqlite", "t.sqlite"]}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("column", ["model_a", "prompt_id", "judge", "raw"])
def test_a_blob_in_a_store_is_refused_naming_the_game_and_column(tmp_path, command, column):
    _blob_store(tmp_path, column)
    before = snapshot(tmp_path)
    res = run_cli(*COMMANDS[command], cwd=tmp_path, timeout=60)
    kind, line = classify(res, before, snapshot(tmp_path))
    assert kind == "clean", line
    assert line.startswith(f"error: s.sqlite field \"{column}\": game 'k2' holds bytes (an SQLite BLOB)"), line

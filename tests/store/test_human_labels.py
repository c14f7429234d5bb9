"""The append-only ``human_labels`` table on both stores: every label kept in commit order, an undo is a row,
a store without labels reads as empty and is left unchanged, and ``store export --table human_labels`` writes the
rows as CSV, Parquet or JSONL."""

from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest

from judgewise.errors import InputError
from judgewise.store.labels import LABEL_COLUMNS, HumanLabel, current_labels, labels_as_scores
from judgewise.store.opening import open_store, open_store_readonly
from judgewise.store.protocol import HumanLabelStore

from tests.support import run_cli
from tests.support.pg_server import pg_server, pg_url  # noqa: F401 (fixtures)


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "store.sqlite")
    return request.getfixturevalue("pg_url")


def test_labels_are_appended_in_commit_order_and_an_undo_withdraws_one(location):
    with open_store(location) as store:
        assert isinstance(store, HumanLabelStore)
        assert store.labels().empty and list(store.labels().columns) == list(LABEL_COLUMNS)
        store.add_label(HumanLabel("s1", "ann", "i1", 1.0, shown="BA", target="j"))
        store.add_label(HumanLabel("s1", "ann", "i2", 0.0, shown="AB", target="j"))
        store.add_label(HumanLabel("s1", "bob", "i1", 0.5, shown="AB", target="j"))
        store.add_label(HumanLabel("s1", "ann", "i2", None, shown="AB", target="j"))  # undo
        store.add_label(HumanLabel("s2", "ann", "i1", 0.0, shown="BA", target="j"))  # changed mind
    with open_store_readonly(location) as store:
        rows = store.labels()
    assert len(rows) == 5 and rows["seq"].is_monotonic_increasing
    assert rows["value"].isna().sum() == 1
    now = current_labels(rows).set_index(["labeller", "item_id"])["value"].to_dict()
    assert now == {("ann", "i1"): 0.0, ("bob", "i1"): 0.5}
    scores = labels_as_scores(rows)
    assert scores.to_dict("records") == [{"item_id": "i1", "rater": "human", "score": 0.25}]


def test_a_label_naming_nobody_or_no_order_is_refused_and_writes_nothing(tmp_path):
    path = tmp_path / "store.sqlite"
    with open_store(path) as store:
        for bad in (HumanLabel("s", "", "i1", 1.0), HumanLabel("s", "ann", "i1", 1.0, shown="A<B"),
                    HumanLabel("s", "x" * 201, "i1", 1.0)):
            with pytest.raises(InputError):
                store.add_label(bad)
        assert store.labels().empty


def test_a_store_without_labels_reads_empty_and_gets_no_table(tmp_path):
    path = tmp_path / "store.sqlite"
    open_store(path).close()
    with open_store_readonly(path) as store:
        assert store.labels().empty
    tables = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "human_labels" not in tables


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_store_export_writes_the_label_rows(tmp_path, suffix):
    path = tmp_path / "store.sqlite"
    with open_store(path) as store:
        store.add_label(HumanLabel("s", "<b>ann</b>", "i1", 1.0, shown="AB"))
        store.add_label(HumanLabel("s", "bob", "i1", None, shown="BA"))
    out = tmp_path / f"labels{suffix}"
    res = run_cli("store", "export", str(path), "--table", "human_labels", "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert "exported 2 label rows (2 labellers, 1 items)" in res.stderr
    read = {".csv": pd.read_csv, ".parquet": pd.read_parquet, ".jsonl": lambda p: pd.read_json(p, lines=True)}
    back = read[suffix](out)
    assert list(back.columns) == list(LABEL_COLUMNS)
    assert back["labeller"].tolist() == ["<b>ann</b>", "bob"] and back["value"].iloc[0] == 1.0
    assert pd.isna(back["value"].iloc[1])


def test_store_export_names_an_unknown_table(tmp_path):
    path = tmp_path / "store.sqlite"
    open_store(path).close()
    res = run_cli("store", "export", str(path), "--table", "labels", "-o", str(tmp_path / "x.csv"))
    assert res.returncode != 0 and "--table" in res.stderr and not (tmp_path / "x.csv").exists()


def test_store_copy_moves_the_labels_once(tmp_path, location):
    source = tmp_path / "source.sqlite"
    with open_store(source) as store:
        store.add_label(HumanLabel("s", "ann", "i1", 1.0, shown="AB"))
        store.add_label(HumanLabel("s", "ann", "i1", None, shown="AB"))
        store.add_label(HumanLabel("s", "bob", "i2", 0.5, shown="BA"))
    for expected in (3, 0):  # a second copy adds nothing
        res = run_cli("store", "copy", str(source), location, "--json")
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["labels"] == expected
    with open_store_readonly(source) as a, open_store_readonly(location) as b:
        mine, theirs = a.labels().drop(columns="seq"), b.labels().drop(columns="seq")
    pd.testing.assert_frame_equal(mine, theirs)

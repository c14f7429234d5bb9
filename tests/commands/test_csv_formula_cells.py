"""Every CSV judgewise writes is safe to open in a spreadsheet: a text cell that would run as a formula (``=``,
``+``, ``-``, ``@``, tab, CR first) is written with a leading ``'`` (OWASP), numbers stay numbers. Through the
command line: ``rank --output x.csv`` of an AutoArena file with formula model names, and ``store export --table
human_labels`` of labeller names typed on the labelling page; ``.jsonl`` and ``.parquet`` keep the names as they are."""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest

from judgewise.io.csv_export import FORMULA_LEADS, neutralise_cell, neutralise_frame
from judgewise.store.labels import HumanLabel
from judgewise.store.opening import open_store

from tests.support import run_cli
from tests.support.bad_inputs.cases_labelling import FORMULA_NAMES, LINK

NAMES = FORMULA_NAMES
MODELS = [n for n in NAMES if n.isprintable()]  # readers refuse a model name holding a control character


def _csv_cells(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _runs_as_formula(cell: str) -> bool:
    return cell[:1] in FORMULA_LEADS and not _is_number(cell)


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return cell.strip() == cell


@pytest.mark.parametrize(("value", "written"), [
    (LINK, "'" + LINK), ("@SUM(1+1)", "'@SUM(1+1)"), ("-2+3", "'-2+3"), ("+1+1", "'+1+1"), ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"), ("'=1", "''=1"), ("plain", "plain"), ("a=b", "a=b"), ("", ""), ("-0.5", "-0.5"),
    ("+3", "+3"), ("-1e-3", "-1e-3"), ("-.5", "-.5"), ("-", "'-"), (-0.5, -0.5), (None, None),
])
def test_a_cell_is_quoted_only_when_a_spreadsheet_would_run_it(value, written):
    assert neutralise_cell(value) == written


def test_removing_one_leading_quote_gives_every_written_text_back():
    for text in ["=x", "''=x", "'x", "x", "-x", "'-1", "-1", "''"]:
        out = neutralise_cell(text)
        assert (out[1:] if out != text else out) == text


def test_number_columns_keep_their_numbers_and_text_columns_of_any_dtype_are_quoted():
    frame = pd.DataFrame({"model": NAMES, "score": [-0.5, 1, 2, 3, 4, 5],
                          "group": pd.Categorical(["=a"] * 6), "note": pd.array(["-x"] * 5 + [None], "string"),
                          "=col": range(6)})
    out = neutralise_frame(frame)
    assert out["score"].tolist() == [-0.5, 1, 2, 3, 4, 5] and out["score"].dtype == float
    assert out["'=col"].tolist() == list(range(6))
    assert out["model"].tolist() == ["'" + n for n in NAMES[:5]] + ["plain"]
    assert set(out["group"]) == {"'=a"} and out["note"].tolist()[:5] == ["'-x"] * 5 and pd.isna(out["note"].iloc[5])
    assert frame["model"].tolist() == NAMES  # the input frame is not changed


def _autoarena(folder):
    path = folder / "h2h.csv"
    rows = [(f"q{k}", a, b, "A" if k % 3 else "-") for k, (a, b) in enumerate(
        [(x, y) for x in MODELS for y in MODELS if x != y])]
    pd.DataFrame(rows, columns=["prompt", "model_a", "model_b", "winner"]).assign(
        response_a="r", response_b="s").to_csv(path, index=False)
    return path


@pytest.mark.parametrize("method", ["bt", "elo"])
def test_rank_output_csv_quotes_formula_model_names_and_keeps_numbers(tmp_path, method):
    out = tmp_path / "ranking.csv"
    res = run_cli("rank", _autoarena(tmp_path), "--method", method, "--bootstrap", "20", "--output", out)
    assert res.returncode == 0, res.stderr
    cells = _csv_cells(out)
    assert sorted(c["model"] for c in cells) == sorted("'" + n if n != "plain" else n for n in MODELS)
    assert not [v for row in cells for v in row.values() if _runs_as_formula(v)]
    numbers = [row[k] for row in cells for k in row if k != "model"]
    assert all(_is_number(v) for v in numbers if v)
    if method == "bt":  # BT's log-odds are negative for the weaker models: written as numbers, not as quoted text
        assert any(float(row["theta"]) < 0 for row in cells)
    json_out = tmp_path / "ranking.json"
    assert run_cli("rank", _autoarena(tmp_path), "--method", method, "--bootstrap", "20", "--output",
                   json_out).returncode == 0
    assert {r["model"] for r in json.loads(json_out.read_text())} == set(MODELS)  # JSON keeps the names exactly


def test_store_export_of_labels_quotes_names_typed_on_the_page(tmp_path):
    store = tmp_path / "labels.sqlite"
    with open_store(store) as st:
        for k, name in enumerate(NAMES):
            st.add_label(HumanLabel("s", name, f"=item{k}", float(k % 2), shown="AB", target="@judge"))
    out = tmp_path / "labels.csv"
    res = run_cli("store", "export", store, "--table", "human_labels", "-o", out)
    assert res.returncode == 0, res.stderr
    cells = _csv_cells(out)
    assert [c["labeller"] for c in cells] == ["'" + n if n != "plain" else n for n in NAMES]
    assert {c["item_id"][:2] for c in cells} == {"'="} and {c["target"] for c in cells} == {"'@judge"}
    assert [float(c["value"]) for c in cells] == [float(k % 2) for k in range(len(NAMES))]
    assert not [v for row in cells for v in row.values() if _runs_as_formula(v)]
    exact = tmp_path / "labels.parquet"
    assert run_cli("store", "export", store, "--table", "human_labels", "-o", exact).returncode == 0
    assert pd.read_parquet(exact)["labeller"].tolist() == NAMES  # Parquet keeps them as typed


@pytest.mark.parametrize("chunked", [False, True])
def test_a_csv_judgewise_wrote_reads_back_as_the_values_it_held(tmp_path, monkeypatch, chunked):
    """The spreadsheet guard is undone on reading (io.csv_export.restore_cell), whole-file and in chunks: a model
    named ``-x`` or ``=y`` comes back as such, a literal ``'-1`` (never written by the guard) stays."""
    from judgewise.io import chunks, read_judgments
    from judgewise.io.csv_export import write_csv

    if chunked:
        monkeypatch.setattr(chunks, "CHUNK_BYTES", 4 << 10)
        monkeypatch.setattr(chunks, "CHUNK_ROWS", 200)
    names = ["-x", "=y", "'-1", "@z", "plain", "''=w"]
    n = 3000
    frame = pd.DataFrame({"prompt_id": [f"p{i}" for i in range(n)], "model_a": [names[i % 6] for i in range(n)],
                          "model_b": "base", "judge": "j", "outcome": [float(i % 3) / 2 for i in range(n)]})
    path = write_csv(frame, tmp_path / "j.csv")
    assert "'-x" in path.read_text()
    back = read_judgments(path).frame
    assert sorted(back["model_a"].unique()) == sorted(names) and len(back) == n

"""Columnar, chunked ingest (io.columnar, io.chunks, io.battles) against the row-by-row readers it replaces
(JSONL, Parquet and, for canonical judgments, CSV).

The oracle of every test is the row-by-row path, called directly (``containers`` + ``validate_table``, and
``battles.battle_frame`` for battle logs): the same table, the same report, the same error (file, row, field, what
is wrong) — also when the bad row sits in a later chunk (chunks made small here) — and the same BT scores.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from judgewise.errors import InputError
from judgewise.io import chunks, read_judgments
from judgewise.ratings import rank

from tests.support import run_cli
from tests.support.oracles import row_by_row

N = 10_000
WINNERS = ["model_a", "model_b", "tie", "tie (bothbad)"]


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    """Chunks of ~64 KB / 1,500 rows, so that a 10,000-row file is read in several."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 64 << 10)
    monkeypatch.setattr(chunks, "CHUNK_ROWS", 1500)


def battle_rows(n: int = N, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 12, n)
    b = (a + rng.integers(1, 12, n)) % 12
    return [{"question_id": f"q{rng.integers(0, 900)}", "model_a": f"m{i}", "model_b": f"m{j}",
             "winner": WINNERS[rng.integers(0, 4)], "turn": 1} for i, j in zip(a, b)]


def judgment_rows(n: int = N, seed: int = 1) -> list[dict]:
    rows = battle_rows(n, seed)
    outcome = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}
    return [{"prompt_id": r["question_id"], "model_a": r["model_a"], "model_b": r["model_b"], "judge": "j",
             "outcome": outcome[r["winner"]]} for r in rows]


def write(rows: list[dict], path: Path) -> Path:
    if path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    elif path.suffix == ".csv":
        pd.DataFrame(rows).to_csv(path, index=False)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def error_of(fn) -> str:
    with pytest.raises(InputError) as info:
        fn()
    return str(info.value)


def as_text(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype({c: str for c in ("prompt_id", "model_a", "model_b", "judge")}).astype(
        {c: object for c in ("prompt_id", "model_a", "model_b", "judge")})


CASES = [("battles", ".jsonl"), ("battles", ".parquet"), ("judgments", ".jsonl"), ("judgments", ".parquet"),
         ("judgments", ".csv")]
BAD_ROWS = {  # (what is broken, the bad row's change, the field the error must name)
    "battles": [("unknown winner", {"winner": "model_c"}, "winner"),
                ("same model", {"model_b": "m3", "model_a": " m3"}, "model_b"),
                ("blank model", {"model_a": "  "}, "model_a"),
                ("control character", {"model_b": "m1\nm2"}, "model_b")],
    "judgments": [("outcome above 1", {"outcome": 1.5}, "outcome"),
                  ("same model", {"model_b": "m3", "model_a": "m3 "}, "model_b"),
                  ("blank prompt", {"prompt_id": ""}, "prompt_id"),
                  ("control character", {"judge": "j\x07"}, "judge")],
}


@pytest.mark.parametrize("kind,suffix", CASES)
def test_a_clean_file_reads_as_the_row_by_row_reader_reads_it(tmp_path, kind, suffix):
    rows = battle_rows() if kind == "battles" else judgment_rows()
    rows[17]["model_a"] = f" {rows[17]['model_a']} "  # whitespace removed: the same model as without
    path = write(rows, tmp_path / f"{kind}{suffix}")
    fast, oracle = read_judgments(path), row_by_row(path, kind == "battles")
    assert fast.report.format == oracle.report.format
    assert fast.report.as_dict() == oracle.report.as_dict()
    pd.testing.assert_frame_equal(as_text(fast.frame), as_text(oracle.frame), check_dtype=False)
    assert isinstance(fast.frame["model_a"].dtype, pd.CategoricalDtype)
    a, b = rank(fast.frame, "bt"), rank(oracle.frame, "bt")
    assert a.models == b.models
    np.testing.assert_allclose(a.scores, b.scores, rtol=0, atol=1e-8)


@pytest.mark.parametrize("kind,suffix", CASES)
@pytest.mark.parametrize("case", range(4))
def test_one_bad_row_in_ten_thousand_gives_the_row_by_row_error(tmp_path, kind, suffix, case):
    what, change, field = BAD_ROWS[kind][case]
    rows = battle_rows() if kind == "battles" else judgment_rows()
    bad = 7_321  # 0-based: row 7,322 of the file, in a later chunk
    rows[bad].update(change)
    path = write(rows, tmp_path / f"{kind}{suffix}")
    message = error_of(lambda: read_judgments(path))
    assert message == error_of(lambda: row_by_row(path, kind == "battles")), what
    assert f"row {bad + 1} " in message and f'field "{field}"' in message and str(path) in message


@pytest.mark.parametrize("kind", ["battles", "judgments"])
def test_a_malformed_line_is_named_by_its_line_number_after_blank_lines(tmp_path, kind):
    rows = battle_rows() if kind == "battles" else judgment_rows()
    lines = [json.dumps(r) for r in rows]
    lines[5000] = lines[5000][:-1]  # a truncated object
    lines[100:100] = ["", "   "]  # blank lines count as lines
    path = tmp_path / f"{kind}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    message = error_of(lambda: read_judgments(path))
    assert message == error_of(lambda: row_by_row(path, kind == "battles"))
    assert "row 5003:" in message


@pytest.mark.parametrize("kind,suffix", CASES)
def test_skip_invalid_skips_and_counts_the_same_rows(tmp_path, kind, suffix):
    rows = battle_rows() if kind == "battles" else judgment_rows()
    for i in (3, 4_500, 9_999):
        rows[i].update(BAD_ROWS[kind][0][1])
    path = write(rows, tmp_path / f"{kind}{suffix}")
    fast = read_judgments(path, skip_invalid=True)
    oracle = row_by_row(path, kind == "battles", skip_invalid=True)
    assert fast.report.as_dict() == oracle.report.as_dict()
    assert fast.report.rows_skipped == 3 and fast.report.rows_used == N - 3
    pd.testing.assert_frame_equal(as_text(fast.frame), as_text(oracle.frame), check_dtype=False)


def test_two_objects_on_one_line_are_refused_as_before(tmp_path):
    lines = [json.dumps(r) for r in battle_rows()]
    lines[8000] = lines[8000] + " " + lines[8001]
    path = tmp_path / "battles.jsonl"
    path.write_text("\n".join(lines) + "\n")
    message = error_of(lambda: read_judgments(path))
    assert message == error_of(lambda: row_by_row(path, True)) and "row 8001:" in message


def test_ties_follow_fastchat_both_tie_labels_are_half_a_win(tmp_path):
    rows = [{"question_id": "q1", "model_a": "x", "model_b": "y", "winner": w} for w in WINNERS * 3]
    for suffix in (".jsonl", ".parquet"):
        frame = read_judgments(write(rows, tmp_path / f"b{suffix}")).frame
        expected = [{"model_a": 1.0, "model_b": 0.0}.get(w, 0.5) for w in WINNERS * 3]
        assert frame["outcome"].tolist() == expected


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl", ".json"])
def test_arena_battles_are_detected_in_parquet_and_json_files(tmp_path, suffix):
    rows = battle_rows(200)
    path = tmp_path / f"battles{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(rows))
    else:
        write(rows, path)
    table = read_judgments(path)
    assert table.report.format == "arenahard-battles" and table.report.rows_used == 200


def test_a_parquet_battle_log_without_its_winner_column_is_refused_naming_it(tmp_path):
    rows = [{k: v for k, v in r.items() if k != "winner"} for r in battle_rows(50)]
    path = write(rows, tmp_path / "battles.parquet")
    for args in ([], ["--format", "arenahard-battles"]):
        res = run_cli("rank", path, *args)
        assert res.returncode == 2, res.stderr
        assert "lacks required column(s) ['winner']" in res.stderr and "not UTF-8" not in res.stderr


def test_a_parquet_file_that_is_no_battle_log_is_not_read_as_text(tmp_path):
    path = write([{"x": 1, "y": 2}], tmp_path / "other.parquet")
    res = run_cli("rank", path, "--format", "arenahard-battles")
    assert res.returncode == 2 and "lacks required column(s)" in res.stderr and "UTF-8" not in res.stderr


def test_integer_question_ids_read_as_their_text(tmp_path):
    rows = battle_rows(300)
    for i, r in enumerate(rows):
        r["question_id"] = i % 37
    for suffix in (".jsonl", ".parquet"):
        path = write(rows, tmp_path / f"b{suffix}")
        fast, oracle = read_judgments(path), row_by_row(path, True)
        assert fast.frame["prompt_id"].astype(str).tolist() == oracle.frame["prompt_id"].tolist()


@pytest.mark.parametrize("unit", ["prompt", "battle"])
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_bootstrap_intervals_equal_the_row_by_row_readers(tmp_path, suffix, unit):
    """Models and prompts are numbered in order of first appearance across chunks, as the row-by-row reader
    numbers them, so a seeded bootstrap draws the same replicates (intervals equal, not merely close)."""
    path = write(battle_rows(), tmp_path / f"battles{suffix}")
    fast, oracle = read_judgments(path).frame, row_by_row(path, True).frame
    for method in ("bt", "elo"):
        a = rank(fast, method, bootstrap=30, bootstrap_unit=unit, seed=3)
        b = rank(oracle, method, bootstrap=30, bootstrap_unit=unit, seed=3)
        assert a.models == b.models
        for x, y in ((a.scores, b.scores), (a.ci_low, b.ci_low), (a.ci_high, b.ci_high)):
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-8)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_csv_blank_lines_and_quoted_cells_read_and_fail_as_the_row_reader(tmp_path, newline):
    """Rows are numbered as the row reader numbers them (blank lines count); a quoted cell (which may hold a
    newline, so lines are no longer rows) sends the file to the row reader."""
    lines = [",".join(str(r[c]) for c in ("prompt_id", "model_a", "model_b", "judge", "outcome"))
             for r in judgment_rows()]
    lines[200:200] = ["", ""]
    lines[6000] = lines[6000].replace(",j,", ",j2,")
    head = '"prompt_id","model_a","model_b","judge","outcome"'  # a quoted header (pyarrow writes one) is fine
    path = tmp_path / "j.csv"
    path.write_bytes(newline.join([head, *lines, ""]).encode())
    fast, oracle = read_judgments(path), row_by_row(path, False)
    assert isinstance(fast.frame["model_a"].dtype, pd.CategoricalDtype)  # read by the columnar path
    assert fast.report.as_dict() == oracle.report.as_dict()
    pd.testing.assert_frame_equal(as_text(fast.frame), as_text(oracle.frame), check_dtype=False)
    bad = lines[:]
    bad[8500] = bad[8500].rsplit(",", 1)[0] + ",2"
    for quoted in (False, True):
        if quoted:
            bad[7000] = bad[7000].replace(",j,", ',"j, the judge",')
        path.write_bytes(newline.join([head, *bad, ""]).encode())
        message = error_of(lambda: read_judgments(path))
        assert message == error_of(lambda: row_by_row(path, False))
        assert "row 8501 " in message and str(path) in message, message  # blank lines count as rows


@pytest.mark.parametrize("large", [False, True])
def test_the_byte_test_of_plain_names_never_passes_a_name_the_regex_refuses(large):
    """``_visible_ascii`` (all bytes checked at once) is a shortcut: where it says yes, PLAIN_NAME matches each
    value; on names with inner spaces or non-ASCII letters it says no and the regex decides."""
    import re

    import pyarrow.compute as pc

    from judgewise.io.columnar import PLAIN_NAME, _clean_names, _visible_ascii

    rng = np.random.default_rng(0)
    alphabet = np.array(list("ab~!Z9 \t\x7f\x00é-"), dtype=object)
    for _ in range(400):
        values = ["".join(rng.choice(alphabet, rng.integers(0, 4))) for _ in range(rng.integers(1, 4))]
        arr = pa.array(values, pa.large_string() if large else pa.string()).slice(rng.integers(0, len(values)))
        texts = arr.to_pylist()
        if _visible_ascii(arr, pa):
            assert texts and all(re.fullmatch(PLAIN_NAME, t) for t in texts), texts
    plain = pa.array(["gpt-4", "q12"])
    assert _visible_ascii(plain, pa) and _clean_names(plain, pa, pc) == plain

"""Readers: canonical round trips (CSV/JSONL/JSON/Parquet/DataFrame), skip-and-count, the format registry."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgewise.errors import InputError
from judgewise.io import FORMATS, read_any, read_judgments, read_responses, read_scores, register_format
from judgewise.io.atomic import write_text_atomic
from judgewise.io.canonical import from_dataframe


def _judgments(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    models = np.array(["m-alpha", "m-beta", "m-gamma", "m 4, with comma"])
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    verdict = rng.integers(-2, 3, n)
    return pd.DataFrame({
        "prompt_id": [f"p{i % 7}" for i in range(n)],
        "model_a": models[a], "model_b": models[b],
        "judge": "judge-x",
        "outcome": np.where(verdict > 0, 1.0, np.where(verdict < 0, 0.0, 0.5)),
        "verdict": verdict.astype(float),
        "judgment_id": [f"j{i}" for i in range(n)],
        "raw": [f'text "{i}"\nline two' for i in range(n)],
    })


WRITERS = {
    "jsonl": lambda df, p: df.to_json(p, orient="records", lines=True, force_ascii=False),
    "json": lambda df, p: df.to_json(p, orient="records", force_ascii=False),
    "csv": lambda df, p: df.to_csv(p, index=False),
    "parquet": lambda df, p: df.to_parquet(p, index=False),
}


@pytest.mark.parametrize("container", list(WRITERS))
def test_canonical_judgments_round_trip_through_every_container(tmp_path, container):
    original = _judgments()
    path = tmp_path / f"judgments.{container}"
    WRITERS[container](original, path)
    table = read_judgments(path)
    assert table.kind == "judgments" and table.report.format == container
    assert (table.report.rows_read, table.report.rows_used, table.report.rows_skipped) == (40, 40, 0)
    pd.testing.assert_frame_equal(table.frame[original.columns], original, check_dtype=False)


def test_dataframe_input_is_validated_like_a_file():
    table = read_judgments(_judgments())
    assert table.report.format == "dataframe" and len(table.frame) == 40
    bad = _judgments()
    bad.loc[5, "outcome"] = 1.5
    with pytest.raises(InputError) as err:
        read_judgments(bad)
    assert (err.value.row, err.value.field) == (6, "outcome")


@pytest.mark.parametrize("container", ["jsonl", "csv", "parquet"])
def test_responses_and_scores_round_trip(tmp_path, container):
    responses = pd.DataFrame({"prompt_id": ["p1", "p1", "p2"], "model": ["a", "b", "a"],
                              "text": ["hello", "", "ünïcode ✓"], "n_tokens": [1, 0, 2]})
    scores = pd.DataFrame({"item_id": ["i1", "i2", "i1"], "rater": ["r1", "r1", "r2"], "score": [0.5, 2.0, -1.0]})
    WRITERS[container](responses, tmp_path / f"r.{container}")
    WRITERS[container](scores, tmp_path / f"s.{container}")
    got_r = read_responses(tmp_path / f"r.{container}").frame
    got_s = read_scores(tmp_path / f"s.{container}").frame
    pd.testing.assert_frame_equal(got_r[["prompt_id", "model", "text"]], responses[["prompt_id", "model", "text"]],
                                  check_dtype=False)
    pd.testing.assert_frame_equal(got_s, scores, check_dtype=False)


def test_skip_invalid_drops_and_counts_each_bad_row_with_its_reason(tmp_path):
    good = _judgments(10).drop(columns=["raw"])
    lines = [json.dumps(r) for r in good.to_dict(orient="records")]
    lines[2] = lines[2].replace('"outcome":', '"outcome_typo":')
    lines[5] = "{not json"
    lines[7] = lines[7].replace('"model_a":', '"model_b_dup":')
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:  # lines that are not JSON are found first, while parsing
        read_judgments(path)
    assert (err.value.row, err.value.field) == (6, None)
    table = read_judgments(path, skip_invalid=True)
    report = table.report
    assert (report.rows_read, report.rows_used, report.rows_skipped) == (10, 7, 3)
    assert [r.split(": ")[0] for r in report.skipped_reasons] == [
        f'{path} row 6', f'{path} row 3 field "outcome"', f'{path} row 8 field "model_a"']
    assert list(table.frame["judgment_id"]) == [f"j{i}" for i in (0, 1, 3, 4, 6, 8, 9)]


def test_a_user_registered_format_is_detected_and_read(tmp_path):
    def read_tsv(path, *, skip_invalid=False, kind=None):
        frame = pd.read_csv(path, sep="\t")
        return from_dataframe(frame, kind="judgments", skip_invalid=skip_invalid, name=str(path))

    register_format("tsv-judgments", detect=lambda p: p.suffix == ".tsv", read=read_tsv)
    try:
        path = tmp_path / "j.tsv"
        _judgments(12).to_csv(path, sep="\t", index=False)
        table = read_any(path)
        assert table.kind == "judgments" and len(table.frame) == 12
    finally:
        FORMATS.pop("tsv-judgments")


def test_asking_for_judgments_from_a_responses_file_is_an_error(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"prompt_id": "p", "model": "a", "text": "t"}\n')
    with pytest.raises(InputError, match="holds a responses table, not judgments"):
        read_judgments(path)


def test_atomic_write_failing_midway_keeps_the_old_file_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(target, "new text then an unencodable \ud800")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.json"]
    write_text_atomic(target, "new")
    assert target.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_csv_rows_are_numbered_as_data_rows_across_blank_lines_and_ragged_rows_are_counted(tmp_path):
    path = tmp_path / "j.csv"
    path.write_text("prompt_id,model_a,model_b,judge,outcome\n"
                    "p1,a,b,j,1\n\np2,a,b,j,0,extra\np3,a,b,j,oops\np4,a,b,j,0.5\n")
    with pytest.raises(InputError) as err:
        read_judgments(path)
    assert err.value.row == 3 and "expected 5 cells" in str(err.value)
    table = read_judgments(path, skip_invalid=True)
    assert (table.report.rows_read, table.report.rows_used, table.report.rows_skipped) == (4, 2, 2)
    assert [r.split(": ")[0] for r in table.report.skipped_reasons] == [f"{path} row 3",
                                                                        f'{path} row 4 field "outcome"']
    assert list(table.frame["prompt_id"]) == ["p1", "p4"]


def test_failed_judge_calls_are_counted_as_skipped_not_rated_and_not_an_error(tmp_path):
    frame = _judgments(6).drop(columns=["raw"])
    frame["error"] = None
    frame.loc[[1, 4], "outcome"] = None
    frame.loc[[1, 4], "error"] = ["HTTP 500 from the judge", "no verdict in the reply"]
    path = tmp_path / "export.jsonl"
    frame.to_json(path, orient="records", lines=True)
    table = read_judgments(path)
    assert (table.report.rows_read, table.report.rows_used, table.report.rows_skipped) == (6, 4, 2)
    assert "row 2" in table.report.skipped_reasons[0] and "HTTP 500" in table.report.skipped_reasons[0]
    assert list(table.frame["judgment_id"]) == ["j0", "j2", "j3", "j5"]


def test_rows_without_a_judgment_id_are_not_duplicates_and_ids_compare_as_the_text_they_become(tmp_path):
    row = {"prompt_id": "p1", "model_a": "a", "model_b": "b", "judge": "j", "outcome": 1.0}
    path = tmp_path / "j.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [{**row, "judgment_id": "x"}, row, row]))
    table = read_judgments(path)
    assert table.report.rows_used == 3 and table.frame["judgment_id"].isna().tolist() == [False, True, True]
    path.write_text("".join(json.dumps({**row, "judgment_id": i}) + "\n" for i in (1, "1")))
    with pytest.raises(InputError) as err:  # both would be the id "1" in the table
        read_judgments(path)
    assert (err.value.row, err.value.field) == (2, "judgment_id") and "first at row 1" in str(err.value)
    many = pd.DataFrame([{**row, "judgment_id": f"j{i % 3}"} for i in range(9)])
    skipped = from_dataframe(many, skip_invalid=True).report
    assert skipped.rows_used == 3 and skipped.skipped_reasons[-1].endswith('"j2" again (first at row 3)')


def test_a_record_without_the_optional_verdict_is_read_with_no_verdict(tmp_path):
    row = {"prompt_id": "p1", "model_a": "a", "model_b": "b", "judge": "j", "outcome": 1.0}
    path = tmp_path / "j.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [{**row, "verdict": 2}, row, {**row, "verdict": None}]))
    table = read_judgments(path)
    assert table.report.rows_used == 3 and table.frame["verdict"].isna().tolist() == [False, True, True]

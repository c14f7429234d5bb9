"""Fuzzing the readers: whatever bytes or records a file holds, reading it gives a clean judgewise error or a correct
canonical table — never an exception of another type (KeyError, RecursionError, UnicodeDecodeError, ...).

A "correct table" holds the invariants of ``io.tables``: names and ids are non-empty stripped strings without
control characters, ``outcome`` is a number in [0, 1], ``model_a`` ≠ ``model_b``, and the report's rows used and
skipped account for the rows read. Inputs: raw byte strings, mutated valid files (JSONL, JSON, CSV), and records
with arbitrary JSON values (canonical judgments, Arena-Hard battles, AlpacaEval annotations).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgewise.errors import JudgewiseError
from judgewise.io import read_any

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIELDS = ("prompt_id", "model_a", "model_b", "judge", "outcome", "verdict", "judgment_id", "error")
GOOD = [{"prompt_id": f"p{i}", "model_a": a, "model_b": b, "judge": "j", "outcome": o}
        for i, (a, b, o) in enumerate([("x", "y", 1.0), ("y", "z", 0.5), ("z", "x", 0.0), ("x", "z", 1.0)])]
CONTROL = re.compile(r"[\x00-\x1f\x7f]")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6) | st.sampled_from(["x", "y", " x", "x ", "tie", "model_a", "1", "0.5", "NaN", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6)


def read(name: str, content: bytes, **kw):
    """Read ``content`` saved as ``name``: a Table, or the JudgewiseError raised (anything else propagates)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        try:
            return read_any(path, **kw)
        except JudgewiseError as exc:
            assert str(exc) and "\n" not in str(exc), repr(str(exc))
            return exc


def assert_correct(result) -> None:
    """A clean error, or a table holding the canonical invariants."""
    if isinstance(result, JudgewiseError):
        return
    frame, report = result.frame, result.report
    assert report.rows_used == len(frame) > 0
    assert report.rows_used + report.rows_skipped <= report.rows_read + len(frame)  # foreign rows may fan out
    if result.kind != "judgments":
        return
    for col in ("prompt_id", "model_a", "model_b", "judge"):
        for value in frame[col]:
            assert isinstance(value, str) and value == value.strip() and value and not CONTROL.search(value), value
    outcome = frame["outcome"].to_numpy(dtype=float)
    assert all(0.0 <= o <= 1.0 for o in outcome), outcome
    assert (frame["model_a"] != frame["model_b"]).all()


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def csv_bytes(rows: list[dict]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=sorted({k for r in rows for k in r}), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


@st.composite
def mutated(draw, base: bytes) -> bytes:
    """``base`` with a few byte-level edits: deletions, insertions, duplicated or swapped slices."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(data)))
        j = draw(st.integers(i, min(len(data), i + 12)))
        edit = draw(st.sampled_from(["delete", "insert", "duplicate", "byte"]))
        if edit == "delete":
            del data[i:j]
        elif edit == "insert":
            data[i:i] = draw(st.sampled_from([b"\n", b"{", b"}", b",", b'"', b"\xff", b"\x00", b"[" * 3, b"NaN",
                                              "\ufeff".encode(), b"\r\n", b" "]))
        elif edit == "duplicate":
            data[i:i] = data[i:j]
        else:
            data[i:i + 1] = bytes([draw(st.integers(0, 255))])
    return bytes(data)


@FUZZ
@given(content=st.binary(max_size=300), name=st.sampled_from(["j.jsonl", "j.json", "j.csv", "battles.jsonl",
                                                              "j.parquet", "annotations.json"]))
def test_any_bytes_give_a_clean_error_or_a_correct_table(content, name):
    assert_correct(read(name, content))


@FUZZ
@given(data=st.data(), container=st.sampled_from(["jsonl", "json", "csv"]))
def test_mutated_canonical_files_give_a_clean_error_or_a_correct_table(data, container):
    base = {"jsonl": jsonl(GOOD), "json": json.dumps(GOOD, indent=1).encode(), "csv": csv_bytes(GOOD)}[container]
    assert_correct(read(f"j.{container}", data.draw(mutated(base))))


@pytest.mark.slow
@FUZZ
@given(records=st.lists(st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=len(FIELDS)), min_size=1,
                        max_size=4), container=st.sampled_from(["jsonl", "json", "csv"]),
       skip_invalid=st.booleans())
def test_records_of_any_values_give_a_clean_error_or_a_correct_table(records, container, skip_invalid):
    rows = [{**GOOD[0], **r} for r in records] + GOOD[1:]  # mostly valid, with arbitrary values in places
    content = {"jsonl": lambda: jsonl(rows), "json": lambda: json.dumps(rows).encode(),
               "csv": lambda: csv_bytes(rows)}[container]()
    assert_correct(read(f"j.{container}", content, skip_invalid=skip_invalid))


@FUZZ
@given(records=st.lists(st.fixed_dictionaries({}, optional={
    "question_id": json_values, "model_a": json_values, "model_b": json_values, "winner": json_values}),
    min_size=1, max_size=4))
def test_arena_battles_of_any_values_give_a_clean_error_or_a_correct_table(records):
    base = {"question_id": "q", "model_a": "x", "model_b": "y", "winner": "model_a"}
    assert_correct(read("battles.jsonl", jsonl([base] + [{**base, **r} for r in records]),
                        format="arenahard-battles"))


@FUZZ
@given(records=st.lists(st.fixed_dictionaries({}, optional={
    "instruction": json_values, "generator_1": json_values, "preference": json_values}), min_size=1, max_size=4))
def test_alpacaeval_annotations_of_any_values_give_a_clean_error_or_a_correct_table(records):
    base = {"instruction": "q", "generator_1": "anchor", "generator_2": "m", "preference": 1.5}
    rows = [base] + [{**base, **r} for r in records]
    assert_correct(read("results/m/judge/annotations.json", json.dumps(rows).encode(), format="alpacaeval"))


def test_padded_names_are_one_model_and_the_table_is_unchanged_otherwise(tmp_path):
    """"A " and "A" are the same model (names are stripped), so padding never splits a model in two."""
    rows = [{**r, "model_a": r["model_a"] + " ", "prompt_id": " " + r["prompt_id"]} for r in GOOD]
    path = tmp_path / "j.jsonl"
    path.write_bytes(jsonl(rows + GOOD))
    frame = read_any(path).frame
    assert set(frame["model_a"]) | set(frame["model_b"]) == {"x", "y", "z"}
    assert set(frame["prompt_id"]) == {r["prompt_id"] for r in GOOD}
    assert not math.isnan(frame["outcome"].sum())


def test_a_json_object_split_over_two_lines_is_rejected_even_when_line_and_object_counts_match(tmp_path):
    first = json.dumps(GOOD[0]) + ", " + json.dumps(GOOD[1])
    third = json.dumps(GOOD[2])
    cut = third.index(', "model_b"')
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join([first, third[:cut], third[cut + 2:]]) + "\n")
    result = read("j.jsonl", path.read_bytes())
    assert isinstance(result, JudgewiseError) and "row 1" in str(result)


def test_parquet_with_wrong_types_is_a_clean_error(tmp_path):
    frame = pd.DataFrame(GOOD).assign(model_a=[b"x"] * len(GOOD))
    frame.to_parquet(tmp_path / "j.parquet")
    result = read("j.parquet", (tmp_path / "j.parquet").read_bytes())
    assert isinstance(result, JudgewiseError) and 'field "model_a"' in str(result)

"""Generated PeerEval and AutoArena files: valid rows are read exactly, invalid ones refused naming their row and
field (or skipped and counted with ``skip_invalid``), failed judge calls skipped and counted, nothing dropped
silently.

Each file is a random mix of rows of known kinds; the test knows what each row must become. PeerEval: ``position``
outside ``AB``/``BA`` (``ba``, ``XY``, ``""``), missing where the shown models are, or contradicting them, and a
winner that is none of A/B/tie; a row with an ``error`` is a failed call whatever else it holds. AutoArena: winners
outside ``A``/``B``/``-`` and blank prompts; prompts are free text (line breaks, quotes, commas)."""

from __future__ import annotations

import csv
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgewise.errors import InputError
from judgewise.io import read_judgments
from judgewise.io.schema import text_prompt_id
from tests.support import run_cli

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MODELS = ("m1", "m2", "m3", "m4")
OUTCOME = {"a": 1.0, "b": 0.0, "tie": 0.5}

# ---- PeerEval ----------------------------------------------------------------------------------------------------

BAD_POSITIONS = ["ba", "ab", "XY", "", " AB", "A B", 1, ["AB"], {"order": "AB"}, True]
BAD_WINNERS = [{"winner": "maybe"}, {"winner": ""}, {"winner": None}, {"winner": "C"}, {}, None, "A", ["A"]]
ERRORS = ["timeout", "rate limited (429)", {"code": 500}, True, "line\nbreak"]


@st.composite
def peer_row(draw, kind: str, number: int) -> tuple[dict, tuple | str | None]:
    """One PeerEval record of ``kind`` (valid, failed, invalid) and what it must become: (model_a, model_b, outcome)
    for a valid row, the field an invalid one is refused on, None for a failed call."""
    left, right = draw(st.permutations(MODELS))[:2]
    position = draw(st.sampled_from(["AB", "BA"]))
    a, b = (left, right) if position == "AB" else (right, left)
    winner = draw(st.sampled_from(["A", "B", "tie", "a", "Tie", " B "]))
    row = {"dataset": "d", "question_id": f"q{number % 5}", "solver_left": left, "solver_right": right,
           "judge_model": draw(st.sampled_from(["j1", "j2"])), "position": position,
           "judgment": {"winner": winner, "confidence": 0.5}}
    if draw(st.booleans()):  # the shown models written out, or left to position
        row.update(response_a_model=a, response_b_model=b)
    expected = (a, b, OUTCOME[winner.strip().lower()])
    if kind == "valid":
        if "response_a_model" in row and draw(st.booleans()):
            del row["position"]  # not needed when the shown models are given
        return row, expected
    if kind == "failed":  # whatever else the row holds
        row["error"] = draw(st.sampled_from(ERRORS))
        if draw(st.booleans()):
            row["position"] = draw(st.sampled_from(BAD_POSITIONS))
        return row, None
    fault = draw(st.sampled_from(["position", "no_position", "contradiction", "winner"]))
    if fault == "winner":
        row["judgment"] = draw(st.sampled_from(BAD_WINNERS))
        return row, "judgment.winner"
    if fault == "position":
        row["position"] = draw(st.sampled_from(BAD_POSITIONS))
    elif fault == "no_position":
        row.pop("response_a_model", None)
        row.pop("response_b_model", None)
        if draw(st.booleans()):
            row["position"] = None
        else:
            del row["position"]
    else:
        row.update(response_a_model=b, response_b_model=a)  # the other order than position says
    row["error"] = draw(st.sampled_from([None, "", "  ", False]))  # no error: these read as none
    return row, "position"


@st.composite
def peer_files(draw) -> tuple[list[dict], list]:
    kinds = draw(st.lists(st.sampled_from(["valid", "failed", "invalid"]), min_size=0, max_size=10))
    kinds.insert(draw(st.integers(0, len(kinds))), "valid")  # at least one row to read
    pairs = [draw(peer_row(kind, n)) for n, kind in enumerate(kinds)]
    return [r for r, _ in pairs], [e for _, e in pairs]


def _read(name: str, content: str, **kw):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_text(content, encoding="utf-8", newline="")
        try:
            return read_judgments(path, **kw)
        except InputError as exc:
            return exc


def _games(frame) -> list[tuple]:
    return list(zip(frame["model_a"].astype(str), frame["model_b"].astype(str), frame["outcome"].astype(float)))


def _check(result, expected: list, skip_invalid: bool, line_of=lambda i: i + 1) -> None:
    """``result`` (a Table or the InputError) is what ``expected`` (per row: a game, a field, None) says."""
    invalid = [(line_of(i), e) for i, e in enumerate(expected) if isinstance(e, str)]
    failed = [line_of(i) for i, e in enumerate(expected) if e is None]
    if invalid and not skip_invalid:
        assert isinstance(result, InputError), f"read although row {invalid[0][0]} is bad"
        assert (result.row, result.field) == invalid[0], str(result)
        return
    assert not isinstance(result, InputError), str(result)
    assert _games(result.frame) == [e for e in expected if isinstance(e, tuple)]
    report = result.report
    assert report.rows_read == len(expected) and report.rows_used == len(result.frame)
    assert report.rows_skipped == len(invalid) + len(failed)
    reasons = " | ".join(report.skipped_reasons)
    for row in failed:
        assert f'row {row} field "error"' in reasons, reasons
    for row, field in invalid:
        assert f'row {row} field "{field}"' in reasons, reasons


@pytest.mark.slow
@PROPERTY
@given(peer_files(), st.booleans())
def test_generated_peereval_rows_are_read_refused_or_counted_as_they_must(data, skip_invalid):
    rows, expected = data
    result = _read("judgments.jsonl", "".join(json.dumps(r) + "\n" for r in rows), skip_invalid=skip_invalid)
    _check(result, expected, skip_invalid)
    if not isinstance(result, InputError):
        assert result.report.format == "peereval"
        assert result.frame["first"].astype(str).tolist() == result.frame["model_a"].astype(str).tolist()


@pytest.mark.parametrize("position", ["ba", "XY", "Ab", ""])
def test_a_peereval_position_outside_ab_and_ba_is_refused_not_read_as_ab(tmp_path, position):
    rows = [{"question_id": "q1", "solver_left": "m1", "solver_right": "m2", "judge_model": "j", "position": p,
             "judgment": {"winner": "A"}} for p in ("AB", position)]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_judgments(tmp_path / "p.jsonl")
    assert (err.value.row, err.value.field) == (2, "position") and json.dumps(position) in str(err.value)


def test_a_peereval_row_with_an_error_is_skipped_even_when_it_carries_a_verdict(tmp_path):
    rows = [{"question_id": f"q{i}", "solver_left": "m1", "solver_right": "m2", "judge_model": "j", "position": "AB",
             "judgment": {"winner": "A"}, "error": "parse failed" if i % 2 else None} for i in range(6)]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    table = read_judgments(tmp_path / "p.jsonl")
    assert (table.report.rows_used, table.report.rows_skipped) == (3, 3)
    assert all("parse failed" in reason for reason in table.report.skipped_reasons)


def test_rank_says_how_many_peereval_rows_it_skipped_for_their_errors(tmp_path):
    rows = [{"question_id": f"q{i}", "solver_left": "m1", "solver_right": "m2", "judge_model": "j",
             "position": "AB" if i % 3 else "BA", "judgment": {"winner": "AB"[i % 2]},
             "error": "judge timed out" if i < 4 else None} for i in range(12)]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    res = run_cli("rank", "p.jsonl", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "read 12 rows from p.jsonl [peereval]: used 8, skipped 4" in res.stdout + res.stderr, res.stdout


# ---- AutoArena ---------------------------------------------------------------------------------------------------

PROMPT_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\r\x00"), min_size=1, max_size=30).filter(
    lambda t: t.strip())
BAD_AA_WINNERS = ["C", "tie", "AB", "model_a", "0", "1", "--", "a b"]


@st.composite
def arena_row(draw, kind: str) -> tuple[dict, tuple | str]:
    """One AutoArena head-to-head row and what it must become: (model_a, model_b, outcome) or the refused field."""
    a, b = draw(st.permutations(MODELS))[:2]
    winner = draw(st.sampled_from(["A", "B", "-", "a", " b", "- "]))
    prompt = draw(st.sampled_from(["What is 2+2?", 'Say "hi",\nthen stop.', "x\ty"]) | PROMPT_TEXT)
    row = {"prompt": prompt, "model_a": a, "model_b": b, "response_a": f"answer of {a}", "response_b": f"answer of {b}",
           "winner": winner}
    if kind == "valid":
        return row, (a, b, {"A": 1.0, "B": 0.0, "-": 0.5}[winner.strip().upper()])
    if draw(st.booleans()):
        row["winner"] = draw(st.sampled_from(BAD_AA_WINNERS))
        return row, "winner"
    row["prompt"] = draw(st.sampled_from(["   ", "\n", " \t "]))
    return row, "prompt"


@st.composite
def arena_files(draw) -> tuple[list[dict], list]:
    kinds = draw(st.lists(st.sampled_from(["valid", "invalid"]), max_size=10))
    kinds.insert(draw(st.integers(0, len(kinds))), "valid")
    pairs = [draw(arena_row(kind)) for kind in kinds]
    return [r for r, _ in pairs], [e for _, e in pairs]


def _csv(rows: list[dict]) -> str:
    with tempfile.SpooledTemporaryFile(mode="w+", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        fh.seek(0)
        return fh.read()


@pytest.mark.slow
@PROPERTY
@given(arena_files(), st.booleans())
def test_generated_autoarena_rows_are_read_or_refused_as_they_must(data, skip_invalid):
    rows, expected = data
    result = _read("h2h.csv", _csv(rows), skip_invalid=skip_invalid)
    _check(result, expected, skip_invalid)
    if not isinstance(result, InputError):
        valid = [r for r, e in zip(rows, expected) if isinstance(e, tuple)]
        assert result.frame["prompt_id"].tolist() == [text_prompt_id(r["prompt"], "aa-") for r in valid]
        assert result.report.format == "autoarena"


def test_an_autoarena_prompt_with_line_breaks_is_read_not_refused(tmp_path):
    rows = [{"prompt": "Write a poem\nabout cats", "model_a": "x", "model_b": "y", "response_a": "r",
             "response_b": "s", "winner": "A"}]
    (tmp_path / "h2h.csv").write_text(_csv(rows), encoding="utf-8")
    table = read_judgments(tmp_path / "h2h.csv")
    assert table.frame["prompt_id"].tolist() == [text_prompt_id("Write a poem\nabout cats", "aa-")]

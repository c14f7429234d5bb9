"""Acceptance 4: bad input through the real CLI gives one error line naming file, row and field, and exit ≠ 0.

Each case writes a small broken file and runs ``judgewise rank`` on it in its own subprocess (the cases run two
at a time to keep the suite quick). File-level problems (empty file, unknown format, a folder without
annotations, a CSV header) have no row; row-level problems name the 1-based row and the field.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd
import pytest

from judgewise.errors import JudgewiseError
from judgewise.io import read_judgments
from judgewise.io.containers import read_parquet
from judgewise.io.tables import ReadReport
from judgewise.io.validate import Validator
from tests.support import run_cli

GOOD = {"prompt_id": "p1", "model_a": "alpha", "model_b": "beta", "judge": "j", "outcome": 1.0}


def _jsonl(*rows) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def _with(**changes) -> dict:
    row = {**GOOD, **changes}
    return {k: v for k, v in row.items() if v is not _DROP}


_DROP = object()
JUDGEBENCH_FILE = "response_model-m__judge_name-arena_hard__judge_model-j.jsonl"
JUDGEBENCH_RECORD = {"pair_id": "p1", "label": "A>B", "judge_name": "arena_hard", "response_model": "m",
                     "judgments": [{"judgment": {"judge_model": "j", "response": "[[A>B]]"}}] * 2}
CSV_HEADER = "prompt_id,model_a,model_b,judge,outcome\n"


def _alpacaeval(root: Path, preference, instruction="q1") -> Path:
    folder = root / "results" / "my-model" / "weighted_alpaca_eval_gpt4_turbo"
    folder.mkdir(parents=True)
    rows = [{"instruction": text, "generator_1": "anchor", "generator_2": "my-model", "preference": p}
            for text, p in [("q0", 1.5), (instruction, preference)]]
    (folder / "annotations.json").write_text(json.dumps(rows, indent=1))
    return root


@dataclass
class Case:
    name: str
    make: Callable[[Path], Path]  # writes the input under a folder, returns the path to rank
    row: int | None
    field: str | None
    says: str
    args: tuple = ()
    file_named: str | None = None  # the file the message must name, when not the ranked path itself


def _write(name: str, content: str | bytes) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        path = root / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return path
    return make


def _parquet_without_judge(root: Path) -> Path:
    path = root / "j.parquet"
    pd.DataFrame([GOOD]).drop(columns=["judge"]).to_parquet(path)
    return path


def _folder_without_annotations(root: Path) -> Path:
    (root / "results" / "my-model").mkdir(parents=True)
    (root / "results" / "my-model" / "notes.txt").write_text("no annotations here")
    return root


def _games_folder(root: Path) -> Path:
    """A judge's folder of Arena-Hard model_judgment files; line 2 of the second file judges the baseline itself."""
    folder = root / "model_judgment" / "judge"
    folder.mkdir(parents=True)
    game = {"question_id": 1, "judge": "judge", "games": [{"score": "A>B"}, {"score": "B>A"}]}
    (folder / "first.jsonl").write_text(_jsonl({**game, "model": "x"}, {**game, "question_id": 2, "model": "x"}))
    (folder / "second.jsonl").write_text(_jsonl({**game, "model": "y"}, {**game, "model": "gpt-4-0314"}))
    return folder


CASES = [  # run through the CLI, each in its own subprocess
    Case("malformed_json_line", _write("j.jsonl", _jsonl(GOOD, '{"prompt_id": "p2", "model_a": ')), 2, None,
         "not valid JSON"),
    Case("missing_field", _write("j.jsonl", _jsonl(GOOD, _with(outcome=_DROP))), 2, "outcome", "field is missing"),
    Case("outcome_out_of_range", _write("j.jsonl", _jsonl(GOOD, GOOD, _with(outcome=1.5))), 3, "outcome",
         "found 1.5"),
    Case("outcome_not_a_number", _write("j.jsonl", _jsonl(_with(outcome="abc"))), 1, "outcome", 'found "abc"'),
    Case("outcome_nan", _write("j.csv", CSV_HEADER + "p1,alpha,beta,j,1\np2,alpha,beta,j,NaN\n"), 2, "outcome",
         "NaN"),
    Case("verdict_not_5_way", _write("j.jsonl", _jsonl(_with(verdict=1), _with(verdict=3))), 2, "verdict",
         "found 3"),
    Case("model_plays_itself", _write("j.jsonl", _jsonl(GOOD, _with(model_b="alpha"))), 2, "model_b",
         "model_a = model_b"),
    Case("empty_model_name", _write("j.jsonl", _jsonl(GOOD, _with(model_a="  "))), 2, "model_a", "non-empty"),
    Case("duplicate_judgment_id", _write("j.jsonl", _jsonl(_with(judgment_id="x"), _with(judgment_id="y"),
                                                             _with(judgment_id="x"))), 3, "judgment_id",
         "first at row 1"),
    Case("empty_file", _write("j.jsonl", "\n\n"), None, None, "empty"),
    Case("unknown_format", _write("j.txt", "model_a beats model_b\n"), None, None, "cannot detect"),
    Case("non_utf8_bytes", _write("j.jsonl", _jsonl(GOOD).encode() + b'{"prompt_id": "p\xff"}\n'), 2, None,
         "not UTF-8"),
    Case("folder_without_annotations", _folder_without_annotations, None, None, "no file of a known format"),
    Case("csv_wrong_header", _write("j.csv", "prompt_id,model_a,model_b,judge,result\np1,alpha,beta,j,1\n"),
         None, "outcome", "header lacks"),
    Case("parquet_missing_column", _parquet_without_judge, None, "judge", "header lacks"),
    Case("forced_store_not_sqlite", _write("j.jsonl", _jsonl(GOOD)), None, None, "not an SQLite file",
         args=("--format", "store")),
    Case("alpacaeval_preference_out_of_range", lambda root: _alpacaeval(root, 2.5), 2, "preference", "[1, 2]",
         file_named="annotations.json"),
]
LIBRARY_CASES = [  # the same checks, in-process (quicker)
    Case("null_field", _write("j.jsonl", _jsonl(GOOD, _with(judge=None))), 2, "judge", "null"),
    Case("csv_ragged_row", _write("j.csv", CSV_HEADER + "p1,alpha,beta,j,1\np2,alpha,beta,j,1,extra\n"), 2,
         None, "expected 5 cells"),
    Case("alpacaeval_preference_not_a_number", lambda root: _alpacaeval(root, "abc"), 2, "preference",
         'found "abc"', file_named="annotations.json"),
    Case("arenahard_unknown_winner", _write("battles.jsonl", _jsonl(
        {"question_id": 1, "model_a": "x", "model_b": "y", "winner": "model_a"},
        {"question_id": 2, "model_a": "x", "model_b": "y", "winner": "draw"})), 2, "winner", 'found "draw"'),
    Case("alpacaeval_instruction_not_text", lambda root: _alpacaeval(root, 2, instruction=5), 2, "instruction",
         "found 5", file_named="annotations.json"),
    Case("arenahard_game_score_not_a_label", _write("model.jsonl", _jsonl(
        {"question_id": 1, "model": "x", "judge": "j", "games": [{"score": "A>B"}, {"score": ["A>B"]}]})), 1,
        "games[1].score", "found ['A>B']"),
    Case("arenahard_games_folder_names_the_file", _games_folder, 2, "model_b", "model_a = model_b",
         file_named="second.jsonl"),
    Case("judgebench_label_not_text", _write(JUDGEBENCH_FILE, _jsonl({**JUDGEBENCH_RECORD, "label": ["A>B"]})), 1,
         "label", "expected"),
    Case("judgebench_non_utf8_line",
         _write(JUDGEBENCH_FILE, _jsonl(JUDGEBENCH_RECORD).encode() + b'{"pair_id": "\xff"}\n'), 2, None, "not UTF-8"),
    Case("truncated_json_list", _write("annotations.json", '[{"instruction": "q", "preference": 1.5},'), None,
         None, "not valid JSON", args=("--format", "alpacaeval")),
    Case("unknown_forced_format", _write("j.jsonl", _jsonl(GOOD)), None, None, "unknown format",
         args=("--format", "nope")),
]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Run every case's CLI call (two subprocesses at a time); name → (path, CompletedProcess)."""
    roots = {case.name: tmp_path_factory.mktemp(case.name) for case in CASES}  # one thread: mktemp is not thread-safe

    def run(case: Case):
        path = case.make(roots[case.name])
        return case.name, (path, run_cli("rank", path, "--json", *case.args, timeout=120))

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(run, CASES))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_gives_one_line_naming_file_row_and_field(outcomes, case):
    path, res = outcomes[case.name]
    assert res.returncode != 0 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    _assert_names_where(case, path, lines[0])


@pytest.mark.parametrize("case", LIBRARY_CASES, ids=[c.name for c in LIBRARY_CASES])
def test_bad_input_raises_an_error_naming_file_row_and_field(tmp_path, case):
    path = case.make(tmp_path)
    forced = dict(zip(case.args[::2], case.args[1::2])).get("--format")
    with pytest.raises(JudgewiseError) as err:
        read_judgments(path, format=forced)
    assert err.value.exit_code != 0
    _assert_names_where(case, path, f"error: {err.value}")


def _assert_names_where(case: Case, path: Path, line: str) -> None:
    assert "\n" not in line
    assert line.startswith("error: ") and case.says in line, line
    if case.name != "unknown_forced_format":  # an unknown --format name is about the option, not a file
        assert (case.file_named or str(path)) in line, line
    assert (f"row {case.row}" in line) if case.row else not re.search(r"\brow \d", line), line
    assert (f'field "{case.field}"' in line) if case.field else ("field " not in line), line


def test_at_least_fifteen_bad_input_cases_go_through_the_cli():
    assert len(CASES) >= 15


def test_skip_invalid_ranks_the_good_rows_and_reports_what_it_skipped(tmp_path):
    good = [_with(prompt_id=f"p{i}", outcome=o) for i, o in enumerate([1, 0, 0.5, 1, 1, 0])]
    bad = [_with(outcome=7), '{"broken', _with(model_a=""), _with(model_b="alpha")]
    path = tmp_path / "mixed.jsonl"
    path.write_text(_jsonl(*good[:3], *bad, *good[3:]))
    strict = run_cli("rank", path, "--json")
    assert strict.returncode == 2 and "row 5" in strict.stderr  # lines that are not JSON are found first
    res = run_cli("rank", path, "--json", "--skip-invalid")
    assert res.returncode == 0, res.stderr
    assert {r["model"] for r in json.loads(res.stdout)} == {"alpha", "beta"}
    assert "read 10 rows" in res.stderr and "used 6, skipped 4" in res.stderr
    assert "row 4" in res.stderr and 'row 5' in res.stderr


def test_skip_invalid_skips_and_counts_malformed_judgebench_records(tmp_path):
    bad_label = {**JUDGEBENCH_RECORD, "pair_id": "p2", "label": "A=B"}
    path = tmp_path / JUDGEBENCH_FILE
    path.write_bytes(_jsonl(JUDGEBENCH_RECORD, bad_label, "{not json").encode())
    with pytest.raises(JudgewiseError, match="row 3: not valid JSON"):  # lines are parsed before records
        read_judgments(path)
    table = read_judgments(path, skip_invalid=True)
    report = table.report
    assert (report.rows_read, report.rows_used, report.rows_skipped) == (4, 2, 2)  # 2 games + 2 bad lines
    assert "row 2" in report.skipped_reasons[1] and "row 3" in report.skipped_reasons[0]
    assert set(table.frame["prompt_id"]) == {"p1"}


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_surrogate_pairs_and_escaped_backslashes_are_text_and_only_lone_surrogates_are_refused(tmp_path, suffix):
    # "\ud83d\ude00" is one character (an emoji, as json.dumps writes it); "\\ud800" is six; "\ud800" is no character
    rows = [dict(GOOD, model_a="alpha\ud83d\ude00"), dict(GOOD, prompt_id="p2", judge="\\ud800 judge")]
    path = tmp_path / f"j{suffix}"
    path.write_text(_jsonl(*rows) if suffix == ".jsonl" else json.dumps(rows), encoding="utf-8")
    table = read_judgments(path).frame
    assert table["model_a"].iloc[0] == "alpha\U0001F600" and table["judge"].iloc[1] == "\\ud800 judge"
    rows.append(dict(GOOD, prompt_id="p3", model_b="beta\udfff"))
    path.write_text(_jsonl(*rows) if suffix == ".jsonl" else json.dumps(rows), encoding="utf-8")
    with pytest.raises(JudgewiseError, match='row 3 field "model_b": a lone surrogate escape'):
        read_judgments(path)
    assert len(read_judgments(path, skip_invalid=True).frame) == 2


@pytest.mark.parametrize("layout", ["plain", "large_string", "dictionary"])
def test_parquet_text_that_is_not_utf8_is_refused_by_row_and_field_in_either_reader(tmp_path, layout, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from judgewise.io import chunks

    n, bad = 2_500, 2_345  # row 2,346 holds 0xff: in the third batch of 1,000 rows
    models = [b"alpha"] * n
    models[bad] = b"alp\xffha"
    large = layout == "large_string"
    column = pa.array(models, pa.large_binary() if large else pa.binary()).view(pa.large_string() if large else
                                                                                 pa.string())
    if layout == "dictionary":
        column = column.dictionary_encode()
    pq.write_table(pa.table({"prompt_id": [f"p{i}" for i in range(n)], "model_a": column, "model_b": ["beta"] * n,
                             "judge": ["j"] * n, "outcome": [1.0, 0.0] * (n // 2)}), tmp_path / "j.parquet")
    monkeypatch.setattr(chunks, "CHUNK_ROWS", 1_000)
    with pytest.raises(JudgewiseError, match='j.parquet row 2346 field "model_a": holds bytes that are not UTF-8'):
        read_judgments(tmp_path / "j.parquet")  # the chunked columnar reader
    whole = Validator(str(tmp_path / "j.parquet"), ReadReport(str(tmp_path / "j.parquet"), "parquet"))
    with pytest.raises(JudgewiseError, match='row 2346 field "model_a": holds bytes that are not UTF-8'):
        read_parquet(tmp_path / "j.parquet", whole)  # the whole-file reader (responses, any table)

"""User text (model, judge and file names, values in error messages) is printed exactly, never read as Rich markup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import run_cli

NAMES = ["llama[v1]", "A[/]", "[bold]x", "plain"]


def _table(path: Path, models: list[str], judge: str = "j") -> Path:
    """A canonical JSONL table: every pair of ``models`` on 6 prompts, outcomes cycling win / loss / tie."""
    rows = [{"prompt_id": f"p{p}", "model_a": a, "model_b": b, "judge": judge, "outcome": [1.0, 0.0, 0.5][p % 3]}
            for p in range(6) for i, a in enumerate(models) for b in models[i + 1:]]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _clean(res) -> None:
    assert "Traceback" not in res.stderr and "MarkupError" not in res.stderr, res.stderr


@pytest.mark.parametrize("filename", ["x[/].jsonl", "data[red].jsonl", "[bold]t.jsonl"])
def test_rank_table_shows_bracketed_model_and_file_names_exactly(tmp_path, filename):
    path = _table(tmp_path / filename, NAMES)  # "x[/].jsonl" is the file "].jsonl" in a folder "x["
    res = run_cli("rank", path)
    _clean(res)
    assert res.returncode == 0, res.stderr
    for name in NAMES:
        assert f"│ {name} " in res.stdout, name
    assert f"read 36 rows from {path} [jsonl]" in res.stdout


@pytest.mark.parametrize("filename", ["x[/].jsonl", "data[red].jsonl"])
def test_rank_error_line_names_a_missing_bracketed_file_exactly(tmp_path, filename):
    res = run_cli("rank", tmp_path / filename)
    _clean(res)
    assert res.returncode != 0
    assert res.stderr.strip() == f"error: {tmp_path / filename}: no such file or directory"


def test_rank_error_line_shows_a_bad_value_in_a_bracketed_file_exactly(tmp_path):
    path = tmp_path / "data[red].jsonl"
    path.write_text('{"prompt_id": "p", "model_a": "A[/]", "model_b": "y", "judge": "j", "outcome": "[bold]2"}\n')
    res = run_cli("rank", path)
    _clean(res)
    line = res.stderr.strip()
    assert res.returncode != 0 and "\n" not in line
    assert line.startswith(f"error: {path} row 1") and "[bold]2" in line


def test_rank_unknown_anchor_error_lists_bracketed_models_exactly(tmp_path):
    path = _table(tmp_path / "t.jsonl", NAMES)
    res = run_cli("rank", path, "--method", "winrate", "--anchor", "nope[/]")
    _clean(res)
    assert res.returncode != 0
    assert 'model "nope[/]" is not in the judgments' in res.stderr
    assert all(name in res.stderr for name in NAMES)


def test_rank_log_warning_and_json_report_show_a_bracketed_anchor_exactly(tmp_path):
    path = _table(tmp_path / "x[" / "].jsonl", NAMES)
    res = run_cli("rank", path, "--method", "winrate", "--anchor", "A[/]", "--json")
    _clean(res)
    assert res.returncode == 0, res.stderr
    assert "anchor A[/]" in res.stderr and f"from {path} [jsonl]" in res.stderr
    assert {r["model"] for r in json.loads(res.stdout)} == set(NAMES)


def test_rank_judge_error_shows_bracketed_judge_names_exactly(tmp_path):
    path = tmp_path / "two.jsonl"
    _table(tmp_path / "a.jsonl", ["m1", "m2"], judge="gpt[4]")
    _table(tmp_path / "b.jsonl", ["m1", "m2"], judge="[/]judge")
    path.write_text((tmp_path / "a.jsonl").read_text() + (tmp_path / "b.jsonl").read_text())
    res = run_cli("rank", path)
    _clean(res)
    assert '"[/]judge" (6 rows), "gpt[4]" (6 rows)' in res.stderr


def test_diagnose_table_and_warnings_show_bracketed_judge_and_model_names_exactly(tmp_path):
    rows = [{"prompt_id": f"p{p}", "model_a": "llama[v1]", "model_b": "A[/]", "judge": "gpt[4]",
             "first": "llama[v1]" if k == 0 else "A[/]", "outcome": 1.0 if k == 0 else 0.0}
            for p in range(20) for k in (0, 1)]
    path = tmp_path / "d[red].jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = run_cli("diagnose", path, "--no-style-control")
    _clean(res)
    assert res.returncode == 0, res.stderr
    assert "gpt[4]" in res.stdout and "warning: gpt[4]: position bias" in res.stdout
    assert f"read 40 rows from {path} [jsonl]" in res.stdout


def test_agree_lists_bracketed_models_found_in_one_file_only(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"m1": 1.0, "m2": 2.0, "m3": 3.0, "A[/]": 0.0}))
    (tmp_path / "b.json").write_text(json.dumps({"m1": 1.0, "m2": 2.0, "m3": 3.0, "[bold]b": 0.0}))
    res = run_cli("agree", tmp_path / "a.json", tmp_path / "b.json")
    _clean(res)
    assert res.returncode == 0, res.stderr
    assert "only in A: ['A[/]']" in res.stdout and "only in B: ['[bold]b']" in res.stdout


def test_store_export_names_a_bracketed_output_file_exactly(tmp_path):
    from judgewise.judges.base import Comparison
    from judgewise.judges.runner import run_judging
    from judgewise.judges.simulated import SimulatedJudge

    store = tmp_path / "s[red].sqlite"
    run_judging([Comparison("p0", "q", "m1", "m2", "a", "b")], SimulatedJudge({"m1": 1000, "m2": 900}), store)
    out = tmp_path / "e[red].jsonl"
    res = run_cli("store", "export", store, "--output", out)
    _clean(res)
    assert res.returncode == 0, res.stderr
    assert f"exported 2 rows to {out}" in res.stderr

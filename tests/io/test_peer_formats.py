"""The peers' files users carry: AutoArena head-to-head CSV/Parquet and PeerEval judgments JSONL, and the detection
that once sent a ``.csv`` whose header named a JSON format's fields to the JSON reader ("row 1: not valid JSON").

The files are written here from the peers' documentation: AutoArena's head-to-head rows ``prompt, model_a,
model_b, response_a, response_b, winner`` (winner ``A``, ``B`` or ``-``); PeerEval's README "Judgments" layout
(``solver_left/right``, ``response_a/b_model``, ``judge_model``, ``position``, ``judgment.winner`` A/B/tie in the
shown order; rows with an ``error`` are skipped)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgewise.errors import ConfigError, InputError
from judgewise.io import read_any, read_judgments, register_format
from judgewise.io.formats import FORMATS, detect_format
from tests.support import run_cli

H2H = """prompt,model_a,model_b,response_a,response_b,winner
What is 2+2?,alpha,beta,4,5,A
What is 2+2?,beta,gamma,5,four,B
"Name a colour, please",alpha,gamma,red,blue,-
Say hi,gamma,beta,hi,hello,A
"""


def test_an_autoarena_csv_is_ranked_not_sent_to_the_json_reader(tmp_path):
    (tmp_path / "h2h.csv").write_text(H2H, encoding="utf-8")
    res = run_cli("rank", tmp_path / "h2h.csv", "--json")
    assert res.returncode == 0, res.stderr
    assert {r["model"] for r in json.loads(res.stdout)} == {"alpha", "beta", "gamma"}
    assert "[autoarena]" in res.stderr and "not valid JSON" not in res.stderr


def test_autoarena_winners_become_outcomes_and_its_responses_are_kept(tmp_path):
    (tmp_path / "h2h.csv").write_text(H2H, encoding="utf-8")
    table = read_judgments(tmp_path / "h2h.csv")
    frame = table.frame
    assert frame["outcome"].tolist() == [1.0, 0.0, 0.5, 1.0]
    assert set(frame["judge"].astype(str)) == {"unknown"}
    assert frame["prompt_id"].iloc[0] == frame["prompt_id"].iloc[1] != frame["prompt_id"].iloc[2]
    responses = table.extras["responses"].frame
    assert len(responses) == 7  # (prompt, model) pairs: alpha/beta/gamma on 2+2, alpha/gamma, gamma/beta
    first = responses[(responses["model"] == "gamma") & (responses["instruction"] == "What is 2+2?")]
    assert first["text"].tolist() == ["four"]


def test_autoarena_parquet_with_judges_reads_the_same_games(tmp_path):
    (tmp_path / "h2h.csv").write_text(H2H, encoding="utf-8")
    frame = pd.read_csv(tmp_path / "h2h.csv", keep_default_na=False).assign(judge="gpt-4o-mini")
    frame.to_parquet(tmp_path / "h2h.parquet")
    assert detect_format(tmp_path / "h2h.parquet").name == "autoarena"
    table = read_judgments(tmp_path / "h2h.parquet")
    assert table.frame["outcome"].tolist() == [1.0, 0.0, 0.5, 1.0]
    assert set(table.frame["judge"].astype(str)) == {"gpt-4o-mini"}


def test_an_unknown_autoarena_winner_names_file_row_and_field(tmp_path):
    (tmp_path / "h2h.csv").write_text(H2H.replace("beta,gamma,5,four,B", "beta,gamma,5,four,C"), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_judgments(tmp_path / "h2h.csv")
    assert (err.value.row, err.value.field) == (2, "winner") and '"C"' in str(err.value)
    table = read_judgments(tmp_path / "h2h.csv", skip_invalid=True)
    assert table.report.rows_skipped == 1 and len(table.frame) == 3


def test_a_csv_naming_battle_fields_is_never_read_as_json(tmp_path):
    """Arena battles are JSON/JSONL/Parquet: a CSV with their header goes to the CSV reader, whose error is about
    columns, not JSON."""
    (tmp_path / "b.csv").write_text("question_id,model_a,model_b,winner\nq1,a,b,model_a\n", encoding="utf-8")
    assert detect_format(tmp_path / "b.csv").name == "csv"
    res = run_cli("rank", tmp_path / "b.csv")
    assert res.returncode == 2 and "not valid JSON" not in res.stderr
    assert len([line for line in res.stderr.splitlines() if line.startswith("error:")]) == 1


def test_a_format_declares_the_containers_it_opens(tmp_path, monkeypatch):
    monkeypatch.setattr("judgewise.io.formats.FORMATS", dict(FORMATS))
    (tmp_path / "x.csv").write_text("magic\n1\n", encoding="utf-8")
    register_format("jsononly", detect=lambda p: "magic" in p.keys, read=lambda *a, **k: None,
                    containers=("jsonl",), first=True)
    assert detect_format(tmp_path / "x.csv").name == "csv"
    with pytest.raises(ConfigError, match="unknown containers"):
        register_format("bad", detect=lambda p: False, read=lambda *a, **k: None, containers=("xlsx",))


PEEREVAL = [
    {"dataset": "arena_hard_v2", "question_id": "q1", "solver_left": "m1", "solver_right": "m2",
     "response_a_model": "m1", "response_b_model": "m2", "judge_model": "j1", "position": "AB",
     "judgment": {"winner": "A", "confidence": 0.8, "reason": "r"}},
    {"dataset": "arena_hard_v2", "question_id": "q1", "solver_left": "m1", "solver_right": "m2",
     "response_a_model": "m2", "response_b_model": "m1", "judge_model": "j1", "position": "BA",
     "judgment": {"winner": "B", "confidence": 0.7, "reason": "r"}},
    {"dataset": "arena_hard_v2", "question_id": "q2", "solver_left": "m1", "solver_right": "m2",
     "judge_model": "j1", "position": "BA", "judgment": {"winner": "tie"}},
    {"dataset": "arena_hard_v2", "question_id": "q2", "solver_left": "m1", "solver_right": "m2",
     "response_a_model": "m1", "response_b_model": "m2", "judge_model": "j1", "position": "AB",
     "error": "timeout"},
]


def _peereval(tmp_path, rows) -> str:
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_peereval_verdicts_follow_the_shown_order_and_failed_calls_are_counted(tmp_path):
    table = read_any(_peereval(tmp_path, PEEREVAL))
    assert table.report.format == "peereval"
    frame = table.frame
    assert frame[["model_a", "model_b", "outcome"]].astype({"model_a": str, "model_b": str}).values.tolist() == [
        ["m1", "m2", 1.0], ["m2", "m1", 0.0], ["m2", "m1", 0.5]]  # row 3: shown order from position BA
    assert frame["first"].astype(str).tolist() == frame["model_a"].astype(str).tolist()
    assert set(frame["judge"].astype(str)) == {"j1"} and set(frame["dataset"].astype(str)) == {"arena_hard_v2"}
    assert table.report.rows_skipped == 1 and "timeout" in table.report.skipped_reasons[0]


def test_a_peereval_row_without_a_valid_winner_names_its_row_and_field(tmp_path):
    rows = PEEREVAL[:1] + [{**PEEREVAL[1], "judgment": {"winner": "maybe"}}]
    with pytest.raises(InputError) as err:
        read_judgments(_peereval(tmp_path, rows))
    assert (err.value.row, err.value.field) == (2, "judgment.winner") and '"maybe"' in str(err.value)

"""MT-bench single-answer grading through the real CLI against a loopback OpenAI-compatible server.

The server plays a judge that reads the graded answer (the last ``SCORE=k`` token of the conversation it is
shown) and replies ``Rating: [[k]]``; answers marked ``SCORE=none`` get a reply with no rating, even when re-asked.
The expected scores are the ones the test put in the answers, so the ranking is checked against them.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support import run_cli
from tests.support.fault_server import FaultServer
from tests.support.judging import MODEL

MTBENCH = Path("/work/shared/data/mtbench")  # MT-bench's questions, GPT-4 reference answers (../shared/data)
MODELS = ("alpha", "beta", "gamma")
NO_RATING = "I cannot rate this answer."


def _questions() -> list[dict]:
    rows = [json.loads(line) for line in (MTBENCH / "question.jsonl").read_text().splitlines() if line.strip()]
    writing = [q for q in rows if q["category"] == "writing"][:2]
    math = [q for q in rows if q["category"] == "math"][:2]
    return writing + math


def _planted_score(model: str, qid: int, turn: int) -> int | None:
    """The rating the scripted judge gives to this answer; None: the judge never writes a rating for it."""
    if (model, turn) == ("gamma", 2) and qid % 2 == 0:
        return None
    return 1 + (3 * MODELS.index(model) + qid + 2 * turn) % 10


def _write_inputs(folder: Path) -> list[dict]:
    questions = _questions()
    (folder / "question.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    answers = folder / "model_answer"
    answers.mkdir()
    for model in MODELS:
        lines = []
        for q in questions:
            turns = [f"{model} answers turn {t} of question {q['question_id']}. "
                     f"SCORE={_planted_score(model, q['question_id'], t) or 'none'}" for t in (1, 2)]
            lines.append(json.dumps({"question_id": q["question_id"], "answer_id": f"{model}-{q['question_id']}",
                                     "model_id": model, "choices": [{"index": 0, "turns": turns}]}))
        (answers / f"{model}.jsonl").write_text("\n".join(lines) + "\n")
    return questions


def _scripted_judge(seen: list):
    def answer(messages: list) -> str:
        seen.append(messages)
        shown = next(m["content"] for m in messages if m["role"] == "user")  # the first user message (not a re-ask)
        score = re.findall(r"SCORE=(\w+)", shown)[-1]
        return NO_RATING if score == "none" else f"The answer is adequate. Rating: [[{score}]]"
    return answer


def _cli(args: list, cwd: Path) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd, timeout=300)


@pytest.fixture()
def graded(tmp_path):
    """One grading run of 3 models × 4 MT-bench questions × 2 turns, references from MT-bench's gpt-4 answers."""
    questions = _write_inputs(tmp_path)
    seen: list = []
    with FaultServer(answer=_scripted_judge(seen)) as server:
        config = {"responses": "model_answer", "prompts": "question.jsonl",
                  "references": str(MTBENCH / "reference_answer" / "gpt-4.jsonl"), "store": "store.sqlite",
                  "output": "grades.jsonl",
                  "judge": {"backend": "openai", "model": MODEL, "base_url": server.url, "mode": "single",
                            "template": "mtbench_single"},
                  "limits": {"concurrency": 4, "timeout_s": 10, "base_delay_s": 0.01, "max_delay_s": 0.1}}
        (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
        first = _cli(["judge", "--config", "run.yaml", "--json"], tmp_path)
        calls_after_first = server.total_successes()
        second = _cli(["judge", "--config", "run.yaml", "--json"], tmp_path)
        calls_after_second = server.total_successes()
    return {"dir": tmp_path, "questions": questions, "seen": seen, "first": first, "second": second,
            "calls": (calls_after_first, calls_after_second)}


def _planted(questions) -> list[tuple[str, int, int | None]]:
    return [(m, t, _planted_score(m, q["question_id"], t)) for m in MODELS for q in questions for t in (1, 2)]


def test_single_answer_grading_parses_ratings_and_counts_parse_failures(graded):
    assert graded["first"].returncode == 0, graded["first"].stderr
    summary = json.loads(graded["first"].stdout)
    planted = _planted(graded["questions"])
    unrated = sum(1 for *_, s in planted if s is None)
    assert unrated > 0
    assert summary["mode"] == "single" and summary["games"] == len(planted) == 24
    assert summary["no_rating"] == summary["failed_total"] == unrated  # counted, not dropped
    assert summary["ok_total"] == summary["scored"] == len(planted) - unrated
    assert summary["calls_made"] == len(planted) + unrated  # one re-ask per grade without a rating
    grades = [json.loads(line) for line in (graded["dir"] / "grades.jsonl").read_text().splitlines()]
    by_key = {(g["model"], int(g["prompt_id"]), g["turn"]): g for g in grades}
    for q in graded["questions"]:
        for m in MODELS:
            for t in (1, 2):
                g, want = by_key[(m, q["question_id"], t)], _planted_score(m, q["question_id"], t)
                assert g["score"] == want
                assert (g["status"] == "failed") == (want is None)


def test_rerun_makes_no_call(graded):
    first, second = graded["calls"]
    assert graded["second"].returncode == 0, graded["second"].stderr
    assert second == first
    assert json.loads(graded["second"].stdout)["cached"] == 24


def test_turn_two_is_shown_the_whole_conversation_and_math_questions_their_reference(graded):
    references = {json.loads(line)["question_id"]: json.loads(line)["choices"][0]["turns"]
                  for line in (MTBENCH / "reference_answer" / "gpt-4.jsonl").read_text().splitlines() if line.strip()}
    firsts = [next(m["content"] for m in msgs if m["role"] == "user") for msgs in graded["seen"]]
    for q in graded["questions"]:
        qid = str(q["question_id"])
        turn2 = [u for u in firsts if f"turn 2 of question {qid}." in u]
        assert turn2 and all(q["turns"][0] in u and q["turns"][1] in u and f"turn 1 of question {qid}." in u
                             for u in turn2)
        has_ref = q["question_id"] in references
        assert has_ref == (q["category"] == "math")
        for u in [u for u in firsts if f"question {qid}." in u]:
            assert ("Reference" in u) == has_ref
            if has_ref:
                assert references[q["question_id"]][0] in u


def test_rank_is_the_mean_score_per_model_with_intervals_over_prompts(graded):
    ranked = _cli(["rank", "store.sqlite", "--json", "--bootstrap", "300", "--seed", "1"], graded["dir"])
    assert ranked.returncode == 0, ranked.stderr
    records = {r["model"]: r for r in json.loads(ranked.stdout)}
    planted = _planted(graded["questions"])
    for m in MODELS:
        scores = [s for model, _, s in planted if model == m and s is not None]
        rec = records[m]
        assert rec["score"] == pytest.approx(sum(scores) / len(scores))
        assert rec["n"] == len(scores)
        for t in (1, 2):
            per_turn = [s for model, turn, s in planted if model == m and turn == t and s is not None]
            assert rec[f"turn_{t}"] == pytest.approx(sum(per_turn) / len(per_turn))
        assert rec["ci_low"] <= rec["score"] <= rec["ci_high"]
        assert rec["ci_low"] < rec["ci_high"]  # scores differ across prompts, so resampling prompts moves the mean
    unrated = sum(1 for *_, s in planted if s is None)
    assert f"used {len(planted) - unrated}, skipped {unrated}" in ranked.stderr  # counted, not averaged


def test_direct_correctness_grades_are_the_accuracy_direct_judge(tmp_path):
    """``template: direct_correctness`` (pointwise; mode inferred) runs, and its store is read as CLB's direct judge."""
    from judgewise.analysis.accuracy import direct_accuracy
    from judgewise.commands.diagnosis import direct_grades

    rows = [{"prompt_id": f"p{i}", "model": m, "text": f"{m} says {'right' if (i + k) % 3 else 'wrong'}",
             "instruction": f"Question {i}?"} for i in range(6) for k, m in enumerate(("alpha", "beta"))]
    (tmp_path / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def answer(messages):
        return "Grade: correct" if "says right" in messages[1]["content"] else "Grade: incorrect"

    with FaultServer(answer=answer) as server:
        config = {"responses": "responses.jsonl", "store": "store.sqlite",
                  "judge": {"backend": "openai", "model": MODEL, "base_url": server.url,
                            "template": "direct_correctness"}}
        (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
        run = _cli(["judge", "--config", "run.yaml", "--json"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["mode"] == "single"
    acc = direct_accuracy(direct_grades(tmp_path / "store.sqlite"))
    expected = {m: sum("right" in r["text"] for r in rows if r["model"] == m) / 6 for m in ("alpha", "beta")}
    for m in ("alpha", "beta"):
        assert acc.loc[m, "accuracy"] == pytest.approx(expected[m])
    # and through the CLI, as CLB's direct judge beside pairwise judgments and the ground truth
    pairs = [{"prompt_id": f"p{i}", "model_a": "alpha", "model_b": "beta", "judge": "j", "outcome": 1.0 if i % 2 else 0.0}
             for i in range(6)]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in pairs))
    truth = [{"prompt_id": r["prompt_id"], "model": r["model"], "correct": int("right" in r["text"])} for r in rows]
    (tmp_path / "truth.jsonl").write_text("".join(json.dumps(r) + "\n" for r in truth))
    cli = _cli(["accuracy", "pairs.jsonl", "--correctness", "truth.jsonl", "--direct", "store.sqlite", "--json",
                "--bootstrap", "0"], tmp_path)
    assert cli.returncode == 0, cli.stderr
    direct = {d["model"]: d for d in json.loads(cli.stdout)["direct"]}
    assert {m: direct[m]["accuracy"] for m in direct} == pytest.approx(expected)
    assert all(direct[m]["attempted"] == 6 for m in direct)


OLD_SCHEMA = """
CREATE TABLE games (key TEXT PRIMARY KEY, prompt_id TEXT NOT NULL, model_a TEXT NOT NULL, model_b TEXT NOT NULL,
    first TEXT NOT NULL, swapped INTEGER NOT NULL, judge TEXT NOT NULL, template TEXT, judge_identity TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')), raw TEXT, verdict5 INTEGER, label TEXT, outcome REAL,
    soft REAL, error TEXT, tokens_in INTEGER NOT NULL DEFAULT 0, tokens_out INTEGER NOT NULL DEFAULT 0,
    latency_s REAL NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0, n_calls INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL);
CREATE TABLE claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE answers (call TEXT PRIMARY KEY, game TEXT NOT NULL, answer TEXT NOT NULL, created_at REAL NOT NULL);
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO games (key, prompt_id, model_a, model_b, first, swapped, judge, judge_identity, status, outcome,
    verdict5, created_at) VALUES ('k1', 'p1', 'alpha', 'beta', 'alpha', 0, 'j', '{}', 'ok', 1.0, 2, 1.0);
"""


def test_a_version_1_store_stays_readable_and_is_migrated_when_written(tmp_path):
    from judgewise.store.judgments import SCHEMA_VERSION, JudgmentStore

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
    with JudgmentStore.open_readonly(path) as store:  # read as it is: nothing written
        frame = store.frame()
    assert frame.loc[0, "mode"] == "pairwise" and frame.loc[0, "outcome"] == 1.0
    assert JudgmentStore.open_readonly(path).meta()["schema_version"] == "1"
    ranked = _cli(["rank", str(path), "--json"], tmp_path)
    assert ranked.returncode == 0, ranked.stderr
    with JudgmentStore(path) as store:
        assert store.meta()["schema_version"] == str(SCHEMA_VERSION)
        assert store.frame().loc[0, "mode"] == "pairwise"


def test_dry_run_plans_every_turn_and_writes_nothing(tmp_path):
    _write_inputs(tmp_path)
    config = {"responses": "model_answer", "prompts": "question.jsonl", "store": "store.sqlite",
              "judge": {"backend": "openai", "model": MODEL, "base_url": "http://127.0.0.1:9/v1", "mode": "single"}}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
    run = _cli(["judge", "--config", "run.yaml", "--dry-run", "--json"], tmp_path)
    assert run.returncode == 0, run.stderr
    plan = json.loads(run.stdout)["dry_run"]
    assert plan["grades"] == len(MODELS) * 4 * 2 and plan["new"] == plan["grades"] and plan["mode"] == "single"
    assert not (tmp_path / "store.sqlite").exists()


def test_a_pairwise_template_is_shown_the_prompts_reference(tmp_path):
    """references: fill the {% if reference %} slot of pairwise templates too (first turn's reference)."""
    from judgewise.pipeline.job import build_job

    questions = _write_inputs(tmp_path)
    job = build_job({"responses": str(tmp_path / "model_answer"), "prompts": str(tmp_path / "question.jsonl"),
                     "references": str(MTBENCH / "reference_answer" / "gpt-4.jsonl"),
                     "judge": {"backend": "openai", "model": MODEL, "base_url": "http://127.0.0.1:9/v1",
                               "template": "mtbench_pair"}})
    references = {json.loads(line)["question_id"]: json.loads(line)["choices"][0]["turns"][0]
                  for line in (MTBENCH / "reference_answer" / "gpt-4.jsonl").read_text().splitlines() if line.strip()}
    assert len(job.comparisons) == 3 * len(questions)
    for c in job.comparisons:
        assert c.reference == references.get(int(c.prompt_id))
    assert any(c.reference for c in job.comparisons) and not all(c.reference for c in job.comparisons)


def test_single_mode_with_a_pairwise_template_is_a_config_error(tmp_path):
    _write_inputs(tmp_path)
    config = {"responses": "model_answer", "prompts": "question.jsonl",
              "judge": {"backend": "openai", "model": MODEL, "base_url": "http://127.0.0.1:9/v1", "mode": "single",
                        "template": "arena_hard_5way"}}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
    run = _cli(["judge", "--config", "run.yaml", "--dry-run"], tmp_path)
    assert run.returncode != 0 and "pointwise template" in run.stderr and "arena_hard_5way" in run.stderr
    bad = {**config, "judge": {**config["judge"], "mode": "pointwise", "template": "mtbench_single"}}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(bad))
    run = _cli(["judge", "--config", "run.yaml", "--dry-run"], tmp_path)
    assert run.returncode != 0 and "judge.mode" in run.stderr and "single" in run.stderr


def test_the_grades_output_and_a_store_export_rank_as_the_store_does(graded):
    d = graded["dir"]
    exported = _cli(["store", "export", "store.sqlite", "-o", "export.jsonl"], d)
    assert exported.returncode == 0, exported.stderr
    assert len((d / "export.jsonl").read_text().splitlines()) == 24
    rankings = {}
    for source in ("store.sqlite", "grades.jsonl", "export.jsonl"):
        ranked = _cli(["rank", source, "--json"], d)
        assert ranked.returncode == 0, ranked.stderr
        rankings[source] = {r["model"]: (r["score"], r["n"]) for r in json.loads(ranked.stdout)}
        assert "used 22, skipped 2" in ranked.stderr
    assert rankings["store.sqlite"] == rankings["grades.jsonl"] == rankings["export.jsonl"]


def _pair_judge(seen: list):
    """A scripted MT-bench pairwise judge: the answer with the higher last SCORE wins ([[A]]/[[B]]), equal is [[C]]."""
    def answer(messages: list) -> str:
        seen.append(messages)
        user = next(m["content"] for m in messages if m["role"] == "user")
        parts = user.split("Assistant B")
        a, b = (re.findall(r"SCORE=(\w+)", part) for part in (parts[0], "Assistant B".join(parts[1:])))
        score = [int(x[-1]) if x[-1].isdigit() else 0 for x in (a, b)]
        return "[[C]]" if score[0] == score[1] else ("[[A]]" if score[0] > score[1] else "[[B]]")
    return answer


def test_pairwise_multi_turn_judges_every_turn_with_the_whole_conversations(tmp_path):
    """turns: all — MT-bench's pair-v2 for turn 1 and pair-v2-multi-turn for turn 2; turn 1's games are the very
    games a first-turn-only run stores (a later turns: first run makes no call)."""
    questions = _write_inputs(tmp_path)
    seen: list = []
    with FaultServer(answer=_pair_judge(seen)) as server:
        base = {"responses": "model_answer", "prompts": "question.jsonl", "store": "store.sqlite",
                "models": ["alpha", "beta"],
                "judge": {"backend": "openai", "model": MODEL, "base_url": server.url, "template": "mtbench_pair"},
                "limits": {"concurrency": 4, "timeout_s": 10}}
        (tmp_path / "run.yaml").write_text(yaml.safe_dump({**base, "turns": "all"}))
        run = _cli(["judge", "--config", "run.yaml", "--json", "--output", "games.jsonl"], tmp_path)
        assert run.returncode == 0, run.stderr
        summary = json.loads(run.stdout)
        assert summary["comparisons"] == 2 * len(questions) and summary["games"] == 4 * len(questions)
        (tmp_path / "first.yaml").write_text(yaml.safe_dump({**base, "turns": "first"}))
        again = _cli(["judge", "--config", "first.yaml", "--json"], tmp_path)
        assert json.loads(again.stdout)["cached"] == 2 * len(questions) and json.loads(again.stdout)["calls_made"] == 0
    games = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    for g in games:
        qid, turn = int(g["prompt_id"]), g["turn"] or 1
        a, b = (_planted_score(m, qid, turn) or 0 for m in (g["model_a"], g["model_b"]))
        assert g["outcome"] == (0.5 if a == b else float(a > b))  # the judged turn's answers decided it
    multi = [next(m["content"] for m in msgs if m["role"] == "user") for msgs in seen]
    multi = [u for u in multi if "Conversation with User" in u]
    assert len(multi) == 2 * len(questions)  # turn 2, both orders
    assert all(u.count("### User:") == 4 for u in multi)  # two turns for each assistant

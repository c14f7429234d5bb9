"""Rubric grading end to end: a shipped rubric grades the MT-bench questions (examples/mtbench) through the real CLI
against a loopback OpenAI-compatible server; the grades feed ``rank`` (mean score, and pairs from score
differences) and ``reliability``.

The server plays a judge that reads the graded answer (the last ``SCORE=k`` token of the response it is shown) and
replies ``Rating: [[k]]``; answers planted with ``SCORE=7`` get a rating off the rubric's 1-5 scale, even when
re-asked, so they must end as failed grades, counted and never averaged. Pairwise, it compares the two planted
scores and answers ``[[A]]``, ``[[B]]`` or ``[[C]]``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.support import run_cli
from tests.support.fault_server import FaultServer
from tests.support.judging import MODEL

MTBENCH = Path(__file__).resolve().parents[2] / "examples" / "mtbench"
MODELS = ("alpha", "beta", "gamma")
OFF_SCALE = 7


def _questions() -> list[dict]:
    rows = [json.loads(line) for line in (MTBENCH / "question.jsonl").read_text().splitlines() if line.strip()]
    return [q for q in rows if q["category"] == "writing"][:2] + [q for q in rows if q["category"] == "math"][:2]


def _planted(model: str, qid: int, turn: int) -> int:
    """The grade the scripted judge gives; OFF_SCALE (beyond the rubric's 5) for two of gamma's answers; on the
    questions whose id is a multiple of 3 every model gets the same grade (ties)."""
    if (model, turn) == ("gamma", 2) and qid % 2 == 0:
        return OFF_SCALE
    return 1 + (MODELS.index(model) * (qid % 3) + qid + turn) % 5


def _write_inputs(folder: Path) -> list[dict]:
    questions = _questions()
    (folder / "model_answer").mkdir()
    for model in MODELS:
        lines = [json.dumps({"question_id": q["question_id"], "model_id": model, "answer_id": f"{model}-{q['question_id']}",
                             "choices": [{"index": 0, "turns": [
                                 f"{model} answers turn {t} of {q['question_id']}. SCORE={_planted(model, q['question_id'], t)}"
                                 for t in (1, 2)]}]}) for q in questions]
        (folder / "model_answer" / f"{model}.jsonl").write_text("\n".join(lines) + "\n")
    return questions


def _judge(seen: list):
    def answer(messages: list) -> str:
        seen.append(messages)
        shown = next(m["content"] for m in messages if m["role"] == "user")
        if "[Response A]" in shown:
            a = int(re.findall(r"SCORE=(\d+)", shown.split("[Response A]")[1].split("[Response B]")[0])[-1])
            b = int(re.findall(r"SCORE=(\d+)", shown.split("[Response B]")[1])[-1])
            return "Feedback: compared by the criterion. " + ("[[A]]" if a > b else "[[B]]" if b > a else "[[C]]")
        score = re.findall(r"SCORE=(\d+)", shown.split("[Response to grade]")[1])[-1]
        return f"Feedback: graded by the criterion. Rating: [[{score}]]"
    return answer


def _run(tmp_path: Path, judge: dict, seen: list, **extra) -> dict:
    with FaultServer(answer=_judge(seen)) as server:
        config = {"responses": "model_answer", "prompts": str(MTBENCH / "question.jsonl"), "store": "store.sqlite",
                  "output": "grades.jsonl", "judge": {"backend": "openai", "model": MODEL, "base_url": server.url,
                                                      **judge},
                  "limits": {"concurrency": 4, "timeout_s": 10, "base_delay_s": 0.01, "max_delay_s": 0.1}, **extra}
        (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
        first = run_cli("judge", "--config", "run.yaml", "--json", cwd=tmp_path, timeout=300)
        calls = server.total_successes()
        second = run_cli("judge", "--config", "run.yaml", "--json", cwd=tmp_path, timeout=300)
        return {"first": first, "second": second, "calls": (calls, server.total_successes())}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """3 models × 4 MT-bench questions × 2 turns graded by the shipped helpfulness rubric (1-5)."""
    folder = tmp_path_factory.mktemp("rubric")
    questions = _write_inputs(folder)
    seen: list = []
    return {"dir": folder, "questions": questions, "seen": seen, **_run(folder, {"rubric": "helpfulness"}, seen)}


def _expected(questions) -> list[tuple[str, str, int, int]]:
    return [(m, str(q["question_id"]), t, _planted(m, q["question_id"], t)) for m in MODELS for q in questions
            for t in (1, 2)]


def test_a_shipped_rubric_grades_on_its_scale_and_refuses_ratings_off_it(graded):
    assert graded["first"].returncode == 0, graded["first"].stderr
    summary = json.loads(graded["first"].stdout)
    expected = _expected(graded["questions"])
    off = sum(1 for *_, s in expected if s == OFF_SCALE)
    assert off == 2 and summary["games"] == len(expected) == 24
    assert summary["failed_total"] == summary["no_rating"] == off
    assert summary["calls_made"] == len(expected) + off  # each off-scale grade re-asked once
    grades = {(g["model"], str(g["prompt_id"]), g["turn"]): g
              for g in map(json.loads, (graded["dir"] / "grades.jsonl").read_text().splitlines())}
    for m, p, t, s in expected:
        g = grades[(m, p, t)]
        if s == OFF_SCALE:
            assert g["status"] == "failed" and g["score"] is None and "rating 7 is outside 1-5" in g["error"]
        else:
            assert g["status"] == "ok" and g["score"] == s
    assert {g["judge"] for g in grades.values()} == {f"{MODEL}|rubric-helpfulness@1.1"}


def test_the_judge_is_shown_the_rubric_and_a_rerun_makes_no_call(graded):
    first = next(m["content"] for m in graded["seen"][0] if m["role"] == "user")
    assert "Criterion: Does the response help the user" in first
    assert all(f"Score {k}: " in first for k in range(1, 6)) and "Score 6" not in first
    assert '"Rating: [[k]]", where k is an integer from 1 to 5' in first
    assert graded["second"].returncode == 0 and graded["calls"][0] == graded["calls"][1]
    assert json.loads(graded["second"].stdout)["cached"] == 24


def test_rank_gives_mean_grades_with_intervals_and_pairs_from_grade_differences(graded):
    expected = [e for e in _expected(graded["questions"]) if e[3] != OFF_SCALE]
    means = run_cli("rank", "store.sqlite", "--json", "--bootstrap", "200", cwd=graded["dir"])
    assert means.returncode == 0, means.stderr
    records = {r["model"]: r for r in json.loads(means.stdout)}
    for m in MODELS:
        mine = [s for model, _, _, s in expected if model == m]
        assert records[m]["score"] == pytest.approx(sum(mine) / len(mine))
        assert records[m]["ci_low"] <= records[m]["score"] <= records[m]["ci_high"]
    pairs = run_cli("rank", "store.sqlite", "--method", "winshare", "--json", cwd=graded["dir"])
    assert pairs.returncode == 0, pairs.stderr
    shares = {r["model"]: r["score"] for r in json.loads(pairs.stdout)}
    scored = {(m, p, t): s for m, p, t, s in expected}
    for m in MODELS:  # the share of its pairs a model wins, a tie counting half, from the planted grades
        points = [(scored[(m, p, t)] > s) + 0.5 * (scored[(m, p, t)] == s)
                  for (o, p, t), s in scored.items() if o != m and (m, p, t) in scored]
        assert shares[m] == pytest.approx(100 * sum(points) / len(points), abs=0.01)
    bt = run_cli("rank", "store.sqlite", "--method", "bt", "--json", cwd=graded["dir"])
    assert bt.returncode == 0, bt.stderr
    order = [r["model"] for r in sorted(json.loads(bt.stdout), key=lambda r: -r["score"])]
    assert order == sorted(MODELS, key=lambda m: -shares[m])
    pairs_of = [(scored[(m, p, t)], scored[(o, p, t)]) for (m, p, t) in scored for o in MODELS
                if m < o and (o, p, t) in scored]
    ties = sum(a == b for a, b in pairs_of)
    assert ties > 0 and (f"outcomes from grades: {len(pairs_of)} pairs of models graded on the same prompt and turn "
                         f"from {len(scored)} scored grades (the higher grade wins; {ties} equal grades tie)") in bt.stderr


def test_reliability_reads_rubric_grades_against_a_human(graded):
    grades = [g for g in map(json.loads, (graded["dir"] / "grades.jsonl").read_text().splitlines())
              if g["score"] is not None]
    human = [{"item_id": f"{g['prompt_id']}/{g['model']}/turn {g['turn']}", "rater": "human",
              "score": g["score"] if i % 4 else 6 - g["score"]} for i, g in enumerate(grades)]
    (graded["dir"] / "human.jsonl").write_text("".join(json.dumps(h) + "\n" for h in human))
    res = run_cli("reliability", "grades.jsonl", "--human", "human.jsonl", "--target", grades[0]["judge"],
                  "--metric", "rho", "--json", cwd=graded["dir"])
    assert res.returncode == 0, res.stderr
    record = json.loads(res.stdout)
    assert record["n_items"] == len(grades) == 22 and record["scope"] == "population"
    assert 0 < record["values"]["rho"] < 1  # agrees on three items of four, so positively but not perfectly


def test_factual_correctness_grades_only_answers_with_a_reference(tmp_path):
    questions = _write_inputs(tmp_path)
    with_ref = {json.loads(line)["question_id"] for line in
                (MTBENCH / "reference_answer" / "gpt-4.jsonl").read_text().splitlines() if line.strip()}
    seen: list = []
    run = _run(tmp_path, {"rubric": "factual_correctness"}, seen,
               references=str(MTBENCH / "reference_answer" / "gpt-4.jsonl"))
    assert run["first"].returncode == 0, run["first"].stderr
    graded_ids = {q["question_id"] for q in questions if q["question_id"] in with_ref}
    assert graded_ids and len(graded_ids) < len(questions)
    assert json.loads(run["first"].stdout)["games"] == len(graded_ids) * len(MODELS) * 2
    assert all("[Reference answer]" in next(m["content"] for m in msgs if m["role"] == "user") for msgs in seen)


def test_a_rubric_judges_pairs_too(tmp_path):
    _write_inputs(tmp_path)
    seen: list = []
    run = _run(tmp_path, {"rubric": "honesty", "mode": "pairwise"}, seen, max_prompts=2, orders="one")
    assert run["first"].returncode == 0, run["first"].stderr
    first = next(m["content"] for m in seen[0] if m["role"] == "user")
    assert "Criterion: Is the response honest" in first and "[Response B]" in first
    ranked = run_cli("rank", "store.sqlite", "--method", "winshare", "--json", cwd=tmp_path)
    assert ranked.returncode == 0, ranked.stderr
    assert {r["model"] for r in json.loads(ranked.stdout)} == set(MODELS)

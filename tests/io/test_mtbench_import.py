"""MT-bench (FastChat llm_judge layout) importers: small files written here, and MT-bench's real data files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgewise.errors import InputError
from judgewise.io import detect_format, read_any, read_judgments, read_responses
from judgewise.io.mtbench import read_questions
from judgewise.io.readers import read_grades

MTBENCH = Path("/work/shared/data/mtbench")


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture()
def folder(tmp_path):
    """A tiny llm_judge data folder: 2 two-turn questions, 2 models' answers, single and pair judgments."""
    _jsonl(tmp_path / "question.jsonl", [
        {"question_id": 81, "category": "writing", "turns": ["Write a poem.", "Now shorter."]},
        {"question_id": 111, "category": "math", "turns": ["2+2?", "3+3?"]}])
    for m in ("vicuna", "llama"):
        _jsonl(tmp_path / "model_answer" / f"{m}.jsonl", [
            {"question_id": q, "answer_id": f"{m}{q}", "model_id": m,
             "choices": [{"index": 0, "turns": [f"{m} {q} t1", f"{m} {q} t2"]}], "tstamp": 1.0} for q in (81, 111)])
    _jsonl(tmp_path / "reference_answer" / "gpt-4.jsonl", [
        {"question_id": 111, "model_id": "gpt-4", "choices": [{"index": 0, "turns": ["4", "6"]}]}])
    single = [{"question_id": q, "model": m, "judge": ["gpt-4", "single-math-v1" if q == 111 else "single-v1"],
               "user_prompt": "...", "judgment": f"Rating: [[{s}]]", "score": s, "turn": 1, "tstamp": 1.0}
              for (q, m, s) in ((81, "vicuna", 8), (111, "vicuna", 6), (81, "llama", 5), (111, "llama", -1))]
    single.append({"question_id": 81, "model": "vicuna", "judge": ["gpt-4", "single-v1-multi-turn"],
                   "judgment": "Rating: [[9]]", "score": 9, "turn": 2})
    _jsonl(tmp_path / "model_judgment" / "gpt-4_single.jsonl", single)
    _jsonl(tmp_path / "model_judgment" / "gpt-4_pair.jsonl", [
        {"question_id": 81, "model_1": "vicuna", "model_2": "llama", "g1_winner": "model_1", "g2_winner": "tie",
         "judge": ["gpt-4", "pair-v2"], "g1_judgment": "[[A]]", "g2_judgment": "[[C]]", "turn": 1},
        {"question_id": 111, "model_1": "vicuna", "model_2": "llama", "g1_winner": "error", "g2_winner": "model_2",
         "judge": ["gpt-4", "pair-math-v1"], "g1_judgment": "?", "g2_judgment": "[[A]]", "turn": 1}])
    return tmp_path


def test_answers_keep_every_turn_and_text_is_the_first(folder):
    table = read_responses(folder / "model_answer")
    assert table.report.format == "mtbench-answers"
    row = table.frame.set_index(["prompt_id", "model"]).loc[("111", "llama")]
    assert row["turns"] == ["llama 111 t1", "llama 111 t2"] and row["text"] == "llama 111 t1"


def test_the_folder_reads_answers_with_their_questions_references_and_judgments(folder):
    table = read_any(folder)
    assert table.report.format == "mtbench" and table.kind == "responses" and len(table.frame) == 4
    row = table.frame.set_index(["prompt_id", "model"]).loc[("81", "vicuna")]
    assert row["prompt_turns"] == ["Write a poem.", "Now shorter."] and row["instruction"] == "Write a poem."
    assert row["category"] == "writing"
    assert table.extras["references"].frame.loc[0, "turns"] == ["4", "6"]
    assert table.extras["grades"].kind == "grades"


def test_single_judgments_are_grades_and_score_minus_one_is_a_counted_failure(folder):
    table = read_any(folder / "model_judgment" / "gpt-4_single.jsonl")
    assert table.kind == "grades" and table.report.format == "mtbench-judgments"
    g = table.frame.set_index(["prompt_id", "model", "turn"])
    assert g.loc[("81", "vicuna", 1), "score"] == 8 and g.loc[("81", "vicuna", 2), "score"] == 9
    failed = g.loc[("111", "llama", 1)]
    assert failed["score"] != failed["score"] and "-1" in failed["error"]  # NaN score, error says why
    assert set(table.frame["judge"]) == {"gpt-4"}  # one judge; FastChat's prompt names kept apart
    assert set(table.frame["judge_prompt"]) == {"single-v1", "single-math-v1", "single-v1-multi-turn"}


def test_pair_judgments_are_two_games_per_record_and_error_winners_are_skipped(folder):
    table = read_judgments(folder / "model_judgment" / "gpt-4_pair.jsonl")
    f = table.frame
    assert len(f) == 3 and table.report.rows_skipped == 1  # g1 of question 111 has winner "error"
    game = f.set_index(["prompt_id", "game"])
    assert game.loc[("81", 1), "outcome"] == 1.0 and game.loc[("81", 1), "first"] == "vicuna"
    assert game.loc[("81", 2), "outcome"] == 0.5 and game.loc[("81", 2), "first"] == "llama"
    assert game.loc[("111", 2), "outcome"] == 0.0  # model_2 (llama) won the swapped game


def test_a_folder_gives_its_pair_judgments_when_judgments_are_asked_for(folder):
    assert read_judgments(folder).report.format == "mtbench-judgments"
    assert read_grades(folder).kind == "grades"


def test_rank_of_single_judgments_is_the_mean_score(folder):
    from judgewise.commands.ranking import rank_path

    ranked = rank_path(folder / "model_judgment" / "gpt-4_single.jsonl")
    scores = dict(zip(ranked.ranking.models, ranked.ranking.scores))
    assert scores == {"vicuna": pytest.approx((8 + 6 + 9) / 3), "llama": 5.0}
    assert ranked.ranking.info["failed_grades_skipped"] == 1


def test_bad_rows_name_file_row_and_field(tmp_path):
    path = _jsonl(tmp_path / "x_single.jsonl", [
        {"question_id": 1, "model": "a", "judge": ["gpt-4", "single-v1"], "score": 5, "turn": 1},
        {"question_id": 2, "model": "a", "judge": ["gpt-4", "single-v1"], "score": "high", "turn": 1}])
    with pytest.raises(InputError) as err:
        read_any(path)
    assert err.value.row == 2 and err.value.field == "score" and "x_single.jsonl" in str(err.value)
    assert len(read_any(path, skip_invalid=True).frame) == 1
    answers = _jsonl(tmp_path / "model_answer" / "m.jsonl", [
        {"question_id": 1, "model_id": "m", "choices": [{"turns": ["ok"]}]},
        {"question_id": 2, "model_id": "m", "choices": [{"turns": ["ok", 3]}]}])
    with pytest.raises(InputError, match="turns"):
        read_responses(answers, format="mtbench-answers")


def test_real_mtbench_questions_and_reference_answers():
    questions = read_questions(MTBENCH / "question.jsonl")
    assert len(questions) == 80 and (questions["turns"].map(len) == 2).all()
    assert questions["category"].value_counts().to_dict() == {c: 10 for c in (
        "writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities")}
    refs = read_responses(MTBENCH / "reference_answer" / "gpt-4.jsonl")
    assert refs.report.format == "mtbench-answers" and len(refs.frame) == 30
    assert (refs.frame["turns"].map(len) == 2).all() and set(refs.frame["model"]) == {"gpt-4"}
    by_id = questions.set_index("prompt_id")["category"]
    assert set(by_id[refs.frame["prompt_id"]]) == {"math", "reasoning", "coding"}  # FastChat's NEED_REF_CATS


def test_arena_hard_answers_are_not_taken_for_mtbench_answers():
    assert detect_format("/work/shared/data/arenahard/model_answer").name == "arenahard-answers"
    assert detect_format("/work/shared/data/arenahard/v2.0/model_answer").name == "arenahard-answers"

"""Importers of published formats, on the real files: AlpacaEval, Arena-Hard battles/answers/games, JudgeBench."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgewise.io import detect_format, read_any, read_judgments, read_responses, read_scores
from judgewise.io.alpacaeval import prompt_id_of

from tests.support import REPO

SLICE = REPO / "examples" / "alpacaeval"


def test_alpacaeval_rows_map_preference_to_the_models_outcome(shared, alpacaeval_full):
    frame = alpacaeval_full.frame
    annotations = json.loads((shared / "data/alpacaeval/results/NullModel/weighted_alpaca_eval_gpt4_turbo/"
                              "annotations.json").read_text())
    null = frame[frame["model_a"] == "NullModel"]  # folder name, not the stale generator_2 "example"
    assert len(null) == len(annotations) == 805
    assert list(null["outcome"]) == [float(a["preference"]) - 1 for a in annotations]
    assert list(null["prompt_id"]) == [prompt_id_of(a["instruction"]) for a in annotations]
    assert set(frame["model_b"]) == {"gpt4_1106_preview"} and alpacaeval_full.extras["anchor"] == "gpt4_1106_preview"
    assert set(frame["judge"]) == {"weighted_alpaca_eval_gpt4_turbo"}
    assert frame["model_a"].nunique() == 28 and alpacaeval_full.report.rows_used == len(frame) == 22531


def test_alpacaeval_prompt_ids_are_shared_across_models_and_align_with_responses(alpacaeval_full):
    frame = alpacaeval_full.frame
    assert frame["prompt_id"].nunique() == 805
    assert frame.groupby("prompt_id")["model_a"].nunique().max() == 28
    responses = alpacaeval_full.extras["responses"].frame
    assert responses["model"].nunique() == 29  # the 28 judged models + the anchor
    keys = set(zip(responses["prompt_id"], responses["model"]))
    assert all((p, a) in keys and (p, b) in keys for p, a, b in zip(frame["prompt_id"], frame["model_a"],
                                                                    frame["model_b"]))


def test_alpacaeval_data_dir_results_dir_model_dir_and_file_agree(shared, alpacaeval_full):
    root = shared / "data" / "alpacaeval"
    via_results = read_judgments(root / "results").frame
    pd.testing.assert_frame_equal(via_results, alpacaeval_full.frame)
    model_dir = read_judgments(root / "results" / "claude-2")
    one_file = read_judgments(root / "results/claude-2/weighted_alpaca_eval_gpt4_turbo/annotations.json")
    expected = alpacaeval_full.frame[alpacaeval_full.frame["model_a"] == "claude-2"].reset_index(drop=True)
    annotator_dir = read_judgments(root / "results/claude-2/weighted_alpaca_eval_gpt4_turbo")
    for table in (model_dir, one_file, annotator_dir):
        pd.testing.assert_frame_equal(table.frame, expected)
    assert set(model_dir.extras["responses"].frame["model"]) == {"claude-2", "gpt4_1106_preview"}


def test_shipped_alpacaeval_slice_reads_without_shared_data():
    table = read_judgments(SLICE)
    leaderboard = pd.read_csv(SLICE / "leaderboard.csv")
    assert set(table.frame["model_a"]) | {table.extras["anchor"]} == set(leaderboard["model"])
    responses = read_responses(SLICE).frame
    assert set(responses["model"]) == set(leaderboard["model"])
    assert responses.groupby("model").size().min() >= 800


def test_arenahard_battles_outcomes_match_the_published_winner_counts(shared):
    reference = json.loads((shared / "reference" / "arenahard_battles_fastchat.json").read_text())
    table = read_any(shared / "data" / "arenahard" / "battles.jsonl")
    assert table.report.format == "arenahard-battles" and len(table.frame) == reference["n_battles"]
    counts = table.frame["outcome"].value_counts()
    assert counts[1.0] == reference["winner_counts"]["model_a"]
    assert counts[0.0] == reference["winner_counts"]["model_b"]
    assert counts[0.5] == reference["winner_counts"]["tie"]


def test_arenahard_tie_bothbad_spellings_are_ties(tmp_path):
    winners = ["model_a", "model_b", "tie", "tie (bothbad)", "tie(bothbad)", "Tie_BothBad", "bothbad"]
    path = tmp_path / "battles.jsonl"
    path.write_text("".join(json.dumps({"question_id": i, "model_a": "x", "model_b": "y", "winner": w}) + "\n"
                            for i, w in enumerate(winners)))
    assert list(read_judgments(path).frame["outcome"]) == [1.0, 0.0] + [0.5] * 5


def test_arenahard_folder_gives_battles_with_answers_attached(shared):
    root = shared / "data" / "arenahard"
    table = read_any(root)
    assert table.kind == "judgments" and len(table.frame) == len(read_judgments(root / "battles.jsonl").frame)
    assert set(table.extras["responses"].frame["model"]) == {"gpt-4-0314", "gpt-4-0613", "gpt-3.5-turbo-0125"}


def test_arenahard_answers_read_as_responses_from_dir_and_file(shared):
    root = shared / "data" / "arenahard"
    table = read_any(root / "model_answer")
    assert table.kind == "responses" and table.report.format == "arenahard-answers"
    assert set(table.frame["model"]) == {"gpt-4-0314", "gpt-4-0613", "gpt-3.5-turbo-0125"}
    questions = {json.loads(line)["uid"] for line in (root / "question.jsonl").read_text().splitlines()}
    assert set(table.frame["prompt_id"]) <= questions
    first = json.loads((root / "model_answer" / "gpt-4-0613.jsonl").read_text().splitlines()[0])
    one = read_responses(root / "model_answer" / "gpt-4-0613.jsonl").frame
    assert one.iloc[0]["text"] == first["messages"][1]["content"]["answer"]


def test_arenahard_games_are_one_row_per_game_from_the_models_view(tmp_path):
    folder = tmp_path / "model_judgment" / "gpt-4-1106-preview"
    folder.mkdir(parents=True)
    record = {"question_id": "q1", "model": "my-model", "judge": "gpt-4-1106-preview",
              "games": [{"score": "A>B"}, {"score": "A>>B"}]}
    (folder / "my-model.jsonl").write_text(json.dumps(record) + "\n")
    table = read_any(folder)
    assert table.report.format == "arenahard-games"
    frame = table.frame
    # game 1 shows the baseline as A (baseline slightly better); game 2 shows the model as A (model much better)
    assert list(frame["verdict"]) == [-1, 2] and list(frame["outcome"]) == [0.0, 1.0]
    assert list(frame["first"]) == ["gpt-4-0314", "my-model"] and set(frame["model_b"]) == {"gpt-4-0314"}


def test_judgebench_outputs_are_detected_and_delegated(shared):
    path = shared / "data" / "judgebench" / "outputs"
    assert detect_format(path).name == "judgebench"
    table = read_any(path)
    assert table.kind == "judgments" and table.report.format == "judgebench" and len(table.frame) > 0
    scores = read_scores(path)  # per-item scores of every judge, plus the objective label as rater "human"
    assert scores.kind == "scores" and "human" in set(scores.frame["rater"])
    assert set(table.frame["judge"]) <= set(scores.frame["rater"])

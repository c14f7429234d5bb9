"""The replay judge answers from a recorded judgments table, by prompt, pair and order, and never guesses."""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest

from judgewise.errors import InputError
from judgewise.judges.base import Comparison, Game, Judge
from judgewise.judges.replay import ReplayJudge

COMP = Comparison("p1", "prompt", "x", "y", "rx", "ry")


def table(rows: list[dict]) -> pd.DataFrame:
    base = {"judge": "j1", "raw": None, "error": None}
    return pd.DataFrame([{**base, **r} for r in rows])


def judge(replay: ReplayJudge, game: Game):
    return asyncio.run(replay.judge(game))


def test_replay_judge_implements_the_judge_protocol():
    empty = pd.DataFrame(columns=["prompt_id", "model_a", "model_b", "judge", "outcome"])
    assert isinstance(ReplayJudge(empty), Judge)


def test_each_order_gets_its_own_recorded_verdict_from_the_shown_first_view():
    rows = [  # canonical rows: outcome and verdict are model_a's; "first" says who was shown first
        {"prompt_id": "p1", "model_a": "x", "model_b": "y", "first": "x", "outcome": 1.0, "verdict": 2},
        {"prompt_id": "p1", "model_a": "x", "model_b": "y", "first": "y", "outcome": 0.5, "verdict": 0},
    ]
    replay = ReplayJudge(table(rows))
    straight, swapped = judge(replay, Game(COMP)), judge(replay, Game(COMP, swapped=True))
    assert (straight.verdict.outcome, straight.verdict.verdict5) == (1.0, 2)
    assert (swapped.verdict.outcome, swapped.verdict.verdict5) == (0.5, 0)
    assert straight.n_calls == 0


def test_a_row_recorded_with_the_pair_reversed_is_mirrored():
    rows = [{"prompt_id": "p1", "model_a": "y", "model_b": "x", "first": "x", "outcome": 0.0, "verdict": -2}]
    got = judge(ReplayJudge(table(rows)), Game(COMP))  # x shown first, and x won
    assert (got.verdict.outcome, got.verdict.verdict5) == (1.0, 2)


def test_without_a_first_column_model_a_counts_as_shown_first():
    rows = table([{"prompt_id": "p1", "model_a": "x", "model_b": "y", "outcome": 0.25}])
    assert "first" not in rows.columns
    replay = ReplayJudge(rows)
    assert judge(replay, Game(COMP)).verdict.outcome == 0.25
    missing = judge(replay, Game(COMP, swapped=True))
    assert missing.verdict is None and "no recorded judgment" in missing.error and "'y' shown before 'x'" \
        in missing.error


def test_recorded_failures_stay_failures_with_their_reason():
    rows = [{"prompt_id": "p1", "model_a": "x", "model_b": "y", "first": "x", "outcome": None,
             "error": "no well-formed verdict", "raw": "blah"}]
    got = judge(ReplayJudge(table(rows)), Game(COMP))
    assert got.verdict is None and "no well-formed verdict" in got.error and got.raw == "blah"


def test_several_judges_need_a_choice_and_duplicates_are_an_input_error():
    rows = [{"prompt_id": "p1", "model_a": "x", "model_b": "y", "outcome": 1.0, "judge": "j1"},
            {"prompt_id": "p1", "model_a": "x", "model_b": "y", "outcome": 0.0, "judge": "j2"}]
    with pytest.raises(InputError, match="judge"):
        ReplayJudge(table(rows))
    assert judge(ReplayJudge(table(rows), judge="j2"), Game(COMP)).verdict.outcome == 0.0
    dup = [rows[0], {**rows[0], "outcome": 0.0}]
    with pytest.raises(InputError) as info:
        ReplayJudge(table(dup), source="rec.jsonl")
    assert info.value.row == 2 and "rec.jsonl" in str(info.value)


def test_a_duplicate_of_the_chosen_judge_is_reported_at_its_row_in_the_whole_table():
    j1 = {"prompt_id": "p1", "model_a": "x", "model_b": "y", "outcome": 1.0, "judge": "j1"}
    j2 = {**j1, "judge": "j2"}
    with pytest.raises(InputError) as info:
        ReplayJudge(table([j1, j2, j1, j2]), judge="j2", source="rec.jsonl")
    assert info.value.row == 4


def test_first_naming_neither_model_is_an_input_error_with_row_and_field():
    rows = [{"prompt_id": "p1", "model_a": "x", "model_b": "y", "first": "z", "outcome": 1.0}]
    with pytest.raises(InputError) as info:
        ReplayJudge(table(rows), source="rec.csv")
    assert (info.value.row, info.value.field) == (1, "first")


def test_replaying_a_runner_output_reproduces_its_verdicts(tmp_path):
    runner = pytest.importorskip("judgewise.judges.runner", reason="runner not available")
    simulated = pytest.importorskip("judgewise.judges.simulated", reason="simulated judge not available")
    comps = [Comparison(f"p{i}", "q", a, b, "ra", "rb") for i in range(5) for a, b in (("x", "y"), ("y", "z"))]
    sim = simulated.SimulatedJudge({"x": 1200.0, "y": 1000.0, "z": 900.0}, seed=3)
    first = runner.run_judging(comps, sim, str(tmp_path / "a.sqlite")).judgments
    replayed = runner.run_judging(comps, ReplayJudge(first), str(tmp_path / "b.sqlite")).judgments
    key = ["prompt_id", "model_a", "model_b", "first"]
    merged = first.merge(replayed, on=key, suffixes=("_sim", "_replay"))
    assert len(merged) == len(first) == 20
    assert (merged["outcome_sim"] == merged["outcome_replay"]).all()


def test_a_mirrored_verdict_keeps_its_five_way_verdict_negated_and_a_missing_row_is_a_failure():
    rows = [{"prompt_id": "p1", "model_a": "y", "model_b": "x", "first": "y", "outcome": 0.25, "verdict": 1},
            {"prompt_id": "p1", "model_a": "y", "model_b": "x", "first": "x", "outcome": 1.0, "verdict": 2}]
    replay = ReplayJudge(table(rows))
    shown_x_first = judge(replay, Game(COMP)).verdict  # row 2: x shown first, recorded from y's side
    assert (shown_x_first.outcome, shown_x_first.verdict5) == (0.0, -2)
    missing = judge(replay, Game(Comparison("p9", "prompt", "x", "y", "rx", "ry")))
    assert missing.verdict is None and "no recorded judgment for prompt 'p9'" in missing.error


def test_an_outcome_that_is_not_a_number_is_an_input_error_naming_the_outcome_field():
    rows = [{"prompt_id": "p1", "model_a": "x", "model_b": "y", "outcome": 1.0},
            {"prompt_id": "p2", "model_a": "x", "model_b": "y", "outcome": "abc"}]
    with pytest.raises(InputError) as info:
        ReplayJudge(table(rows), source="rec.csv")
    assert (info.value.row, info.value.field) == (2, "outcome") and "abc" in str(info.value)


def test_a_duplicate_among_many_rows_names_the_second_of_the_two():
    rows = [{"prompt_id": f"p{i}", "model_a": "x", "model_b": "y", "first": "x", "outcome": 1.0}
            for i in range(1_000)]
    rows.insert(700, {**rows[123], "first": "x", "model_a": "y", "model_b": "x", "outcome": 0.0})  # same key
    with pytest.raises(InputError) as info:
        ReplayJudge(table(rows), source="rec.jsonl")
    assert info.value.row == 701 and "'p123'" in str(info.value)

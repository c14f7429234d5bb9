"""JudgeBench importer: real files from ../shared, answer-order handling, and clear errors on bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgewise.errors import InputError
from judgewise.io.judgebench import (HUMAN_RATER, parse_verdict, read_judgebench, read_judgebench_scores)

GPT4O_JUDGES = 6


def _record(pair_id="p1", label="A>B", judgments=None, judge_name="arena_hard"):
    if judgments is None:
        judgments = [{"judgment": {"judge_model": "j", "response": "My verdict: [[A>>B]]"}, "decision": "A>B"},
                     {"judgment": {"judge_model": "j", "response": "My verdict: [[B>A]]"}, "decision": "B>A"}]
    return {"pair_id": pair_id, "label": label, "judge_name": judge_name, "response_model": "m",
            "response_A": "a", "response_B": "b", "question": "q", "judgments": judgments}


def _write(tmp_path, records, name="response_model-m__judge_name-arena_hard__judge_model-j.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


@pytest.mark.parametrize("text, expected", [("[[A>>B]]", 2), ("[[A>B]]", 1), ("[[A=B]]", 0), ("[[B>A]]", -1),
                                            ("[[B>>A]]", -2), ("[[B<A]]", 1), ("x [[A>B]] y [[B>>A]]", -2)])
def test_parse_verdict_takes_the_last_verdict_from_position_a_view(text, expected):
    assert parse_verdict(text)[0] == expected


def test_real_judgebench_outputs_give_two_games_per_pair_and_judge(shared):
    table = read_judgebench(shared / "data/judgebench")
    frame = table.frame
    assert table.kind == "judgments"
    assert len(frame) == 2 * (6 * 350 + 270) == table.report.rows_read
    assert table.report.rows_skipped == int(frame["error"].notna().sum())
    assert set(frame["order"]) == {"original", "swapped"}
    assert (frame.loc[frame["order"] == "original", "first"] == "A").all()
    assert (frame.loc[frame["order"] == "swapped", "first"] == "B").all()
    assert frame["judgment_id"].is_unique


def test_reward_models_see_the_same_pair_in_both_orders(shared):
    """Rewards are order-free: after mapping the swapped order back, response_A keeps its reward."""
    frame = read_judgebench(shared / "data/judgebench").frame
    rm = frame[frame["judge_kind"] == "reward_model"].pivot_table(index=["prompt_id", "judge"], columns="order",
                                                                  values="score_a")
    assert np.allclose(rm["original"], rm["swapped"], rtol=0, atol=1e-3)


def test_swapped_verdicts_are_turned_to_response_a_view(shared):
    """In the swapped order the judge's "A" is response_B, so JudgeBench's shown-position decision flips."""
    frame = read_judgebench(shared / "data/judgebench").frame
    o1 = frame[frame["judge"].str.startswith("o1-mini") & frame["error"].isna()]
    shown_a_wins = o1["decision_shown"].eq("A>B")
    a_wins = o1["outcome"].eq(1.0)
    swapped = o1["order"].eq("swapped")
    assert (a_wins[~swapped] == shown_a_wins[~swapped]).all()
    assert (a_wins[swapped] == o1.loc[swapped, "decision_shown"].eq("B>A")).all()


def test_scores_have_one_row_per_item_and_rater_and_the_label_as_human(shared):
    scores = read_judgebench_scores(shared / "data/judgebench/outputs")
    frame = scores.frame
    assert not frame.duplicated(["item_id", "rater"]).any()
    assert frame["rater"].nunique() == 7 + 1
    human = frame[frame["rater"] == HUMAN_RATER]
    assert len(human) == 350 + 270 and set(human["score"]) == {0.0, 1.0}
    judges = frame[frame["rater"] != HUMAN_RATER]
    assert judges["score"].between(0, 1).all()


def test_raw_scale_is_the_order_averaged_verdict_or_reward_difference(tmp_path):
    path = _write(tmp_path, [_record()])
    raw = read_judgebench_scores(path, scale="raw", with_human=False).frame
    prob = read_judgebench_scores(path, with_human=False).frame
    # original [[A>>B]] → +2, swapped [[B>A]] (shown B = response_A) → +1 for response_A
    assert raw["score"].item() == pytest.approx(1.5)
    assert prob["score"].item() == pytest.approx((1.5 + 2) / 4)


def test_unparseable_verdict_is_kept_with_an_error_and_counted(tmp_path):
    judgments = [{"judgment": {"judge_model": "j", "response": "I cannot decide."}, "decision": None},
                 {"judgment": {"judge_model": "j", "response": "[[A=B]]"}, "decision": "A=B"}]
    table = read_judgebench(_write(tmp_path, [_record(judgments=judgments)]))
    assert table.report.rows_skipped == 1 and table.report.rows_used == 1
    bad = table.frame[table.frame["error"].notna()]
    assert len(bad) == 1 and np.isnan(bad["outcome"].item()) and "no [[A>B]]" in bad["error"].item()
    scores = read_judgebench_scores(tmp_path, with_human=False).frame
    assert scores["n_orders"].item() == 1  # the other order still gives a score


@pytest.mark.parametrize("line, field", [
    ("{not json", None),
    (json.dumps({**_record(), "label": "A=B"}), "label"),
    (json.dumps({k: v for k, v in _record().items() if k != "pair_id"}), "pair_id"),
    (json.dumps({**_record(), "judgments": []}), "judgments"),
    (json.dumps({**_record(), "judge_name": "mystery"}), "judge_name"),
])
def test_malformed_records_name_file_row_and_field(tmp_path, line, field):
    path = _write(tmp_path, [_record(), line])
    with pytest.raises(InputError) as err:
        read_judgebench(path)
    assert err.value.row == 2 and err.value.field == field and path.name in str(err.value)


def test_missing_folder_and_empty_folder_are_clear_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_judgebench(tmp_path / "nope")
    with pytest.raises(InputError, match="no JudgeBench output files"):
        read_judgebench(tmp_path)

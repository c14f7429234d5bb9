"""io.schema owns the shared concepts; every reader, parser and rating agrees with it (a wrong copy fails here)."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from judgewise.errors import InputError, RatingError
from judgewise.io import schema
from judgewise.io.schema import LABEL5, VERDICT5, VERDICT5_ALIASES, VERDICT_OUTCOME

ALL_LABELS = [*VERDICT5, *VERDICT5_ALIASES]


def _expected(label: str) -> int:
    return VERDICT5[VERDICT5_ALIASES.get(label, label)]


# --- the 5-way verdict scale -----------------------------------------------------------------------------------

def test_verdict_scale_is_anchor_s2_and_its_aliases_mirror_it():
    assert VERDICT5 == {"A>>B": 2, "A>B": 1, "A=B": 0, "B>A": -1, "B>>A": -2}
    for alias, label in VERDICT5_ALIASES.items():  # "A<B" is "B>A" read from the other side
        flipped = alias[::-1].replace("<", ">") if "<" in alias else alias[::-1]
        assert schema.verdict5(flipped) == VERDICT5[label]
    assert VERDICT_OUTCOME == {v: schema.verdict_outcome(v) for v in VERDICT5.values()}
    assert LABEL5 == {v: k for k, v in VERDICT5.items()}


@pytest.mark.parametrize("label", ALL_LABELS)
def test_judge_parser_and_judgebench_reader_read_every_label_as_schema_verdict5(label):
    from judgewise.io.judgebench import parse_verdict
    from judgewise.judges.parsing import arena_hard_5way

    verdict = arena_hard_5way().parse(f"My final verdict is [[{label}]].")
    assert verdict.verdict5 == _expected(label)
    assert verdict.outcome == VERDICT_OUTCOME[_expected(label)]
    assert parse_verdict(f"verdict: [[{label}]]")[0] == _expected(label)


def test_arena_hard_games_reader_reads_every_label_as_schema_verdict5(tmp_path):
    from judgewise.io.arenahard import read_games

    records = [{"question_id": f"q{i}", "model": "m", "judge": "j", "games": [{"score": label}, {"score": label}]}
               for i, label in enumerate(VERDICT5)]
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    frame = read_games(path).frame
    for i, label in enumerate(VERDICT5):
        game1, game2 = frame[frame["prompt_id"] == f"q{i}"].sort_values("game").itertuples()
        assert game2.verdict == VERDICT5[label]  # game 2 shows the model as A
        assert game1.verdict == -VERDICT5[label]  # game 1 shows the baseline as A
        assert game2.outcome == VERDICT_OUTCOME[VERDICT5[label]]


def test_simulated_judge_writes_the_schema_label_of_its_verdict():
    from judgewise.judges.base import Comparison, Game
    from judgewise.judges.parsing import arena_hard_5way
    from judgewise.judges.simulated import SimulatedJudge

    judge = SimulatedJudge({"x": 1200.0, "y": 1000.0}, p_judge=0.6, seed=3)
    seen = set()
    for p in range(200):
        result = judge.judge_sync(Game(Comparison(f"p{p}", "", "x", "y", "", ""), swapped=p % 2 == 1))
        assert result.verdict.label == LABEL5[result.verdict.verdict5]
        assert arena_hard_5way().parse(result.raw).verdict5 == result.verdict.verdict5
        seen.add(result.verdict.verdict5)
    assert len(seen) >= 3


def test_arena_hard_template_offers_exactly_the_schema_labels():
    from judgewise.judges.templates import get_template

    template = get_template("arena_hard_5way")
    assert re.findall(r'"([AB][<>=]{1,2}[AB])"', template.grammar()) == list(VERDICT5)
    assert re.findall(r"\[\[([^\]]+)\]\]", template.reask()) == list(VERDICT5)


def test_arena_hard_weighting_counts_strong_verdicts_three_times_in_rank():
    from judgewise.ratings.encode import sample_weights

    frame = pd.DataFrame({"verdict": [2, 1, 0, -1, -2]})
    np.testing.assert_array_equal(sample_weights(frame, "arena_hard"), [3, 1, 1, 1, 3])
    np.testing.assert_array_equal(schema.verdict_weight(frame["verdict"]), [3, 1, 1, 1, 3])


# --- required columns ------------------------------------------------------------------------------------------

JUDGMENTS = pd.DataFrame({"prompt_id": ["p1", "p2"], "model_a": ["a", "a"], "model_b": ["b", "b"],
                          "judge": ["j", "j"], "outcome": [1.0, 0.0]})
RESPONSES = pd.DataFrame({"prompt_id": ["p1"], "model": ["a"], "text": ["t"]})


def _missing_column_errors():
    """(where, call) pairs that each meet a table lacking a required column."""
    from judgewise.analysis import accuracy, bias
    from judgewise.analysis.study import pool_from_scores
    from judgewise.designs.engine import response_lookup
    from judgewise.io.canonical import from_dataframe
    from judgewise.judges.replay import ReplayJudge
    from judgewise.ratings.encode import encode
    from judgewise.analysis.anchor_selection import verdict_matrix
    from judgewise.analysis.gaming import detect_gaming
    from judgewise.ratings import rank
    from judgewise.ratings.features import response_style, self_preference

    no_outcome = JUDGMENTS.drop(columns="outcome")
    return {
        "reader": lambda: from_dataframe(no_outcome, kind="judgments"),
        "replay": lambda: ReplayJudge(no_outcome),
        "encode": lambda: encode(no_outcome),
        "design engine": lambda: response_lookup(RESPONSES.drop(columns="text")),
        "style features": lambda: response_style(RESPONSES.drop(columns="text")),
        "bias": lambda: bias.position_bias(JUDGMENTS),
        "accuracy": lambda: accuracy.ground_truth_accuracy(pd.DataFrame({"prompt_id": ["p1"], "model": ["a"]})),
        "study": lambda: pool_from_scores(pd.DataFrame({"item_id": ["i"], "rater": ["r"]})),
        "gaming": lambda: detect_gaming(RESPONSES.drop(columns="text")),
        "anchor selection": lambda: verdict_matrix(JUDGMENTS, "b", column="verdict"),
        "self-preference": lambda: self_preference(JUDGMENTS.drop(columns="judge")),
        "contextual BT": lambda: rank(JUDGMENTS, "bt", feature_columns=["length"]),
    }


@pytest.mark.parametrize("where", list(_missing_column_errors()))
def test_every_missing_column_error_comes_from_the_one_check(where):
    with pytest.raises(InputError) as err:
        _missing_column_errors()[where]()
    assert re.search(r"lacks required column\(s\) \['\w+'(, '\w+')*\]: expected \[.*\], found \[", str(err.value))
    assert err.value.field in str(err.value.detail)


def test_require_columns_names_file_field_expected_and_found():
    with pytest.raises(InputError) as err:
        schema.require_columns(JUDGMENTS, schema.SCORES_REQUIRED, file="s.csv", what="scores table")
    assert err.value.file == "s.csv" and err.value.field == "item_id"
    assert str(err.value).startswith("s.csv field \"item_id\": scores table lacks required column(s) ['item_id'")
    schema.require_columns(JUDGMENTS, schema.JUDGMENTS_REQUIRED)  # complete: no error


# --- usable and failed games -----------------------------------------------------------------------------------

def _store_export_with_failures(tmp_path, n_failed=3):
    from judgewise.store.judgments import GameRecord, JudgmentStore, export_frame

    models = ["a", "b", "c"]
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        for p in range(12):
            for i, (x, y) in enumerate([("a", "b"), ("b", "c"), ("a", "c")]):
                store.record(GameRecord(key=f"k{p}-{i}", prompt_id=f"p{p}", model_a=x, model_b=y, first=x,
                                        swapped=False, judge="j", template=None, judge_identity="{}", status="ok",
                                        outcome=float((p + i) % 3 != 0), n_calls=1))
        for k in range(n_failed):
            store.record(GameRecord(key=f"bad{k}", prompt_id=f"p{k}", model_a=models[k % 3],
                                    model_b=models[(k + 1) % 3], first=models[k % 3], swapped=False, judge="j",
                                    template=None, judge_identity="{}", status="failed", outcome=None,
                                    error="HTTP 500 from the judge", n_calls=1))
        return export_frame(store.frame()), store.frame()


@pytest.mark.parametrize("method", ["bt", "elo", "winrate"])
def test_rank_drops_the_failed_games_of_a_store_export_and_counts_them(tmp_path, method):
    from judgewise.ratings import rank

    frame, _ = _store_export_with_failures(tmp_path)
    opts = {"anchor": "a"} if method == "winrate" else {}
    ranking = rank(frame, method, **opts)
    clean = rank(frame[frame["outcome"].notna()].reset_index(drop=True), method, **opts)
    np.testing.assert_allclose(ranking.scores, clean.scores)
    assert ranking.info["failed_games_skipped"] == 3 and clean.info["failed_games_skipped"] == 0
    assert ranking.info["failed_game_reasons"] == {"HTTP 500 from the judge": 3}
    assert ranking.info["rows"] == 36


def test_rank_of_only_failed_games_says_so(tmp_path):
    from judgewise.ratings import rank

    frame, _ = _store_export_with_failures(tmp_path)
    with pytest.raises(RatingError, match="all 3 games failed"):
        rank(frame[frame["outcome"].isna()], "bt")


def test_reader_store_stats_report_and_rank_count_the_same_failed_games(tmp_path):
    from judgewise.io import read_judgments
    from judgewise.store.judgments import store_stats, write_export
    from judgewise.ratings import rank

    frame, store_frame = _store_export_with_failures(tmp_path, n_failed=2)
    write_export(frame, tmp_path / "all.jsonl")
    report = read_judgments(tmp_path / "all.jsonl").report
    usable, n_failed, reasons = schema.usable_games(frame)
    assert n_failed == 2 == report.rows_skipped == store_stats(store_frame)["failed"]
    assert rank(frame, "bt").info["failed_games_skipped"] == 2
    assert len(usable) == 36 == int(schema.usable_mask(frame).sum()) == report.rows_used
    assert store_stats(store_frame)["failure_reasons"] == reasons


def test_failed_rule_status_error_and_outcome():
    frame = pd.DataFrame({"outcome": [1.0, None, None, 0.5, None], "error": [None, "boom", " ", None, None],
                          "status": ["ok", "failed", "ok", "ok", "failed"]})
    np.testing.assert_array_equal(schema.failed_mask(frame), [False, True, False, False, True])
    np.testing.assert_array_equal(schema.usable_mask(frame), [True, False, False, True, False])
    no_status = frame.drop(columns="status")
    np.testing.assert_array_equal(schema.failed_mask(no_status), [False, True, False, False, False])
    assert schema.usable_games(JUDGMENTS).frame is JUDGMENTS  # nothing failed: the frame itself


# --- the anchor ------------------------------------------------------------------------------------------------

def test_anchor_is_the_one_model_in_every_row_for_rank_the_report_and_alpacaeval():
    from judgewise.io import read_judgments
    from judgewise.ratings.encode import encode
    from judgewise.ratings.winrate import require_anchor
    from tests.support import REPO

    table = read_judgments(REPO / "examples" / "alpacaeval")
    frame = table.frame
    assert table.extras["anchor"] == "gpt4_1106_preview"
    assert schema.detect_anchor(frame["model_a"], frame["model_b"]) == table.extras["anchor"]
    enc = encode(frame)
    assert enc.models[require_anchor(enc)] == table.extras["anchor"]
    all_pairs = pd.DataFrame({"model_a": ["a", "b", "a"], "model_b": ["b", "c", "c"]})
    assert schema.detect_anchor(all_pairs["model_a"], all_pairs["model_b"]) is None
    two = pd.DataFrame({"model_a": ["m", "m"], "model_b": ["ref", "ref"]})
    assert schema.detect_anchor(two["model_a"], two["model_b"]) is None
    assert schema.detect_anchor(two["model_a"], two["model_b"], prefer_b=True) == "ref"


def test_report_anchor_and_usable_games_are_schema_s(tmp_path):
    from judgewise.report.context import ReportContext
    from judgewise.report.options import ReportOptions
    from judgewise.report.inputs import RunData

    frame, _ = _store_export_with_failures(tmp_path)
    star = pd.DataFrame({"prompt_id": ["p1", "p2", "p3"], "model_a": ["x", "y", "z"], "model_b": "ref",
                         "judge": "j", "outcome": [1.0, 0.0, 0.5]})
    for judgments in (frame, star):
        ctx = ReportContext(RunData(judgments=judgments, sources=["t"]), ReportOptions())
        assert ctx.anchor == schema.detect_anchor(ctx.valid["model_a"], ctx.valid["model_b"])
        assert len(ctx.valid) == int(schema.usable_mask(judgments).sum())
    assert ctx.anchor == "ref"


def test_likely_anchors_of_a_multi_anchor_file_are_schema_candidates_at_half_the_rows():
    from judgewise.analysis.anchor_selection import likely_anchors

    two_anchors = pd.DataFrame({"model_a": ["x", "y", "z", "x", "y", "z"],
                                "model_b": ["r1", "r1", "r1", "r2", "r2", "r2"]})
    assert likely_anchors(two_anchors) == ["r1", "r2"] == schema.anchor_candidates(
        two_anchors["model_a"], two_anchors["model_b"], min_share=0.5)
    assert schema.detect_anchor(two_anchors["model_a"], two_anchors["model_b"]) is None


@pytest.mark.parametrize("n_models", [3, 4, 5])
def test_an_all_pairs_table_has_no_likely_anchor_and_missing_one_pair_makes_it_not_all_pairs(n_models):
    """3 or 4 models on all pairs each take part in half of the rows or more: still no anchor (the pilot's input)."""
    import itertools

    from judgewise.analysis.anchor_selection import likely_anchors

    models = [f"m{i}" for i in range(n_models)]
    pairs = list(itertools.combinations(models, 2))
    rows = pd.DataFrame([{"prompt_id": p, "model_a": a, "model_b": b} for p in ("p1", "p2") for a, b in pairs])
    assert schema.compares_every_pair(rows["model_a"], rows["model_b"]) and likely_anchors(rows) == []
    star = rows[(rows["model_a"] == "m0") | (rows["model_b"] == "m0")]  # the pairs with m0 only: m0 the anchor
    assert not schema.compares_every_pair(star["model_a"], star["model_b"])
    assert likely_anchors(star)[0] == "m0"


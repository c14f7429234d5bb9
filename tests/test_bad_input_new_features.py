"""Bad input of the late features that runs (exit 0) but must not drop anything silently: what is left out is said."""

from __future__ import annotations

import logging

import pandas as pd

from judgewise.analysis.study import pool_from_scores


def _scores(n: int = 6) -> pd.DataFrame:
    return pd.DataFrame([{"item_id": f"i{i}", "rater": r, "score": float((i * (k + 2)) % 5)}
                         for i in range(n) for k, r in enumerate(("judge1", "judge2"))])


def test_human_scores_on_items_outside_the_pool_are_counted_not_dropped_silently(caplog):
    human = pd.DataFrame({"item_id": [f"i{i}" for i in range(6)] + ["x1", "x2"], "score": [1.0] * 3 + [2.0] * 5})
    with caplog.at_level(logging.WARNING, logger="judgewise.analysis.study"):
        pool = pool_from_scores(_scores(), human, target="judge1", human_source="h.jsonl")
    assert len(pool.item_ids) == 6
    assert any("h.jsonl" in r.getMessage() and "2 human score(s)" in r.getMessage() for r in caplog.records)


def test_human_scores_all_in_the_pool_say_nothing(caplog):
    human = pd.DataFrame({"item_id": [f"i{i}" for i in range(6)], "score": [1.0, 2.0] * 3})
    with caplog.at_level(logging.WARNING, logger="judgewise.analysis.study"):
        pool_from_scores(_scores(), human, target="judge1")
    assert not [r for r in caplog.records if "left out" in r.getMessage()]

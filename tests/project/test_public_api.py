"""The package top exports the public API, loads it lazily, and every advertised name resolves."""

from __future__ import annotations

import judgewise
from tests.support import REPO


def test_every_public_name_resolves():
    for name in judgewise.__all__:
        assert getattr(judgewise, name) is not None, name


def test_rank_from_the_top_level_returns_a_frame_best_first():
    table = judgewise.read_judgments(REPO / "examples" / "alpacaeval")
    ranking = judgewise.rank(table.frame, "winrate", anchor="gpt4_1106_preview")
    frame = ranking.to_frame()
    assert list(frame.columns[:6]) == ["model", "score", "ci_low", "ci_high", "rank", "n"]
    assert frame["score"].is_monotonic_decreasing
    assert set(frame["model"]) == set(ranking.models)


def test_an_unknown_name_is_an_attribute_error():
    try:
        judgewise.not_a_thing  # noqa: B018
    except AttributeError as exc:
        assert "not_a_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")

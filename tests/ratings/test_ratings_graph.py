"""Every rating method refuses a disconnected comparison graph with the same RatingError (one check in
``ratings.graph``); bootstrap rounds and seeds are checked before any work."""

from __future__ import annotations

import pandas as pd
import pytest

from judgewise.errors import ConfigError, RatingError
from judgewise.ratings import rank


def _pairs(a: str, b: str, prompts: int = 3) -> list[dict]:
    return [{"prompt_id": f"p{i}", "model_a": x, "model_b": y, "judge": "j", "outcome": o}
            for i in range(prompts) for x, y, o in ((a, b, 1.0), (b, a, 0.0), (a, b, 0.5))]


DISCONNECTED = pd.DataFrame(_pairs("a1", "a2") + _pairs("b1", "b2"))
CONNECTED = pd.DataFrame(_pairs("a1", "a2") + _pairs("b1", "b2") + _pairs("a2", "b1"))


@pytest.mark.parametrize("method", ["bt", "elo", "trueskill", "winrate"])
def test_every_method_refuses_a_disconnected_graph_with_the_same_message(method):
    with pytest.raises(RatingError) as err:
        rank(DISCONNECTED, method, anchor="a1" if method == "winrate" else None)
    assert "disconnected into 2 components" in str(err.value) and "{a1, a2}; {b1, b2}" in str(err.value)


@pytest.mark.parametrize("method", ["elo", "trueskill"])
def test_a_connected_graph_is_still_ranked(method):
    assert set(rank(CONNECTED, method).models) == {"a1", "a2", "b1", "b2"}


@pytest.mark.parametrize("rounds, seed", [(-1, 0), (10**9, 0), (10, -1), (10, 1.5)])
def test_bootstrap_rounds_and_seed_are_checked_first(rounds, seed):
    with pytest.raises(ConfigError):
        rank(CONNECTED, "elo", bootstrap=rounds, seed=seed)

"""The leaderboard a store already holds: the Bradley–Terry ranking of its games among a config's models.

One definition for every "existing leaderboard" an insertion design (Arena-lite §5.3, App. A.6) starts from —
``judgewise judge`` with insert-binary / insert-anchor and no leaderboard given, and ``judgewise evaluate
--add-model``: the stored games of the config's judge (its store identity, so another judge's games in the same
file never mix in) whose two models are both on the board, on the config's prompts when given, ranked by
:func:`judgewise.ratings.rank` (BT; failed games are dropped and counted there) — the same fit ``evaluate``
reports, so on a store holding one evaluation it is that evaluation's ranking.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError
from judgewise.io.schema import usable_mask
from judgewise.judges.game_keys import canonical_json
from judgewise.ratings import Ranking, rank
from judgewise.store.opening import is_store_url
from judgewise.store.reading import read_store_table


def judge_identity(judge) -> str:
    """The store's ``judge_identity`` text of a judge (what its games are stored under)."""
    return canonical_json(dict(judge.identity))


def stored_games(store_path: str | Path, *, identity: str | None = None,
                 prompt_ids: Sequence[str] | None = None) -> pd.DataFrame:
    """The pairwise games of a store file as a canonical judgments table (failed games kept), those of the judge
    stored as ``identity`` and on ``prompt_ids`` when given. An empty table when the file does not exist."""
    path = store_path if is_store_url(store_path) else Path(store_path)  # a PostgreSQL store is read as it is
    if isinstance(path, Path) and not path.is_file():
        return pd.DataFrame(columns=["prompt_id", "model_a", "model_b", "judge", "outcome"])
    frame = read_store_table(path).frame
    keep = np.ones(len(frame), dtype=bool)
    if identity is not None and "judge_identity" in frame.columns:
        keep &= (frame["judge_identity"] == identity).to_numpy(bool)
    if prompt_ids is not None:
        keep &= frame["prompt_id"].astype(str).isin(set(map(str, prompt_ids))).to_numpy(bool)
    return frame[keep].reset_index(drop=True)


def among(games: pd.DataFrame, models: Sequence[str]) -> pd.DataFrame:
    """The games whose two models are both in ``models``."""
    if not len(games):
        return games
    board = set(models)
    return games[games["model_a"].isin(board) & games["model_b"].isin(board)].reset_index(drop=True)


def leaderboard_games(games: pd.DataFrame, models: Sequence[str], *, where: str) -> pd.DataFrame:
    """The games among ``models`` (:func:`among`), refusing with a ConfigError (``where`` says which store and
    judge) when a model has no usable game against the others — no leaderboard of these models is stored."""
    board = among(games, models)
    ok = board[usable_mask(board)] if len(board) else board
    seen = set(ok["model_a"]) | set(ok["model_b"]) if len(ok) else set()
    missing = [m for m in models if m not in seen]
    if missing:
        what = "no game among them" if not len(ok) else f"no usable game of {missing} against the others"
        raise ConfigError(f"{where} holds no leaderboard of the models {list(models)}: {what}")
    return board


def stored_leaderboard(games: pd.DataFrame, *, bootstrap: int = 0, seed: int = 0,
                       l2: float | None = None) -> Ranking:
    """The BT ranking (:func:`judgewise.ratings.rank`, ridge ``l2``; None = BT's default) of leaderboard games."""
    return rank(games, "bt", bootstrap=bootstrap, seed=seed, l2=l2)


def best_first(ranking: Ranking) -> list[str]:
    """The ranking's models by score, best first (ties in the ranking's own model order)."""
    return [ranking.models[i] for i in np.argsort(-np.asarray(ranking.scores), kind="stable")]


def elo_ratings(ranking: Ranking) -> dict[str, float]:
    """model → score on the Elo scale (BT's scores), best first: what insert-anchor converts to win rates."""
    scores = dict(zip(ranking.models, map(float, ranking.scores)))
    return {m: scores[m] for m in best_first(ranking)}


#: insertion design → the option holding the existing leaderboard: best first (a list) or model → Elo (a mapping)
INSERTION_BOARD = {"insert-binary": "leaderboard", "insert-anchor": "ratings"}


def board_option(design: str, ranking: Ranking) -> dict:
    """``{option: the leaderboard}`` for insertion design ``design`` (:data:`INSERTION_BOARD`) from a ranking."""
    key = INSERTION_BOARD[design]
    return {key: best_first(ranking) if key == "leaderboard" else elo_ratings(ranking)}

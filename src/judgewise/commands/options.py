"""The settings of each command as one frozen dataclass, built by the CLI and taken by the commands' functions
(light: no heavy imports, so the CLI declares its options from them at start-up)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RankOptions:
    """How :func:`rank_path` reads and ranks an input (``judgewise rank``'s options).

    Attributes
    ----------
    method : str
        A rating method (``winrate``, ``winshare``, ``bt``, ``elo``, ``trueskill``, ``lc_winrate``; ``mean_score``
        for pointwise grades).
    format, skip_invalid, judge, pool_judges
        As :func:`judgewise.store.reading.read_rated`.
    anchor : str, optional
        Win rate's anchor (default: the one the reader knows, e.g. AlpacaEval's ``generator_1``).
    style_control : bool
        Style-controlled BT; needs the responses' texts, which the input must carry.
    style_definition : str, optional
        ``"arena-hard"`` or ``"judgewise"`` (``ratings.features``); default: the input's (Arena-Hard games:
        ``arena-hard``), else ``judgewise``.
    weighting : str, optional
        ``"arena-hard"`` (a strong verdict counts 3 times) or ``"none"``; default: what the input implies
        (Arena-Hard games: ``arena-hard``; see :func:`resolve_weighting`).
    baseline, arena_hard_config : optional
        Arena-Hard games: the baseline of every game, or Arena-Hard's judge config yaml (its baseline(s) and
        judge); default: the records' category baselines, else v0.1's ``gpt-4-0314`` (``io.arenahard``).
    bootstrap, bootstrap_unit, seed, ci_level
        Interval settings (0 rounds: no intervals).
    by : str, optional
        Also rank each group of rows sharing a value of this column (of the judgments or of their prompts:
        :mod:`judgewise.commands.grouping`) with the same method and intervals; ``RankedFile.grouped`` holds the
        groups, ``ranking`` stays the overall leaderboard.
    soft : bool
        Rate each judgment's soft preference from logprobs (the ``soft`` column a judging store keeps) as a
        fractional win where it has one (``judgewise.ratings.rank(soft=True)``); pairwise judgments only.
    prompts : Path, optional
        A prompts table (``prompt_id``/``question_id``/``uid`` + columns) where ``by`` is looked up first.
    lc_difficulty, lc_weights : Path, optional
        ``lc_winrate`` only: AlpacaEval's instruction difficulty and fitted GLM weights, for its exact
        length-controlled win rate (:mod:`judgewise.ratings.lc_winrate`).
    l2 : float, optional
        The method's ridge (BT: default None = the MLE, a weak prior only on separated data; 0 = refuse those).
    """

    format: str | None = None
    method: str = "bt"
    anchor: str | None = None
    style_control: bool = False
    style_definition: str | None = None
    weighting: str | None = None
    baseline: str | None = None
    arena_hard_config: Path | None = None
    bootstrap: int = 0
    bootstrap_unit: str = "prompt"
    seed: int = 0
    ci_level: float = 0.95
    by: str | None = None
    soft: bool = False
    prompts: Path | None = None
    skip_invalid: bool = False
    judge: str | None = None
    pool_judges: bool = False
    lc_difficulty: Path | None = None
    lc_weights: Path | None = None
    l2: float | None = None

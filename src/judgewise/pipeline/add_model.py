"""``judgewise evaluate --add-model NEW`` / ``judgewise.add_model``: place a new model into a stored leaderboard.

The stored leaderboard is the BT ranking of the config's judge's games among the config's models on its prompts
(:mod:`judgewise.pipeline.leaderboard`), NEW left out whether ``models:`` names it or not. An insertion design
places NEW judging only games that involve it (Arena-lite §5.3, App. A.6):

- ``binary`` (default) — Alg. 2: binary search over the leaderboard, ⌊|X| / ⌊log2 |L|⌋⌋ matches per probe
  (:class:`~judgewise.designs.insertion.BinarySearchInsertion`);
- ``anchor`` — App. A.6.2: NEW against one anchor on every prompt (default the top model, Table 4's "comp. to
  1st"), placed among the win rates the leaderboard's Elo implies against that anchor
  (:class:`~judgewise.designs.insertion.AnchorInsertion`).

Every game goes through evaluate's rounds (:class:`~judgewise.pipeline.target_rounds.TargetRounds` over the engine and
the durable store: the progress callback, ``budget:`` bounding this placement's games, failures counted), so a run
killed mid-way resumes from the store and a rerun pays nothing. Before NEW's first game the store's ``meta``
records that NEW is being added by this judge: that tells a rerun (go on, replaying from the store) from NEW
already ranked by an evaluate (refused). The result is an :class:`~judgewise.pipeline.evaluation.EvaluateResult`
whose ranking is BT (evaluate's ridge and bootstrap) on the leaderboard's games plus NEW's, with ``placement``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from judgewise.designs import design_options
from judgewise.errors import ConfigError, JudgeError
from judgewise.io.schema import usable_mask
from judgewise.judges.base import games_per_comparison
from judgewise.judges.config_schema import is_panel
from judgewise.judges.game_keys import judge_name
from judgewise.store.judgments import write_export
from judgewise.store.opening import is_store_url, open_store
from judgewise.store.protocol import JudgmentStoreLike
from judgewise.store.run_settings import note_ranking_settings
from judgewise.pipeline.config import RunConfig, build_design, load_config
from judgewise.pipeline.evaluation import (DEFAULT_BOOTSTRAP, EvaluateResult, check_pairwise, rounds_expected_tau,
                                         rounds_summary, target_rounds, trust_block)
from judgewise.pipeline.job import Job, build_job, choose_prompts, load_pool
from judgewise.pipeline.leaderboard import (best_first, board_option, judge_identity, leaderboard_games,
                                            stored_games, stored_leaderboard)
from judgewise.pipeline.run import first_failure
from judgewise.pipeline.target_rounds import EvaluateProgress, drive_rounds
from judgewise.pipeline.targets import DEFAULT_L2, Target
from judgewise.ratings import Ranking, rank
from judgewise.registry import Registry

#: ``--insertion`` name → the insertion design it runs (designs.registry)
INSERTIONS: Registry[str] = Registry("insertion", {"binary": "insert-binary", "anchor": "insert-anchor"})
WHY = {"insert-binary": "Arena-lite Alg. 2: binary search over the stored leaderboard, ⌊|X| / ⌊log2 |L|⌋⌋ matches "
                        "per probe; more than half won moves the new model up",
       "insert-anchor": "Arena-lite App. A.6.2: the new model against one anchor on every prompt, placed among the "
                        "win rates the leaderboard's Elo implies against the anchor"}


def add_model(config: RunConfig | dict | str | Path, new_model: str, *, insertion: str | None = None,
              anchor: str | None = None, progress: Callable[[EvaluateProgress], None] | None = None,
              bootstrap: int = DEFAULT_BOOTSTRAP, l2: float = DEFAULT_L2) -> EvaluateResult:
    """Place ``new_model`` into the config's stored leaderboard (module docstring); ``insertion`` is ``binary``
    (default) or ``anchor`` (:data:`INSERTIONS`), ``anchor`` the anchor model of ``anchor`` insertion (default the
    top model). Raises ConfigError when the insertion is unknown, NEW has no responses, the store holds no
    leaderboard of the config's models, or NEW is already ranked there; JudgeError when every game of NEW failed."""
    design_name = INSERTIONS.get(insertion or "binary")
    cfg = config if isinstance(config, RunConfig) else load_config(config)
    if is_panel(cfg.judge):
        raise ConfigError(f"{cfg.source}: judge.panel: --add-model places a model into one judge's stored "
                          "leaderboard; evaluate the panel again with the new model in models: (its members' stored "
                          "calls are not paid again), or give one judge")
    check_pairwise(cfg, l2)
    if anchor is not None and "anchor" not in (design_options(design_name) or {"anchor": None}):
        raise ConfigError(f"anchor {anchor!r}: only anchor insertion (`insertion='anchor'`, App. A.6.2) takes an "
                          f"anchor; {insertion or 'binary'} insertion chooses the models it probes")
    job, board, board_prompts = _insertion_job(cfg, new_model, design_name)
    if anchor is not None and anchor not in board:
        raise ConfigError(f"anchor {anchor!r} is not on the leaderboard of {cfg.source}; its models: {board}")
    where = f"{cfg.source}: the store {cfg.store} (judge {judge_name(job.judge.identity)})"
    if not is_store_url(cfg.store) and not Path(cfg.store).is_file():
        raise ConfigError(f"{cfg.source}: no stored leaderboard to add {new_model!r} to: the store {cfg.store} does "
                          f"not exist; run `judgewise evaluate --config {cfg.source}` first")
    games = stored_games(cfg.store, identity=judge_identity(job.judge), prompt_ids=board_prompts)
    try:
        board_games = leaderboard_games(games, board, where=where)
    except ConfigError as exc:
        raise ConfigError(f"{exc}; run `judgewise evaluate --config {cfg.source}` first") from None
    before = stored_leaderboard(board_games, l2=l2)
    marker = _marker(new_model, job)
    with open_store(cfg.store, **cfg.store_options()) as store:
        _refuse_ranked(games, board, new_model, marker in store.meta(), where)
        design = build_design({"name": design_name, **board_option(design_name, before), "new_model": new_model,
                               **({"anchor": anchor} if anchor is not None else {})})
        rounds, run, stopped = _place(job, store, design, board_games, marker, l2, progress)
    new_games = rounds.engine.judgments()
    _check_some_usable(new_games, new_model)
    judgments = pd.concat([board_games, new_games], ignore_index=True).drop_duplicates("judgment_id")
    if cfg.output:
        write_export(judgments, cfg.output)
    ranking = rank(judgments, "bt", bootstrap=bootstrap, seed=cfg.seed, l2=l2)
    with open_store(cfg.store, **cfg.store_options()) as store:  # a report of the store ranks as this run did
        note_ranking_settings(store, ranking.settings())
    trust = trust_block(judgments, job, rounds, stopped, None, Target(), l2, design_name, {})
    trust["target_meaning"] = f"none: the insertion ends when it has placed {new_model!r}, or at the budget"
    placement = placement_of(new_model, insertion or "binary", best_first(before), run, new_games, rounds, ranking)
    return EvaluateResult(ranking, rounds.state.games, rounds.state.paid, stopped, design_name, {},
                          [WHY.get(design_name, design_name) + f" (--insertion {insertion or 'binary'})"],
                          Target(), rounds.state.expected_tau, l2, trust, judgments,
                          rounds_summary(rounds, design_name), placement=placement)


def _insertion_job(cfg: RunConfig, new_model: str, design_name: str) -> tuple[Job, list[str], list[str]]:
    """The job over the leaderboard's models plus NEW (responses read once) on the leaderboard's prompts that NEW
    answered; (job, the leaderboard's models, the leaderboard's prompts)."""
    every = load_pool(dataclasses.replace(cfg, models=None))
    responses = every.responses
    if new_model not in set(responses["model"]):
        raise ConfigError(f"{cfg.source}: cannot add model {new_model!r}: it has no responses in {cfg.responses}; "
                          f"models there: {sorted(set(responses['model']))[:10]}")
    board = [m for m in (cfg.models or every.models) if m != new_model]
    board_prompts = choose_prompts(dataclasses.replace(cfg, models=board), responses, board)
    answered = set(responses.loc[responses["model"] == new_model, "prompt_id"])
    prompts = [p for p in board_prompts if p in answered]
    if not prompts:
        raise ConfigError(f"{cfg.source}: cannot add model {new_model!r}: it answered none of the "
                          f"{len(board_prompts)} prompts the leaderboard was judged on")
    job = build_job(dataclasses.replace(cfg, responses=responses, models=board + [new_model],
                                        design={"name": design_name}), allow_rounds=True)
    pool = dataclasses.replace(job.pool, prompt_ids=prompts)
    return dataclasses.replace(job, pool=pool, n_prompts=len(prompts)), board, board_prompts


def _marker(new_model: str, job: Job) -> str:
    """The store ``meta`` name recording that ``new_model`` is added by this job's judge."""
    return f"add_model:{new_model}:{hashlib.sha256(judge_identity(job.judge).encode()).hexdigest()[:16]}"


def _refuse_ranked(games: pd.DataFrame, board: list[str], new_model: str, adding: bool, where: str) -> None:
    """NEW already has games against the leaderboard that no --add-model of it judged: it is ranked already."""
    if adding or not len(games):
        return
    involved = ((games["model_a"] == new_model) | (games["model_b"] == new_model)).to_numpy(bool)
    other = pd.Series(np.where(games["model_a"] == new_model, games["model_b"], games["model_a"]))
    theirs = int((involved & other.isin(board).to_numpy(bool)).sum())
    if theirs:
        raise ConfigError(f"{where} already ranks {new_model!r}: it holds {theirs:,} games of it against the "
                          "leaderboard's models, judged by an evaluate (not by --add-model); rank it with "
                          "`judgewise evaluate` (models: naming it) instead")


def _place(job: Job, store: JudgmentStoreLike, design, board_games: pd.DataFrame, marker: str, l2: float, progress):
    """Run the insertion design on the job's prompts through evaluate's rounds (the stored leaderboard's games in
    the fit); returns (rounds, the design's run or None when the budget stopped it, "placed" | "budget")."""
    cfg, prompts = job.config, job.pool.prompt_ids
    per = games_per_comparison(cfg.orders)
    possible = per * design.n_calls(len(job.models), len(prompts))
    rounds = target_rounds(job, store, Target(), l2, progress, job.models, possible)
    rounds.fit_also(board_games)
    store.note_meta(marker, json.dumps({"design": design.name, "models": list(job.models)}))
    stopped, run = drive_rounds(design.steps(job.models, prompts, np.random.default_rng(cfg.seed)), rounds)
    stopped = stopped or "placed"
    rounds.state.expected_tau = rounds_expected_tau(rounds)
    return rounds, run, stopped


def _check_some_usable(new_games: pd.DataFrame, new_model: str) -> None:
    """JudgeError when no game of NEW succeeded (they are stored as failed; a placement on them means nothing)."""
    if not len(new_games):
        raise ConfigError(f"no game of {new_model!r} was judged (a budget of 0 calls?); raise budget.max_calls")
    if not usable_mask(new_games).any():
        raise JudgeError(f"all {len(new_games)} games of {new_model!r} failed (first reason: "
                         f"{first_failure(new_games)}); they are stored as failed — fix the judge settings, then "
                         "rerun with --retry-failed")


def placement_of(new_model: str, insertion: str, board: list[str], run, new_games: pd.DataFrame, rounds,
                 ranking: Ranking) -> dict:
    """The ``placement`` object: where the design put NEW among ``board`` (best first; ``position`` = models above,
    None when the budget stopped the design), the models and prompts probed with NEW's score against each, games
    judged for the placement (stored earlier or now), calls paid by this run, failures, and NEW's rank in the new
    BT ranking."""
    info = run.info if run is not None else {}
    position = info.get("position")
    order = best_first(ranking)
    out = {"model": new_model, "insertion": insertion, "complete": run is not None, "position": position,
           "rank": None if position is None else position + 1, "of": len(board) + 1,
           "above": board[position - 1] if position else None,
           "below": board[position] if position is not None and position < len(board) else None,
           "tie": bool(info.get("tie", False)), "leaderboard_before": board,
           "probes": list(info.get("probes") or []), "probed": _probed(new_games, new_model),
           "prompts": sorted(set(new_games["prompt_id"].astype(str))) if len(new_games) else [],
           "games": int(rounds.state.games), "calls": int(rounds.state.paid), "failed": int(rounds.state.failed),
           "bt_rank": order.index(new_model) + 1 if new_model in order else None}
    if info.get("anchor"):
        n = len(run.outcome)
        out.update(anchor=info["anchor"], win_rate=info["win_rate"], elo=info["elo"],
                   probes=[{"against": info["anchor"], "wins": float(np.nansum(run.outcome)), "matches": n}])
    return out


def _probed(new_games: pd.DataFrame, new_model: str) -> list[dict]:
    """Per opponent, in the order first judged: prompts, games and NEW's mean score (ties ½) over its usable
    games."""
    if not len(new_games):
        return []
    is_a = (new_games["model_a"] == new_model).to_numpy(bool)
    frame = pd.DataFrame({"against": np.where(is_a, new_games["model_b"], new_games["model_a"]),
                          "prompt_id": new_games["prompt_id"].astype(str),
                          "score": np.where(is_a, new_games["outcome"].astype(float),
                                            1 - new_games["outcome"].astype(float)),
                          "ok": usable_mask(new_games)})
    out = []
    for against, g in frame.groupby("against", sort=False):
        ok = g[g["ok"]]
        out.append({"against": str(against), "prompts": int(g["prompt_id"].nunique()), "games": int(len(g)),
                    "score": float(ok["score"].mean()) if len(ok) else None})
    return out

"""Run a job: the dry-run plan, then the judging — single-shot comparisons in one run, or a multi-round design
(tournament, adaptive, insertion) asking the engine for each round's verdicts — stored as they arrive.

:func:`run_job` is what ``judgewise judge`` does, as a library call: it returns a :class:`JudgeOutcome` (plan,
summary, judgments). The caller shows the plan (``on_plan``) and progress (``with_progress``) however it likes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError, JudgeError
from judgewise.io.schema import failed_mask
from judgewise.judges.base import games_per_comparison
from judgewise.judges.estimate import Estimate, estimate_run, estimate_upper_bound, plan_label
from judgewise.judges.engine_verdicts import EngineVerdicts
from judgewise.judges.pairs import build_comparisons
from judgewise.judges.prices import unpriced_fields
from judgewise.judges.pointwise import grading_counts, plan_grading, run_grading
from judgewise.judges.run_result import RunResult
from judgewise.judges.runner import run_judging
from judgewise.store.judgments import write_export
from judgewise.store.opening import is_store_url, open_store, open_store_for_planning, store_label
from judgewise.store.protocol import JudgmentStoreLike
from judgewise.pipeline.config import AUTO_DESIGN, RunConfig, build_design, design_spec, load_config
from judgewise.pipeline.job import Job, build_job, judge_prices
from judgewise.pipeline.leaderboard import (INSERTION_BOARD, best_first, board_option, judge_identity,
                                            leaderboard_games, stored_games, stored_leaderboard)

log = logging.getLogger(__name__)

#: with_progress(total, run): calls run(update or None) — update(p) gets p.done, p.total, p.cost, p.failed
ProgressRunner = Callable[[int, Callable[[Any], Any]], Any]


@dataclass
class RoundsPlan:
    """What a multi-round design will ask for, at most (it decides the rounds from the answers)."""

    design: str
    comparisons: int
    games: int
    n_prompts: int
    n_models: int
    estimate: Estimate | None = None  # calls, tokens, cost and time of at most ``games`` new games

    def as_dict(self) -> dict:
        bound = {} if self.estimate is None else {**self.estimate.as_dict(), "upper_bound": True}
        return {**bound, "design": self.design, "comparisons": self.comparisons, "games": self.games}

    def line(self, dry_run: bool = True) -> str:
        text = (f"{plan_label(dry_run)} design {self.design} asks for at most {self.comparisons} comparisons "
                f"({self.games} games) over {self.n_prompts} prompts and {self.n_models} models, in rounds; stored "
                "games are not paid again")
        e = self.estimate
        if e is not None:
            text += (f"; upper bound (the design's budget, every game new): {e.calls} calls, ~{e.tokens_in:,} "
                     f"tokens in, ~{e.tokens_out:,} out, ~${e.cost:.4f}{e.cost_note()}, ~{e.seconds:.0f}s ({e.basis})")
        return text


@dataclass
class JudgeOutcome:
    """A judging run's plan and, unless it was a dry run, its summary (the JSON ``judge --json`` prints), its
    judgments (one row per game) and its counters (``totals``: the rounds of a multi-round design summed)."""

    plan: Estimate | RoundsPlan
    summary: dict | None = None
    judgments: pd.DataFrame | None = None
    skipped: list[str] = field(default_factory=list)
    totals: RunResult | None = None

    @property
    def dry_run(self) -> bool:
        return self.summary is None

    def check(self) -> None:
        """Raise :class:`JudgeError` when no game of the job succeeded (all are stored as failed); warn with the
        count when some failed."""
        summary = self.summary or {}
        ok, failed = summary.get("ok_total", 0), summary.get("failed_total", 0)
        reason = first_failure(self.judgments)
        if failed and not ok:
            raise JudgeError(f"all {failed} games of this job failed (first reason: {reason}); they are stored as "
                             "failed — fix the judge settings, then rerun with --retry-failed")
        if failed:
            log.warning("%d of %d games of this job failed (first reason: %s); rerun with --retry-failed to judge "
                        "them again", failed, ok + failed, reason)


def first_failure(judgments: pd.DataFrame | None) -> str:
    """The first failed game's reason, on one short line."""
    if judgments is None or not len(judgments) or "error" not in judgments.columns:
        return "no reason stored"
    reasons = judgments.loc[failed_mask(judgments), "error"].dropna().astype(str)
    text = " ".join(reasons.iloc[0].split()) if len(reasons) else "no reason stored"
    return text if len(text) <= 160 else text[:157] + "..."


def _no_progress(total: int, run):
    return run(None)


def run_config(config: RunConfig | dict | str | Path, *, dry_run: bool = False,
               on_plan: Callable[[Estimate | RoundsPlan], None] | None = None,
               with_progress: ProgressRunner | None = None) -> JudgeOutcome:
    """Build the job a run config describes and run it (:func:`run_job`)."""
    cfg = config if isinstance(config, RunConfig) else load_config(config)
    if cfg.design.get("name") == AUTO_DESIGN:
        raise ConfigError(f"{cfg.source}: design: auto is chosen by `judgewise evaluate`; `judgewise judge` needs a "
                          "design name, e.g. all_pairs, adaptive, tournament")
    if cfg.target:
        log.warning("target: is read by `judgewise evaluate` (stop at a ranking quality); judge runs the whole design")
    return run_job(build_job(cfg, allow_rounds=True), dry_run=dry_run, on_plan=on_plan, with_progress=with_progress)


def run_job(job: Job, *, dry_run: bool = False, on_plan: Callable[[Estimate | RoundsPlan], None] | None = None,
            with_progress: ProgressRunner | None = None) -> JudgeOutcome:
    """Plan the job (``on_plan`` sees the plan before any call), then, unless ``dry_run``, judge it into the
    config's store and write ``output`` when set. A rerun makes no call for games already stored."""
    cfg = job.config
    if job.skipped:
        log.warning("%d comparisons could not be built and are not judged (first: %s)", len(job.skipped),
                    "; ".join(job.skipped[:3]))
    # a dry run creates no file
    with open_store_for_planning(cfg.store) if dry_run else open_store(cfg.store, **cfg.store_options()) as store:
        run = _run_grading if job.grades is not None else _run_rounds if job.multi_round else _run_single_shot
        outcome = run(job, store, dry_run=dry_run, on_plan=on_plan or (lambda plan: None),
                      with_progress=with_progress or _no_progress)
        if outcome.summary is not None and cfg.output:
            write_export(outcome.judgments, cfg.output)
    if outcome.summary is not None:
        outcome.summary = {**outcome.summary, "store": store_label(cfg.store), "output": cfg.output,
                           **unpriced_fields(judge_prices(job.judge))}
    return outcome



def _run_single_shot(job: Job, store: JudgmentStoreLike, *, dry_run: bool, on_plan, with_progress) -> JudgeOutcome:
    cfg, opts = job.config, job.config.run_options()
    est = estimate_run(job.comparisons, job.judge, store, orders=cfg.orders, seed=cfg.seed,
                       concurrency=opts["concurrency"], limits=opts["limits"],
                       expected_latency_s=cfg.judge.get("expected_latency_s"),
                       expected_tokens_out=cfg.judge.get("expected_tokens_out"), retry_failed=cfg.retry_failed)
    on_plan(est)
    if dry_run:
        return JudgeOutcome(est, skipped=job.skipped)
    opts["est_cost_per_game"] = est.cost / max(1, est.games - est.cached)  # for max_cost before results
    result = with_progress(est.games - est.cached,
                           lambda update: run_judging(job.comparisons, job.judge, store, progress=update, **opts))
    summary = {**result.summary(), "skipped_comparisons": len(job.skipped)}
    return JudgeOutcome(est, summary, result.judgments, job.skipped, result)


def _run_grading(job: Job, store: JudgmentStoreLike, *, dry_run: bool, on_plan, with_progress) -> JudgeOutcome:
    """Pointwise grading (judge.mode single, :mod:`judgewise.judges.pointwise`): every answer graded alone."""
    cfg = job.config
    opts = cfg.run_options()
    plan = plan_grading(job.grades, job.judge, store, retry_failed=cfg.retry_failed, concurrency=opts["concurrency"],
                        limits=opts["limits"], expected_tokens_out=cfg.judge.get("expected_tokens_out"),
                        expected_latency_s=cfg.judge.get("expected_latency_s"))
    on_plan(plan)
    if dry_run:
        return JudgeOutcome(plan, skipped=job.skipped)
    result = with_progress(plan.new, lambda update: run_grading(job.grades, job.judge, store, progress=update, **opts))
    summary = {**result.summary(), **grading_counts(result.judgments), "skipped_turns": len(job.skipped)}
    return JudgeOutcome(plan, summary, result.judgments, job.skipped, result)


def _run_rounds(job: Job, store: JudgmentStoreLike, *, dry_run: bool, on_plan, with_progress) -> JudgeOutcome:
    """A multi-round design asking the engine for each round's verdicts (the pipeline's defaults, e.g. the
    adaptive design's BT fit, filled in)."""
    cfg = job.config
    name, options = design_spec(cfg.design)
    seed = options.get("seed", cfg.seed)
    design = build_design(_with_leaderboard(cfg.design, job.models, cfg.store, job.judge))
    n = design.n_calls(len(job.models), job.n_prompts)
    games = n * games_per_comparison(cfg.orders)
    plan = RoundsPlan(name, n, games, job.n_prompts, len(job.models), _rounds_estimate(job, store, n, games))
    on_plan(plan)
    if dry_run:
        return JudgeOutcome(plan)
    verdicts = EngineVerdicts(job.pool, job.judge, store, cfg.run_options())
    run = design.run(job.models, job.pool.prompt_ids, verdicts, np.random.default_rng(seed))
    totals = verdicts.totals()
    summary = {**verdicts.summary(totals), "design": name, "design_info": design_info(run.info, run.pairs.models)}
    return JudgeOutcome(plan, summary, totals.judgments, verdicts.skipped, totals)


def design_info(info: dict, models: list[str]) -> dict:
    """A design run's own information, JSON-ready (printed by ``judge`` in text and JSON): scalars as they are,
    insertion probes as a list, the tournament's champion counts per model (Arena-lite Alg. 1), an adaptive
    run's trajectory as its number of fits (the θ vectors stay in the library result)."""
    out = {}
    for key, value in info.items():
        if key == "champion_counts":
            out[key] = {m: int(c) for m, c in zip(models, np.asarray(value).tolist())}
        elif key == "trajectory":
            out["fits"] = len(value)
        elif isinstance(value, np.ndarray):
            out[key] = value.tolist()
        elif isinstance(value, (int, float, str, bool, type(None), list, dict)):
            out[key] = value
    return out


def _rounds_estimate(job: Job, store: JudgmentStoreLike, comparisons: int, games: int) -> Estimate:
    """The upper-bound estimate of a multi-round design (:func:`judgewise.judges.estimate.estimate_upper_bound`),
    prompt tokens measured on one comparison per prompt (up to 200 prompts, models in turn)."""
    cfg, opts, pool = job.config, job.config.run_options(), job.pool
    m = len(pool.models)
    triples = [(p, pool.models[i % m], pool.models[(i + 1) % m]) for i, p in enumerate(pool.prompt_ids[:200])]
    sample = build_comparisons(pool.responses, triples, pool.texts).comparisons
    return estimate_upper_bound(sample, comparisons, games, job.judge, store, concurrency=opts["concurrency"],
                                limits=opts["limits"], expected_tokens_out=cfg.judge.get("expected_tokens_out"),
                                expected_latency_s=cfg.judge.get("expected_latency_s"))


def _with_leaderboard(design: dict, models: list[str], store_path: str, judge) -> dict:
    """An insertion design's leaderboard when the config gives none: the stored leaderboard of the models other
    than the new one (:mod:`judgewise.pipeline.leaderboard`: BT of this judge's stored games) — never the order of
    ``models:``."""
    key = INSERTION_BOARD.get(design.get("name"))
    if key is None or design.get(key):
        return design
    board = [m for m in models if m != design.get("new_model")]
    if not is_store_url(store_path) and not Path(store_path).is_file():
        raise ConfigError(f"design {design['name']}: give {key}: (the existing leaderboard) or judge the leaderboard "
                          f"models into the store first; {store_path} does not exist")
    where = f"design {design['name']}: the store {store_path} (this judge's games)"
    try:
        games = leaderboard_games(stored_games(store_path, identity=judge_identity(judge)), board, where=where)
    except ConfigError as exc:
        raise ConfigError(f"{exc}; give {key}: (the existing leaderboard)") from None
    ranking = stored_leaderboard(games)
    log.info("design %s: leaderboard from the store's BT ranking: %s", design["name"], ", ".join(best_first(ranking)))
    return {**design, **board_option(design["name"], ranking)}

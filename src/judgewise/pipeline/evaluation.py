"""``judgewise evaluate`` as a library call: judge in rounds until the ranking is trustworthy, then rank with trust.

``evaluate(config)`` takes the run config of ``judgewise judge`` (:mod:`judgewise.pipeline.config`) plus two
optional keys: ``target:`` (:mod:`judgewise.pipeline.targets`: ``{kendall_tau: 0.9}`` or ``{separated: 0.95,
margin: 10}``) and ``design: auto`` (the default here; :func:`choose_design` says why it chose what it chose).
Every round (:mod:`judgewise.pipeline.target_rounds`) judges a batch through the durable store, refits the ridge BT
(``l2`` = :data:`~judgewise.pipeline.targets.DEFAULT_L2`, reported) and checks the target; ``budget:`` always
bounds it. The result says what stopped it: ``target``, ``budget`` or ``exhausted`` (the design had nothing left
to ask). The final ranking is :func:`judgewise.ratings.rank` (BT, same ridge, prompt-cluster bootstrap) on the
games judged, with a trust block (:func:`trust_block`). A panel of judges (``judge: {panel: [...]}``) judges
every round with each member and ranks the panel's derived verdicts (:mod:`judgewise.pipeline.panel_rounds`); its
trust block has a ``panel`` part (Fleiss' κ between members, each member's calls and cost).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from judgewise.analysis.anchor_experiments import pick_anchor, pilot_ranks, tie_text
from judgewise.analysis.anchor_selection import report_from_judgments
from judgewise.analysis.bias import position_bias, swap_consistency
from judgewise.analysis.gaming import detect_gaming, win_rates_from
from judgewise.analysis.planning import PILOT_PROMPTS, PlanInputs, plan
from judgewise.analysis.power import sign_test_power_exact, sign_test_sample_size
from judgewise.designs import is_single_shot
from judgewise.errors import ConfigError
from judgewise.judges.config_schema import is_panel
from judgewise.io.schema import usable_mask
from judgewise.designs.base import Pairs
from judgewise.judges.base import games_per_comparison
from judgewise.judges.pairs import Pool, comparisons_per_pair
from judgewise.judges.engine_verdicts import EngineVerdicts
from judgewise.judges.prices import unpriced_fields
from judgewise.judges.run_result import RunResult
from judgewise.store.judgments import write_export
from judgewise.store.opening import open_store
from judgewise.store.protocol import JudgmentStoreLike
from judgewise.store.run_settings import note_ranking_settings
from judgewise.pipeline.config import (AUTO_DESIGN, RunConfig, build_design, design_spec, load_config,
                                       pilots_anchor)
from judgewise.pipeline.calibration import nearest_cell
from judgewise.pipeline.job import Job, build_job, job_prices, judge_mode, judge_prices, load_pool
from judgewise.pipeline.panel_rounds import panel_block, panel_engine, panel_job, panel_reason
from judgewise.designs.base import Round
from judgewise.pipeline.target_rounds import EvaluateProgress, TargetRounds, chunk_steps, drive_rounds
from judgewise.pipeline.targets import DEFAULT_L2, Target, check_target, parse_target
from judgewise.ratings import Ranking, rank

log = logging.getLogger(__name__)

DEFAULT_BOOTSTRAP = 1000
JSON_FIELDS = ("model", "score", "ci_low", "ci_high", "rank", "n")


@dataclass
class EvaluateResult:
    """What an evaluation found: the ranking, how many calls, why it stopped, the design and the trust block."""

    ranking: Ranking
    calls: int                 # games judged in this evaluation (one judge call each; stored earlier or now)
    paid_calls: int            # judge calls this run paid for (0 on a rerun of a finished evaluation)
    stopped: str               # "target" | "budget" | "exhausted"
    design: str
    design_options: dict
    reasons: list[str]
    target: Target
    expected_tau: float | None
    l2: float
    trust: dict
    judgments: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)
    summary: dict = field(default_factory=dict)
    placement: dict | None = None  # add_model(): where the new model was placed (pipeline.add_model.placement_of)
    human: object = None  # evaluate --human: analysis.human_anchored.HumanAnchored, rank-sets from human labels

    def as_dict(self) -> dict:
        """The ``--json`` form: ranking (model, score, ci_low, ci_high, rank, n), calls, stopped, design, trust;
        ``placement`` when a model was added (:func:`judgewise.pipeline.add_model.add_model`) and
        ``human_anchored`` with ``--human`` (:meth:`judgewise.analysis.human_anchored.HumanAnchored.as_dict`)."""
        records = [{k: rec[k] for k in JSON_FIELDS} for rec in self.ranking.to_records()]
        out = {"ranking": records, "calls": int(self.calls), "stopped": self.stopped, "design": self.design,
               "trust": self.trust}
        if self.placement is not None:
            out["placement"] = self.placement
        return out if self.human is None else {**out, "human_anchored": self.human.as_dict()}


def choose_design(n_models: int, n_prompts: int, max_calls: int | None, orders: str = "both",
                  has_target: bool = True) -> tuple[dict, list[str]]:
    """``design: auto``: Anchor Fig. 5 through :func:`judgewise.analysis.planning.plan`, then the choice that can
    stop at a target. ≤ 3 models: all pairs (plan's rule), judged in prompt chunks. A leaderboard (≥ 4 models):
    plan recommends a pilot-chosen mediocre anchor at a fixed size; with a target to stop at, the adaptive design
    spends each round on the pairs whose order is least certain and stops as soon as the target is reached
    (``has_target=False``: the reasons say the budget or the design ends the run instead).
    Returns the design mapping and the reasons."""
    advice = plan(PlanInputs(n_models=n_models, budget=max_calls))
    if advice.design == "quadratic":
        stop = ("stopping at the target" if has_target
                else "no target: every pair on every prompt is judged unless the budget ends the run first")
        return {"name": "all_pairs"}, [advice.reasons[0], f"judged in prompt chunks, refitting after each and {stop}"]
    budget, size = adaptive_budget(n_models, n_prompts, max_calls, orders, has_target)
    how = ("with a target to stop at, adaptive (Arena-lite-style sequential design) spends each round on the pairs "
           "whose order is least certain and stops when the target is reached" if has_target else
           "adaptive (Arena-lite-style sequential design) spends each round on the pairs whose order is least "
           "certain; no target: it runs until its budget is spent")
    reasons = [f"{n_models} models, a full ranking: plan recommends {advice.design} "
               f"({advice.judge_calls:,} calls + {advice.pilot_calls:,} pilot at a fixed size; `judgewise plan`)",
               how, size]
    return {"name": "adaptive", "budget": budget}, reasons + advice.warnings


def adaptive_budget(n_models: int, n_prompts: int, max_calls: int | None, orders: str = "both",
                    has_target: bool = True) -> tuple[int, str]:
    """The adaptive design's budget in comparisons when the config gives none: ``budget.max_calls`` (in
    comparisons of ``orders``) or every pair on every prompt — a target stops it earlier. (budget, reason)."""
    per = games_per_comparison(orders)
    all_pairs = n_prompts * n_models * (n_models - 1) // 2
    budget = max(min(all_pairs, max_calls // per) if max_calls else all_pairs, 1)
    return budget, (f"adaptive budget: {budget:,} comparisons ({budget * per:,} calls, orders {orders}) of "
                    f"{all_pairs:,} possible" + ("" if has_target else ", all of them judged (no target)"))


def _resolved_config(cfg: RunConfig, pool: Pool, has_target: bool) -> tuple[RunConfig, list[str]]:
    """The config with ``design: auto`` (also the default when no design is given) replaced by the choice, sized
    on ``pool`` (the config's models and prompts)."""
    if cfg.design.get("name") == "adaptive" and "budget" not in cfg.design:
        budget, reason = adaptive_budget(len(pool.models), len(pool.prompt_ids), cfg.budget.get("max_calls"),
                                         cfg.orders, has_target)
        return (dataclasses.replace(cfg, design={**cfg.design, "budget": budget}),
                [f"given in {cfg.source} without a budget; {reason}"])
    if cfg.design_given and cfg.design.get("name", "all_pairs") != AUTO_DESIGN:
        return cfg, [f"given in {cfg.source}"]
    design, reasons = choose_design(len(pool.models), len(pool.prompt_ids), cfg.budget.get("max_calls"),
                                    cfg.orders, has_target)
    return dataclasses.replace(cfg, design=design), reasons


def evaluate(config: RunConfig | dict | str | Path, *, progress: Callable[[EvaluateProgress], None] | None = None,
             bootstrap: int = DEFAULT_BOOTSTRAP, l2: float = DEFAULT_L2) -> EvaluateResult:
    """Run an evaluation (module docstring). ``progress`` gets an :class:`EvaluateProgress` after every game.
    Raises ConfigError for a bad config, JudgeError when the backend refuses calls (what finished is stored;
    rerun to continue), RatingError when the games judged cannot rank every model (a budget too small).
    To place one more model into the leaderboard this stored: :func:`judgewise.pipeline.add_model.add_model`."""
    cfg = config if isinstance(config, RunConfig) else load_config(config)
    check_pairwise(cfg, l2)
    target = parse_target(cfg.target, cfg.source)
    pool = load_pool(cfg)  # the responses, read once
    cfg, reasons = _resolved_config(cfg, pool, target.is_set)
    if is_panel(cfg.judge):
        reasons = reasons + [panel_reason(cfg)]
    name, options = design_spec(cfg.design)
    seed = int(options.pop("seed", cfg.seed))
    pilot_size = int(cfg.design.get("pilot_prompts", PILOT_PROMPTS)) if pilots_anchor(cfg.design) else 0
    job = _evaluation_job(cfg, pool, pilot_size)
    with open_store(cfg.store, **cfg.store_options()) as store:
        rounds, stopped, detail, pilot = _run_rounds(job, store, target, l2, progress, seed, pilot_size)
    if pilot is not None:
        cfg = dataclasses.replace(cfg, design=_piloted(cfg.design, pilot["anchor"]))
        options = _piloted(options, pilot["anchor"])
        reasons = reasons + [pilot["reason"]]
    if not rounds.state.games:
        raise ConfigError(f"{cfg.source}: evaluate judged no game (stopped: {stopped}); raise budget.max_calls")
    panel, judged = rounds.engine.panel() if job.members else (None, rounds.engine.judgments())
    judgments = judged if panel is None else panel.judgments
    if cfg.output:
        write_export(judged, cfg.output)  # a panel: its members' judgments (`rank --panel` ranks them)
    ranking = rank(judgments, "bt", bootstrap=bootstrap, seed=seed, l2=l2)
    with open_store(cfg.store, **cfg.store_options()) as store:  # a report of the store ranks as this run did
        note_ranking_settings(store, ranking.settings())
    summary = rounds_summary(rounds, name)
    trust = trust_block(judgments, job, rounds, stopped, detail, target, l2, name, cfg.design)
    if panel is not None:
        trust.update(panel=panel_block(rounds.engine, panel), **_billed(judged, job, rounds))
    if pilot is not None:
        trust["anchor_pilot"] = pilot
    public_options = {k: v for k, v in options.items() if k not in ("fit", "pilot_prompts")}
    return EvaluateResult(ranking, rounds.state.games, rounds.state.paid, stopped, name, public_options, reasons,
                          target, rounds.state.expected_tau, l2, trust, judgments, summary)


def _evaluation_job(cfg: RunConfig, pool: Pool, pilot_size: int) -> Job:
    """The run's job on ``pool`` (a panel's: each member's, :func:`~judgewise.pipeline.panel_rounds.panel_job`);
    with an anchor still to be chosen by the pilot, its judge is built without the anchor."""
    built = dataclasses.replace(cfg, design={"name": "adaptive"}) if pilot_size else cfg
    job = panel_job(built, pool) if is_panel(cfg.judge) else build_job(built, allow_rounds=True, pool=pool)
    return dataclasses.replace(job, config=cfg)


def check_pairwise(cfg: RunConfig, l2: float) -> None:
    """What evaluate (and add_model) refuse before reading anything: pointwise grading (by the judge or any
    member of a panel), a ridge that is not > 0."""
    judges = cfg.judge["panel"] if is_panel(cfg.judge) else [cfg.judge]
    for i, judge in enumerate(judges):
        if judge_mode(dataclasses.replace(cfg, judge=judge)) == "single":
            where = f"judge.panel[{i}]" if is_panel(cfg.judge) else "judge"
            raise ConfigError(f"{cfg.source}: {where}.mode single grades every answer alone; evaluate stops "
                              "pairwise judging at a ranking quality — grade with `judgewise judge` and rank the store")
    if not l2 > 0:
        raise ConfigError(f"l2 must be > 0 (the ridge that keeps BT finite on separated data), got {l2}")


def target_rounds(job: Job, store: JudgmentStoreLike, target: Target, l2: float, progress, models: list[str],
                  possible: int) -> TargetRounds:
    """The verdict callback over ``models`` (the engine, the store, the budget and the target)."""
    cfg = job.config
    pool = Pool(job.pool.responses, job.pool.texts, list(models), job.pool.prompt_ids, job.pool.turns,
                job.pool.references, job.pool.every_turn)
    max_calls, max_cost = cfg.budget.get("max_calls"), cfg.budget.get("max_cost")
    judges = len(job.members or [job])  # budget.max_calls holds for each member of a panel
    if job.members:  # its members' own cost caps (pipeline.panel_rounds)
        engine, max_cost = panel_engine(job, pool, store), None
    else:
        engine = EngineVerdicts(pool, job.judge, store, {k: v for k, v in cfg.run_options().items() if k != "budget"})
    return TargetRounds(engine, target, l2, max_games=float("inf") if max_calls is None else max_calls * judges,
                        max_cost=max_cost, total=int(min(possible, max_calls or possible)) * judges,
                        progress=progress, judges=judges)


def _run_rounds(job: Job, store: JudgmentStoreLike, target: Target, l2: float, progress, seed: int,
                pilot_size: int = 0):
    """Run the design's rounds in :func:`~judgewise.pipeline.target_rounds.drive_rounds` (after the anchor pilot
    when ``pilot_size``); returns (rounds, stop reason, the design's own detail, the pilot's dict or None)."""
    cfg = job.config
    rng = np.random.default_rng(seed)
    per = games_per_comparison(cfg.orders)
    n, prompts = len(job.models), len(job.pool.prompt_ids)
    rounds = pilot = pilot_prompts = None
    if pilot_size:
        k = min(pilot_size, prompts)
        possible = per * (k * n * (n - 1) // 2 + (prompts - k) * (n - 1))
        rounds = target_rounds(job, store, target, l2, progress, job.models, possible)
        pilot, pilot_prompts = anchor_pilot(rounds, k, rng)
        if pilot is None:
            return rounds, "budget", "pilot", None
        cfg = dataclasses.replace(cfg, design=_piloted(cfg.design, pilot["anchor"]))
    design = build_design(design_for_target(cfg.design, target))
    single = is_single_shot(cfg.design["name"])
    pairs = design.pairs(job.models, job.pool.prompt_ids, rng) if single else None
    if pilot_prompts is not None:  # the pilot judged every pair on its prompts already
        keep = ~np.isin(pairs.prompt, pilot_prompts)
        pairs = Pairs(pairs.prompt_ids, pairs.models, pairs.prompt[keep], pairs.a[keep], pairs.b[keep])
    if rounds is None:
        possible = per * (len(pairs) if single else design.n_calls(n, prompts))
        rounds = target_rounds(job, store, target, l2, progress, pairs.models if single else job.models, possible)
    steps = chunk_steps(pairs, rng) if single else design.steps(job.models, job.pool.prompt_ids, rng)
    stopped, run = drive_rounds(steps, rounds)
    detail = None if single or run is None else run.info.get("stopped")
    if stopped is None:
        capped = not single and design.n_calls(n, prompts) < prompts * n * (n - 1) // 2
        stopped = "budget" if detail == "budget" and capped else "exhausted"  # the design's own budget: a cap
    if rounds.arrays and rounds.check is None:  # a budget stop or the pilot left the last fit unread
        rounds.check = check_target(target, *rounds.fit())
        rounds.state.expected_tau = rounds.check.expected_tau
    return rounds, stopped, detail, pilot


TARGET_DESIGN_CONFIDENCE = 0.999  # with a target, the adaptive design's own "resolved" stop leaves the stop to it


def design_for_target(design: dict, target: Target) -> dict:
    """With a target, the adaptive design spends no calls on ordering pairs within the target's margin (its
    ``indifference``, log-odds) and its own "every adjacent pair resolved" stop waits for
    :data:`TARGET_DESIGN_CONFIDENCE`, so the target (stated and measured) is what stops the run — unless the config
    sets either."""
    if design.get("name") != "adaptive" or not target.is_set:
        return design
    return {"indifference": target.margin_logit, "confidence": TARGET_DESIGN_CONFIDENCE, **design}


def _piloted(design: dict, anchor: str) -> dict:
    """The anchor design mapping with the pilot's choice in place of ``anchor: auto``."""
    return {**{k: v for k, v in design.items() if k != "pilot_prompts"}, "anchor": anchor}


def anchor_pilot(rounds: TargetRounds, n_prompts: int, rng: np.random.Generator) -> tuple[dict | None, np.ndarray]:
    """Anchor §5.3 pilot for ``design: {name: anchor, anchor: auto}``: judge every pair on ``n_prompts`` random
    prompts (default :data:`~judgewise.analysis.planning.PILOT_PROMPTS`, the plan's pilot; ``pilot_prompts:``
    overrides) through ``rounds`` (the store, the budget; counted in the run's calls, not checked against the
    target), then take the candidate with the highest Anchor §4.3 informativeness — on the judge's 5-way verdicts
    when it gave them (margins kept), else on the collapsed ones — ties broken towards the middle of the pilot's
    BT ranking, then by name (:func:`~judgewise.analysis.anchor_experiments.pick_anchor`, the one rule).
    Returns (the pilot's dict: anchor, reason, n_prompts, calls, candidates, tied — None when the budget cannot
    hold the pilot) and the pilot prompts."""
    models = rounds.engine.pool.models
    n, total = len(models), len(rounds.engine.pool.prompt_ids)
    chosen = np.sort(rng.choice(total, size=n_prompts, replace=False))
    lo, hi = np.triu_indices(n, k=1)
    prompt = np.repeat(chosen, len(lo))
    before = rounds.state.games
    if not rounds.has_room(len(prompt)):  # the pilot is judged whole or not at all
        return None, chosen
    _, stopped = rounds.judge_round(Round(prompt, np.tile(lo, n_prompts), np.tile(hi, n_prompts)), read_target=False)
    if stopped is not None:  # the cost cap mid-pilot
        return None, chosen
    judged = rounds.engine.judgments()
    judged = judged[usable_mask(judged)]
    place = pilot_ranks(rounds.fit()[0])
    candidates = []
    for k, model in enumerate(models):
        report = report_from_judgments(judged, model)
        five = report.informativeness_5way
        candidates.append({"anchor": model, "informativeness": report.informativeness,
                           "informativeness_5way": five, "pilot_rank": int(place[k])})
    key = "informativeness_5way" if all(c["informativeness_5way"] is not None for c in candidates) else "informativeness"
    best, tied = pick_anchor(candidates, key)
    candidates.sort(key=lambda c: (-c[key], str(c["anchor"])))
    worst = candidates[-1]
    scale = "5-way verdicts" if key == "informativeness_5way" else "collapsed verdicts"
    reason = (f"anchor pilot: all pairs on {n_prompts} prompts ({rounds.state.games - before:,} calls, Anchor §5.3) "
              f"→ anchor {best['anchor']}: the highest informativeness on {scale} ({best[key]:.2f}; lowest "
              f"{worst['anchor']} {worst[key]:.2f}, Anchor §4.3){tie_text(tied, best[key])} "
              f"and rank {best['pilot_rank']}/{n} in the pilot's "
              "BT ranking" + (", a mediocre anchor as Anchor §4.3 expects" if n / 3 < best["pilot_rank"] <= 2 * n / 3
                              else "; Anchor §4.3 expects a mediocre anchor to be most informative — a near-extreme "
                              "choice on few prompts may be noise (raise pilot_prompts:)"))
    return ({"anchor": best["anchor"], "reason": reason, "n_prompts": int(n_prompts), "scale": scale, "tied": tied,
             "calls": int(rounds.state.games - before), "candidates": candidates}, chosen)


def rounds_summary(rounds: TargetRounds, design: str) -> dict:
    """Counts summed over the rounds' engine runs (:meth:`RunResult.combine`, counters only: cheap at hundreds of
    rounds), the rounds, the design and the comparisons skipped."""
    counts = RunResult.combine(rounds.engine.results, judgments=pd.DataFrame()).counts()
    return {**counts, "rounds": rounds.rounds, "design": design, "skipped_comparisons": len(rounds.engine.skipped)}


def rounds_expected_tau(rounds: TargetRounds) -> float:
    """Posterior-expected Kendall τ_m of the BT fit on every game the rounds judged
    (:func:`judgewise.pipeline.targets.check_target`)."""
    return check_target(rounds.target, *rounds.fit()).expected_tau


def trust_block(judgments: pd.DataFrame, job: Job, rounds: TargetRounds, stopped: str, detail, target: Target,
                l2: float, design: str, design_options: dict) -> dict:
    """How far to trust the ranking: what stopped the run, calls used against all pairs (in the run's ``orders``,
    and in both orders), the judge's swap consistency and position bias (where both orders / the shown order
    exist), the anchor's informativeness for an anchor design. A panel's calls are every member's, and its
    verdicts (swap consistency, position bias, gaming, power) the panel's derived ones."""
    n = len(rounds.index)
    pairs = comparisons_per_pair(job.pool) * n * (n - 1) // 2 * rounds.judges  # every turn; each member of a panel
    all_pairs_calls, in_orders = 2 * pairs, games_per_comparison(job.config.orders) * pairs
    ok = judgments[usable_mask(judgments)]  # io.schema's one rule
    swap = swap_consistency(ok).as_dict() if len(ok) else None
    position = position_bias(ok).as_dict() if len(ok) and "first" in ok.columns else None
    check = rounds.check
    models = rounds.engine.pool.models
    out = {"stopped": stopped, "design_stop": detail, "target": target.as_dict(),
           "target_meaning": target.describe(), "expected_kendall_tau": rounds.state.expected_tau,
           "tau_probability": None if check is None else check.probability,
           "likely_ties": [] if check is None else [[models[i], models[j]] for i, j in check.ties],
           "calibration": calibration_record(target, n),
           "calls": rounds.state.games, "paid_calls_this_run": rounds.state.paid,
           "orders": job.config.orders, "all_pairs_calls": in_orders, "all_pairs_both_orders_calls": all_pairs_calls,
           "share_of_all_pairs": rounds.state.games / in_orders if in_orders else None,
           "failed": rounds.state.failed, "cost": round(rounds.state.cost, 6), "rounds": rounds.rounds,
           "bt_l2": l2, "swap_consistency": swap if swap and swap["n"] else None,
           "position_bias_first_shown_wins": position if position and position["n"] else None}
    out.update(_billed(judgments, job, rounds), **unpriced_fields(job_prices(job)))
    if design == "anchor":
        out["anchor_informativeness"] = _anchor_informativeness(ok, design_options)
    if len(ok):
        out["judge_gaming"] = _gaming_flags(job, ok)
        out["power_at_observed_ties"] = power_at_observed_ties(ok, rounds)
    return out


def calibration_record(target: Target, n_models: int) -> dict | None:
    """What ``benchmarks/calibration.py`` measured for runs like this one (pool size, target) on replayed real
    verdicts: the nearest measured cell (:func:`judgewise.pipeline.calibration.nearest_cell`), and a warning when
    the run is outside what was measured, for a τ or a separated target."""
    if target.kendall_tau is not None:
        return nearest_cell(n_models, target.kendall_tau, target.margin)
    if target.separated is not None:
        return nearest_cell(n_models, target.separated, target.margin, kind="separated")
    return None


def _billed(judgments: pd.DataFrame, job: Job, rounds: TargetRounds) -> dict:
    """What the games cost as billed (the usage the API returned: prompt tokens, those read from its prompt cache)
    and what the same calls would cost through a batch API (each judge's prices' batch discount; a panel's
    ``judgments``: its members')."""
    sums = {k: int(judgments[k].fillna(0).sum()) if k in judgments.columns else 0
            for k in ("tokens_in", "tokens_cached")}
    paid = (zip(job.members, rounds.engine.spent) if job.members else [(job, rounds.state.cost)])
    batch = 0.0
    for member, cost in paid:
        prices = next(iter(judge_prices(member.judge).values()), None)
        batch += cost * (1.0 - prices.batch_discount) if prices is not None else cost
    return {"billed_tokens_in": sums["tokens_in"], "billed_tokens_cached": sums["tokens_cached"],
            "cost_if_batch": round(batch, 6)}


def _gaming_flags(job: Job, judged: pd.DataFrame) -> list[dict]:
    """Judge-gaming flags (:func:`judgewise.analysis.gaming.detect_gaming`) on the answers of the games judged:
    the ranked models' responses to the prompts judged, each flag with the model's share of games won."""
    responses = job.pool.responses
    models = set(judged["model_a"]) | set(judged["model_b"])
    used = responses[responses["model"].isin(models) & responses["prompt_id"].astype(str)
                     .isin(set(judged["prompt_id"].astype(str)))]
    return [f.as_dict() for f in detect_gaming(used, win_rates=win_rates_from(judged)).flags]


def power_at_observed_ties(judged: pd.DataFrame, rounds: TargetRounds, alpha: float = 0.05,
                           power: float = 0.8) -> dict | None:
    """Power at the observed tie rate for the hardest call the ranking makes: the closest adjacent pair of the
    BT fit. Its discordant win rate is the fitted BT probability σ(θ_hi − θ_lo); the tie rate is the share of
    ties among all usable games judged. Reports the prompts a one-sided sign test (Anchor §4.3, Table 2;
    :func:`judgewise.analysis.power.sign_test_sample_size`) needs to separate that pair with ``power`` at
    ``alpha``, and the exact power of the games actually judged between the two (their non-tied ones). A
    statistician's question "could this run have told the closest two apart?" — None when the two are fitted
    equal (no effect to power)."""
    theta = rounds.fit()[0]
    order = np.argsort(-theta, kind="stable")
    gaps = theta[order[:-1]] - theta[order[1:]]
    k = int(np.argmin(gaps))
    hi, lo = rounds.engine.pool.models[order[k]], rounds.engine.pool.models[order[k + 1]]
    win = float(1 / (1 + np.exp(-gaps[k])))
    outcome = judged["outcome"].to_numpy(float)
    ties = float(np.mean(outcome == 0.5))
    if not 0.5 < win < 1 or ties >= 1:
        return None
    size = sign_test_sample_size(win, min(ties, 0.999), alpha, power)
    pair = judged[judged["model_a"].isin((hi, lo)) & judged["model_b"].isin((hi, lo))]
    decisive = int((pair["outcome"] != 0.5).sum())
    return {"closest_pair": [hi, lo], "win_rate": win, "tie_rate": ties, "alpha": alpha, "power": power,
            "prompts_needed": int(size.n_total), "games_judged_for_pair": int(len(pair)),
            "power_as_run": float(sign_test_power_exact(decisive, win, alpha)[0]) if decisive else 0.0}


def _anchor_informativeness(judgments: pd.DataFrame, design_options: dict) -> dict:
    """Anchor §4.3 informativeness of each anchor the design used, on the games judged."""
    anchors = [design_options["anchor"]] if design_options.get("anchor") else []
    anchors += [a for a in ([design_options["anchors"]] if isinstance(design_options.get("anchors"), str)
                            else design_options.get("anchors") or []) if a not in anchors]
    return {a: report_from_judgments(judgments, a).informativeness for a in anchors}

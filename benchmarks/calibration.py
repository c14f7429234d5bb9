"""Issue 31: does ``evaluate``'s stop keep its word on real verdicts, and do the printed intervals cover?

**The stop.** Real verdicts are replayed through evaluate's own loop — the adaptive design, :class:`TargetRounds`
(the round's one BT fit, prompt-clustered covariance, the target), :func:`drive_rounds` — with the judging engine
replaced by a table lookup (:class:`TableEngine`: the same outcomes the replay judge would return, no store; one real
``evaluate`` run with the replay judge is checked to make the same calls and stop, ``--check-engine``). Sources:

- ``alpacaeval``: the AlpacaEval 2 models of ``../shared/data/alpacaeval``, made pairwise as
  ``examples/make_alpacaeval_pairwise.py`` does (Anchor §4.3: i beats j on an instruction when GPT-4-turbo preferred
  i over the anchor more than j), both answer orders with the same verdict (``orders: both``); seeded random pools of
  7, 12 and 16 models.
- ``arenahard``: Arena-Hard v0.1's battles (every model against claude-3-haiku), made pairwise the same way: 4 models.
- ``simulated``: the simulated judge with prompt effects (16 models 20 Elo apart, 300 prompts, p_judge 0.8,
  ``response_sd`` 60 Elo per answer, ``orders: one``); its verdicts drawn once per (prompt, pair).

Per cell (source, pool size, target kind, target), over seeded runs: mean calls, the mean stated number at the stop
(P(τ_m ≥ t) and E[τ_m]), the mean and 10th percentile of the realised τ_m against the BT ranking of *every* recorded
verdict of the pool (the ranking all comparisons on the same prompts give; pairs within the margin count as agreeing,
as the target states), the share of runs reaching the target, Kendall τ-b, and τ on the pairs the all-verdicts
ranking separates (gap beyond the margin). For a ``separated: p`` target the realised figure is the share of adjacent
pairs of the final ranking in the all-verdicts order or within the margin there, against p. ``before`` cells replay the rule this issue replaced (E[τ] ≥ t from the
model-based covariance of the N(0, 10²)-prior fit, no margin) for ``calls_ratio_vs_before``.

**The intervals** come from ``benchmarks/interval_coverage.py`` (``--coverage``; slow: it bootstraps 1,000 rounds per
subset).

    .venv/bin/python benchmarks/calibration.py [--runs 20] [--write] [--coverage]

``--write`` stores the cells in ``src/judgewise/pipeline/calibration.json`` (the trust block quotes them). Last
line: ``stop_share_met_min=… stop_mean_gap_min=… ci_coverage_min=… calls_ratio_vs_before=…``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from judgewise.analysis.anchor_pairwise import derived_pairwise
from judgewise.designs.adaptive import AdaptiveDesign
from judgewise.designs.ranking_posterior import expected_kendall_tau
from judgewise.io.alpacaeval import read_alpacaeval
from judgewise.io.readers import read_judgments
from judgewise.judges.simulated import response_quality, sample_verdicts
from judgewise.pipeline.calibration import RECORD
from judgewise.pipeline.config import build_design
from judgewise.pipeline.evaluation import design_for_target
from judgewise.pipeline.target_rounds import TargetRounds, drive_rounds
from judgewise.pipeline.targets import DEFAULT_L2, DEFAULT_MARGIN_ELO, Target
from judgewise.ratings.bradley_terry import ELO_SCALE, WEAK_PRIOR_L2, fit_bt_arrays

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@dataclass
class Source:
    """Verdicts as a dense array V[prompt, i, j] (model i's outcome against j; NaN: not recorded)."""

    name: str
    models: list[str]
    verdicts: np.ndarray
    orders: str  # "both": each comparison is two games with the same verdict; "one": one game
    pools: tuple[int, ...] = ()


def dense(frame: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    """(models, V) from canonical pairwise rows (one per prompt and pair)."""
    models = sorted(set(frame["model_a"]) | set(frame["model_b"]))
    prompts = {p: k for k, p in enumerate(sorted(set(frame["prompt_id"].astype(str))))}
    index = {m: k for k, m in enumerate(models)}
    v = np.full((len(prompts), len(models), len(models)), np.nan)
    p = frame["prompt_id"].astype(str).map(prompts).to_numpy()
    a, b = frame["model_a"].map(index).to_numpy(), frame["model_b"].map(index).to_numpy()
    o = frame["outcome"].to_numpy(float)
    v[p, a, b], v[p, b, a] = o, 1 - o
    return models, v


def alpacaeval_source() -> Source:
    table = read_alpacaeval(SHARED / "alpacaeval")
    models, v = dense(derived_pairwise(table.frame, table.extras["anchor"]))
    return Source("alpacaeval", models, v, "both", (7, 12, 16))


def arenahard_source() -> Source:
    frame = read_judgments(SHARED / "arenahard" / "battles.jsonl").frame
    models, v = dense(derived_pairwise(frame, "claude-3-haiku-20240307"))
    return Source("arenahard", models, v, "both", (len(models),))


def simulated_source(seed: int = 0, n_models: int = 16, n_prompts: int = 300) -> Source:
    rng = np.random.default_rng(seed)
    elo = 1000.0 + 20.0 * np.arange(n_models)
    quality = response_quality(elo, n_prompts, 60.0, rng)  # (prompts × models) Elo with prompt effects
    i, j = np.triu_indices(n_models, k=1)
    outcome = sample_verdicts(quality[:, i], quality[:, j], 0.8, rng)[0]
    v = np.full((n_prompts, n_models, n_models), np.nan)
    v[:, i, j], v[:, j, i] = outcome, 1 - outcome
    return Source("simulated", [f"m{k:02d}" for k in range(n_models)], v, "one", (n_models,))


class TableEngine:
    """Duck-typed :class:`~judgewise.judges.engine_verdicts.EngineVerdicts` answering from a verdict array: each
    comparison is one game (``orders: one``) or two with the same verdict (``both``), as the replay judge answers
    a table written in both orders."""

    def __init__(self, verdicts: np.ndarray, models: list[str], orders: str):
        self.verdicts, self.orders = verdicts, orders
        self.pool = SimpleNamespace(models=models, prompt_ids=[str(p) for p in range(verdicts.shape[0])])
        self.run_options: dict = {"orders": orders}
        self.results: list = []

    def __call__(self, prompt, a, b) -> np.ndarray:
        outcome = self.verdicts[prompt, a, b]
        copies = 2 if self.orders == "both" else 1
        names = np.asarray(self.pool.models, dtype=object)
        games = pd.DataFrame({"prompt_id": np.tile(prompt, copies).astype(str), "model_a": np.tile(names[a], copies),
                              "model_b": np.tile(names[b], copies), "outcome": np.tile(outcome, copies)})
        self.results.append(SimpleNamespace(judgments=games, paid_calls=len(games)))
        return outcome


class BeforeRounds(TargetRounds):
    """The rule issue 31 replaced, for the calls ratio: E[τ] ≥ t, model-based covariance of the weak-prior fit."""

    def _refit(self) -> None:
        a, b, o, _ = (np.concatenate(parts) for parts in zip(*self.arrays))
        self.current = fit_bt_arrays(a, b, o, len(self.index), l2=self.l2)
        self.fits += 1

    def judge_round(self, step, read_target: bool = True):
        out, reason = super().judge_round(step, read_target=False)
        if reason is None:
            self.state.expected_tau = expected_kendall_tau(*self.current)
            reason = "target" if self.state.expected_tau >= self.target.kendall_tau else None
        return out, reason


def one_run(source: Source, pool: np.ndarray, target: Target, seed: int, before: bool = False) -> dict:
    """One evaluation on ``pool`` (model indices) through evaluate's loop; its stop and realised figures."""
    v = source.verdicts[:, pool][:, :, pool]
    n, n_prompts = len(pool), v.shape[0]
    engine = TableEngine(v, [source.models[k] for k in pool], source.orders)
    l2 = WEAK_PRIOR_L2 if before else DEFAULT_L2
    rounds = (BeforeRounds if before else TargetRounds)(engine, target, l2)
    zone = 0.0 if before else target.margin_logit
    budget = n_prompts * n * (n - 1) // 2
    design = (AdaptiveDesign(budget=budget, fit=fit_bt_arrays) if before  # as evaluate built it before issue 31
              else build_design(design_for_target({"name": "adaptive", "budget": budget}, target)))
    reason, _ = drive_rounds(design.steps(engine.pool.models, engine.pool.prompt_ids,
                                          np.random.default_rng(seed)), rounds)
    theta = rounds.fit()[0]
    reference = all_verdicts_fit(v)
    check = rounds.check
    return {"calls": rounds.state.games, "stopped": reason or "exhausted",
            "stated_probability": None if before or check is None else check.probability,
            "stated_tau": rounds.state.expected_tau, **realised(theta, reference, zone)}


def all_verdicts_fit(v: np.ndarray) -> np.ndarray:
    """BT (weak prior) on every recorded verdict of the pool: the ranking all comparisons would give."""
    n = v.shape[1]
    i, j = np.triu_indices(n, k=1)
    a, b = np.tile(i, v.shape[0]), np.tile(j, v.shape[0])
    outcome = v[:, i, j].ravel()
    ok = np.isfinite(outcome)
    return fit_bt_arrays(a[ok], b[ok], outcome[ok], n, l2=WEAK_PRIOR_L2)[0]


def realised(theta: np.ndarray, reference: np.ndarray, margin: float) -> dict:
    """τ_m (pairs within ±margin in the reference count as agreeing), τ-b, and τ on the separated pairs."""
    i, j = np.triu_indices(len(theta), k=1)
    gap = reference[i] - reference[j]
    agree = np.where(np.abs(gap) <= margin, 1.0, np.sign(gap) * np.sign(theta[i] - theta[j]))
    separated = np.abs(gap) > margin
    order = np.argsort(-theta, kind="stable")
    adjacent_gap = reference[order[:-1]] - reference[order[1:]]
    return {"tau": float(agree.mean()), "tau_b": float(kendalltau(theta, reference).statistic),
            "tau_separated": float(agree[separated].mean()) if separated.any() else 1.0,
            "adjacent": float(np.mean((adjacent_gap > 0) | (np.abs(adjacent_gap) <= margin)))}


@dataclass
class Cell:
    source: str
    models: int
    target_kind: str
    target: float
    before: bool = False
    runs: list = field(default_factory=list)

    def summary(self) -> dict:
        f = lambda k: np.array([r[k] for r in self.runs if r[k] is not None], float)  # noqa: E731
        # a τ target promises τ_m ≥ t; a separated target promises each adjacent pair right (or tied) at level p
        tau = f("tau") if self.target_kind == "kendall_tau" else f("adjacent")
        goal = self.target
        return {"source": self.source, "models": self.models, "target_kind": self.target_kind,
                "target": self.target, "rule": "before" if self.before else "now",
                "margin_elo": 0.0 if self.before else DEFAULT_MARGIN_ELO, "runs": len(self.runs),
                "mean_calls": float(f("calls").mean()),
                "mean_stated_probability": float(f("stated_probability").mean()) if len(f("stated_probability"))
                else None, "mean_stated_tau": float(f("stated_tau").mean()),
                "mean_tau": float(tau.mean()), "p10_tau": float(np.percentile(tau, 10)),
                "share_reaching": float(np.mean(tau >= goal - 1e-9)), "mean_tau_b": float(f("tau_b").mean()),
                "mean_tau_separated": float(f("tau_separated").mean()),
                "stops": pd.Series([r["stopped"] for r in self.runs]).value_counts().to_dict()}


def run_cell(source: Source, size: int, kind: str, level: float, runs: int, before: bool = False) -> Cell:
    cell = Cell(source.name, size, kind, level, before)
    target = Target(kendall_tau=level) if kind == "kendall_tau" else Target(separated=level)
    for seed in range(runs):
        rng = np.random.default_rng(10_000 + seed)
        pool = np.sort(rng.choice(len(source.models), size=size, replace=False))
        cell.runs.append(one_run(source, pool, target, seed, before))
    return cell


def show(s: dict, seconds: float) -> None:
    prob = "—" if s["mean_stated_probability"] is None else f"{s['mean_stated_probability']:.3f}"
    print(f"{s['source']:10s} {s['rule']:6s} {s['models']:2d} models {s['target_kind']:11s} {s['target']:.2f}: "
          f"{s['runs']} runs, calls {s['mean_calls']:7,.0f}, stated P {prob} E[τ] {s['mean_stated_tau']:.3f}, "
          f"realised τ {s['mean_tau']:.3f} (p10 {s['p10_tau']:.2f}), reaching {s['share_reaching']:.0%}, "
          f"τ-b {s['mean_tau_b']:.3f}, separated pairs {s['mean_tau_separated']:.3f} ({seconds:.0f}s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sources", default="alpacaeval,arenahard,simulated")
    parser.add_argument("--kinds", default="kendall_tau,separated")
    parser.add_argument("--pools", default="", help="pool sizes to run (default: each source's)")
    parser.add_argument("--targets", default="0.9,0.95")
    parser.add_argument("--save", type=Path, help="save this process's cells as JSON (to --combine later)")
    parser.add_argument("--combine", type=Path, nargs="*", help="summarise cells saved by earlier --save runs")
    parser.add_argument("--write", action="store_true", help=f"store the cells in {RECORD}")
    parser.add_argument("--markdown", action="store_true", help="print the cells as the docs' table")
    parser.add_argument("--coverage", action="store_true", help="also measure interval coverage (slow)")
    args = parser.parse_args()
    cells, before = measure(args) if not args.combine else combined(args.combine)
    if args.save:
        args.save.write_text(json.dumps({"cells": cells, "before": list(before.values())}, indent=1))
    finish(args, cells, before)


def combined(paths: list[Path]) -> tuple[list, dict]:
    """Cells saved by several ``--save`` runs (cells of one benchmark split across processes)."""
    cells, before = [], {}
    for path in paths:
        saved = json.loads(path.read_text())
        cells += saved["cells"]
        before.update({(b["source"], b["models"], b["target"]): b for b in saved["before"]})
    return cells, before


def measure(args) -> tuple[list, dict]:
    builders = {"alpacaeval": alpacaeval_source, "arenahard": arenahard_source, "simulated": simulated_source}
    cells, before = [], {}
    for name in args.sources.split(","):
        source = builders[name]()
        pools = [int(p) for p in args.pools.split(",")] if args.pools else source.pools
        for size in [p for p in source.pools if p in pools]:
            for level in [float(t) for t in args.targets.split(",")]:
                for kind in args.kinds.split(","):
                    start = time.perf_counter()
                    cells.append(run_cell(source, size, kind, level, args.runs).summary())
                    show(cells[-1], time.perf_counter() - start)
                start = time.perf_counter()
                before[(name, size, level)] = run_cell(source, size, "kendall_tau", level, args.runs, True).summary()
                show(before[(name, size, level)], time.perf_counter() - start)
    return cells, before


def markdown(cells: list, before: dict) -> None:
    """The docs' table: one row per cell, with the rule it replaced beside the τ targets."""
    print("| source | models | target | runs | calls (before) | stated P(τ ≥ t) | realised τ_m: mean | 10th pct "
          "| share reaching t (before) | τ-b | τ on separated pairs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in cells:
        old = before.get((c["source"], c["models"], c["target"])) if c["target_kind"] == "kendall_tau" else None
        calls = f"{c['mean_calls']:,.0f}" + (f" ({old['mean_calls']:,.0f})" if old else "")
        share = f"{c['share_reaching']:.0%}" + (f" ({old['share_reaching']:.0%})" if old else "")
        prob = "—" if c["mean_stated_probability"] is None else f"{c['mean_stated_probability']:.3f}"
        kind = "τ" if c["target_kind"] == "kendall_tau" else "separated"
        print(f"| {c['source']} | {c['models']} | {kind} {c['target']:.2f} | {c['runs']} | {calls} | {prob} | "
              f"{c['mean_tau']:.3f} | {c['p10_tau']:.2f} | {share} | {c['mean_tau_b']:.3f} | "
              f"{c['mean_tau_separated']:.3f} |")


def finish(args, cells: list, before: dict) -> None:
    """Write the record (``--write``), the docs' table (``--markdown``), measure coverage (``--coverage``) and print
    the headline."""
    if args.markdown:
        markdown(cells, before)
    if args.write:
        RECORD.write_text(json.dumps({"benchmark": "benchmarks/calibration.py", "runs_per_cell": args.runs,
                                      "cells": cells}, indent=1) + "\n", encoding="utf-8")
    coverage = float("nan")
    if args.coverage:
        from benchmarks.interval_coverage import coverage_min, coverage_table
        coverage = coverage_min(coverage_table())
    tau_cells = [c for c in cells if c["target_kind"] == "kendall_tau"]
    ratios = [c["mean_calls"] / before[(c["source"], c["models"], c["target"])]["mean_calls"] for c in tau_cells
              if (c["source"], c["models"], c["target"]) in before]
    print(f"stop_share_met_min={min(c['share_reaching'] for c in cells):.2f} "
          f"stop_mean_gap_min={min(c['mean_tau'] - c['target'] for c in cells):+.3f} "
          f"ci_coverage_min={coverage:.3f} calls_ratio_vs_before={max(ratios):.2f}")


if __name__ == "__main__":
    main()

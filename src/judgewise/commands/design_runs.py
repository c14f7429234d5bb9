"""``power sign|wilcoxon``, ``plan``, ``anchors`` and ``simulate`` as functions: the parsed options in, the result
as ``(object for --json, text)`` out (the CLI only prints one of the two)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from judgewise.analysis.power import wilcoxon_power
from judgewise.analysis.sweeps import run_sweep, summarize
from judgewise.commands.design_studies import (adaptive_pool_note, anchor_reports_of_file, sign_test_table,
                                               sweep_points, wilcoxon_pools)
from judgewise.commands.options import AnchorsOptions, PlanOptions, SignOptions, SimulateOptions, WilcoxonOptions
from judgewise.commands.plan import plan_of, plan_run_config, write_run_config
from judgewise.commands.plan_cost import check_token_counts, plan_cost
from judgewise.commands.tables import report_line
from judgewise.errors import ConfigError
from judgewise.io.tables import ReadReport
from judgewise.store.reading import read_judgments_or_store, read_rated

SIMULATE_TRUTH = ("ground truth: true Elo ratings uniform over [1000, 1500] per trial (Arena-lite §4.2 uses Chatbot "
                  "Arena's); spearman/kendall of each design's ranking against the true ranking")


def parse_floats(text: str, name: str) -> list[float]:
    """Comma-separated finite numbers of the option ``name`` (at least one)."""
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{name} must be comma-separated numbers, got {text!r}") from None
    if not values:
        raise ConfigError(f"{name} must list at least one number, got {text!r}")
    bad = [v for v in values if not math.isfinite(v)]
    if bad:
        raise ConfigError(f"{name} must be finite numbers, got {bad[0]} in {text!r}")
    return values


def parse_whole(text: str, name: str) -> list[int]:
    """Comma-separated whole numbers (a count: 10.5 models is refused, not truncated)."""
    values = parse_floats(text, name)
    bad = [v for v in values if v != int(v)]
    if bad:
        raise ConfigError(f"{name} must be whole numbers, got {bad[0]:g} in {text!r}")
    return [int(v) for v in values]


def sign_study(o: SignOptions) -> tuple[dict, str]:
    """``power sign``: the sample-size table of the one-sided sign test."""
    table = sign_test_table(parse_floats(o.win_rate, "--win-rate"), parse_floats(o.tie_rate, "--tie-rate"), o.alpha,
                            o.power, o.exact)
    return table.as_dict(), table.to_text()


def wilcoxon_study(path: Path | None, o: WilcoxonOptions) -> tuple[dict, str]:
    """``power wilcoxon``: simulated power of the one-sided Wilcoxon signed-rank test per n."""
    frame = read_judgments_or_store(path, any_kind=True).frame if path is not None and not o.distribution else None
    pools = wilcoxon_pools(path, anchor=o.anchor, distribution=o.distribution, effect=o.effect, width=o.width,
                           frame=frame)
    res = wilcoxon_power(pools, parse_floats(o.n_grid, "--n"), o.alpha, o.power, o.simulations,
                         np.random.default_rng(o.seed))
    text = "\n".join([f"Wilcoxon signed-rank (one-sided, pratt), {res.n_distributions} distribution(s), "
                      f"{o.simulations} simulations per n"] +
                     [f"  n={n:>5}  power={p:.3f}" for n, p in zip(res.n_grid, res.power)] +
                     [f"n_required={res.n_required}"])
    return res.as_dict(), text


def plan_study(path: Path | None, options: PlanOptions, *, write: Path | None, responses: str) -> tuple[dict, str]:
    """``plan``: the plan, what was measured in the judgments at ``path``, and the run config written to ``write``."""
    check_token_counts(tokens_in=options.tokens_in, tokens_out=options.tokens_out,
                       shared_tokens=options.shared_tokens)
    result, measured = plan_of(path, options)
    lines, obj = ([measured.line()], {**result.as_dict(), "measured": vars(measured)}) if measured else \
        ([], result.as_dict())
    if options.tokens_in is not None:
        cost = plan_cost(result, model=options.judge_model, tokens_in=options.tokens_in,
                         tokens_out=options.tokens_out, shared_tokens=options.shared_tokens)
        obj["cost"] = cost.as_dict()
        lines.append(cost.line())
    if write is not None:
        cfg = plan_run_config(result, responses=responses, anchor=measured.anchor if measured else None)
        obj["written"] = str(write_run_config(write, cfg))
        lines.append(f"run config written: {obj['written']} (design {cfg['design']['name']})")
    return obj, "\n".join([result.to_text(), *lines])


def anchors_study(path: Path, o: AnchorsOptions) -> tuple[dict, str]:
    """``anchors``: the anchor reports of the judgments at ``path`` and the line of what was read."""
    rated = read_rated(path, format=o.format, judge=o.judge)
    reports = anchor_reports_of_file(path, o.anchor, o.pilot_prompts, o.seed, rated=rated)
    return reports.as_dict(), "\n".join(filter(None, [reports.to_text(), report_line(ReadReport(**reports.read))]))


def simulate_study(o: SimulateOptions) -> tuple[list, str]:
    """``simulate``: the Arena-lite §4.2 sweep, one row per design and setting."""
    names, sizes = o.designs.split(","), parse_whole(o.prompts, "--prompts")
    points = sweep_points(names, parse_whole(o.n_model, "--n-model"), sizes, parse_floats(o.p_judge, "--p-judge"),
                          o.reference_elo)
    table = summarize(run_sweep(points, o.trials, o.seed, o.executor, o.workers, o.address))
    lines = [SIMULATE_TRUTH, table.to_string(index=False, float_format="%.3f"), adaptive_pool_note(names, sizes)]
    return table.to_dict(orient="records"), "\n".join(filter(None, lines))

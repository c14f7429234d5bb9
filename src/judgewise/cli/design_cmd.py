"""``judgewise power sign|wilcoxon``, ``plan``, ``anchors`` and ``simulate``: decide what to pay for, before paying."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import typer

from judgewise.errors import ConfigError

SIGN_LABELS = {"normal": "normal approximation, rounded up (Anchor Table 2)",
               "exact": "exact binomial (smallest n reaching the power)"}


def _floats(text: str, name: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{name} must be comma-separated numbers, got {text!r}") from None
    if not values:
        raise ConfigError(f"{name} must list at least one number, got {text!r}")
    return values


def _echo(obj, as_json: bool, text: str) -> None:
    typer.echo(json.dumps(obj, indent=2, default=_json_default) if as_json else text)


def _json_default(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return None if np.isnan(x) else float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(type(x))


def sign_rows(win_rates: list[float], tie_rates: list[float], alpha: float, power: float, exact: bool) -> list[dict]:
    """One row per (win rate, tie rate): the chosen method's sizes, labelled, plus the other method's."""
    from judgewise.analysis.power import sign_test_sample_size

    rows = []
    for w in win_rates:
        for t in tie_rates:
            main = sign_test_sample_size(w, t, alpha, power, "exact" if exact else "normal")
            other = sign_test_sample_size(w, t, alpha, power, "normal" if exact else "exact")
            row = {**main.as_dict(), "label": SIGN_LABELS[main.method],
                   other.method: {"n_informative": other.n_informative, "n_total": other.n_total,
                                  "label": SIGN_LABELS[other.method]}}
            rows.append(row)
    return rows


def _sign_text(rows: list[dict]) -> str:
    lines = [f"one-sided sign test, alpha={rows[0]['alpha']}, power={rows[0]['power']} — {rows[0]['label']}",
             f"{'win rate':>9} {'ties':>6} {'N (informative)':>16} {'N_total = N/I':>14}   other method"]
    for r in rows:
        other = r["exact"] if r["method"] == "normal" else r["normal"]
        lines.append(f"{r['win_rate']:>9.2f} {r['tie_rate']:>6.2f} {r['n_informative']:>16} {r['n_total']:>14}"
                     f"   {other['n_informative']} / {other['n_total']} ({other['label'].split(' (')[0]})")
    return "\n".join(lines)


def wilcoxon_pools(path: Path | None, anchor: str | None, distribution: str | None, effect: float,
                   width: float) -> list[np.ndarray]:
    """Paired-difference pools: from a judgments file (model pairs vs the anchor with the given edge) or a
    ``value:prob,...`` distribution."""
    from judgewise.analysis.power import discordant_win_rate, distribution_from_probabilities

    if distribution:
        items = [x.split(":") for x in distribution.split(",") if x.strip()]
        try:
            values, probs = zip(*[(float(v), float(p)) for v, p in items])
        except ValueError:
            raise ConfigError(f"--distribution must be value:prob pairs, got {distribution!r}") from None
        return [distribution_from_probabilities(values, probs)]
    if path is None:
        raise ConfigError("give --distribution or a judgments PATH (with --anchor)")
    from judgewise.analysis.anchors import likely_anchors, verdict_matrix
    from judgewise.io import read_any

    frame = read_any(path).frame
    anchor = anchor or (likely_anchors(frame) or [None])[0]
    if anchor is None:
        raise ConfigError(f"{path}: no anchor found; pass --anchor")
    column = "verdict" if "verdict" in frame.columns and frame["verdict"].notna().any() else "outcome"
    v, _, _ = verdict_matrix(frame, anchor, column)
    v = np.sign(v) if column == "outcome" else v
    pools = []
    for i in range(v.shape[1]):
        for j in range(v.shape[1]):
            d = v[:, i] - v[:, j]
            d = d[np.isfinite(d)]
            if i != j and effect <= discordant_win_rate(d) - 0.5 < effect + width:
                pools.append(d)
    if not pools:
        raise ConfigError(f"no model pair in {path} has an edge in [{effect}, {effect + width}) against {anchor}")
    return pools


def _register_power(app: typer.Typer) -> None:
    power_app = typer.Typer(help="Sample size and power of pairwise comparisons (Anchor §4.3, App. C).",
                            no_args_is_help=True)
    app.add_typer(power_app, name="power")

    @power_app.command("sign")
    def sign_command(
        win_rate: str = typer.Option(..., "--win-rate", help="Win rate among discordant pairs (comma list ok)."),
        tie_rate: str = typer.Option("0", "--tie-rate", help="Share of ties / non-informative (comma list ok)."),
        alpha: float = typer.Option(0.05, "--alpha"),
        power: float = typer.Option(0.8, "--power"),
        exact: bool = typer.Option(False, "--exact", help="Exact binomial instead of the normal approximation."),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """One-sided sign test sample size: N informative prompts and N_total = N / (1 − tie rate)."""
        rows = sign_rows(_floats(win_rate, "--win-rate"), _floats(tie_rate, "--tie-rate"), alpha, power, exact)
        _echo(rows[0] if len(rows) == 1 else rows, as_json, _sign_text(rows))

    @power_app.command("wilcoxon")
    def wilcoxon_command(
        path: Path = typer.Argument(None, help="Anchor-based judgments (any supported format)."),
        anchor: str = typer.Option(None, "--anchor"),
        distribution: str = typer.Option(None, "--distribution", help="Paired differences 'value:prob,...'."),
        effect: float = typer.Option(0.05, "--effect", help="Edge (win rate − 0.5 among discordant) of pairs used."),
        width: float = typer.Option(0.01, "--width", help="Width of the edge interval."),
        n_grid: str = typer.Option("50,100,200,300,400,500,600,700,800,900,1000,1200,1500,2000", "--n"),
        simulations: int = typer.Option(1000, "--simulations"),
        alpha: float = typer.Option(0.05, "--alpha"),
        power: float = typer.Option(0.8, "--power"),
        seed: int = typer.Option(0, "--seed"),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Simulated power of the one-sided Wilcoxon signed-rank test (zero_method='pratt'; Anchor App. C)."""
        from judgewise.analysis.power import wilcoxon_power

        pools = wilcoxon_pools(path, anchor, distribution, effect, width)
        res = wilcoxon_power(pools, _floats(n_grid, "--n"), alpha, power, simulations,
                             np.random.default_rng(seed))
        text = "\n".join([f"Wilcoxon signed-rank (one-sided, pratt), {res.n_distributions} distribution(s), "
                          f"{simulations} simulations per n"] +
                         [f"  n={n:>5}  power={p:.3f}" for n, p in zip(res.n_grid, res.power)] +
                         [f"n_required={res.n_required}"])
        _echo(res.as_dict(), as_json, text)


def _register_plan(app: typer.Typer) -> None:
    @app.command("plan")
    def plan_command(
        n_models: int = typer.Option(..., "--models", help="Number of models to evaluate."),
        natural_baseline: str = typer.Option(None, "--natural-baseline",
                                             help="Name of a natural baseline model, if one exists."),
        baseline_exists: bool = typer.Option(False, "--has-baseline", help="A natural baseline exists (unnamed)."),
        full_ranking: bool = typer.Option(True, "--full-ranking/--pairs-only",
                                          help="Leaderboard (rank all) or only pairs of interest."),
        budget: int = typer.Option(None, "--budget", help="Judge-call budget."),
        effect: float = typer.Option(0.05, "--effect", help="Expected edge over 50% (0.05 = 55% win rate)."),
        alpha: float = typer.Option(0.05, "--alpha"),
        power: float = typer.Option(0.8, "--power"),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Recommend a design, anchor strategy, prompts and judge calls (Anchor Fig. 5 / §6)."""
        from judgewise.analysis.planning import PlanInputs, plan

        baseline = natural_baseline if natural_baseline else ("" if baseline_exists else None)
        result = plan(PlanInputs(n_models, baseline, full_ranking, budget, effect, alpha, power))
        _echo(result.as_dict(), as_json, result.to_text())


def anchors_payload(path: Path, anchor: str | None, pilot_prompts: int, seed: int) -> dict:
    """Anchor reports for the anchor(s) of a judgments file, and a pilot when it holds all pairs."""
    from judgewise.analysis.anchor_study import pilot
    from judgewise.analysis.anchors import QuadraticData, likely_anchors, report_from_judgments
    from judgewise.io import read_judgments
    from judgewise.ratings.bootstrap import rng_from_seed

    rng = rng_from_seed(seed)
    if pilot_prompts < 1:
        raise ConfigError(f"--pilot-prompts must be ≥ 1, got {pilot_prompts}")
    table = read_judgments(path)
    frame = table.frame
    anchors = [anchor] if anchor else likely_anchors(frame)
    out: dict = {"source": str(path), "read": table.report.as_dict(),
                 "anchors": [report_from_judgments(frame, a).as_dict() for a in anchors]}
    if not anchor and not anchors:
        res = pilot(QuadraticData(frame), pilot_prompts, rng)
        out["pilot"] = {"n_prompts": res.n_prompts, "recommended": res.recommended, "reason": res.reason,
                        "candidates": res.table.to_dict(orient="records")}
    return out


def _anchors_text(payload: dict) -> str:
    lines = []
    for r in payload["anchors"]:
        five = "n/a (no 5-way verdicts)" if r["informativeness_5way"] is None else f"{r['informativeness_5way']:.3f}"
        lines += [f"anchor {r['anchor']}: {r['n_models']} models × {r['n_prompts']} prompts",
                  f"  informativeness I (collapsed -1/0/1): {r['informativeness']:.3f}   5-way: {five}",
                  f"  wasted share (1 - I): {r['wasted_share']:.1%}; prompts where the anchor beats every model: "
                  f"{r['anchor_wins_all_share']:.1%}; prompts with no signal (all verdicts equal): "
                  f"{r['no_signal_share']:.1%}",
                  "  prompts by number of models beating the anchor: "
                  + " ".join(f"{k}:{c}" for k, c in enumerate(r["histogram"]) if c)]
    if "pilot" in payload:
        p = payload["pilot"]
        lines.append(f"pilot on {p['n_prompts']} prompts: recommended anchor {p['recommended']} — {p['reason']}")
        lines += [f"  {c['anchor']:<30} I={c['informativeness']:.3f} rank={c['pilot_rank']} {c['position']}"
                  for c in p["candidates"]]
    if "read" in payload:
        from judgewise.cli.rank_cmd import report_line
        from judgewise.io.tables import ReadReport

        lines.append(report_line(ReadReport(**payload["read"])))
    return "\n".join(lines)


def _register_anchors(app: typer.Typer) -> None:
    @app.command("anchors")
    def anchors_command(
        path: Path = typer.Argument(..., help="Judgments: anchor-based (report) or all-pairs pilot (recommend)."),
        anchor: str = typer.Option(None, "--anchor", help="Anchor to report (default: detected)."),
        pilot_prompts: int = typer.Option(10, "--pilot-prompts", help="Prompts sampled by the pilot (§5.3)."),
        seed: int = typer.Option(0, "--seed"),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Informativeness, win-count histogram and waste of an anchor; pilot recommendation (Anchor §4, §5.3)."""
        payload = anchors_payload(path, anchor, pilot_prompts, seed)
        _echo(payload, as_json, _anchors_text(payload))


def _register_simulate(app: typer.Typer) -> None:
    @app.command("simulate")
    def simulate_command(
        designs: str = typer.Option("tournament,anchor,adaptive", "--designs",
                                    help="Comma list of: tournament, anchor, quadratic, sampled, adaptive."),
        n_model: str = typer.Option("20", "--n-model"),
        prompts: str = typer.Option("100", "--prompts", help="|X| per trial (comma list ok)."),
        p_judge: str = typer.Option("0.8", "--p-judge"),
        trials: int = typer.Option(20, "--trials"),
        seed: int = typer.Option(0, "--seed"),
        executor: str = typer.Option("process", "--executor", help="serial | process | ray"),
        workers: int = typer.Option(None, "--workers"),
        address: str = typer.Option(None, "--address", help="Ray cluster address (ray.init(address=...))."),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Arena-lite §4.2 sweep on the simulated judge: Spearman/Kendall vs the truth per design and calls."""
        from judgewise.analysis.sweeps import run_sweep, summarize

        points = simulate_points(designs.split(","), [int(x) for x in _floats(n_model, "--n-model")],
                                 [int(x) for x in _floats(prompts, "--prompts")], _floats(p_judge, "--p-judge"))
        table = summarize(run_sweep(points, trials, seed, executor, workers, address))
        _echo(table.to_dict(orient="records"), as_json, table.to_string(index=False, float_format="%.3f"))


def simulate_points(designs: list[str], n_models: list[int], prompts: list[int], p_judges: list[float]):
    """Sweep points: the anchor design uses the pool's middle model (mediocre); adaptive spends the
    tournament's budget for the same |X|; sampled the same."""
    from judgewise.analysis.sweeps import SweepPoint
    from judgewise.designs import DESIGNS

    points = []
    for name in designs:
        if name not in DESIGNS:
            raise ConfigError(f"unknown design {name!r}; known: {sorted(DESIGNS)}")
        for n in n_models:
            for x in prompts:
                for p in p_judges:
                    opts = {"anchor": {"anchors": [f"m{n // 2}"]}, "adaptive": {"budget": (n - 1) * x},
                            "sampled": {"budget": (n - 1) * x}}.get(name, {})
                    points.append(SweepPoint(name, name, n, x if name != "adaptive" else max(x, 500), p, opts))
    return points


def register(app: typer.Typer) -> None:
    """Add ``power``, ``plan``, ``anchors`` and ``simulate`` to the app."""
    _register_power(app)
    _register_plan(app)
    _register_anchors(app)
    _register_simulate(app)

"""``judgewise select`` / ``reliability`` / ``study``: which items humans should label, and how much that saves.

SCORES and HUMAN are canonical scores tables (``item_id, rater, score`` as CSV/JSONL/JSON/Parquet) or anything
:func:`judgewise.io.readers.read_scores` understands — a JudgeBench outputs folder gives every judge's per-pair
"A is better" score plus the objective label as rater ``human``, so HUMAN can be left out. Without HUMAN the human
is SCORES' rater ``human`` (``--human-rater`` to rename). Results go to stdout (``--json`` for machine output);
progress and read counts go to stderr.
"""

from __future__ import annotations

import json
import logging
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import typer
from rich.console import Console
from rich.table import Table as RichTable

from judgewise.cli.richtext import add_row, plain, say
from judgewise.errors import ConfigError, InputError

log = logging.getLogger(__name__)
out = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160)  # tables unsqueezed when piped
err = Console(stderr=True, soft_wrap=True)


# ---------------------------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------------------------

def read_tables(scores: Path, human: Path | None) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """SCORES as a scores frame and HUMAN (when given) as a one-rater scores frame."""
    from judgewise.io.readers import read_scores

    table = read_scores(scores)
    log.info("read %d score rows from %s [%s]", table.report.rows_used, scores, table.report.format)
    if human is None:
        return table.frame, None
    human_frame = read_scores(human).frame
    raters = human_frame["rater"].unique() if "rater" in human_frame else []
    if len(raters) > 1:
        raise InputError(f"holds several raters ({', '.join(map(str, raters[:5]))}); a human scores table has "
                         "one rater (average several annotators first)", file=str(human), field="rater")
    return table.frame, human_frame


def load_pool(scores: Path, human: Path | None, target: str | None, human_rater: str):
    """Read SCORES (and HUMAN) into a ScorePool restricted to the target's items."""
    from judgewise.analysis.study import pool_from_scores

    frame, human_frame = read_tables(scores, human)
    return pool_from_scores(frame, human_frame, target=target, human_rater=human_rater, source=str(scores))


def parse_budgets(text: str) -> list[int]:
    """``5:50:5`` (start:stop:step, stop included) or ``10,20,50``."""
    try:
        if ":" in text:
            start, stop, step = (int(v) for v in text.split(":"))
            if step <= 0:
                raise ValueError
            return list(range(start, stop + 1, step))
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ConfigError(f"--budgets {text!r}: expected start:stop:step (e.g. 5:50:5) or a list (10,20,50)") from None


def read_items(path: Path) -> list[str]:
    """Item ids from a file: one per line, a JSON list, or the JSON that ``judgewise select --json`` prints."""
    from judgewise.io.containers import decode_utf8, parse_json, read_bytes
    from judgewise.io.tables import ReadReport
    from judgewise.io.validate import Validator

    v = Validator(str(path), ReadReport(str(path), "items"))
    text = decode_utf8(read_bytes(path, v), v).strip()  # a missing, empty or non-UTF-8 file names the file
    if text.startswith(("[", "{")):
        data = parse_json(text, v, expected="a JSON list of item ids or the output of select --json")
        items = data.get("items") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise InputError('expected a JSON list of item ids or an object with "items"', file=str(path))
        return [str(i) for i in items]
    return [line.strip() for line in text.splitlines() if line.strip()]


def _split_list(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def _jsonable(value):
    """NaN/inf → None and numpy scalars → Python, recursively (strict JSON)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _emit_json(data, output: Path | None) -> None:
    text = json.dumps(_jsonable(data), indent=1)
    if output is not None:
        from judgewise.io.atomic import write_text_atomic

        write_text_atomic(output, text + "\n")
        say(err, f"wrote {output}")
    else:
        typer.echo(text)


def _fmt(v, digits: int = 3) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


# ---------------------------------------------------------------------------------------------------------------
# select
# ---------------------------------------------------------------------------------------------------------------

def run_select(scores: Path, target: str, budget: int, metric: str, method: str, seed: int, candidates: int,
               human_rater: str) -> dict:
    """Pick ``budget`` items for human labels; returns the JSON-ready record."""
    from judgewise.analysis.reliability import get_metric
    from judgewise.analysis.selection import get_strategy, inter_model
    from judgewise.ratings.bootstrap import rng_from_seed

    pool = load_pool(scores, None, target, human_rater)
    t_scores, others, other_names = pool.split(target)
    name = pool.judges[pool.judge_index(target)]
    metric_fn = get_metric(metric)
    strategy = get_strategy(method, **({"n_candidates": candidates} if "match" in method else {}))
    idx = strategy.select(t_scores, others, budget, metric_fn, rng_from_seed(seed), n_draws=1)[0]
    record = {"target": name, "method": method, "metric": metric, "budget": budget, "seed": seed,
              "n_pool": len(pool.item_ids), "other_judges": other_names,
              "items": [str(i) for i in pool.item_ids[idx]]}
    if len(others):
        record["inter_model_pool"] = float(inter_model(metric_fn, t_scores, others))
        record["inter_model_subset"] = float(inter_model(metric_fn, t_scores, others, idx[None, :])[0])
    return record


def select_cmd(
    scores: Path = typer.Argument(..., help="Scores table (item_id, rater, score) or a JudgeBench outputs folder."),
    target: str = typer.Option(..., "--target", help="The judge under test (exact name or unique substring)."),
    budget: int = typer.Option(50, "--budget", help="How many items humans can label."),
    metric: str = typer.Option("icc", "--metric", help="Reliability metric to match (icc, alpha, rho, tau, ...)."),
    method: str = typer.Option("metric-match", "--method", help="random, stratified, bias-correction, "
                               "metric-match, metric-match-avg-labels, variance-match."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same items)."),
    candidates: int = typer.Option(20, "--candidates", help="Candidate subsets C for the matching methods."),
    human_rater: str = typer.Option("human", "--human-rater", help="Rater name of the human in SCORES (ignored)."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON object (items + settings) instead of ids."),
    output: Path = typer.Option(None, "--output", help="Write the JSON object to this file."),
) -> None:
    """The items to send to human annotators (Metric Match, Alg. 1, by default); one id per line."""
    record = run_select(scores, target, budget, metric, method, seed, candidates, human_rater)
    if as_json or output:
        _emit_json(record, output)
    if not as_json:
        for item in record["items"]:
            typer.echo(item)
    match = (f"; inter-model {metric} {_fmt(record['inter_model_subset'])} on the subset vs "
             f"{_fmt(record['inter_model_pool'])} on the pool" if "inter_model_pool" in record else "")
    say(err, f"selected {budget} of {record['n_pool']} items for {record['target']} by {method} "
             f"(seed {seed}){match}")


# ---------------------------------------------------------------------------------------------------------------
# reliability
# ---------------------------------------------------------------------------------------------------------------

def run_reliability(scores: Path, human: Path | None, target: str, metrics: list[str], items: Path | None,
                    human_rater: str) -> dict:
    """T(target, human) on the listed items (an estimate) or on every item with both scores (the population)."""
    from judgewise.analysis.reliability import get_metric

    pool = load_pool(scores, human, target, human_rater)
    if pool.human is None:
        raise InputError("no human scores: pass --human HUMAN or include a rater named "
                         f"{human_rater!r} in SCORES", file=str(scores))
    t_scores, _, _ = pool.split(target)
    if items is None:
        keep = ~np.isnan(pool.human)
        scope = "population" if keep.all() else "items with a human score"
    else:
        wanted = read_items(items)
        position = {item: i for i, item in enumerate(pool.item_ids.astype(str))}
        unknown = [i for i in wanted if i not in position]
        if unknown:
            raise InputError(f"{len(unknown)} item(s) not scored by the target (e.g. {unknown[:3]})", file=str(items))
        keep = np.zeros(len(pool.item_ids), bool)
        keep[[position[i] for i in wanted]] = True
        no_human = [i for i in wanted if np.isnan(pool.human[position[i]])]
        if no_human:
            raise InputError(f"{len(no_human)} selected item(s) have no human score (e.g. {no_human[:3]}); label "
                             "them first", file=str(human or scores))
        scope = "selected"
    values = {m: get_metric(m)(t_scores[keep], pool.human[keep]) for m in metrics}
    return {"target": pool.judges[pool.judge_index(target)], "scope": scope, "n_items": int(keep.sum()),
            "values": values}


def reliability_cmd(
    scores: Path = typer.Argument(..., help="Scores table or JudgeBench outputs folder."),
    human: Path = typer.Option(None, "--human", help="Human scores table (default: rater 'human' in SCORES)."),
    target: str = typer.Option(..., "--target", help="The judge under test."),
    metric: str = typer.Option("icc", "--metric", help="Metric(s), comma-separated (icc, alpha, rho, tau, ...)."),
    items: Path = typer.Option(None, "--items", help="Items to use: one id per line or `select --json` output."),
    human_rater: str = typer.Option("human", "--human-rater", help="Rater name of the human in SCORES."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The target judge's reliability against humans: on selected items (estimate) or on all (population)."""
    record = run_reliability(scores, human, target, _split_list(metric), items, human_rater)
    if as_json:
        _emit_json(record, None)
        return
    for name, value in record["values"].items():
        typer.echo(f"{name}({record['target']}, human) = {_fmt(value, 4)} on {record['n_items']} items "
                   f"({record['scope']})")


# ---------------------------------------------------------------------------------------------------------------
# study
# ---------------------------------------------------------------------------------------------------------------

def run_cli_study(scores: Path, human: Path | None, targets: list[str], budgets: list[int], trials: int,
                  metrics: list[str], methods: list[str], candidates: int, seed: int, human_rater: str):
    """Run the study for each target on its own item pool; returns one StudyResult."""
    from judgewise.analysis.study import StudyResult, run_study

    pools = _pools_per_target(scores, human, targets, human_rater)
    results = [run_study(pool, targets=[name], metrics=metrics, budgets=budgets, trials=trials, methods=methods,
                         n_candidates=candidates, seed=seed) for name, pool in pools]
    settings = {**results[0].settings, "targets": [name for name, _ in pools],
                "n_items": {name: len(pool.item_ids) for name, pool in pools}, "scores": str(scores)}
    return StudyResult(pd.concat([r.trials for r in results], ignore_index=True),
                       pd.concat([r.population for r in results], ignore_index=True), settings)


def _pools_per_target(scores, human, targets, human_rater):
    """(target, pool) pairs; without --target every judge that shares its items with another judge."""
    from judgewise.analysis.study import pool_from_scores

    frame, human_frame = read_tables(scores, human)
    explicit = bool(targets)
    names = targets if explicit else sorted(set(frame["rater"].astype(str)) - {human_rater})
    pairs, judges, told = [], set(frame["rater"].astype(str)) - {human_rater}, set()
    for name in names:
        pool = pool_from_scores(frame, human_frame, target=name, human_rater=human_rater, source=str(scores))
        left_out = tuple(sorted(judges - set(pool.judges)))
        if left_out and left_out not in told:
            told.add(left_out)
            log.info("judges with no score on the items of %s (and judges sharing them) are left out: %s",
                     pool.judges[pool.judge_index(name)], ", ".join(left_out))
        if len(pool.judges) < 2:
            if explicit:
                raise InputError(f"no other judge scored the items of {name!r}: Metric Match needs other judges")
            log.info("left out %s: no other judge scored its items", name)
            continue
        pairs.append((pool.judges[pool.judge_index(name)], pool))
    if not pairs:
        raise InputError("no judge shares its items with another judge: nothing to study", file=str(scores))
    return pairs


def study_cmd(
    scores: Path = typer.Argument(..., help="Scores table or JudgeBench outputs folder."),
    human: Path = typer.Option(None, "--human", help="Human scores table (default: rater 'human' in SCORES)."),
    target: list[str] = typer.Option(None, "--target", help="Target judge(s) (repeat; default: every judge)."),
    budgets: str = typer.Option("5:50:5", "--budgets", help="start:stop:step (stop included) or a list."),
    trials: int = typer.Option(40, "--trials", help="Trials per budget (Paper: N = 40)."),
    metrics: str = typer.Option("icc,alpha,rho,tau", "--metrics", help="Comma-separated metrics."),
    methods: str = typer.Option("random,stratified,bias-correction,metric-match,variance-match", "--methods",
                                help="Comma-separated selection methods (random is always included)."),
    candidates: int = typer.Option(20, "--candidates", help="Candidate subsets C (Paper: 20)."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    human_rater: str = typer.Option("human", "--human-rater", help="Rater name of the human in SCORES."),
    as_json: bool = typer.Option(False, "--json", help="Print the full JSON summary (for `judgewise report`)."),
    output: Path = typer.Option(None, "--output", help="Write the JSON summary to this file."),
) -> None:
    """Estimation error of each selection method against random over trials × budgets (Metric Match §3.3, §4)."""
    targets = [t for arg in (target or []) for t in _split_list(arg)]
    result = run_cli_study(scores, human, targets, parse_budgets(budgets), trials, _split_list(metrics),
                           _split_list(methods), candidates, seed, human_rater)
    summary = result.as_dict()
    if output is not None:
        _emit_json(summary, output)
    if as_json:
        _emit_json(summary, None)
        return
    render_study(summary)


def render_study(summary: dict) -> None:
    """Per target × metric table, per metric win rates, and the headline next to the paper's figures."""
    per_target = pd.DataFrame(summary["per_target"])
    pops = {(p["target"], p["metric"]): p["population"] for p in summary["population"]}
    head = summary["headline"]
    method = head["method"]
    table = RichTable(title=plain(f"{method} vs random, per target judge and metric (mean over budgets)"),
                      title_justify="left")
    for col in ("target", "metric", "population", "err random", f"err {method}", "Δ err", "macro win",
                "micro win", "savings"):
        table.add_column(plain(col), justify="left" if col in ("target", "metric") else "right")
    for r in per_target.itertuples(index=False):
        add_row(table, r.target, r.metric, _fmt(pops[(r.target, r.metric)]), _fmt(r.error_random),
                _fmt(r.error_method), f"{-100 * r.improvement:+.1f}%", _fmt(r.macro_win, 2),
                _fmt(r.micro_win, 2), f"{100 * r.savings:.1f}%" if not math.isnan(r.savings) else "—")
    out.print(table)
    wins = summary["win_rates"][method]
    for m in wins["by_metric"]:
        say(out, f"{m['metric']}: error {-100 * head['improvement_by_metric'][m['metric']]:+.1f}% vs random, "
                 f"macro win {m['macro']:.3f} [{m['macro_lo']:.3f}, {m['macro_hi']:.3f}], micro win "
                 f"{m['micro']:.3f} [{m['micro_lo']:.3f}, {m['micro_hi']:.3f}]")
    others = [k for k in summary["win_rates"] if k != method]
    for k in others:
        o = summary["win_rates"][k]["overall"]
        say(out, f"{k} vs random: macro win {o['macro']:.3f}, micro win {o['micro']:.3f}")
    say(out, f"error reduction with per-cell median errors (robust to ICC's heavy tails at tiny budgets): "
             f"{100 * head['improvement_median_errors']:.1f}%")
    def paper(text: str) -> str:  # the Metric Match paper's figure, shown next to Metric Match's only
        return f" (paper {text})" if method == "metric-match" else ""

    say(out, f"{method} vs random: error {-100 * head['improvement']:+.1f}%{paper('−18.7%')}, macro win rate "
             f"{head['macro']:.3f} [{head['macro_lo']:.3f}, {head['macro_hi']:.3f}]{paper('0.838')}, micro "
             f"{head['micro']:.3f}{paper('0.538')}, annotation savings {100 * head['savings']:.1f}%{paper('32.5%')}")


def register(app: typer.Typer) -> None:
    """Add ``select``, ``reliability`` and ``study`` to the app."""
    app.command("select")(select_cmd)
    app.command("reliability")(reliability_cmd)
    app.command("study")(study_cmd)

"""``judgewise judge --config run.yaml`` (dry run, progress bar, summary) and ``judgewise store export|stats``.

Every command reports failure counts. ``judge`` prints the dry-run estimate before any call; with
``--dry-run`` it stops there. A rerun of the same config makes no call for games already stored; games
stored as failed are judged again only with ``--retry-failed``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from judgewise.errors import JudgeError

log = logging.getLogger("judgewise.cli.judge")
err = Console(stderr=True, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)


def _quiet_http_logs() -> None:
    """httpx logs one INFO line per request; keep it for --verbose (DEBUG) only."""
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        for name in ("httpx", "httpx2"):  # openai >= 3 ships its own copy as httpx2
            logging.getLogger(name).setLevel(logging.WARNING)


def _progress_bar(total: int):
    """A rich progress bar on stderr (done/total, rate, ETA, cost so far, failures) and its callback."""
    bar = Progress(TextColumn("judging"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[rate]:.1f}/s"), TimeElapsedColumn(), TextColumn("ETA"),
                   TimeRemainingColumn(), TextColumn("${task.fields[cost]:.4f}"),
                   TextColumn("[red]{task.fields[failed]} failed"), console=err, transient=False)
    task = bar.add_task("judging", total=total, rate=0.0, cost=0.0, failed=0)

    def update(p) -> None:
        elapsed = bar.tasks[0].elapsed or 1e-9
        bar.update(task, completed=p.done, total=p.total, rate=p.done / elapsed, cost=p.cost, failed=p.failed)

    return bar, update


def _summary_lines(summary: dict, output: str | None) -> list[str]:
    s = summary
    lines = [f"{s['games']} games from {s['comparisons']} comparisons: {s['judged']} judged, {s['failed']} failed, "
             f"{s['cached']} already stored (no call); {s['calls_made']} calls, {s['retries']} retries, "
             f"{s['tokens_in']:,} tokens in / {s['tokens_out']:,} out, ${s['cost']:.4f}, {s['elapsed_s']:.1f}s",
             f"store now holds for this job: {s['ok_total']} ok, {s['failed_total']} failed"
             + ("" if not s["failed_total"] else " (rerun with --retry-failed to judge failed games again)")]
    if s.get("maybe_charged_timeouts"):
        lines.append(f"{s['maybe_charged_timeouts']} calls timed out after being sent (may have been charged; "
                     "their answers never arrived)")
    if s.get("duplicates"):
        lines.append(f"{s['duplicates']} planned games repeated an earlier one (same prompt, pair and order): "
                     "judged once")
    if s.get("swap_consistency") is not None:
        lines.append(f"swap consistency (both orders name the same winner): {s['swap_consistency']:.1%}")
    if output:
        lines.append(f"judgments written to {output}")
    return lines


def register_design_adapters() -> None:
    """Make the designs package's single-shot designs (quadratic, sampled, multi-anchor ...) usable by name in
    ``design:`` of a run config, next to the engine's own all_pairs/anchor. Importing ``judgewise.designs``
    does this now (``register_design``); kept so existing callers work. Multi-round designs (tournament,
    adaptive) ask for verdicts between rounds (``judges.rounds``)."""
    import judgewise.designs  # noqa: F401  (registers the designs into PAIR_DESIGNS)


def _apply_overrides(config: Path, *, store, output, retry_failed, max_calls, max_cost, concurrency):
    """The run config with the command line's overrides, each checked by the schema field it replaces."""
    from judgewise.judges.config import load_config
    from judgewise.judges.config_schema import check_option

    overrides = [("--max-calls", "budget", "max_calls", max_calls), ("--max-cost", "budget", "max_cost", max_cost),
                 ("--concurrency", "limits", "concurrency", concurrency)]
    for option, section, key, value in overrides:
        if value is not None:
            check_option(option, section, key, value)
    cfg = load_config(config)
    cfg.store = store or cfg.store
    cfg.output = output or cfg.output
    cfg.retry_failed = retry_failed or cfg.retry_failed
    for _, section, key, value in overrides:
        if value is not None:
            getattr(cfg, section)[key] = value
    return cfg


def run_judge(config: Path, *, dry_run: bool, retry_failed: bool, store: str | None, output: str | None,
              max_calls: int | None, max_cost: float | None, concurrency: int | None, progress: bool | None,
              as_json: bool) -> None:
    """The body of ``judgewise judge`` (importable for tests)."""
    from judgewise.judges.config import build_job
    from judgewise.judges.estimate import estimate_run
    from judgewise.judges.runner import run_judging
    from judgewise.judges.store import JudgmentStore, write_export

    _quiet_http_logs()
    register_design_adapters()
    cfg = _apply_overrides(config, store=store, output=output, retry_failed=retry_failed, max_calls=max_calls,
                           max_cost=max_cost, concurrency=concurrency)
    job = build_job(cfg, allow_rounds=True)
    opts = cfg.run_options()
    if job.skipped:
        log.warning("%d comparisons could not be built and are not judged (first: %s)", len(job.skipped),
                    "; ".join(job.skipped[:3]))
    with JudgmentStore(cfg.store) as st:
        if job.multi_round:
            summary, judgments = _run_rounds(job, st, opts, dry_run=dry_run, as_json=as_json)
        else:
            est = estimate_run(job.comparisons, job.judge, st, orders=cfg.orders, seed=cfg.seed,
                               concurrency=opts["concurrency"], limits=opts["limits"],
                               expected_latency_s=float(cfg.judge.get("expected_latency_s", 3.0)),
                               expected_tokens_out=cfg.judge.get("expected_tokens_out"),
                               retry_failed=cfg.retry_failed)
            err.print(est.line(), highlight=False, markup=False)
            if dry_run:
                if as_json:
                    print(json.dumps({"dry_run": est.as_dict(), "skipped_comparisons": len(job.skipped)}))
                return
            opts["est_cost_per_game"] = est.cost / max(1, est.games - est.cached)  # for max_cost before results
            result = _with_progress(progress, est.games - est.cached,
                                    lambda update: run_judging(job.comparisons, job.judge, st, progress=update, **opts))
            summary, judgments = {**result.summary(), "skipped_comparisons": len(job.skipped)}, result.judgments
        if summary is None:
            return
        if cfg.output:
            write_export(judgments, cfg.output)
    _print_summary({**summary, "store": cfg.store, "output": cfg.output}, as_json)
    _check_outcome(summary, judgments)


def _first_reason(judgments) -> str:
    """The first failed game's reason, on one short line."""
    if judgments is None or not len(judgments) or "error" not in judgments.columns:
        return "no reason stored"
    reasons = judgments.loc[judgments["status"] == "failed", "error"].dropna().astype(str)
    text = " ".join(reasons.iloc[0].split()) if len(reasons) else "no reason stored"
    return text if len(text) <= 160 else text[:157] + "..."


def _check_outcome(summary: dict, judgments) -> None:
    """A job none of whose games succeeded is an error (exit 4) after everything is stored and reported; a job
    where some failed warns with the count."""
    ok, failed = summary.get("ok_total", 0), summary.get("failed_total", 0)
    if failed and not ok:
        raise JudgeError(f"all {failed} games of this job failed (first reason: {_first_reason(judgments)}); "
                         "they are stored as failed — fix the judge settings, then rerun with --retry-failed")
    if failed:
        log.warning("%d of %d games of this job failed (first reason: %s); rerun with --retry-failed to judge "
                    "them again", failed, ok + failed, _first_reason(judgments))


def _with_progress(progress: bool | None, total: int, run):
    """Call ``run(update)`` under a progress bar when wanted (default: stderr is a terminal)."""
    show = progress if progress is not None else err.is_terminal
    if not show:
        return run(None)
    bar, update = _progress_bar(total)
    with bar:
        return run(update)


def _run_rounds(job, store, opts: dict, *, dry_run: bool, as_json: bool):
    """A multi-round design (tournament, adaptive, ...) asking the engine for each round's verdicts."""
    import numpy as np

    from judgewise.designs import make_design
    from judgewise.judges.rounds import EngineVerdicts

    spec = dict(job.config.design)
    name, seed = spec.pop("name"), spec.pop("seed", job.config.seed)
    design = make_design(name, **spec)
    n = design.n_calls(len(job.models), job.n_prompts)
    games = n * (2 if job.config.orders == "both" else 1)
    err.print(f"dry run: design {name} asks for about {n} comparisons ({games} games) over {job.n_prompts} prompts "
              f"and {len(job.models)} models, in rounds; stored games are not paid again",
              highlight=False, markup=False)
    if dry_run:
        if as_json:
            print(json.dumps({"dry_run": {"design": name, "comparisons": n, "games": games}}))
        return None, None
    verdicts = EngineVerdicts(job.pool, job.judge, store, opts)
    run = design.run(job.models, job.pool.prompt_ids, verdicts, np.random.default_rng(seed))
    info = {k: v for k, v in run.info.items() if isinstance(v, (int, float, str, bool, type(None)))}
    return {**verdicts.summary(), "design": name, "design_info": info}, verdicts.judgments()


def _print_summary(summary: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary, default=str))
        return
    for line in _summary_lines(summary, summary.get("output")):
        out.print(line, markup=False)


def run_export(store: Path, output: Path, only_ok: bool) -> dict:
    from judgewise.judges.store import JudgmentStore, export_frame, write_export

    with JudgmentStore.open_readonly(store) as st:  # refuses a file that is not a store, never writes to it
        stored = st.frame()
    frame = export_frame(stored, only_ok=only_ok)
    failed = int((stored["status"] == "failed").sum())
    write_export(frame, output)
    return {"rows": len(frame), "failed": failed, "failed_exported": 0 if only_ok else failed, "output": str(output)}


def register(app: typer.Typer) -> None:
    """Add ``judge`` and the ``store`` group to the app."""

    @app.command("judge")
    def judge(config: Path = typer.Option(..., "--config", "-c", help="Run config (YAML); see README 'Judging'."),
              dry_run: bool = typer.Option(False, "--dry-run", help="Print calls, tokens, cost and time; call nothing."),
              retry_failed: bool = typer.Option(False, "--retry-failed", help="Judge games stored as failed again."),
              store: str = typer.Option(None, "--store", help="Store file (overrides the config)."),
              output: str = typer.Option(None, "--output", "-o", help="Write the judgments (.parquet or .jsonl)."),
              max_calls: int = typer.Option(None, "--max-calls", help="Stop before exceeding this many calls."),
              max_cost: float = typer.Option(None, "--max-cost", help="Stop before exceeding this cost ($)."),
              concurrency: int = typer.Option(None, "--concurrency", help="Calls in flight (overrides config)."),
              progress: bool = typer.Option(None, "--progress/--no-progress", help="Progress bar (default: on a TTY)."),
              as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout.")) -> None:
        """Judge the comparisons a config describes; results go to the store as they arrive."""
        run_judge(config, dry_run=dry_run, retry_failed=retry_failed, store=store, output=output,
                  max_calls=max_calls, max_cost=max_cost, concurrency=concurrency, progress=progress,
                  as_json=as_json)

    store_app = typer.Typer(help="Inspect and export a judgment store.", no_args_is_help=True)
    app.add_typer(store_app, name="store")

    @store_app.command("export")
    def export(store: Path = typer.Argument(..., help="Store file."),
               output: Path = typer.Option(..., "--output", "-o", help="out.parquet or out.jsonl"),
               only_ok: bool = typer.Option(False, "--only-ok", help="Leave out games stored as failed.")) -> None:
        """Export the store as the canonical judgments table (one row per game, + store columns)."""
        info = run_export(store, output, only_ok)
        err.print(f"exported {info['rows']} rows to {info['output']} ({info['failed']} failed games in the store"
                  f"{', left out' if only_ok else ', kept with outcome empty and their error'})",
                  highlight=False, markup=False)

    @store_app.command("stats")
    def stats(store: Path = typer.Argument(..., help="Store file."),
              as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
        """Counts ok/failed, calls, tokens and cost, by judge and by model."""
        from judgewise.judges.store import JudgmentStore

        with JudgmentStore.open_readonly(store) as st:  # refuses a file that is not a store, never writes to it
            s = st.stats()
        if as_json:
            print(json.dumps(s))
            return
        out.print(f"{s['store']}: {s['games']} games, {s['ok']} ok, {s['failed']} failed, {s['calls']} calls, "
                  f"{s['tokens_in']:,} tokens in / {s['tokens_out']:,} out, ${s['cost']:.4f}", markup=False)
        for judge_name, t in s["by_judge"].items():
            out.print(f"  judge {judge_name}: {t['ok']} ok, {t['failed']} failed, ${t['cost']:.4f}", markup=False)
        for model, t in s["by_model"].items():
            out.print(f"  model {model}: {t['games']} games, {t['ok']} ok, {t['failed']} failed", markup=False)
        for reason, n in s["failure_reasons"].items():
            out.print(f"  failed x{n}: {reason}", markup=False)

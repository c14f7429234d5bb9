"""``judge``, ``evaluate`` and ``generate`` as functions: a config path and its overrides in, the pipeline's result
out (the CLI passes how to show the plan and the progress, and prints the result)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from judgewise.commands.options import RunOverrides
from judgewise.commands.tables import evaluation_blocks
from judgewise.errors import ConfigError
from judgewise.pipeline.add_model import add_model
from judgewise.pipeline.config import load_with_overrides
from judgewise.pipeline.evaluation import evaluate
from judgewise.pipeline.generate import generate
from judgewise.pipeline.generate_config import load_generate_with_overrides
from judgewise.pipeline.run import PanelOutcome, RoundsPlan, run_config
from judgewise.pipeline.workers import as_worker, run_workers


def load_judge_config(config: Path, overrides: RunOverrides, *, executor: str | None, workers: int):
    """The run config of ``judgewise judge`` with the overrides; several ``--workers`` need an ``--executor``."""
    if executor is None and workers != 1:
        raise ConfigError(f"--workers {workers}: starting several workers needs --executor ray (or start "
                          "`judgewise judge --worker` once per worker, on any machine)")
    return load_with_overrides(config, **overrides.given())


def judge_config(cfg, *, dry_run: bool, worker: bool, on_plan, with_progress):
    """Run ``cfg`` (:func:`judgewise.pipeline.run_config`; as one of many workers with ``worker``)."""
    return run_config(as_worker(cfg) if worker else cfg, dry_run=dry_run, on_plan=on_plan, with_progress=with_progress)


def judge_on_executor(cfg, *, dry_run: bool, executor: str, workers: int, address: str | None, on_plan):
    """The plan (``on_plan``), then ``workers`` workers on ``executor``: their summaries (None on a dry run)."""
    run_config(cfg, dry_run=True, on_plan=on_plan)  # the workers' plan
    return None if dry_run else run_workers(cfg, workers, executor=executor, address=address)


def dry_run_dict(outcome) -> dict:
    """What ``judgewise judge --dry-run --json`` prints (a panel: each member's, under ``members``)."""
    if isinstance(outcome, PanelOutcome):
        return {"members": [dry_run_dict(member) for member in outcome.members]}
    extra = {} if isinstance(outcome.plan, RoundsPlan) else {"skipped_comparisons": len(outcome.skipped)}
    return {"dry_run": outcome.plan.as_dict(), **extra}


def evaluation_of(config: Path, overrides: RunOverrides, *, add: str | None, insertion: str | None,
                  anchor: str | None, human: Path | None = None, alpha: float = 0.05):
    """The config of ``judgewise evaluate`` and what runs it: :func:`judgewise.evaluate`, or the placement of the
    model ``add`` into the stored leaderboard. ``human``/``alpha`` (``--human``) are checked before any judging."""
    if human is not None:
        from judgewise.commands.human_ranking import check_human_labels  # scipy: only with --human

        check_human_labels(human, alpha)
    cfg = load_with_overrides(config, **overrides.given())
    return cfg, evaluate if add is None else partial(add_model, new_model=add, insertion=insertion, anchor=anchor)


def generate_of(config: Path, overrides: RunOverrides, *, format: str | None, dry_run: bool, on_plan, with_progress):
    """``judgewise generate``: load the generate config with the overrides and generate its answers."""
    cfg = load_generate_with_overrides(config, format=format, **overrides.given())
    return generate(cfg, dry_run=dry_run, on_plan=on_plan, with_progress=with_progress)


def finish_evaluation(result, cfg, *, human: Path | None, alpha: float, report: Path | None) -> Path | None:
    """What ``evaluate`` adds after its rounds: with ``human``, the prediction-powered rank-sets of the games
    judged against those human labels (``result.human``, :func:`judgewise.commands.human_ranking
    .anchor_to_humans`); with ``report``, the HTML report of the games judged, ranked as the run ranked (returns
    its path)."""
    if human is not None:
        from judgewise.commands.human_ranking import anchor_to_humans  # scipy: only with --human

        result.human = anchor_to_humans(result.judgments, human, alpha)
    if report is None:
        return None
    from judgewise.report import ReportOptions, write_report  # the report layer loads jinja2 and matplotlib

    settings = result.ranking.settings()  # the report ranks as the run did: one answer per run
    return write_report(result.judgments, report, ReportOptions(
        method=settings["method"], bootstrap=settings["bootstrap"], seed=settings.get("seed", cfg.seed),
        l2=settings.get("l2"), title="judgewise evaluate"))


def evaluation_output(result) -> list:
    """What ``evaluate`` prints (:func:`judgewise.commands.tables.evaluation_blocks`) and, with ``--human``, the
    rank-sets table under the trust block."""
    if result.human is None:
        return evaluation_blocks(result)
    from judgewise.commands.human_ranking import human_anchored_blocks  # scipy: only with --human

    return [*evaluation_blocks(result), *human_anchored_blocks(result.human, result.ranking)]

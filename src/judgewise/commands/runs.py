"""``judge``, ``evaluate`` and ``generate`` as functions: a config path and its overrides in, the pipeline's result
out (the CLI passes how to show the plan and the progress, and prints the result)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from judgewise.commands.options import RunOverrides
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
                  anchor: str | None):
    """The config of ``judgewise evaluate`` and what runs it: :func:`judgewise.evaluate`, or the placement of the
    model ``add`` into the stored leaderboard."""
    cfg = load_with_overrides(config, **overrides.given())
    return cfg, evaluate if add is None else partial(add_model, new_model=add, insertion=insertion, anchor=anchor)


def generate_of(config: Path, overrides: RunOverrides, *, format: str | None, dry_run: bool, on_plan, with_progress):
    """``judgewise generate``: load the generate config with the overrides and generate its answers."""
    cfg = load_generate_with_overrides(config, format=format, **overrides.given())
    return generate(cfg, dry_run=dry_run, on_plan=on_plan, with_progress=with_progress)

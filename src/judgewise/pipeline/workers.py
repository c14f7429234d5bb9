"""Judging workers on a shared store: this process as one worker, or N workers started on a Ray cluster.

A worker (``judgewise judge --config run.yaml --worker``) builds the job its config describes, puts the job's games
in the shared store's queue and judges the batches it claims there until every game is stored, by it or by the
other workers — on this machine or others, started together or later. A worker that dies leaves its claims to
expire (``limits.lease_s``) and the others take its games; its answers received are in the store's journal and
are not paid again. ``executor: ray`` starts the workers as Ray tasks (an existing Ray cluster, or a local one);
Ray starts a task again when its node is lost, and the new worker simply joins the job.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Callable

from judgewise.errors import ConfigError
from judgewise.executors import run_tasks
from judgewise.store.opening import is_store_url
from judgewise.pipeline.config import RunConfig, load_config
from judgewise.pipeline.run import JudgeOutcome, run_config

log = logging.getLogger(__name__)


def as_worker(config: RunConfig | dict | str) -> RunConfig:
    """The config as one worker of its job; :class:`ConfigError` unless its store is a PostgreSQL URL."""
    cfg = config if isinstance(config, RunConfig) else load_config(config)
    if not is_store_url(cfg.store):
        raise ConfigError(f"{cfg.source}: workers share a PostgreSQL store: set store: postgresql://user@host/db "
                          f"(or `store=URL`); found {cfg.store}")
    return dataclasses.replace(cfg, worker=True)


def run_worker(config: RunConfig | dict | str, *, on_plan: Callable | None = None,
               with_progress: Callable | None = None) -> JudgeOutcome:
    """Run this process as one worker of the config's job (:func:`~judgewise.pipeline.run.run_config`); returns when
    every game of the job is stored. Its summary counts what this worker judged and ``by_others``."""
    return run_config(as_worker(config), on_plan=on_plan, with_progress=with_progress)


def _worker_summary(cfg: RunConfig) -> dict:
    """One worker run, as a Ray task runs it: the summary only (the judgments stay in the store)."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    return run_config(cfg).summary


def run_workers(config: RunConfig | dict | str, workers: int, *, executor: str = "ray",
                address: str | None = None) -> list[dict]:
    """Start ``workers`` workers of the config's job with ``executor`` (a name in
    :data:`judgewise.executors.EXECUTORS`; ``"ray"``: tasks on the Ray cluster at ``address``, or a local Ray
    instance) and wait for them; returns each worker's summary. The config's files must be readable at the same
    paths on the cluster's nodes (or be given as tables)."""
    if workers < 1:
        raise ConfigError(f"`workers`: expected an integer >= 1, found {workers}")
    cfg = as_worker(config)
    summaries = run_tasks(_worker_summary, [(cfg,)] * workers, executor, workers, address)
    log.info("%d workers finished: %d games judged in all", len(summaries), sum(s["judged"] for s in summaries))
    return summaries
